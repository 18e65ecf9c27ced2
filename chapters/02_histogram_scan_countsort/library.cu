/**
 * @file library.cu
 * @brief Chapter 02 baselines from CUB: `DeviceHistogram::HistogramEven` for the histogram,
 *        `DeviceScan::ExclusiveSum` for the scan and `DeviceRadixSort::SortKeys` on the 8 key
 *        bits for the sort.
 *
 * CUB reads a null scratch pointer as "report the scratch size", so every `*TempBytes`
 * returns at least `kTempAlignment` bytes: a caller never passes null for real work.
 */
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/cuda_check.hpp"

namespace ch02::library {

namespace {
// 257 evenly spaced levels 0, 1, ..., 256: bin b holds exactly the byte value b.
constexpr int kLevels = kNumBins + 1;
constexpr int kLowerLevel = 0;
constexpr int kUpperLevel = kNumBins;

// CUB's size queries, rounded up and never zero (see the file comment).
std::size_t Rounded(std::size_t bytes) { return AlignTemp(bytes > 0 ? bytes : 1); }
}  // namespace

std::size_t HistogramTempBytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(
      cub::DeviceHistogram::HistogramEven(nullptr, bytes, static_cast<const std::uint8_t*>(nullptr),
                                          static_cast<std::uint32_t*>(nullptr), kLevels,
                                          kLowerLevel, kUpperLevel, static_cast<std::int64_t>(n)));
  return Rounded(bytes);
}

void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("library::Histogram", n, d_temp, temp_bytes, HistogramTempBytes(n));
  if (n == 0) {
    CUDA_CHECK(cudaMemsetAsync(d_hist, 0, kNumBins * sizeof(std::uint32_t), stream));
    return;
  }
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(d_temp, temp_bytes, d_in, d_hist, kLevels,
                                                 kLowerLevel, kUpperLevel,
                                                 static_cast<std::int64_t>(n), stream));
}

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const T*>(nullptr),
                                           static_cast<T*>(nullptr), n));
  return Rounded(bytes);
}

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  CheckArguments("library::ExclusiveScan", n, d_temp, temp_bytes, ExclusiveScanTempBytes<T>(n));
  if (n == 0) return;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, d_in, d_out, n, stream));
}

/// @cond INSTANTIATIONS
template std::size_t ExclusiveScanTempBytes<std::uint32_t>(std::size_t);
template std::size_t ExclusiveScanTempBytes<std::int32_t>(std::size_t);
template void ExclusiveScan<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t, void*,
                                           std::size_t, cudaStream_t);
template void ExclusiveScan<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t, void*,
                                          std::size_t, cudaStream_t);
/// @endcond

std::size_t CountingSortTempBytes(std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, bytes,
                                            static_cast<const std::uint8_t*>(nullptr),
                                            static_cast<std::uint8_t*>(nullptr), n, 0, 8));
  return Rounded(bytes);
}

void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("library::CountingSort", n, d_temp, temp_bytes, CountingSortTempBytes(n));
  if (n == 0) return;
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(d_temp, temp_bytes, d_in, d_out, n, 0, 8, stream));
}

}  // namespace ch02::library
