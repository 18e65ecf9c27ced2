/**
 * @file scan_tile_io.cuh
 * @brief How the single-pass scan (`scan_lookback_kernel.cuh`) moves a warp's segment of a tile
 *        between global memory and the warp's swizzled shared buffer.
 *
 * Global memory is always accessed in *striped* order (lane l touches vectors l, l + 32, ...),
 * so each instruction of a warp covers 512 contiguous bytes (16-byte path) or 128 (4-byte
 * path). A segment wholly inside the input is copied either through registers (every load
 * issued before the first shared store) or by `cp.async` (`staged::CopyToShared`), which writes
 * shared memory without holding a register per element, where the GPU has it (sm_80 and newer);
 * the first and last segments of the input go element by element with bounds checks, one vector
 * at a time.
 *
 * Virtual element v is in[v - lead] for lead <= v < n + lead (end) and 0 otherwise, so that
 * 16-byte vectors of the virtual array are aligned in memory.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "common/async_copy.cuh"

namespace ch02::lookback {

/// The virtual elements v0 .. v0 + 3 as one vector, zeros outside [lead, end), loaded element
/// by element (a vector that straddles the start or the end of the input).
/// @param[in] in the input
/// @param[in] v0 first virtual element, a multiple of 4
/// @param[in] lead virtual elements before in[0]
/// @param[in] end n + lead
/// @return the four elements
__device__ __forceinline__ uint4 LoadEdgeVector(const std::uint32_t* in, std::size_t v0,
                                                unsigned lead, std::size_t end) {
  std::uint32_t e[4];
#pragma unroll
  for (int c = 0; c < 4; ++c) e[c] = v0 + c >= lead && v0 + c < end ? in[v0 + c - lead] : 0u;
  return make_uint4(e[0], e[1], e[2], e[3]);
}

/// Stores the virtual elements v0 .. v0 + 3 that lie in [lead, end), element by element.
/// @param[out] out the output
/// @param[in] v0 first virtual element, a multiple of 4
/// @param[in] lead virtual elements before out[0]
/// @param[in] end n + lead
/// @param[in] v the four elements
__device__ __forceinline__ void StoreEdgeVector(std::uint32_t* out, std::size_t v0, unsigned lead,
                                                std::size_t end, const uint4& v) {
  const std::uint32_t e[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    if (v0 + c >= lead && v0 + c < end) out[v0 + c - lead] = e[c];
  }
}

/**
 * @brief Copies a warp's segment that lies wholly inside the input into its shared buffer, in
 *        striped order: through registers (every load issued before the first shared store)
 *        or, when @p S keeps its tile in shared memory and the GPU has `cp.async` (sm_80 and
 *        newer), by `cp.async` (no registers held).
 * @tparam S the kernel's `TileShape`
 * @tparam kVectorized 16-byte accesses (in - lead is 16-byte aligned) or 4-byte ones (lead = 0)
 * @param[in] in the input
 * @param[in] base the segment's first virtual element
 * @param[in] lead virtual elements before in[0]
 * @param[out] units the warp's shared buffer
 * @param[in] lane threadIdx.x mod 32
 */
template <class S, bool kVectorized>
__device__ __forceinline__ void LoadInteriorSegment(const std::uint32_t* in, std::size_t base,
                                                    unsigned lead, uint4* units, int lane) {
  if constexpr (kVectorized) {
    const auto* vin =
        reinterpret_cast<const uint4*>(reinterpret_cast<std::uintptr_t>(in) - 4 * lead);
    // snippet-begin: ch02-segment-load
    // Vector j * 32 + lane of the segment: one instruction of the warp covers 512 bytes.
    if constexpr (S::kInShared && staged::kAsyncCopy) {
#pragma unroll
      for (int j = 0; j < S::kVectors; ++j) {
        staged::CopyToShared<16>(units + SwizzledVector<S::kVectors>(j * 32 + lane),
                                 vin + base / 4 + j * 32 + lane);
      }
      staged::WaitAllCopies();
    } else {
      uint4 v[S::kVectors];
#pragma unroll
      for (int j = 0; j < S::kVectors; ++j) v[j] = __ldcs(vin + base / 4 + j * 32 + lane);
#pragma unroll
      for (int j = 0; j < S::kVectors; ++j)
        units[SwizzledVector<S::kVectors>(j * 32 + lane)] = v[j];
    }
    // snippet-end: ch02-segment-load
  } else {
    auto* words = reinterpret_cast<std::uint32_t*>(units);
    if constexpr (S::kInShared && staged::kAsyncCopy) {
#pragma unroll
      for (int j = 0; j < S::kItems; ++j) {
        const int e = j * 32 + lane;
        staged::CopyToShared<4>(words + SwizzledWord<S::kVectors>(e), in + base + e);
      }
      staged::WaitAllCopies();
    } else {
      std::uint32_t x[S::kItems];
#pragma unroll
      for (int j = 0; j < S::kItems; ++j) x[j] = __ldcs(in + base + j * 32 + lane);
#pragma unroll
      for (int j = 0; j < S::kItems; ++j) words[SwizzledWord<S::kVectors>(j * 32 + lane)] = x[j];
    }
  }
}

/**
 * @brief Copies a warp's segment that straddles the start or the end of the input into its
 *        shared buffer, one vector (or element) at a time with bounds checks, zeros outside.
 *        Only the first and last tiles take it, so it trades speed for few live registers.
 * @tparam S the kernel's `TileShape`
 * @tparam kVectorized 16-byte vectors of the virtual array, or single elements (lead = 0)
 * @param[in] in the input
 * @param[in] base the segment's first virtual element
 * @param[in] lead virtual elements before in[0]
 * @param[in] end n + lead
 * @param[out] units the warp's shared buffer
 * @param[in] lane threadIdx.x mod 32
 */
template <class S, bool kVectorized>
__device__ void LoadEdgeSegment(const std::uint32_t* in, std::size_t base, unsigned lead,
                                std::size_t end, uint4* units, int lane) {
  if constexpr (kVectorized) {
    const auto* vin =
        reinterpret_cast<const uint4*>(reinterpret_cast<std::uintptr_t>(in) - 4 * lead);
#pragma unroll 1
    for (int j = 0; j < S::kVectors; ++j) {
      const std::size_t v0 = base + 4 * (j * 32 + lane);
      units[SwizzledVector<S::kVectors>(j * 32 + lane)] =
          v0 >= lead && v0 + 4 <= end ? __ldcs(vin + v0 / 4) : LoadEdgeVector(in, v0, lead, end);
    }
  } else {
    auto* words = reinterpret_cast<std::uint32_t*>(units);
#pragma unroll 1
    for (int j = 0; j < S::kItems; ++j) {
      const int e = j * 32 + lane;
      words[SwizzledWord<S::kVectors>(e)] = base + e < end ? __ldcs(in + base + e) : 0u;
    }
  }
}

/**
 * @brief Writes a warp's segment from its shared buffer (striped order) to global memory, adding
 *        @p add to every element; elements outside [lead, end) are not written.
 * @tparam S the kernel's `TileShape`
 * @tparam kVectorized 16-byte (true) or 4-byte (false) global stores
 * @param[out] out the output
 * @param[in] base the segment's first virtual element
 * @param[in] lead virtual elements before out[0]
 * @param[in] end n + lead
 * @param[in] interior the whole segment lies in [lead, end): no bounds checks
 * @param[in] units the warp's shared buffer
 * @param[in] lane threadIdx.x mod 32
 * @param[in] add the tile's prefix, added to every element on its way out
 */
template <class S, bool kVectorized>
__device__ __forceinline__ void StoreSegment(std::uint32_t* out, std::size_t base, unsigned lead,
                                             std::size_t end, bool interior, const uint4* units,
                                             int lane, std::uint32_t add) {
  if constexpr (kVectorized) {
    auto* vout = reinterpret_cast<uint4*>(reinterpret_cast<std::uintptr_t>(out) - 4 * lead);
#pragma unroll
    for (int j = 0; j < S::kVectors; ++j) {
      const std::size_t v0 = base + 4 * (j * 32 + lane);
      uint4 v = units[SwizzledVector<S::kVectors>(j * 32 + lane)];
      v = make_uint4(v.x + add, v.y + add, v.z + add, v.w + add);
      if (interior || (v0 >= lead && v0 + 4 <= end)) {
        __stcs(vout + v0 / 4, v);
      } else {
        StoreEdgeVector(out, v0, lead, end, v);
      }
    }
  } else {
    const auto* words = reinterpret_cast<const std::uint32_t*>(units);
#pragma unroll
    for (int j = 0; j < S::kItems; ++j) {
      const int e = j * 32 + lane;
      const std::uint32_t x = words[SwizzledWord<S::kVectors>(e)] + add;
      if (interior || base + e < end) __stcs(out + base + e, x);
    }
  }
}

}  // namespace ch02::lookback
