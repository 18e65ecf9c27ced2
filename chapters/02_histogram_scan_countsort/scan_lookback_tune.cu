/**
 * @file scan_lookback_tune.cu
 * @brief The candidate configurations of `scan_lookback_tune.hpp`: the single-pass scan kernel
 *        instantiated for several tile shapes and backoffs.
 *
 * What each candidate isolates (all 32-bit elements; "resident" = tile bytes an SM holds while
 * its tiles wait for their prefix):
 * - r256x16w4-p32to512: the first version (tile of 4096 in registers, 5 blocks per SM:
 *   80 KiB resident, 128-tile window, pauses 32..512 ns).
 * - r128x32w4: 4096 in registers, 8 blocks per SM (64 registers; a 256-tile window would
 *   spill): 128 KiB resident.
 * - a128x32w8 (the chapter's, `lookback::Shape`): 4096 in shared memory, 12 blocks per SM:
 *   192 KiB resident.
 * - a128x32w4: the same with a 128-tile window.
 * - a256x32w8: tiles of 8192 in shared memory, 6 blocks per SM: 192 KiB resident in half as
 *   many tiles (half the look-backs and tile-counter atomics per byte).
 * - a128x32w8 with other backoffs: no pauses, the first version's, CUB-like.
 * The chapter's configuration (`lookback::Shape`, `lookback::kBackoff`) comes first, whatever it
 * is; an alternative that equals it is listed once.
 */
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_kernel.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_tune.hpp"
#include "common/cuda_check.hpp"

namespace ch02::lookback {

namespace {

template <class S>
std::size_t TunedTempBytes(std::size_t n) {
  return ScratchBytes(n, S::kTile);
}

template <class S, unsigned kDelayNs, unsigned kFirstPauseNs, unsigned kMaxPauseNs>
void TunedScan(const std::uint32_t* in, std::uint32_t* out, std::size_t n, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("lookback::TunedScan", n, d_temp, temp_bytes, TunedTempBytes<S>(n));
  if (n == 0) return;
  LaunchLookbackScan<S>(in, out, n, d_temp, Backoff{kDelayNs, kFirstPauseNs, kMaxPauseNs}, stream);
}

template <class S>
int ResidentBlocks() {
  const void* kernel = reinterpret_cast<const void*>(DecoupledLookbackScanKernel<S, true>);
  PreferSharedMemory<S, true>();  // as every launch does, so the query sees the same carveout
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, S::kThreads, 0));
  return blocks;
}

template <class S>
std::string Describe() {
  const int blocks = ResidentBlocks<S>();
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(
      &attr, reinterpret_cast<const void*>(DecoupledLookbackScanKernel<S, true>)));
  return std::to_string(attr.numRegs) + " regs, " + std::to_string(attr.sharedSizeBytes) +
         " B smem, " + std::to_string(blocks) + " blocks/SM, " +
         std::to_string(blocks * S::kTile * 4 / 1024) + " KiB resident/SM, tile " +
         std::to_string(S::kTile);
}

// "<r|a><threads>x<items>w<groups>-<backoff>", as scan_lookback_tune.hpp describes.
template <class S, unsigned kDelayNs, unsigned kFirstPauseNs, unsigned kMaxPauseNs>
std::string Name() {
  std::string backoff;
  if (kDelayNs == 0 && kFirstPauseNs == 0 && kMaxPauseNs == 0) {
    backoff = "spin";
  } else {
    if (kDelayNs > 0) backoff = "d" + std::to_string(kDelayNs);
    backoff += "p" + std::to_string(kFirstPauseNs);
    if (kMaxPauseNs != kFirstPauseNs) backoff += "to" + std::to_string(kMaxPauseNs);
  }
  return std::string(S::kInShared ? "a" : "r") + std::to_string(S::kThreads) + "x" +
         std::to_string(S::kItems) + "w" + std::to_string(S::kWindowGroups) + "-" + backoff;
}

template <class S, unsigned kDelayNs, unsigned kFirstPauseNs, unsigned kMaxPauseNs>
TuneEntry Entry() {
  return {Name<S, kDelayNs, kFirstPauseNs, kMaxPauseNs>(),
          S::kTile,
          TunedScan<S, kDelayNs, kFirstPauseNs, kMaxPauseNs>,
          TunedTempBytes<S>,
          S::kMinBlocksPerSm,
          ResidentBlocks<S>,
          Describe<S>};
}

// The alternatives to the chapter's configuration (see the file comment).
using R256x16w4 = TileShape<256, 16, false, 5, 4>;
using R128x32w4 = TileShape<128, 32, false, 8, 4>;
using A128x32w4 = TileShape<128, 32, true, 12, 4>;
using A256x32w8 = TileShape<256, 32, true, 6, 8>;
using A128x32w8 = TileShape<128, 32, true, 12, 8>;

}  // namespace

const std::vector<TuneEntry>& TuneEntries() {
  static const std::vector<TuneEntry> entries = [] {
    // The chapter's own configuration first, whatever scan_lookback.cuh makes it.
    std::vector<TuneEntry> all = {
        Entry<Shape, kBackoff.first_poll_delay_ns, kBackoff.first_pause_ns,
              kBackoff.max_pause_ns>(),
        Entry<R256x16w4, 0, 32, 512>(),
        Entry<R128x32w4, 0, 32, 256>(),
        Entry<A128x32w4, 0, 32, 256>(),
        Entry<A256x32w8, 0, 32, 256>(),
        Entry<A128x32w8, 0, 32, 256>(),
        Entry<A128x32w8, 0, 0, 0>(),
        Entry<A128x32w8, 0, 32, 512>(),
        Entry<A128x32w8, 1200, 600, 600>(),
    };
    // An alternative equal to the chapter's configuration is the same kernel: listed once.
    std::vector<TuneEntry> unique;
    for (const TuneEntry& e : all) {
      bool seen = false;
      for (const TuneEntry& u : unique) seen = seen || u.name == e.name;
      if (!seen) unique.push_back(e);
    }
    return unique;
  }();
  return entries;
}

}  // namespace ch02::lookback
