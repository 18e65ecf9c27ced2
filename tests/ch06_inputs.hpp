/// @file ch06_inputs.hpp
/// @brief The inputs chapter 06's tests sort: every distribution and adversary of chapter 03,
///        split over k GPUs in the ways the driver's `--shards` offers and with empty GPUs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/generate.hpp"

namespace ch06::testing {

/// One input: its name and its keys.
struct Input {
  std::string name;
  std::vector<std::uint32_t> keys;
};

/// Every distribution and every adversary of chapter 03, and one against the sample's placement,
/// @p n keys each.
inline std::vector<Input> AllInputs(std::size_t n, std::uint64_t seed) {
  std::vector<Input> inputs;
  for (staged::Distribution d : staged::AllDistributions()) {
    inputs.push_back({staged::DistributionName(d), staged::Generate<std::uint32_t>(n, d, seed)});
  }
  for (ch03::Adversary a :
       {ch03::Adversary::kPowers, ch03::Adversary::kSpike, ch03::Adversary::kOutlier}) {
    inputs.push_back({"adversary:" + ch03::AdversaryName(a), ch03::AdversarialKeys(n, a, seed)});
  }
  // Every 32nd key 0, the others large: a sample taken at the start of each stratum (a multiple
  // of 32 keys wide at 2^20 keys) would see only the zeros and send almost every key to the last
  // GPU. The hashed place within the stratum sees the input as it is.
  std::vector<std::uint32_t> strided(n);
  for (std::size_t i = 0; i < n; ++i) {
    strided[i] =
        i % 32 == 0 ? 0u
                    : 1u + static_cast<std::uint32_t>(staged::SplitMix64(seed + i) % 0xFFFFFFFEull);
  }
  inputs.push_back({"strided", std::move(strided)});
  return inputs;
}

/// The ways of splitting n keys over k ranks the tests use, by name: equal shares (n not a
/// multiple of k leaves the remainder to the first ranks), growing shares, all on rank 0, all on
/// the last rank, and every other rank empty.
inline std::vector<std::string> SplitNames() { return {"even", "uneven", "first", "last", "gaps"}; }

/// Rank g's share of @p n keys under split @p how.
inline std::vector<std::size_t> Split(std::size_t n, int k, const std::string& how) {
  const auto K = static_cast<std::size_t>(k);
  std::vector<std::size_t> s(K, 0);
  if (how == "first") {
    s[0] = n;
  } else if (how == "last") {
    s[K - 1] = n;
  } else if (how == "uneven") {
    std::size_t given = 0;
    for (std::size_t g = 0; g < K; ++g) given += s[g] = n / (K * (K + 1) / 2) * (g + 1);
    s[K - 1] += n - given;
  } else if (how == "gaps") {
    const std::size_t holders = (K + 1) / 2;
    for (std::size_t g = 0; g < K; g += 2) s[g] = n / holders + (g / 2 < n % holders ? 1 : 0);
  } else {
    for (std::size_t g = 0; g < K; ++g) s[g] = n / K + (g < n % K ? 1 : 0);
  }
  return s;
}

/// @p keys cut into consecutive pieces of the given sizes.
inline std::vector<std::vector<std::uint32_t>> Cut(const std::vector<std::uint32_t>& keys,
                                                   const std::vector<std::size_t>& sizes) {
  std::vector<std::vector<std::uint32_t>> pieces;
  std::size_t at = 0;
  for (std::size_t s : sizes) {
    pieces.emplace_back(keys.begin() + static_cast<std::ptrdiff_t>(at),
                        keys.begin() + static_cast<std::ptrdiff_t>(at + s));
    at += s;
  }
  return pieces;
}

}  // namespace ch06::testing
