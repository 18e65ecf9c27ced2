/**
 * @file pipelined.cu
 * @brief Stage 6 and its sibling candidate: two ways to take stalls out of stage 4's loop
 *        around the barrier, each with stage 4's tile, layout and instruction mix.
 *
 * Changes relative to stage 4 (doublebuffer.cu):
 * 1. `pipelined`: fragments double-buffered in registers across the barrier. Step p of a tile
 *    multiplies one register set of fragments (8 values of A, 8 of B) while the shared loads
 *    of step p+1 fill the other. Within a tile the compiler already did this for stage 4 (the 8
 *    steps are unrolled); across the barrier it cannot, because the next tile's loads must
 *    follow the barrier. Here the last step stores the next tile, waits at the barrier, issues
 *    the next tile's first four 16-byte shared loads and only then does its own 64 FFMAs,
 *    which hide those loads' latency: no warp leaves the barrier to wait on shared memory.
 * 2. `bk16` (candidate): tiles 16 deep, so one barrier per 1024 FFMAs of a thread instead of
 *    per 512; after a barrier the warps of a block wait for the slowest, and half as many
 *    barriers halve that wait. A tile is loaded as two 8-deep halves with stage 4's helpers:
 *    half h of the next tile goes out at step 8h and lands in shared memory at step 8h + 7, so
 *    only 8 registers hold loads in flight. (Doing 1 as well spills at 128 registers.)
 * Both keep `__launch_bounds__(256, 2)` (at most 128 registers, two blocks, 16 warps per SM),
 * the 128×128 tile and 8×8 outputs per thread as four 4×4 blocks; per 8 k a thread still does
 * 512 FFMAs and 32 LDS.128.
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
 *        tiles kHalves·8 deep, fragments double-buffered in registers (across the barrier too
 *        when kHalves == 1).
 *
 * Thread t computes rows 4·(t/16) + {0, 64} + 0..3 and columns 4·(t%16) + {0, 64} + 0..3 of the
 * block tile (stage 4's layout).
 * @tparam kHalves 1: 8-deep tiles, the next tile's first fragments read before the last step's
 *         FFMAs (`pipelined`); 2: 16-deep tiles, read after them (`bk16`)
 * @tparam kVecA rows of A are 16-byte aligned (K % 4 == 0)
 * @tparam kVecN rows of B and C are 16-byte aligned (N % 4 == 0)
 * @tparam kChecked false when M, N are multiples of 128 and K of the tile depth (no checks)
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; 2·kHalves·8·(132 + 128)·4 bytes of
 * static shared memory (16.3 or 32.5 KiB). Moves 4·256·K bytes per block for 2·128·128·K flops
 * (32 flop/byte).
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias; alignment as the flags say.
 */
template <int kHalves, bool kVecA, bool kVecN, bool kChecked>
__global__ void __launch_bounds__(kPipeThreads, 2)
    MatmulPipelinedKernel(const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ c, int m, int n, int k) {
  constexpr int kDepth = kHalves * kBk;
  constexpr bool kAcrossBarrier = kHalves == 1;
  __shared__ __align__(16) float a_tile[2][kDepth][kPipeTile + kPadA];
  __shared__ __align__(16) float b_tile[2][kDepth][kPipeTile];
  const TileCoord tile =
      BlockTile<false>((m + kPipeTile - 1) / kPipeTile, (n + kPipeTile - 1) / kPipeTile);
  const int m0 = tile.m * kPipeTile;
  const int n0 = tile.n * kPipeTile;
  constexpr int kStep = kPipeTile / 2;  // distance to the thread's second 4×4 block
  const int row0 = (threadIdx.x / (kPipeTile / 8)) * 4;
  const int col0 = (threadIdx.x % (kPipeTile / 8)) * 4;
  float acc[8][8] = {};
  // One 8-deep half of a tile, on its way from global to shared memory.
  TileRegs<kPipeTile, kBk, kPipeThreads> a_regs;
  TileRegs<kBk, kPipeTile, kPipeThreads> b_regs;
  auto load = [&](int k0) {  // the half that starts at k0
    LoadTile<kPipeTile, kBk, kPipeThreads, kVecA, kChecked>(a, k, m, m0, k0, a_regs);
    LoadTile<kBk, kPipeTile, kPipeThreads, kVecN, kChecked>(b, n, k, k0, n0, b_regs);
  };
  auto store = [&](int buf, int half) {  // into rows 8·half .. 8·half + 7 of buffer buf
    StoreTransposed<kPipeTile, kPipeThreads>(a_tile[buf] + half * kBk, a_regs);
    StoreDirect<kPipeTile, kPipeThreads>(b_tile[buf] + half * kBk, b_regs);
  };
  // Fragments of two consecutive steps: step p uses set p % 2 while step p+1's loads fly.
  float a_frag[2][8], b_frag[2][8];
  auto read_fragments = [&](int buf, int row, int set) {
    LoadFragment<2>(a_tile[buf][row], row0, kStep, a_frag[set]);
    LoadFragment<2>(b_tile[buf][row], col0, kStep, b_frag[set]);
  };
  // Prologue: tile 0 into buffer 0, then step 0's fragments.
#pragma unroll
  for (int h = 0; h < kHalves; ++h) {
    load(h * kBk);
    store(0, h);
  }
  __syncthreads();  // buffer 0 complete before anyone reads it
  read_fragments(0, 0, 0);
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += kDepth) {
    const bool has_next = k0 + kDepth < k;  // the same for every thread: barriers stay uniform
#pragma unroll
    for (int p = 0; p < kDepth; ++p) {
      const int cur = p % 2, nxt = (p + 1) % 2;  // compile-time: the loop is unrolled
      // Half h of the next tile goes out at step 8h and is stored at step 8h + 7: the 7 steps
      // between hide its latency.
      if (p % kBk == 0 && has_next) load(k0 + kDepth + p);
      if (p + 1 < kDepth) {
        // The other buffer was last read before the previous barrier: it is free to fill.
        if (p % kBk == kBk - 1 && has_next) store(buf ^ 1, p / kBk);
        read_fragments(buf, p + 1, nxt);
      } else {
        if (has_next) store(buf ^ 1, p / kBk);
        // Next buffer complete; and every read of this one (the last, step p's fragments, was
        // issued one step ago) is done before the next tile's stores overwrite it.
        __syncthreads();
        // The next tile's first fragments, in flight during this step's FFMAs.
        if (kAcrossBarrier && has_next) read_fragments(buf ^ 1, 0, nxt);
      }
      OuterProduct(a_frag[cur], b_frag[cur], acc);
      // Without the cross-barrier read, as in stage 4: after the last step's FFMAs.
      if (!kAcrossBarrier && p + 1 == kDepth && has_next) read_fragments(buf ^ 1, 0, nxt);
    }
    buf ^= 1;
  }
  StoreOutputs<2, 2>(c, n, m, n, m0 + row0, kStep, n0 + col0, kStep, acc, kVecN);
}

namespace {

template <int kHalves>
void Launch(const Problem& p, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(((p.m + kPipeTile - 1) / kPipeTile) *
                                                ((p.n + kPipeTile - 1) / kPipeTile));
  const bool whole = p.m % kPipeTile == 0 && p.n % kPipeTile == 0 && p.k % (kHalves * kBk) == 0;
  DispatchShape<false>(AlignmentOf(p), whole, [&](auto vec_a, auto vec_n, auto checked) {
    MatmulPipelinedKernel<kHalves, decltype(vec_a)::value, decltype(vec_n)::value,
                          decltype(checked)::value>
        <<<blocks, kPipeThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAST_LAUNCH();
  });
}

}  // namespace

void LaunchPipelined(const Problem& p, bool deep, cudaStream_t stream) {
  if (deep) {
    Launch<2>(p, stream);
  } else {
    Launch<1>(p, stream);
  }
}

}  // namespace ch04::optimized::detail
