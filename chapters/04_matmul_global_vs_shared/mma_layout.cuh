/**
 * @file mma_layout.cuh
 * @brief Stage 9's index arithmetic, host and device alike: where each 16-byte chunk of a k-tile
 *        goes in shared memory (the swizzles), which chunk each thread copies, and which row each
 *        lane hands `ldmatrix`. The kernel (mma_sync.cu) uses these functions; a host test
 *        replays them against PTX's fragment layouts and counts the banks each access touches.
 *
 * Geometry: 256 threads in 8 warps, 128 columns of C per block. Where a block holds three
 * 48 KiB k-tiles (sm_80, sm_90) a block computes 256×128 of C and each warp 64×64 (`Wide`);
 * elsewhere 128×128 and 64×32 (`Narrow`). A k-tile is 128 bytes of every row of A (32 TF32 or
 * 64 BF16 values: 32 or 16 KiB) and as many rows of B (16 KiB).
 */
#pragma once

#include <cuda_runtime.h>

namespace ch04::tensor::layout {

inline constexpr int kBn = 128;                      ///< columns of C per block
inline constexpr int kThreads = 256;                 ///< threads per block
inline constexpr int kWarpM = 64;                    ///< rows of C per warp
inline constexpr int kMTiles = kWarpM / 16;          ///< 16-row mma tiles per warp
inline constexpr int kRowBytes = 128;                ///< bytes of one k-tile of a row of A
inline constexpr int kTileBytesB = kRowBytes * kBn;  ///< B's k-tile: 128 bytes of k × 128 columns
inline constexpr int kCopiesB = kTileBytesB / 16 / kThreads;  ///< B's 16-byte copies per thread

// snippet-begin: ch04-mma-geometry
/// A block's shape: @p kRows rows of C, warps of 64 × @p kWarpCols (8 warps, 128 columns), and
/// the blocks per SM its registers are planned for (@p kBlocks: 2 gives each thread 128).
template <int kRows, int kWarpCols, int kBlocks>
struct Geometry {
  static constexpr int kBlocksPerSm = kBlocks;  ///< minimum blocks per SM (`__launch_bounds__`)
  static constexpr int kBm = kRows;             ///< rows of C per block
  static constexpr int kWarpN = kWarpCols;      ///< columns of C per warp
  static constexpr int kWarpsN = kBn / kWarpN;  ///< warps along N
  static constexpr int kNTiles = kWarpN / 8;    ///< 8-column mma tiles per warp
  static constexpr int kTileBytesA = kBm * kRowBytes;            ///< A's k-tile
  static constexpr int kCopiesA = kTileBytesA / 16 / kThreads;   ///< A's copies per thread
  static constexpr int kStageBytes = kTileBytesA + kTileBytesB;  ///< one k-tile of A and B
  static_assert(kBm / kWarpM * kWarpsN * 32 == kThreads, "one warp per warp tile");
};
/// 256×128 per block, 64×64 per warp: per 16 k, 8 `ldmatrix.x4` feed 32 `mma` (48 KiB a k-tile).
using Wide = Geometry<256, 64, 1>;
/// 128×128 per block, 64×32 per warp: 6 `ldmatrix.x4` feed 16 `mma` (32 KiB, two fit in 64 KiB).
using Narrow = Geometry<128, 32, 2>;
// snippet-end: ch04-mma-geometry

/// Bytes of one row of B's k-tile: 128 values of @p kElemBytes bytes.
/// @tparam kElemBytes 4 (TF32) or 2 (BF16)
template <int kElemBytes>
inline constexpr int kRowBytesB = kBn* kElemBytes;

/// A row of a tile and a 16-byte chunk of it.
struct RowChunk {
  int row;    ///< row of the k-tile (of A: 0..127; of B: 0..depth-1)
  int chunk;  ///< 16-byte chunk of that row, before the swizzle
};

// snippet-begin: ch04-mma-swizzle
/// Byte offset of 16-byte chunk @p c (0..7) of row @p r of A's k-tile: chunk c ^ (r % 8).
__host__ __device__ constexpr int OffsetA(int r, int c) {
  return r * kRowBytes + ((c ^ (r & 7)) << 4);
}

/// Byte offset of chunk @p c of row @p k of B's k-tile: BF16 rows (16 chunks) swizzled as A's
/// for `ldmatrix.trans`; TF32 rows (32 chunks) by 2·(k % 4) for the 32-bit column reads.
template <int kElemBytes>
__host__ __device__ constexpr int OffsetB(int k, int c) {
  if constexpr (kElemBytes == 2) return k * kRowBytesB<2> + ((c ^ (k & 7)) << 4);
  return k * kRowBytesB<4> + ((c ^ ((k & 3) << 1)) << 4);
}
// snippet-end: ch04-mma-swizzle

/// The chunk of A's k-tile that copy @p idx (threadIdx.x + i·kThreads) brings: 8 per row.
/// @param[in] idx the copy's index, 0 .. 8·kBm - 1
__host__ __device__ constexpr RowChunk CopyChunkA(int idx) { return {idx >> 3, idx & 7}; }

/// The chunk of B's k-tile that copy @p idx brings: kBn·kElemBytes/16 chunks per row.
/// @tparam kElemBytes 4 (TF32) or 2 (BF16)
/// @param[in] idx the copy's index, 0 .. 1023
template <int kElemBytes>
__host__ __device__ constexpr RowChunk CopyChunkB(int idx) {
  constexpr int kChunks = kRowBytesB<kElemBytes> / 16;
  return {idx / kChunks, idx % kChunks};
}

/// The row of A's k-tile and the chunk that lane @p lane hands `ldmatrix.x4` for m-tile @p mt of
/// the warp at @p warp_m, mma step @p ks (32 bytes of k per step): lanes 0-7 rows 0-7 of the
/// step's first chunk, 8-15 rows 8-15, 16-23 and 24-31 the same rows of the second chunk.
/// @param[in] warp_m the warp's row (0..kBm/64 - 1) @param[in] mt the m-tile (0..3)
/// @param[in] ks the mma step within the k-tile (0..3) @param[in] lane the lane
__host__ __device__ constexpr RowChunk LoadRowA(int warp_m, int mt, int ks, int lane) {
  return {warp_m * kWarpM + mt * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, ks * 2 + (lane >> 4)};
}

/// BF16: the row of B's k-tile and the chunk that lane @p lane hands `ldmatrix.x4.trans` for the
/// n-tile pair @p np (columns 16·np .. 16·np + 15 of the warp's) at mma step @p ks (16 rows of
/// k): lanes 0-7 rows 0-7 of the pair's first 8 columns, 8-15 rows 8-15, 16-31 the second 8.
/// @param[in] col0 the warp's first column in the block @param[in] np the n-tile pair
/// @param[in] ks the mma step (0..3) @param[in] lane the lane
__host__ __device__ constexpr RowChunk LoadRowBTrans(int col0, int np, int ks, int lane) {
  return {ks * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, (col0 + np * 16) / 8 + (lane >> 4)};
}

/// TF32: the byte offset in B's k-tile of the word lane @p lane reads for register @p h of n-tile
/// @p nt at mma step @p ks: B[ks·8 + lane % 4 + 4h][col0 + nt·8 + lane / 4].
/// @param[in] col0 the warp's first column in the block @param[in] nt the n-tile
/// @param[in] ks the mma step (0..3) @param[in] h the register (0 or 1) @param[in] lane the lane
__host__ __device__ constexpr int LoadWordBTf32(int col0, int nt, int ks, int h, int lane) {
  const int col = col0 + nt * 8 + (lane >> 2);
  const int k = ks * 8 + (lane & 3) + 4 * h;
  return OffsetB<4>(k, col >> 2) + (col & 3) * 4;
}

}  // namespace ch04::tensor::layout
