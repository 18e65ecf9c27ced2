/// @file generate.cpp
/// @brief Counter-based generators for every distribution, filled in parallel for large n.
#include "generate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>
#include <type_traits>

#include "errors.hpp"

namespace staged {

const std::vector<Distribution>& AllDistributions() {
  static const std::vector<Distribution> all = {Distribution::kUniform, Distribution::kSorted,
                                                Distribution::kReverse, Distribution::kEqual,
                                                Distribution::kFew,     Distribution::kSkewed};
  return all;
}

std::string DistributionName(Distribution dist) {
  switch (dist) {
    case Distribution::kUniform:
      return "uniform";
    case Distribution::kSorted:
      return "sorted";
    case Distribution::kReverse:
      return "reverse";
    case Distribution::kEqual:
      return "equal";
    case Distribution::kFew:
      return "few";
    case Distribution::kSkewed:
      return "skewed";
  }
  return "unknown";
}

Distribution ParseDistribution(const std::string& word) {
  for (Distribution d : AllDistributions()) {
    if (DistributionName(d) == word) return d;
  }
  throw UsageError("unknown distribution '" + word +
                   "' (expected uniform, sorted, reverse, equal, few or skewed)");
}

std::uint64_t SplitMix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

namespace {

constexpr int kFewValues = 16;
constexpr double kClusterWidth = 1.0 / 65536.0;
constexpr std::uint64_t kClusterPercent = 90;

/// A uniform double in [0, 1) from the top 53 bits of a hash.
double Unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// Maps u in [0, 1) monotonically onto T's range: reals to [-1, 1), integers to the full range.
template <typename T>
T FromUnit(double u) {
  if constexpr (std::is_floating_point_v<T>) {
    T v = static_cast<T>(-1.0 + 2.0 * u);
    return v < T(1) ? v : std::nextafter(T(1), T(0));  // rounding must not reach the open end
  } else {
    const long double lo = static_cast<long double>(std::numeric_limits<T>::min());
    const long double span = static_cast<long double>(std::numeric_limits<T>::max()) - lo + 1;
    long double v = lo + std::floor(static_cast<long double>(u) * span);
    return static_cast<T>(std::min(v, static_cast<long double>(std::numeric_limits<T>::max())));
  }
}

/// Element i of distribution @p dist; each element depends only on (seed, i).
template <typename T>
T Element(std::size_t i, std::size_t n, Distribution dist, std::uint64_t seed) {
  const std::uint64_t base = SplitMix64(seed ^ 0x5EED5EED5EED5EEDull);
  const std::uint64_t h = SplitMix64(base + i);
  switch (dist) {
    case Distribution::kUniform:
      return FromUnit<T>(Unit(h));
    case Distribution::kSorted:
      // (i + r) / n increases with i, and FromUnit is monotone, so the output is non-decreasing.
      return FromUnit<T>((static_cast<double>(i) + Unit(h)) / static_cast<double>(n));
    case Distribution::kReverse:
      return FromUnit<T>((static_cast<double>(n - 1 - i) + Unit(h)) / static_cast<double>(n));
    case Distribution::kEqual:
      return FromUnit<T>(Unit(SplitMix64(base)));
    case Distribution::kFew:
      return FromUnit<T>(Unit(SplitMix64(base + 1 + (h % kFewValues) * 0x1000193ull)));
    case Distribution::kSkewed: {
      if (h % 100 >= kClusterPercent) return FromUnit<T>(Unit(SplitMix64(h)));
      const double centre = Unit(SplitMix64(base + 7)) * (1.0 - kClusterWidth);
      return FromUnit<T>(centre + kClusterWidth * Unit(SplitMix64(h)));
    }
  }
  return T{};
}

}  // namespace

template <typename T>
std::vector<T> Generate(std::size_t n, Distribution dist, std::uint64_t seed) {
  std::vector<T> out(n);
  const std::size_t kSerialLimit = std::size_t{1} << 20;
  unsigned threads = n < kSerialLimit ? 1u : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, 32u);
  auto fill = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = Element<T>(i, n, dist, seed);
  };
  if (threads == 1) {
    fill(0, n);
    return out;
  }
  std::vector<std::thread> pool;
  const std::size_t chunk = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(n, t * chunk);
    pool.emplace_back(fill, begin, std::min(n, begin + chunk));
  }
  for (auto& th : pool) th.join();
  return out;
}

/// @cond
template std::vector<float> Generate<float>(std::size_t, Distribution, std::uint64_t);
template std::vector<double> Generate<double>(std::size_t, Distribution, std::uint64_t);
template std::vector<std::int32_t> Generate<std::int32_t>(std::size_t, Distribution, std::uint64_t);
template std::vector<std::uint32_t> Generate<std::uint32_t>(std::size_t, Distribution,
                                                            std::uint64_t);
template std::vector<std::uint8_t> Generate<std::uint8_t>(std::size_t, Distribution, std::uint64_t);
/// @endcond

}  // namespace staged
