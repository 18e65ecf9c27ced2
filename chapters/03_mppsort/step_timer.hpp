/**
 * @file step_timer.hpp
 * @brief The per-step breakdown of the optimized mppSort: CUDA events around each step of
 *        level 0 and around the deeper levels, summed per step.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <vector>

#include "common/stream.hpp"

namespace ch03::optimized {

/// The steps timed separately in the per-step breakdown.
enum class Step : int {
  kMinMax,     ///< min and max of the input (chapter 01)
  kHistogram,  ///< per-chunk bucket histograms of level 0
  kScan,       ///< scan of level 0's bucket totals (chapter 02)
  kPartition,  ///< level 0's ranking in shared memory and the write-out of its runs
  kSort,       ///< level 0's on-chip sort of each bucket
  kDeeper,     ///< every level after the first (planned and run on the device)
};
/// Number of steps.
inline constexpr int kStepCount = 6;
/// Names of the steps as the report prints them (`step:<name>`).
inline constexpr std::array<const char*, kStepCount> kStepNames = {
    "minmax", "histogram", "scan", "partition", "sort", "deeper"};

/// Records CUDA events around each step and sums the time per step over one or more sorts.
class StepTimer {
 public:
  /// Records the start of @p step on @p stream.
  /// @param[in] step the step
  /// @param[in] stream stream
  void Begin(Step step, cudaStream_t stream);
  /// Records the end of the step begun last.
  /// @param[in] stream stream
  void End(cudaStream_t stream);
  /// Waits for the events and returns milliseconds per step since the last `Reset`.
  std::array<double, kStepCount> Collect();
  /// Forgets the recorded intervals (events are kept for reuse).
  void Reset() { used_ = 0; }

 private:
  // Kept off the class's page (which would list it with no section to go to).
  /// @cond
  struct Interval {
    Step step;
    staged::Event start;
    staged::Event stop;
  };
  /// @endcond
  std::vector<Interval> intervals_;
  std::size_t used_ = 0;
};

}  // namespace ch03::optimized
