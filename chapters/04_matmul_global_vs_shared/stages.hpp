/**
 * @file stages.hpp
 * @brief Internal to chapter 04: one launcher per optimisation stage (each in its own file),
 *        the alignment facts they share, and the dispatch that turns those facts into kernel
 *        template arguments. `dispatch.cpp` calls these; nothing outside the chapter does.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>
#include <utility>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/aligned_split.hpp"

namespace ch04::optimized::detail {

/// One float product: operands, output and shape (M, N >= 1 and K >= 1 when launched).
struct Problem {
  const float* a;  ///< device A, M×K row-major
  const float* b;  ///< device B, K×N row-major
  float* c;        ///< device C, M×N row-major
  int m;           ///< rows of A and C
  int n;           ///< columns of B and C
  int k;           ///< columns of A, rows of B
};

/// Which operands may be read and written with 16-byte accesses.
struct Alignment {
  bool vec_a;  ///< rows of A are 16-byte aligned: K % 4 == 0 and A aligned
  bool vec_n;  ///< rows of B and C are 16-byte aligned: N % 4 == 0, B and C aligned
};

/// The alignment of @p p's rows.
/// @param[in] p the product
inline Alignment AlignmentOf(const Problem& p) {
  return {p.k % 4 == 0 && staged::IsAligned16(p.a),
          p.n % 4 == 0 && staged::IsAligned16(p.b) && staged::IsAligned16(p.c)};
}

/**
 * @brief Calls @p launch with the template flags (kVecA, kVecN, kChecked) that fit the shape:
 *        unchecked only when every tile is whole, 16-byte paths only for aligned rows (each
 *        operand on its own).
 * @param[in] al the alignment of the rows
 * @param[in] whole M, N multiples of the block tile and K of its depth
 * @param[in] launch generic callable taking three std::integral_constant<bool, ...>
 */
template <typename Launch>
void DispatchShape(const Alignment& al, bool whole, Launch&& launch) {
  using T = std::true_type;
  using F = std::false_type;
  if (al.vec_a && al.vec_n && whole) {
    launch(T{}, T{}, F{});
  } else if (al.vec_a && al.vec_n) {
    launch(T{}, T{}, T{});
  } else if (al.vec_a) {
    launch(T{}, F{}, T{});
  } else if (al.vec_n) {
    launch(F{}, T{}, T{});
  } else {
    launch(F{}, F{}, T{});
  }
}

/// Stage 1 (optimized.cu): 16×16 shared tiles; float and int32_t.
/// @tparam T float or int32_t
/// @param[in] a device A
/// @param[in] b device B
/// @param[out] c device C
/// @param[in] m rows of C
/// @param[in] n columns of C
/// @param[in] k inner dimension (0 writes zeros)
/// @param[in] stream the stream
template <typename T>
void LaunchTiled16(const T* a, const T* b, T* c, int m, int n, int k, cudaStream_t stream);

/// Stage 2 (regblock.cu). @param[in] p the product @param[in] stream the stream
void LaunchRegBlock(const Problem& p, cudaStream_t stream);

/// Stage 3 (vectorized.cu). @param[in] p the product @param[in] stream the stream
void LaunchVectorized(const Problem& p, cudaStream_t stream);

/// Stage 4 (doublebuffer.cu). @param[in] p the product @param[in] stream the stream
void LaunchDoubleBuffer(const Problem& p, cudaStream_t stream);

/// Stage 5 (warptile.cu). @param[in] p the product @param[in] stream the stream
void LaunchWarpTile(const Problem& p, cudaStream_t stream);

/// Where the double-buffered kernel writes and which part of K each block sums (split-K).
struct SplitOutput {
  int splits;         ///< blocks along K (grid.y)
  int k_chunk;        ///< K per split, a multiple of kBk
  float* out;         ///< C, or the workspace of partial sums
  int ldo;            ///< leading dimension of out
  int n_out;          ///< columns of out that may be written
  std::size_t slice;  ///< elements between the partial sums of consecutive splits
  bool vec_out;       ///< rows of out are 16-byte aligned
};

/// Stage 6's 128×128 tile: the double-buffered kernel over the splits of @p out (doublebuffer.cu).
/// @param[in] p the product
/// @param[in] out splits and where each writes
/// @param[in] stream the stream
void LaunchDoubleBufferSplits(const Problem& p, const SplitOutput& out, cudaStream_t stream);

/// Blocks of stage 6's 128×128 kernel that one SM holds (doublebuffer.cu).
int ResidentDoubleBufferBlocks();

/// What a host-side occupancy model needs of one kernel (`ModelResidency`).
struct KernelFootprint {
  int threads;       ///< threads per block
  std::size_t smem;  ///< static shared memory per block, bytes
  int min_blocks;    ///< blocks per SM its __launch_bounds__ asks for
};

/// The 128×128 double-buffered kernel's footprint (doublebuffer.cu).
KernelFootprint DoubleBufferFootprint();
/// The pipeline kernel's footprint for tile @p tile_m × @p tile_n (pipeline.cu).
/// @param[in] tile_m rows per block: 64 or 128
/// @param[in] tile_n columns per block: 64 or 128 (not both 128)
KernelFootprint PipelineFootprint(int tile_m, int tile_n);
/// The stream-K kernel's footprint (streamk.cu).
KernelFootprint StreamKFootprint();

/// Stage 6's smaller tiles: the cp.async pipeline kernel over the splits of @p out
/// (pipeline.cu).
/// @param[in] p the product
/// @param[in] tile_m rows per block: 64 or 128
/// @param[in] tile_n columns per block: 64 or 128 (not both 128)
/// @param[in] out splits and where each writes
/// @param[in] stream the stream
void LaunchPipelineTiles(const Problem& p, int tile_m, int tile_n, const SplitOutput& out,
                         cudaStream_t stream);

/// Blocks of the pipeline kernel for tile @p tile_m × @p tile_n that one SM holds (pipeline.cu).
/// @param[in] tile_m rows per block: 64 or 128
/// @param[in] tile_n columns per block: 64 or 128 (not both 128)
int ResidentPipelineBlocks(int tile_m, int tile_n);

/// Stage 6 (splitk.cu): the plan's tiles and splits, then the ordered reduction.
/// @param[in] p the product
/// @param[in] plan tile and splits (splits > 1 needs the workspace)
/// @param[in] workspace plan.splits · M · roundup(N, 4) floats, 16-byte aligned (or null when
///            plan.splits == 1)
/// @param[in] stream the stream
void LaunchSplitK(const Problem& p, const SplitPlan& plan, float* workspace, cudaStream_t stream);

/// Stage 7 (skinny.cu). @param[in] p the product @param[in] stream the stream
void LaunchSkinny(const Problem& p, cudaStream_t stream);

/// Stage 8's full waves: stage 4's kernel on the first @p tiles tiles of 128×128, in row order
/// (doublebuffer.cu; nothing when @p tiles is 0).
/// @param[in] p the product
/// @param[in] tiles how many tiles
/// @param[in] stream the stream
void LaunchDoubleBufferFirstTiles(const Problem& p, int tiles, cudaStream_t stream);

/// What stage 8's stream-K blocks need: the plan and the workspace.
struct StreamKWork {
  int dp_tiles;         ///< tiles before the first stream-K tile
  int sk_tiles;         ///< stream-K tiles
  int steps_per_block;  ///< k-steps of kStreamKDepth per block
  float* partials;      ///< two slots of 128×128 partial sums per block
  int* counters;        ///< one per stream-K tile, zero at launch
};

/// Floats of one slot of stage 8's partial sums: a 128×128 tile.
constexpr int kStreamKSlotFloats = 128 * 128;

/// Floats of partial sums stage 8 keeps for @p plan: two slots per block.
/// @param[in] plan the plan
inline std::size_t StreamKPartialFloats(const StreamKPlan& plan) {
  return static_cast<std::size_t>(plan.blocks) * 2 * kStreamKSlotFloats;
}

/// Workspace bytes of @p plan: the partial sums, then a counter per stream-K tile (rounded up to
/// 16 bytes).
/// @param[in] plan the plan
inline std::size_t StreamKWorkspaceBytes(const StreamKPlan& plan) {
  if (plan.sk_tiles == 0) return 0;
  return StreamKPartialFloats(plan) * sizeof(float) +
         (static_cast<std::size_t>(plan.sk_tiles) * sizeof(int) + 15) / 16 * 16;
}

/// Stage 8 (streamk.cu): stage 4 on the plan's first tiles, then the stream-K blocks.
/// @param[in] p the product (M, N multiples of 128, K of 16; B and C 16-byte aligned)
/// @param[in] plan a plan with sk_tiles > 0
/// @param[in] workspace StreamKWorkspaceBytes(plan) bytes, 16-byte aligned
/// @param[in] stream the stream
void LaunchStreamK(const Problem& p, const StreamKPlan& plan, float* workspace,
                   cudaStream_t stream);

}  // namespace ch04::optimized::detail
