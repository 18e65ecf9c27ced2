/**
 * @file device_limits.hpp
 * @brief The limits a launch configuration must fit (shared memory per block and per SM, threads
 *        and blocks per SM, registers, SM count, L2), read from the running GPU or taken from a
 *        device profile, and the occupancy arithmetic over them.
 *
 * Every launcher plans with `PlanningLimits()`: the current GPU's own limits, or, when the
 * environment variable `STAGED_DEVICE_PROFILE` names a profile (`t4`, `rtx2080`, `rtx3060`,
 * `rtx3060-laptop`, `a10g`, `rtx4060-laptop`, `l4`, `rtx4090`, `rtx5090`, `a100`, `h100`,
 * `h200`), that GPU's published limits, each capped by the running GPU's. A profile makes
 * a large GPU plan, launch and run the configurations a smaller one would get, so the tests of
 * those configurations run for real:
 *
 * @code
 * STAGED_DEVICE_PROFILE=t4 ctest --test-dir build -L gpu   # plan as on a T4 (64 KiB per block)
 * @endcode
 *
 * The profiles' figures come from the CUDA C++ Programming Guide's table of technical
 * specifications per compute capability (shared memory, threads, blocks, registers) and from each
 * product's data sheet (SM count, L2 size). Features a profile's architecture lacks (programmatic
 * dependent launch below sm_90) are switched off by the launchers that ask `cc`; instructions the
 * build lacks (`cp.async` below sm_80) depend on the architecture the code was compiled for, which
 * a PTX-only build (`-DCMAKE_CUDA_ARCHITECTURES=75-virtual`) exercises.
 */
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace staged {

/// What one SM and one block of a GPU may hold: the inputs of every launch plan.
struct DeviceLimits {
  std::string name;                         ///< "device" (queried) or the profile's name
  int cc = 0;                               ///< compute capability x 10: 75, 80, 86, 89, 90, ...
  int sm_count = 0;                         ///< streaming multiprocessors
  std::size_t smem_per_block = 0;           ///< shared memory one block may use after opting in
  std::size_t smem_per_sm = 0;              ///< shared memory of one SM
  std::size_t smem_reserved_per_block = 0;  ///< shared memory the system keeps per resident block
  int max_threads_per_sm = 0;               ///< resident threads per SM
  int max_blocks_per_sm = 0;                ///< resident blocks per SM
  int regs_per_sm = 0;                      ///< 32-bit registers per SM
  std::size_t l2_bytes = 0;                 ///< L2 cache
  std::size_t memory_bytes = 0;             ///< device memory (a profile's: its data sheet's GB)
};

/// Shared memory a block may use without opting in (`cudaFuncAttributeMaxDynamicSharedMemorySize`
/// raises the limit for one kernel, up to `DeviceLimits::smem_per_block`).
inline constexpr std::size_t kDefaultSharedPerBlock = 48 * 1024;

/// The environment variable that selects a profile.
inline constexpr const char* kProfileVariable = "STAGED_DEVICE_PROFILE";

/// The profiles, smallest GPU first within an architecture: `t4`, `rtx2080` (sm_75), `rtx3060`,
/// `rtx3060-laptop` (sm_86), `rtx4060-laptop`, `l4`, `rtx4090` (sm_89), `rtx5090` (sm_120),
/// `a100` (sm_80), `h100` and `h200` (sm_90).
const std::vector<DeviceLimits>& DeviceProfiles();

/// The profile named @p name; throws `UsageError` (listing the names) when there is none.
/// @param[in] name e.g. "t4"
const DeviceLimits& DeviceProfile(std::string_view name);

/// Each limit of @p profile capped by the same limit of @p device (compute capability included),
/// named after the profile: what a profile can ask of the GPU it runs on.
/// @param[in] profile published limits
/// @param[in] device the running GPU's limits
DeviceLimits CapLimits(const DeviceLimits& profile, const DeviceLimits& device);

/// The limits of CUDA device @p device, queried once and then cached (they never change).
/// @param[in] device CUDA ordinal
DeviceLimits QueryDeviceLimits(int device);

/// The name in `STAGED_DEVICE_PROFILE`, or "" when it is unset or empty.
std::string ActiveProfileName();

/// The limits launchers plan for on the current device: its own, or with `STAGED_DEVICE_PROFILE`
/// set, the profile's capped by its own (`CapLimits`). Throws `UsageError` for an unknown name.
DeviceLimits PlanningLimits();

/// Whether one block of @p threads threads and @p smem bytes of shared memory (static plus
/// dynamic) can be launched at all under @p limits.
/// @param[in] limits the limits
/// @param[in] threads threads per block
/// @param[in] smem shared memory per block, bytes
bool FitsBlock(const DeviceLimits& limits, int threads, std::size_t smem);

/// Why a block with @p smem bytes of shared memory (static plus dynamic) cannot run under
/// @p limits, naming the limit and whose it is (this GPU's, or a profile's), e.g. "99328 bytes
/// of shared memory per block; the t4 profile (STAGED_DEVICE_PROFILE) allows 65536"; "" when it
/// fits.
/// @param[in] limits the limits (`PlanningLimits()`)
/// @param[in] smem shared memory per block, bytes
std::string SharedMemoryFitError(const DeviceLimits& limits, std::size_t smem);

/// Why one block of @p threads threads, @p smem bytes of shared memory (static plus dynamic) and
/// @p regs registers per thread cannot run under @p limits, naming the first limit it breaks
/// and whose it is (threads per block or per SM, shared memory per block or per SM, registers
/// per SM); "" when it fits, which is exactly when `BlocksPerSmUnder` is at least 1.
/// @param[in] limits the limits (`PlanningLimits()`)
/// @param[in] threads threads per block
/// @param[in] smem shared memory per block, bytes
/// @param[in] regs registers per thread (0: not counted)
std::string BlockFitError(const DeviceLimits& limits, int threads, std::size_t smem, int regs);

/// @brief Blocks resident per SM under @p limits, by the occupancy calculator's rules: the least
///        of the thread, block, shared-memory and register limits (registers allocated per warp
///        in units of 256); 0 when one block does not fit.
/// @param[in] limits the limits
/// @param[in] threads threads per block
/// @param[in] smem shared memory per block (static plus dynamic), bytes
/// @param[in] regs registers per thread
int BlocksPerSmUnder(const DeviceLimits& limits, int threads, std::size_t smem, int regs);

/// Registers per thread ptxas may use at most under `__launch_bounds__(threads, min_blocks)` on
/// a GPU with @p regs_per_sm registers per SM (a multiple of 8, at most 255): what a host-side
/// model assumes for a kernel whose register count only the compiled code knows.
/// @param[in] regs_per_sm registers per SM
/// @param[in] threads the bound's threads per block
/// @param[in] min_blocks the bound's blocks per SM (1 when the kernel names none)
int LaunchBoundRegisters(int regs_per_sm, int threads, int min_blocks);

}  // namespace staged
