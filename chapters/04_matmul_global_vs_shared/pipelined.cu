/**
 * @file pipelined.cu
 * @brief Stage 6, fragments double-buffered in registers across the barrier: at the last step
 *        of a tile a thread reads the next tile's first fragments from shared memory before it
 *        does the last step's FFMAs, so no warp waits on a shared load after the barrier.
 *
 * Changes relative to stage 4 (doublebuffer.cu):
 * 1. Two register sets of fragments (8 values of A and 8 of B each): step p multiplies set
 *    p % 2 while the shared loads of step p+1 fill the other. Within a tile the compiler
 *    already did this for stage 4 (the 8 steps are unrolled); across the barrier it cannot,
 *    because the loads of the next tile must follow the barrier. Here the last step stores
 *    the next tile, waits at the barrier, issues the next tile's first four 16-byte shared
 *    loads and only then does its own 64 FFMAs, which hide those loads' latency.
 * 2. Nothing else moves: 128×128 tile, 8 deep, stage 4's thread layout (8×8 outputs as four
 *    4×4 blocks), one barrier per tile, `__launch_bounds__(256, 2)` (at most 128 registers,
 *    two blocks and 16 warps per SM). The instruction mix is stage 4's: 512 FFMAs and 32
 *    LDS.128 per thread per tile, so what changes is only how long a warp stalls after the
 *    barrier.
 *
 * A 16-deep tile (half the barriers) was the other candidate for this stage; with the
 * fragments double-buffered across its barrier the compiler spills at 128 registers, and
 * without them it has the same share of FFMAs as stage 4 (see the lesson).
 */
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Rows and columns of C per block of stage 6.
constexpr int kPipeTile = 128;
/// Threads per block of stage 6 (8×8 outputs each).
constexpr int kPipeThreads = 256;

/**
 * @brief Stage 6: a 128×128 tile of C per block, 8×8 outputs per thread, double-buffered shared
 *        tiles 8 deep, fragments double-buffered in registers, also across the barrier.
 *
 * Thread t computes rows 4·(t/16) + {0, 64} + 0..3 and columns 4·(t%16) + {0, 64} + 0..3 of the
 * block tile (stage 4's layout).
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
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; 2·8·(132 + 128)·4 = 16.3 KiB of
 * static shared memory. Moves 4·256·K bytes per block for 2·128·128·K flops (32 flop/byte).
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias; alignment as the flags say.
 */
template <bool kVecA, bool kVecN, bool kChecked>
__global__ void __launch_bounds__(kPipeThreads, 2)
    MatmulPipelinedKernel(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) float a_tile[2][kBk][kPipeTile + kPadA];
  __shared__ __align__(16) float b_tile[2][kBk][kPipeTile];
  const TileCoord tile =
      BlockTile<false>((m + kPipeTile - 1) / kPipeTile, (n + kPipeTile - 1) / kPipeTile);
  const int m0 = tile.m * kPipeTile;
  const int n0 = tile.n * kPipeTile;
  constexpr int kStep = kPipeTile / 2;  // distance to the thread's second 4×4 block
  const int row0 = (threadIdx.x / (kPipeTile / 8)) * 4;
  const int col0 = (threadIdx.x % (kPipeTile / 8)) * 4;
  float acc[8][8] = {};
  TileRegs<kPipeTile, kBk, kPipeThreads> a_regs;
  TileRegs<kBk, kPipeTile, kPipeThreads> b_regs;
  // Fragments of two consecutive steps: step p uses set p % 2 while step p+1's loads fly.
  float a_frag[2][8], b_frag[2][8];
  // Prologue: tile 0 into buffer 0, then step 0's fragments.
  LoadTile<kPipeTile, kBk, kPipeThreads, kVecA, kChecked>(a, k, m, m0, 0, a_regs);
  LoadTile<kBk, kPipeTile, kPipeThreads, kVecN, kChecked>(b, n, k, 0, n0, b_regs);
  StoreTransposed<kPipeTile, kPipeThreads>(a_tile[0], a_regs);
  StoreDirect<kPipeTile, kPipeThreads>(b_tile[0], b_regs);
  __syncthreads();  // buffer 0 complete before anyone reads it
  LoadFragment<2>(a_tile[0][0], row0, kStep, a_frag[0]);
  LoadFragment<2>(b_tile[0][0], col0, kStep, b_frag[0]);
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += kBk) {
    const bool has_next = k0 + kBk < k;  // the same for every thread: barriers stay uniform
    if (has_next) {
      // The next tile's global loads go out now; this tile's 512 FFMAs hide their latency.
      LoadTile<kPipeTile, kBk, kPipeThreads, kVecA, kChecked>(a, k, m, m0, k0 + kBk, a_regs);
      LoadTile<kBk, kPipeTile, kPipeThreads, kVecN, kChecked>(b, n, k, k0 + kBk, n0, b_regs);
    }
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      const int cur = p % 2, nxt = (p + 1) % 2;  // compile-time: the loop is unrolled
      if (p + 1 < kBk) {
        LoadFragment<2>(a_tile[buf][p + 1], row0, kStep, a_frag[nxt]);
        LoadFragment<2>(b_tile[buf][p + 1], col0, kStep, b_frag[nxt]);
      } else {
        if (has_next) {
          // The other buffer was last read before the previous barrier: it is free to fill.
          StoreTransposed<kPipeTile, kPipeThreads>(a_tile[buf ^ 1], a_regs);
          StoreDirect<kPipeTile, kPipeThreads>(b_tile[buf ^ 1], b_regs);
        }
        // Next buffer complete; and every read of this one (the last, step p's fragments, was
        // issued one step ago) is done before the next tile's stores overwrite it.
        __syncthreads();
        if (has_next) {
          // The next tile's first fragments, in flight during this step's FFMAs.
          LoadFragment<2>(a_tile[buf ^ 1][0], row0, kStep, a_frag[nxt]);
          LoadFragment<2>(b_tile[buf ^ 1][0], col0, kStep, b_frag[nxt]);
        }
      }
      OuterProduct(a_frag[cur], b_frag[cur], acc);
    }
    buf ^= 1;
  }
  StoreOutputs<2, 2>(c, n, m, n, m0 + row0, kStep, n0 + col0, kStep, acc, kVecN);
}

void LaunchPipelined(const Problem& p, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(((p.m + kPipeTile - 1) / kPipeTile) *
                                                ((p.n + kPipeTile - 1) / kPipeTile));
  const bool whole = p.m % kPipeTile == 0 && p.n % kPipeTile == 0 && p.k % kBk == 0;
  DispatchShape<false>(AlignmentOf(p), whole, [&](auto vec_a, auto vec_n, auto checked) {
    MatmulPipelinedKernel<decltype(vec_a)::value, decltype(vec_n)::value, decltype(checked)::value>
        <<<blocks, kPipeThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAST_LAUNCH();
  });
}

}  // namespace ch04::optimized::detail
