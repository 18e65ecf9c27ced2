/**
 * @file radix_tile.cuh
 * @brief Step 5 as a block radix sort: one block sorts one bucket on chip by the bits that
 *        still differ inside it, 8 bits per pass, least significant digit first.
 *
 * A bucket of an equal-width level spans about (max - min) / h key values, so its keys differ
 * in far fewer than 32 bits: about 21 bits for 2^32 / 2268 buckets at 8M keys, so 3 passes,
 * where a bitonic network over 8192 keys needs 91 layers of compare-exchanges. Each pass is a
 * stable counting sort of one 8-bit digit of (key - bucket min), in three steps:
 *
 * 1. count: every warp counts its keys per digit in its own row of 256 shared counters;
 * 2. scan: one exclusive scan of the counters in (digit, warp) order gives, for every warp and
 *    digit, where that warp's keys of that digit start;
 * 3. rank and scatter: each warp walks its keys in order, finds the lanes holding the same digit
 *    (`__match_any_sync`), and the highest of them advances the warp's counter for the digit by
 *    the group's size; each key lands at that start plus its rank within the group.
 *
 * Stability, which an LSD radix sort needs, comes from the order: warp w owns positions
 * [w * 32K, (w + 1) * 32K) and walks them round by round (round u holds positions
 * w * 32K + 32u + lane), so the order (warp, round, lane) is the keys' order.
 *
 * What the count of passes hides, and why it is slower than the bitonic network: every pass
 * costs each key a shared atomic, a `__match_any_sync` (a multi-cycle instruction) and its
 * scattered store, and the block four barriers and a scan of 256 x warps counters; a bucket of
 * 22 differing bits pays that three times. The 36864-key tile adds occupancy to it: 72 keys per
 * thread need 128 registers, so one 512-thread block (16 warps) runs per SM and nothing hides
 * its barriers.
 */
#pragma once

#include <climits>
#include <cstdint>

#include "chapters/01_minmax_reduction/block_minmax.cuh"

namespace ch03::optimized {

/// The radix sorter of `SortBucketsKernel`: a block of kThreads threads, each holding
/// kKeysPerThread keys in registers, sorts one bucket of at most kThreads x kKeysPerThread keys.
/// @tparam kBlockThreads threads of the block: 256, 512 or 1024
/// @tparam kKeysPerThread keys each thread holds
template <int kBlockThreads, int kKeysPerThread>
struct RadixTile {
  static_assert(kBlockThreads % 256 == 0 && kBlockThreads <= 1024, "8, 16 or 32 warps");
  /// Threads of the block.
  static constexpr int kThreads = kBlockThreads;
  /// Blocks per SM the kernel's register cap allows: 1024 threads' worth for the small tiles
  /// (16 keys per thread), one block for the large tile, whose keys need up to 128 registers.
  static constexpr int kMinBlocks = kKeysPerThread > 32 ? 1 : 1024 / kThreads;
  /// Keys one block sorts.
  static constexpr std::uint32_t kKeys = static_cast<std::uint32_t>(kThreads) * kKeysPerThread;
  /// Warps of the block.
  static constexpr int kWarps = kThreads / 32;
  /// Bits per pass.
  static constexpr int kDigitBits = 8;
  /// Digits per pass: counters per warp.
  static constexpr int kRadix = 1 << kDigitBits;
  /// Words per digit row of counters (one per warp, plus one): counts[d * kStride + w] is warp
  /// w's counter of digit d. The odd stride spreads the lanes of a warp, which touch random
  /// digits of one warp's column, over the banks; the scan reads 8 consecutive words.
  static constexpr int kStride = kWarps + 1;
  /// Positions one warp owns.
  static constexpr std::uint32_t kWarpKeys = 32u * kKeysPerThread;

  /// The block's shared memory.
  struct Shared {
    std::uint32_t keys[kKeys];                 ///< the bucket between passes
    std::uint32_t counts[kRadix * kStride];    ///< per-warp digit counters, then starts
    std::uint32_t warp_sums[32];               ///< scan scratch
    ch01::KeyOf<std::uint32_t> s_min[kWarps];  ///< BlockMinMax scratch
    ch01::KeyOf<std::uint32_t> s_max[kWarps];  ///< BlockMinMax scratch
    std::uint32_t lo;                          ///< the bucket's smallest key
    std::uint32_t word;                        ///< one broadcast word (the bucket's range)
  };

  /// Sorts in[0, len) into out[0, len) (in place allowed). Every thread of the block calls it;
  /// it ends with a barrier.
  /// @param[in] in the bucket
  /// @param[out] out where the sorted bucket goes
  /// @param[in] len keys, in [1, kKeys]
  /// @param[in,out] sh the block's shared memory
  __device__ static void SortBucket(const std::uint32_t* in, std::uint32_t* out, std::uint32_t len,
                                    Shared& sh) {
    // The thread's keys sit at first + 32u, u = 0 .. kKeysPerThread - 1, of which the first
    // ceil(avail / 32) exist: one base pointer and constant offsets keep the registers for keys.
    const std::uint32_t first = (threadIdx.x >> 5) * kWarpKeys + (threadIdx.x & 31);
    const std::uint32_t avail = len > first ? len - first : 0;
    std::uint32_t key[kKeysPerThread];
    std::uint32_t kmin = UINT_MAX, kmax = 0;
    // Warp-striped loads: round u of a warp reads 32 consecutive keys (coalesced).
#pragma unroll
    for (int u = 0; u < kKeysPerThread; ++u) {
      key[u] = 32u * u < avail ? in[first + 32u * u] : 0;
      if (32u * u < avail) {
        kmin = min(kmin, key[u]);
        kmax = max(kmax, key[u]);
      }
    }
    // The bucket's own [min, max] decides how many digits differ.
    ch01::BlockMinMax<std::uint32_t, kThreads>(kmin, kmax, sh.s_min, sh.s_max);
    if (threadIdx.x == 0) {
      sh.lo = kmin;
      sh.word = kmax - kmin;
    }
    __syncthreads();  // bucket min and range visible to all
    const std::uint32_t range = sh.word;
    const int bits = range == 0 ? 0 : 32 - __clz(range);
    for (int shift = 0; shift < bits; shift += kDigitBits) Pass(key, len, shift, sh);
#pragma unroll
    for (int u = 0; u < kKeysPerThread; ++u) {
      if (32u * u < avail) out[first + 32u * u] = key[u];  // coalesced, like the loads
    }
    __syncthreads();  // shared memory may be reused by the block's next bucket
  }

 private:
  /// Digit of @p key (relative to the bucket's minimum @p lo) in the pass at @p shift.
  __device__ static std::uint32_t Digit(std::uint32_t key, std::uint32_t lo, int shift) {
    return ((key - lo) >> shift) & (kRadix - 1);
  }

  /// One stable counting-sort pass: key[] (the thread's warp-striped keys) is replaced by the
  /// keys at the same positions after sorting by the digit of (key - sh.lo) at @p shift.
  __device__ static void Pass(std::uint32_t (&key)[kKeysPerThread], std::uint32_t len, int shift,
                              Shared& sh) {
    const std::uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const std::uint32_t first = warp * kWarpKeys + lane;
    const std::uint32_t avail = len > first ? len - first : 0;
    for (int i = threadIdx.x; i < kRadix * kStride; i += kThreads) sh.counts[i] = 0;
    __syncthreads();  // counters zeroed (and the previous pass's reads of them done)

    // 1. Count: a shared atomic per key in the warp's own row.
    const std::uint32_t lo = sh.lo;
#pragma unroll
    for (int u = 0; u < kKeysPerThread; ++u) {
      if (32u * u < avail) atomicAdd(&sh.counts[Digit(key[u], lo, shift) * kStride + warp], 1u);
    }
    __syncthreads();  // every warp's counts complete

    // 2. Scan: counts[w][d] becomes the number of keys before (digit d, warp w) in the order
    //    (d, w): where warp w's keys of digit d start in the sorted tile.
    ScanCounts(sh);

    // 3. Rank and scatter, in the order that makes the pass stable. The digits are computed
    //    again from a fresh read of the minimum: kept from step 1, they would need a register
    //    per key across the scan.
    const std::uint32_t lo_again = sh.lo;
    std::uint32_t lt_mask;
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt_mask));
    const std::uint32_t warp_len = len > warp * kWarpKeys ? len - warp * kWarpKeys : 0;
#pragma unroll
    for (int u = 0; u < kKeysPerThread; ++u) {
      if (32u * u >= warp_len) break;  // the warp's remaining rounds are empty (warp-uniform)
      const bool valid = 32u * u < avail;
      // Padding lanes get digit kRadix: a group of their own that is never stored.
      const std::uint32_t d = valid ? Digit(key[u], lo_again, shift) : kRadix;
      const std::uint32_t peers = __match_any_sync(0xFFFFFFFFu, d);
      const std::uint32_t leader = 31 - __clz(peers);
      std::uint32_t start = 0;
      if (valid && lane == leader) start = atomicAdd(&sh.counts[d * kStride + warp], __popc(peers));
      start = __shfl_sync(0xFFFFFFFFu, start, leader);
      if (valid) sh.keys[start + __popc(peers & lt_mask)] = key[u];
      // Orders this round's counter update before the next round's read (other leader lanes).
      __syncwarp();
    }
    __syncthreads();  // the sorted tile is complete
#pragma unroll
    for (int u = 0; u < kKeysPerThread; ++u) {
      if (32u * u < avail) key[u] = sh.keys[first + 32u * u];
    }
    // The next pass writes sh.keys only after two more barriers (zeroing and counting), so
    // every thread has reloaded its keys by then.
  }

  /// Exclusive scan of the kRadix x kWarps counters in (digit, warp) order, in place: thread t
  /// takes the 8 consecutive counters f = 8t .. 8t + 7 (digit f / kWarps, warps f % kWarps on),
  /// a warp shuffle scan combines threads, one word per warp combines warps. The 8 counters are
  /// read twice rather than kept: the registers belong to the keys. Ends with a barrier.
  __device__ static void ScanCounts(Shared& sh) {
    constexpr int kPerThread = kRadix * kWarps / kThreads;  // 8
    const std::uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const std::uint32_t f = kPerThread * threadIdx.x;
    std::uint32_t* mine = sh.counts + (f / kWarps) * kStride + f % kWarps;
    std::uint32_t sum = 0;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) sum += mine[j];
    std::uint32_t inclusive = sum;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
      if (lane >= static_cast<std::uint32_t>(d)) inclusive += up;
    }
    if (lane == 31) sh.warp_sums[warp] = inclusive;
    __syncthreads();  // warp totals written
    if (warp == 0) {
      const std::uint32_t total = lane < kWarps ? sh.warp_sums[lane] : 0;
      std::uint32_t scan = total;
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const std::uint32_t up = __shfl_up_sync(0xFFFFFFFFu, scan, d);
        if (lane >= static_cast<std::uint32_t>(d)) scan += up;
      }
      if (lane < kWarps) sh.warp_sums[lane] = scan - total;  // exclusive
    }
    __syncthreads();  // warp offsets ready
    std::uint32_t prefix = sh.warp_sums[warp] + inclusive - sum;
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const std::uint32_t count = mine[j];  // only this thread touches its 8 counters here
      mine[j] = prefix;
      prefix += count;
    }
    __syncthreads();  // starts visible to every warp
  }
};

}  // namespace ch03::optimized
