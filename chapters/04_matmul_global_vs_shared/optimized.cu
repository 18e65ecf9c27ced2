/**
 * @file optimized.cu
 * @brief The optimisation stages, from the slides' shared-memory tile to a kernel that stands
 *        next to cuBLAS SGEMM, all in plain FP32 FFMA (no tensor cores, no TF32).
 *
 * Changes relative to naive.cu:
 * 1. `tiled16`: a 16×16 block stages 16×16 tiles of A and B in shared memory; each element
 *    loaded from global memory is used 16 times (global intensity 0.25 → 4 flop/byte).
 * 2. `regblock`: a 256-thread block computes a 128×128 tile of C, each thread an 8×8 sub-tile
 *    held in registers; one shared value feeds 8 FFMAs (32 flop/byte from global memory,
 *    2 flop/byte from shared memory instead of 0.25).
 * 3. `vectorized`: 16-byte global loads (when rows are 16-byte aligned), A stored transposed
 *    and padded in shared memory so both operands are read as float4 without bank conflicts;
 *    each thread's 8×8 outputs become 2×2 groups of 4×4 spread 64 apart.
 * 4. `doublebuffer`: two shared buffers; the next tile's global loads are issued before the
 *    current tile's FFMAs and stored after them, so one barrier per tile and no load stall.
 * 5. `warptile`: each warp owns a 32×64 region of the block tile (lanes 4×8), so a warp's
 *    fragment reads touch 64 + 128 contiguous bytes (one shared wavefront each);
 *    `__launch_bounds__(256, 2)` keeps two blocks per SM; blocks walk C in groups of 8 tile
 *    rows so the A and B panels in flight stay in L2.
 *
 * Every stage handles any M, N, K: tiles are loaded with bounds checks and zero fill (a
 * padded zero adds nothing to a sum), and outputs outside C are not stored. The 16-byte paths
 * are used only when the rows they read are 16-byte aligned (K % 4 == 0 for A, N % 4 == 0 for
 * B and C, aligned base pointers); the checks are dropped entirely when M, N are multiples of
 * 128 and K of 8 (template parameters, so the common square case pays nothing for generality).
 */
#include <cstdint>
#include <string>
#include <type_traits>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace ch04::optimized {

/// Kernels and device helpers of the optimisation stages.
namespace detail {

/// Side of the slides' square tile (stage 1).
constexpr int kTile16 = 16;
/// Rows of C per block for stages 2-5.
constexpr int kBm = 128;
/// Columns of C per block for stages 2-5.
constexpr int kBn = 128;
/// Depth (along K) of one shared-memory tile for stages 2-5.
constexpr int kBk = 8;
/// Threads per block for stages 2-5 (each computes 8×8 = 64 outputs).
constexpr int kThreads = 256;
/// Padding of a transposed A row in shared memory: 132 floats, so the four floats one thread
/// stores land in banks 4 apart from its neighbour's and 16-byte alignment is kept.
constexpr int kPadA = 4;
/// Tile rows per group in the L2-friendly block order of stage 5.
constexpr int kGroupRows = 8;

// ----------------------------------------------------------------------------------------------
// Stage 1: the slides' 16×16 shared-memory tile.

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
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias.
 */
template <typename T>
__global__ void MatmulTiled16Kernel(const T* __restrict__ a, const T* __restrict__ b,
                                    T* __restrict__ c, int m, int n, int k) {
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
}

// ----------------------------------------------------------------------------------------------
// Helpers shared by stages 2-5.

/// Position of a block's 128×128 tile in C, in units of tiles.
struct TileCoord {
  int m;  ///< tile row
  int n;  ///< tile column
};

/**
 * @brief Maps the 1-D block index to a tile of C.
 *
 * Row-major order walks a whole row of tiles (all of B) before moving down. With
 * @p kGrouped, consecutive blocks instead cover kGroupRows tile rows column by column, so the
 * blocks resident at one time read kGroupRows panels of A and a few panels of B, which stay
 * in L2 (Triton's "grouped ordering").
 * @tparam kGrouped false: row-major; true: groups of kGroupRows tile rows
 * @param[in] tiles_m number of tile rows, ceil(M/128)
 * @param[in] tiles_n number of tile columns, ceil(N/128)
 */
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

/// One thread's share of a tile loaded from global memory: kRows×kCols floats as float4s.
template <int kRows, int kCols>
struct TileRegs {
  /// float4 vectors per thread.
  static constexpr int kVectors = kRows * kCols / 4 / kThreads;
  static_assert(kVectors * 4 * kThreads == kRows * kCols, "tile must split evenly");
  float4 v[kVectors];  ///< the loaded values, in the order of TileRegs::Position
};

/**
 * @brief Loads a kRows×kCols tile of a row-major matrix, starting at (r0, c0), into registers.
 *
 * Vector i of thread t is element group idx = t + i·kThreads: row idx / (kCols/4), columns
 * 4·(idx % (kCols/4)) .. +3, so consecutive threads read consecutive 16-byte pieces of a row
 * (coalesced). Elements outside the matrix read as zero.
 * @tparam kRows tile rows
 * @tparam kCols tile columns (a multiple of 4)
 * @tparam kVec rows are 16-byte aligned (ld % 4 == 0, aligned base): one 16-byte load per vector
 * @tparam kChecked false when the tile is known to lie inside the matrix
 * @param[in] src the matrix
 * @param[in] ld its leading dimension (columns)
 * @param[in] rows its rows
 * @param[in] r0 first tile row
 * @param[in] c0 first tile column
 * @param[out] regs the thread's share
 */
template <int kRows, int kCols, bool kVec, bool kChecked>
__device__ __forceinline__ void LoadTile(const float* __restrict__ src, int ld, int rows, int r0,
                                         int c0, TileRegs<kRows, kCols>& regs) {
  static_assert(kVec || kChecked, "the unchecked path is only used with aligned rows");
#pragma unroll
  for (int i = 0; i < TileRegs<kRows, kCols>::kVectors; ++i) {
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

/**
 * @brief Stores a 128×8 tile of A, held as LoadTile left it, transposed: dst[k][m].
 *
 * Transposing lets the compute loop read 4 consecutive rows of A for one k as a float4.
 * With rows of kBm + kPadA = 132 floats, the 32 threads of a warp (16 rows × 2 k-groups)
 * store to 32 different banks for each of the four components.
 * @param[out] dst shared tile, kBk rows of kBm + kPadA floats
 * @param[in] regs the thread's share of the 128×8 tile
 */
__device__ __forceinline__ void StoreTransposed(float (*dst)[kBm + kPadA],
                                                const TileRegs<kBm, kBk>& regs) {
#pragma unroll
  for (int i = 0; i < TileRegs<kBm, kBk>::kVectors; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    const int r = idx / (kBk / 4);
    const int col = (idx % (kBk / 4)) * 4;
    dst[col + 0][r] = regs.v[i].x;
    dst[col + 1][r] = regs.v[i].y;
    dst[col + 2][r] = regs.v[i].z;
    dst[col + 3][r] = regs.v[i].w;
  }
}

/**
 * @brief Stores an 8×128 tile of B as it is: dst[k][n], one 16-byte store per vector
 *        (consecutive threads, consecutive addresses: conflict-free).
 * @param[out] dst shared tile, kBk rows of kBn floats
 * @param[in] regs the thread's share of the 8×128 tile
 */
__device__ __forceinline__ void StoreDirect(float (*dst)[kBn], const TileRegs<kBk, kBn>& regs) {
#pragma unroll
  for (int i = 0; i < TileRegs<kBk, kBn>::kVectors; ++i) {
    const int idx = threadIdx.x + i * kThreads;
    *reinterpret_cast<float4*>(&dst[idx / (kBn / 4)][(idx % (kBn / 4)) * 4]) = regs.v[i];
  }
}

/// @brief Reads 8 values of one shared row: [first, first+3] and [first+step, first+step+3],
///        as two 16-byte loads.
/// @param[in] row the shared row (16-byte aligned)
/// @param[in] first offset of the first group (a multiple of 4)
/// @param[in] step distance to the second group (a multiple of 4)
/// @param[out] frag the 8 values
__device__ __forceinline__ void LoadFragment(const float* row, int first, int step,
                                             float (&frag)[8]) {
  const float4 lo = *reinterpret_cast<const float4*>(row + first);
  const float4 hi = *reinterpret_cast<const float4*>(row + first + step);
  frag[0] = lo.x;
  frag[1] = lo.y;
  frag[2] = lo.z;
  frag[3] = lo.w;
  frag[4] = hi.x;
  frag[5] = hi.y;
  frag[6] = hi.z;
  frag[7] = hi.w;
}

/// @brief acc += a ⊗ b: 64 FFMAs from 16 values in registers.
/// @param[in] a 8 values of a column of A
/// @param[in] b 8 values of a row of B
/// @param[in,out] acc the thread's 8×8 outputs
__device__ __forceinline__ void OuterProduct(const float (&a)[8], const float (&b)[8],
                                             float (&acc)[8][8]) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

/**
 * @brief Writes a thread's 8×8 outputs: rows row0 + g·row_step + i, columns
 *        col0 + h·col_step + j (g, h in {0, 1}; i, j in 0..3), skipping those outside C.
 * @param[out] c M×N row-major
 * @param[in] m rows of C
 * @param[in] n columns of C
 * @param[in] row0 first row
 * @param[in] row_step distance between the two row groups
 * @param[in] col0 first column (a multiple of 4)
 * @param[in] col_step distance between the two column groups (a multiple of 4)
 * @param[in] acc the outputs, acc[g·4 + i][h·4 + j]
 * @param[in] vec rows of C are 16-byte aligned: whole groups of 4 are stored as one float4
 */
__device__ __forceinline__ void StoreOutputs(float* __restrict__ c, int m, int n, int row0,
                                             int row_step, int col0, int col_step,
                                             const float (&acc)[8][8], bool vec) {
#pragma unroll
  for (int g = 0; g < 2; ++g) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int row = row0 + g * row_step + i;
      if (row >= m) continue;
      float* c_row = c + static_cast<std::size_t>(row) * n;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
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

// ----------------------------------------------------------------------------------------------
// Stage 2: register blocking.

/**
 * @brief Stage 2: a block computes a 128×128 tile of C; thread t computes the 8×8 sub-tile at
 *        rows 8·(t/16) .. +7 and columns 8·(t%16) .. +7, accumulated in 64 registers.
 *
 * Per k, a thread reads 8 values of A and 8 of B from shared memory and does 64 FFMAs
 * (2 flop/byte of shared traffic instead of 0.25). Loads are scalar and bounds-checked; the
 * B reads of a half-warp hit addresses 8 floats apart (4-way bank conflicts), which stage 3
 * removes.
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; 8 KiB of static shared memory.
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias.
 */
__global__ void __launch_bounds__(kThreads)
    MatmulRegBlockKernel(const float* __restrict__ a, const float* __restrict__ b,
                         float* __restrict__ c, int m, int n, int k) {
  __shared__ float a_tile[kBm][kBk];
  __shared__ float b_tile[kBk][kBn];
  const TileCoord tile = BlockTile<false>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  const int row0 = (threadIdx.x / 16) * 8;  // this thread's first row inside the block tile
  const int col0 = (threadIdx.x % 16) * 8;  // and first column
  float acc[8][8] = {};
  for (int k0 = 0; k0 < k; k0 += kBk) {
    // 1024 elements per tile, 4 per thread; idx runs along rows so warps read whole rows.
#pragma unroll
    for (int i = 0; i < kBm * kBk / kThreads; ++i) {
      const int idx = threadIdx.x + i * kThreads;
      const int ar = idx / kBk, ac = idx % kBk;
      a_tile[ar][ac] =
          (m0 + ar < m && k0 + ac < k) ? a[static_cast<std::size_t>(m0 + ar) * k + k0 + ac] : 0.f;
      const int br = idx / kBn, bc = idx % kBn;
      b_tile[br][bc] =
          (k0 + br < k && n0 + bc < n) ? b[static_cast<std::size_t>(k0 + br) * n + n0 + bc] : 0.f;
    }
    __syncthreads();  // tiles complete before any thread computes
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      float a_frag[8], b_frag[8];
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        a_frag[i] = a_tile[row0 + i][p];
        b_frag[i] = b_tile[p][col0 + i];
      }
      OuterProduct(a_frag, b_frag, acc);
    }
    __syncthreads();  // everyone done reading before the next tile is stored
  }
  StoreOutputs(c, m, n, m0 + row0, 4, n0 + col0, 4, acc, false);
}

// ----------------------------------------------------------------------------------------------
// Stage 3: 16-byte loads, transposed A, conflict-free float4 shared reads.

/**
 * @brief Stage 3: as stage 2, with 16-byte global loads, A transposed in shared memory and
 *        each thread's outputs at rows 4·(t/16) + {0, 64} + 0..3, columns
 *        4·(t%16) + {0, 64} + 0..3.
 *
 * Per k a thread issues 4 shared loads of 16 bytes (instead of 16 of 4 bytes); the 16 threads
 * of a half-warp read 16 consecutive float4 of B (no conflict) and 2 float4 of A (broadcast).
 * @tparam kVecA rows of A are 16-byte aligned (K % 4 == 0)
 * @tparam kVecN rows of B and C are 16-byte aligned (N % 4 == 0)
 * @tparam kChecked false when M, N are multiples of 128 and K of 8 (no bounds checks)
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; about 8.3 KiB of static shared
 * memory.
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias; alignment as the flags say.
 */
template <bool kVecA, bool kVecN, bool kChecked>
__global__ void __launch_bounds__(kThreads)
    MatmulVectorizedKernel(const float* __restrict__ a, const float* __restrict__ b,
                           float* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) float a_tile[kBk][kBm + kPadA];
  __shared__ __align__(16) float b_tile[kBk][kBn];
  const TileCoord tile = BlockTile<false>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  const int row0 = (threadIdx.x / 16) * 4;  // rows row0..+3 and row0+64..+3 of the block tile
  const int col0 = (threadIdx.x % 16) * 4;  // columns col0..+3 and col0+64..+3
  float acc[8][8] = {};
  TileRegs<kBm, kBk> a_regs;
  TileRegs<kBk, kBn> b_regs;
  for (int k0 = 0; k0 < k; k0 += kBk) {
    LoadTile<kBm, kBk, kVecA, kChecked>(a, k, m, m0, k0, a_regs);
    LoadTile<kBk, kBn, kVecN, kChecked>(b, n, k, k0, n0, b_regs);
    StoreTransposed(a_tile, a_regs);
    StoreDirect(b_tile, b_regs);
    __syncthreads();  // tiles complete before any thread computes
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      float a_frag[8], b_frag[8];
      LoadFragment(a_tile[p], row0, 64, a_frag);
      LoadFragment(b_tile[p], col0, 64, b_frag);
      OuterProduct(a_frag, b_frag, acc);
    }
    __syncthreads();  // everyone done reading before the next tile is stored
  }
  StoreOutputs(c, m, n, m0 + row0, 64, n0 + col0, 64, acc, kVecN);
}

// ----------------------------------------------------------------------------------------------
// Stages 4 and 5: double buffering, then warp tiling and grouped block order.

/**
 * @brief Stages 4 and 5: stage 3 with two shared buffers, so the global loads of tile t+1
 *        are in flight while tile t is multiplied, and one barrier per tile.
 *
 * Stage 4 (kWarpTiling = false) keeps stage 3's thread layout. Stage 5 (kWarpTiling = true)
 * gives warp w the 32×64 region at rows 32·(w/2), columns 64·(w%2); lane l computes rows
 * 4·(l/8) + {0, 16} + 0..3 and columns 4·(l%8) + {0, 32} + 0..3 of it, so a warp's float4
 * fragment reads cover 64 contiguous bytes of A and 128 of B (one wavefront each). Stage 5
 * also asks for two resident blocks per SM and walks C in groups of tile rows.
 * @tparam kVecA rows of A are 16-byte aligned (K % 4 == 0)
 * @tparam kVecN rows of B and C are 16-byte aligned (N % 4 == 0)
 * @tparam kChecked false when M, N are multiples of 128 and K of 8 (no bounds checks)
 * @tparam kWarpTiling false: stage 4; true: stage 5
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @par Launch configuration
 * 256 threads, 1-D grid of ceil(M/128)·ceil(N/128) blocks; about 16.6 KiB of static shared
 * memory; stage 5 at most 128 registers per thread (two blocks per SM).
 * @pre M, N, K in [1, kMaxDimension]; a, b, c do not alias; alignment as the flags say.
 */
template <bool kVecA, bool kVecN, bool kChecked, bool kWarpTiling>
__global__ void __launch_bounds__(kThreads, kWarpTiling ? 2 : 1)
    MatmulDoubleBufferKernel(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, int m, int n, int k) {
  __shared__ __align__(16) float a_tile[2][kBk][kBm + kPadA];
  __shared__ __align__(16) float b_tile[2][kBk][kBn];
  const TileCoord tile = BlockTile<kWarpTiling>((m + kBm - 1) / kBm, (n + kBn - 1) / kBn);
  const int m0 = tile.m * kBm;
  const int n0 = tile.n * kBn;
  constexpr int kRowStep = kWarpTiling ? 16 : 64;
  constexpr int kColStep = kWarpTiling ? 32 : 64;
  int row0, col0;
  if constexpr (kWarpTiling) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    row0 = (warp / 2) * 32 + (lane / 8) * 4;  // 4 warps down the tile, 4 lane rows per warp
    col0 = (warp % 2) * 64 + (lane % 8) * 4;  // 2 warps across, 8 lane columns per warp
  } else {
    row0 = (threadIdx.x / 16) * 4;
    col0 = (threadIdx.x % 16) * 4;
  }
  float acc[8][8] = {};
  TileRegs<kBm, kBk> a_regs;
  TileRegs<kBk, kBn> b_regs;
  // Prologue: tile 0 into buffer 0.
  LoadTile<kBm, kBk, kVecA, kChecked>(a, k, m, m0, 0, a_regs);
  LoadTile<kBk, kBn, kVecN, kChecked>(b, n, k, 0, n0, b_regs);
  StoreTransposed(a_tile[0], a_regs);
  StoreDirect(b_tile[0], b_regs);
  __syncthreads();  // buffer 0 complete before the first multiply
  int buf = 0;
  for (int k0 = 0; k0 < k; k0 += kBk) {
    const bool has_next = k0 + kBk < k;  // the same for every thread: barriers stay uniform
    if (has_next) {
      // Issue the next tile's global loads now; their latency hides behind 512 FFMAs.
      LoadTile<kBm, kBk, kVecA, kChecked>(a, k, m, m0, k0 + kBk, a_regs);
      LoadTile<kBk, kBn, kVecN, kChecked>(b, n, k, k0 + kBk, n0, b_regs);
    }
#pragma unroll
    for (int p = 0; p < kBk; ++p) {
      float a_frag[8], b_frag[8];
      LoadFragment(a_tile[buf][p], row0, kRowStep, a_frag);
      LoadFragment(b_tile[buf][p], col0, kColStep, b_frag);
      OuterProduct(a_frag, b_frag, acc);
    }
    if (has_next) {
      // The other buffer was last read in the previous iteration, which ended with a barrier.
      StoreTransposed(a_tile[buf ^ 1], a_regs);
      StoreDirect(b_tile[buf ^ 1], b_regs);
    }
    __syncthreads();  // next buffer complete, and this one free to be overwritten after
    buf ^= 1;
  }
  StoreOutputs(c, m, n, m0 + row0, kRowStep, n0 + col0, kColStep, acc, kVecN);
}

/// True when @p p is 16-byte aligned.
inline bool Aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

/**
 * @brief Calls @p launch with the template flags (kVecA, kVecN, kChecked) that fit the shape:
 *        unchecked only when every tile is whole, 16-byte paths only for aligned rows.
 * @param[in] a A (for its alignment)
 * @param[in] b B (for its alignment)
 * @param[in] c C (for its alignment)
 * @param[in] m rows of A and C
 * @param[in] n columns of B and C
 * @param[in] k columns of A, rows of B
 * @param[in] launch generic callable taking three std::integral_constant<bool, ...>
 */
template <typename Launch>
void DispatchShape(const float* a, const float* b, const float* c, int m, int n, int k,
                   Launch&& launch) {
  using T = std::true_type;
  using F = std::false_type;
  const bool vec_a = k % 4 == 0 && Aligned16(a);
  const bool vec_n = n % 4 == 0 && Aligned16(b) && Aligned16(c);
  const bool whole = m % kBm == 0 && n % kBn == 0 && k % kBk == 0;
  if (vec_a && vec_n && whole)
    launch(T{}, T{}, F{});
  else if (vec_a && vec_n)
    launch(T{}, T{}, T{});
  else if (vec_a)
    launch(T{}, F{}, T{});
  else if (vec_n)
    launch(F{}, T{}, T{});
  else
    launch(F{}, F{}, T{});
}

}  // namespace detail

namespace {

const std::vector<StageInfo> kStages = {
    // global intensity = BM·BN / (2·(BM + BN)) flop/byte (a BM×BK and a BK×BN float tile
    // feed 2·BM·BN·BK flops); shared intensity = outputs per thread / (2·(rows + cols) bytes/4).
    {Stage::kTiled16, "tiled16", 16, 16, 16, 256, 4.0, 0.25, true,
     "16x16 shared tiles, one output per thread (slides' kernel 2)"},
    {Stage::kRegBlock, "regblock", 128, 128, 8, 256, 32.0, 2.0, false,
     "128x128x8 block tile, 8x8 outputs per thread in registers"},
    {Stage::kVectorized, "vectorized", 128, 128, 8, 256, 32.0, 2.0, false,
     "16-byte loads, transposed+padded A tile, conflict-free float4 shared reads"},
    {Stage::kDoubleBuffer, "doublebuffer", 128, 128, 8, 256, 32.0, 2.0, false,
     "two shared buffers, next tile loaded during this one, one barrier per tile"},
    {Stage::kWarpTile, "warptile", 128, 128, 8, 256, 32.0, 2.0, false,
     "32x64 warp tiles, 2 blocks/SM (__launch_bounds__), grouped block order for L2"},
};

}  // namespace

const std::vector<StageInfo>& AllStages() { return kStages; }

const StageInfo& Info(Stage stage) {
  for (const auto& s : kStages) {
    if (s.stage == stage) return s;
  }
  throw staged::UsageError("unknown stage");
}

Stage ParseStage(const std::string& word) {
  if (word == "best") return kBestStage;
  std::string names;
  for (const auto& s : kStages) {
    if (word == s.name) return s.stage;
    names += std::string(s.name) + "|";
  }
  throw staged::UsageError("unknown kernel '" + word + "' (expected " + names + "best)");
}

template <typename T>
void Matmul(const T* d_a, const T* d_b, T* d_c, int m, int n, int k, Stage stage,
            cudaStream_t stream) {
  CheckDimensions(m, n, k);
  if constexpr (!std::is_same_v<T, float>) {
    if (stage != Stage::kTiled16) {
      throw staged::UsageError(std::string("kernel '") + Info(stage).name +
                               "' is float only; int32 runs tiled16");
    }
  }
  if (m == 0 || n == 0) return;
  if (stage == Stage::kTiled16) {
    const dim3 block(detail::kTile16, detail::kTile16);
    const dim3 grid((n + detail::kTile16 - 1) / detail::kTile16,
                    (m + detail::kTile16 - 1) / detail::kTile16);
    detail::MatmulTiled16Kernel<T><<<grid, block, 0, stream>>>(d_a, d_b, d_c, m, n, k);
    CUDA_CHECK_LAST_LAUNCH();
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (k == 0) {  // an empty sum: C = 0, and no tile to load
      CUDA_CHECK(cudaMemsetAsync(d_c, 0, static_cast<std::size_t>(m) * n * sizeof(float), stream));
      return;
    }
    const unsigned blocks = static_cast<unsigned>(((m + detail::kBm - 1) / detail::kBm) *
                                                  ((n + detail::kBn - 1) / detail::kBn));
    const unsigned threads = detail::kThreads;
    if (stage == Stage::kRegBlock) {
      detail::MatmulRegBlockKernel<<<blocks, threads, 0, stream>>>(d_a, d_b, d_c, m, n, k);
      CUDA_CHECK_LAST_LAUNCH();
      return;
    }
    detail::DispatchShape(d_a, d_b, d_c, m, n, k, [&](auto vec_a, auto vec_n, auto checked) {
      constexpr bool kA = decltype(vec_a)::value;
      constexpr bool kN = decltype(vec_n)::value;
      constexpr bool kC = decltype(checked)::value;
      switch (stage) {
        case Stage::kVectorized:
          detail::MatmulVectorizedKernel<kA, kN, kC>
              <<<blocks, threads, 0, stream>>>(d_a, d_b, d_c, m, n, k);
          break;
        case Stage::kDoubleBuffer:
          detail::MatmulDoubleBufferKernel<kA, kN, kC, false>
              <<<blocks, threads, 0, stream>>>(d_a, d_b, d_c, m, n, k);
          break;
        default:
          detail::MatmulDoubleBufferKernel<kA, kN, kC, true>
              <<<blocks, threads, 0, stream>>>(d_a, d_b, d_c, m, n, k);
          break;
      }
      CUDA_CHECK_LAST_LAUNCH();
    });
  }
}

/// @cond
template void Matmul<float>(const float*, const float*, float*, int, int, int, Stage, cudaStream_t);
template void Matmul<std::int32_t>(const std::int32_t*, const std::int32_t*, std::int32_t*, int,
                                   int, int, Stage, cudaStream_t);
/// @endcond

}  // namespace ch04::optimized
