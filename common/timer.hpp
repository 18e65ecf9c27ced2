/**
 * @file timer.hpp
 * @brief `GpuTimer` (CUDA events) and the timing helpers every benchmark uses: warm-up runs,
 *        many timed reps, median/min/max, and an optional L2 flush between reps.
 *
 * @code
 * staged::TimingOptions opt{.warmup = 3, .reps = 20, .flush_l2 = true};
 * staged::TimingStats t = staged::TimeGpu(opt, [&](cudaStream_t s) { Launch(d_in, d_out, n, s); });
 * // t.median_ms, t.min_ms, t.max_ms
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

#include "device_buffer.hpp"
#include "stream.hpp"

namespace staged {

/// Median, minimum and maximum of a set of timings, in milliseconds.
struct TimingStats {
  double median_ms = 0.0;  ///< median over reps (mean of the two middle values when even)
  double min_ms = 0.0;     ///< fastest rep
  double max_ms = 0.0;     ///< slowest rep
  int reps = 0;            ///< number of timed reps
};

/// How to time: warm-up runs (not timed), timed reps, and whether to flush L2 before each rep.
struct TimingOptions {
  int warmup = 3;         ///< untimed runs first (module load, caches, clocks)
  int reps = 20;          ///< timed runs; the median is reported
  bool flush_l2 = false;  ///< overwrite L2 before each rep so no input is served from cache
};

/// Reduces raw timings to median/min/max. Throws `std::invalid_argument` on an empty set.
TimingStats Summarize(std::vector<double> samples_ms);

/// Times a stretch of GPU work with two CUDA events on one stream.
class GpuTimer {
 public:
  /// @param[in] stream the stream whose work is timed
  explicit GpuTimer(cudaStream_t stream = nullptr) : stream_(stream) {}
  void Start() { start_.Record(stream_); }  ///< records the start event
  void Stop() { stop_.Record(stream_); }    ///< records the stop event
  /// Waits for the stop event and returns the elapsed milliseconds.
  double ElapsedMs() {
    stop_.Synchronize();
    return stop_.MillisecondsSince(start_);
  }

 private:
  cudaStream_t stream_;
  Event start_;
  Event stop_;
};

/// Evicts the device's L2 cache by writing a buffer twice its size.
class L2Flusher {
 public:
  /// Allocates a scratch buffer of twice the current device's L2 size.
  L2Flusher();
  /// Queues the overwrite on @p stream.
  void Flush(cudaStream_t stream = nullptr);

 private:
  DeviceBuffer<unsigned char> scratch_;
};

/// Runs @p work(stream) `warmup` times, then `reps` times between CUDA events; returns the stats.
/// @p work must only enqueue GPU work on the given stream (it may also synchronise).
template <typename Work>
TimingStats TimeGpu(const TimingOptions& options, Work&& work, cudaStream_t stream = nullptr) {
  for (int i = 0; i < options.warmup; ++i) work(stream);
  std::optional<L2Flusher> flusher;
  if (options.flush_l2) flusher.emplace();
  std::vector<double> samples;
  samples.reserve(options.reps > 0 ? options.reps : 1);
  GpuTimer timer(stream);
  for (int i = 0; i < (options.reps > 0 ? options.reps : 1); ++i) {
    if (flusher) flusher->Flush(stream);
    timer.Start();
    work(stream);
    timer.Stop();
    samples.push_back(timer.ElapsedMs());
  }
  return Summarize(std::move(samples));
}

/// Times host code with `std::chrono::steady_clock` (warm-up runs first, like `TimeGpu`).
template <typename Work>
TimingStats TimeCpu(const TimingOptions& options, Work&& work) {
  for (int i = 0; i < options.warmup; ++i) work();
  std::vector<double> samples;
  for (int i = 0; i < (options.reps > 0 ? options.reps : 1); ++i) {
    auto t0 = std::chrono::steady_clock::now();
    work();
    auto t1 = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return Summarize(std::move(samples));
}

}  // namespace staged
