/**
 * @file global_bitonic.cu
 * @brief The sort of a bucket too large for shared memory, as the naive variant and stages 1 to
 *        3 do it: a bitonic network in global memory, one launch per step, after reading the
 *        bucket starts back to find such buckets.
 */
#include <algorithm>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/cuda_check.hpp"

namespace ch03::naive {

/**
 * @brief One step of a bitonic network over d[0, len) in global memory, in the "flip" form
 *        where every comparator is ascending, so the virtual 0xFFFFFFFF padding past len never
 *        moves and comparators that touch it are skipped.
 * @par Launch configuration
 * Any grid; threads loop over the m / 2 comparators (m = power of two >= len).
 * @param[in,out] d keys
 * @param[in] len keys
 * @param[in] m padded length
 * @param[in] k merge size of this step
 * @param[in] j comparator distance (k / 2 with @p flip)
 * @param[in] flip first step of a merge: element i of a k-run meets element k - 1 - i
 */
__global__ void GlobalBitonicStepKernel(std::uint32_t* d, std::uint64_t len, std::uint64_t m,
                                        std::uint64_t k, std::uint64_t j, bool flip) {
  for (std::uint64_t p = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; p < m / 2;
       p += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t lo, hi;
    if (flip) {
      const std::uint64_t base = (p / j) * k, o = p % j;
      lo = base + o;
      hi = base + k - 1 - o;
    } else {
      lo = 2 * p - (p & (j - 1));
      hi = lo + j;
    }
    if (hi >= len) continue;  // partner is padding: already in order
    const std::uint32_t a = d[lo], b = d[hi];
    if (a > b) {
      d[lo] = b;
      d[hi] = a;
    }
  }
}

void GlobalBitonicSort(std::uint32_t* d_out, std::size_t begin, std::size_t len,
                       cudaStream_t stream) {
  if (len < 2) return;
  const std::uint64_t m = PowerOfTwoAtLeast(len);
  const auto blocks = static_cast<unsigned>(std::min<std::uint64_t>((m / 2 + 255) / 256, 4096));
  for (std::uint64_t k = 2; k <= m; k *= 2) {
    for (std::uint64_t j = k / 2; j > 0; j /= 2) {
      GlobalBitonicStepKernel<<<blocks, 256, 0, stream>>>(d_out + begin, len, m, k, j, j == k / 2);
      CUDA_CHECK_LAST_LAUNCH();
    }
  }
}

void SortOversizedBuckets(const std::uint32_t* d_part, std::uint32_t* d_out,
                          const std::uint32_t* d_starts, std::uint32_t h, std::size_t n,
                          std::uint32_t tile, cudaStream_t stream) {
  // snippet-begin: ch03-naive-fallback
  // Buckets over the shared tile: the Portuguese report would truncate them; sort them in global
  // memory.
  std::vector<std::uint32_t> starts(h);
  CUDA_CHECK(cudaMemcpyAsync(starts.data(), d_starts, h * sizeof(std::uint32_t),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  for (std::uint32_t b = 0; b < h; ++b) {
    const std::size_t end = b + 1 < h ? starts[b + 1] : n;
    const std::size_t len = end - starts[b];
    if (len <= tile) continue;
    CUDA_CHECK(cudaMemcpyAsync(d_out + starts[b], d_part + starts[b], len * sizeof(std::uint32_t),
                               cudaMemcpyDeviceToDevice, stream));
    GlobalBitonicSort(d_out, starts[b], len, stream);
  }
  // snippet-end: ch03-naive-fallback
}

}  // namespace ch03::naive
