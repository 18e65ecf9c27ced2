/// @file step_timer.cpp
/// @brief Events around the steps of the optimized mppSort, summed per step.
#include "chapters/03_mppsort/step_timer.hpp"

namespace ch03::optimized {

void StepTimer::Begin(Step step, cudaStream_t stream) {
  if (used_ == intervals_.size()) intervals_.push_back(Interval{step, {}, {}});
  intervals_[used_].step = step;
  intervals_[used_].start.Record(stream);
}

void StepTimer::End(cudaStream_t stream) { intervals_[used_++].stop.Record(stream); }

std::array<double, kStepCount> StepTimer::Collect() {
  std::array<double, kStepCount> ms{};
  for (std::size_t i = 0; i < used_; ++i) {
    intervals_[i].stop.Synchronize();
    ms[static_cast<int>(intervals_[i].step)] +=
        intervals_[i].stop.MillisecondsSince(intervals_[i].start);
  }
  return ms;
}

}  // namespace ch03::optimized
