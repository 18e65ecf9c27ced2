/**
 * @file scan_lookback_kernel.cuh
 * @brief Chapter 02, final scan stage: single-pass exclusive scan with decoupled look-back
 *        (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back",
 *        NVIDIA technical report NVR-2016-002), as a kernel template over `TileShape` and its
 *        launcher. `scan_lookback.cu` instantiates it for `ch02::optimized::ExclusiveScan` and
 *        its two contrasts.
 *
 * Changes relative to the Blelloch scan (scan_blelloch.cu):
 * 1. One pass over memory instead of three: every element is read once and written once. A
 *    tile learns the sum of everything before it from its predecessors' status words (see
 *    scan_lookback.cuh) instead of from a second kernel over the tile totals.
 * 2. Tiles are numbered by an atomic counter in the order blocks start, not by blockIdx: a tile
 *    waits only for tiles that started before it and are therefore running, so the scan cannot
 *    deadlock however many blocks are resident.
 * 3. Look-back by one warp over 32 x kWindowGroups predecessors per round trip: a ballot finds
 *    the nearest one that holds an inclusive prefix, a shuffle sum adds the aggregates in front
 *    of it; a window of aggregates only is passed without waiting.
 * 4. 32 elements per thread, copied by `cp.async` straight into a swizzled shared buffer
 *    (16-byte coalesced, conflict-free): the tile waits for its prefix in shared memory, not in
 *    registers, so 40 registers per thread do and 6 tiles of 8192 elements fit per SM
 *    (`lookback::Shape`; `RegisterShape` keeps the tile in registers instead). The thread
 *    totals, a warp shuffle scan and one block-level combine give the tile's own exclusive
 *    sums, written back to shared memory while warp 0 looks back; the tile's prefix is added on
 *    the way out.
 */
#pragma once

#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>

#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_tile_io.cuh"
#include "chapters/02_histogram_scan_countsort/warp_scan.cuh"
#include "common/cuda_check.hpp"
#include "common/launch_bounds.cuh"

namespace ch02::lookback {

// snippet-begin: ch02-status-io
/// A tile's status word (see scan_lookback.cuh).
using StatusWord = unsigned long long;
/// Device-scope atomic view of a status word.
using StatusRef = cuda::atomic_ref<StatusWord, cuda::thread_scope_device>;

/// Reads a status word with a relaxed device-scope load: it goes to L2 (never a stale L1 line)
/// and is single-copy atomic for an aligned 64-bit word. Nothing else is published with a status
/// word, so nothing needs a stronger order than the word itself.
/// @param[in] word the status word
/// @return its value
__device__ __forceinline__ StatusWord LoadStatus(StatusWord* word) {
  return StatusRef(*word).load(cuda::std::memory_order_relaxed);
}
/// Publishes a status word with one relaxed device-scope 64-bit store (flag and value at once).
/// @param[out] word the status word
/// @param[in] value flag << 32 | value
__device__ __forceinline__ void StoreStatus(StatusWord* word, StatusWord value) {
  StatusRef(*word).store(value, cuda::std::memory_order_relaxed);
}
// snippet-end: ch02-status-io

/**
 * @brief Sum of every element before tile @p tile, read from its predecessors' status words by
 *        one warp (all 32 lanes call it).
 *
 * One look-back step reads `kWindowGroups` x 32 predecessors at once: lane l of group g reads
 * the status of tile window - 32 g - l, the window starting at tile - 1 (tiles before tile 0
 * count as an inclusive prefix of 0). The groups are then taken nearest first: in each, a
 * ballot finds the nearest lane holding an inclusive prefix, and the lanes up to it must all
 * have published. Their values (aggregates, then the prefix) are added; a prefix ends the
 * look-back, a group of 32 aggregates moves on to the next group. A group with a lane still
 * unpublished stops the step: the groups before it are kept, the window moves past them, and
 * the warp reads again after the pause @p backoff prescribes. A step whose groups all hold
 * aggregates moves the window back by all of them and reads again at once, so a tile never
 * waits for a prefix to appear inside a fixed window.
 * @tparam kWindowGroups groups of 32 predecessors read per step (one L2 round trip)
 * @param[in] status the tiles' status words
 * @param[in] tile this tile's index (> 0)
 * @param[in] lane threadIdx.x mod 32
 * @param[in] backoff pauses between reads
 * @return the exclusive prefix of the tile (the same in every lane)
 */
template <int kWindowGroups>
__device__ std::uint32_t LookBack(StatusWord* status, std::uint32_t tile, int lane,
                                  const Backoff& backoff) {
  if (backoff.first_poll_delay_ns > 0) __nanosleep(backoff.first_poll_delay_ns);
  // snippet-begin: ch02-lookback
  std::uint32_t prefix = 0;
  long long window = static_cast<long long>(tile) - 1;
  unsigned pause_ns = backoff.first_pause_ns;
  while (true) {
    std::uint64_t word[kWindowGroups];
#pragma unroll
    for (int g = 0; g < kWindowGroups; ++g) {
      // All loads of the step are issued before any is used: one round trip for the window.
      const long long index = window - kWarpSize * g - lane;
      word[g] = index >= 0 ? LoadStatus(status + index) : PackStatus(kStatusPrefix, 0);
    }
    std::uint32_t part = 0;
    int consumed = 0;
    bool found = false;
#pragma unroll
    for (int g = 0; g < kWindowGroups; ++g) {
      const std::uint32_t prefix_lanes =
          __ballot_sync(kFullWarp, StatusFlag(word[g]) == kStatusPrefix);
      const std::uint32_t invalid = __ballot_sync(kFullWarp, StatusFlag(word[g]) == kStatusInvalid);
      const std::uint32_t needed = LanesThroughFirstPrefix(prefix_lanes);
      // The ballots are the same in every lane, so every lane leaves the loop together.
      if ((invalid & needed) != 0) break;
      if ((needed >> lane) & 1u) part += StatusValue(word[g]);
      consumed = g + 1;
      if (prefix_lanes != 0) {
        found = true;
        break;
      }
    }
    prefix += WarpSum(part);
    if (found) return prefix;
    window -= static_cast<long long>(kWarpSize) * consumed;
    if (consumed < kWindowGroups) {
      // A predecessor is still loading its tile: read again, less often the longer it takes.
      if (pause_ns > 0) __nanosleep(pause_ns);
      pause_ns = pause_ns < backoff.max_pause_ns / 2 ? 2 * pause_ns : backoff.max_pause_ns;
    }
  }
  // snippet-end: ch02-lookback
}

/**
 * @brief Single-pass exclusive scan: each block scans one tile of `S::kTile` 32-bit elements
 *        and finds the tile's offset by decoupled look-back.
 *
 * Thread 0 takes the tile index from @p tile_counter. Each warp copies its segment of
 * `S::kWarpItems` elements (striped, coalesced) into its own swizzled shared buffer, so that
 * lane l then reads elements kItems l .. kItems l + kItems - 1 of the segment. Each thread
 * adds up its elements; a warp shuffle scan of the 32 thread totals and one barrier over the
 * warp totals give every thread its offset inside the tile and the tile total. Warp 0
 * publishes the total (aggregate; tile 0 publishes it as its inclusive prefix directly),
 * looks back for the tile's prefix and publishes prefix + total. Meanwhile every other warp
 * writes the exclusive sums of its elements inside the tile back to its buffer (warp 0 does so
 * after publishing); a second barrier hands the prefix to all threads, which add it while
 * storing their segment, striped and coalesced. A tile held in registers (`S::kInShared`
 * false) scans its elements there instead of re-reading them.
 * Reads 4n bytes, writes 4n bytes, plus 16 bytes of status traffic per tile and look-back step.
 * @tparam S the `TileShape` (threads, elements per thread, where the tile waits, window)
 * @tparam kVectorized 16-byte global accesses (in and out have the same address mod 16);
 *         otherwise 4-byte accesses with lead = 0
 * @par Launch configuration
 * `Tiles(n, lead, S::kTile)` blocks of `S::kThreads` threads; 4 x S::kTile bytes of static
 * shared memory per block for the tile, plus under 48 for the warp totals, tile index and prefix.
 * @pre @p tile_counter and the first `Tiles(n, lead, S::kTile)` status words are zero (one
 *      memset on the same stream); in - lead (as an address) is 16-byte aligned when
 *      kVectorized; in and out are equal or do not overlap (a warp stores only the segment it
 *      has loaded).
 * @param[in] in input words (uint32 or int32 bits)
 * @param[out] out exclusive prefix sums, modulo 2^32; may equal @p in
 * @param[in] n number of elements
 * @param[in] lead virtual elements before in[0] (0..3; see scan_tile_io.cuh)
 * @param[in,out] status one status word per tile
 * @param[in,out] tile_counter the next tile index to hand out
 * @param[in] backoff how the look-back warp waits for predecessors
 * @param[in] count with kDeviceCount, the number of elements (at most @p n), read here: tiles
 *            past its end return at once
 * @tparam kDeviceCount the element count is `min(n, *count)`, read on the device
 */
template <class S, bool kVectorized, bool kDeviceCount = false>
__global__ void __launch_bounds__(S::kThreads,
                                  staged::FitBlocksPerSm(S::kThreads, S::kMinBlocksPerSm))
    DecoupledLookbackScanKernel(const std::uint32_t* in, std::uint32_t* out, std::size_t n,
                                unsigned lead, StatusWord* status, unsigned* tile_counter,
                                Backoff backoff, const std::uint32_t* count = nullptr) {
  constexpr int kV = S::kVectors;
  __shared__ uint4 s_units[S::kWarps][S::kWarpVectors];
  // 16-byte aligned and a whole number of 16-byte blocks long: see the second barrier.
  __shared__ alignas(16) std::uint32_t s_warp_totals[S::kWarps];
  static_assert(sizeof(s_warp_totals) % 16 == 0, "s_warp_totals fills whole 16-byte blocks");
  __shared__ std::uint32_t s_tile;
  __shared__ std::uint32_t s_prefix;

  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  // snippet-begin: ch02-tile-index
  if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
  // Every thread needs the tile index before it loads.
  __syncthreads();
  const std::uint32_t tile = s_tile;
  // snippet-end: ch02-tile-index
  if constexpr (kDeviceCount) {
    // Tiles are drawn in order, so every tile a kept tile looks back at is kept too.
    if (*count < n) n = *count;
    if (static_cast<std::size_t>(tile) * S::kTile >= n + lead) return;  // uniform per block
  }

  const std::size_t end = n + lead;
  const std::size_t base = static_cast<std::size_t>(tile) * S::kTile + warp * S::kWarpItems;
  // A segment wholly inside [lead, end) needs no bounds checks (all but the first and last).
  const bool interior = base >= lead && base + S::kWarpItems <= end;
  uint4* units = s_units[warp];
  if (interior) {
    LoadInteriorSegment<S, kVectorized>(in, base, lead, units, lane);
  } else {
    LoadEdgeSegment<S, kVectorized>(in, base, lead, end, units, lane);
  }
  // The blocked reads below take vectors other lanes of this warp stored (or copied).
  __syncwarp();

  // snippet-begin: ch02-tile-waits
  // The thread's elements are kV consecutive vectors (blocked order) of the buffer.
  [[maybe_unused]] std::uint32_t x[S::kInShared ? 1 : S::kItems];
  std::uint32_t thread_total = 0;
  if constexpr (S::kInShared) {
    // Only the total now; the elements stay in shared memory while the tile waits.
#pragma unroll
    for (int k = 0; k < kV; ++k) {
      const uint4 v = units[SwizzledVector<kV>(lane * kV + k)];
      thread_total += v.x + v.y + v.z + v.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kV; ++k) {
      const uint4 v = units[SwizzledVector<kV>(lane * kV + k)];
      x[4 * k] = v.x;
      x[4 * k + 1] = v.y;
      x[4 * k + 2] = v.z;
      x[4 * k + 3] = v.w;
    }
    // Inclusive scan of the thread's elements in registers.
#pragma unroll
    for (int k = 1; k < S::kItems; ++k) x[k] += x[k - 1];
    thread_total = x[S::kItems - 1];
  }
  // snippet-end: ch02-tile-waits
  const std::uint32_t warp_inclusive = WarpInclusiveSum(thread_total, lane);
  if (lane == kWarpSize - 1) s_warp_totals[warp] = warp_inclusive;
  // Every warp total must be written before any thread adds them up. ptxas merges the 4-byte
  // reads below into 16-byte loads from 16-byte aligned addresses, which must cover nothing that
  // another thread writes before the next barrier (s_prefix is written then): s_warp_totals
  // owns its 16-byte blocks.
  __syncthreads();
  std::uint32_t warp_offset = 0;
  std::uint32_t tile_total = 0;
#pragma unroll
  for (int w = 0; w < S::kWarps; ++w) {
    const std::uint32_t t = s_warp_totals[w];
    if (w < warp) warp_offset += t;
    tile_total += t;
  }

  // snippet-begin: ch02-publish
  if (warp == 0) {
    std::uint32_t prefix = 0;
    if (tile == 0) {
      if (lane == 0) StoreStatus(status, PackStatus(kStatusPrefix, tile_total));
    } else {
      // Publish the aggregate first: successors can use it before this tile knows its prefix.
      if (lane == 0) StoreStatus(status + tile, PackStatus(kStatusAggregate, tile_total));
      prefix = LookBack<S::kWindowGroups>(status, tile, lane, backoff);
      if (lane == 0) StoreStatus(status + tile, PackStatus(kStatusPrefix, prefix + tile_total));
    }
    if (lane == 0) s_prefix = prefix;
  }
  // snippet-end: ch02-publish

  // Exclusive sums inside the tile, back into the thread's own vectors (no other lane reads or
  // writes them until the barrier below): the other warps do this while warp 0 looks back.
  std::uint32_t run = warp_offset + (warp_inclusive - thread_total);
#pragma unroll
  for (int k = 0; k < kV; ++k) {
    uint4& slot = units[SwizzledVector<kV>(lane * kV + k)];
    if constexpr (S::kInShared) {
      const uint4 v = slot;
      slot = make_uint4(run, run + v.x, run + v.x + v.y, run + v.x + v.y + v.z);
      run += v.x + v.y + v.z + v.w;
    } else {
      // x holds inclusive sums: element i's exclusive sum is x[i - 1].
      const std::uint32_t before = k == 0 ? 0u : x[k > 0 ? 4 * k - 1 : 0];
      slot = make_uint4(run + before, run + x[4 * k], run + x[4 * k + 1], run + x[4 * k + 2]);
    }
  }
  // snippet-begin: ch02-tile-store
  // The tile's prefix must be in shared memory before any thread adds it, and the striped reads
  // below take vectors other lanes of this warp wrote.
  __syncthreads();
  StoreSegment<S, kVectorized>(out, base, lead, end, interior, units, lane, s_prefix);
  // snippet-end: ch02-tile-store
}

/**
 * @brief Asks the driver for the largest shared-memory carveout (228 KiB per SM on sm_90) for
 *        a kernel whose tiles wait in shared memory, so that `S::kMinBlocksPerSm` blocks fit;
 *        a hint the occupancy query and every launch then see. Idempotent; capture-safe (it
 *        queues nothing).
 * @tparam S the `TileShape`
 * @tparam kVectorized which of the two kernels of the shape
 */
template <class S, bool kVectorized, bool kDeviceCount = false>
void PreferSharedMemory() {
  if constexpr (S::kInShared) {
    CUDA_CHECK(cudaFuncSetAttribute(DecoupledLookbackScanKernel<S, kVectorized, kDeviceCount>,
                                    cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
  }
}

/**
 * @brief Queues one single-pass scan of @p n 32-bit words with tile shape @p S: a memset of the
 *        tile counter and status words, then `DecoupledLookbackScanKernel`.
 *
 * The 16-byte path needs in and out to share their offset inside a 16-byte block; the lead
 * (virtual elements in front of in[0]) then makes in - lead aligned. Otherwise 4-byte accesses.
 * @tparam S the `TileShape`
 * @param[in] in device input words
 * @param[out] out device output words; equal to @p in or not overlapping it
 * @param[in] n number of elements (> 0)
 * @param[in,out] d_temp at least `ScratchBytes(n, S::kTile)` bytes
 * @param[in] backoff how the look-back warp waits
 * @param[in] stream the stream the work is queued on
 * @param[in] count when not null, a device pointer to the number of elements to scan (at most
 *            @p n), read by the kernel (`ExclusiveScanDeviceCount`)
 */
template <class S>
void LaunchLookbackScan(const std::uint32_t* in, std::uint32_t* out, std::size_t n, void* d_temp,
                        const Backoff& backoff, cudaStream_t stream,
                        const std::uint32_t* count = nullptr) {
  const auto in_address = reinterpret_cast<std::uintptr_t>(in);
  const bool vectorized = in_address % 16 == reinterpret_cast<std::uintptr_t>(out) % 16;
  const unsigned lead = vectorized ? static_cast<unsigned>(in_address % 16 / 4) : 0;
  const std::size_t tiles = Tiles(n, lead, S::kTile);
  auto* counter = static_cast<unsigned*>(d_temp);
  auto* status = reinterpret_cast<StatusWord*>(static_cast<unsigned char*>(d_temp) + kCounterBytes);
  // Counter and status words start from zero on every call, ordered on the stream before the
  // scan: a call shares no state with any other call that has its own scratch.
  CUDA_CHECK(cudaMemsetAsync(d_temp, 0, kCounterBytes + tiles * sizeof(StatusWord), stream));
  const auto grid = static_cast<unsigned>(tiles);
  const auto launch = [&](auto kernel) {
    kernel<<<grid, S::kThreads, 0, stream>>>(in, out, n, lead, status, counter, backoff, count);
  };
  if (count != nullptr) {
    if (vectorized) {
      PreferSharedMemory<S, true, true>();
      launch(DecoupledLookbackScanKernel<S, true, true>);
    } else {
      PreferSharedMemory<S, false, true>();
      launch(DecoupledLookbackScanKernel<S, false, true>);
    }
  } else if (vectorized) {
    PreferSharedMemory<S, true>();
    launch(DecoupledLookbackScanKernel<S, true>);
  } else {
    PreferSharedMemory<S, false>();
    launch(DecoupledLookbackScanKernel<S, false>);
  }
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch02::lookback
