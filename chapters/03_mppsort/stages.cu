/// @file stages.cu
/// @brief The table of chapter 03's stages and `StageSorter`, which runs any of them.
#include <stdexcept>
#include <string>

#include "chapters/03_mppsort/stages.cuh"
#include "common/errors.hpp"

namespace ch03 {

const std::vector<StageInfo>& AllStages() {
  static const std::vector<StageInfo> stages = {
      {Stage::kBuckets, "buckets", "computed buckets, chapter 01's min/max, one scan"},
      {Stage::kRanked, "ranked", "keys ranked by bucket in shared memory, written as runs"},
      {Stage::kRegisters, "registers", "the bitonic tile in registers; h from n"},
      {Stage::kLevels, "levels", "oversized buckets bucketed again, levels planned on the GPU"},
      {Stage::kCounting, "counting", "a counting sort on chip replaces the bitonic network"},
      {Stage::kSampled, "sampled", "level 0's buckets from a sample of the keys"},
  };
  return stages;
}

Stage ParseStage(const std::string& name) {
  std::string words;
  for (const StageInfo& info : AllStages()) {
    if (name == info.name) return info.stage;
    words += (words.empty() ? "" : ", ") + std::string(info.name);
  }
  throw staged::UsageError("unknown stage '" + name + "' (one of " + words + ")");
}

StageSorter::StageSorter(Stage stage, std::size_t capacity,
                         std::optional<optimized::Options> options)
    : stage_(stage) {
  if (stage == Stage::kBuckets || stage == Stage::kRanked || stage == Stage::kRegisters) {
    if (options) throw std::invalid_argument("StageSorter: stages 1 to 3 take no options");
    one_.emplace(capacity);
    limits_ = staged::PlanningLimits();
  } else {
    levels_.emplace(capacity, options ? *options : optimized::OptionsFor(stage));
  }
}

void StageSorter::Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n,
                       cudaStream_t stream) {
  switch (stage_) {
    case Stage::kBuckets:
      one_level::Sort(stage1::Steps(), d_in, d_out, n, *one_, stream);
      return;
    case Stage::kRanked:
      one_level::Sort(stage2::Steps(), d_in, d_out, n, *one_, stream);
      return;
    case Stage::kRegisters:
      one_level::Sort(stage3::Steps(n, limits_), d_in, d_out, n, *one_, stream);
      return;
    default:
      optimized::Sort(d_in, d_out, n, *levels_, stream);
      return;
  }
}

}  // namespace ch03
