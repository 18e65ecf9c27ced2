/**
 * @file cpu.cpp
 * @brief CPU references of chapter 02 (histogram, exclusive scan, counting sort) and the
 *        argument check shared by every device variant.
 */
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/aligned_split.hpp"

namespace ch02 {

void CheckArguments(const char* what, std::size_t n, const void* d_temp, std::size_t temp_bytes,
                    std::size_t needed) {
  staged::RequireAlignedScratch(d_temp, what);
  if (n > kMaxElements) {
    throw std::invalid_argument(std::string(what) + ": n = " + std::to_string(n) +
                                " exceeds the 32-bit count limit " + std::to_string(kMaxElements));
  }
  if (temp_bytes < needed || (needed > 0 && d_temp == nullptr)) {
    throw std::invalid_argument(std::string(what) + ": scratch of " + std::to_string(temp_bytes) +
                                " bytes given, " + std::to_string(needed) + " needed");
  }
}

namespace cpu {

void Histogram(const std::uint8_t* in, std::size_t n, std::uint32_t* hist) {
  // Four private tables break the store-to-load dependency when neighbours are equal, which
  // would otherwise serialise all-equal input on one counter.
  std::uint32_t part[4][kNumBins] = {};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    ++part[0][in[i]];
    ++part[1][in[i + 1]];
    ++part[2][in[i + 2]];
    ++part[3][in[i + 3]];
  }
  for (; i < n; ++i) ++part[0][in[i]];
  for (int b = 0; b < kNumBins; ++b) hist[b] = part[0][b] + part[1][b] + part[2][b] + part[3][b];
}

template <typename T>
void ExclusiveScan(const T* in, T* out, std::size_t n) {
  // Unsigned arithmetic wraps like the GPU's; the cast back keeps int32_t results bit-identical.
  std::uint32_t running = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t value = static_cast<std::uint32_t>(in[i]);
    out[i] = static_cast<T>(running);
    running += value;
  }
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
template void ExclusiveScan<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t);
template void ExclusiveScan<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t);
/// @endcond

void CountingSort(const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
  std::uint32_t hist[kNumBins];
  Histogram(in, n, hist);
  std::size_t at = 0;
  for (int b = 0; b < kNumBins; ++b) {
    // Each value is one run: no per-element writes.
    if (hist[b] > 0) std::memset(out + at, b, hist[b]);
    at += hist[b];
  }
}

}  // namespace cpu
}  // namespace ch02
