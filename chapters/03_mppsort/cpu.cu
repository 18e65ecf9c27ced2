/**
 * @file cpu.cu
 * @brief CPU references of every mppSort step (used by the tests and by verification).
 */
#include <algorithm>
#include <array>

#include "chapters/03_mppsort/mppsort.cuh"

namespace ch03::cpu {

std::vector<std::uint32_t> Sort(const std::vector<std::uint32_t>& keys) {
  std::vector<std::uint32_t> out(keys);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::uint32_t> RadixSort(const std::vector<std::uint32_t>& keys) {
  constexpr int kDigits = 4, kRadix = 256;
  // All four digit histograms in one read of the input.
  std::vector<std::array<std::size_t, kRadix>> count(kDigits);
  for (auto& c : count) c.fill(0);
  for (std::uint32_t k : keys) {
    for (int d = 0; d < kDigits; ++d) ++count[d][(k >> (8 * d)) & 0xFF];
  }
  std::vector<std::uint32_t> a(keys), b(keys.size());
  for (int d = 0; d < kDigits; ++d) {
    const int shift = 8 * d;
    // A digit shared by every key cannot reorder anything: skip the pass.
    if (!keys.empty() && count[d][(keys[0] >> shift) & 0xFF] == keys.size()) continue;
    std::array<std::size_t, kRadix> start{};
    std::size_t sum = 0;
    for (int v = 0; v < kRadix; ++v) {
      start[v] = sum;
      sum += count[d][v];
    }
    // Stable scatter in input order: keys with equal digits keep the previous pass's order.
    for (std::uint32_t k : a) b[start[(k >> shift) & 0xFF]++] = k;
    a.swap(b);
  }
  return a;
}

std::uint32_t TableBucket(std::uint32_t key, std::uint32_t min, std::uint32_t max,
                          std::uint32_t h) {
  // Largest b in [0, h) with limit[b] <= key; limit[0] = min <= key always holds.
  std::uint32_t lo = 0, hi = h;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (BucketLimit(min, max, h, mid) <= key)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

std::vector<std::uint32_t> BlockHistograms(const std::vector<std::uint32_t>& keys, std::uint32_t h,
                                           std::uint32_t rows, std::uint64_t chunk) {
  std::vector<std::uint32_t> m(static_cast<std::size_t>(rows) * h, 0);
  if (keys.empty()) return m;
  const auto [mn, mx] = std::minmax_element(keys.begin(), keys.end());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t row = i / chunk;
    ++m[row * h + TableBucket(keys[i], *mn, *mx, h)];
  }
  return m;
}

std::vector<std::uint32_t> ExclusiveScan(const std::vector<std::uint32_t>& in) {
  std::vector<std::uint32_t> out(in.size());
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = sum;
    sum += in[i];
  }
  return out;
}

std::vector<std::uint32_t> VerticalScan(const std::vector<std::uint32_t>& m, std::uint32_t rows,
                                        std::uint32_t cols) {
  std::vector<std::uint32_t> out(m.size());
  for (std::uint32_t c = 0; c < cols; ++c) {
    std::uint32_t sum = 0;
    for (std::uint32_t r = 0; r < rows; ++r) {
      out[static_cast<std::size_t>(r) * cols + c] = sum;
      sum += m[static_cast<std::size_t>(r) * cols + c];
    }
  }
  return out;
}

}  // namespace ch03::cpu
