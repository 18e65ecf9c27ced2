/**
 * @file cpu.cpp
 * @brief The splitter choice, and the CPU model of the distributed sort (cpu.hpp): the same
 *        sample, splitters and buckets as the GPUs, on the host, for the host tests.
 */
#include "chapters/06_multi_gpu_sort/cpu.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace ch06 {

std::vector<Tagged> ChooseSplitters(std::vector<Tagged> sample, int k) {
  if (k < 1 || k > kMaxGpus) {
    throw std::invalid_argument("ChooseSplitters: k = " + std::to_string(k));
  }
  const auto K = static_cast<std::size_t>(k);
  if (sample.empty()) {
    const Tagged last{std::numeric_limits<std::uint32_t>::max(),
                      std::numeric_limits<std::uint64_t>::max()};
    return std::vector<Tagged>(K - 1, last);
  }
  std::sort(sample.begin(), sample.end(),
            [](const Tagged& a, const Tagged& b) { return Before(a.key, a.position, b); });
  std::vector<Tagged> splitters;
  for (std::size_t g = 1; g < K; ++g) splitters.push_back(sample[sample.size() * g / K]);
  return splitters;
}

namespace cpu {

Model DistributedSort(const std::vector<std::vector<std::uint32_t>>& shards, std::uint64_t seed) {
  const int k = static_cast<int>(shards.size());
  const auto K = shards.size();
  std::vector<std::uint64_t> first(K, 0);
  for (std::size_t g = 1; g < K; ++g) first[g] = first[g - 1] + shards[g - 1].size();
  std::vector<Tagged> sample;
  for (std::size_t g = 0; g < K; ++g) {
    const std::size_t n = shards[g].size();
    if (n == 0) continue;
    for (std::uint64_t j = 0; j < static_cast<std::uint64_t>(kSamplesPerGpu); ++j) {
      const std::uint64_t i = SamplePosition(j, kSamplesPerGpu, n, seed);
      sample.push_back({shards[g][i], first[g] + i});
    }
  }
  Model m;
  m.splitters = ChooseSplitters(std::move(sample), k);
  m.runs.assign(K, {});
  m.sent.assign(K * K, 0);
  for (std::size_t g = 0; g < K; ++g) {
    for (std::size_t i = 0; i < shards[g].size(); ++i) {
      const int b = Bucket(shards[g][i], first[g] + i, m.splitters.data(), k - 1);
      m.runs[static_cast<std::size_t>(b)].push_back(shards[g][i]);
      ++m.sent[g * K + static_cast<std::size_t>(b)];
    }
  }
  for (auto& run : m.runs) std::sort(run.begin(), run.end());
  return m;
}

}  // namespace cpu
}  // namespace ch06
