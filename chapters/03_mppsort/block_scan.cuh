/**
 * @file block_scan.cuh
 * @brief Block-wide exclusive scans of the optimized mppSort: of one value per thread (the
 *        planner's chunk, bucket and matrix counts) and of the partition's bucket and the counting
 *        tile's sub-bucket counters (eight per thread). Both are a warp shuffle scan, then warp
 *        0's scan of the warp totals.
 */
#pragma once

#include <cstdint>

namespace ch03::optimized {

/// Words of shared scratch a block scan needs: one per warp and the block's total.
inline constexpr int kBlockScanScratch = 33;

/// Exclusive sum of @p value over the block (any number of whole warps, at most 32), with the
/// block's total. Contains three barriers; the scratch may be reused at once.
/// @tparam T uint32_t or uint64_t
/// @param[in] value this thread's value
/// @param[out] total the sum over the block
/// @param[out] scratch kBlockScanScratch values of shared memory
template <typename T>
__device__ T BlockExclusiveSum(T value, T& total, T* scratch) {
  const std::uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  T inclusive = value;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    const T up = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
    if (lane >= static_cast<std::uint32_t>(d)) inclusive += up;
  }
  if (lane == 31) scratch[warp] = inclusive;
  __syncthreads();  // warp totals written
  if (warp == 0) {
    const T mine = lane < warps ? scratch[lane] : T{0};
    T scan = mine;
#pragma unroll
    for (int d = 1; d < 32; d *= 2) {
      const T up = __shfl_up_sync(0xFFFFFFFFu, scan, d);
      if (lane >= static_cast<std::uint32_t>(d)) scan += up;
    }
    if (lane < warps) scratch[lane] = scan - mine;  // exclusive: the warp's offset
    if (lane == 31) scratch[32] = scan;             // lanes past the warps added 0
  }
  __syncthreads();  // warp offsets and total ready
  total = scratch[32];
  const T before = scratch[warp] + inclusive - value;
  __syncthreads();  // scratch read before the caller reuses it
  return before;
}

/// Exclusive scan of v[0, n) in place by the block: thread t scans the kPerThread values
/// v[kPerThread t, kPerThread (t + 1)) (16-byte accesses), `BlockExclusiveSum` combines the
/// threads. Ends with a barrier.
/// @tparam kPerThread values per thread: 4 or 8
/// @pre v is 16-byte aligned with room for kPerThread * blockDim.x values;
///      n <= kPerThread * blockDim.x.
/// @param[in,out] v values in shared memory (entries from n on are neither used nor kept)
/// @param[in] n count
/// @param[out] scratch kBlockScanScratch words of shared memory
template <int kPerThread>
__device__ inline void BlockExclusiveScan(std::uint32_t* v, std::uint32_t n,
                                          std::uint32_t* scratch) {
  static_assert(kPerThread == 4 || kPerThread == 8, "whole 16-byte vectors");
  constexpr int kVectors = kPerThread / 4;
  const std::uint32_t first = kPerThread * threadIdx.x;
  auto* v4 = reinterpret_cast<uint4*>(v) + kVectors * threadIdx.x;
  std::uint32_t x[kPerThread];
#pragma unroll
  for (int q = 0; q < kVectors; ++q) {
    const uint4 a = first < n ? v4[q] : make_uint4(0, 0, 0, 0);
    x[4 * q] = a.x;
    x[4 * q + 1] = a.y;
    x[4 * q + 2] = a.z;
    x[4 * q + 3] = a.w;
  }
  // Values past n are stale (an earlier chunk's, or never written): they count as 0.
  std::uint32_t sum = 0;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    if (first + i >= n) x[i] = 0;
    sum += x[i];
  }
  std::uint32_t total;
  std::uint32_t prefix = BlockExclusiveSum<std::uint32_t>(sum, total, scratch);
  if (first < n) {
#pragma unroll
    for (int q = 0; q < kVectors; ++q) {
      uint4 a;
      a.x = prefix;
      a.y = a.x + x[4 * q];
      a.z = a.y + x[4 * q + 1];
      a.w = a.z + x[4 * q + 2];
      prefix = a.w + x[4 * q + 3];
      v4[q] = a;
    }
  }
  __syncthreads();  // scanned values visible
}

}  // namespace ch03::optimized
