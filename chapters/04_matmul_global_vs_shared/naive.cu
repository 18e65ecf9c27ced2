/**
 * @file naive.cu
 * @brief The naive kernel: one thread per element of C, A and B read from global memory
 *        (the Czech slides' first kernel, for any M, N, K).
 *
 * Each thread reads a row of A and a column of B: 2·K loads for 2·K flops, an arithmetic
 * intensity of 0.25 flop/byte if every load went to DRAM. On a GTX 280 (35.5 G floats/s) that
 * bounds the kernel at about 66.8 GFLOP/s (36.6 measured); on an H200 the L1 and L2 caches
 * serve most re-reads, which is why this kernel is far less slow than the bound suggests.
 */
#include <cstdint>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/cuda_check.hpp"

namespace ch04::naive {

/// Threads per block along each axis (16×16 = 256 threads, as in the slides).
constexpr int kBlockSide = 16;

/**
 * @brief One thread computes C[row][col] = Σ_p A[row][p]·B[p][col] straight from global memory.
 *
 * x runs along the columns of C, so the 16 threads of a half-warp read 16 consecutive floats of
 * a row of B (coalesced) and the same A element (one broadcast), and write 16 consecutive
 * elements of C. Moves 2·K·sizeof(T) bytes per thread (before caching) for 2·K operations.
 * @tparam T float or int32_t
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * block (16, 16), grid (ceil(N/16), ceil(M/16)).
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias.
 */
template <typename T>
__global__ void MatmulNaiveKernel(const T* __restrict__ a, const T* __restrict__ b,
                                  T* __restrict__ c, int m, int n, int k) {
  // snippet-begin: ch04-naive-kernel
  const int col = blockIdx.x * blockDim.x + threadIdx.x;
  const int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;  // the last blocks overhang when M or N is not a multiple
  const T* a_row = a + static_cast<std::size_t>(row) * k;
  const T* b_col = b + col;
  T sum = 0;
  for (int p = 0; p < k; ++p) {
    sum += a_row[p] * *b_col;
    b_col += n;  // next row of B, same column: the pointer walk avoids a 32-bit p*n overflow
  }
  c[static_cast<std::size_t>(row) * n + col] = sum;
  // snippet-end: ch04-naive-kernel
}

template <typename T>
void Matmul(const T* d_a, const T* d_b, T* d_c, int m, int n, int k, cudaStream_t stream) {
  CheckDimensions(m, n, k);
  if (m == 0 || n == 0) return;
  const dim3 block(kBlockSide, kBlockSide);
  const dim3 grid((n + kBlockSide - 1) / kBlockSide, (m + kBlockSide - 1) / kBlockSide);
  MatmulNaiveKernel<T><<<grid, block, 0, stream>>>(d_a, d_b, d_c, m, n, k);
  CUDA_CHECK_LAST_LAUNCH();
}

/// @cond
template void Matmul<float>(const float*, const float*, float*, int, int, int, cudaStream_t);
template void Matmul<std::int32_t>(const std::int32_t*, const std::int32_t*, std::int32_t*, int,
                                   int, int, cudaStream_t);
/// @endcond

}  // namespace ch04::naive
