/**
 * @file scan_lookback.cu
 * @brief Chapter 02, final scan stage: single-pass exclusive scan with decoupled look-back
 *        (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back",
 *        NVIDIA technical report NVR-2016-002).
 *
 * Changes relative to the Blelloch scan (scan_blelloch.cu):
 * 1. One pass over memory instead of three: every element is read once and written once. A
 *    tile learns the sum of everything before it from its predecessors' status words (see
 *    scan_lookback.cuh) instead of from a second kernel over the tile totals.
 * 2. Tiles are numbered by an atomic counter in the order blocks start, not by blockIdx: a tile
 *    waits only for tiles that started before it and are therefore running, so the scan cannot
 *    deadlock however many blocks are resident.
 * 3. Look-back by one warp over 128 predecessors per round trip (4 per lane): a ballot finds the
 *    nearest one that holds an inclusive prefix, a shuffle sum adds the aggregates in front of
 *    it.
 * 4. 16 elements per thread in registers: 16-byte coalesced loads and stores, reordered through a
 *    swizzled shared buffer (conflict-free), a sequential scan of the thread's 16 elements, a
 *    warp shuffle scan and one block-level combine; 2 barriers per tile instead of 2 log2 1024.
 */
#include <cuda_runtime.h>
#include <cuda/atomic>

#include <cstdint>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/warp_scan.cuh"
#include "common/cuda_check.hpp"

namespace ch02::lookback {

/// Blocks per SM the kernel is compiled for (at most 51 registers per thread): enough loads
/// in flight per SM while some tiles wait for their tile index or their look-back.
constexpr int kMinBlocksPerSm = 5;
/// First pause of a warp polling a predecessor that has not published yet.
constexpr unsigned kFirstBackoffNs = 32;
/// Longest pause between two polls.
constexpr unsigned kMaxBackoffNs = 512;
/// Groups of 32 predecessors one look-back step reads (128 status words per round trip).
constexpr int kWindowGroups = 4;

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

/// The virtual elements v0 .. v0 + 3 (virtual = lead + index) as one vector: a 16-byte load when
/// all four exist, otherwise element by element with zeros outside [lead, end).
/// @param[in] in the input
/// @param[in] vin the input as 16-byte vectors of the virtual array (in - lead)
/// @param[in] v0 first virtual element, a multiple of 4
/// @param[in] lead virtual elements before in[0]
/// @param[in] end n + lead
/// @return the four elements
__device__ __forceinline__ uint4 LoadEdgeVector(const std::uint32_t* in, const uint4* vin,
                                                std::size_t v0, unsigned lead, std::size_t end) {
  if (v0 >= lead && v0 + 4 <= end) return __ldcs(vin + v0 / 4);
  std::uint32_t e[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) e[c] = v0 + c >= lead && v0 + c < end ? in[v0 + c - lead] : 0u;
  return make_uint4(e[0], e[1], e[2], e[3]);
}

/// Stores the virtual elements v0 .. v0 + 3 that exist, with one 16-byte store when all do.
/// @param[out] out the output
/// @param[out] vout the output as 16-byte vectors of the virtual array (out - lead)
/// @param[in] v0 first virtual element, a multiple of 4
/// @param[in] lead virtual elements before out[0]
/// @param[in] end n + lead
/// @param[in] v the four elements
__device__ __forceinline__ void StoreEdgeVector(std::uint32_t* out, uint4* vout, std::size_t v0,
                                                unsigned lead, std::size_t end, const uint4& v) {
  if (v0 >= lead && v0 + 4 <= end) {
    __stcs(vout + v0 / 4, v);
    return;
  }
  const std::uint32_t e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    if (v0 + c >= lead && v0 + c < end) out[v0 + c - lead] = e[c];
  }
}

/// Copies a warp's segment (virtual elements base .. base + kWarpItems - 1) from global memory
/// into @p units in striped order. kVectorized: 16-byte loads, in - lead is 16-byte aligned;
/// otherwise 4-byte loads (lead == 0). Every load is issued before the first shared store.
/// @tparam kVectorized 16-byte (true) or 4-byte (false) global loads
/// @param[in] in the input
/// @param[in] base the segment's first virtual element
/// @param[in] lead virtual elements before in[0]
/// @param[in] end n + lead
/// @param[in] interior the whole segment lies in [lead, end): no bounds checks
/// @param[out] units the warp's shared buffer
/// @param[in] lane threadIdx.x mod 32
template <bool kVectorized>
__device__ __forceinline__ void LoadSegment(const std::uint32_t* in, std::size_t base,
                                            unsigned lead, std::size_t end, bool interior,
                                            uint4* units, int lane) {
  if constexpr (kVectorized) {
    const auto* vin =
        reinterpret_cast<const uint4*>(reinterpret_cast<std::uintptr_t>(in) - 4 * lead);
    uint4 v[kVectors];
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      // Vector j * 32 + lane: each load instruction of the warp covers 512 contiguous bytes.
      const std::size_t v0 = base + 4 * (j * 32 + lane);
      v[j] = interior ? __ldcs(vin + v0 / 4) : LoadEdgeVector(in, vin, v0, lead, end);
    }
#pragma unroll
    for (int j = 0; j < kVectors; ++j) units[SwizzledVector(j * 32 + lane)] = v[j];
  } else {
    auto* words = reinterpret_cast<std::uint32_t*>(units);
    std::uint32_t x[kItems];
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const std::size_t e = base + j * 32 + lane;
      x[j] = interior || e < end ? __ldcs(in + e) : 0u;
    }
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      // Element e of the segment sits in word e mod 4 of vector e / 4: the same layout as the
      // vectorized path, and eight lanes of a 4-byte access still hit eight bank groups.
      const int e = j * 32 + lane;
      words[4 * SwizzledVector(e / 4) + e % 4] = x[j];
    }
  }
}

/// Writes a warp's segment from @p units (striped order) to global memory; the mirror of
/// `LoadSegment`. Elements outside [lead, end) are not written.
/// @tparam kVectorized 16-byte (true) or 4-byte (false) global stores
/// @param[out] out the output
/// @param[in] base the segment's first virtual element
/// @param[in] lead virtual elements before out[0]
/// @param[in] end n + lead
/// @param[in] interior the whole segment lies in [lead, end): no bounds checks
/// @param[in] units the warp's shared buffer
/// @param[in] lane threadIdx.x mod 32
template <bool kVectorized>
__device__ __forceinline__ void StoreSegment(std::uint32_t* out, std::size_t base, unsigned lead,
                                             std::size_t end, bool interior, const uint4* units,
                                             int lane) {
  if constexpr (kVectorized) {
    auto* vout = reinterpret_cast<uint4*>(reinterpret_cast<std::uintptr_t>(out) - 4 * lead);
#pragma unroll
    for (int j = 0; j < kVectors; ++j) {
      const std::size_t v0 = base + 4 * (j * 32 + lane);
      const uint4 v = units[SwizzledVector(j * 32 + lane)];
      if (interior) {
        __stcs(vout + v0 / 4, v);
      } else {
        StoreEdgeVector(out, vout, v0, lead, end, v);
      }
    }
  } else {
    const auto* words = reinterpret_cast<const std::uint32_t*>(units);
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      const int e = j * 32 + lane;
      const std::uint32_t x = words[4 * SwizzledVector(e / 4) + e % 4];
      if (interior || base + e < end) __stcs(out + base + e, x);
    }
  }
}

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
 * the warp polls again after a growing `__nanosleep`. Reading 128 tiles per L2 round trip
 * instead of 32 lets prefix information travel 128 tiles per round trip, so the look-back
 * keeps up even when hundreds of tiles are in flight.
 * @param[in] status the tiles' status words
 * @param[in] tile this tile's index (> 0)
 * @param[in] lane threadIdx.x mod 32
 * @return the exclusive prefix of the tile (the same in every lane)
 */
__device__ std::uint32_t LookBack(StatusWord* status, std::uint32_t tile, int lane) {
  std::uint32_t prefix = 0;
  long long window = static_cast<long long>(tile) - 1;
  unsigned pause_ns = kFirstBackoffNs;
  while (true) {
    std::uint64_t word[kWindowGroups];
#pragma unroll
    for (int g = 0; g < kWindowGroups; ++g) {
      // All loads of the step are issued before any is used: one round trip for 128 tiles.
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
      // A predecessor is still loading its tile: poll less often the longer it takes.
      __nanosleep(pause_ns);
      pause_ns = pause_ns < kMaxBackoffNs ? 2 * pause_ns : kMaxBackoffNs;
    }
  }
}

/**
 * @brief Single-pass exclusive scan: each block scans one tile of `kTile` 32-bit elements and
 *        finds the tile's offset by decoupled look-back.
 *
 * Thread 0 takes the tile index from @p tile_counter. Each warp loads its 512-element segment
 * (striped, 16-byte loads), reorders it through its own swizzled shared buffer so that lane l
 * holds elements 16 l .. 16 l + 15 of the segment, and scans them sequentially in registers.
 * A warp shuffle scan of the 32 thread totals and one barrier over the 8 warp totals give
 * every thread its offset inside the tile and the tile total. Warp 0 publishes the total
 * (aggregate; tile 0 publishes it as its inclusive prefix directly), looks back for the tile's
 * prefix and publishes prefix + total; a second barrier hands the prefix to all threads, which
 * store their exclusive results through the shared buffer with 16-byte stores.
 * Virtual element v is in[v - lead] for lead <= v < n + lead and 0 otherwise, so that 16-byte
 * vectors of the virtual array are aligned in memory. Reads 4n bytes, writes 4n bytes, plus 16
 * bytes of status traffic per tile.
 * @tparam kVectorized 16-byte global accesses (in and out have the same address mod 16);
 *         otherwise 4-byte accesses with lead = 0
 * @par Launch configuration
 * `Tiles(n, lead)` blocks of `kThreads` threads; 16.4 KiB of static shared memory.
 * @pre @p tile_counter and the first `Tiles(n, lead)` status words are zero (one memset on the
 *      same stream); in - lead (as an address) is 16-byte aligned when kVectorized; in and out
 *      are equal or do not overlap (a warp stores only the segment it has loaded).
 * @param[in] in input words (uint32 or int32 bits)
 * @param[out] out exclusive prefix sums, modulo 2^32; may equal @p in
 * @param[in] n number of elements
 * @param[in] lead virtual elements before in[0] (0..3)
 * @param[in,out] status one status word per tile
 * @param[in,out] tile_counter the next tile index to hand out
 */
template <bool kVectorized>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    DecoupledLookbackScanKernel(const std::uint32_t* in, std::uint32_t* out, std::size_t n,
                                unsigned lead, StatusWord* status, unsigned* tile_counter) {
  __shared__ uint4 s_units[kWarps][kWarpVectors];
  __shared__ std::uint32_t s_warp_totals[kWarps];
  __shared__ std::uint32_t s_tile;
  __shared__ std::uint32_t s_prefix;

  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
  // Every thread needs the tile index before it loads.
  __syncthreads();
  const std::uint32_t tile = s_tile;

  const std::size_t end = n + lead;
  const std::size_t base = static_cast<std::size_t>(tile) * kTile + warp * kWarpItems;
  // A segment wholly inside [lead, end) needs no bounds checks (all but the first and last).
  const bool interior = base >= lead && base + kWarpItems <= end;
  uint4* units = s_units[warp];
  LoadSegment<kVectorized>(in, base, lead, end, interior, units, lane);
  // The blocked reads below take vectors other lanes of this warp stored.
  __syncwarp();
  std::uint32_t x[kItems];
#pragma unroll
  for (int k = 0; k < kVectors; ++k) {
    const uint4 v = units[SwizzledVector(lane * kVectors + k)];
    x[4 * k] = v.x;
    x[4 * k + 1] = v.y;
    x[4 * k + 2] = v.z;
    x[4 * k + 3] = v.w;
  }

  // Inclusive scan of the thread's elements, then of the thread totals across the warp.
#pragma unroll
  for (int k = 1; k < kItems; ++k) x[k] += x[k - 1];
  const std::uint32_t thread_total = x[kItems - 1];
  const std::uint32_t warp_inclusive = WarpInclusiveSum(thread_total, lane);
  if (lane == kWarpSize - 1) s_warp_totals[warp] = warp_inclusive;
  // Every warp total must be written before any thread adds them up.
  __syncthreads();
  std::uint32_t warp_offset = 0;
  std::uint32_t tile_total = 0;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) {
    const std::uint32_t t = s_warp_totals[w];
    if (w < warp) warp_offset += t;
    tile_total += t;
  }

  if (warp == 0) {
    std::uint32_t prefix = 0;
    if (tile == 0) {
      if (lane == 0) StoreStatus(status, PackStatus(kStatusPrefix, tile_total));
    } else {
      // Publish the aggregate first: successors can use it before this tile knows its prefix.
      if (lane == 0) StoreStatus(status + tile, PackStatus(kStatusAggregate, tile_total));
      prefix = LookBack(status, tile, lane);
      if (lane == 0) StoreStatus(status + tile, PackStatus(kStatusPrefix, prefix + tile_total));
    }
    if (lane == 0) s_prefix = prefix;
  }
  // The tile's prefix must be in shared memory before any thread adds it.
  __syncthreads();

  const std::uint32_t offset = s_prefix + warp_offset + (warp_inclusive - thread_total);
  // Exclusive results, from the back so that x[k - 1] is still the inclusive sum.
#pragma unroll
  for (int k = kItems - 1; k > 0; --k) x[k] = offset + x[k - 1];
  x[0] = offset;
  // Each lane overwrites only the vectors it read above, so no other lane's data is lost.
#pragma unroll
  for (int k = 0; k < kVectors; ++k) {
    units[SwizzledVector(lane * kVectors + k)] =
        make_uint4(x[4 * k], x[4 * k + 1], x[4 * k + 2], x[4 * k + 3]);
  }
  // The striped reads take vectors other lanes of this warp stored.
  __syncwarp();
  StoreSegment<kVectorized>(out, base, lead, end, interior, units, lane);
}

}  // namespace ch02::lookback

namespace ch02::optimized {

namespace {

using lookback::DecoupledLookbackScanKernel;
using lookback::kCounterBytes;
using lookback::kMaxLead;
using lookback::kThreads;
using lookback::StatusWord;
using lookback::Tiles;

// One scan of 32-bit words; int32 and uint32 share it (the same bits under wrapping addition).
void ScanWords(const std::uint32_t* in, std::uint32_t* out, std::size_t n, void* d_temp,
               cudaStream_t stream) {
  const auto in_address = reinterpret_cast<std::uintptr_t>(in);
  // 16-byte accesses need in and out to share their offset inside a 16-byte block.
  const bool vectorized = in_address % 16 == reinterpret_cast<std::uintptr_t>(out) % 16;
  const unsigned lead = vectorized ? static_cast<unsigned>(in_address % 16 / 4) : 0;
  const std::size_t tiles = Tiles(n, lead);
  auto* counter = static_cast<unsigned*>(d_temp);
  auto* status = reinterpret_cast<StatusWord*>(static_cast<unsigned char*>(d_temp) + kCounterBytes);
  // Counter and status words start from zero on every call, ordered on the stream before the
  // scan: a call shares no state with any other call that has its own scratch.
  CUDA_CHECK(cudaMemsetAsync(d_temp, 0, kCounterBytes + tiles * sizeof(StatusWord), stream));
  const auto grid = static_cast<unsigned>(tiles);
  if (vectorized) {
    DecoupledLookbackScanKernel<true>
        <<<grid, kThreads, 0, stream>>>(in, out, n, lead, status, counter);
  } else {
    DecoupledLookbackScanKernel<false>
        <<<grid, kThreads, 0, stream>>>(in, out, n, lead, status, counter);
  }
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  static_assert(sizeof(T) == sizeof(std::uint32_t), "the scan works on 32-bit words");
  if (n == 0) return 0;
  return kCounterBytes + AlignTemp(Tiles(n, kMaxLead) * sizeof(StatusWord));
}

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  CheckArguments("optimized::ExclusiveScan", n, d_temp, temp_bytes, ExclusiveScanTempBytes<T>(n));
  if (n == 0) return;
  ScanWords(reinterpret_cast<const std::uint32_t*>(d_in), reinterpret_cast<std::uint32_t*>(d_out),
            n, d_temp, stream);
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
