/**
 * @file library.cu
 * @brief The baselines, each at its best: cub::DeviceRadixSort::SortKeys with preallocated
 *        scratch and a 32-bit item count (the `vs_library` reference), and thrust::sort with a
 *        preallocated allocator and no stream synchronisation.
 *
 * Both run on the caller's stream and neither allocates nor synchronises the host once its
 * workspace exists, so they are timed under the same conditions as mppSort.
 */
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/cuda_check.hpp"

namespace ch03::library {

namespace {

/// Bytes CUB asks for to sort up to @p n keys with the count types `CubRadixSort` passes (a
/// 32-bit count up to INT_MAX keys, a 64-bit one beyond).
std::size_t CubTempBytes(std::size_t n) {
  const auto* keys_in = static_cast<const std::uint32_t*>(nullptr);
  auto* keys_out = static_cast<std::uint32_t*>(nullptr);
  std::size_t narrow = 0, wide = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, narrow, keys_in, keys_out,
                                            static_cast<int>(std::min<std::size_t>(n, INT_MAX))));
  if (n > INT_MAX) {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, wide, keys_in, keys_out,
                                              static_cast<std::int64_t>(n)));
  }
  return std::max(narrow, wide);
}

/// Bytes thrust::sort allocates for @p n keys: a second key buffer (rounded to 128 bytes) and
/// CUB's scratch for thrust's own (64-bit) count.
std::size_t ThrustTempBytes(std::size_t n) {
  std::size_t cub_bytes = 0;
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr);
  CUDA_CHECK(
      cub::DeviceRadixSort::SortKeys(nullptr, cub_bytes, keys, static_cast<std::int64_t>(n)));
  return (n * sizeof(std::uint32_t) + 127) / 128 * 128 + cub_bytes;
}

}  // namespace

PreallocatedAllocator::PreallocatedAllocator(std::size_t bytes)
    : block_(std::max<std::size_t>(bytes, 1)) {}

char* PreallocatedAllocator::allocate(std::ptrdiff_t bytes) {
  if (in_use_ || static_cast<std::size_t>(bytes) > block_.size()) {
    // thrust::sort of 32-bit keys asks for one block, sized by ThrustTempBytes: anything else
    // would need an allocation inside a timed call, which this allocator refuses to hide.
    throw std::logic_error("thrust::sort asked for more temporary memory than preallocated");
  }
  in_use_ = true;
  return block_.data();
}

void PreallocatedAllocator::deallocate(char* p, std::size_t) {
  if (p == block_.data()) in_use_ = false;
}

Workspace::Workspace(std::size_t capacity)
    : cub_temp(std::max<std::size_t>(CubTempBytes(capacity), 1)),
      thrust_alloc(ThrustTempBytes(capacity) + (std::size_t{1} << 20)) {}  // 1 MiB slack

void ThrustSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
                cudaStream_t stream) {
  if (n == 0) return;
  // thrust::sort works in place: the copy keeps the input intact (8n bytes, counted in).
  CUDA_CHECK(
      cudaMemcpyAsync(d_out, d_in, n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
  // snippet-begin: ch03-thrust
  thrust::device_ptr<std::uint32_t> p(d_out);
  // thrust::sort of unsigned 32-bit keys with operator< dispatches to CUB's DeviceRadixSort
  // (with thrust's 64-bit count). par_nosync: no host synchronisation at the end; the allocator
  // hands out the workspace's block, so no cudaMalloc/cudaFree either.
  thrust::sort(thrust::cuda::par_nosync(ws.thrust_alloc).on(stream), p, p + n);
  // snippet-end: ch03-thrust
  CUDA_CHECK_LAST_LAUNCH();
}

void CubRadixSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
                  cudaStream_t stream) {
  if (n == 0) return;
  std::size_t bytes = ws.cub_temp.size();
  // snippet-begin: ch03-cub
  // A 32-bit count where n allows: a 64-bit one selects wider offsets and a slower kernel.
  if (n <= INT_MAX) {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, d_in, d_out,
                                              static_cast<int>(n), 0, 32, stream));
  } else {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, d_in, d_out,
                                              static_cast<std::int64_t>(n), 0, 32, stream));
  }
  // snippet-end: ch03-cub
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch03::library
