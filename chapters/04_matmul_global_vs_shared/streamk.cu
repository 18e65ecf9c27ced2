/**
 * @file streamk.cu
 * @brief Stage 8, stream-K: stage 4 on the tiles that fill whole waves, and the tiles of the
 *        last, partial wave shared evenly by one wave of blocks, each taking the same number of
 *        k-steps whatever tile they fall in (Osama et al., "Stream-K", PPoPP 2023).
 *
 * At 4096³ the 1024 tiles of 128×128 on 264 block slots (132 SMs × 2) are 3.88 waves: the
 * fourth wave runs 232 blocks and leaves 32 slots idle, so the SMs spend 4 tile-times on 3.88
 * tiles of work each. Here stage 4 computes the first 792 tiles (3 full waves); then 264 blocks
 * share the last 232 tiles' 232 × 256 k-steps of 16, 225 each, so the last wave takes 0.88 of
 * a tile-time. Changes relative to stage 4 (doublebuffer.cu), whose kernel runs the full waves:
 * 1. A stream-K block covers a contiguous range of k-steps in the list of the last tiles' k-steps
 *    (tile by tile, k in order): the end of one tile and the start of the next at most, since a
 *    block takes fewer k-steps than a tile has. Each part in one tile is a piece.
 * 2. Its loop is the `cp.async` pipeline of pipeline.cuh with 16-deep tiles in two buffers: with
 *    stage 4's register copy, this kernel's extra state makes ptxas issue the next tile's loads
 *    after the FFMAs (see the lesson).
 * 3. A piece that is not a whole tile stores its 128×128 partial sums to the workspace and
 *    counts itself in the tile's counter; the block that arrives last adds the tile's pieces in
 *    block order (not arrival order, so the result does not depend on scheduling) and writes C.
 *    No block waits for another, so the result is right however many blocks are resident.
 */
#include "chapters/04_matmul_global_vs_shared/pipeline.cuh"
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

namespace ch04::optimized::detail {

namespace {

/// Side of the tile (stage 4's 128×128) and threads per block.
constexpr int kTile = 128;
constexpr int kThreads = 256;
/// Shared buffers of the stream-K blocks' pipeline.
constexpr int kStreamKStages = 2;
/// Float4s of partial sums per thread (its 8×8 outputs).
constexpr int kPartialVectors = 16;
static_assert(kStreamKSlotFloats == kTile * kTile, "a slot holds one tile's partial sums");

/// What a block knows about its current piece, kept in shared memory rather than registers
/// through the multiply loop (every thread holds the same values).
struct Piece {
  int tile;   ///< index among the stream-K tiles
  int begin;  ///< first k-step of the tile in the piece
  int end;    ///< one past its last
  int last;   ///< this block completes the tile
};

/// Slot of the partial sums of piece @p piece (0 or 1) of stream-K block @p block.
__device__ __forceinline__ float4* PartialSlot(float* partials, int block, int piece) {
  return reinterpret_cast<float4*>(partials) +
         static_cast<std::size_t>(2 * block + piece) * (kStreamKSlotFloats / 4);
}

/// Thread's float4 @p i of its 8×8 outputs: row i / 2, columns 4·(i % 2) .. +3.
__device__ __forceinline__ float* OutputVector(float (&acc)[8][8], int i) {
  return &acc[i / 2][(i % 2) * 4];
}

/**
 * @brief Piece @p piece (0: the first of this block's range, 1: the second, if any) of block
 *        blockIdx.x: multiply, then write C (a whole tile) or the partial sums, and let the
 *        tile's last block add them up.
 */
__device__ __forceinline__ void RunPiece(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ c, int m, int n, int k,
                                         const StreamKWork& w, int piece,
                                         float (*a_tile)[kStreamKDepth][kTile + kPadA],
                                         float (*b_tile)[kStreamKDepth][kTile], Piece& shared) {
  const int steps = k / kStreamKDepth;  // k-steps per tile
  const int total = w.sk_tiles * steps;
  const int block = static_cast<int>(blockIdx.x);
  // snippet-begin: ch04-streamk-range
  const int first = min(total, block * w.steps_per_block);  // this block's k-steps
  const int last = min(total, first + w.steps_per_block);
  int tile = first / steps;
  int begin = first - tile * steps;
  int end = min(steps, begin + (last - first));
  if (piece == 1) {  // the rest of the range, at the start of the next tile
    tile += 1;
    begin = 0;
    end = last - tile * steps;
  }
  // snippet-end: ch04-streamk-range
  if (end <= begin) return;  // the same for every thread: barriers stay uniform
  if (threadIdx.x == 0) shared = {tile, begin, end, 0};
  const int tiles_n = n / kTile;
  const int t = w.dp_tiles + tile;
  float acc[8][8];
  PipelineProduct<kTile, kTile, kStreamKDepth, kStreamKStages, true, false>(
      a, b, m, n, k, (t / tiles_n) * kTile, (t % tiles_n) * kTile, begin * kStreamKDepth,
      end * kStreamKDepth, a_tile, b_tile, acc);
  __syncthreads();  // shared.* visible; read back instead of kept in registers through the loop
  const Piece p = shared;
  const int t_c = w.dp_tiles + p.tile;
  const int m0 = (t_c / tiles_n) * kTile, n0 = (t_c % tiles_n) * kTile;
  const int row0 = (threadIdx.x / (kTile / 8)) * 4, col0 = (threadIdx.x % (kTile / 8)) * 4;
  if (p.begin == 0 && p.end == steps) {  // a whole tile: straight to C
    StoreOutputs<2, 2>(c, n, m, n, m0 + row0, kTile / 2, n0 + col0, kTile / 2, acc, true);
    return;
  }
  // snippet-begin: ch04-streamk-fixup
  // The blocks whose ranges meet this tile, q0 .. q1; a block's piece here is its first unless
  // its range began in the tile before.
  const int tile_first = p.tile * steps;
  const int q0 = tile_first / w.steps_per_block;
  const int q1 = (tile_first + steps - 1) / w.steps_per_block;
  float4* mine = PartialSlot(w.partials, block, piece);
#pragma unroll
  for (int i = 0; i < kPartialVectors; ++i) {
    const float* v = OutputVector(acc, i);
    __stcg(mine + i * kThreads + threadIdx.x, make_float4(v[0], v[1], v[2], v[3]));
  }
  __threadfence();  // the partial sums are visible to every SM before the count says so
  __syncthreads();
  if (threadIdx.x == 0) shared.last = atomicAdd(&w.counters[p.tile], 1) == q1 - q0;
  __syncthreads();
  if (!shared.last) return;
  __threadfence();  // the other pieces' sums are read after their counts
#pragma unroll
  for (int i = 0; i < kPartialVectors; ++i) {
    float* v = OutputVector(acc, i);
    const float4 own = make_float4(v[0], v[1], v[2], v[3]);
    float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int q = q0; q <= q1; ++q) {  // block order: the same sum whoever arrives last
      const int q_piece = q * w.steps_per_block < tile_first ? 1 : 0;
      const float4 x =
          q == block ? own
                     : __ldcg(PartialSlot(w.partials, q, q_piece) + i * kThreads + threadIdx.x);
      if (q == q0) {
        sum = x;
      } else {
        sum.x += x.x;
        sum.y += x.y;
        sum.z += x.z;
        sum.w += x.w;
      }
    }
    v[0] = sum.x;
    v[1] = sum.y;
    v[2] = sum.z;
    v[3] = sum.w;
  }
  StoreOutputs<2, 2>(c, n, m, n, m0 + row0, kTile / 2, n0 + col0, kTile / 2, acc, true);
  // snippet-end: ch04-streamk-fixup
}

}  // namespace

/**
 * @brief Stage 8's stream-K blocks: block j takes k-steps [j·s, (j+1)·s) of the list of the last
 *        w.sk_tiles tiles' k-steps (s = w.steps_per_block <= K/16, so at most two pieces).
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major, 16-byte aligned
 * @param[out] c M×N row-major, 16-byte aligned
 * @param[in] m rows of A and C, a multiple of 128
 * @param[in] n columns of B and C, a multiple of 128
 * @param[in] k columns of A, rows of B, a multiple of 16
 * @param[in] w the plan and the workspace (counters zero at launch)
 * @par Launch configuration
 * 256 threads; w.blocks blocks (one wave: 2 per SM); 2·16·(128 + 4 + 128)·4 = 33,280 bytes of
 * static shared memory. Reads 4·(128 + 128)·16 bytes per k-step; a split tile's pieces write
 * and read 64 KiB of partial sums each.
 */
__global__ void __launch_bounds__(kThreads, kStreamKBlocksPerSm)
    MatmulStreamKKernel(const float* __restrict__ a, const float* __restrict__ b,
                        float* __restrict__ c, int m, int n, int k, StreamKWork w) {
  __shared__ __align__(16) float a_tile[kStreamKStages][kStreamKDepth][kTile + kPadA];
  __shared__ __align__(16) float b_tile[kStreamKStages][kStreamKDepth][kTile];
  __shared__ Piece shared;
#pragma unroll 1
  for (int piece = 0; piece < 2; ++piece) {
    RunPiece(a, b, c, m, n, k, w, piece, a_tile, b_tile, shared);
    __syncthreads();  // the buffers and `shared` are reused by the next piece
  }
}

void LaunchStreamK(const Problem& p, const StreamKPlan& plan, float* workspace,
                   cudaStream_t stream) {
  // snippet-begin: ch04-streamk-launch
  StreamKWork w{plan.dp_tiles, plan.sk_tiles, plan.steps_per_block, workspace,
                reinterpret_cast<int*>(workspace + StreamKPartialFloats(plan))};
  CUDA_CHECK(cudaMemsetAsync(w.counters, 0, plan.sk_tiles * sizeof(int), stream));
  LaunchDoubleBufferFirstTiles(p, plan.dp_tiles, stream);  // stage 4, whole waves
  MatmulStreamKKernel<<<plan.blocks, kThreads, 0, stream>>>(p.a, p.b, p.c, p.m, p.n, p.k, w);
  CUDA_CHECK_LAST_LAUNCH();
  // snippet-end: ch04-streamk-launch
}

KernelFootprint StreamKFootprint() {
  // a_tile[kStreamKStages][kStreamKDepth][kTile + kPadA], b_tile[...][kTile] and the piece.
  return {
      kThreads,
      sizeof(float) * kStreamKStages * kStreamKDepth * ((kTile + kPadA) + kTile) + sizeof(Piece),
      kStreamKBlocksPerSm};
}

}  // namespace ch04::optimized::detail

namespace ch04::optimized {

int ResidentStreamKBlocks() {
  return staged::BlocksPerSm(reinterpret_cast<const void*>(detail::MatmulStreamKKernel),
                             detail::kThreads, 0);
}

}  // namespace ch04::optimized
