/**
 * @file stream_gate.hpp
 * @brief `StreamGate`: holds a stream behind a spinning kernel until the host opens it, so that
 *        everything queued behind the gate starts together and the time between two events
 *        recorded behind it is GPU time only.
 *
 * Without a gate, the first event of a timed region is recorded on an idle stream and the GPU
 * starts the clock at once; the host then spends microseconds per launch (argument packing,
 * occupancy queries, driver calls) while the GPU waits, and those microseconds are charged to the
 * work. With the gate closed, the host enqueues the start event, the whole launch sequence and
 * the stop event first; opening the gate then lets the GPU run them back to back. This is the
 * method of NVIDIA's NVBench (its "blocking kernel").
 *
 * @code
 * staged::StreamGate gate;
 * gate.Close(stream);            // a one-thread kernel spins on a host-mapped flag
 * start.Record(stream);
 * Launch(..., stream);           // queued, not started
 * stop.Record(stream);
 * gate.Open();                   // the GPU runs start, the work and stop without gaps
 * @endcode
 *
 * Work queued behind a closed gate must not wait for the host (no `cudaStreamSynchronize`, no
 * blocking copy): the host would wait for the gate and the gate for the host. The gate kernel
 * gives up after `kTimeoutSeconds` and `TimedOut()` reports it, so a mistake ends in a slow rep
 * rather than a hang. The environment variable `STAGED_GATE_TIMEOUT_S` sets another timeout in
 * seconds; `STAGED_GATE_TIMEOUT_S=0` turns the gate off (`Close` queues nothing, so timings
 * include the host's share).
 *
 * Some environments make every CUDA call wait for the stream: compute-sanitizer's tools do (each
 * launch, copy and memset is instrumented in turn), so nothing can be queued behind a closed
 * gate there. `HoldsQueuedWork()` finds out once per process, and where the answer is no,
 * `Close` queues nothing, as if the gate were off. Either way a gate that queues nothing records
 * why (`staged::NoteTimingCaveat`), so the report can say that its times include the host's
 * share.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <string>

namespace staged {

/// A host-controlled gate in a stream (see the file comment).
class StreamGate {
 public:
  /// Seconds after which a closed gate opens by itself and reports `TimedOut()`, unless the
  /// environment variable `STAGED_GATE_TIMEOUT_S` says otherwise.
  static constexpr double kTimeoutSeconds = 2.0;

  /// Allocates the two host-mapped flags.
  StreamGate();
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  /// Queues the gate kernel on @p stream; work queued after it waits until `Open()`. Queues
  /// nothing (and notes the timing caveat) when `Usable()` is false.
  void Close(cudaStream_t stream);
  /// Lets the gate kernel finish. Safe to call when the gate is already open.
  void Open() noexcept;
  /// True when the last closed gate opened by its timeout instead of by `Open()` (valid once the
  /// stream has passed the gate).
  bool TimedOut() const noexcept;

  /// False when `STAGED_GATE_TIMEOUT_S=0` turned gates off.
  static bool Enabled();
  /// Whether work can be queued behind a closed gate on the current device: false where each
  /// CUDA call waits for the stream to drain (as under compute-sanitizer). Probed once per
  /// process: a memset, a device-to-device copy, a kernel launch and an event record are queued
  /// behind a closed gate on a stream of its own; if the gate had to open by its timeout, the
  /// host was waiting for it. Costs one gated empty launch where gates work, one timeout where
  /// they do not.
  static bool HoldsQueuedWork();
  /// `Enabled() && HoldsQueuedWork()`: whether `Close` queues the gate kernel.
  static bool Usable();
  /// Why `Close` queues nothing (empty when `Usable()`), as `staged::NoteTimingCaveat` records it.
  static std::string UnusableReason();

 private:
  void Launch(cudaStream_t stream);  // queues the gate kernel (Close without the checks)

  double timeout_s_ = kTimeoutSeconds;  // kTimeoutSeconds or STAGED_GATE_TIMEOUT_S
  volatile int* open_ = nullptr;        // host-mapped: set by the host to release the kernel
  volatile int* timed_out_ = nullptr;   // host-mapped: set by the kernel when it gave up
};

/// Opens a gate when it goes out of scope (so an exception in the work cannot leave the GPU
/// spinning until the timeout).
class GateGuard {
 public:
  /// @param[in] gate the gate to open on destruction
  explicit GateGuard(StreamGate& gate) : gate_(gate) {}
  ~GateGuard() { gate_.Open(); }
  GateGuard(const GateGuard&) = delete;
  GateGuard& operator=(const GateGuard&) = delete;

 private:
  StreamGate& gate_;
};

}  // namespace staged
