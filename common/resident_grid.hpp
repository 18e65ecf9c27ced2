/**
 * @file resident_grid.hpp
 * @brief Grid sizes for grid-stride ("persistent") kernels: as many blocks as the GPU holds at
 *        once, never more than the work needs.
 *
 * The occupancy query behind it costs microseconds, about as long as a small kernel, so the
 * answer is cached per (device, kernel, block size, dynamic shared memory); the cache is
 * guarded by a mutex, so launchers may be called from any number of host threads.
 *
 * @code
 * const unsigned grid = staged::ResidentGrid(reinterpret_cast<const void*>(MyKernel), 256,
 *                                            0, items, 256 * 4);
 * MyKernel<<<grid, 256, 0, stream>>>(...);
 * @endcode
 */
#pragma once

#include <cstddef>

namespace staged {

/// Streaming multiprocessors the launchers plan for: the current device's, or its profile's
/// (`PlanningLimits`, device_limits.hpp).
int SmCount();

/// Blocks of @p block_size threads with @p dynamic_smem bytes of dynamic shared memory each that
/// one SM of the current device holds at once (the occupancy query), and under a device profile
/// no more than one SM of the profile's GPU would hold (`BlocksPerSmUnder` with the kernel's
/// compiled registers and static shared memory). Under a profile a block its GPU could not hold
/// at all throws `std::logic_error` naming the kernel and the limit (`RequireBlockFits`).
/// Not cached: for reports and tests, and for `ResidentBlocks`.
/// @param[in] kernel the `__global__` function, cast to `const void*`
/// @param[in] block_size threads per block
/// @param[in] dynamic_smem dynamic shared memory per block, in bytes
int BlocksPerSm(const void* kernel, int block_size, std::size_t dynamic_smem);

/// Blocks of @p block_size threads with @p dynamic_smem bytes of dynamic shared memory each that
/// can be resident on the current device at once: SMs x blocks per SM, capped at @p max_per_sm
/// blocks per SM when that is positive (SMs and blocks per SM as `SmCount` and `BlocksPerSm` plan
/// them). Throws `std::logic_error` when not one such block fits an SM. Cached per device,
/// profile and arguments; thread-safe.
/// @param[in] kernel the `__global__` function, cast to `const void*`
/// @param[in] block_size threads per block
/// @param[in] dynamic_smem dynamic shared memory per block, in bytes
/// @param[in] max_per_sm cap on blocks per SM (0: none)
unsigned ResidentBlocks(const void* kernel, int block_size, std::size_t dynamic_smem,
                        int max_per_sm = 0);

/// Grid of a grid-stride kernel: `ResidentBlocks(...)`, but no more blocks than
/// ceil(@p items / @p items_per_block), and at least one.
/// @param[in] kernel the `__global__` function, cast to `const void*`
/// @param[in] block_size threads per block
/// @param[in] dynamic_smem dynamic shared memory per block, in bytes
/// @param[in] items units of work (elements, vectors, chunks)
/// @param[in] items_per_block the fewest items worth giving one block (> 0)
/// @param[in] max_per_sm cap on blocks per SM (0: none)
unsigned ResidentGrid(const void* kernel, int block_size, std::size_t dynamic_smem,
                      std::size_t items, std::size_t items_per_block, int max_per_sm = 0);

/// The pure arithmetic of `ResidentGrid`: min(ceil(items / items_per_block), resident), >= 1.
/// @param[in] resident blocks that fit on the GPU at once
/// @param[in] items units of work
/// @param[in] items_per_block the fewest items worth giving one block (> 0)
unsigned GridFor(unsigned resident, std::size_t items, std::size_t items_per_block);

}  // namespace staged
