/**
 * @file tile_loads.cuh
 * @brief Device helpers of the register-blocked stages (2-8): where a block's tile lies in C,
 *        loading a tile from global memory into registers, storing it to shared memory (A
 *        transposed), reading a thread's fragments, the outer product, and storing outputs.
 *
 * Every tile is kBk = 8 deep along K. A tile of A is kept in shared memory transposed, as
 * `a_tile[k][m]` with rows of kBm + kPadA floats, so one float4 read gives four rows of A for
 * one k; a tile of B is kept as it is, `b_tile[k][n]`.
 */
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace ch04::optimized::detail {

/// Depth (along K) of one shared-memory tile for stages 2-6.
constexpr int kBk = 8;
/// Padding of a transposed A row in shared memory: with rows of kBm + 4 floats (kBm a multiple
/// of 32), the four floats one thread stores land in banks 4 apart from its neighbour's and
/// 16-byte alignment is kept.
constexpr int kPadA = 4;
/// Tile rows per group in the L2-friendly block order of stage 5.
constexpr int kGroupRows = 8;

/// Position of a block's tile in C, in units of tiles.
struct TileCoord {
  int m;  ///< tile row
  int n;  ///< tile column
};

/**
 * @brief Maps blockIdx.x to a tile of C.
 *
 * Row-major order walks a whole row of tiles (all of B) before moving down. With
 * @p kGrouped, consecutive blocks instead cover kGroupRows tile rows column by column, so the
 * blocks resident at one time read kGroupRows panels of A and a few panels of B, which stay
 * in L2 (Triton's "grouped ordering").
 * @tparam kGrouped false: row-major; true: groups of kGroupRows tile rows
 * @param[in] tiles_m number of tile rows
 * @param[in] tiles_n number of tile columns
 */
// snippet-begin: ch04-block-order
template <bool kGrouped>
__device__ __forceinline__ TileCoord BlockTile(int tiles_m, int tiles_n) {
  const int id = blockIdx.x;
  if constexpr (!kGrouped) {
    return {id / tiles_n, id % tiles_n};
  } else {
    const int per_group = kGroupRows * tiles_n;
    const int first_m = (id / per_group) * kGroupRows;
    const int rows = min(tiles_m - first_m, kGroupRows);  // the last group may be shorter
    const int in_group = id % per_group;
    return {first_m + in_group % rows, in_group / rows};
  }
}
// snippet-end: ch04-block-order

/// One thread's share of a kRows×kCols tile loaded from global memory, as float4s.
/// @tparam kRows tile rows
/// @tparam kCols tile columns (a multiple of 4)
/// @tparam kThreads threads of the block that share the load
template <int kRows, int kCols, int kThreads>
struct TileRegs {
  /// float4 vectors per thread.
  static constexpr int kVectors = kRows * kCols / 4 / kThreads;
  static_assert(kVectors >= 1 && kVectors * 4 * kThreads == kRows * kCols,
                "tile must split evenly");
  float4 v[kVectors];  ///< the loaded values, vector i at element group threadIdx.x + i·kThreads
};

/**
 * @brief Loads a kRows×kCols tile of a row-major matrix, starting at (r0, c0), into registers.
 *
 * Vector i of thread t is element group idx = t + i·kThreads: row idx / (kCols/4), columns
 * 4·(idx % (kCols/4)) .. +3, so consecutive threads read consecutive 16-byte pieces of a row
 * (coalesced). Elements outside the matrix read as zero.
 * @tparam kRows tile rows
 * @tparam kCols tile columns (a multiple of 4)
 * @tparam kThreads threads of the block
 * @tparam kVec rows are 16-byte aligned (ld % 4 == 0, aligned base): one 16-byte load per vector
 * @tparam kChecked false when the tile is known to lie inside the matrix
 * @param[in] src the matrix
 * @param[in] ld its leading dimension (columns)
 * @param[in] rows its rows
 * @param[in] r0 first tile row
 * @param[in] c0 first tile column
 * @param[out] regs the thread's share
 */
// snippet-begin: ch04-load-tile
template <int kRows, int kCols, int kThreads, bool kVec, bool kChecked>
__device__ __forceinline__ void LoadTile(const float* __restrict__ src, int ld, int rows, int r0,
                                         int c0, TileRegs<kRows, kCols, kThreads>& regs) {
  static_assert(kVec || kChecked, "the unchecked path is only used with aligned rows");
#pragma unroll
  for (int i = 0; i < TileRegs<kRows, kCols, kThreads>::kVectors; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int r = r0 + idx / (kCols / 4);
    const int col = c0 + (idx % (kCols / 4)) * 4;
    const bool row_in = !kChecked || r < rows;
    const std::size_t offset = static_cast<std::size_t>(row_in ? r : 0) * ld + col;
    if constexpr (kVec) {
      // ld % 4 == 0 and col % 4 == 0, so col < ld implies col + 3 < ld: the vector is whole.
      regs.v[i] = (row_in && (!kChecked || col < ld))
                      ? *reinterpret_cast<const float4*>(src + offset)
                      : make_float4(0.f, 0.f, 0.f, 0.f);
    } else {
      float e[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) e[j] = (row_in && col + j < ld) ? src[offset + j] : 0.f;
      regs.v[i] = make_float4(e[0], e[1], e[2], e[3]);
    }
  }
}
// snippet-end: ch04-load-tile

/**
 * @brief Stores a kBm×8 tile of A, held as LoadTile left it, transposed: dst[k][m].
 *
 * Transposing lets the compute loop read 4 consecutive rows of A for one k as a float4.
 * With rows of kBm + kPadA floats (≡ 4 mod 32 words), the 32 threads of a warp (16 rows ×
 * 2 k-groups) store to 32 different banks for each of the four components.
 * @tparam kBm tile rows (a multiple of 32)
 * @tparam kThreads threads of the block
 * @param[out] dst shared tile, kBk rows of kBm + kPadA floats
 * @param[in] regs the thread's share of the kBm×8 tile
 */
// snippet-begin: ch04-store-transposed
template <int kBm, int kThreads>
__device__ __forceinline__ void StoreTransposed(float (*dst)[kBm + kPadA],
                                                const TileRegs<kBm, kBk, kThreads>& regs) {
#pragma unroll
  for (int i = 0; i < TileRegs<kBm, kBk, kThreads>::kVectors; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int r = idx / (kBk / 4);
    const int col = (idx % (kBk / 4)) * 4;
    dst[col + 0][r] = regs.v[i].x;
    dst[col + 1][r] = regs.v[i].y;
    dst[col + 2][r] = regs.v[i].z;
    dst[col + 3][r] = regs.v[i].w;
  }
}
// snippet-end: ch04-store-transposed

/**
 * @brief Stores an 8×kBn tile of B as it is: dst[k][n], one 16-byte store per vector
 *        (consecutive threads, consecutive addresses: conflict-free).
 * @tparam kBn tile columns
 * @tparam kThreads threads of the block
 * @param[out] dst shared tile, kBk rows of kBn floats
 * @param[in] regs the thread's share of the 8×kBn tile
 */
template <int kBn, int kThreads>
__device__ __forceinline__ void StoreDirect(float (*dst)[kBn],
                                            const TileRegs<kBk, kBn, kThreads>& regs) {
#pragma unroll
  for (int i = 0; i < TileRegs<kBk, kBn, kThreads>::kVectors; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    *reinterpret_cast<float4*>(&dst[idx / (kBn / 4)][(idx % (kBn / 4)) * 4]) = regs.v[i];
  }
}

/// @brief Reads kGroups groups of 4 values of one shared row, the group g at
///        [first + g·step, first + g·step + 3], as kGroups 16-byte loads.
/// @tparam kGroups number of float4 groups
/// @param[in] row the shared row (16-byte aligned)
/// @param[in] first offset of the first group (a multiple of 4)
/// @param[in] step distance between groups (a multiple of 4)
/// @param[out] frag the 4·kGroups values
// snippet-begin: ch04-load-fragment
template <int kGroups>
__device__ __forceinline__ void LoadFragment(const float* row, int first, int step,
                                             float (&frag)[4 * kGroups]) {
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    const float4 v = *reinterpret_cast<const float4*>(row + first + g * step);
    frag[4 * g + 0] = v.x;
    frag[4 * g + 1] = v.y;
    frag[4 * g + 2] = v.z;
    frag[4 * g + 3] = v.w;
  }
}
// snippet-end: ch04-load-fragment

/// @brief acc += a ⊗ b: kM·kN FFMAs from kM + kN values in registers.
/// @tparam kM values of a column of A
/// @tparam kN values of a row of B
/// @param[in] a kM values of a column of A
/// @param[in] b kN values of a row of B
/// @param[in,out] acc the thread's kM×kN outputs
// snippet-begin: ch04-outer-product
template <int kM, int kN>
__device__ __forceinline__ void OuterProduct(const float (&a)[kM], const float (&b)[kN],
                                             float (&acc)[kM][kN]) {
#pragma unroll
  for (int i = 0; i < kM; ++i) {
#pragma unroll
    for (int j = 0; j < kN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}
// snippet-end: ch04-outer-product

/**
 * @brief Writes a thread's outputs: rows row0 + g·row_step + i, columns col0 + h·col_step + j
 *        (g < kRowGroups, h < kColGroups, i, j < 4), skipping those outside the m×n matrix.
 * @tparam kRowGroups groups of 4 rows
 * @tparam kColGroups groups of 4 columns
 * @param[out] c the output matrix
 * @param[in] ldc its leading dimension
 * @param[in] m rows that may be written
 * @param[in] n columns that may be written
 * @param[in] row0 first row
 * @param[in] row_step distance between row groups
 * @param[in] col0 first column (a multiple of 4)
 * @param[in] col_step distance between column groups (a multiple of 4)
 * @param[in] acc the outputs, acc[g·4 + i][h·4 + j]
 * @param[in] vec rows of c are 16-byte aligned (ldc % 4 == 0, aligned base): whole groups of 4
 *            are stored as one float4
 */
template <int kRowGroups, int kColGroups>
__device__ __forceinline__ void StoreOutputs(float* __restrict__ c, int ldc, int m, int n, int row0,
                                             int row_step, int col0, int col_step,
                                             const float (&acc)[4 * kRowGroups][4 * kColGroups],
                                             bool vec) {
#pragma unroll
  for (int g = 0; g < kRowGroups; ++g) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = row0 + g * row_step + i;
      if (row >= m) continue;
      float* c_row = c + static_cast<std::size_t>(row) * ldc;
#pragma unroll
      for (int h = 0; h < kColGroups; ++h) {
        const int col = col0 + h * col_step;
        const float* v = &acc[g * 4 + i][h * 4];
        if (vec && col + 3 < n) {
          *reinterpret_cast<float4*>(c_row + col) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if (col + j < n) c_row[col + j] = v[j];
          }
        }
      }
    }
  }
}

}  // namespace ch04::optimized::detail
