/**
 * @file regblock.cu
 * @brief Stage 2, register blocking: a 256-thread block computes a 128×128 tile of C, each
 *        thread an 8×8 sub-tile accumulated in 64 registers.
 *
 * Changes relative to stage 1 (optimized.cu):
 * 1. Block tile 128×128×8 instead of 16×16×16: every element loaded from global memory feeds
 *    128 outputs (32 flop/byte instead of 4).
 * 2. Per k, a thread reads 8 values of A and 8 of B from shared memory and does 64 FFMAs
 *    (2 flop/byte of shared traffic instead of 0.25).
 */
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Rows and columns of C per block of stage 2.
constexpr int kRegBlockTile = 128;
/// Threads per block of stage 2 (each computes 8×8 = 64 outputs).
constexpr int kRegBlockThreads = 256;

/**
 * @brief Stage 2: a block computes a 128×128 tile of C; thread t computes the 8×8 sub-tile at
 *        rows 8·(t/16) .. +7 and columns 8·(t%16) .. +7, accumulated in 64 registers.
 *
 * Loads are scalar and bounds-checked; the B reads of a half-warp hit addresses 8 floats apart
 * (4-way bank conflicts), which stage 3 removes.
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; 8 KiB of static shared memory.
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias.
 */
__global__ void __launch_bounds__(kRegBlockThreads)
    MatmulRegBlockKernel(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, int m, int n, int k) {
  constexpr int kBm = kRegBlockTile, kBn = kRegBlockTile;
  __shared__ float a_tile[kBm][kBk];
  __shared__ float b_tile[kBk][kBn];
  const TileCoord tile = BlockTile<false>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  // snippet-begin: ch04-regblock-loop
  const int row0 = (threadIdx.x / 16) * 8;  // this thread's first row inside the block tile
  const int col0 = (threadIdx.x % 16) * 8;  // and first column
  float acc[8][8] = {};
  for (int k0 = 0; k0 < k; k0 += kBk) {
    // 1024 elements per tile, 4 per thread; idx runs along rows so warps read whole rows.
#pragma unroll
    for (int i = 0; i < kBm * kBk / kRegBlockThreads; ++i) {
      const int idx = threadIdx.x + i * kRegBlockThreads;
      const int ar = idx / kBk, ac = idx % kBk;
      a_tile[ar][ac] =
          (m0 + ar < m && k0 + ac < k) ? a[static_cast<std::size_t>(m0 + ar) * k + k0 + ac] : 0.f;
      const int br = idx / kBn, bc = idx % kBn;
      b_tile[br][bc] =
          (k0 + br < k && n0 + bc < n) ? b[static_cast<std::size_t>(k0 + br) * n + n0 + bc] : 0.f;
    }
    __syncthreads();  // tiles complete before any thread computes
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      float a_frag[8], b_frag[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        a_frag[i] = a_tile[row0 + i][p];
        b_frag[i] = b_tile[p][col0 + i];
      }
      OuterProduct(a_frag, b_frag, acc);
    }
    __syncthreads();  // everyone done reading before the next tile is stored
  }
  // snippet-end: ch04-regblock-loop
  // Rows row0..row0+7 as two groups of 4 (step 4), likewise the columns.
  StoreOutputs<2, 2>(c, n, m, n, m0 + row0, 4, n0 + col0, 4, acc, false);
}

void LaunchRegBlock(const Problem& p, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(((p.m + kRegBlockTile - 1) / kRegBlockTile) *
                                                ((p.n + kRegBlockTile - 1) / kRegBlockTile));
  MatmulRegBlockKernel<<<blocks, kRegBlockThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch04::optimized::detail
