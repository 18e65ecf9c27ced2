/**
 * @file optimized.cu
 * @brief mppSort tuned for a modern GPU: every pass over the keys either reads them once or
 *        reads and writes them once, and the bucket sort never leaves the chip.
 *
 * Changes relative to naive.cu:
 * 1. Min/max come from chapter 01's one-pass launcher (`ch01::optimized::MinMax`).
 * 2. The bucket is computed, not looked up: ((key - min) * floor(h * 2^32 / R)) >> 32 in 64-bit
 *    arithmetic (monotone, < h, no overflow for R up to 2^32, min == max gives bucket 0).
 * 3. The histogram matrix is stored bucket-major (bucket b, then chunk c), so one exclusive scan
 *    of the whole matrix (chapter 02's `ExclusiveScan`) gives every (bucket, chunk) slot: it
 *    replaces GlobalHistoScan and VerticalScanHH at once.
 * 4. Partition ranks a 16384-key chunk by bucket in shared memory first (a block-local counting
 *    sort), then writes each bucket's run contiguously: stores coalesce instead of scattering.
 * 5. The bucket count follows n (at most 2048 per level), so a uniform bucket always fits one
 *    tile: about 3700 keys per bucket in a 4096-key tile when the level's segments allow it,
 *    else about 7000 in an 8192-key tile (see `PlanLevel`).
 * 6. The bitonic sort keeps 16 keys per thread in registers: distances below 16 are swaps in
 *    registers, distances 16..256 are warp shuffles, only distances >= 512 go through shared
 *    memory; every comparator is ascending ("flip" form) so padding stays at the end.
 * 7. Buckets larger than a tile are bucketed again over their own [min, max] (all-equal
 *    segments are recognised and written straight to the output), level after level, all
 *    segments of a level in one launch per kernel.
 * 8. The min and max of an oversized bucket are reduced by the bitonic block that finds it
 *    (and an all-equal one is copied to the output there), so deeper levels need no min/max
 *    pass; only buckets over kBlockMinMaxKeys (a skewed cluster) still get SegmentMinMax.
 *    Measured on the H200: min/max stage 0.264 -> 0.075 ms at 64M, 1.01 -> 0.25 ms at 256M,
 *    the bitonic stage +0.1 / +0.3 ms for the reductions it took over.
 * 9. The histogram loads all 16 keys of a thread before its first atomic (16 loads in flight
 *    instead of a strided loop's few): 0.413 -> 0.301 ms at 64M, 1.51 -> 1.07 ms at 256M.
 * 10. A level whose segments all fit 2048 buckets of 3700 keys sorts with 4096-key tiles (256
 *    threads): 78 layers over ~3700 keys instead of 91 over ~7000 (or ~6550 at the second level
 *    of 64M), 23% fewer compare-exchanges per key. Measured on the H200: bitonic stage
 *    1.56 -> 1.11 ms at 64M, 5.81 -> 4.28 ms at 256M, 0.096 -> 0.070 ms at 4M.
 */
#include <algorithm>
#include <climits>
#include <stdexcept>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace ch03::optimized {

/// Min/max pair of 32-bit keys (chapter 01's type).
using Pair = ch01::MinMaxPair<std::uint32_t>;

/// Keys per thread in the histogram/partition kernels.
inline constexpr int kChunkKeysPerThread = static_cast<int>(kChunk) / kChunkThreads;
static_assert(kChunkKeysPerThread * kChunkThreads == static_cast<int>(kChunk));
static_assert(kTile % (32 * kKeysPerThread) == 0 && kSmallTile % (32 * kKeysPerThread) == 0,
              "bitonic blocks are whole warps");
static_assert(2 * kChunkThreads >= static_cast<int>(kMaxBuckets), "scan: two counters/thread");

/// Largest segment s with segments[s].*base <= x (binary search; bases are non-decreasing).
/// @param[in] segments segments of the level
/// @param[in] num number of segments, >= 1
/// @param[in] x chunk or bucket index of the level
/// @param[in] base `&Segment::chunk_base` or `&Segment::bucket_base`
__device__ std::uint32_t FindSegment(const Segment* segments, std::uint32_t num, std::uint32_t x,
                                     std::uint32_t Segment::*base) {
  std::uint32_t lo = 0, hi = num;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (segments[mid].*base <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// The keys one histogram/partition/min-max block handles.
struct ChunkView {
  std::uint32_t segment;  ///< segment index
  std::uint32_t local;    ///< chunk index within the segment
  std::uint64_t begin;    ///< first key
  std::uint32_t len;      ///< keys, in [1, kChunk]
};

/// Locates chunk @p chunk (a block index) in the level.
/// @param[in] segments segments
/// @param[in] num number of segments
/// @param[in] chunk block index
__device__ ChunkView LocateChunk(const Segment* segments, std::uint32_t num, std::uint32_t chunk) {
  const std::uint32_t s = FindSegment(segments, num, chunk, &Segment::chunk_base);
  const Segment& seg = segments[s];
  const std::uint32_t local = chunk - seg.chunk_base;
  const std::uint64_t offset = static_cast<std::uint64_t>(local) * kChunk;
  const std::uint64_t left = seg.len - offset;
  return {s, local, seg.begin + offset, static_cast<std::uint32_t>(left < kChunk ? left : kChunk)};
}

/**
 * @brief Min and max of every segment longer than kBlockMinMaxKeys (shorter ones got theirs
 *        from the previous level's bitonic kernel): block c reduces chunk c in registers and
 *        warp shuffles, then each warp folds its result into the segment's pair with
 *        atomicMin/atomicMax.
 * @par Launch configuration
 * One block of kChunkThreads threads per chunk of the level.
 * @pre minmax[s] = {0xFFFFFFFF, 0} for every segment longer than kBlockMinMaxKeys.
 * @param[in] keys keys
 * @param[in] segments segments
 * @param[in] num_segments segments
 * @param[in,out] minmax one pair per segment
 * Reads 4 bytes per key of the long segments.
 */
__global__ void SegmentMinMaxKernel(const std::uint32_t* keys, const Segment* segments,
                                    std::uint32_t num_segments, Pair* minmax) {
  const ChunkView c = LocateChunk(segments, num_segments, blockIdx.x);
  if (segments[c.segment].len <= kBlockMinMaxKeys) return;  // uniform per block
  std::uint32_t lo = UINT_MAX, hi = 0;
  for (std::uint32_t i = threadIdx.x; i < c.len; i += blockDim.x) {
    const std::uint32_t key = keys[c.begin + i];
    lo = min(lo, key);
    hi = max(hi, key);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMin(&minmax[c.segment].min, lo);
    atomicMax(&minmax[c.segment].max, hi);
  }
}

/// Loads the thread's keys of chunk @p c with coalesced loads: key q is element
/// q * kChunkThreads + threadIdx.x; entries past the chunk's end are set to 0 and must be
/// skipped by the caller.
/// @param[in] keys keys
/// @param[in] c the block's chunk
/// @param[out] key the thread's kChunkKeysPerThread keys
__device__ __forceinline__ void LoadChunk(const std::uint32_t* keys, const ChunkView& c,
                                          std::uint32_t (&key)[kChunkKeysPerThread]) {
#pragma unroll
  for (int q = 0; q < kChunkKeysPerThread; ++q) {
    const std::uint32_t i = q * kChunkThreads + threadIdx.x;
    key[q] = i < c.len ? keys[c.begin + i] : 0;
  }
}

/**
 * @brief Step 1: block c counts the keys of its chunk per arithmetic bucket in shared memory
 *        and writes column c of its segment's bucket-major matrix.
 * @par Launch configuration
 * One block of kChunkThreads threads per chunk; static shared memory kMaxBuckets words; at
 * most 32 registers per thread, so two blocks share an SM.
 * @param[in] keys keys
 * @param[in] segments segments
 * @param[in] num_segments segments
 * @param[in] minmax per-segment min/max
 * @param[out] matrix entry matrix_base + b * chunks + local = keys of bucket b in the chunk
 * Reads 4 bytes per key; writes 4 * buckets bytes per chunk.
 */
__global__ void __launch_bounds__(kChunkThreads, 2)
    HistogramKernel(const std::uint32_t* keys, const Segment* segments, std::uint32_t num_segments,
                    const Pair* minmax, std::uint32_t* matrix) {
  __shared__ std::uint32_t counts[kMaxBuckets];
  const ChunkView c = LocateChunk(segments, num_segments, blockIdx.x);
  const Segment& seg = segments[c.segment];
  const Pair mm = minmax[c.segment];
  const std::uint64_t scale = BucketScale(mm.min, mm.max, seg.buckets);
  // All of the thread's loads are issued before the first atomic: 16 loads in flight per
  // thread instead of the few a strided loop keeps, which is what bounds this kernel.
  std::uint32_t key[kChunkKeysPerThread];
  LoadChunk(keys, c, key);
  for (std::uint32_t b = threadIdx.x; b < seg.buckets; b += blockDim.x) counts[b] = 0;
  __syncthreads();  // counters zeroed before any thread adds
#pragma unroll
  for (int q = 0; q < kChunkKeysPerThread; ++q) {
    if (q * kChunkThreads + threadIdx.x < c.len) {
      atomicAdd(&counts[ArithmeticBucket(key[q], mm.min, scale)], 1u);
    }
  }
  __syncthreads();  // all keys counted
  for (std::uint32_t b = threadIdx.x; b < seg.buckets; b += blockDim.x) {
    matrix[seg.matrix_base + static_cast<std::uint64_t>(b) * seg.chunks + c.local] = counts[b];
  }
}

/// Exclusive scan of v[0, n) (n <= 2 * blockDim.x) by a block of 32 full warps: two values per
/// thread, a warp shuffle scan, then a scan of the 32 warp totals. Ends with a barrier.
/// @param[in,out] v values in shared memory
/// @param[in] n count
/// @param[out] warp_sums 32 words of shared scratch
__device__ void BlockExclusiveScan(std::uint32_t* v, std::uint32_t n, std::uint32_t* warp_sums) {
  const std::uint32_t t = threadIdx.x, lane = t & 31, warp = t >> 5;
  const std::uint32_t a = 2 * t < n ? v[2 * t] : 0;
  const std::uint32_t b = 2 * t + 1 < n ? v[2 * t + 1] : 0;
  std::uint32_t inclusive = a + b;
  for (int d = 1; d < 32; d *= 2) {
    const std::uint32_t up = __shfl_up_sync(0xffffffffu, inclusive, d);
    if (lane >= static_cast<std::uint32_t>(d)) inclusive += up;
  }
  if (lane == 31) warp_sums[warp] = inclusive;
  __syncthreads();  // warp totals written
  if (warp == 0) {
    const std::uint32_t total = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0;
    std::uint32_t scan = total;
    for (int d = 1; d < 32; d *= 2) {
      const std::uint32_t up = __shfl_up_sync(0xffffffffu, scan, d);
      if (lane >= static_cast<std::uint32_t>(d)) scan += up;
    }
    if (lane < (blockDim.x >> 5)) warp_sums[lane] = scan - total;  // exclusive
  }
  __syncthreads();  // warp offsets ready
  const std::uint32_t prefix = warp_sums[warp] + inclusive - (a + b);
  if (2 * t < n) v[2 * t] = prefix;
  if (2 * t + 1 < n) v[2 * t + 1] = prefix + a;
  __syncthreads();  // scanned values visible
}

/// Dynamic shared memory of PartitionKernel: the key tile, the counters, the run bases.
inline constexpr std::size_t kPartitionSharedBytes = kChunk * sizeof(std::uint32_t) +
                                                     kMaxBuckets * sizeof(std::uint32_t) +
                                                     kMaxBuckets * sizeof(std::uint64_t);

/**
 * @brief Step 4: block c ranks its chunk by bucket in shared memory (a block-local counting
 *        sort), then writes the sorted tile out so consecutive threads store consecutive
 *        addresses of one bucket's run.
 *
 * Key i of the ranked tile belongs to bucket b and goes to run_base[b] + i, where
 * run_base[b] = segment.begin + scanned[matrix_base + b * chunks + c] - scanned[matrix_base]
 * - local_start[b].
 * @par Launch configuration
 * One block of kChunkThreads threads per chunk; dynamic shared memory kPartitionSharedBytes.
 * @param[in] keys keys
 * @param[in] segments segments
 * @param[in] num_segments segments
 * @param[in] minmax per-segment min/max
 * @param[in] scanned exclusive scan of the matrix
 * @param[out] part partitioned keys
 * @param[out] out destination of all-equal segments (already sorted)
 * Reads and writes 4 bytes per key.
 */
__global__ void PartitionKernel(const std::uint32_t* keys, const Segment* segments,
                                std::uint32_t num_segments, const Pair* minmax,
                                const std::uint32_t* scanned, std::uint32_t* part,
                                std::uint32_t* out) {
  extern __shared__ uint4 smem_partition[];
  auto* tile = reinterpret_cast<std::uint32_t*>(smem_partition);
  std::uint32_t* counts = tile + kChunk;
  auto* run_base = reinterpret_cast<std::uint64_t*>(counts + kMaxBuckets);
  __shared__ std::uint32_t warp_sums[32];

  const ChunkView c = LocateChunk(segments, num_segments, blockIdx.x);
  const Segment& seg = segments[c.segment];
  const Pair mm = minmax[c.segment];
  std::uint32_t* target = mm.min == mm.max ? out : part;  // equal keys are already sorted
  if (target == keys) return;  // all-equal segment already in place (uniform per block)
  const std::uint64_t scale = BucketScale(mm.min, mm.max, seg.buckets);
  for (std::uint32_t b = threadIdx.x; b < seg.buckets; b += blockDim.x) counts[b] = 0;
  __syncthreads();  // counters zeroed

  // Coalesced loads; each key's rank within its bucket comes from the shared atomic.
  std::uint32_t key[kChunkKeysPerThread], rank[kChunkKeysPerThread];
  LoadChunk(keys, c, key);
#pragma unroll
  for (int q = 0; q < kChunkKeysPerThread; ++q) {
    const std::uint32_t i = q * kChunkThreads + threadIdx.x;
    if (i < c.len) rank[q] = atomicAdd(&counts[ArithmeticBucket(key[q], mm.min, scale)], 1u);
  }
  __syncthreads();                                     // counts complete
  BlockExclusiveScan(counts, seg.buckets, warp_sums);  // counts[b] = local start of bucket b
  const std::uint32_t first = scanned[seg.matrix_base];
  for (std::uint32_t b = threadIdx.x; b < seg.buckets; b += blockDim.x) {
    const std::uint32_t slot =
        scanned[seg.matrix_base + static_cast<std::uint64_t>(b) * seg.chunks + c.local] - first;
    run_base[b] = seg.begin + slot - counts[b];  // slot >= local start, see the brief above
  }
#pragma unroll
  for (int q = 0; q < kChunkKeysPerThread; ++q) {
    const std::uint32_t i = q * kChunkThreads + threadIdx.x;
    if (i < c.len) tile[counts[ArithmeticBucket(key[q], mm.min, scale)] + rank[q]] = key[q];
  }
  __syncthreads();  // tile ranked and run bases ready
  for (std::uint32_t i = threadIdx.x; i < c.len; i += blockDim.x) {
    const std::uint32_t k = tile[i];
    target[run_base[ArithmeticBucket(k, mm.min, scale)] + i] = k;  // consecutive i, same run
  }
}

/// Puts the smaller of @p a and @p b in @p a.
/// @param[in,out] a first key
/// @param[in,out] b second key
__device__ __forceinline__ void CompareSwap(std::uint32_t& a, std::uint32_t& b) {
  const std::uint32_t lo = min(a, b);
  b = max(a, b);
  a = lo;
}

/// First step of a merge of size kK <= 16, in registers: element i meets element i ^ (kK - 1).
/// @tparam kK merge size (2, 4, 8 or 16)
/// @param[in,out] r the thread's 16 consecutive keys
template <int kK>
__device__ __forceinline__ void RegisterFlip(std::uint32_t (&r)[kKeysPerThread]) {
#pragma unroll
  for (int i = 0; i < kKeysPerThread; ++i) {
    const int p = i ^ (kK - 1);
    if (i < p) CompareSwap(r[i], r[p]);
  }
}

/// A step of distance kJ < 16 in registers: element i meets element i + kJ.
/// @tparam kJ distance (1, 2, 4 or 8)
/// @param[in,out] r the thread's 16 consecutive keys
template <int kJ>
__device__ __forceinline__ void RegisterStep(std::uint32_t (&r)[kKeysPerThread]) {
#pragma unroll
  for (int i = 0; i < kKeysPerThread; ++i) {
    if ((i & kJ) == 0) CompareSwap(r[i], r[i + kJ]);
  }
}

/// The in-register steps of a merge: the flip when k <= 16, then distances min(k/4, 8) .. 1.
/// @param[in,out] r keys
/// @param[in] k merge size
__device__ __forceinline__ void RegisterPhase(std::uint32_t (&r)[kKeysPerThread], std::uint32_t k) {
  switch (k) {  // template arguments keep every register index a compile-time constant
    case 2:
      RegisterFlip<2>(r);
      break;
    case 4:
      RegisterFlip<4>(r);
      break;
    case 8:
      RegisterFlip<8>(r);
      break;
    case 16:
      RegisterFlip<16>(r);
      break;
    default:
      break;
  }
  const std::uint32_t top = k / 4;
  if (top >= 8) RegisterStep<8>(r);
  if (top >= 4) RegisterStep<4>(r);
  if (top >= 2) RegisterStep<2>(r);
  if (top >= 1) RegisterStep<1>(r);
}

/// Flip step of a merge of size 32 <= k <= 512 across lanes: thread t's key i meets key 15 - i
/// of lane t ^ (k / 16 - 1); the lower lane keeps the minimum.
/// @param[in,out] r keys
/// @param[in] k merge size
__device__ __forceinline__ void ShuffleFlip(std::uint32_t (&r)[kKeysPerThread], std::uint32_t k) {
  const std::uint32_t mask = k / 16 - 1;
  const bool lower = (threadIdx.x & (k / 32)) == 0;
  std::uint32_t other[kKeysPerThread];
#pragma unroll
  for (int i = 0; i < kKeysPerThread; ++i) {
    other[i] = __shfl_xor_sync(0xffffffffu, r[kKeysPerThread - 1 - i], mask);
  }
#pragma unroll
  for (int i = 0; i < kKeysPerThread; ++i) r[i] = lower ? min(r[i], other[i]) : max(r[i], other[i]);
}

/// Step of distance 16 <= j <= 256 across lanes: key i meets key i of lane t ^ (j / 16).
/// @param[in,out] r keys
/// @param[in] j distance
__device__ __forceinline__ void ShuffleStep(std::uint32_t (&r)[kKeysPerThread], std::uint32_t j) {
  const std::uint32_t mask = j / 16;
  const bool lower = (threadIdx.x & mask) == 0;
#pragma unroll
  for (int i = 0; i < kKeysPerThread; ++i) {
    const std::uint32_t v = __shfl_xor_sync(0xffffffffu, r[i], mask);
    r[i] = lower ? min(r[i], v) : max(r[i], v);
  }
}

/// A step of distance >= 512 in shared memory: N / 2 comparators, 8 per active thread, with
/// consecutive threads on consecutive addresses (no bank conflicts). Ends with a barrier.
/// @param[in,out] tile keys
/// @param[in] n padded length N
/// @param[in] k merge size
/// @param[in] j distance (k / 2 for the flip step)
/// @param[in] flip element i of a k-run meets element k - 1 - i
__device__ void SharedStep(std::uint32_t* tile, std::uint32_t n, std::uint32_t k, std::uint32_t j,
                           bool flip) {
  const std::uint32_t threads = n / kKeysPerThread;
  if (threadIdx.x < threads) {
#pragma unroll
    for (int q = 0; q < kKeysPerThread / 2; ++q) {
      const std::uint32_t p = q * threads + threadIdx.x;
      const std::uint32_t o = p & (j - 1), base = (p & ~(j - 1)) << 1;
      const std::uint32_t lo = base + o, hi = flip ? base + k - 1 - o : base + o + j;
      CompareSwap(tile[lo], tile[hi]);
    }
  }
  __syncthreads();  // the next step reads what this one wrote
}

/// Sorts tile[0, n) (n a power of two in [512, blockDim.x * 16]) with the whole block.
/// Thread t keeps keys [16t, 16t + 16) in registers; threads t >= n / 16 (whole warps) idle.
/// @pre tile filled and a barrier passed. Ends with the sorted tile and a barrier.
/// @param[in,out] tile keys in shared memory, 16-byte aligned
/// @param[in] n padded length
__device__ void BitonicSortTile(std::uint32_t* tile, std::uint32_t n) {
  const bool active = threadIdx.x < n / kKeysPerThread;  // n / 16 is a multiple of 32
  auto* mine = reinterpret_cast<uint4*>(tile + threadIdx.x * kKeysPerThread);
  std::uint32_t r[kKeysPerThread];
  auto load = [&] {
#pragma unroll
    for (int v = 0; v < kKeysPerThread / 4; ++v) {
      const uint4 x = mine[v];
      r[4 * v] = x.x;
      r[4 * v + 1] = x.y;
      r[4 * v + 2] = x.z;
      r[4 * v + 3] = x.w;
    }
  };
  auto store = [&] {
#pragma unroll
    for (int v = 0; v < kKeysPerThread / 4; ++v) {
      mine[v] = make_uint4(r[4 * v], r[4 * v + 1], r[4 * v + 2], r[4 * v + 3]);
    }
  };
  if (active) load();
  for (std::uint32_t k = 2; k <= n; k *= 2) {
    if (k > 512) {
      // Distances >= 512 cross warps: through shared memory. Each thread only stores and
      // loads its own 16 slots, so no barrier is needed between a load and the next store.
      if (active) store();
      __syncthreads();  // every thread's keys in the tile
      SharedStep(tile, n, k, k / 2, true);
      for (std::uint32_t j = k / 4; j >= 512; j /= 2) SharedStep(tile, n, k, j, false);
      if (active) load();
    } else if (active && k > 16) {
      ShuffleFlip(r, k);
    }
    if (active) {
      for (std::uint32_t j = min(k / 4, 256u); j >= 16; j /= 2) ShuffleStep(r, j);
      RegisterPhase(r, k);
    }
  }
  if (active) store();
  __syncthreads();  // sorted tile visible to all threads
}

/// Min and max of keys[0, len) by the whole block: four independent loads in flight per
/// thread, then warp shuffles and one shared slot per warp. Every thread gets the result.
/// @param[in] keys first key
/// @param[in] len keys, >= 1
/// @param[out] scratch blockDim.x / 32 + 1 pairs of shared memory
/// Reads 4 bytes per key.
__device__ Pair BlockMinMax(const std::uint32_t* keys, std::uint64_t len, Pair* scratch) {
  std::uint32_t lo = UINT_MAX, hi = 0;
  const std::uint64_t stride = blockDim.x;
  std::uint64_t i = threadIdx.x;
  for (; i + 3 * stride < len; i += 4 * stride) {
    const std::uint32_t a = keys[i], b = keys[i + stride];
    const std::uint32_t c = keys[i + 2 * stride], d = keys[i + 3 * stride];
    lo = min(lo, min(min(a, b), min(c, d)));
    hi = max(hi, max(max(a, b), max(c, d)));
  }
  for (; i < len; i += stride) {
    lo = min(lo, keys[i]);
    hi = max(hi, keys[i]);
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, offset));
    hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, offset));
  }
  const std::uint32_t warps = blockDim.x / 32;
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x / 32] = Pair{lo, hi};
  __syncthreads();  // every warp's pair written
  if (threadIdx.x < 32) {
    Pair p = threadIdx.x < warps ? scratch[threadIdx.x] : Pair{UINT_MAX, 0};
    for (int offset = 16; offset > 0; offset /= 2) {
      p.min = min(p.min, __shfl_xor_sync(0xffffffffu, p.min, offset));
      p.max = max(p.max, __shfl_xor_sync(0xffffffffu, p.max, offset));
    }
    if (threadIdx.x == 0) scratch[warps] = p;
  }
  __syncthreads();  // block result written
  return scratch[warps];
}

/**
 * @brief Step 5: block j sorts bucket j of the level on chip (one block per bucket).
 *
 * The bucket [begin, end) comes from the scanned matrix; it is loaded with coalesced loads
 * into a shared tile padded with 0xFFFFFFFF to a power of two (at least 512), sorted by
 * `BitonicSortTile`, and stored with coalesced stores. Buckets over kTileKeys are appended to
 * the oversized list with their min and max (`BlockMinMax`), or copied to @p out when all
 * equal; those over kBlockMinMaxKeys are appended unreduced ({0xFFFFFFFF, 0}). Segments with
 * min == max were already written by the partition.
 * @par Launch configuration
 * One block of kTileKeys / kKeysPerThread threads per bucket (512 or 256); static shared
 * memory kTileKeys words.
 * @tparam kTileKeys kTile or kSmallTile
 * @param[in] part partitioned keys
 * @param[out] out sorted keys (may equal part)
 * @param[in] segments segments
 * @param[in] num_segments segments
 * @param[in] minmax per-segment min/max
 * @param[in] scanned exclusive scan of the matrix
 * @param[out] oversized spans of oversized buckets
 * @param[in,out] count number of spans
 * Reads and writes 4 bytes per key.
 */
template <std::uint32_t kTileKeys>
__global__ void __launch_bounds__(kTileKeys / kKeysPerThread)
    BitonicSortBucketsKernel(const std::uint32_t* part, std::uint32_t* out, const Segment* segments,
                             std::uint32_t num_segments, const Pair* minmax,
                             const std::uint32_t* scanned, Span* oversized, std::uint32_t* count) {
  __shared__ alignas(16) std::uint32_t tile[kTileKeys];
  const std::uint32_t s = FindSegment(segments, num_segments, blockIdx.x, &Segment::bucket_base);
  const Segment& seg = segments[s];
  const Pair mm = minmax[s];
  if (mm.min == mm.max) return;  // the partition wrote this segment to out
  const std::uint32_t b = blockIdx.x - seg.bucket_base;
  const std::uint32_t first = scanned[seg.matrix_base];
  const std::uint64_t begin =
      seg.begin + (scanned[seg.matrix_base + static_cast<std::uint64_t>(b) * seg.chunks] - first);
  const std::uint64_t end =
      b + 1 < seg.buckets
          ? seg.begin +
                (scanned[seg.matrix_base + static_cast<std::uint64_t>(b + 1) * seg.chunks] - first)
          : seg.begin + seg.len;
  const std::uint64_t len = end - begin;
  if (len == 0) return;
  if (len > kBlockMinMaxKeys) {
    // One block would take too long over it: SegmentMinMaxKernel reduces it at the next level.
    if (threadIdx.x == 0) oversized[atomicAdd(count, 1u)] = Span{begin, len, UINT_MAX, 0};
    return;
  }
  if (len > kTileKeys) {
    // The next level needs this bucket's own [min, max]: reduce it here, where the block
    // already knows the bucket, instead of in a separate pass over every oversized key.
    const Pair bucket_mm = BlockMinMax(part + begin, len, reinterpret_cast<Pair*>(tile));
    if (bucket_mm.min == bucket_mm.max) {
      // All equal: already sorted, so it is final (copied when this level sorts out of place).
      if (part != out) {
        for (std::uint64_t i = threadIdx.x; i < len; i += blockDim.x) {
          out[begin + i] = part[begin + i];
        }
      }
    } else if (threadIdx.x == 0) {
      oversized[atomicAdd(count, 1u)] = Span{begin, len, bucket_mm.min, bucket_mm.max};
    }
    return;
  }
  std::uint32_t n = 512;
  while (n < len) n *= 2;
  for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
    tile[i] = i < len ? part[begin + i] : UINT_MAX;  // padding sorts to the end
  }
  __syncthreads();  // tile loaded
  BitonicSortTile(tile, n);
  for (std::uint32_t i = threadIdx.x; i < len; i += blockDim.x) out[begin + i] = tile[i];
}

// ---------------------------------------------------------------------------------------------
// Host side: planning, launchers, the level loop.

std::uint32_t BucketsFor(std::uint64_t len, std::uint32_t tile) {
  const std::uint64_t target = TargetBucketKeys(tile);
  const std::uint64_t h = (len + target - 1) / target;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(h, 1, kMaxBuckets));
}

LevelPlan PlanLevel(const std::vector<Span>& spans) {
  LevelPlan plan;
  const bool small = std::all_of(spans.begin(), spans.end(), [](const Span& span) {
    return span.len <= std::uint64_t{kMaxBuckets} * kSmallTargetBucketKeys;
  });
  plan.tile = small ? kSmallTile : kTile;
  plan.segments.reserve(spans.size());
  for (const Span& span : spans) {
    Segment seg;
    seg.begin = span.begin;
    seg.len = span.len;
    seg.buckets = BucketsFor(span.len, plan.tile);
    seg.chunks = static_cast<std::uint32_t>((span.len + kChunk - 1) / kChunk);
    seg.matrix_base = plan.matrix;
    seg.chunk_base = plan.chunks;
    seg.bucket_base = plan.buckets;
    plan.matrix += static_cast<std::uint64_t>(seg.buckets) * seg.chunks;
    plan.chunks += seg.chunks;
    plan.buckets += seg.buckets;
    plan.segments.push_back(seg);
  }
  return plan;
}

void StageTimer::Begin(Stage stage, cudaStream_t stream) {
  if (used_ == intervals_.size()) intervals_.push_back(Interval{stage, {}, {}});
  intervals_[used_].stage = stage;
  intervals_[used_].start.Record(stream);
}

void StageTimer::End(cudaStream_t stream) { intervals_[used_++].stop.Record(stream); }

std::array<double, kStageCount> StageTimer::Collect() {
  std::array<double, kStageCount> ms{};
  for (std::size_t i = 0; i < used_; ++i) {
    intervals_[i].stop.Synchronize();
    ms[static_cast<int>(intervals_[i].stage)] +=
        intervals_[i].stop.MillisecondsSince(intervals_[i].start);
  }
  return ms;
}

namespace {
/// Replaces @p buf by a larger one when it holds fewer than @p need elements (25% slack).
template <typename Buffer>
void Grow(Buffer& buf, std::size_t need) {
  if (buf.size() < need) buf = Buffer(need + need / 4);
}
}  // namespace

Workspace::Workspace(std::size_t capacity) : count(1), h_count(1) {
  if (capacity > 0) Reserve(capacity, PlanLevel({Span{0, capacity}}));
}

void Workspace::Reserve(std::size_t n, const LevelPlan& plan) {
  Grow(part, n);
  Grow(matrix, std::max<std::uint64_t>(plan.matrix, 1));
  Grow(temp, std::max({ch01::optimized::MinMaxTempBytes<std::uint32_t>(n),
                       ch02::optimized::ExclusiveScanTempBytes<std::uint32_t>(plan.matrix),
                       std::size_t{1}}));
  Grow(segments, plan.segments.size());
  Grow(h_segments, plan.segments.size());
  Grow(minmax, plan.segments.size());
  Grow(h_minmax, plan.segments.size());
  Grow(oversized, plan.buckets);
  Grow(h_oversized, plan.buckets);
}

void SegmentMinMax(const std::uint32_t* d_keys, const Segment* d_segments,
                   std::uint32_t num_segments, std::uint32_t chunks, Pair* d_minmax,
                   cudaStream_t stream) {
  if (chunks == 0) return;
  SegmentMinMaxKernel<<<chunks, kChunkThreads, 0, stream>>>(d_keys, d_segments, num_segments,
                                                            d_minmax);
  CUDA_CHECK_LAST_LAUNCH();
}

void Histogram(const std::uint32_t* d_keys, const Segment* d_segments, std::uint32_t num_segments,
               std::uint32_t chunks, const Pair* d_minmax, std::uint32_t* d_matrix,
               cudaStream_t stream) {
  if (chunks == 0) return;
  HistogramKernel<<<chunks, kChunkThreads, 0, stream>>>(d_keys, d_segments, num_segments, d_minmax,
                                                        d_matrix);
  CUDA_CHECK_LAST_LAUNCH();
}

void Partition(const std::uint32_t* d_keys, const Segment* d_segments, std::uint32_t num_segments,
               std::uint32_t chunks, const Pair* d_minmax, const std::uint32_t* d_scanned,
               std::uint32_t* d_part, std::uint32_t* d_out, cudaStream_t stream) {
  if (chunks == 0) return;
  // Over 48 KiB of dynamic shared memory must be opted into (once per process is enough,
  // repeating it is cheap and keeps the launcher self-contained).
  CUDA_CHECK(cudaFuncSetAttribute(PartitionKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kPartitionSharedBytes)));
  PartitionKernel<<<chunks, kChunkThreads, kPartitionSharedBytes, stream>>>(
      d_keys, d_segments, num_segments, d_minmax, d_scanned, d_part, d_out);
  CUDA_CHECK_LAST_LAUNCH();
}

void BitonicSortBuckets(const std::uint32_t* d_part, std::uint32_t* d_out,
                        const Segment* d_segments, std::uint32_t num_segments,
                        std::uint32_t buckets, const Pair* d_minmax, const std::uint32_t* d_scanned,
                        Span* d_oversized, std::uint32_t* d_count, std::uint32_t tile,
                        cudaStream_t stream) {
  if (buckets == 0) return;
  if (tile != kTile && tile != kSmallTile) {
    throw std::invalid_argument("BitonicSortBuckets: tile must be kTile or kSmallTile");
  }
  const auto kernel =
      tile == kSmallTile ? BitonicSortBucketsKernel<kSmallTile> : BitonicSortBucketsKernel<kTile>;
  kernel<<<buckets, tile / kKeysPerThread, 0, stream>>>(d_part, d_out, d_segments, num_segments,
                                                        d_minmax, d_scanned, d_oversized, d_count);
  CUDA_CHECK_LAST_LAUNCH();
}

void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream, StageTimer* timer) {
  if (n > kMaxKeys) throw staged::InputError("mppSort: n must be at most 2^32 - 1 keys");
  ws.levels = 0;
  if (n == 0) return;
  auto timed = [&](Stage stage, auto&& work) {
    if (timer != nullptr) timer->Begin(stage, stream);
    work();
    if (timer != nullptr) timer->End(stream);
  };
  std::vector<Span> spans{Span{0, n}};
  const std::uint32_t* src = d_in;  // where this level's keys are
  std::uint32_t* part = nullptr;    // where this level partitions to: never src
  // Every level ends with a host synchronisation, so the pinned staging buffers are free to
  // be rewritten at the start of the next one.
  for (int level = 0;; ++level) {
    // Each level at least splits off a segment's largest key or proves it all-equal, and the
    // key range shrinks about h-fold per level, so 2^32 keys converge in far fewer levels.
    if (level > 64) throw std::logic_error("mppSort: re-bucketing did not converge");
    const LevelPlan plan = PlanLevel(spans);
    ws.Reserve(n, plan);
    part = src == ws.part.data() ? d_out : ws.part.data();
    const auto num = static_cast<std::uint32_t>(plan.segments.size());
    std::copy(plan.segments.begin(), plan.segments.end(), ws.h_segments.data());
    CUDA_CHECK(cudaMemcpyAsync(ws.segments.data(), ws.h_segments.data(), num * sizeof(Segment),
                               cudaMemcpyHostToDevice, stream));
    if (level == 0) {
      timed(Stage::kMinMax, [&] {
        ch01::optimized::MinMax(d_in, n, ws.minmax.data(), ws.temp.data(), ws.temp.size(), stream);
      });
    } else {
      // The previous level's bitonic kernel reduced the min and max of each oversized bucket
      // of at most kBlockMinMaxKeys keys; longer ones (marked {0xFFFFFFFF, 0}) are reduced here.
      std::transform(spans.begin(), spans.end(), ws.h_minmax.data(), [](const Span& span) {
        return Pair{span.min, span.max};
      });
      CUDA_CHECK(cudaMemcpyAsync(ws.minmax.data(), ws.h_minmax.data(), num * sizeof(Pair),
                                 cudaMemcpyHostToDevice, stream));
      if (std::any_of(spans.begin(), spans.end(),
                      [](const Span& span) { return span.len > kBlockMinMaxKeys; })) {
        timed(Stage::kMinMax, [&] {
          SegmentMinMax(src, ws.segments.data(), num, plan.chunks, ws.minmax.data(), stream);
        });
      }
    }
    timed(Stage::kHistogram, [&] {
      Histogram(src, ws.segments.data(), num, plan.chunks, ws.minmax.data(), ws.matrix.data(),
                stream);
    });
    timed(Stage::kScan, [&] {
      ch02::optimized::ExclusiveScan<std::uint32_t>(ws.matrix.data(), ws.matrix.data(), plan.matrix,
                                                    ws.temp.data(), ws.temp.size(), stream);
    });
    timed(Stage::kPartition, [&] {
      Partition(src, ws.segments.data(), num, plan.chunks, ws.minmax.data(), ws.matrix.data(), part,
                d_out, stream);
    });
    timed(Stage::kBitonic, [&] {
      CUDA_CHECK(cudaMemsetAsync(ws.count.data(), 0, sizeof(std::uint32_t), stream));
      BitonicSortBuckets(part, d_out, ws.segments.data(), num, plan.buckets, ws.minmax.data(),
                         ws.matrix.data(), ws.oversized.data(), ws.count.data(), plan.tile, stream);
    });
    CUDA_CHECK(cudaMemcpyAsync(ws.h_count.data(), ws.count.data(), sizeof(std::uint32_t),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    ws.levels = level + 1;
    const std::uint32_t left = ws.h_count[0];
    if (left == 0) return;
    CUDA_CHECK(cudaMemcpyAsync(ws.h_oversized.data(), ws.oversized.data(), left * sizeof(Span),
                               cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    spans.assign(ws.h_oversized.data(), ws.h_oversized.data() + left);
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
    src = part;  // the oversized buckets stay where this level partitioned them
  }
}

}  // namespace ch03::optimized
