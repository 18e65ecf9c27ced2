/**
 * @file timer.hpp
 * @brief `GpuTimer` (CUDA events) and the timing helpers every benchmark uses: warm-up runs,
 *        many timed reps, median/min/max, an optional L2 flush before each rep, and a
 *        `StreamGate` that keeps host launch latency out of the timed region.
 *
 * @code
 * staged::TimingOptions opt{.warmup = 3, .reps = 20, .flush_l2 = true};
 * staged::TimingStats t = staged::TimeGpu(opt, [&](cudaStream_t s) { Launch(d_in, d_out, n, s); });
 * // t.median_ms, t.min_ms, t.max_ms: GPU time from the first launch to the end of the last
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "device_buffer.hpp"
#include "stream.hpp"
#include "stream_gate.hpp"

namespace staged {

/// Median, minimum and maximum of a set of timings, in milliseconds.
struct TimingStats {
  double median_ms = 0.0;  ///< median over reps (mean of the two middle values when even)
  double min_ms = 0.0;     ///< fastest rep
  double max_ms = 0.0;     ///< slowest rep
  int reps = 0;            ///< number of timed reps
  /// Empty when every rep was timed as `TimingOptions` asked; else why the reps were timed
  /// without the stream gate although it was asked for (their times then include the host's
  /// launch work). The same reason is noted with `staged::NoteTimingCaveat`.
  std::string ungated_reason;
};

/// How to time: warm-up runs (not timed), timed reps, whether to flush L2 before each rep, and
/// whether the host's launch work is kept out of the timed region.
struct TimingOptions {
  int warmup = 3;         ///< untimed runs first (module load, caches, clocks)
  int reps = 20;          ///< timed runs; the median is reported
  bool flush_l2 = false;  ///< overwrite L2 before each rep so no input is served from cache
  /// Queue each rep behind a closed `StreamGate` (true, the default): the events then measure GPU
  /// time only, from the first launch to the end of the last. Set false for work that waits for
  /// the host inside the rep (a stream synchronisation, a blocking copy) or that queues more
  /// launches than the driver's queue holds; its time then includes the host's share. Where the
  /// gate cannot work (turned off, a tool that makes every call wait, or work that waited for
  /// the host behind it), the reps are timed without it and `TimingStats::ungated_reason` says
  /// why.
  bool gate = true;
};

/// True when a working set of @p bytes is small enough to be served from an L2 cache of
/// @p l2_bytes across reps (below 4 x L2), so reps must flush L2 to read device memory.
/// @param[in] bytes bytes the timed work reads and writes
/// @param[in] l2_bytes the device's L2 size
inline bool ShouldFlushL2(std::size_t bytes, std::size_t l2_bytes) { return bytes < 4 * l2_bytes; }

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

/// Throws `std::logic_error` explaining that gated work waited for the host: for code that drives
/// a `StreamGate` itself and finds `TimedOut()` (`TimeGpu` times such work without the gate).
[[noreturn]] void ThrowGateTimeout();

/// The reason `RepTimer` gives when gated work waited for the host behind the closed gate.
extern const char* const kGatedWorkWaited;

/// Times one rep of GPU work at a time, as `TimeGpu` describes: flush L2 (when asked), close the
/// gate (unless `options.gate` is false or the gate cannot work here), record, enqueue, record,
/// open, wait.
class RepTimer {
 public:
  /// @param[in] options whether to flush L2 and to gate
  /// @param[in] stream the stream the work is queued on
  RepTimer(const TimingOptions& options, cudaStream_t stream) : stream_(stream), timer_(stream) {
    if (options.flush_l2) flusher_.emplace();
    if (!options.gate) return;
    if (StreamGate::Usable()) {
      gate_.emplace();
    } else {
      Ungate(StreamGate::UnusableReason());
    }
  }

  /// Times one run of @p work(stream). When gated work waits for the host (the gate then opens
  /// by its timeout), that rep and every later one are timed without the gate instead.
  template <typename Work>
  double Time(Work&& work) {
    return Time(work, [](cudaStream_t) {});
  }

  /// Queues @p prepare(stream) untimed (before the L2 flush), then times one run of
  /// @p work(stream) as `Time(work)` does: for work that consumes its input, such as a sort that
  /// overwrites its keys, whose input @p prepare restores.
  template <typename Work, typename Prepare>
  double Time(Work&& work, Prepare&& prepare) {
    prepare(stream_);
    if (flusher_) flusher_->Flush(stream_);
    if (gate_) {
      gate_->Close(stream_);
      {
        GateGuard open_on_exit(*gate_);
        timer_.Start();
        work(stream_);
        timer_.Stop();
      }
      const double ms = timer_.ElapsedMs();
      if (!gate_->TimedOut()) return ms;
      gate_.reset();
      Ungate(kGatedWorkWaited);
      prepare(stream_);
      if (flusher_) flusher_->Flush(stream_);
    }
    // Ungated work is timed with the host's share included: the flush must be over before
    // the host starts issuing the rep, or the launches would hide behind it.
    if (flusher_) CUDA_CHECK(cudaStreamSynchronize(stream_));
    timer_.Start();
    work(stream_);
    timer_.Stop();
    return timer_.ElapsedMs();
  }

  /// Empty while the reps are gated as asked; else why they are not (see `TimingStats`).
  const std::string& UngatedReason() const { return ungated_reason_; }

 private:
  void Ungate(const std::string& reason);

  cudaStream_t stream_;
  std::optional<L2Flusher> flusher_;
  std::optional<StreamGate> gate_;
  GpuTimer timer_;
  std::string ungated_reason_;
};

/// Runs @p prepare(stream) and then @p work(stream), `warmup` times untimed, then `reps` times
/// with only @p work between CUDA events (`RepTimer::Time(work, prepare)`); returns the stats.
/// For work that consumes its input: @p prepare restores it before every run.
template <typename Work, typename Prepare>
TimingStats TimeGpuPrepared(const TimingOptions& options, Work&& work, Prepare&& prepare,
                            cudaStream_t stream = nullptr) {
  for (int i = 0; i < options.warmup; ++i) {
    prepare(stream);
    work(stream);
  }
  RepTimer rep(options, stream);
  std::vector<double> samples;
  samples.reserve(options.reps > 0 ? options.reps : 1);
  for (int i = 0; i < (options.reps > 0 ? options.reps : 1); ++i) {
    samples.push_back(rep.Time(work, prepare));
  }
  TimingStats stats = Summarize(std::move(samples));
  stats.ungated_reason = rep.UngatedReason();
  return stats;
}

/// Runs @p work(stream) `warmup` times, then `reps` times between CUDA events; returns the stats.
///
/// Each rep: flush L2 (when asked; ungated reps wait for the flush to finish first), close a
/// `StreamGate` (unless `options.gate` is false),
/// record the start event, enqueue the work, record the stop event, open the gate, wait. The GPU
/// therefore runs start, work and stop back to back: the median is device time, not the host's
/// launch latency. With the gate, @p work must only enqueue work on the given stream and never
/// wait for it; work that synchronises needs `options.gate = false`. Where the gate cannot work
/// (see `TimingOptions::gate`) the reps are timed without it, and `ungated_reason` of the result
/// says why.
template <typename Work>
TimingStats TimeGpu(const TimingOptions& options, Work&& work, cudaStream_t stream = nullptr) {
  for (int i = 0; i < options.warmup; ++i) work(stream);
  RepTimer rep(options, stream);
  std::vector<double> samples;
  samples.reserve(options.reps > 0 ? options.reps : 1);
  for (int i = 0; i < (options.reps > 0 ? options.reps : 1); ++i) samples.push_back(rep.Time(work));
  TimingStats stats = Summarize(std::move(samples));
  stats.ungated_reason = rep.UngatedReason();
  return stats;
}

/// @brief Times several pieces of work in turn: each runs `warmup` times, then every rep is a
///        round in which each work runs once, timed as `TimeGpu` times a rep. Returns the stats
///        of each work, in the order given.
///
/// Over a run of seconds of compute-bound work a GPU's clock drifts (it heats up, it meets its
/// power limit); timed one after the other, the work timed last would pay for it. In turn, every
/// work sees the same drift.
template <typename Work>
std::vector<TimingStats> TimeGpuInTurn(const TimingOptions& options, const std::vector<Work>& works,
                                       cudaStream_t stream = nullptr) {
  for (const auto& work : works) {
    for (int i = 0; i < options.warmup; ++i) work(stream);
  }
  RepTimer rep(options, stream);
  std::vector<std::vector<double>> samples(works.size());
  for (int i = 0; i < (options.reps > 0 ? options.reps : 1); ++i) {
    for (std::size_t w = 0; w < works.size(); ++w) samples[w].push_back(rep.Time(works[w]));
  }
  std::vector<TimingStats> stats;
  for (auto& s : samples) {
    stats.push_back(Summarize(std::move(s)));
    stats.back().ungated_reason = rep.UngatedReason();
  }
  return stats;
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
