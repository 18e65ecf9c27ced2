/// @file ch03_bucket_reference.hpp
/// @brief What chapter 03's host and GPU tests share: the values of an equal-width bucket, found
///        by bisection over the map itself, independently of `EqualWidthBounds`.
#pragma once

#include <cstdint>

#include "chapters/03_mppsort/mppsort.cuh"

namespace ch03::testing {

/// The smallest key in [min, max + 1] whose bucket under `ArithmeticBucket(key, min, scale)` is at
/// least k (max + 1 when there is none), found by bisection: the map is non-decreasing in the key.
/// Bucket k then holds the keys [FirstKeyOfBucket(k), FirstKeyOfBucket(k + 1) - 1].
inline std::uint64_t FirstKeyOfBucket(std::uint32_t min, std::uint32_t max, std::uint64_t scale,
                                      std::uint32_t k) {
  std::uint64_t lo = min, hi = std::uint64_t{max} + 1;
  while (lo < hi) {
    const std::uint64_t mid = (lo + hi) / 2;
    if (ArithmeticBucket(static_cast<std::uint32_t>(mid), min, scale) >= k) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

}  // namespace ch03::testing
