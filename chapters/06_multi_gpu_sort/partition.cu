/**
 * @file partition.cu
 * @brief The sample and the partition by splitters on one GPU.
 *
 * The partition is chapter 03's stage 1 with k <= 8 destinations: a counting pass writes each
 * block's count per destination (destination-major, so one scan of the k x blocks matrix gives
 * every block's start within every run), then a scatter pass reads the same keys in the same
 * order and writes each one at its block's next slot of its run. A key's destination is a search
 * over the k - 1 splitters in (key, position) order, kept in shared memory. Warps aggregate:
 * per destination one ballot and one shared atomic per warp, not one per key.
 */
#include <cub/device/device_scan.cuh>

#include "chapters/06_multi_gpu_sort/partition.cuh"
#include "common/cuda_check.hpp"

namespace ch06::partition {
namespace {

__global__ void SampleKernel(const std::uint32_t* keys, std::size_t n, std::uint64_t first,
                             std::uint64_t seed, Tagged* sample) {
  const unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= static_cast<unsigned>(kSamplesPerGpu)) return;
  const std::uint64_t i = SamplePosition(j, kSamplesPerGpu, n, seed);
  sample[j] = Tagged{keys[i], first + i};
}

// The splitters in shared memory, loaded by the first k - 1 threads.
__device__ void LoadSplitters(const Tagged* splitters, int k, Tagged* s) {
  if (static_cast<int>(threadIdx.x) < k - 1) s[threadIdx.x] = splitters[threadIdx.x];
  __syncthreads();
}

// Pass 1: block b's count of keys per destination d at counts[d * blocks + b].
__global__ void __launch_bounds__(kThreads)
    CountKernel(const std::uint32_t* keys, std::size_t n, std::uint64_t first,
                const Tagged* splitters, int k, std::uint64_t* counts) {
  __shared__ Tagged s[kMaxGpus];
  __shared__ unsigned long long block_count[kMaxGpus];
  if (static_cast<int>(threadIdx.x) < k) block_count[threadIdx.x] = 0;
  LoadSplitters(splitters, k, s);
  const std::size_t begin = blockIdx.x * kChunk;
  const std::size_t end = begin + kChunk < n ? begin + kChunk : n;
  const unsigned lane = threadIdx.x % 32;
  for (std::size_t base = begin; base < end; base += kThreads) {
    const std::size_t i = base + threadIdx.x;
    const int d = i < end ? Bucket(keys[i], first + i, s, k - 1) : -1;
    for (int dest = 0; dest < k; ++dest) {
      const unsigned mask = __ballot_sync(0xFFFFFFFFu, d == dest);
      if (lane == 0 && mask != 0) {
        atomicAdd(&block_count[dest], static_cast<unsigned long long>(__popc(mask)));
      }
    }
  }
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < k) {
    counts[static_cast<std::size_t>(threadIdx.x) * gridDim.x + blockIdx.x] =
        block_count[threadIdx.x];
  }
}

// Pass 2: the same keys in the same blocks; starts[d * blocks + b] (the scanned counts) is where
// block b's keys of destination d begin in out.
__global__ void __launch_bounds__(kThreads)
    ScatterKernel(const std::uint32_t* keys, std::size_t n, std::uint64_t first,
                  const Tagged* splitters, int k, const std::uint64_t* starts, std::uint32_t* out) {
  __shared__ Tagged s[kMaxGpus];
  __shared__ unsigned long long next[kMaxGpus];
  if (static_cast<int>(threadIdx.x) < k) {
    next[threadIdx.x] = starts[static_cast<std::size_t>(threadIdx.x) * gridDim.x + blockIdx.x];
  }
  LoadSplitters(splitters, k, s);
  const std::size_t begin = blockIdx.x * kChunk;
  const std::size_t end = begin + kChunk < n ? begin + kChunk : n;
  const unsigned lane = threadIdx.x % 32;
  const unsigned below = (1u << lane) - 1u;
  for (std::size_t base = begin; base < end; base += kThreads) {
    const std::size_t i = base + threadIdx.x;
    const std::uint32_t key = i < end ? keys[i] : 0;
    const int d = i < end ? Bucket(key, first + i, s, k - 1) : -1;
    for (int dest = 0; dest < k; ++dest) {
      const unsigned mask = __ballot_sync(0xFFFFFFFFu, d == dest);
      if (mask == 0) continue;
      unsigned long long warp_start = 0;
      if (static_cast<int>(lane) == __ffs(mask) - 1) {
        warp_start = atomicAdd(&next[dest], static_cast<unsigned long long>(__popc(mask)));
      }
      warp_start = __shfl_sync(0xFFFFFFFFu, warp_start, __ffs(mask) - 1);
      if (d == dest) out[warp_start + __popc(mask & below)] = key;
    }
  }
}

// counts[d] = the length of run d: the distance from its first block's start to the next run's.
__global__ void TotalsKernel(const std::uint64_t* starts, std::size_t blocks, int k, std::size_t n,
                             std::uint64_t* counts) {
  const int d = static_cast<int>(threadIdx.x);
  if (d >= k) return;
  const std::uint64_t begin = starts[static_cast<std::size_t>(d) * blocks];
  const std::uint64_t end = d + 1 < k ? starts[static_cast<std::size_t>(d + 1) * blocks] : n;
  counts[d] = end - begin;
}

}  // namespace

std::size_t ScanTempBytes(std::size_t n, int k) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
      nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
      static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(Blocks(n) * k)));
  return bytes > 0 ? bytes : 1;
}

void Sample(const std::uint32_t* keys, std::size_t n, std::uint64_t first_position,
            std::uint64_t seed, Tagged* sample, cudaStream_t stream) {
  if (n == 0) return;
  SampleKernel<<<(kSamplesPerGpu + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
      keys, n, first_position, seed, sample);
  CUDA_CHECK_LAST_LAUNCH();
}

void Partition(const std::uint32_t* keys, std::size_t n, std::uint64_t first_position,
               const Tagged* splitters, int k, std::uint32_t* out, std::uint64_t* block_counts,
               void* scan_temp, std::size_t scan_temp_bytes, std::uint64_t* counts,
               cudaStream_t stream) {
  if (n == 0) {
    CUDA_CHECK(cudaMemsetAsync(counts, 0, sizeof(std::uint64_t) * k, stream));
    return;
  }
  const std::size_t blocks = Blocks(n);
  std::uint64_t* starts = block_counts + blocks * k;
  CountKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(keys, n, first_position,
                                                                      splitters, k, block_counts);
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_temp, scan_temp_bytes, block_counts, starts,
                                           static_cast<std::int64_t>(blocks * k), stream));
  ScatterKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(keys, n, first_position,
                                                                        splitters, k, starts, out);
  CUDA_CHECK_LAST_LAUNCH();
  TotalsKernel<<<1, kMaxGpus, 0, stream>>>(starts, blocks, k, n, counts);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch06::partition
