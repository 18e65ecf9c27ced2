/**
 * @file cpu.hpp
 * @brief The distributed sort modelled on the host: the sample, splitters and buckets the GPUs
 *        compute, for tests that check the algorithm (every key in the right run, the runs
 *        balanced) without a GPU, and the GPU tests' expected run lengths.
 */
#pragma once

#include <cstdint>
#include <vector>

#include "chapters/06_multi_gpu_sort/splitters.hpp"

namespace ch06::cpu {

/// What the distributed sort computes, on the host.
struct Model {
  std::vector<Tagged> splitters;                 ///< k - 1 splitters
  std::vector<std::vector<std::uint32_t>> runs;  ///< rank g's sorted run
  std::vector<std::uint64_t> sent;               ///< sent[src * k + dst]: keys src sends dst
};

/// The distributed sort of @p shards (one per rank) with the GPUs' sample and buckets.
/// @param[in] shards rank g's keys
/// @param[in] seed sample positions, as given to `ch06::Sort`
Model DistributedSort(const std::vector<std::vector<std::uint32_t>>& shards, std::uint64_t seed);

}  // namespace ch06::cpu
