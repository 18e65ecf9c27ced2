/**
 * @file scan_lookback.cu
 * @brief `ch02::optimized::ExclusiveScan`: the single-pass scan with decoupled look-back
 *        (`scan_lookback_kernel.cuh`) in the chapter's tile shape, `lookback::Shape`.
 *
 * Changes relative to the Blelloch scan (scan_blelloch.cu): see scan_lookback_kernel.cuh.
 */
#include <cuda_runtime.h>

#include <cstdint>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_kernel.cuh"

namespace ch02::optimized {

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  static_assert(sizeof(T) == sizeof(std::uint32_t), "the scan works on 32-bit words");
  return lookback::ScratchBytes(n, lookback::Shape::kTile);
}

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  CheckArguments("optimized::ExclusiveScan", n, d_temp, temp_bytes, ExclusiveScanTempBytes<T>(n));
  if (n == 0) return;
  // int32 and uint32 share one kernel: the same bits under wrapping addition.
  lookback::LaunchLookbackScan<lookback::Shape>(reinterpret_cast<const std::uint32_t*>(d_in),
                                                reinterpret_cast<std::uint32_t*>(d_out), n, d_temp,
                                                lookback::kBackoff, stream);
}

/// @cond INSTANTIATIONS
template std::size_t ExclusiveScanTempBytes<std::uint32_t>(std::size_t);
template std::size_t ExclusiveScanTempBytes<std::int32_t>(std::size_t);
template void ExclusiveScan<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t, void*,
                                           std::size_t, cudaStream_t);
template void ExclusiveScan<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t, void*,
                                          std::size_t, cudaStream_t);
/// @endcond

}  // namespace ch02::optimized
