/**
 * @file counting_tile.cuh
 * @brief Step 5 as a bucket sort on chip: one block spreads its bucket over many narrow
 *        sub-buckets in shared memory (a counting sort, as steps 1 to 4 do over the whole input),
 *        then each key finds its place among the few keys of its own sub-bucket.
 *
 * A uniform bucket of m keys over S = 8 x threads sub-buckets (half the tile) leaves about m / S
 * keys (about 2 in a full tile) in each, so after the counting sort a key is compared with a
 * handful of neighbours, not pushed through the 78 to 105 layers of a bitonic network. Per key that is two shared atomics, one
 * shared store and a few shared loads:
 *
 * 1. load the bucket into registers (16 keys per thread) and reduce its [min, max];
 * 2. count: a shared atomic per key on its arithmetic sub-bucket over [min, max];
 * 3. scan the counters (their starts), then scatter: a second atomic per key hands it a slot in
 *    its sub-bucket's run of the tile, and leaves each counter at its run's end;
 * 4. rank: the key at slot p of run [start, end) goes to start + the number of keys of the run
 *    that are smaller, or equal and at a lower slot.
 *
 * Two inputs skip or replace steps 2 to 4. When the bucket spans fewer key values than there
 * are sub-buckets, each value gets a counter of its own and the output is written from the
 * counts alone (a counting sort proper: one atomic per key, and no key moves through the tile).
 * When some sub-bucket holds more than kMaxSubBucketRun keys (clustered keys, which the walk of
 * step 4 would pay for quadratically), the tile goes through the bitonic network instead: the
 * same block, the same 16 keys per thread.
 */
#pragma once

#include <climits>
#include <cstdint>

#include "chapters/01_minmax_reduction/block_minmax.cuh"
#include "chapters/03_mppsort/bitonic_tile.cuh"
#include "chapters/03_mppsort/block_scan.cuh"
#include "chapters/03_mppsort/mppsort.cuh"

namespace ch03::optimized {

/// Gives thread 0's @p lo and @p hi (a `BlockMinMax` result) to every thread through `sh.lo` and
/// `sh.word`. Every thread of the block calls it; its barrier also publishes the caller's earlier
/// shared writes.
/// @param[in,out] lo,hi thread 0's in, the same in every thread out
/// @param[in,out] sh the block's shared memory (its `lo` and `word`)
template <class Shared>
__device__ __forceinline__ void ShareMinMax(std::uint32_t& lo, std::uint32_t& hi, Shared& sh) {
  if (threadIdx.x == 0) {
    sh.lo = lo;
    sh.word = hi;
  }
  __syncthreads();  // the range visible to all
  lo = sh.lo;
  hi = sh.word;
}

/// Longest sub-bucket run that step 4 walks; a bucket with a longer one (clustered keys) is
/// sorted by the bitonic network instead.
inline constexpr std::uint32_t kMaxSubBucketRun = 32;

/// The counting sorter of `SortBucketsKernel`: one block of kTileKeys / 16 threads sorts one
/// bucket of at most kTileKeys keys.
/// @tparam kTileKeys 4096, 8192 or 16384
template <std::uint32_t kTileKeys>
struct CountingTile {
  static_assert(kTileKeys % (32 * kBitonicKeysPerThread) == 0 && kTileKeys <= 16384,
                "whole warps of 16 keys, at most 1024 threads (the bitonic fallback's shape)");
  /// Keys each thread holds.
  static constexpr int kKeysPerThread = kBitonicKeysPerThread;
  /// Threads of the block.
  static constexpr int kThreads = static_cast<int>(kTileKeys) / kKeysPerThread;
  /// Blocks per SM the kernel's register cap allows (1024 threads' worth).
  static constexpr int kMinBlocks = 1024 / kThreads;
  /// Keys one block sorts.
  static constexpr std::uint32_t kKeys = kTileKeys;
  /// Counters per thread of the sub-bucket scan.
  static constexpr int kSubPerThread = 8;
  /// Sub-buckets: half the tile, so a full uniform bucket leaves about two keys in each.
  static constexpr std::uint32_t kSubBuckets = static_cast<std::uint32_t>(kSubPerThread) * kThreads;

  /// The block's shared memory.
  struct Shared {
    alignas(16) std::uint32_t tile[kTileKeys];        ///< the bucket grouped by sub-bucket
    alignas(16) std::uint32_t counts[kSubBuckets];    ///< counts, then starts, then run ends
    std::uint32_t scan_scratch[kBlockScanScratch];    ///< BlockExclusiveScan scratch
    ch01::KeyOf<std::uint32_t> s_min[kThreads / 32];  ///< BlockMinMax scratch
    ch01::KeyOf<std::uint32_t> s_max[kThreads / 32];  ///< BlockMinMax scratch
    std::uint32_t lo;                                 ///< one broadcast word (a minimum)
    std::uint32_t word;                               ///< one broadcast word (a maximum)
    std::uint32_t crowded;                            ///< 1: a run is over kMaxSubBucketRun
  };

  /// Sorts in[0, len) into out[0, len) (in place allowed: every key is read before the first
  /// barrier, written after it). Every thread of the block calls it; it ends with a barrier.
  /// @param[in] in the bucket
  /// @param[out] out where the sorted bucket goes
  /// @param[in] len keys, in [1, kTileKeys]
  /// @param[in,out] sh the block's shared memory
  __device__ static void SortBucket(const std::uint32_t* in, std::uint32_t* out, std::uint32_t len,
                                    Shared& sh) {
    // snippet-begin: ch03-counting-load
    std::uint32_t key[kKeysPerThread];
    std::uint32_t lo = UINT_MAX, hi = 0;
#pragma unroll
    for (int q = 0; q < kKeysPerThread; ++q) {
      const std::uint32_t i = q * kThreads + threadIdx.x;
      key[q] = i < len ? in[i] : 0;
      if (i < len) {
        lo = min(lo, key[q]);
        hi = max(hi, key[q]);
      }
    }
    ch01::BlockMinMax<std::uint32_t, kThreads>(lo, hi, sh.s_min, sh.s_max);
    if (threadIdx.x == 0) sh.crowded = 0;
    auto* counts4 = reinterpret_cast<uint4*>(sh.counts);
#pragma unroll
    for (int v = 0; v < kSubPerThread / 4; ++v) {
      counts4[v * kThreads + threadIdx.x] = make_uint4(0, 0, 0, 0);
    }
    // Its barrier: range, flag and zeroed counters visible; every key read from `in`.
    ShareMinMax(lo, hi, sh);
    if (lo == hi) {  // all equal: already sorted
      for (std::uint32_t i = threadIdx.x; i < len; i += kThreads) out[i] = lo;
      __syncthreads();  // sh read before the block's next bucket overwrites it
      return;
    }
    // snippet-end: ch03-counting-load
    // snippet-begin: ch03-counting-spread
    // Fewer key values than sub-buckets: one counter per value (a scale of 2^32 makes the
    // sub-bucket key - lo), and the output comes from the counts alone (`WriteFromCounts`).
    const bool exact = hi - lo < kSubBuckets;
    const std::uint64_t scale = exact ? (1ull << 32) : BucketScale(lo, hi, kSubBuckets);
#pragma unroll
    for (int q = 0; q < kKeysPerThread; ++q) {
      if (q * kThreads + threadIdx.x < len) {
        const std::uint32_t s = ArithmeticBucket(key[q], lo, scale);
        if (atomicAdd(&sh.counts[s], 1u) == kMaxSubBucketRun) atomicOr(&sh.crowded, 1u);
      }
    }
    __syncthreads();  // counts complete
    // counts[s] becomes the start of run s.
    BlockExclusiveScan<kSubPerThread>(sh.counts, kSubBuckets, sh.scan_scratch);
    if (exact) {
      WriteFromCounts(lo, hi - lo + 1, len, out, sh);
      return;
    }
#pragma unroll
    for (int q = 0; q < kKeysPerThread; ++q) {
      if (q * kThreads + threadIdx.x < len) {
        // The sub-bucket again: recomputing it (a multiply) costs less than 16 more registers.
        sh.tile[atomicAdd(&sh.counts[ArithmeticBucket(key[q], lo, scale)], 1u)] = key[q];
      }
    }
    __syncthreads();  // tile grouped by sub-bucket; counts[s] is the end of run s
    // snippet-end: ch03-counting-spread
    if (sh.crowded == 0) {
      // snippet-begin: ch03-counting-rank
      // Consecutive threads take consecutive slots, so a warp's ranks fall in a few runs and
      // its stores to `out` stay within a few sectors.
      for (std::uint32_t p = threadIdx.x; p < len; p += kThreads) {
        const std::uint32_t k = sh.tile[p], s = ArithmeticBucket(k, lo, scale);
        const std::uint32_t start = s == 0 ? 0 : sh.counts[s - 1], end = sh.counts[s];
        std::uint32_t rank = start;
        for (std::uint32_t j = start; j < end; ++j) {
          const std::uint32_t v = sh.tile[j];
          rank += (v < k || (v == k && j < p)) ? 1 : 0;
        }
        out[rank] = k;
      }
      // snippet-end: ch03-counting-rank
    } else {
      BitonicSortPadded(sh.tile, len, out);  // the tile already holds every key
    }
    __syncthreads();  // tile, counters and flag read before the block's next bucket
  }

  /// Writes a bucket of @p values distinct values lo, lo + 1, ... from its scanned counts:
  /// output slot p holds the value v whose run [start(v), start(v + 1)) contains p, the last v
  /// with start(v) <= p, found by halving [0, values). No key moves through the tile.
  /// @param[in] lo the smallest key
  /// @param[in] values hi - lo + 1, in [2, kSubBuckets]
  /// @param[in] len keys of the bucket
  /// @param[out] out the sorted bucket
  /// @param[in,out] sh the block's shared memory (counts[v] is the start of value lo + v)
  __device__ static void WriteFromCounts(std::uint32_t lo, std::uint32_t values, std::uint32_t len,
                                         std::uint32_t* out, Shared& sh) {
    // snippet-begin: ch03-counting-few-values
    for (std::uint32_t p = threadIdx.x; p < len; p += kThreads) {
      std::uint32_t v = 0;
      for (std::uint32_t step = 1u << (31 - __clz(values - 1)); step > 0; step >>= 1) {
        if (v + step < values && sh.counts[v + step] <= p) v += step;
      }
      out[p] = lo + v;
    }
    // snippet-end: ch03-counting-few-values
    __syncthreads();  // counters read before the block's next bucket
  }
};

}  // namespace ch03::optimized
