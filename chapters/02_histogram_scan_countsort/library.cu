/**
 * @file library.cu
 * @brief Chapter 02 baselines from CUB: `DeviceHistogram::HistogramEven` for the histogram,
 *        `DeviceScan::ExclusiveSum` for the scan, `DeviceRadixSort::SortKeys` on the 8 key bits
 *        for the sort, and the like-for-like counting sort built from library pieces
 *        (HistogramEven + ExclusiveSum + `DeviceCopy::Batched` filling the runs).
 *
 * Every call gets the library at its best: scratch preallocated by the caller, no allocation and
 * no host synchronisation, and the faster item count. CUB picks its offset type, and with it its
 * tuning, from the count's type, and which width is faster depends on the call and the size, so
 * the scan and the radix sort come with a 32-bit count where n fits (`ExclusiveScan`,
 * `CountingSort`) and with a 64-bit one (`...Count64`); the driver times both and compares with
 * the faster. `HistogramEven` needs no second form: given a 64-bit count for fewer than INT_MAX
 * bytes it converts the count to `int` itself and runs the 32-bit kernels. CUB reads a null scratch pointer as "report the
 * scratch size", so every `*TempBytes` returns at least `kTempAlignment` bytes: a caller never
 * passes null for real work.
 */
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <climits>
#include <cub/device/device_copy.cuh>
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

// True when n fits the 32-bit `int` count that keeps CUB on 32-bit offsets.
bool FitsInt(std::size_t n) { return n <= static_cast<std::size_t>(INT_MAX); }

// snippet-begin: ch02-with-count
// Calls @p f with n as an `int` (32-bit offsets in CUB) when it fits and @p wide is false,
// otherwise as `std::int64_t`, so that a size query and the call it sizes use the same type.
template <typename F>
cudaError_t WithCount(bool wide, std::size_t n, F&& f) {
  return !wide && FitsInt(n) ? f(static_cast<int>(n)) : f(static_cast<std::int64_t>(n));
}
// snippet-end: ch02-with-count

// Run b of the sorted bytes: n_b copies of the byte b (DeviceCopy::Batched input ranges).
struct ConstantRun {
  __host__ __device__ thrust::constant_iterator<std::uint8_t> operator()(std::uint32_t b) const {
    return thrust::make_constant_iterator(static_cast<std::uint8_t>(b));
  }
};

// Where run b starts in the output: at the exclusive scan of the counts.
struct RunStart {
  std::uint8_t* out;
  const std::uint32_t* offsets;
  __host__ __device__ std::uint8_t* operator()(std::uint32_t b) const { return out + offsets[b]; }
};

// snippet-begin: ch02-fill-runs
// DeviceCopy::Batched over the 256 runs, or its size query when d_temp is null.
cudaError_t FillRuns(void* d_temp, std::size_t& temp_bytes, std::uint8_t* d_out,
                     const std::uint32_t* d_counts, const std::uint32_t* d_offsets,
                     cudaStream_t stream) {
  const thrust::counting_iterator<std::uint32_t> bins(0);
  return cub::DeviceCopy::Batched(d_temp, temp_bytes,
                                  thrust::make_transform_iterator(bins, ConstantRun{}),
                                  thrust::make_transform_iterator(bins, RunStart{d_out, d_offsets}),
                                  d_counts, kNumBins, stream);
}
// snippet-end: ch02-fill-runs

// The largest scratch of the pipeline's three CUB calls (they run one after the other on one
// stream, so they share it).
std::size_t PipelineCubBytes(std::size_t n) {
  std::size_t hist_bytes = 0;
  std::size_t scan_bytes = 0;
  std::size_t fill_bytes = 0;
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
      nullptr, hist_bytes, static_cast<const std::uint8_t*>(nullptr),
      static_cast<std::uint32_t*>(nullptr), kLevels, kLowerLevel, kUpperLevel,
      static_cast<std::int64_t>(n)));
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes,
                                           static_cast<const std::uint32_t*>(nullptr),
                                           static_cast<std::uint32_t*>(nullptr), kNumBins));
  CUDA_CHECK(FillRuns(nullptr, fill_bytes, nullptr, nullptr, nullptr, nullptr));
  return Rounded(std::max({hist_bytes, scan_bytes, fill_bytes}));
}
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
  // One form: HistogramEven itself runs its 32-bit-offset kernels for a 64-bit count of fewer
  // than INT_MAX bytes (device_histogram.cuh), so both widths are the same call.
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(d_temp, temp_bytes, d_in, d_hist, kLevels,
                                                 kLowerLevel, kUpperLevel,
                                                 static_cast<std::int64_t>(n), stream));
}

namespace {
template <typename T>
std::size_t ScanBytes(bool wide, std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(WithCount(wide, n, [&](auto count) {
    return cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const T*>(nullptr),
                                         static_cast<T*>(nullptr), count);
  }));
  return bytes;
}

template <typename T>
void Scan(const char* who, bool wide, const T* d_in, T* d_out, std::size_t n, void* d_temp,
          std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments(who, n, d_temp, temp_bytes, ExclusiveScanTempBytes<T>(n));
  if (n == 0) return;
  CUDA_CHECK(WithCount(wide, n, [&](auto count) {
    return cub::DeviceScan::ExclusiveSum(d_temp, temp_bytes, d_in, d_out, count, stream);
  }));
}
}  // namespace

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  return Rounded(std::max(ScanBytes<T>(false, n), ScanBytes<T>(true, n)));
}

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  Scan("library::ExclusiveScan", false, d_in, d_out, n, d_temp, temp_bytes, stream);
}

template <typename T>
void ExclusiveScanCount64(const T* d_in, T* d_out, std::size_t n, void* d_temp,
                          std::size_t temp_bytes, cudaStream_t stream) {
  Scan("library::ExclusiveScanCount64", true, d_in, d_out, n, d_temp, temp_bytes, stream);
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
template std::size_t ExclusiveScanTempBytes<std::uint32_t>(std::size_t);
template std::size_t ExclusiveScanTempBytes<std::int32_t>(std::size_t);
template void ExclusiveScan<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t, void*,
                                           std::size_t, cudaStream_t);
template void ExclusiveScan<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t, void*,
                                          std::size_t, cudaStream_t);
template void ExclusiveScanCount64<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t,
                                                  void*, std::size_t, cudaStream_t);
template void ExclusiveScanCount64<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t,
                                                 void*, std::size_t, cudaStream_t);
/// @endcond

namespace {
std::size_t RadixBytes(bool wide, std::size_t n) {
  std::size_t bytes = 0;
  CUDA_CHECK(WithCount(wide, n, [&](auto count) {
    return cub::DeviceRadixSort::SortKeys(nullptr, bytes, static_cast<const std::uint8_t*>(nullptr),
                                          static_cast<std::uint8_t*>(nullptr), count, 0, 8);
  }));
  return bytes;
}

void Radix(const char* who, bool wide, const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n,
           void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments(who, n, d_temp, temp_bytes, CountingSortTempBytes(n));
  if (n == 0) return;
  // snippet-begin: ch02-cub-radix
  CUDA_CHECK(WithCount(wide, n, [&](auto count) {
    return cub::DeviceRadixSort::SortKeys(d_temp, temp_bytes, d_in, d_out, count, 0, 8, stream);
  }));
  // snippet-end: ch02-cub-radix
}
}  // namespace

std::size_t CountingSortTempBytes(std::size_t n) {
  return Rounded(std::max(RadixBytes(false, n), RadixBytes(true, n)));
}

void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream) {
  Radix("library::CountingSort", false, d_in, d_out, n, d_temp, temp_bytes, stream);
}

void CountingSortCount64(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                         std::size_t temp_bytes, cudaStream_t stream) {
  Radix("library::CountingSortCount64", true, d_in, d_out, n, d_temp, temp_bytes, stream);
}

std::size_t CountingSortPipelineTempBytes(std::size_t n) {
  return SortScratchBytes(PipelineCubBytes(n));
}

void CountingSortPipeline(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n,
                          void* d_temp, std::size_t temp_bytes, cudaStream_t stream) {
  const std::size_t cub_bytes = PipelineCubBytes(n);
  CheckArguments("library::CountingSortPipeline", n, d_temp, temp_bytes,
                 SortScratchBytes(cub_bytes));
  if (n == 0) return;
  // snippet-begin: ch02-cub-pipeline
  const SortScratch s = CarveSortScratch(d_temp, cub_bytes);
  std::size_t bytes = s.scan_temp_bytes;
  CUDA_CHECK(cub::DeviceHistogram::HistogramEven(s.scan_temp, bytes, d_in, s.hist, kLevels,
                                                 kLowerLevel, kUpperLevel,
                                                 static_cast<std::int64_t>(n), stream));
  bytes = s.scan_temp_bytes;
  CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(s.scan_temp, bytes, s.hist, s.offsets, kNumBins, stream));
  bytes = s.scan_temp_bytes;
  CUDA_CHECK(FillRuns(s.scan_temp, bytes, d_out, s.hist, s.offsets, stream));
  // snippet-end: ch02-cub-pipeline
}

}  // namespace ch02::library
