/**
 * @file vectorized.cu
 * @brief Stage 3: stage 2 with 16-byte global loads, A stored transposed and padded in shared
 *        memory, and each thread's outputs spread so that all shared reads are conflict-free
 *        float4s.
 *
 * Changes relative to stage 2 (regblock.cu):
 * 1. Global loads of 16 bytes when the rows are 16-byte aligned (K % 4 == 0 for A, N % 4 == 0
 *    for B and C, aligned base pointers); otherwise the same tile element by element.
 * 2. A is stored transposed, `a_tile[k][m]`, rows padded to 132 floats: the 8 values of A a
 *    thread needs for one k are two float4s, and the transposing stores hit 32 banks.
 * 3. Thread t computes rows 4·(t/16) + {0, 64} + 0..3 and columns 4·(t%16) + {0, 64} + 0..3:
 *    per k, 4 shared loads of 16 bytes instead of 16 of 4 bytes, and the 16 threads of a
 *    half-warp read 16 consecutive float4s of B (no conflict) and 2 of A (broadcast).
 * 4. No bounds checks at all when M, N are multiples of 128 and K of 8 (a template flag).
 */
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Rows and columns of C per block of stage 3.
constexpr int kVecTile = 128;
/// Threads per block of stage 3.
constexpr int kVecThreads = 256;

/**
 * @brief Stage 3: as stage 2, with 16-byte global loads, A transposed in shared memory and
 *        each thread's outputs at rows 4·(t/16) + {0, 64} + 0..3, columns
 *        4·(t%16) + {0, 64} + 0..3.
 * @tparam kVecA rows of A are 16-byte aligned (K % 4 == 0)
 * @tparam kVecN rows of B and C are 16-byte aligned (N % 4 == 0)
 * @tparam kChecked false when M, N are multiples of 128 and K of 8 (no bounds checks)
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; about 8.1 KiB of static shared
 * memory.
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias; alignment as the flags say.
 */
template <bool kVecA, bool kVecN, bool kChecked>
__global__ void __launch_bounds__(kVecThreads)
    MatmulVectorizedKernel(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int m, int n, int k) {
  constexpr int kBm = kVecTile, kBn = kVecTile;
  __shared__ __align__(16) float a_tile[kBk][kBm + kPadA];
  __shared__ __align__(16) float b_tile[kBk][kBn];
  const TileCoord tile = BlockTile<false>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  // snippet-begin: ch04-vectorized-loop
  const int row0 = (threadIdx.x / 16) * 4;  // rows row0..+3 and row0+64..+3 of the block tile
  const int col0 = (threadIdx.x % 16) * 4;  // columns col0..+3 and col0+64..+3
  float acc[8][8] = {};
  TileRegs<kBm, kBk, kVecThreads> a_regs;
  TileRegs<kBk, kBn, kVecThreads> b_regs;
  for (int k0 = 0; k0 < k; k0 += kBk) {
    LoadTile<kBm, kBk, kVecThreads, kVecA, kChecked>(a, k, m, m0, k0, a_regs);
    LoadTile<kBk, kBn, kVecThreads, kVecN, kChecked>(b, n, k, k0, n0, b_regs);
    StoreTransposed<kBm, kVecThreads>(a_tile, a_regs);
    StoreDirect<kBn, kVecThreads>(b_tile, b_regs);
    __syncthreads();  // tiles complete before any thread computes
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      float a_frag[8], b_frag[8];
      LoadFragment<2>(a_tile[p], row0, kBm / 2, a_frag);
      LoadFragment<2>(b_tile[p], col0, kBn / 2, b_frag);
      OuterProduct(a_frag, b_frag, acc);
    }
    __syncthreads();  // everyone done reading before the next tile is stored
  }
  // snippet-end: ch04-vectorized-loop
  StoreOutputs<2, 2>(c, n, m, n, m0 + row0, kBm / 2, n0 + col0, kBn / 2, acc, kVecN);
}

void LaunchVectorized(const Problem& p, cudaStream_t stream) {
  const unsigned blocks =
      static_cast<unsigned>(((p.m + kVecTile - 1) / kVecTile) * ((p.n + kVecTile - 1) / kVecTile));
  const bool whole = p.m % kVecTile == 0 && p.n % kVecTile == 0 && p.k % kBk == 0;
  DispatchShape(AlignmentOf(p), whole, [&](auto vec_a, auto vec_n, auto checked) {
    MatmulVectorizedKernel<decltype(vec_a)::value, decltype(vec_n)::value, decltype(checked)::value>
        <<<blocks, kVecThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAST_LAUNCH();
  });
}

}  // namespace ch04::optimized::detail
