/**
 * @file skinny.cu
 * @brief Stage 7, skinny products: when C has only a few rows or a few columns (1000×8, 8×1000)
 *        a 128-wide tile would compute mostly padding and the grid would have a handful of
 *        blocks. Here a block owns one 8×8 tile of C and all 256 of its threads split K.
 *
 * Changes relative to the tiled stages:
 * 1. Parallelism comes from K, not from C: thread t sums k = t, t + 256, t + 512, ... for all
 *    64 outputs of the tile (8 rows of A, 8 columns of B in registers per k), so a 1000×8×1000
 *    product runs 125 blocks of 256 threads instead of 8 blocks of 128×128.
 * 2. Loads need no shared memory: a warp's load of one row of A covers 32 consecutive k (128
 *    bytes, coalesced), and each thread's 8 values of B are one 32-byte row piece (two float4s
 *    when rows are 16-byte aligned).
 * 3. The 64 partial sums of each thread are reduced across the warp with 62 shuffles (each step
 *    halves the values a lane keeps and doubles the lanes they cover: lane l ends with outputs
 *    2l and 2l+1), then across the 8 warps in shared memory, always in the same order.
 */
#include <algorithm>

#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

/// Rows and columns of C per block of stage 7.
constexpr int kSkinnyTile = 8;
/// Threads per block of stage 7 (all of them along K).
constexpr int kSkinnyThreads = 256;
/// Warps per block of stage 7.
constexpr int kSkinnyWarps = kSkinnyThreads / 32;
/// Outputs per tile, and partial sums per thread.
constexpr int kSkinnyOutputs = kSkinnyTile * kSkinnyTile;

/**
 * @brief One step of the warp's transpose-reduction: lanes whose bit @p kLaneMask is set keep
 *        the upper half of their kHalf·2 values, the others the lower half; each adds its
 *        partner's copy of the half it keeps.
 * @tparam kHalf values kept (half of those held before the step)
 * @tparam kLaneMask the lane bit that pairs partners
 * @param[in,out] v the values; afterwards v[0 .. kHalf) hold the sums
 */
// snippet-begin: ch04-fold-half
template <int kHalf, int kLaneMask>
__device__ __forceinline__ void FoldHalf(float (&v)[kSkinnyOutputs]) {
  const bool upper = (threadIdx.x & kLaneMask) != 0;
#pragma unroll
  for (int i = 0; i < kHalf; ++i) {
    const float keep = upper ? v[i + kHalf] : v[i];
    const float send = upper ? v[i] : v[i + kHalf];
    v[i] = keep + __shfl_xor_sync(0xffffffffu, send, kLaneMask);
  }
}
// snippet-end: ch04-fold-half

/**
 * @brief Stage 7: block (x, y) computes C[8y .. 8y+7][8x .. 8x+7]; thread t accumulates the 64
 *        products of k = t, t + 256, ... and the block reduces the 256 partial tiles.
 * @tparam kVecB rows of B are 16-byte aligned (N % 4 == 0, aligned base): float4 loads of B
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, grid (ceil(N/8), min(ceil(M/8), 65535)), blocks loop over tile rows with
 * stride gridDim.y; 2 KiB of static shared memory. Moves 64·K bytes per tile for 128·K flops.
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias.
 */
template <bool kVecB>
__global__ void __launch_bounds__(kSkinnyThreads)
    MatmulSkinnyKernel(const float* __restrict__ a, const float* __restrict__ b,
                       float* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(8) float partial[kSkinnyWarps][kSkinnyOutputs];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int c0 = blockIdx.x * kSkinnyTile;
  const int tiles_m = (m + kSkinnyTile - 1) / kSkinnyTile;
  for (int tile_m = blockIdx.y; tile_m < tiles_m; tile_m += gridDim.y) {
    const int r0 = tile_m * kSkinnyTile;
    float acc[kSkinnyOutputs] = {};
    // snippet-begin: ch04-skinny-k-loop
#pragma unroll 4
    for (int p = threadIdx.x; p < k; p += kSkinnyThreads) {
      float av[kSkinnyTile], bv[kSkinnyTile];
#pragma unroll
      for (int r = 0; r < kSkinnyTile; ++r) {
        // Lanes hold consecutive p: each row's load is one coalesced 128-byte line.
        av[r] = r0 + r < m ? a[static_cast<std::size_t>(r0 + r) * k + p] : 0.f;
      }
      const float* b_row = b + static_cast<std::size_t>(p) * n + c0;
#pragma unroll
      for (int h = 0; h < kSkinnyTile / 4; ++h) {
        if constexpr (kVecB) {
          // N % 4 == 0 and c0 + 4h a multiple of 4: in bounds iff its first column is.
          const float4 v = c0 + 4 * h < n ? *reinterpret_cast<const float4*>(b_row + 4 * h)
                                          : make_float4(0.f, 0.f, 0.f, 0.f);
          bv[4 * h + 0] = v.x;
          bv[4 * h + 1] = v.y;
          bv[4 * h + 2] = v.z;
          bv[4 * h + 3] = v.w;
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) bv[4 * h + j] = c0 + 4 * h + j < n ? b_row[4 * h + j] : 0.f;
        }
      }
#pragma unroll
      for (int r = 0; r < kSkinnyTile; ++r) {
#pragma unroll
        for (int j = 0; j < kSkinnyTile; ++j) {
          acc[r * kSkinnyTile + j] = fmaf(av[r], bv[j], acc[r * kSkinnyTile + j]);
        }
      }
    }
    // snippet-end: ch04-skinny-k-loop
    // Warp reduction: 64 values over 32 lanes in five halving steps (32+16+8+4+2 shuffles).
    // snippet-begin: ch04-skinny-reduce
    FoldHalf<32, 16>(acc);
    FoldHalf<16, 8>(acc);
    FoldHalf<8, 4>(acc);
    FoldHalf<4, 2>(acc);
    FoldHalf<2, 1>(acc);
    // Lane l now holds the warp's sums of outputs 2l and 2l + 1 (its lane bits chose halves).
    *reinterpret_cast<float2*>(&partial[warp][2 * lane]) = make_float2(acc[0], acc[1]);
    // snippet-end: ch04-skinny-reduce
    __syncthreads();  // every warp's partial tile is in shared memory
    if (threadIdx.x < kSkinnyOutputs) {
      float sum = partial[0][threadIdx.x];
#pragma unroll
      for (int w = 1; w < kSkinnyWarps; ++w) sum += partial[w][threadIdx.x];
      const int row = r0 + threadIdx.x / kSkinnyTile;
      const int col = c0 + threadIdx.x % kSkinnyTile;
      if (row < m && col < n) c[static_cast<std::size_t>(row) * n + col] = sum;
    }
    __syncthreads();  // the sums are read before the next tile row overwrites `partial`
  }
}

void LaunchSkinny(const Problem& p, cudaStream_t stream) {
  const int tiles_m = (p.m + kSkinnyTile - 1) / kSkinnyTile;
  const dim3 grid(static_cast<unsigned>((p.n + kSkinnyTile - 1) / kSkinnyTile),
                  static_cast<unsigned>(std::min(tiles_m, 65535)));
  const bool vec_b = p.n % 4 == 0 && staged::IsAligned16(p.b);
  if (vec_b) {
    MatmulSkinnyKernel<true><<<grid, kSkinnyThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
  } else {
    MatmulSkinnyKernel<false><<<grid, kSkinnyThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k);
  }
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch04::optimized::detail
