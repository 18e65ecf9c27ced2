/**
 * @file optimized.cu
 * @brief mppSort, stages 4 to 6: level 0's five steps as host launches, then the deeper levels
 *        as one CUDA graph; `OptionsFor` says which stage a workspace runs.
 *
 * Stage 4, levels planned on the GPU (changes relative to stage 3, stage3_registers.cu):
 * 1. A bucket over the tile is bucketed again over its own [min, max] by the next level, instead
 *    of being sorted in global memory; the five steps run on a table of segments (one per
 *    oversized bucket), so that a level is one launch per step whatever its segment count
 *    (level_histogram.cu, level_partition.cu, sort_buckets.cu).
 * 2. The deeper levels are planned on the GPU (`PlanLevelKernel`) and looped by a CUDA graph
 *    whose WHILE node's condition the planner sets: no level waits for the host (levels.cu).
 * 3. Every level's counts live in one workspace, sized once for any input (workspace.hpp).
 *
 * Stage 5, the counting sort on chip (relative to stage 4): the sort step's tile is a counting
 * sort over narrow sub-buckets (counting_tile.cuh) instead of the bitonic network, and level 0
 * takes the largest such tile that still leaves kMinFirstBuckets buckets (plan.cpp).
 *
 * Stage 6, level 0 mapped from a sample (relative to stage 5): each histogram block draws the
 * same sample and chooses level 0's buckets from it: one per value when it shows few values,
 * three pieces around a crowd it shows, else equal widths (first_map.cuh, sampled_core.cuh).
 */
#include <cstddef>
#include <cstdint>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace ch03::optimized {

static_assert(sizeof(KeyRange) == sizeof(ch01::MinMaxPair<std::uint32_t>) &&
                  offsetof(ch01::MinMaxPair<std::uint32_t>, max) == offsetof(KeyRange, max),
              "chapter 01 writes level 0's KeyRange as its MinMaxPair");

Options OptionsFor(Stage stage) {
  Options o;
  o.sorter = stage == Stage::kLevels ? BucketSorter::kBitonic : BucketSorter::kCounting;
  o.sample_first = stage == Stage::kSampled;
  return o;
}

namespace {

/// Readies @p ws for @p n keys (`Workspace::Prepare`); false when there is nothing to sort.
bool Prepare(std::size_t n, Workspace& ws) {
  if (n > kMaxKeys) throw staged::InputError("mppSort: n must be at most 2^32 - 1 keys");
  if (n == 0) return false;
  ws.Prepare(n);  // allocates and plans level 0 only when n is new to this workspace
  return true;
}

/// Queues one sort of @p b.in into @p b.out (see `Sort`) through a prepared workspace.
void Enqueue(const Buffers& b, std::size_t n, Workspace& ws, cudaStream_t stream,
             StepTimer* timer) {
  auto timed = [&](Step step, auto&& work) {
    if (timer != nullptr) timer->Begin(step, stream);
    work();
    if (timer != nullptr) timer->End(stream);
  };
  // snippet-begin: ch03-opt-sort
  const FirstLevelPlan& plan = ws.first_plan();
  const ArraysRef arrays(b);
  // The histogram reads level 0's segment as planned (and its range, from min/max) and
  // publishes it, with the bucket map its sample chose, for the later steps.
  Level count{ws.first_segment.data(), ws.first_state.data(), false, nullptr};
  count.publish = Publish{ws.first_published.data(), ws.splitters.data(), ws.ArraysRecord()};
  if (ws.options().sample_first) count.first = FirstSample{plan.buckets, plan.max_buckets};
  const Level lv{ws.first_published.data(), ws.first_state.data(), false, ws.splitters.data()};
  timed(Step::kMinMax, [&] {
    auto* range = reinterpret_cast<ch01::MinMaxPair<std::uint32_t>*>(ws.FirstRange());
    ch01::optimized::MinMax(b.in, n, range, ws.minmax_temp.data(), ws.minmax_temp.size(), stream);
  });
  const Counts hist = ws.counts();
  timed(Step::kHistogram, [&] {
    CUDA_CHECK(cudaMemsetAsync(hist.totals, 0, sizeof(std::uint32_t) * plan.bucket_bound, stream));
    Histogram(count, arrays, hist, plan.chunks, stream);
  });
  timed(Step::kScan, [&] {
    // The map's choice sets the bucket count on the device: the scan reads it there.
    const std::uint32_t* entries = &ws.first_state.data()->buckets;
    ch02::optimized::ExclusiveScanDeviceCount<std::uint32_t>(
        hist.totals, hist.starts, plan.bucket_bound, entries, ws.scan_temp.data(),
        ws.scan_temp.size(), stream);
  });
  timed(Step::kPartition,
        [&] { Partition(lv, arrays, hist, ws.partition(), plan.chunks, stream); });
  timed(Step::kSort, [&] {
    SortBuckets(lv, arrays, hist.starts, ws.Spans(), SpanList{}, ws.options().sorter,
                plan.tile.keys, 0, plan.buckets, stream);
  });
  timed(Step::kDeeper, [&] { RunDeeperLevels(ws, stream); });
  // snippet-end: ch03-opt-sort
}

}  // namespace

void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream, StepTimer* timer) {
  // Prepared first: it may reallocate the partition buffer the sort's arrays name.
  if (Prepare(n, ws)) Enqueue(Buffers{d_in, ws.part.data(), d_out}, n, ws, stream, timer);
}

void SortDoubleBuffer(std::uint32_t* d_keys, std::uint32_t* d_alt, std::size_t n, Workspace& ws,
                      cudaStream_t stream, StepTimer* timer) {
  // The input is the output: level 0 partitions it into d_alt, and every level's sort step
  // writes back into d_keys, whose keys level 0's partition has read by then.
  if (Prepare(n, ws)) Enqueue(Buffers{d_keys, d_alt, d_keys}, n, ws, stream, timer);
}

}  // namespace ch03::optimized
