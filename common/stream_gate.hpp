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
 * gives up after `kTimeoutSeconds` and `TimedOut()` reports it, so a mistake ends in an error
 * message rather than a hang. The environment variable `STAGED_GATE_TIMEOUT_S` sets another
 * timeout in seconds; `STAGED_GATE_TIMEOUT_S=0` turns the gate off (`Close` queues nothing, so
 * timings include the host's share). The GPU suite turns it off for its compute-sanitizer runs,
 * which check correctness, not time: there every launch and copy is instrumented, queuing a rep
 * can take seconds, and a tool that waits for the stream inside an API call would wait for the
 * gate until its timeout.
 */
#pragma once

#include <cuda_runtime_api.h>

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
  /// nothing when `STAGED_GATE_TIMEOUT_S=0` turned the gate off.
  void Close(cudaStream_t stream);
  /// Lets the gate kernel finish. Safe to call when the gate is already open.
  void Open() noexcept;
  /// True when the last closed gate opened by its timeout instead of by `Open()` (valid once the
  /// stream has passed the gate).
  bool TimedOut() const noexcept;

 private:
  double timeout_s_ = kTimeoutSeconds;  // kTimeoutSeconds or STAGED_GATE_TIMEOUT_S
  bool off_ = false;                    // STAGED_GATE_TIMEOUT_S=0: Close() queues nothing
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
