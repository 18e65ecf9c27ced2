/**
 * @file library.cu
 * @brief The baselines, each at its best: cub::DeviceRadixSort::SortKeys in each of its forms
 *        (keys to a second array, or a DoubleBuffer that overwrites the input) with a 32-bit and
 *        a 64-bit item count, with preallocated scratch; and thrust::sort with a preallocated
 *        allocator and no stream synchronisation.
 *
 * The faster count width depends on the size: CUB picks its kernels' offset types and tuning by
 * the count's type, so the driver times every form and compares mppSort with the fastest that
 * keeps its input (and its DoubleBuffer form with the fastest DoubleBuffer row). All run on the
 * caller's stream and none allocates or synchronises the host once its workspace exists, so they
 * are timed under the same conditions as mppSort.
 */
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <stdexcept>
#include <vector>

#include "chapters/03_mppsort/library.cuh"
#include "common/cuda_check.hpp"

namespace ch03::library {

namespace {

/// Bytes CUB asks for to sort up to @p n keys in any form and count width it can take.
std::size_t CubTempBytes(std::size_t n) {
  const auto* keys_in = static_cast<const std::uint32_t*>(nullptr);
  auto* keys_out = static_cast<std::uint32_t*>(nullptr);
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr);
  const int narrow_n = static_cast<int>(std::min<std::size_t>(n, INT_MAX));
  const auto wide_n = static_cast<std::int64_t>(n);
  std::size_t bytes[4] = {};
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes[0], keys_in, keys_out, narrow_n));
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes[1], keys_in, keys_out, wide_n));
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes[2], keys, narrow_n));
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes[3], keys, wide_n));
  return *std::max_element(bytes, bytes + 4);
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

const std::vector<CubEntry>& CubEntries() {
  static const std::vector<CubEntry> entries = {
      {CubForm::kKeys32, "library:cub-keys32", true, false},
      {CubForm::kKeys64, "library:cub-keys64", true, true},
      {CubForm::kDoubleBuffer32, "library:cub-dbuf32", false, false},
      {CubForm::kDoubleBuffer64, "library:cub-dbuf64", false, true},
  };
  return entries;
}

void CubSortKeys(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, bool wide_count,
                 Workspace& ws, cudaStream_t stream) {
  if (n == 0) return;
  if (!CountHolds(n, wide_count)) {
    throw std::invalid_argument("CubSortKeys: a 32-bit count holds at most INT_MAX keys");
  }
  std::size_t bytes = ws.cub_temp.size();
  // snippet-begin: ch03-cub
  // The count's type picks CUB's offset type and its tuning: both widths are timed.
  if (wide_count) {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, d_in, d_out,
                                              static_cast<std::int64_t>(n), 0, 32, stream));
  } else {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, d_in, d_out,
                                              static_cast<int>(n), 0, 32, stream));
  }
  // snippet-end: ch03-cub
  CUDA_CHECK_LAST_LAUNCH();
}

std::uint32_t* CubSortDoubleBuffer(std::uint32_t* d_keys, std::uint32_t* d_alt, std::size_t n,
                                   bool wide_count, Workspace& ws, cudaStream_t stream) {
  if (n == 0) return d_keys;
  if (!CountHolds(n, wide_count)) {
    throw std::invalid_argument("CubSortDoubleBuffer: a 32-bit count holds at most INT_MAX keys");
  }
  std::size_t bytes = ws.cub_temp.size();
  // snippet-begin: ch03-cub-double-buffer
  // The DoubleBuffer form ping-pongs between the two arrays and leaves the keys in whichever
  // the last pass wrote: no copy back, and the input is lost.
  cub::DoubleBuffer<std::uint32_t> keys(d_keys, d_alt);
  if (wide_count) {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, keys,
                                              static_cast<std::int64_t>(n), 0, 32, stream));
  } else {
    CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, keys, static_cast<int>(n),
                                              0, 32, stream));
  }
  // snippet-end: ch03-cub-double-buffer
  CUDA_CHECK_LAST_LAUNCH();
  return keys.Current();
}

}  // namespace ch03::library
