/**
 * @file kernels.cuh
 * @brief Declarations of chapter 05's kernels (defined in kernels.cu) and the table that picks the
 *        instantiation for a `Config`. Used by launch.cu; drivers call `ch05::Matmul` instead.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "chapters/05_grid_geometry/grid_geometry.cuh"

/// Kernels and their selection; not part of the launch API.
namespace ch05::detail {

/**
 * @brief Computes one C tile per block: tile (blockIdx.x + tile_x0, blockIdx.y + tile_y0).
 * @tparam kShape block shape: M×M threads (an M×M tile, one element each) or 2M×M threads (a
 *         2M×2M tile, c(i,j) and c(i+M,j) each)
 * @tparam kMemory operands read from global memory, or staged through shared-memory tiles
 * @tparam kM the block parameter M (1, 2, 4, 8 or 16)
 * @param[in] a A, N×N row-major  @param[in] b B, N×N row-major  @param[out] c C, N×N row-major
 * @param[in] n the side N  @param[in] tile_x0 tile column of block x = 0
 * @param[in] tile_y0 tile row of block y = 0
 * @par Launch configuration
 * block `BlockDim(cfg)`: (M, M) or (2M, M); grid (tiles, tiles) for the 2-D arrangement,
 * (tiles, 1) with tile_y0 = the row for the 1-D one, (1, 1) with both offsets for the single block.
 * @pre Every launched tile lies (at least partly) inside C.
 * @par Work
 * N multiply-adds per element of C; global reads 2N³ (M×M, global), 1.5N³ (M×2M, global),
 * 2N³/M (M×M, shared) or 2N³/(2M) (M×2M, shared) over the whole product.
 */
template <Shape kShape, Memory kMemory, int kM>
__global__ void MatmulTileKernel(const std::int32_t* a, const std::int32_t* b, std::int32_t* c,
                                 int n, int tile_x0, int tile_y0);

/**
 * @brief The 1-D and single-block arrangements in one launch: block x computes tiles
 *        x, x + gridDim.x, x + 2·gridDim.x, … of the tiles × tiles tile grid (row-major).
 * @tparam kShape block shape  @tparam kMemory memory kind  @tparam kM block parameter M
 * @param[in] a A  @param[in] b B  @param[out] c C  @param[in] n the side N
 * @param[in] tiles tiles per side of C
 * @par Launch configuration
 * block `BlockDim(cfg)`; grid (tiles) to replace the 1-D loop, (1) to replace the single-block
 * loop.
 * @par Work
 * Exactly the tile work of `MatmulTileKernel`, without the launches between tiles.
 */
template <Shape kShape, Memory kMemory, int kM>
__global__ void MatmulPersistentKernel(const std::int32_t* a, const std::int32_t* b,
                                       std::int32_t* c, int n, int tiles);

/// @brief Does nothing: launched in a loop it measures the cost of one launch.
/// @par Launch configuration
/// <<<1, 1>>>
__global__ void EmptyKernel();

/// Type of a `MatmulTileKernel` instantiation.
using TileKernelFn = void (*)(const std::int32_t*, const std::int32_t*, std::int32_t*, int, int,
                              int);
/// Type of a `MatmulPersistentKernel` instantiation.
using PersistentKernelFn = void (*)(const std::int32_t*, const std::int32_t*, std::int32_t*, int,
                                    int);

/// The two kernels of one (shape, memory, M) combination.
struct KernelSet {
  TileKernelFn tile;              ///< one tile per block
  PersistentKernelFn persistent;  ///< many tiles per block
};

/// The instantiations for @p cfg; both null when cfg.m is not supported.
KernelSet PickKernels(const Config& cfg);

}  // namespace ch05::detail
