/**
 * @file warptile.cu
 * @brief Stage 5 (warp tiles, two blocks per SM, grouped block order): the kernel of
 *        doublebuffer.cuh with kWarpTiling, compiled at ptxas's default register-usage level
 *        (at level 10, as doublebuffer.cu is, its aligned instance spills under the 128-register
 *        cap).
 */
#include "chapters/04_matmul_global_vs_shared/doublebuffer.cuh"

namespace ch04::optimized::detail {

void LaunchWarpTile(const Problem& p, cudaStream_t stream) {
  LaunchDoubleBufferTile<128, 128, true>(p, WholeK(p), stream);
}

}  // namespace ch04::optimized::detail
