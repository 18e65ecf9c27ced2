/**
 * @file doublebuffer.cuh
 * @brief The double-buffered kernel of stages 4 and 5, and of stage 6's 128×128 tiles, with its
 *        launch; doublebuffer.cu (stages 4 and 6) and warptile.cu (stage 5) compile it, each with
 *        its own ptxas options.
 *
 * Changes relative to stage 3 (vectorized.cu):
 * 1. `doublebuffer`: two shared buffers; the next tile's global loads are issued before the
 *    current tile's FFMAs and stored into the other buffer after them, so one barrier per tile
 *    and no thread waits for a global load.
 * 2. `warptile`: each warp owns a 32×64 region of the block tile (lanes 4×8), so a warp's
 *    fragment reads touch 64 + 128 contiguous bytes (one shared wavefront each); blocks walk C
 *    in groups of 8 tile rows so the A and B panels in flight stay in L2.
 * Both stages ask `__launch_bounds__` for two blocks per SM (kMinBlocks).
 * 3. For stage 6, blockIdx.y selects a range of K whose partial product goes to its own slice
 *    of a workspace.
 */
#pragma once

#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Blocks per SM that __launch_bounds__ asks for, which caps a thread at 128 registers. Left to
/// itself at register-usage level 10 (doublebuffer.cu), ptxas gives stage 4's aligned instance
/// 130 registers, and one block per SM.
// snippet-begin: ch04-launch-bounds
constexpr int kMinBlocks = 2;
// snippet-end: ch04-launch-bounds

/**
 * @brief Stages 4, 5 and 6 (its 128×128 tile): a kBm×kBn tile of C (8×8 outputs per thread),
 *        two shared buffers so the global loads of tile t+1 are in flight while tile t is
 *        multiplied, one barrier per tile; block (x, y) sums the y-th range of K.
 *
 * Without warp tiling, thread t computes rows 4·(t / (kBn/8)) + {0, kBm/2} + 0..3 and columns
 * 4·(t % (kBn/8)) + {0, kBn/2} + 0..3 (stage 3's layout). With warp tiling (128×128 only),
 * warp w owns the 32×64 region at rows 32·(w/2), columns 64·(w%2); lane l computes rows
 * 4·(l/8) + {0, 16} + 0..3 and columns 4·(l%8) + {0, 32} + 0..3 of it, so a warp's float4
 * fragment reads cover 64 contiguous bytes of A and 128 of B (one wavefront each).
 * @tparam kBm rows of C per block (128)
 * @tparam kBn columns of C per block (128)
 * @tparam kVecA rows of A are 16-byte aligned (K % 4 == 0)
 * @tparam kVecN rows of B are 16-byte aligned (N % 4 == 0)
 * @tparam kChecked false when M, N are multiples of the tile and K of 8 (no bounds checks)
 * @tparam kWarpTiling false: stage 4's layout; true: stage 5 (warp tiles, grouped order)
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] out C, or the workspace: split y writes out + y·split.slice
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @param[in] split the K range of each split and where its result goes
 * @par Launch configuration
 * kBm·kBn/64 threads; grid (ceil(M/kBm)·ceil(N/kBn), splits); 2·8·(kBm + 4 + kBn)·4 bytes of
 * static shared memory (16.25 KiB for 128×128). Moves 4·(kBm + kBn)·K_split bytes per block for
 * 2·kBm·kBn·K_split flops.
 * @pre M, N in [1, kMaxDimension]; every split's range of K is non-empty and starts at a
 *      multiple of 8; a, b, out do not alias; alignment as the flags say.
 */
template <int kBm, int kBn, bool kVecA, bool kVecN, bool kChecked, bool kWarpTiling>
__global__ void __launch_bounds__(kBm* kBn / 64, kMinBlocks)
    MatmulDoubleBufferKernel(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ out, int m, int n, int k, SplitOutput split) {
  constexpr int kThreads = kBm * kBn / 64;
  static_assert(kBm == 128 && kBn == 128, "stage 6's smaller tiles are pipeline.cu's kernel");
  __shared__ __align__(16) float a_tile[2][kBk][kBm + kPadA];
  __shared__ __align__(16) float b_tile[2][kBk][kBn];
  const TileCoord tile = BlockTile<kWarpTiling>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  // This block's range of K; chunks are multiples of 8, so only the last tile of the last
  // split can overhang K (the loads check against K itself).
  // snippet-begin: ch04-splitk-range
  const int k_begin = blockIdx.y * split.k_chunk;
  const int k_end = min(k, k_begin + split.k_chunk);
  out += blockIdx.y * split.slice;
  // snippet-end: ch04-splitk-range
  // snippet-begin: ch04-thread-mapping
  constexpr int kRowStep = kWarpTiling ? 16 : kBm / 2;
  constexpr int kColStep = kWarpTiling ? 32 : kBn / 2;
  int row0, col0;
  if constexpr (kWarpTiling) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    row0 = (warp / 2) * 32 + (lane / 8) * 4;  // 4 warps down the tile, 4 lane rows per warp
    col0 = (warp % 2) * 64 + (lane % 8) * 4;  // 2 warps across, 8 lane columns per warp
  } else {
    row0 = (threadIdx.x / (kBn / 8)) * 4;
    col0 = (threadIdx.x % (kBn / 8)) * 4;
  }
  // snippet-end: ch04-thread-mapping
  // snippet-begin: ch04-doublebuffer-loop
  float acc[8][8] = {};
  TileRegs<kBm, kBk, kThreads> a_regs;
  TileRegs<kBk, kBn, kThreads> b_regs;
  // Prologue: the first tile into buffer 0.
  LoadTile<kBm, kBk, kThreads, kVecA, kChecked>(a, k, m, m0, k_begin, a_regs);
  LoadTile<kBk, kBn, kThreads, kVecN, kChecked>(b, n, k, k_begin, n0, b_regs);
  StoreTransposed<kBm, kThreads>(a_tile[0], a_regs);
  StoreDirect<kBn, kThreads>(b_tile[0], b_regs);
  __syncthreads();  // buffer 0 complete before the first multiply
  int buf = 0;
  for (int k0 = k_begin; k0 < k_end; k0 += kBk) {
    const bool has_next = k0 + kBk < k_end;  // the same for every thread: barriers stay uniform
    if (has_next) {
      // Issue the next tile's global loads now; their latency hides behind 512 FFMAs.
      LoadTile<kBm, kBk, kThreads, kVecA, kChecked>(a, k, m, m0, k0 + kBk, a_regs);
      LoadTile<kBk, kBn, kThreads, kVecN, kChecked>(b, n, k, k0 + kBk, n0, b_regs);
    }
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      float a_frag[8], b_frag[8];
      LoadFragment<2>(a_tile[buf][p], row0, kRowStep, a_frag);
      LoadFragment<2>(b_tile[buf][p], col0, kColStep, b_frag);
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
  // snippet-end: ch04-doublebuffer-loop
  StoreOutputs<2, 2>(out, split.ldo, m, split.n_out, m0 + row0, kRowStep, n0 + col0, kColStep, acc,
                     split.vec_out);
}

/// Launches the instance of MatmulDoubleBufferKernel that fits @p p (tile kBm×kBn) over the splits
/// of @p out, on every tile or, when @p first_tiles > 0, on the first first_tiles in row order
/// (without kWarpTiling); the file that calls it compiles the kernel, with its own ptxas options.
template <int kBm, int kBn, bool kWarpTiling>
void LaunchDoubleBufferTile(const Problem& p, const SplitOutput& out, cudaStream_t stream,
                            int first_tiles = 0) {
  const unsigned tiles =
      first_tiles > 0 ? static_cast<unsigned>(first_tiles)
                      : static_cast<unsigned>(((p.m + kBm - 1) / kBm) * ((p.n + kBn - 1) / kBn));
  const dim3 grid(tiles, static_cast<unsigned>(out.splits));
  const bool whole = p.m % kBm == 0 && p.n % kBn == 0 && p.k % kBk == 0;
  // All five alignment cases, as stage 3 has, so the two compare like for like.
  DispatchShape(AlignmentOf(p), whole, [&](auto vec_a, auto vec_n, auto checked) {
    MatmulDoubleBufferKernel<kBm, kBn, decltype(vec_a)::value, decltype(vec_n)::value,
                             decltype(checked)::value, kWarpTiling>
        <<<grid, kBm * kBn / 64, 0, stream>>>(p.a, p.b, out.out, p.m, p.n, p.k, out);
    CUDA_CHECK_LAST_LAUNCH();
  });
}

/// One split covering all of K, written straight to C (stages 4 and 5).
/// @param[in] p the product
inline SplitOutput WholeK(const Problem& p) {
  return {1, p.k, p.c, p.n, p.n, 0, AlignmentOf(p).vec_n};
}

}  // namespace ch04::optimized::detail
