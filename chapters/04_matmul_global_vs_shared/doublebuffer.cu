/**
 * @file doublebuffer.cu
 * @brief Stage 4 (double buffering), stage 6's 128×128 tiles and stage 8's full waves: the
 *        kernel of doublebuffer.cuh compiled with `--register-usage-level=10` (CMakeLists.txt),
 *        so that ptxas issues the next tile's loads where the source does, before the FFMAs.
 */
#include <stdexcept>

#include "chapters/04_matmul_global_vs_shared/doublebuffer.cuh"
#include "common/resident_grid.hpp"

namespace ch04::optimized::detail {

void LaunchDoubleBufferSplits(const Problem& p, const SplitOutput& out, cudaStream_t stream) {
  LaunchDoubleBufferTile<128, 128, false>(p, out, stream);
}

KernelFootprint DoubleBufferFootprint() {
  // a_tile[2][kBk][128 + kPadA] and b_tile[2][kBk][128] floats (doublebuffer.cuh).
  return {256, 2 * sizeof(float) * kBk * ((128 + kPadA) + 128), kMinBlocks};
}

int ResidentDoubleBufferBlocks() {
  return staged::BlocksPerSm(
      reinterpret_cast<const void*>(MatmulDoubleBufferKernel<128, 128, true, true, false, false>),
      256, 0);
}

void LaunchDoubleBuffer(const Problem& p, cudaStream_t stream) {
  LaunchDoubleBufferTile<128, 128, false>(p, WholeK(p), stream);
}

void LaunchDoubleBufferFirstTiles(const Problem& p, int tiles, cudaStream_t stream) {
  if (tiles > 0) LaunchDoubleBufferTile<128, 128, false>(p, WholeK(p), stream, tiles);
}

}  // namespace ch04::optimized::detail

namespace ch04::optimized {

int ResidentTileBlocks(int tile_m, int tile_n) {
  if (tile_m == 128 && tile_n == 128) return detail::ResidentDoubleBufferBlocks();
  if ((tile_m == 128 || tile_m == 64) && (tile_n == 128 || tile_n == 64)) {
    return detail::ResidentPipelineBlocks(tile_m, tile_n);
  }
  throw std::invalid_argument("ch04 split-K tiles are 64 or 128 on each side");
}

}  // namespace ch04::optimized
