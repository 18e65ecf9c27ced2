/**
 * @file bigtile.cu
 * @brief Stage 6: twice the outputs per thread. Each thread computes 16×8 outputs of a 64×64
 *        warp tile; a 128×128 block is four warps (128 threads), and two blocks share an SM.
 *
 * Changes relative to stage 4 (doublebuffer.cu):
 * 1. 128 accumulators per thread instead of 64. Per k a thread reads 16 values of A and 8 of
 *    B (6 float4 shared loads) for 128 FFMAs: the share of FFMAs among issued instructions
 *    rises (about 1024 FFMAs for 70 other instructions per 8-deep tile, against 512 for 45).
 * 2. Warp tiles of 64×64: lane l computes rows 4·(l/8) + {0, 16, 32, 48} + 0..3 and columns
 *    4·(l%8) + {0, 32} + 0..3, so each float4 fragment read of a warp covers 64 contiguous
 *    bytes of A or 128 of B: one shared wavefront, no conflict.
 * 3. `__launch_bounds__(128, 2)`: up to 255 registers per thread (the 128 accumulators need
 *    about 200), still two blocks, eight warps, per SM.
 * The candidate `bigtile256` is the same kernel with a 128×256 block of eight warps (one block
 * per SM, 42.7 instead of 32 flop per byte loaded).
 */
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Side of one warp's tile of C in stage 6.
constexpr int kWarpTileSide = 64;

/**
 * @brief Stage 6: a (64·kWarpsM)×(64·kWarpsN) tile of C per block, a 64×64 tile per warp,
 *        16×8 outputs per thread, double-buffered shared tiles 8 deep.
 *
 * Warp w owns rows 64·(w / kWarpsN), columns 64·(w % kWarpsN) of the block tile; lane l
 * computes rows 4·(l/8) + 16·g + i (g < 4) and columns 4·(l%8) + 32·h + j (h < 2) of it.
 * @tparam kWarpsM warps down the block tile
 * @tparam kWarpsN warps across the block tile
 * @tparam kVecA rows of A are 16-byte aligned (K % 4 == 0)
 * @tparam kVecN rows of B and C are 16-byte aligned (N % 4 == 0)
 * @tparam kChecked false when M, N are multiples of the tile and K of 8 (no bounds checks)
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 32·kWarpsM·kWarpsN threads, 1-D grid of ceil(M/(64·kWarpsM))·ceil(N/(64·kWarpsN)) blocks;
 * 16.6 KiB (128×128) or 24.8 KiB (128×256) of static shared memory. Moves
 * 4·(BM + BN)·K bytes per block for 2·BM·BN·K flops (32 or 42.7 flop/byte).
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias; alignment as the flags say.
 */
template <int kWarpsM, int kWarpsN, bool kVecA, bool kVecN, bool kChecked>
__global__ void __launch_bounds__(32 * kWarpsM * kWarpsN, kWarpsM* kWarpsN == 4 ? 2 : 1)
    MatmulBigTileKernel(const float* __restrict__ a, const float* __restrict__ b,
                        float* __restrict__ c, int m, int n, int k) {
  constexpr int kThreads = 32 * kWarpsM * kWarpsN;
  constexpr int kBm = kWarpTileSide * kWarpsM;
  constexpr int kBn = kWarpTileSide * kWarpsN;
  __shared__ __align__(16) float a_tile[2][kBk][kBm + kPadA];
  __shared__ __align__(16) float b_tile[2][kBk][kBn];
  const TileCoord tile = BlockTile<false>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Warp tile origin plus the lane's place in a 4 (rows) × 8 (columns) grid of 4×4 blocks.
  const int row0 = (warp / kWarpsN) * kWarpTileSide + (lane / 8) * 4;
  const int col0 = (warp % kWarpsN) * kWarpTileSide + (lane % 8) * 4;
  float acc[16][8] = {};
  TileRegs<kBm, kBk, kThreads> a_regs;
  TileRegs<kBk, kBn, kThreads> b_regs;
  // Prologue: tile 0 into buffer 0.
  LoadTile<kBm, kBk, kThreads, kVecA, kChecked>(a, k, m, m0, 0, a_regs);
  LoadTile<kBk, kBn, kThreads, kVecN, kChecked>(b, n, k, 0, n0, b_regs);
  StoreTransposed<kBm, kThreads>(a_tile[0], a_regs);
  StoreDirect<kBn, kThreads>(b_tile[0], b_regs);
  __syncthreads();  // buffer 0 complete before the first multiply
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += kBk) {
    const bool has_next = k0 + kBk < k;  // the same for every thread: barriers stay uniform
    if (has_next) {
      // The next tile's global loads go out now; 1024 FFMAs per thread hide their latency.
      LoadTile<kBm, kBk, kThreads, kVecA, kChecked>(a, k, m, m0, k0 + kBk, a_regs);
      LoadTile<kBk, kBn, kThreads, kVecN, kChecked>(b, n, k, k0 + kBk, n0, b_regs);
    }
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      // Fully unrolled: the compiler issues the shared loads of step p+1 during the FFMAs of p.
      float a_frag[16], b_frag[8];
      LoadFragment<4>(a_tile[buf][p], row0, 16, a_frag);
      LoadFragment<2>(b_tile[buf][p], col0, 32, b_frag);
      OuterProduct(a_frag, b_frag, acc);
    }
    if (has_next) {
      // The other buffer was last read in the previous iteration, which ended with a barrier.
      StoreTransposed<kBm, kThreads>(a_tile[buf ^ 1], a_regs);
      StoreDirect<kBn, kThreads>(b_tile[buf ^ 1], b_regs);
    }
    __syncthreads();  // next buffer complete, and this one free to be overwritten after
    buf ^= 1;
  }
  StoreOutputs<4, 2>(c, n, m, n, m0 + row0, 16, n0 + col0, 32, acc, kVecN);
}

namespace {

template <int kWarpsM, int kWarpsN>
void Launch(const Problem& p, cudaStream_t stream) {
  constexpr int kBm = kWarpTileSide * kWarpsM, kBn = kWarpTileSide * kWarpsN;
  const unsigned blocks = static_cast<unsigned>(((p.m + kBm - 1) / kBm) * ((p.n + kBn - 1) / kBn));
  const bool whole = p.m % kBm == 0 && p.n % kBn == 0 && p.k % kBk == 0;
  DispatchShape<false>(AlignmentOf(p), whole, [&](auto vec_a, auto vec_n, auto checked) {
    MatmulBigTileKernel<kWarpsM, kWarpsN, decltype(vec_a)::value, decltype(vec_n)::value,
                        decltype(checked)::value>
        <<<blocks, 32 * kWarpsM * kWarpsN, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
    CUDA_CHECK_LAST_LAUNCH();
  });
}

}  // namespace

void LaunchBigTile(const Problem& p, bool wide, cudaStream_t stream) {
  if (wide) {
    Launch<2, 4>(p, stream);
  } else {
    Launch<2, 2>(p, stream);
  }
}

}  // namespace ch04::optimized::detail
