/**
 * @file stream.hpp
 * @brief RAII wrappers for CUDA streams and events.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <utility>

#include "cuda_check.hpp"

namespace staged {

/// Owns a non-blocking CUDA stream.
class Stream {
 public:
  /// Creates a stream that does not synchronise with the legacy default stream.
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (stream_ != nullptr) CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  /// Takes ownership; @p other is left empty.
  Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  /// Swaps ownership with @p other.
  Stream& operator=(Stream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }
  cudaStream_t get() const noexcept { return stream_; }  ///< the raw handle
  /// Blocks the host until all work queued on the stream has finished.
  void Synchronize() const { CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

/// Owns a CUDA event (with timing enabled).
class Event {
 public:
  /// Creates a timing event.
  Event() { CUDA_CHECK(cudaEventCreate(&event_)); }
  ~Event() {
    if (event_ != nullptr) CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  /// Takes ownership; @p other is left empty.
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  /// Swaps ownership with @p other.
  Event& operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  cudaEvent_t get() const noexcept { return event_; }  ///< the raw handle
  /// Records the event on @p stream.
  void Record(cudaStream_t stream = nullptr) { CUDA_CHECK(cudaEventRecord(event_, stream)); }
  /// Blocks the host until the event has completed.
  void Synchronize() const { CUDA_CHECK(cudaEventSynchronize(event_)); }
  /// Milliseconds between @p start and this event (both must have completed).
  float MillisecondsSince(const Event& start) const {
    float ms = 0.0f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace staged
