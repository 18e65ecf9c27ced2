/**
 * @file stage_timer.hpp
 * @brief The per-stage breakdown of the optimized mppSort: CUDA events around each step of
 *        level 0 and around the deeper levels, summed per stage.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

#include "common/stream.hpp"

namespace ch03::optimized {

/// The steps timed separately in the per-stage breakdown.
enum class Stage : int {
  kMinMax,     ///< min and max of the input (chapter 01)
  kHistogram,  ///< per-chunk bucket histograms of level 0
  kScan,       ///< scan of level 0's bucket-major matrix (chapter 02)
  kPartition,  ///< level 0's ranking in shared memory and coalesced scatter
  kSort,       ///< level 0's on-chip sort of each bucket (radix or bitonic)
  kDeeper,     ///< every level after the first (planned and run on the device)
};
/// Number of stages.
inline constexpr int kStageCount = 6;
/// Names of the stages as the report prints them (`optimized:<name>`).
inline constexpr std::array<const char*, kStageCount> kStageNames = {
    "minmax", "histogram", "scan", "partition", "sort", "deeper"};

/// Records CUDA events around each stage and sums the time per stage over one or more sorts.
class StageTimer {
 public:
  /// Records the start of @p stage on @p stream.
  /// @param[in] stage the stage
  /// @param[in] stream stream
  void Begin(Stage stage, cudaStream_t stream);
  /// Records the end of the stage begun last.
  /// @param[in] stream stream
  void End(cudaStream_t stream);
  /// Waits for the events and returns milliseconds per stage since the last `Reset`.
  std::array<double, kStageCount> Collect();
  /// Forgets the recorded intervals (events are kept for reuse).
  void Reset() { used_ = 0; }

 private:
  struct Interval {
    Stage stage;
    staged::Event start;
    staged::Event stop;
  };
  std::vector<Interval> intervals_;
  std::size_t used_ = 0;
};

}  // namespace ch03::optimized
