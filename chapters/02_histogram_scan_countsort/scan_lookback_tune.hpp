/**
 * @file scan_lookback_tune.hpp
 * @brief Candidate configurations of the single-pass scan (tile shape, look-back window,
 *        backoff), each a launcher with the chapter's scan signature, so that
 *        `ch02_optimized --scan-tune` times them side by side in one process and the tests
 *        check every one against the CPU. `ch02::optimized::ExclusiveScan` uses one of them
 *        (`lookback::Shape`, `lookback::kBackoff`).
 *
 * Names read `<r|a><threads>x<items>w<groups>-<backoff>`: r = tile waits in registers, a = in
 * shared memory (copied by cp.async); w = groups of 32 predecessors per look-back step;
 * backoff `p<first>to<max>` (ns, first read at once), `spin` (no pauses) or `d<delay>p<pause>`
 * (a delay before the first read, then a fixed pause, as CUB's tuning for sm_90 does).
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ch02::lookback {

/// One candidate configuration of the single-pass scan.
struct TuneEntry {
  std::string name;  ///< e.g. `a128x32w8-p32to256`
  std::size_t tile;  ///< elements per tile
  /// Exclusive scan of 32-bit words with the chapter's scan signature (in place allowed).
  void (*scan)(const std::uint32_t*, std::uint32_t*, std::size_t, void*, std::size_t, cudaStream_t);
  std::size_t (*temp_bytes)(std::size_t);  ///< scratch bytes `scan` needs for n elements
  int min_blocks_per_sm;                   ///< blocks per SM the kernel is compiled for
  /// Blocks of the (16-byte path) kernel resident per SM on the current device.
  int (*resident_blocks)();
  /// Registers per thread, shared memory per block and resident blocks per SM of the kernel on
  /// the current device, as one line of text.
  std::string (*describe)();
};

/// Every candidate, the chapter's own configuration (`lookback::Shape`, `lookback::kBackoff`)
/// first.
const std::vector<TuneEntry>& TuneEntries();

}  // namespace ch02::lookback
