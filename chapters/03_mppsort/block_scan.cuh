/**
 * @file block_scan.cuh
 * @brief Block-wide exclusive scans of the optimized mppSort: of one value per thread (the
 *        planner's chunk, bucket and matrix counts) and of the partition's bucket counters (four
 *        per thread). Both are a warp shuffle scan, then warp 0's scan of the warp totals.
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

/// Exclusive scan of v[0, n) in place by the block: thread t scans the four values v[4t, 4t + 4)
/// (one 16-byte access: no bank conflicts), `BlockExclusiveSum` combines the threads. Ends with
/// a barrier.
/// @pre v is 16-byte aligned with room for 4 * blockDim.x values; n <= 4 * blockDim.x.
/// @param[in,out] v values in shared memory (entries from n on are neither used nor kept)
/// @param[in] n count
/// @param[out] scratch kBlockScanScratch words of shared memory
__device__ inline void BlockExclusiveScan4(std::uint32_t* v, std::uint32_t n,
                                           std::uint32_t* scratch) {
  const std::uint32_t t = threadIdx.x;
  auto* v4 = reinterpret_cast<uint4*>(v);
  uint4 x = make_uint4(0, 0, 0, 0);
  if (4 * t < n) x = v4[t];
  // Values past n are stale (an earlier chunk's, or never written): they count as 0.
  if (4 * t + 1 >= n) x.y = 0;
  if (4 * t + 2 >= n) x.z = 0;
  if (4 * t + 3 >= n) x.w = 0;
  std::uint32_t total;
  const std::uint32_t prefix =
      BlockExclusiveSum<std::uint32_t>(x.x + x.y + x.z + x.w, total, scratch);
  if (4 * t < n) {
    v4[t] = make_uint4(prefix, prefix + x.x, prefix + x.x + x.y, prefix + x.x + x.y + x.z);
  }
  __syncthreads();  // scanned values visible
}

}  // namespace ch03::optimized
