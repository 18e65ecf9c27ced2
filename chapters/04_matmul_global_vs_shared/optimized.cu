/**
 * @file optimized.cu
 * @brief Stage 1 of the optimized path: the slides' 16×16 shared-memory tile (for float and
 *        int32_t). The later stages each have their own file (regblock.cu, vectorized.cu,
 *        doublebuffer.cu, warptile.cu, pipeline.cu, splitk.cu, skinny.cu, streamk.cu);
 *        dispatch.cpp picks one.
 *
 * Changes relative to naive.cu:
 * 1. `tiled16`: a 16×16 block stages 16×16 tiles of A and B in shared memory; each element
 *    loaded from global memory is used 16 times (global intensity 0.25 → 4 flop/byte).
 *
 * The following stages, one file each:
 * 2. `regblock` (regblock.cu): a 256-thread block computes a 128×128 tile of C, each thread an
 *    8×8 sub-tile held in registers; one shared value feeds 8 FFMAs.
 * 3. `vectorized` (vectorized.cu): 16-byte global loads, A stored transposed and padded in
 *    shared memory so both operands are read as float4 without bank conflicts.
 * 4. `doublebuffer` (doublebuffer.cuh, compiled by doublebuffer.cu): two shared buffers; the
 *    next tile's global loads are issued before the current tile's FFMAs and stored after
 *    them, one barrier per tile; ptxas at register-usage level 10 keeps the loads there.
 * 5. `warptile` (the same kernel, compiled by warptile.cu): 32×64 warp tiles, blocks walk C in
 *    groups of 8 tile rows.
 * 6. `splitk` (splitk.cu): when the 128×128 tiles cannot fill the SMs, a tile of 64 or 128 from
 *    the shape and K split across blocks, partial sums reduced in a fixed order; the smaller
 *    tiles load through a three-stage cp.async pipeline (pipeline.cuh, pipeline.cu).
 * 7. `skinny` (skinny.cu): for few rows or few columns, one 8×8 tile of C per block with K
 *    split across all 256 threads and reduced by warp shuffles.
 * 8. `streamk` (streamk.cu): stage 4 on the tiles of the full waves; the k-steps of the last,
 *    partial wave's tiles shared evenly by one wave of blocks, a split tile's pieces added in a
 *    fixed order by the block that completes it.
 *
 * Every stage handles any M, N, K: tiles are loaded with bounds checks and zero fill (a padded
 * zero adds nothing to a sum), and outputs outside C are not stored.
 */
#include <cstdint>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Side of the slides' square tile (stage 1).
constexpr int kTile16 = 16;

/**
 * @brief Stage 1: each block stages 16×16 tiles of A and B in shared memory; each thread
 *        computes one element of C from them.
 *
 * Every element of A and B fetched from global memory is read 16 times from shared memory,
 * so global traffic drops 16× against the naive kernel (2·M·N·K/16 loads instead of 2·M·N·K).
 * Tiles that overhang A or B are zero-filled, so any M, N, K works (the slides' version needs
 * N % 16 == 0).
 * @tparam T float or int32_t
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * block (16, 16), grid (ceil(N/16), ceil(M/16)); 2·16·16·sizeof(T) bytes of static shared memory.
 * @pre M, N in [1, kMaxDimension], K in [0, kMaxDimension]; a, b, c do not alias.
 */
template <typename T>
__global__ void MatmulTiled16Kernel(const T* __restrict__ a, const T* __restrict__ b,
                                    T* __restrict__ c, int m, int n, int k) {
  // snippet-begin: ch04-tiled16-kernel
  __shared__ T a_tile[kTile16][kTile16];
  __shared__ T b_tile[kTile16][kTile16];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * kTile16 + ty;
  const int col = blockIdx.x * kTile16 + tx;
  T sum = 0;
  for (int k0 = 0; k0 < k; k0 += kTile16) {
    // Each thread loads one element of each tile; tx runs along rows, so loads coalesce.
    a_tile[ty][tx] =
        (row < m && k0 + tx < k) ? a[static_cast<std::size_t>(row) * k + k0 + tx] : T(0);
    b_tile[ty][tx] =
        (k0 + ty < k && col < n) ? b[static_cast<std::size_t>(k0 + ty) * n + col] : T(0);
    __syncthreads();  // the whole tile must be in shared memory before anyone reads it
#pragma unroll
    for (int p = 0; p < kTile16; ++p) sum += a_tile[ty][p] * b_tile[p][tx];
    __syncthreads();  // everyone must be done reading before the next tile overwrites it
  }
  if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = sum;
  // snippet-end: ch04-tiled16-kernel
}

template <typename T>
void LaunchTiled16(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream) {
  const dim3 block(kTile16, kTile16);
  const dim3 grid((n + kTile16 - 1) / kTile16, (m + kTile16 - 1) / kTile16);
  MatmulTiled16Kernel<T><<<grid, block, 0, stream>>>(a, b, c, m, n, k);
  CUDA_CHECK_LAST_LAUNCH();
}

/// @cond
template void LaunchTiled16<float>(const float*, const float*, float*, int, int, int, cudaStream_t);
template void LaunchTiled16<std::int32_t>(const std::int32_t*, const std::int32_t*, std::int32_t*,
                                          int, int, int, cudaStream_t);
/// @endcond

}  // namespace ch04::optimized::detail
