/**
 * @file pipeline.cu
 * @brief Stage 6's smaller tiles (128×64, 64×128, 64×64): the double-buffered loop of stage 4
 *        with its register copy replaced by a three-stage `cp.async` pipeline.
 *
 * Changes relative to the 128×128 kernel of stage 4 (doublebuffer.cu), which stage 6 launches
 * for its 128×128 tiles:
 * 1. Tiles travel from global to shared memory with `cp.async` (pipeline.cuh), which holds no
 *    register: two tiles are on their way while a third is multiplied (kStages shared buffers).
 * 2. A is still stored transposed: each thread copies single floats (4-byte `cp.async`), eight
 *    lanes per row of A, so a warp's copies land in 32 different banks. B is copied as it is,
 *    16 bytes at a time when its rows are aligned, else float by float.
 * 3. Elements outside the matrix are zero-filled by the copy itself (source size 0).
 * Why: capped at 128 registers (16 warps per SM), a thread of these tiles has no room to keep
 * the next tile in registers through its FFMAs, and ptxas then issues the next tile's loads
 * just before the shared stores, where each k-tile waits a whole DRAM round trip. The shapes
 * that take these tiles (64×4096×4096, 4096×64×4096) stream their large operand from DRAM.
 */
#include <stdexcept>

#include "chapters/04_matmul_global_vs_shared/pipeline.cuh"
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

namespace ch04::optimized::detail {

/// Shared buffers of the pipeline: kStages - 1 tiles in flight while one is multiplied.
constexpr int kStages = 3;

/**
 * @brief Stage 6's smaller tiles: a kBm×kBn tile of C (8×8 outputs per thread) over the K range
 *        of split blockIdx.y, its k-tiles brought in by a kStages-deep `cp.async` pipeline.
 *
 * Thread t computes rows 4·(t / (kBn/8)) + {0, kBm/2} + 0..3 and columns 4·(t % (kBn/8)) +
 * {0, kBn/2} + 0..3 (stage 3's layout, as the 128×128 kernel of stage 4).
 * @tparam kBm rows of C per block (64 or 128)
 * @tparam kBn columns of C per block (64 or 128; not both 128)
 * @tparam kVecN rows of B are 16-byte aligned (N % 4 == 0): 16-byte copies of B
 * @tparam kChecked false when M, N are multiples of the tile and K of 8 (no bounds checks)
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] out C, or the workspace: split y writes out + y·split.slice
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @param[in] split the K range of each split and where its result goes
 * @par Launch configuration
 * kBm·kBn/64 threads (128 or 64); grid (ceil(M/kBm)·ceil(N/kBn), splits); kStages·8·(kBm + 4 +
 * kBn)·4 bytes of static shared memory (18.4 KiB for 64×128); at most 128 registers, so that
 * kSplitKWarpsPerSm warps share an SM. Moves 4·(kBm + kBn)·K_split bytes per block for
 * 2·kBm·kBn·K_split flops.
 * @pre M, N in [1, kMaxDimension]; every split's range of K is non-empty and starts at a
 *      multiple of 8; a, b, out do not alias; out 16-byte aligned when split.vec_out.
 */
template <int kBm, int kBn, bool kVecN, bool kChecked>
__global__ void __launch_bounds__(kBm* kBn / 64, kSplitKWarpsPerSm * 32 / (kBm * kBn / 64))
    MatmulPipelineKernel(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ out, int m, int n, int k, SplitOutput split) {
  static_assert(kBm * kBn < 128 * 128, "the 128×128 tile is stage 4's kernel");
  __shared__ __align__(16) float a_tile[kStages][kBk][kBm + kPadA];
  __shared__ __align__(16) float b_tile[kStages][kBk][kBn];
  const TileCoord tile = BlockTile<false>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  const int k_begin = blockIdx.y * split.k_chunk;
  const int k_end = min(k, k_begin + split.k_chunk);
  out += blockIdx.y * split.slice;
  const int row0 = (threadIdx.x / (kBn / 8)) * 4;
  const int col0 = (threadIdx.x % (kBn / 8)) * 4;
  float acc[8][8];
  PipelineProduct<kBm, kBn, kBk, kStages, kVecN, kChecked>(a, b, m, n, k, m0, n0, k_begin, k_end,
                                                           a_tile, b_tile, acc);
  StoreOutputs<2, 2>(out, split.ldo, m, split.n_out, m0 + row0, kBm / 2, n0 + col0, kBn / 2, acc,
                     split.vec_out);
}

namespace {

/// Launches one instance of the pipeline kernel for tile kBm×kBn over the splits of @p out.
template <int kBm, int kBn>
void LaunchTile(const Problem& p, const SplitOutput& out, cudaStream_t stream) {
  const unsigned tiles = static_cast<unsigned>(((p.m + kBm - 1) / kBm) * ((p.n + kBn - 1) / kBn));
  const dim3 grid(tiles, static_cast<unsigned>(out.splits));
  const bool whole = p.m % kBm == 0 && p.n % kBn == 0 && p.k % kBk == 0;
  // The copies of A are 4 bytes wide whatever its alignment; B takes 16-byte copies when its
  // rows are aligned. Unchecked only when every tile is whole and B is aligned.
  const bool vec_b = p.n % 4 == 0 && staged::IsAligned16(p.b);
  const auto launch = [&](auto kernel) {
    kernel<<<grid, kBm * kBn / 64, 0, stream>>>(p.a, p.b, out.out, p.m, p.n, p.k, out);
    CUDA_CHECK_LAST_LAUNCH();
  };
  if (vec_b && whole) {
    launch(MatmulPipelineKernel<kBm, kBn, true, false>);
  } else if (vec_b) {
    launch(MatmulPipelineKernel<kBm, kBn, true, true>);
  } else {
    launch(MatmulPipelineKernel<kBm, kBn, false, true>);
  }
}

/// Blocks of the whole-tile, aligned instance for tile kBm×kBn that one SM holds.
template <int kBm, int kBn>
int ResidentBlocksOf() {
  return staged::BlocksPerSm(
      reinterpret_cast<const void*>(MatmulPipelineKernel<kBm, kBn, true, false>), kBm * kBn / 64,
      0);
}

}  // namespace

void LaunchPipelineTiles(const Problem& p, int tile_m, int tile_n, const SplitOutput& out,
                         cudaStream_t stream) {
  if (tile_m == 128 && tile_n == 64) {
    LaunchTile<128, 64>(p, out, stream);
  } else if (tile_m == 64 && tile_n == 128) {
    LaunchTile<64, 128>(p, out, stream);
  } else if (tile_m == 64 && tile_n == 64) {
    LaunchTile<64, 64>(p, out, stream);
  } else {
    throw std::invalid_argument("the cp.async pipeline takes the 128x64, 64x128 and 64x64 tiles");
  }
}

KernelFootprint PipelineFootprint(int tile_m, int tile_n) {
  if (!((tile_m == 128 || tile_m == 64) && (tile_n == 128 || tile_n == 64)) ||
      (tile_m == 128 && tile_n == 128)) {
    throw std::invalid_argument("the cp.async pipeline takes the 128x64, 64x128 and 64x64 tiles");
  }
  // a_tile[kStages][kBk][tile_m + kPadA] and b_tile[kStages][kBk][tile_n] floats.
  const int threads = tile_m * tile_n / 64;
  return {threads, sizeof(float) * kStages * kBk * ((tile_m + kPadA) + tile_n),
          kSplitKWarpsPerSm * 32 / threads};
}

int ResidentPipelineBlocks(int tile_m, int tile_n) {
  if (tile_m == 128 && tile_n == 64) return ResidentBlocksOf<128, 64>();
  if (tile_m == 64 && tile_n == 128) return ResidentBlocksOf<64, 128>();
  if (tile_m == 64 && tile_n == 64) return ResidentBlocksOf<64, 64>();
  throw std::invalid_argument("the cp.async pipeline takes the 128x64, 64x128 and 64x64 tiles");
}

}  // namespace ch04::optimized::detail
