/**
 * @file naive.cu
 * @brief Chapter 02, naive variant: the Russian lab's counting sort with its bugs fixed.
 *
 * - Histogram: every byte does one `atomicAdd` on a global counter (256 hot addresses).
 * - Scan: Hillis-Steele doubling, one launch per step, O(n log n) work.
 * - Sort: every byte claims its output slot with an `atomicAdd` on its bin's offset and
 *   writes one byte (scattered stores). Unlike the Russian lab, the scatter runs on a full grid
 *   instead of one block, errors throw instead of `exit(0)`, and nothing calls the removed
 *   `cudaThreadSynchronize`.
 */
#include <cuda_runtime.h>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

namespace ch02::naive {

/// Threads per block of every naive kernel.
inline constexpr int kBlockSize = 256;

/// Blocks for a grid-stride loop over @p count items: one thread per item up to 2^20 blocks
/// (the loop covers the rest), at least one.
inline unsigned GridFor(std::size_t count) { return staged::GridFor(1u << 20, count, kBlockSize); }

/**
 * @brief One global `atomicAdd` per input byte.
 *
 * Thread i counts bytes i, i + stride, ... (grid-stride loop). Moves n bytes in, but issues n
 * atomics on only 256 addresses, so the L2 atomic units, not DRAM, set the pace.
 * @par Launch configuration
 * 1-D grid of `kBlockSize` threads, any number of blocks.
 * @pre @p hist is zeroed.
 * @param[in] in device bytes
 * @param[in] n number of bytes
 * @param[in,out] hist 256 global counters
 */
__global__ void GlobalAtomicHistogramKernel(const std::uint8_t* __restrict__ in, std::size_t n,
                                            std::uint32_t* __restrict__ hist) {
  // snippet-begin: ch02-naive-histogram
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    atomicAdd(&hist[in[i]], 1u);
  }
  // snippet-end: ch02-naive-histogram
}

/**
 * @brief First step of the exclusive Hillis-Steele scan: shift right by one, 0 in front.
 *
 * Thread i writes out[i] = in[i - 1] (0 for i = 0).
 * @tparam T element type
 * @par Launch configuration
 * 1-D grid-stride, `kBlockSize` threads per block.
 * @param[in] in input
 * @param[out] out shifted copy (must not alias @p in)
 * @param[in] n number of elements
 */
template <typename T>
__global__ void ShiftRightKernel(const T* __restrict__ in, T* __restrict__ out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = i == 0 ? T{0} : in[i - 1];
  }
}

/**
 * @brief One Hillis-Steele step: out[i] = in[i] + in[i - distance] (just in[i] below distance).
 *
 * After steps with distance 1, 2, 4, ... every element holds the sum of all before it. Reads
 * and writes separate buffers because every element reads a neighbour another thread updates.
 * @tparam T element type
 * @par Launch configuration
 * 1-D grid-stride, `kBlockSize` threads per block.
 * @param[in] in previous step
 * @param[out] out this step (must not alias @p in)
 * @param[in] n number of elements
 * @param[in] distance 2^step
 */
template <typename T>
__global__ void HillisSteeleStepKernel(const T* __restrict__ in, T* __restrict__ out, std::size_t n,
                                       std::size_t distance) {
  // snippet-begin: ch02-hillis-steele-step
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    out[i] = i >= distance ? static_cast<T>(in[i] + in[i - distance]) : in[i];
  }
  // snippet-end: ch02-hillis-steele-step
}

/**
 * @brief The Russian lab's placement: each byte takes the next free slot of its bin with an atomic
 *        and stores itself there.
 *
 * Thread i handles bytes i, i + stride, ...; slot = atomicAdd(&offsets[value], 1). Stores are
 * scattered single bytes, and equal values contend on one counter.
 * @par Launch configuration
 * 1-D grid-stride, `kBlockSize` threads per block (a full grid, not the Russian lab's one block).
 * @pre @p offsets holds the exclusive scan of the histogram of @p in.
 * @param[in] in device bytes
 * @param[in] n number of bytes
 * @param[in,out] offsets 256 running slot counters
 * @param[out] out sorted bytes
 */
__global__ void AtomicScatterKernel(const std::uint8_t* __restrict__ in, std::size_t n,
                                    std::uint32_t* __restrict__ offsets,
                                    std::uint8_t* __restrict__ out) {
  // snippet-begin: ch02-naive-scatter
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    const std::uint8_t value = in[i];
    out[atomicAdd(&offsets[value], 1u)] = value;
  }
  // snippet-end: ch02-naive-scatter
}

std::size_t HistogramTempBytes(std::size_t /*n*/) { return 0; }

void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("naive::Histogram", n, d_temp, temp_bytes, HistogramTempBytes(n));
  CUDA_CHECK(cudaMemsetAsync(d_hist, 0, kNumBins * sizeof(std::uint32_t), stream));
  if (n == 0) return;
  GlobalAtomicHistogramKernel<<<GridFor(n), kBlockSize, 0, stream>>>(d_in, n, d_hist);
  CUDA_CHECK_LAST_LAUNCH();
}

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  return AlignTemp(n * sizeof(T));
}

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  CheckArguments("naive::ExclusiveScan", n, d_temp, temp_bytes, ExclusiveScanTempBytes<T>(n));
  if (n == 0) return;
  // snippet-begin: ch02-hillis-steele-launch
  int steps = 0;
  while ((std::size_t{1} << steps) < n) ++steps;
  // Ping-pong between d_out and the scratch; start in whichever buffer makes the last step
  // land in d_out.
  T* buffers[2] = {d_out, static_cast<T*>(d_temp)};
  int current = steps % 2;
  ShiftRightKernel<T><<<GridFor(n), kBlockSize, 0, stream>>>(d_in, buffers[current], n);
  CUDA_CHECK_LAST_LAUNCH();
  for (int s = 0; s < steps; ++s) {
    HillisSteeleStepKernel<T><<<GridFor(n), kBlockSize, 0, stream>>>(
        buffers[current], buffers[1 - current], n, std::size_t{1} << s);
    CUDA_CHECK_LAST_LAUNCH();
    current = 1 - current;
  }
  // snippet-end: ch02-hillis-steele-launch
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
/// @endcond

std::size_t CountingSortTempBytes(std::size_t /*n*/) {
  return SortScratchBytes(ExclusiveScanTempBytes<std::uint32_t>(kNumBins));
}

void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("naive::CountingSort", n, d_temp, temp_bytes, CountingSortTempBytes(n));
  if (n == 0) return;
  const SortScratch s = CarveSortScratch(d_temp, ExclusiveScanTempBytes<std::uint32_t>(kNumBins));
  Histogram(d_in, n, s.hist, nullptr, 0, stream);
  ExclusiveScan<std::uint32_t>(s.hist, s.offsets, kNumBins, s.scan_temp, s.scan_temp_bytes, stream);
  AtomicScatterKernel<<<GridFor(n), kBlockSize, 0, stream>>>(d_in, n, s.offsets, d_out);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch02::naive
