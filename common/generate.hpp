/**
 * @file generate.hpp
 * @brief Seeded, reproducible input generators with the distributions of the tutorial.
 *
 * Every element is a pure function of (seed, index) through a counter-based SplitMix64 hash, so
 * the same `--seed` gives the same data on every machine, whatever the thread count.
 *
 * | distribution | what it produces |
 * |---|---|
 * | `uniform` | independent values over the type's range (reals: [-1, 1)) |
 * | `sorted`  | non-decreasing values over the same range |
 * | `reverse` | non-increasing values over the same range |
 * | `equal`   | one value repeated n times |
 * | `few`     | each element one of 16 distinct values |
 * | `skewed`  | 90% of the elements in a cluster 1/65536 of the range wide, 10% uniform |
 *
 * @code
 * std::vector<float> x = staged::Generate<float>(1 << 20, staged::Distribution::kUniform, 42);
 * @endcode
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace staged {

/// The input distributions named by `--dist`.
enum class Distribution { kUniform, kSorted, kReverse, kEqual, kFew, kSkewed };

/// All distributions, in the order `--help` lists them.
const std::vector<Distribution>& AllDistributions();

/// `uniform`, `sorted`, ... for @p dist.
std::string DistributionName(Distribution dist);

/// Parses a `--dist` word; throws `UsageError` naming the accepted words.
Distribution ParseDistribution(const std::string& word);

/// The SplitMix64 finaliser: a good 64-bit hash of @p x (used as a counter-based generator).
std::uint64_t SplitMix64(std::uint64_t x) noexcept;

/// Returns @p n values of type @p T drawn from @p dist with @p seed (see the table above).
/// Instantiated for float, double, int32_t, uint32_t and uint8_t.
template <typename T>
std::vector<T> Generate(std::size_t n, Distribution dist, std::uint64_t seed);

}  // namespace staged
