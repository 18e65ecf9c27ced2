/**
 * @file splitk.cu
 * @brief Stage 6, split-K: when a shape has too few 128×128 tiles to give every SM work, pick
 *        the tile from the shape (64 or 128 on each side) and split K across blocks; each block
 *        writes its partial product to a workspace slice, and a second kernel adds the slices
 *        in a fixed order (the result does not depend on scheduling).
 *
 * Changes relative to stage 4 (doublebuffer.cu), whose kernel it launches for 128×128 tiles:
 * 1. The tile follows the shape (PlanSplitK in dispatch.cpp): 64 rows when M <= 64, 64 columns
 *    when 64 fits N better, so a 64×4096 product does not compute 64 rows of padding. The
 *    smaller tiles run the cp.async pipeline of pipeline.cu (no register holds a tile in
 *    flight, so their 128-register cap does not delay the loads).
 * 2. grid.y = splits: block (x, y) multiplies tile x over K range y (a multiple of 8 long) and
 *    stores its 8×8 outputs per thread into slice y of the workspace, whose rows are padded
 *    to a multiple of 4 floats so every store is a float4.
 * 3. SplitKReduceKernel adds the slices in a fixed order (threads of a group take every
 *    kLanes-th slice, then a butterfly) and writes C.
 * At 1024³ the 64 tiles of 128×128 leave 68 of 132 SMs idle; four splits of K = 256 give 256
 * blocks, two per SM (16 warps), each with a quarter of the loop. At 64×4096×4096 the 32 tiles
 * of 64×128 times 16 splits of 256 give 512 blocks of 4 warps, four per SM.
 */
#include <algorithm>

#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "common/cuda_check.hpp"

namespace ch04::optimized::detail {

namespace {

/// Launches the plan's tile kernel over the splits of @p out: stage 4's kernel for 128×128,
/// the cp.async pipeline (pipeline.cu) for the smaller tiles.
void LaunchTiles(const Problem& p, const SplitPlan& plan, const SplitOutput& out,
                 cudaStream_t stream) {
  if (plan.tile_m == 128 && plan.tile_n == 128) {
    LaunchDoubleBufferSplits(p, out, stream);
  } else {
    LaunchPipelineTiles(p, plan.tile_m, plan.tile_n, out, stream);
  }
}

}  // namespace

/// Threads per block of the reduction.
constexpr int kReduceThreads = 256;

/**
 * @brief C = Σ_s slice_s for the M×ldw slices of partial sums. A group of kLanes threads owns
 *        one float4 of C: lane i adds slices i, i + kLanes, ... in that order, then the group
 *        adds its lanes in a fixed butterfly, so the result never depends on scheduling.
 *
 * With few slices one thread per float4 is enough (kLanes = 1); with many (86 at 127×129×4099)
 * a whole warp shares one float4, so there are 32 times more loads in flight than float4s.
 * @tparam kLanes threads per float4 of C: 1, 8 or 32
 * @param[in] ws the slices, `splits` of them, @p slice floats apart, rows of @p ldw floats
 * @param[in] splits number of slices (>= 2)
 * @param[in] slice floats between consecutive slices (M·ldw)
 * @param[in] m rows of C
 * @param[in] n columns of C
 * @param[in] ldw row length of a slice (N rounded up to a multiple of 4)
 * @param[out] c M×N row-major
 * @param[in] vec_c rows of C are 16-byte aligned (then ldw == N): one float4 store per group
 * @par Launch configuration
 * 256 threads, a 1-D grid-stride loop over the M·ldw/4 float4s, kLanes threads each. Reads
 * 4·splits·M·ldw bytes, writes 4·M·N.
 * @pre ws 16-byte aligned, slice % 4 == 0, ldw % 4 == 0; ws and c do not alias.
 */
template <int kLanes>
__global__ void __launch_bounds__(kReduceThreads)
    SplitKReduceKernel(const float* __restrict__ ws, int splits, std::size_t slice, int m, int n,
                       int ldw, float* __restrict__ c, bool vec_c) {
  const int vecs_per_row = ldw / 4;
  const std::size_t total = static_cast<std::size_t>(m) * vecs_per_row;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x / kLanes;
  const int sub = threadIdx.x % kLanes;  // this thread's place in its group
  // The group's lanes inside the warp: a group never straddles two warps (kLanes divides 32).
  const unsigned group_mask = (kLanes == 32 ? 0xffffffffu : ((1u << kLanes) - 1u))
                              << ((threadIdx.x % 32) / kLanes * kLanes);
  for (std::size_t v = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kLanes;
       v < total; v += stride) {  // the same trip count for every lane of a group
    const int row = static_cast<int>(v / vecs_per_row);
    const int col = static_cast<int>(v % vecs_per_row) * 4;
    const float* src = ws + static_cast<std::size_t>(row) * ldw + col;
    // snippet-begin: ch04-splitk-reduce
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll 4
    for (int s = sub; s < splits; s += kLanes) {
      // The loads of several slices are independent and overlap; the adds stay in order.
      const float4 x = *reinterpret_cast<const float4*>(src + s * slice);
      sum.x += x.x;
      sum.y += x.y;
      sum.z += x.z;
      sum.w += x.w;
    }
#pragma unroll
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {  // fixed butterfly over the group
      sum.x += __shfl_xor_sync(group_mask, sum.x, offset);
      sum.y += __shfl_xor_sync(group_mask, sum.y, offset);
      sum.z += __shfl_xor_sync(group_mask, sum.z, offset);
      sum.w += __shfl_xor_sync(group_mask, sum.w, offset);
    }
    // snippet-end: ch04-splitk-reduce
    if (sub != 0) continue;
    float* dst = c + static_cast<std::size_t>(row) * n + col;
    if (vec_c) {
      *reinterpret_cast<float4*>(dst) = sum;
    } else {
      const float e[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if (col + j < n) dst[j] = e[j];  // the padding columns of the slices stay behind
      }
    }
  }
}

namespace {

/// Launches the reduction with kLanes threads per float4 of C.
template <int kLanes>
void LaunchReduce(const Problem& p, int splits, float* workspace, int ldw, cudaStream_t stream) {
  const std::size_t slice = static_cast<std::size_t>(p.m) * ldw;
  const std::size_t threads = slice / 4 * kLanes;
  const unsigned blocks = static_cast<unsigned>(
      std::min<std::size_t>((threads + kReduceThreads - 1) / kReduceThreads, 1u << 20));
  SplitKReduceKernel<kLanes><<<blocks, kReduceThreads, 0, stream>>>(
      workspace, splits, slice, p.m, p.n, ldw, p.c, AlignmentOf(p).vec_n);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace

void LaunchSplitK(const Problem& p, const SplitPlan& plan, float* workspace, cudaStream_t stream) {
  if (plan.splits <= 1) {  // no split: the smaller tile alone, straight into C
    const SplitOutput whole_k{1, p.k, p.c, p.n, p.n, 0, AlignmentOf(p).vec_n};
    LaunchTiles(p, plan, whole_k, stream);
    return;
  }
  // snippet-begin: ch04-splitk-launch
  const int ldw = (p.n + 3) / 4 * 4;
  const std::size_t slice = static_cast<std::size_t>(p.m) * ldw;
  // Slices get every column up to ldw (the padding columns hold zeros from zero-filled B), so
  // the reduction reads only initialised memory.
  const SplitOutput partial{plan.splits, plan.k_chunk, workspace, ldw, ldw, slice, true};
  LaunchTiles(p, plan, partial, stream);
  // snippet-end: ch04-splitk-launch
  // Enough threads that the slices' loads overlap: one per float4 of C while there are few
  // slices, a group of 8 or a warp per float4 when there are many.
  if (plan.splits <= 4) {
    LaunchReduce<1>(p, plan.splits, workspace, ldw, stream);
  } else if (plan.splits <= 32) {
    LaunchReduce<8>(p, plan.splits, workspace, ldw, stream);
  } else {
    LaunchReduce<32>(p, plan.splits, workspace, ldw, stream);
  }
}

}  // namespace ch04::optimized::detail
