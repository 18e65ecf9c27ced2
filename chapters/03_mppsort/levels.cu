/**
 * @file levels.cu
 * @brief The levels after the first, planned and looped on the device: a bucket too large for
 *        the on-chip tile is bucketed again over its own [min, max] until every bucket fits or
 *        is all equal.
 *
 * Changes relative to the host-driven loop (`Options::device_loop = false`, kept to compare):
 * 1. `PlanLevelKernel` turns the previous level's list of oversized buckets into the next
 *    level's segment table on the device (one block scans their chunk, bucket and matrix counts).
 * 2. The kernels of a deeper level run on a resident grid and take their items from work queues
 *    in the level's state, so their launch sizes do not depend on what the device found.
 * 3. The loop is a CUDA graph: a WHILE node whose body is one level and whose condition the
 *    planning kernel sets (`cudaGraphSetConditional`). A sort never waits for the host, and when
 *    level 0 sorted everything the deeper levels cost one small kernel.
 *
 * 4. A segment over kBlockMinMaxKeys (a skewed cluster) at level 1 is bucketed over a
 *    core sampled from its keys (sampled_core.cuh), found by `SurveySegmentsKernel` beside the
 *    min/max pass that such a segment needs anyway.
 *
 * Termination: every segment of a deeper level has min < max and at least 2 buckets (64 from
 * level 2 on), so its range shrinks 2-fold (64-fold) per level, except for the end buckets of a
 * sampled core, which are smaller than their segment but may keep its range; only level 1 is
 * sampled, so every oversized bucket is still single-valued within kMaxLevels. Past kMaxLevels
 * the planner stops and flags an error instead of looping.
 */
#include <algorithm>
#include <climits>
#include <cstdio>

#include "chapters/01_minmax_reduction/block_minmax.cuh"
#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/03_mppsort/block_scan.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"
#include "common/stream.hpp"

namespace ch03::optimized {

/// Buckets of a deeper segment of @p len keys at @p level (>= 1): ceil(len / target), at least 2
/// at level 1 (the range must shrink) and kMinDeepBuckets from level 2 on (that segment already
/// defeated equal-width buckets once), at most kMaxDeeperBuckets. A bucket that comes out over
/// the tile but within `OverflowTile` is still sorted at this level. plan.cpp's `MatrixCapacity`
/// bounds the matrix by this rule.
/// @param[in] len keys of the segment
/// @param[in] target mean bucket size of the deeper tile
/// @param[in] level the level being planned
__device__ std::uint32_t DeeperBuckets(std::uint32_t len, std::uint32_t target,
                                       std::uint32_t level) {
  // snippet-begin: ch03-deeper-buckets
  const std::uint64_t h = (std::uint64_t{len} + target - 1) / target;
  const std::uint64_t fewest = level == 1 ? 2 : kMinDeepBuckets;
  return static_cast<std::uint32_t>(h < fewest ? fewest
                                               : (h > kMaxDeeperBuckets ? kMaxDeeperBuckets : h));
  // snippet-end: ch03-deeper-buckets
}

/**
 * @brief Plans the next level from the previous one's oversized buckets: one segment per span,
 *        with its buckets (`DeeperBuckets`), chunks and the prefix sums that place its chunks,
 *        buckets and matrix entries among the level's; zeroes the level's bucket totals; resets
 *        the level's work queue and the span list; in a graph, sets the loop's condition to
 *        "this level has segments".
 * @par Launch configuration
 * One block of 1024 threads; static shared memory 32 words of each scan type.
 * @param[in] spans the previous level's oversized buckets
 * @param[in,out] span_count their number (reset to 0)
 * @param[out] segments the new level's table
 * @param[in,out] state the level state (its `level` is the previous one's unless params.first)
 * @param[in] params target, bounds, graph condition
 * Reads 16 bytes per span, writes sizeof(Segment) bytes per segment.
 */
__global__ void __launch_bounds__(1024)
    PlanLevelKernel(const Span* spans, std::uint32_t* span_count, Segment* segments,
                    LevelState* state, PlanParams params) {
  __shared__ std::uint32_t sums32[kBlockScanScratch];
  __shared__ std::uint64_t sums64[kBlockScanScratch];
  __shared__ std::uint32_t marked;  // spans left unreduced by the sort step
  if (threadIdx.x == 0) marked = 0;
  const std::uint32_t level = params.first ? 1 : state->level + 1;
  const std::uint32_t count = *span_count;
  // Why nothing is planned: the list overflowed (the previous level appended past its capacity,
  // the capacity of this table), too many levels, or (below) a matrix over the workspace's.
  std::uint32_t failed = (count > params.max_segments ? kErrorListFull : 0u) |
                         (count > 0 && level >= kMaxLevels ? kErrorTooDeep : 0u);
  std::uint32_t chunks = 0, buckets = 0;
  std::uint64_t matrix = 0;
  if (!failed) {
    for (std::uint32_t base = 0; base < count; base += blockDim.x) {  // uniform trip count
      const std::uint32_t i = base + threadIdx.x;
      const bool valid = i < count;
      const Span span = valid ? spans[i] : Span{0, 0, {UINT_MAX, 0}};
      const std::uint32_t h = valid ? DeeperBuckets(span.len, params.target, level) : 0;
      // In 64 bits: a span of over 2^32 - kChunk keys would wrap a 32-bit sum to 0 chunks.
      const auto c =
          valid ? static_cast<std::uint32_t>((std::uint64_t{span.len} + kChunk - 1) / kChunk) : 0u;
      // A span the sorting block reduced has min <= max; an unreduced one is {UINT_MAX, 0}: a
      // skewed cluster, bucketed over a sampled core down to kMaxSampledLevel.
      const bool unreduced = valid && span.range.min > span.range.max;
      std::uint32_t chunk_total, bucket_total;
      std::uint64_t matrix_total;
      const std::uint32_t c_before = BlockExclusiveSum<std::uint32_t>(c, chunk_total, sums32);
      const std::uint32_t h_before = BlockExclusiveSum<std::uint32_t>(h, bucket_total, sums32);
      const std::uint64_t m_before =
          BlockExclusiveSum<std::uint64_t>(std::uint64_t{h} * c, matrix_total, sums64);
      if (valid) {
        Segment seg;
        seg.begin = span.begin;
        seg.len = span.len;
        seg.needs_minmax = unreduced ? 1 : 0;
        if (seg.needs_minmax != 0) atomicAdd(&marked, 1u);
        seg.range = span.range;
        seg.buckets = h;
        seg.chunks = c;
        seg.chunk_base = chunks + c_before;
        seg.bucket_base = buckets + h_before;
        seg.matrix_base = static_cast<std::uint32_t>(matrix + m_before);
        seg.sampled = unreduced && level <= kMaxSampledLevel && h >= 3 ? 1 : 0;
        segments[i] = seg;
      }
      chunks += chunk_total;
      buckets += bucket_total;
      matrix += matrix_total;
    }
    // Uniform: every thread has the same totals.
    if (matrix > params.matrix_capacity || buckets > params.bucket_capacity) {
      failed = kErrorTooLarge;
    }
  }
  // The planned level's histogram adds to its bucket totals. (The last level's partition took
  // them back to zero already, unless it stopped short; this does not rely on it.)
  if (!failed) {
    for (std::uint32_t i = threadIdx.x; i < buckets; i += blockDim.x) params.totals[i] = 0;
  }
  __syncthreads();  // every thread has read *span_count and state->level
  if (threadIdx.x == 0) {
    // snippet-begin: ch03-plan-condition
    const std::uint32_t planned = failed ? 0 : count;
    state->level = level;
    state->num_segments = planned;
    state->chunks = planned > 0 ? chunks : 0;
    state->buckets = planned > 0 ? buckets : 0;
    state->matrix = planned > 0 ? static_cast<std::uint32_t>(matrix) : 0;
    state->tile_target = params.target;
    state->minmax_segments = planned > 0 ? marked : 0;
    state->next_sort = 0;
    state->overflow_count = 0;
    state->next_overflow = 0;
    state->error = (params.first ? 0 : state->error) | failed;
    *span_count = 0;
    if (params.set_condition) cudaGraphSetConditional(params.handle, planned > 0 ? 1 : 0);
    // snippet-end: ch03-plan-condition
  }
}

/**
 * @brief Surveys the segments marked `needs_minmax` (buckets over kBlockMinMaxKeys, which one
 *        block would take too long over): samples the core of those planned
 *        `Segment::sampled` (`SampleCore`, one block per segment), and reduces the min
 *        and max of every marked one (one block per chunk, chapter 01's `BlockMinMax`, folded
 *        into the segment with atomicMin/atomicMax).
 *
 * Items 0 .. segments - 1 are the samples, so that the blocks that sort them start first;
 * the chunks follow. The sample does not need the range: a segment whose min turns out equal
 * to its max is skipped by the level's later steps, whatever its core.
 * @par Launch configuration
 * A resident grid of kChunkThreads-thread blocks striding over the level's items; static shared
 * memory sizeof(SampleShared).
 * @pre the marked segments' ranges are {0xFFFFFFFF, 0} (PlanLevelKernel sets them so).
 * @param[in] lv the level
 * @param[in] arrays the sort's arrays (reads `LevelSource`)
 * @param[in,out] segments the level's table (ranges of marked segments, cores of sampled ones)
 * Reads 4 bytes per key of the marked segments, and kSampleKeys keys per sampled one.
 */
__global__ void __launch_bounds__(kChunkThreads)
    SurveySegmentsKernel(Level lv, ArraysRef arrays, Segment* segments) {
  __shared__ ch01::KeyOf<std::uint32_t> s_min[kChunkThreads / 32], s_max[kChunkThreads / 32];
  __shared__ SampleShared sample;
  if (lv.state->minmax_segments == 0) return;  // the usual case: every span was reduced
  const std::uint32_t level = lv.state->level, num = lv.state->num_segments;
  const std::uint32_t* keys = LevelSource(arrays.Get(), level);
  for (WorkQueue queue; queue.Next(false, nullptr, num + lv.state->chunks, nullptr);) {
    if (queue.item() < num) {
      const Segment seg = segments[queue.item()];
      if (seg.sampled == kCore) SampleCore(keys, seg, &segments[queue.item()].core, sample);
      continue;
    }
    const ChunkView c = LocateChunk(lv.segments, num, queue.item() - num);
    if (segments[c.segment].needs_minmax == 0) continue;  // uniform per block
    std::uint32_t lo = UINT_MAX, hi = 0;
    constexpr int kPerThread = static_cast<int>(kChunk) / kChunkThreads;
    std::uint32_t v[kPerThread];
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {  // all loads in flight before the first min
      const std::uint32_t i = q * kChunkThreads + threadIdx.x;
      v[q] = i < c.len ? keys[c.begin + i] : keys[c.begin];
    }
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {
      lo = min(lo, v[q]);
      hi = max(hi, v[q]);
    }
    ch01::BlockMinMax<std::uint32_t, kChunkThreads>(lo, hi, s_min, s_max);
    if (threadIdx.x == 0) {
      atomicMin(&segments[c.segment].range.min, lo);
      atomicMax(&segments[c.segment].range.max, hi);
    }
    __syncthreads();  // s_min/s_max read before the next chunk's BlockMinMax writes them
  }
}

// ------------------------------------------------------------------ launchers

void PlanLevel(const SpanList& list, Segment* segments, LevelState* state, const PlanParams& params,
               cudaStream_t stream) {
  PlanLevelKernel<<<1, 1024, 0, stream>>>(list.spans, list.count, segments, state, params);
  CUDA_CHECK_LAST_LAUNCH();
}

void SurveySegments(const Level& lv, const ArraysRef& arrays, Segment* segments,
                    cudaStream_t stream) {
  const unsigned grid =
      staged::ResidentBlocks(reinterpret_cast<const void*>(SurveySegmentsKernel), kChunkThreads, 0);
  SurveySegmentsKernel<<<grid, kChunkThreads, 0, stream>>>(lv, arrays, segments);
  CUDA_CHECK_LAST_LAUNCH();
}

namespace {
/// `PlanLevel`'s parameters for this workspace.
PlanParams ParamsFor(Workspace& ws, bool first) {
  PlanParams p;
  p.target = DeeperTile(ws.options().sorter, ws.limits()).target;
  p.matrix_capacity = ws.matrix_capacity();
  p.bucket_capacity = ws.bucket_capacity();
  p.totals = ws.counts().totals;
  p.max_segments = ws.span_capacity();
  p.first = first;
  return p;
}
}  // namespace

void EnqueueDeeperLevel(Workspace& ws, const PlanParams& params, cudaStream_t stream) {
  // snippet-begin: ch03-level-body
  const Level lv{ws.segments.data(), ws.state.data(), true};
  const ArraysRef b(ws.ArraysRecord());  // written by level 0's histogram
  const BucketSorter sorter = ws.options().sorter;
  const std::uint32_t overflow_keys = OverflowTile(sorter, ws.limits()).keys;
  SurveySegments(lv, b, ws.segments.data(), stream);
  const Counts hist = ws.counts();
  Histogram(lv, b, hist, 0, stream);
  // Only the device knows this level's bucket count: the scan reads it there, so it covers the
  // level's totals, not the whole buffer.
  const std::uint32_t* entries = &ws.state.data()->buckets;
  ch02::optimized::ExclusiveScanDeviceCount<std::uint32_t>(
      hist.totals, hist.starts, ws.bucket_capacity(), entries, ws.scan_temp.data(),
      ws.scan_temp.size(), stream);
  Partition(lv, b, hist, ws.partition(), 0, stream);
  SortBuckets(lv, b, hist.starts, ws.Spans(), ws.Overflow(), sorter,
              DeeperTile(sorter, ws.limits()).keys, overflow_keys, 0, stream);
  SortOverflow(lv, b, ws.Overflow(), sorter, overflow_keys, stream);
  PlanLevel(ws.Spans(), ws.segments.data(), ws.state.data(), params, stream);
  // snippet-end: ch03-level-body
}

namespace {

/// Builds the graph: PlanLevel (first), then WHILE(condition) { one deeper level }.
cudaGraphExec_t BuildDeeperGraph(Workspace& ws) {
  staged::Stream capture;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphCreate(&graph, 0));
  try {
    cudaGraphConditionalHandle handle;
    // Each launch starts with the condition at 0; the first PlanLevel sets it.
    CUDA_CHECK(cudaGraphConditionalHandleCreate(&handle, graph, 0, cudaGraphCondAssignDefault));
    PlanParams params = ParamsFor(ws, true);
    params.set_condition = true;
    params.handle = handle;
    CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture.get(), graph, nullptr, nullptr, 0,
                                             cudaStreamCaptureModeRelaxed));
    PlanLevel(ws.Spans(), ws.segments.data(), ws.state.data(), params, capture.get());
    CUDA_CHECK(cudaStreamEndCapture(capture.get(), &graph));
    cudaGraphNode_t plan_node = nullptr;
    std::size_t nodes = 1;
    CUDA_CHECK(cudaGraphGetNodes(graph, &plan_node, &nodes));
    // snippet-begin: ch03-while-node
    cudaGraphNodeParams loop{};
    loop.type = cudaGraphNodeTypeConditional;
    loop.conditional.handle = handle;
    loop.conditional.type = cudaGraphCondTypeWhile;
    loop.conditional.size = 1;
    cudaGraphNode_t loop_node = nullptr;
    CUDA_CHECK(cudaGraphAddNode(&loop_node, graph, &plan_node, nullptr, 1, &loop));
    cudaGraph_t body = loop.conditional.phGraph_out[0];
    params.first = false;
    CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture.get(), body, nullptr, nullptr, 0,
                                             cudaStreamCaptureModeRelaxed));
    EnqueueDeeperLevel(ws, params, capture.get());
    CUDA_CHECK(cudaStreamEndCapture(capture.get(), &body));
    // snippet-end: ch03-while-node
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  } catch (...) {
    cudaStreamCaptureStatus status;
    if (cudaStreamIsCapturing(capture.get(), &status) == cudaSuccess &&
        status != cudaStreamCaptureStatusNone) {
      cudaGraph_t partial = nullptr;
      (void)cudaStreamEndCapture(capture.get(), &partial);
    }
    (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();  // the failure is reported once, by the caller
    throw;
  }
  CUDA_CHECK(cudaGraphDestroy(graph));
  return exec;
}

/// The host-driven loop: plan, read the plan back, run a level, until a plan is empty.
void HostLoop(Workspace& ws, cudaStream_t stream) {
  // snippet-begin: ch03-host-loop
  PlanLevel(ws.Spans(), ws.segments.data(), ws.state.data(), ParamsFor(ws, true), stream);
  while (ws.ReadState(stream).num_segments > 0) {
    EnqueueDeeperLevel(ws, ParamsFor(ws, false), stream);
  }
  // snippet-end: ch03-host-loop
}

}  // namespace

void RunDeeperLevels(Workspace& ws, cudaStream_t stream) {
  if (!ws.options().device_loop || ws.graph.unavailable) {
    HostLoop(ws, stream);
    return;
  }
  // The graph's kernels read the workspace's records only: it is rebuilt only when the
  // workspace reallocates them.
  if (ws.graph.exec == nullptr || ws.graph.generation != ws.generation()) {
    if (ws.graph.exec != nullptr) CUDA_CHECK(cudaGraphExecDestroy(ws.graph.exec));
    ws.graph.exec = nullptr;
    try {
      ws.graph.exec = BuildDeeperGraph(ws);
    } catch (const std::exception& e) {
      // Older drivers lack conditional nodes: the host loop gives the same result.
      std::fprintf(stderr, "ch03: deeper levels run from the host (no device loop: %s)\n",
                   e.what());
      ws.graph.unavailable = true;
      HostLoop(ws, stream);
      return;
    }
    ws.graph.generation = ws.generation();
    ++ws.graph.builds;
  }
  CUDA_CHECK(cudaGraphLaunch(ws.graph.exec, stream));
}

}  // namespace ch03::optimized
