/// @file timer.cpp
/// @brief Timing statistics and the L2 flusher.
#include "timer.hpp"

#include <algorithm>
#include <stdexcept>

#include "timing_caveats.hpp"

namespace staged {

TimingStats Summarize(std::vector<double> samples_ms) {
  if (samples_ms.empty()) throw std::invalid_argument("Summarize: no timing samples");
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  TimingStats stats;
  stats.median_ms =
      (n % 2 == 1) ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  stats.reps = static_cast<int>(n);
  return stats;
}

namespace {
std::size_t CurrentL2Bytes() {
  int device = 0;
  int l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  return static_cast<std::size_t>(l2 > 0 ? l2 : (8 << 20));
}
}  // namespace

L2Flusher::L2Flusher() : scratch_(2 * CurrentL2Bytes()) {}

void L2Flusher::Flush(cudaStream_t stream) { scratch_.FillBytes(0x5A, stream); }

const char* const kGatedWorkWaited =
    "the timed work waited for the host behind the stream gate (a stream synchronisation, a "
    "blocking copy, or more launches than the driver queues): its reps were timed without the "
    "gate and include the host's launch work";

void ThrowGateTimeout() {
  throw std::logic_error(
      "the timed work waited for the host behind a closed stream gate (a stream "
      "synchronisation, a blocking copy, or more launches than the driver queues); time it with "
      "TimingOptions::gate = false");
}

void RepTimer::Ungate(const std::string& reason) {
  ungated_reason_ = reason;
  NoteTimingCaveat(reason);
}

}  // namespace staged
