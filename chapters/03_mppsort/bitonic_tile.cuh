/**
 * @file bitonic_tile.cuh
 * @brief Step 5 as the Portuguese report does it, on a modern GPU: a bitonic sorting network over one bucket
 *        in shared memory, with each thread's 16 keys in registers so that the short distances
 *        are register swaps and warp shuffles and only distances of 512 and more cross warps
 *        through shared memory. Every comparator is ascending ("flip" form), so the padding
 *        (0xFFFFFFFF) stays at the end.
 *
 * A bitonic network over m = 2^p keys has p (p + 1) / 2 layers of m / 2 compare-exchanges: 78
 * layers for 4096 keys. Of those, the layers of distance below 16 stay in a thread's registers,
 * distances 16 to 256 are `__shfl_xor_sync` between lanes, the rest go through shared memory.
 */
#pragma once

#include <climits>
#include <cstdint>

#include "chapters/01_minmax_reduction/block_minmax.cuh"

namespace ch03::optimized {

/// Keys each bitonic thread keeps in registers (a block has tile / 16 threads).
inline constexpr int kBitonicKeysPerThread = 16;

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
__device__ __forceinline__ void RegisterFlip(std::uint32_t (&r)[kBitonicKeysPerThread]) {
#pragma unroll
  for (int i = 0; i < kBitonicKeysPerThread; ++i) {
    const int p = i ^ (kK - 1);
    if (i < p) CompareSwap(r[i], r[p]);
  }
}

// snippet-begin: ch03-bitonic-register-step
/// A step of distance kJ < 16 in registers: element i meets element i + kJ.
/// @tparam kJ distance (1, 2, 4 or 8)
/// @param[in,out] r the thread's 16 consecutive keys
template <int kJ>
__device__ __forceinline__ void RegisterStep(std::uint32_t (&r)[kBitonicKeysPerThread]) {
#pragma unroll
  for (int i = 0; i < kBitonicKeysPerThread; ++i) {
    if ((i & kJ) == 0) CompareSwap(r[i], r[i + kJ]);
  }
}
// snippet-end: ch03-bitonic-register-step

/// The in-register steps of a merge: the flip when k <= 16, then distances min(k/4, 8) .. 1.
/// @param[in,out] r keys
/// @param[in] k merge size
__device__ __forceinline__ void RegisterPhase(std::uint32_t (&r)[kBitonicKeysPerThread],
                                              std::uint32_t k) {
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
__device__ __forceinline__ void ShuffleFlip(std::uint32_t (&r)[kBitonicKeysPerThread],
                                            std::uint32_t k) {
  const std::uint32_t mask = k / 16 - 1;
  const bool lower = (threadIdx.x & (k / 32)) == 0;
  std::uint32_t other[kBitonicKeysPerThread];
#pragma unroll
  for (int i = 0; i < kBitonicKeysPerThread; ++i) {
    other[i] = __shfl_xor_sync(0xffffffffu, r[kBitonicKeysPerThread - 1 - i], mask);
  }
#pragma unroll
  for (int i = 0; i < kBitonicKeysPerThread; ++i)
    r[i] = lower ? min(r[i], other[i]) : max(r[i], other[i]);
}

// snippet-begin: ch03-bitonic-shuffle-step
/// Step of distance 16 <= j <= 256 across lanes: key i meets key i of lane t ^ (j / 16).
/// @param[in,out] r keys
/// @param[in] j distance
__device__ __forceinline__ void ShuffleStep(std::uint32_t (&r)[kBitonicKeysPerThread],
                                            std::uint32_t j) {
  const std::uint32_t mask = j / 16;
  const bool lower = (threadIdx.x & mask) == 0;
#pragma unroll
  for (int i = 0; i < kBitonicKeysPerThread; ++i) {
    const std::uint32_t v = __shfl_xor_sync(0xffffffffu, r[i], mask);
    r[i] = lower ? min(r[i], v) : max(r[i], v);
  }
}
// snippet-end: ch03-bitonic-shuffle-step

/// A step of distance >= 512 in shared memory: N / 2 comparators, 8 per active thread, with
/// consecutive threads on consecutive addresses (no bank conflicts). Ends with a barrier.
/// @param[in,out] tile keys
/// @param[in] n padded length N
/// @param[in] k merge size
/// @param[in] j distance (k / 2 for the flip step)
/// @param[in] flip element i of a k-run meets element k - 1 - i
__device__ inline void SharedStep(std::uint32_t* tile, std::uint32_t n, std::uint32_t k,
                                  std::uint32_t j, bool flip) {
  const std::uint32_t threads = n / kBitonicKeysPerThread;
  if (threadIdx.x < threads) {
#pragma unroll
    for (int q = 0; q < kBitonicKeysPerThread / 2; ++q) {
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
__device__ inline void BitonicSortTile(std::uint32_t* tile, std::uint32_t n) {
  const bool active = threadIdx.x < n / kBitonicKeysPerThread;  // n / 16 is a multiple of 32
  auto* mine = reinterpret_cast<uint4*>(tile + threadIdx.x * kBitonicKeysPerThread);
  std::uint32_t r[kBitonicKeysPerThread];
  auto load = [&] {
#pragma unroll
    for (int v = 0; v < kBitonicKeysPerThread / 4; ++v) {
      const uint4 x = mine[v];
      r[4 * v] = x.x;
      r[4 * v + 1] = x.y;
      r[4 * v + 2] = x.z;
      r[4 * v + 3] = x.w;
    }
  };
  auto store = [&] {
#pragma unroll
    for (int v = 0; v < kBitonicKeysPerThread / 4; ++v) {
      mine[v] = make_uint4(r[4 * v], r[4 * v + 1], r[4 * v + 2], r[4 * v + 3]);
    }
  };
  // snippet-begin: ch03-bitonic-tile-loop
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
  // snippet-end: ch03-bitonic-tile-loop
}

/// Sorts tile[0, len) with the whole block and writes it to out[0, len): pads the tile with
/// 0xFFFFFFFF up to the network's length (the next power of two, at least 512), then
/// `BitonicSortTile`. Ends with the sorted tile and a barrier.
/// @pre tile[0, len) written by this block (the barrier inside makes it visible); the tile has
///      room for the padded length, at most blockDim.x * 16.
/// @param[in,out] tile keys in shared memory, 16-byte aligned
/// @param[in] len keys, >= 1
/// @param[out] out where the sorted keys go
__device__ inline void BitonicSortPadded(std::uint32_t* tile, std::uint32_t len,
                                         std::uint32_t* out) {
  // snippet-begin: ch03-bitonic-sort-bucket
  std::uint32_t n = 512;
  while (n < len) n *= 2;
  for (std::uint32_t i = len + threadIdx.x; i < n; i += blockDim.x) {
    tile[i] = UINT_MAX;  // padding sorts to the end
  }
  __syncthreads();  // keys and padding in place
  BitonicSortTile(tile, n);
  for (std::uint32_t i = threadIdx.x; i < len; i += blockDim.x) out[i] = tile[i];
  // snippet-end: ch03-bitonic-sort-bucket
}

/// The bitonic sorter of `SortBucketsKernel`: one block of kTileKeys / 16 threads sorts one
/// bucket of at most kTileKeys keys.
/// @tparam kTileKeys 4096 or 8192
template <std::uint32_t kTileKeys>
struct BitonicTile {
  static_assert(kTileKeys % (32 * kBitonicKeysPerThread) == 0, "bitonic blocks are whole warps");
  /// Threads of the block.
  static constexpr int kThreads = static_cast<int>(kTileKeys) / kBitonicKeysPerThread;
  /// Blocks per SM the kernel's register cap allows (1024 threads' worth).
  static constexpr int kMinBlocks = 1024 / kThreads;
  /// Keys one block sorts.
  static constexpr std::uint32_t kKeys = kTileKeys;
  /// The block's shared memory.
  struct Shared {
    alignas(16) std::uint32_t tile[kTileKeys];        ///< the padded bucket
    ch01::KeyOf<std::uint32_t> s_min[kThreads / 32];  ///< BlockMinMax scratch
    ch01::KeyOf<std::uint32_t> s_max[kThreads / 32];  ///< BlockMinMax scratch
    std::uint32_t lo;                                 ///< one broadcast word (a minimum)
    std::uint32_t word;                               ///< one broadcast word (a maximum)
  };

  /// Sorts in[0, len) into out[0, len) (in place allowed). Every thread of the block calls it;
  /// it ends with a barrier.
  /// @param[in] in the bucket
  /// @param[out] out where the sorted bucket goes
  /// @param[in] len keys, in [1, kTileKeys]
  /// @param[in,out] sh the block's shared memory
  __device__ static void SortBucket(const std::uint32_t* in, std::uint32_t* out, std::uint32_t len,
                                    Shared& sh) {
    for (std::uint32_t i = threadIdx.x; i < len; i += blockDim.x) sh.tile[i] = in[i];
    BitonicSortPadded(sh.tile, len, out);
    __syncthreads();  // the tile may be refilled by the block's next bucket
  }
};

}  // namespace ch03::optimized
