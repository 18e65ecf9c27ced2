/**
 * @file scan_lookback_variants.hpp
 * @brief The chapter's single-pass scan and its two contrasts, each one change away from it
 *        (`lookback::RegisterShape`: the tile waits in registers; `lookback::Tile4096Shape`:
 *        tiles half as large), as launchers with the chapter's scan signature, so that
 *        `ch02_optimized --scan` times them side by side in one process and the tests check
 *        each one against the CPU.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ch02::lookback {

/// One configuration of the single-pass scan, with what it needs to be timed and described.
struct Variant {
  std::string row;     ///< its report row, e.g. `optimized:scan-registers`
  std::string change;  ///< how it differs from the chapter's scan (empty for that one)
  std::size_t tile;    ///< elements per tile
  /// Exclusive scan of 32-bit words with the chapter's scan signature (in place allowed).
  void (*scan)(const std::uint32_t*, std::uint32_t*, std::size_t, void*, std::size_t, cudaStream_t);
  std::size_t (*temp_bytes)(std::size_t);  ///< scratch bytes `scan` needs for n elements
  int min_blocks_per_sm;                   ///< blocks per SM the kernel is compiled for
  /// Blocks of the (16-byte path) kernel resident per SM on the current device.
  int (*resident_blocks)();
  /// Registers per thread, shared memory per block, resident blocks and tile bytes per SM of
  /// the kernel on the current device, as one line of text.
  std::string (*describe)();
};

/// The contrasts (`RegisterShape`, then `Tile4096Shape`), then the chapter's own scan
/// (`ch02::optimized::ExclusiveScan`, row `optimized:scan`) last.
const std::vector<Variant>& Variants();

/// The virtual architecture (x 10) the scan kernels' code on this GPU was compiled from, e.g. 90,
/// or 75 in a `75-virtual` build, whose launch bounds ask for at most 1024 threads per SM.
int KernelPtxVersion();

}  // namespace ch02::lookback
