/**
 * @file block_minmax.cuh
 * @brief Chapter 01's warp and block min/max reductions over order-preserving keys: shuffles
 *        inside a warp, one key pair per warp through shared memory, shuffles again in warp 0.
 *
 * This is change 4 of the chapter (warp shuffles instead of a shared-memory tree), kept in the
 * chapter's contract so that later chapters (03's mppSort) reduce with the same code.
 *
 * @code
 * __shared__ ch01::KeyOf<T> s_min[kThreads / 32], s_max[kThreads / 32];
 * ch01::BlockMinMax<T, kThreads>(kmin, kmax, s_min, s_max);   // result in thread 0
 * @endcode
 */
#pragma once

#include "chapters/01_minmax_reduction/minmax.cuh"

namespace ch01 {

/// Butterfly over the warp: afterwards every lane holds the warp's min and max keys.
/// @tparam K key type
/// @param[in,out] kmin,kmax this lane's keys in, the warp's out
/// @pre all 32 lanes of the warp call it (full-mask shuffles)
template <typename K>
__device__ __forceinline__ void WarpMinMax(K& kmin, K& kmax) {
  // snippet-begin: ch01-warp-shuffle
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) {
    // Lane l meets lane l ^ offset: after 5 steps every lane has seen all 32 keys.
    kmin = KeyMin(kmin, __shfl_xor_sync(0xFFFFFFFFu, kmin, offset));
    kmax = KeyMax(kmax, __shfl_xor_sync(0xFFFFFFFFu, kmax, offset));
  }
  // snippet-end: ch01-warp-shuffle
}

/// Block-wide min and max: warp shuffles, one key pair per warp through shared memory, then
/// warp 0 shuffles again. The result is valid in every lane of warp 0 (thread 0 included).
/// @tparam T element type (its keys are reduced)
/// @tparam kThreads threads of the block: a multiple of 32, at most 1024
/// @param[in,out] kmin,kmax this thread's keys in, the block's out (warp 0)
/// @param s_min,s_max kThreads / 32 keys of shared scratch each
/// @pre blockDim.x == kThreads and every thread calls it (it contains `__syncthreads()`); the
///      caller has synchronised since any earlier read of @p s_min / @p s_max
template <typename T, int kThreads>
__device__ __forceinline__ void BlockMinMax(KeyOf<T>& kmin, KeyOf<T>& kmax, KeyOf<T>* s_min,
                                            KeyOf<T>* s_max) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, at most 32 of them");
  constexpr int kWarps = kThreads / 32;
  // snippet-begin: ch01-block-minmax
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  WarpMinMax(kmin, kmax);
  if (lane == 0) {
    s_min[warp] = kmin;
    s_max[warp] = kmax;
  }
  // Warp 0 reads what every warp's lane 0 wrote.
  __syncthreads();
  if (warp == 0) {
    kmin = lane < kWarps ? s_min[lane] : OrderedKey<T>::kHighest;
    kmax = lane < kWarps ? s_max[lane] : OrderedKey<T>::kLowest;
    WarpMinMax(kmin, kmax);
  }
  // snippet-end: ch01-block-minmax
}

}  // namespace ch01
