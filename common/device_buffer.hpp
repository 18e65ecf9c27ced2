/**
 * @file device_buffer.hpp
 * @brief RAII owners of device memory (`DeviceBuffer`) and page-locked host memory
 *        (`PinnedBuffer`). Move-only; a size of zero allocates nothing.
 *
 * @code
 * staged::DeviceBuffer<float> d_x(h_x.size());
 * d_x.CopyFromHost(h_x);
 * Kernel<<<grid, block>>>(d_x.data(), d_x.size());
 * std::vector<float> back = d_x.ToHost();
 * @endcode
 *
 * Transfers that name a stream are ordered on it; those that name none wait for all device work
 * first, so they can never race with a kernel on another stream.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "cuda_check.hpp"
#include "errors.hpp"

namespace staged {

/// Copies @p count elements from host memory to @p device once all queued device work has
/// finished, and returns once they are in device memory. `cudaMemcpy` from pageable host memory
/// may return while its last DMA to the device is still in flight (the CUDA runtime's "API
/// synchronization behavior"): work queued next on the legacy default stream waits for that
/// DMA, a kernel on a non-blocking stream does not.
/// @param[out] device where the elements go
/// @param[in] host the elements
/// @param[in] count how many
template <typename T>
void CopyToDeviceAndWait(T* device, const T* host, std::size_t count) {
  if (count == 0) return;
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(device, host, count * sizeof(T), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSynchronize());
}

/// Owns `size()` elements of `T` in device global memory (allocated with `cudaMalloc`).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates @p count elements (uninitialised); @p count == 0 allocates nothing.
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  /// Allocates and copies @p host to the device.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    CopyFromHost(host.data(), host.size());
  }
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes ownership; @p other is left empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  /// Frees what this owns, then takes ownership of @p other's memory.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }

  T* data() noexcept { return data_; }                 ///< device pointer (null if empty)
  const T* data() const noexcept { return data_; }     ///< device pointer (null if empty)
  std::size_t size() const noexcept { return size_; }  ///< number of elements
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }  ///< size in bytes
  bool empty() const noexcept { return size_ == 0; }                ///< true when nothing is owned

  // Every transfer either names its stream (ordered on that stream, and the host waits for it)
  // or names none and is ordered against *all* work on the device: it waits for everything
  // queued so far, on any stream, and is finished when it returns. A buffer filled without a
  // stream is therefore safe to hand to a kernel on a non-blocking stream.

  /// Copies @p count elements from host memory on @p stream and waits for the copy; throws
  /// `std::out_of_range` past the end.
  void CopyFromHost(const T* host, std::size_t count, cudaStream_t stream) {
    CheckCount(count);
    if (count > 0) {
      CUDA_CHECK(cudaMemcpyAsync(data_, host, count * sizeof(T), cudaMemcpyHostToDevice, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }
  /// Copies @p count elements from host memory once all queued device work has finished, and
  /// waits until they are in device memory (`CopyToDeviceAndWait`).
  void CopyFromHost(const T* host, std::size_t count) {
    CheckCount(count);
    CopyToDeviceAndWait(data_, host, count);
  }
  /// Copies a whole host vector (its size must not exceed `size()`), ordered as above.
  void CopyFromHost(const std::vector<T>& host) { CopyFromHost(host.data(), host.size()); }
  /// Copies the first @p count elements to host memory on @p stream and waits for the copy.
  void CopyToHost(T* host, std::size_t count, cudaStream_t stream) const {
    CheckCount(count);
    if (count > 0) {
      CUDA_CHECK(cudaMemcpyAsync(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost, stream));
      CUDA_CHECK(cudaStreamSynchronize(stream));
    }
  }
  /// Copies the first @p count elements to host memory once all queued device work (on every
  /// stream) has finished.
  void CopyToHost(T* host, std::size_t count) const {
    CheckCount(count);
    if (count == 0) return;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(host, data_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  /// Returns a host copy of the whole buffer, once all queued device work has finished.
  std::vector<T> ToHost() const {
    std::vector<T> host(size_);
    CopyToHost(host.data(), size_);
    return host;
  }
  /// Queues a fill of every byte with @p byte on @p stream (e.g. 0xFF to poison an output before
  /// a kernel on the same stream writes it). Does not wait.
  void FillBytes(int byte, cudaStream_t stream) {
    if (size_ > 0) CUDA_CHECK(cudaMemsetAsync(data_, byte, bytes(), stream));
  }
  /// Sets every byte to @p byte after all queued device work, and waits for it: ordered before
  /// whatever is queued next on any stream.
  void FillBytes(int byte) {
    if (size_ == 0) return;
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemset(data_, byte, bytes()));
    CUDA_CHECK(cudaDeviceSynchronize());
  }

 private:
  void CheckCount(std::size_t count) const {
    if (count > size_) throw std::out_of_range("DeviceBuffer: copy of more elements than owned");
  }
  void Release() noexcept {
    if (data_ != nullptr) CUDA_CHECK_NOTHROW(cudaFree(data_));
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Owns `size()` elements of page-locked host memory (`cudaMallocHost`), for fast async copies.
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  /// Allocates @p count pinned elements; zero allocates nothing.
  explicit PinnedBuffer(std::size_t count) : size_(count) {
    if (count > 0) CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  ~PinnedBuffer() {
    if (data_ != nullptr) CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  /// Takes ownership; @p other is left empty.
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  /// Swaps ownership with @p other (whose old memory is freed by its destructor).
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  T* data() noexcept { return data_; }                        ///< host pointer (null if empty)
  const T* data() const noexcept { return data_; }            ///< host pointer (null if empty)
  std::size_t size() const noexcept { return size_; }         ///< number of elements
  T& operator[](std::size_t i) noexcept { return data_[i]; }  ///< element access
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }  ///< element access

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace staged
