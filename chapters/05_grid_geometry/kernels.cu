/**
 * @file kernels.cu
 * @brief Every kernel of chapter 05: one C tile per block, in the four combinations of block
 *        shape (M×M, M×2M) and memory kind (global, shared), for M = 1, 2, 4, 8, 16; plus the
 *        persistent form that walks many tiles in one launch, and an empty kernel for measuring
 *        launch cost. The grid arrangement is not in the kernels: it is host grid maths
 *        (launch.cu), because the paper's 2-D, 1-D and single-block kernels differ only in where
 *        the tile coordinates come from (blockIdx, or a launch argument).
 *
 * Changes relative to the naive variant (single block, global memory, M×M):
 * 1. Shared memory (`MxMSharedTile`): the block stages an M×M tile of A and of B per step, so each
 *    element of A and B is read from global memory N/M times instead of N times (2N³/M reads).
 * 2. M×2M blocks (`Mx2MGlobalTile`, `Mx2MSharedTile`): each thread computes c(i,j) and c(i+M,j)
 *    with one read of b(k,j), so a block covers a 2M×2M tile of C; with shared memory each A and B
 *    element is read N/(2M) times (2N³/(2M) reads) and every thread does two multiply-adds per
 *    shared-memory read of B.
 * 3. Grid arrangement (launch.cu): the same tile kernel launched as one 2-D grid, once per tile
 *    row as a 1-D grid, or once per tile as a single block.
 * 4. Beyond the paper: `MatmulPersistentKernel` runs the 1-D and single-block arrangements in one
 *    launch (each block loops over the tiles the launch loop would have given it).
 *
 * Fixed relative to the paper's listing: it needs N to be a multiple of 2M (here any N: loads
 * outside A or B read zero into shared memory, global reads are clamped to a valid row/column and
 * stores are guarded), and it loads the A tile with consecutive threads walking *down a column*
 * (`sm_a[tx][ty] = a[... + N*tx + ty]`: 32 rows per warp, uncoalesced); here consecutive threads
 * walk along a row of the tile.
 */
#include "chapters/05_grid_geometry/kernels.cuh"

namespace ch05::detail {

/// @brief One M×M tile of C with operands read from global memory (the naive tile).
/// @details Thread (tx, ty) computes c(tile_y·M + ty, tile_x·M + tx) as a dot product of a row of
///          A and a column of B: 2N reads and N multiply-adds.
/// @tparam kM the block parameter M
/// @param[in] a A (N×N)  @param[in] b B (N×N)  @param[out] c C (N×N)
/// @param[in] n the side N  @param[in] tile_x tile column  @param[in] tile_y tile row
/// @pre blockDim = (M, M); the tile has at least one element inside C.
// snippet-begin: ch05-mxm-global
template <int kM>
__device__ void MxMGlobalTile(const std::int32_t* a, const std::int32_t* b, std::int32_t* c, int n,
                              int tile_x, int tile_y) {
  const int row = tile_y * kM + static_cast<int>(threadIdx.y);
  const int col = tile_x * kM + static_cast<int>(threadIdx.x);
  // Threads past the edge compute a duplicate of the last row/column (valid addresses, no branch
  // in the loop) and do not store it.
  const std::int32_t* a_row = a + static_cast<std::int64_t>(min(row, n - 1)) * n;
  const std::int32_t* b_col = b + min(col, n - 1);
  std::int32_t acc = 0;
  for (int k = 0; k < n; ++k) {
    // a(row,k) is the same for the 16 threads of a row (one transaction); b(k,col) is read by
    // consecutive threads at consecutive addresses (coalesced).
    acc += a_row[k] * b_col[static_cast<std::int64_t>(k) * n];
  }
  if (row < n && col < n) c[static_cast<std::int64_t>(row) * n + col] = acc;
}
// snippet-end: ch05-mxm-global

/// @brief One M×M tile of C with M×M tiles of A and B staged in shared memory.
/// @details Thread (tx, ty) loads a(row, k0+tx) and b(k0+ty, col) per step of M, then computes
///          c(row, col) from shared memory. Global reads per block: 2·M·N (each element of A and
///          B read N/M times overall).
/// @tparam kM the block parameter M
/// @param[in] a A  @param[in] b B  @param[out] c C  @param[in] n the side N
/// @param[in] tile_x tile column  @param[in] tile_y tile row
/// @pre blockDim = (M, M); every thread of the block calls this (it synchronises).
// snippet-begin: ch05-mxm-shared
template <int kM>
__device__ void MxMSharedTile(const std::int32_t* a, const std::int32_t* b, std::int32_t* c, int n,
                              int tile_x, int tile_y) {
  __shared__ std::int32_t tile_a[kM][kM];
  __shared__ std::int32_t tile_b[kM][kM];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int row = tile_y * kM + ty;
  const int col = tile_x * kM + tx;
  std::int32_t acc = 0;
  for (int k0 = 0; k0 < n; k0 += kM) {
    // Outside A or B the tile holds zeros, which add nothing: this is what makes any N work.
    tile_a[ty][tx] = (row < n && k0 + tx < n) ? a[static_cast<std::int64_t>(row) * n + k0 + tx] : 0;
    tile_b[ty][tx] = (k0 + ty < n && col < n) ? b[static_cast<std::int64_t>(k0 + ty) * n + col] : 0;
    __syncthreads();  // both tiles complete before anyone reads them
#pragma unroll
    for (int k = 0; k < kM; ++k) acc += tile_a[ty][k] * tile_b[k][tx];
    __syncthreads();  // everyone done reading before the next step overwrites the tiles
  }
  if (row < n && col < n) c[static_cast<std::int64_t>(row) * n + col] = acc;
}
// snippet-end: ch05-mxm-shared

/// @brief One 2M×2M tile of C computed by 2M×M threads, two elements each, from global memory.
/// @details Thread (tx, ty) computes c(r, j) and c(r+M, j) with r = tile_y·2M + ty and
///          j = tile_x·2M + tx; each b(k,j) read serves both: 3N reads, 2N multiply-adds.
/// @tparam kM the block parameter M
/// @param[in] a A  @param[in] b B  @param[out] c C  @param[in] n the side N
/// @param[in] tile_x tile column  @param[in] tile_y tile row
/// @pre blockDim = (2M, M); the tile has at least one element inside C.
// snippet-begin: ch05-mx2m-global
template <int kM>
__device__ void Mx2MGlobalTile(const std::int32_t* a, const std::int32_t* b, std::int32_t* c, int n,
                               int tile_x, int tile_y) {
  const int row = tile_y * 2 * kM + static_cast<int>(threadIdx.y);
  const int col = tile_x * 2 * kM + static_cast<int>(threadIdx.x);
  // Clamped as in MxMGlobalTile: out-of-range threads read valid memory and store nothing.
  const std::int32_t* a_top = a + static_cast<std::int64_t>(min(row, n - 1)) * n;
  const std::int32_t* a_bottom = a + static_cast<std::int64_t>(min(row + kM, n - 1)) * n;
  const std::int32_t* b_col = b + min(col, n - 1);
  std::int32_t top = 0;
  std::int32_t bottom = 0;
  for (int k = 0; k < n; ++k) {
    const std::int32_t b_kj = b_col[static_cast<std::int64_t>(k) * n];  // one read, two uses
    top += a_top[k] * b_kj;
    bottom += a_bottom[k] * b_kj;
  }
  if (col < n) {
    if (row < n) c[static_cast<std::int64_t>(row) * n + col] = top;
    if (row + kM < n) c[static_cast<std::int64_t>(row + kM) * n + col] = bottom;
  }
}
// snippet-end: ch05-mx2m-global

/// @brief One 2M×2M tile of C by 2M×M threads: a 2M×M tile of A and an M×2M tile of B in shared
///        memory per step, two elements of C per thread (the paper's GPU_SM_*_M_2M kernels).
/// @details Per step of M along k every thread loads one element of A and one of B (2M² + 2M²
///          elements = the two tiles), then does 2M multiply-adds with 3M shared reads. Each
///          element of A and B is read from global memory N/(2M) times overall.
/// @tparam kM the block parameter M
/// @param[in] a A  @param[in] b B  @param[out] c C  @param[in] n the side N
/// @param[in] tile_x tile column  @param[in] tile_y tile row
/// @pre blockDim = (2M, M); every thread of the block calls this (it synchronises).
// snippet-begin: ch05-mx2m-shared
template <int kM>
__device__ void Mx2MSharedTile(const std::int32_t* a, const std::int32_t* b, std::int32_t* c, int n,
                               int tile_x, int tile_y) {
  __shared__ std::int32_t tile_a[2 * kM][kM];
  __shared__ std::int32_t tile_b[kM][2 * kM];
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const int row0 = tile_y * 2 * kM;
  const int col0 = tile_x * 2 * kM;
  // The A tile is 2M rows × M columns = one element per thread. Walking it in thread order
  // (linear id t -> row t/M, column t%M) gives consecutive threads consecutive addresses; the
  // paper's tile_a[tx][ty] order put 32 rows in one warp.
  const int t = ty * 2 * kM + tx;
  const int a_r = t / kM;
  const int a_c = t % kM;
  std::int32_t top = 0;
  std::int32_t bottom = 0;
  for (int k0 = 0; k0 < n; k0 += kM) {
    tile_a[a_r][a_c] = (row0 + a_r < n && k0 + a_c < n)
                           ? a[static_cast<std::int64_t>(row0 + a_r) * n + k0 + a_c]
                           : 0;
    tile_b[ty][tx] =
        (k0 + ty < n && col0 + tx < n) ? b[static_cast<std::int64_t>(k0 + ty) * n + col0 + tx] : 0;
    __syncthreads();  // both tiles complete before anyone reads them
#pragma unroll
    for (int k = 0; k < kM; ++k) {
      // tile_a reads are one address per row of threads (broadcast); tile_b[k][tx] is 2M
      // consecutive words (no bank conflict); it is read once and used twice.
      const std::int32_t b_kj = tile_b[k][tx];
      top += tile_a[ty][k] * b_kj;
      bottom += tile_a[ty + kM][k] * b_kj;
    }
    __syncthreads();  // everyone done reading before the next step overwrites the tiles
  }
  const int col = col0 + tx;
  if (col < n) {
    if (row0 + ty < n) c[static_cast<std::int64_t>(row0 + ty) * n + col] = top;
    if (row0 + ty + kM < n) c[static_cast<std::int64_t>(row0 + ty + kM) * n + col] = bottom;
  }
}
// snippet-end: ch05-mx2m-shared

/// @brief The tile routine for a (shape, memory, M) combination.
/// @tparam kShape block shape  @tparam kMemory memory kind  @tparam kM block parameter M
/// @param[in] a A  @param[in] b B  @param[out] c C  @param[in] n the side N
/// @param[in] tile_x tile column  @param[in] tile_y tile row
template <Shape kShape, Memory kMemory, int kM>
__device__ void ComputeTile(const std::int32_t* a, const std::int32_t* b, std::int32_t* c, int n,
                            int tile_x, int tile_y) {
  if constexpr (kShape == Shape::kMxM && kMemory == Memory::kGlobal) {
    MxMGlobalTile<kM>(a, b, c, n, tile_x, tile_y);
  } else if constexpr (kShape == Shape::kMxM) {
    MxMSharedTile<kM>(a, b, c, n, tile_x, tile_y);
  } else if constexpr (kMemory == Memory::kGlobal) {
    Mx2MGlobalTile<kM>(a, b, c, n, tile_x, tile_y);
  } else {
    Mx2MSharedTile<kM>(a, b, c, n, tile_x, tile_y);
  }
}

// snippet-begin: ch05-tile-kernel
template <Shape kShape, Memory kMemory, int kM>
__global__ void MatmulTileKernel(const std::int32_t* a, const std::int32_t* b, std::int32_t* c,
                                 int n, int tile_x0, int tile_y0) {
  // 2-D grid: the offsets are 0 (or the chunk start past 65535 rows); 1-D grid: tile_y0 is the
  // launch's tile row; single block: both come from the launch loop.
  ComputeTile<kShape, kMemory, kM>(a, b, c, n, static_cast<int>(blockIdx.x) + tile_x0,
                                   static_cast<int>(blockIdx.y) + tile_y0);
}
// snippet-end: ch05-tile-kernel

// snippet-begin: ch05-persistent
template <Shape kShape, Memory kMemory, int kM>
__global__ void MatmulPersistentKernel(const std::int32_t* a, const std::int32_t* b,
                                       std::int32_t* c, int n, int tiles) {
  const std::int64_t total = static_cast<std::int64_t>(tiles) * tiles;
  // Tile t = blockIdx.x + i·gridDim.x in row-major tile order. With gridDim.x = tiles block x
  // keeps tile column x and walks down the rows (the 1-D arrangement without its launches);
  // with one block it walks every tile in the single-block loop's order. The loop bound is the
  // same for all threads of a block, so the __syncthreads inside the tile routine is safe.
  for (std::int64_t t = blockIdx.x; t < total; t += gridDim.x) {
    ComputeTile<kShape, kMemory, kM>(a, b, c, n, static_cast<int>(t % tiles),
                                     static_cast<int>(t / tiles));
  }
}
// snippet-end: ch05-persistent

__global__ void EmptyKernel() {}

namespace {

template <Shape kShape, Memory kMemory>
KernelSet PickM(int m) {
  switch (m) {
    case 1:
      return {MatmulTileKernel<kShape, kMemory, 1>, MatmulPersistentKernel<kShape, kMemory, 1>};
    case 2:
      return {MatmulTileKernel<kShape, kMemory, 2>, MatmulPersistentKernel<kShape, kMemory, 2>};
    case 4:
      return {MatmulTileKernel<kShape, kMemory, 4>, MatmulPersistentKernel<kShape, kMemory, 4>};
    case 8:
      return {MatmulTileKernel<kShape, kMemory, 8>, MatmulPersistentKernel<kShape, kMemory, 8>};
    case 16:
      return {MatmulTileKernel<kShape, kMemory, 16>, MatmulPersistentKernel<kShape, kMemory, 16>};
    default:
      return {nullptr, nullptr};
  }
}

}  // namespace

KernelSet PickKernels(const Config& cfg) {
  if (cfg.shape == Shape::kMxM) {
    return cfg.memory == Memory::kGlobal ? PickM<Shape::kMxM, Memory::kGlobal>(cfg.m)
                                         : PickM<Shape::kMxM, Memory::kShared>(cfg.m);
  }
  return cfg.memory == Memory::kGlobal ? PickM<Shape::kMx2M, Memory::kGlobal>(cfg.m)
                                       : PickM<Shape::kMx2M, Memory::kShared>(cfg.m);
}

}  // namespace ch05::detail
