/**
 * @file scan_lookback.cu
 * @brief `ch02::optimized::ExclusiveScan`: the single-pass scan with decoupled look-back
 *        (`scan_lookback_kernel.cuh`) in the chapter's tile shape, `lookback::Shape`; and the
 *        same kernel in the two contrasting shapes of `lookback::Variants()`.
 *
 * Changes relative to the Blelloch scan (scan_blelloch.cu): see scan_lookback_kernel.cuh.
 */
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_kernel.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_variants.hpp"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

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

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
template std::size_t ExclusiveScanTempBytes<std::uint32_t>(std::size_t);
template std::size_t ExclusiveScanTempBytes<std::int32_t>(std::size_t);
template void ExclusiveScan<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t, void*,
                                           std::size_t, cudaStream_t);
template void ExclusiveScan<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t, void*,
                                          std::size_t, cudaStream_t);
/// @endcond

}  // namespace ch02::optimized

namespace ch02::lookback {

namespace {

template <class S>
std::size_t ContrastTempBytes(std::size_t n) {
  return ScratchBytes(n, S::kTile);
}

// A contrast: the chapter's scan with shape S, same backoff.
template <class S>
void ContrastScan(const std::uint32_t* in, std::uint32_t* out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("lookback::ContrastScan", n, d_temp, temp_bytes, ContrastTempBytes<S>(n));
  if (n == 0) return;
  LaunchLookbackScan<S>(in, out, n, d_temp, kBackoff, stream);
}

template <class S>
int ResidentBlocks() {
  const void* kernel = reinterpret_cast<const void*>(DecoupledLookbackScanKernel<S, true>);
  PreferSharedMemory<S, true>();  // as every launch does, so the query sees the same carveout
  return staged::BlocksPerSm(kernel, S::kThreads, 0);
}

template <class S>
std::string Describe() {
  const int blocks = ResidentBlocks<S>();
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(
      &attr, reinterpret_cast<const void*>(DecoupledLookbackScanKernel<S, true>)));
  return std::to_string(attr.numRegs) + " regs, " + std::to_string(attr.sharedSizeBytes) +
         " B smem, " + std::to_string(blocks) + " blocks/SM, " +
         std::to_string(blocks * S::kTile * 4 / 1024) + " KiB of tiles/SM, tile " +
         std::to_string(S::kTile) + (S::kInShared ? " in shared memory" : " in registers");
}

template <class S>
Variant MakeVariant(const char* row, const char* change,
                    void (*scan)(const std::uint32_t*, std::uint32_t*, std::size_t, void*,
                                 std::size_t, cudaStream_t),
                    std::size_t (*temp_bytes)(std::size_t)) {
  Variant v{row, change, S::kTile, scan, temp_bytes, S::kMinBlocksPerSm, nullptr, nullptr};
  v.resident_blocks = ResidentBlocks<S>;
  v.describe = Describe<S>;
  return v;
}

}  // namespace

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> variants = {
      MakeVariant<RegisterShape>("optimized:scan-registers", "the tile waits in registers",
                                 ContrastScan<RegisterShape>, ContrastTempBytes<RegisterShape>),
      MakeVariant<Tile4096Shape>("optimized:scan-tile4096", "tiles of 4096 elements",
                                 ContrastScan<Tile4096Shape>, ContrastTempBytes<Tile4096Shape>),
      MakeVariant<Shape>("optimized:scan", "", optimized::ExclusiveScan<std::uint32_t>,
                         optimized::ExclusiveScanTempBytes<std::uint32_t>),
  };
  return variants;
}

}  // namespace ch02::lookback
