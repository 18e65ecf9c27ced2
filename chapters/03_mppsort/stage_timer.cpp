/// @file stage_timer.cpp
/// @brief Events around the stages of the optimized mppSort, summed per stage.
#include "chapters/03_mppsort/stage_timer.hpp"

namespace ch03::optimized {

void StageTimer::Begin(Stage stage, cudaStream_t stream) {
  if (used_ == intervals_.size()) intervals_.push_back(Interval{stage, {}, {}});
  intervals_[used_].stage = stage;
  intervals_[used_].start.Record(stream);
}

void StageTimer::End(cudaStream_t stream) { intervals_[used_++].stop.Record(stream); }

std::array<double, kStageCount> StageTimer::Collect() {
  std::array<double, kStageCount> ms{};
  for (std::size_t i = 0; i < used_; ++i) {
    intervals_[i].stop.Synchronize();
    ms[static_cast<int>(intervals_[i].stage)] +=
        intervals_[i].stop.MillisecondsSince(intervals_[i].start);
  }
  return ms;
}

}  // namespace ch03::optimized
