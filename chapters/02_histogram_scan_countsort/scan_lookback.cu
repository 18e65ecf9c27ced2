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
#include <stdexcept>
#include <string>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_kernel.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_variants.hpp"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

namespace ch02::lookback {

namespace {

/// Blocks of shape @p S's 16-byte kernel resident per SM as the launchers plan (the occupancy
/// API, capped by a device profile's limits), after the carveout hint every launch gives.
template <class S>
int BlocksPerSm() {
  const void* kernel = reinterpret_cast<const void*>(DecoupledLookbackScanKernel<S, true>);
  PreferSharedMemory<S, true>();  // as every launch does, so the query sees the same carveout
  return static_cast<int>(staged::ResidentBlocks(kernel, S::kThreads, 0) /
                          static_cast<unsigned>(staged::SmCount()));
}

}  // namespace

ScanShape ChosenShape() {
  return ChooseShape(BlocksPerSm<Shape>(), BlocksPerSm<RegisterShape>(),
                     BlocksPerSm<Tile4096Shape>());
}

}  // namespace ch02::lookback

namespace ch02::optimized {

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  static_assert(sizeof(T) == sizeof(std::uint32_t), "the scan works on 32-bit words");
  // Enough for whichever shape the GPU gets: the smallest tile has the most status words.
  return lookback::ScratchBytes(n, lookback::Tile4096Shape::kTile);
}

namespace {
/// The single-pass scan in the shape `lookback::ChosenShape` picks for this GPU.
void LaunchChosenShape(const std::uint32_t* in, std::uint32_t* out, std::size_t n, void* d_temp,
                       cudaStream_t stream, const std::uint32_t* count) {
  using lookback::kBackoff;
  switch (lookback::ChosenShape()) {
    case lookback::ScanShape::kShared:
      lookback::LaunchLookbackScan<lookback::Shape>(in, out, n, d_temp, kBackoff, stream, count);
      return;
    case lookback::ScanShape::kRegisters:
      lookback::LaunchLookbackScan<lookback::RegisterShape>(in, out, n, d_temp, kBackoff, stream,
                                                            count);
      return;
    case lookback::ScanShape::kSmallTiles:
      lookback::LaunchLookbackScan<lookback::Tile4096Shape>(in, out, n, d_temp, kBackoff, stream,
                                                            count);
      return;
  }
}
}  // namespace

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  CheckArguments("optimized::ExclusiveScan", n, d_temp, temp_bytes, ExclusiveScanTempBytes<T>(n));
  if (n == 0) return;
  // int32 and uint32 share one kernel: the same bits under wrapping addition.
  LaunchChosenShape(reinterpret_cast<const std::uint32_t*>(d_in),
                    reinterpret_cast<std::uint32_t*>(d_out), n, d_temp, stream, nullptr);
}

template <typename T>
void ExclusiveScanDeviceCount(const T* d_in, T* d_out, std::size_t max_n,
                              const std::uint32_t* d_count, void* d_temp, std::size_t temp_bytes,
                              cudaStream_t stream) {
  CheckArguments("optimized::ExclusiveScanDeviceCount", max_n, d_temp, temp_bytes,
                 ExclusiveScanTempBytes<T>(max_n));
  if (d_count == nullptr) {
    throw std::invalid_argument("optimized::ExclusiveScanDeviceCount: no count");
  }
  if (max_n == 0) return;
  LaunchChosenShape(reinterpret_cast<const std::uint32_t*>(d_in),
                    reinterpret_cast<std::uint32_t*>(d_out), max_n, d_temp, stream, d_count);
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
template void ExclusiveScanDeviceCount<std::uint32_t>(const std::uint32_t*, std::uint32_t*,
                                                      std::size_t, const std::uint32_t*, void*,
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
std::string Describe() {
  const int blocks = BlocksPerSm<S>();
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
  v.resident_blocks = BlocksPerSm<S>;
  v.describe = Describe<S>;
  return v;
}

/// The row of `ExclusiveScan`: the shape `ChosenShape` picks, described.
std::string DescribeChosen() {
  switch (ChosenShape()) {
    case ScanShape::kShared:
      return Describe<Shape>();
    case ScanShape::kRegisters:
      return "the shape of optimized:scan-registers: " + Describe<RegisterShape>();
    case ScanShape::kSmallTiles:
      return "the shape of optimized:scan-tile4096: " + Describe<Tile4096Shape>();
  }
  return "";
}

/// Blocks per SM of the shape `ChosenShape` picks.
int BlocksPerSmChosen() {
  switch (ChosenShape()) {
    case ScanShape::kShared:
      return BlocksPerSm<Shape>();
    case ScanShape::kRegisters:
      return BlocksPerSm<RegisterShape>();
    case ScanShape::kSmallTiles:
      return BlocksPerSm<Tile4096Shape>();
  }
  return 0;
}

/// The row of `ExclusiveScan` (`optimized:scan`): described by the shape it runs.
Variant ChapterVariant() {
  Variant v = MakeVariant<Shape>("optimized:scan", "", optimized::ExclusiveScan<std::uint32_t>,
                                 optimized::ExclusiveScanTempBytes<std::uint32_t>);
  v.resident_blocks = BlocksPerSmChosen;
  v.describe = DescribeChosen;
  return v;
}

}  // namespace

int KernelPtxVersion() {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(
      &attr, reinterpret_cast<const void*>(DecoupledLookbackScanKernel<Shape, true>)));
  return attr.ptxVersion;
}

const std::vector<Variant>& Variants() {
  static const std::vector<Variant> variants = {
      MakeVariant<RegisterShape>("optimized:scan-registers", "the tile waits in registers",
                                 ContrastScan<RegisterShape>, ContrastTempBytes<RegisterShape>),
      MakeVariant<Tile4096Shape>("optimized:scan-tile4096", "tiles of 4096 elements",
                                 ContrastScan<Tile4096Shape>, ContrastTempBytes<Tile4096Shape>),
      ChapterVariant(),
  };
  return variants;
}

}  // namespace ch02::lookback
