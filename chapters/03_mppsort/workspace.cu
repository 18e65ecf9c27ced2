/// @file workspace.cu
/// @brief Sizing and level-0 records of the optimized mppSort's workspace.
#include <algorithm>
#include <cstddef>
#include <stdexcept>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/03_mppsort/workspace.hpp"
#include "common/cuda_check.hpp"

namespace ch03::optimized {

Workspace::Workspace(std::size_t capacity, Options options)
    : first_segment(1),
      first_published(1),
      first_state(1),
      splitters(kMaxFewValues),
      state(1),
      span_count(1),
      h_state(1),
      options_(options) {
  limits_ = staged::PlanningLimits();
  if (!options_.profile.empty()) {
    limits_ = staged::CapLimits(staged::DeviceProfile(options_.profile), limits_);
  }
  Allocate(std::max<std::size_t>(capacity, 1));
  // The deeper state reads "level 0 only" until a sort runs; the span list starts empty (each
  // PlanLevel empties it again).
  state.FillBytes(0);
  span_count.FillBytes(0);
  first_published.FillBytes(0);
  splitters.FillBytes(0);
}

Workspace::~Workspace() {
  if (graph.exec != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(graph.exec));
}

void Workspace::Allocate(std::size_t capacity) {
  capacity_ = capacity;
  matrix_capacity_ = MatrixCapacity(capacity, options_.sorter, limits_);
  bucket_capacity_ = BucketCapacity(capacity);
  span_capacity_ = static_cast<std::uint32_t>(SpanCapacity(capacity, options_.sorter, limits_));
  part = staged::DeviceBuffer<std::uint32_t>(capacity);
  // Three allocations, so that compute-sanitizer's memcheck checks each piece of a level's
  // counts against its own bounds.
  matrix = staged::DeviceBuffer<std::uint32_t>(matrix_capacity_);
  totals = staged::DeviceBuffer<std::uint32_t>(bucket_capacity_);
  starts = staged::DeviceBuffer<std::uint32_t>(bucket_capacity_);
  // Chapter 01's scratch: a buffer of its own (its launcher resets the counter it keeps there
  // on every call).
  minmax_temp = staged::DeviceBuffer<unsigned char>(
      std::max<std::size_t>(ch01::optimized::MinMaxTempBytes<std::uint32_t>(capacity), 1));
  scan_temp = staged::DeviceBuffer<unsigned char>(std::max<std::size_t>(
      ch02::optimized::ExclusiveScanTempBytes<std::uint32_t>(bucket_capacity_), 1));
  segments = staged::DeviceBuffer<Segment>(span_capacity_);
  spans = staged::DeviceBuffer<Span>(span_capacity_);
  // A bucket for the overflow tile is longer than the deeper tile, so at most as many as spans.
  overflow = staged::DeviceBuffer<Span>(span_capacity_);
  // Entries the histogram skips (buckets of an all-equal segment's chunks) are never read, and
  // each level zeroes the totals it uses before its histogram (Sort, PlanLevel), but every word
  // is defined all the same; and every allocation above is complete (FillBytes synchronises the
  // device) before the first sort queues work or captures the deeper levels' graph.
  matrix.FillBytes(0);
  totals.FillBytes(0);
  starts.FillBytes(0);
  planned_n_ = 0;
  ++generation_;
}

void Workspace::Prepare(std::size_t n) {
  if (n > capacity_) Allocate(n);
  if (n == planned_n_) return;
  first_plan_ = PlanFirstLevel(n, options_.sorter, limits_);
  if (first_plan_.matrix_bound > matrix_capacity_ || first_plan_.bucket_bound > bucket_capacity_) {
    throw std::logic_error(
        "mppSort: level 0's histogram matrix or bucket totals exceed the workspace's");
  }
  Segment seg;
  seg.begin = 0;
  seg.len = static_cast<std::uint32_t>(n);
  seg.buckets = first_plan_.buckets;
  seg.chunks = first_plan_.chunks;
  LevelState st;
  st.level = 0;
  st.num_segments = 1;
  st.chunks = first_plan_.chunks;
  st.buckets = first_plan_.buckets;
  st.matrix = static_cast<std::uint32_t>(first_plan_.matrix);
  st.tile_target = first_plan_.tile.target;
  // Ordered after all queued device work: a sort still running on another stream keeps the
  // records it started with.
  first_segment.CopyFromHost(&seg, 1);
  first_state.CopyFromHost(&st, 1);
  planned_n_ = n;
}

KeyRange* Workspace::FirstRange() {
  return reinterpret_cast<KeyRange*>(reinterpret_cast<char*>(first_segment.data()) +
                                     offsetof(Segment, range));
}

Buffers* Workspace::ArraysRecord() {
  return reinterpret_cast<Buffers*>(reinterpret_cast<char*>(state.data()) +
                                    offsetof(LevelState, arrays));
}

SpanList Workspace::Spans() { return SpanList{spans.data(), span_count.data(), span_capacity_}; }

SpanList Workspace::Overflow() {
  if (OverflowTile(options_.sorter, limits_).keys == 0) return SpanList{};
  auto* count = reinterpret_cast<std::uint32_t*>(reinterpret_cast<char*>(state.data()) +
                                                 offsetof(LevelState, overflow_count));
  return SpanList{overflow.data(), count, span_capacity_};
}

LevelState Workspace::ReadState(cudaStream_t stream) {
  CUDA_CHECK(cudaMemcpyAsync(h_state.data(), state.data(), sizeof(LevelState),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return h_state[0];
}

Segment Workspace::ReadFirstSegment(cudaStream_t stream) {
  Segment seg;
  CUDA_CHECK(cudaMemcpyAsync(&seg, first_published.data(), sizeof(Segment), cudaMemcpyDeviceToHost,
                             stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return seg;
}

}  // namespace ch03::optimized
