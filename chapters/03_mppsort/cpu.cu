/**
 * @file cpu.cu
 * @brief CPU references of every mppSort step (used by the tests and by verification), and the
 *        chapter's adversarial inputs.
 */
#include <algorithm>
#include <array>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/errors.hpp"
#include "common/generate.hpp"

namespace ch03 {

Adversary ParseAdversary(const std::string& name) {
  if (name == "none") return Adversary::kNone;
  if (name == "powers") return Adversary::kPowers;
  if (name == "spike") return Adversary::kSpike;
  if (name == "outlier") return Adversary::kOutlier;
  throw staged::UsageError("unknown adversary '" + name + "' (none, powers, spike, outlier)");
}

std::string AdversaryName(Adversary a) {
  switch (a) {
    case Adversary::kNone:
      return "none";
    case Adversary::kPowers:
      return "powers";
    case Adversary::kSpike:
      return "spike";
    case Adversary::kOutlier:
      return "outlier";
  }
  return "none";
}

std::vector<std::uint32_t> AdversarialKeys(std::size_t n, Adversary a, std::uint64_t seed) {
  std::vector<std::uint32_t> keys(n);
  const std::uint64_t base = staged::SplitMix64(seed ^ 0xAD7E5A11ull);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = staged::SplitMix64(base + i);
    switch (a) {
      case Adversary::kPowers: {  // 33 values: 0, then 2^0 .. 2^31
        const auto v = static_cast<std::uint32_t>(r % 33);
        keys[i] = v == 0 ? 0u : 1u << (v - 1);
        break;
      }
      case Adversary::kSpike:  // one key in a thousand is noise
        keys[i] = r % 1000 == 0 ? static_cast<std::uint32_t>(r >> 32) : 0x5EED1234u;
        break;
      case Adversary::kOutlier:
        keys[i] = 1000u + static_cast<std::uint32_t>(r % 1024);
        break;
      case Adversary::kNone:
        keys[i] = static_cast<std::uint32_t>(r);
        break;
    }
  }
  if (a == Adversary::kOutlier && n > 0) keys[staged::SplitMix64(base) % n] = 0xFFFFFFFFu;
  return keys;
}

namespace cpu {

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

}  // namespace cpu
}  // namespace ch03
