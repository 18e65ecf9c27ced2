/**
 * @file aligned_split.hpp
 * @brief How an array splits around 16-byte alignment: a scalar head up to the first 16-byte
 *        boundary, a body of whole 16-byte vectors, and a scalar tail. Kernels that load
 *        `uint4`/`float4` use it so that any pointer offset and any length work. And the
 *        alignment every caller's device scratch must have, with the check that refuses another.
 *
 * @code
 * const staged::AlignedSplit s = staged::SplitAt16(d_in, n, sizeof(float));
 * // elements [0, s.head) scalar, s.vectors float4 from d_in + s.head, then s.tail scalar
 * @endcode
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "errors.hpp"

namespace staged {

/// Scalar head, whole 16-byte vectors, scalar tail of an array (see the file comment).
struct AlignedSplit {
  std::size_t head;     ///< elements before the first 16-byte boundary (< 16 / element size)
  std::size_t vectors;  ///< whole 16-byte vectors after the head
  std::size_t tail;     ///< elements after the last whole vector (< 16 / element size)
};

/// Splits @p n elements of @p elem_bytes bytes each that start at byte address @p address.
/// @param[in] address the array's address as an integer (a multiple of @p elem_bytes)
/// @param[in] n elements
/// @param[in] elem_bytes bytes per element: 1, 2, 4, 8 or 16
/// @return head + 16 / elem_bytes * vectors + tail == n
constexpr AlignedSplit SplitAt16(std::uintptr_t address, std::size_t n, std::size_t elem_bytes) {
  const std::size_t per_vector = 16 / elem_bytes;
  std::size_t head = ((16 - address % 16) % 16) / elem_bytes;
  if (head > n) head = n;
  const std::size_t vectors = (n - head) / per_vector;
  return {head, vectors, n - head - vectors * per_vector};
}

/// Same, for a pointer.
/// @param[in] ptr the array (aligned to its element size)
/// @param[in] n elements
/// @param[in] elem_bytes bytes per element
inline AlignedSplit SplitAt16(const void* ptr, std::size_t n, std::size_t elem_bytes) {
  return SplitAt16(reinterpret_cast<std::uintptr_t>(ptr), n, elem_bytes);
}

/// True when @p ptr is 16-byte aligned (a `float4`/`uint4` may be loaded from it).
/// @param[in] ptr any pointer
inline bool IsAligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

/// The alignment of the device scratch (`d_temp`, a workspace) every launcher takes from its
/// caller: 16 bytes, enough for the 64-bit atomics, doubles and 16-byte vectors kept in it.
/// `cudaMalloc` returns 256-byte aligned memory; a piece of such a buffer starts at an offset
/// that is a multiple of 16.
inline constexpr std::size_t kScratchAlignment = 16;

/// Throws `UsageError` (exit 2) naming @p what unless @p d_temp is `kScratchAlignment`-aligned
/// (null passes: a launcher that needs no scratch accepts it). Touches no device state, so a
/// launcher can check before anything else.
/// @param[in] d_temp the caller's scratch
/// @param[in] what the launcher, for the message
inline void RequireAlignedScratch(const void* d_temp, const std::string& what) {
  const std::uintptr_t off = reinterpret_cast<std::uintptr_t>(d_temp) % kScratchAlignment;
  if (off != 0) {
    throw UsageError(what + ": scratch " + std::to_string(off) +
                     " bytes past a 16-byte boundary; it must be 16-byte aligned (cudaMalloc's "
                     "pointers are; offset into one by a multiple of 16)");
  }
}

}  // namespace staged
