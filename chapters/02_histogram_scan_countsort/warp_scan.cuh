/**
 * @file warp_scan.cuh
 * @brief Warp-wide sum and inclusive prefix sum of 32-bit words by register shuffles: the
 *        building block of the single-pass scan (`scan_lookback.cu`) and of the run writer's
 *        scan of the 256 counts (`optimized.cu`).
 *
 * Five `__shfl_*_sync` steps replace five shared-memory levels with their barriers: each lane
 * reads a register of another lane of its warp directly. Arithmetic is on `std::uint32_t`, so
 * sums wrap modulo 2^32 (the same bits as two's-complement `int32_t` addition).
 */
#pragma once

#include <cstdint>

namespace ch02 {

/// Lanes per warp on every GPU this tutorial targets.
inline constexpr int kWarpSize = 32;
/// Shuffle mask naming all 32 lanes: every helper here must be called by the whole warp.
inline constexpr unsigned kFullWarp = 0xFFFFFFFFu;

/// Inclusive prefix sum across the warp (Hillis-Steele over 5 shuffle steps).
/// @param[in] x this lane's value
/// @param[in] lane threadIdx.x mod 32
/// @return x of lanes 0..lane added together (modulo 2^32)
__device__ __forceinline__ std::uint32_t WarpInclusiveSum(std::uint32_t x, int lane) {
#pragma unroll
  for (int d = 1; d < kWarpSize; d *= 2) {
    const std::uint32_t up = __shfl_up_sync(kFullWarp, x, d);
    // Lanes below d have no partner d lanes down; their partial sum is already complete.
    if (lane >= d) x += up;
  }
  return x;
}

/// Sum across the warp by a butterfly: every lane receives the total.
/// @param[in] x this lane's value
/// @return the sum of x over all 32 lanes (modulo 2^32)
__device__ __forceinline__ std::uint32_t WarpSum(std::uint32_t x) {
#pragma unroll
  for (int d = kWarpSize / 2; d > 0; d /= 2) x += __shfl_xor_sync(kFullWarp, x, d);
  return x;
}

}  // namespace ch02
