/**
 * @file launch_support.hpp
 * @brief What a launch may ask of the GPU beyond a plain `<<<...>>>`, and whether it may:
 *        more than 48 KiB of shared memory per block, and programmatic dependent launch.
 *
 * Whether a launch is programmatic follows the planning limits (`PlanningLimits`,
 * device_limits.hpp), so a device profile of an older GPU takes the fallback that GPU would.
 */
#pragma once

#include <cstddef>

namespace staged {

/// @brief Lets @p kernel launch with @p dynamic_bytes of dynamic shared memory: above 48 KiB a
///        kernel must opt in (`cudaFuncAttributeMaxDynamicSharedMemorySize`). Throws
///        `std::logic_error`, naming the kernel, when its static and dynamic shared memory
///        together exceed what the planning limits allow a block (`PlanningLimits`: this GPU's,
///        or under `STAGED_DEVICE_PROFILE` the profiled GPU's, as that GPU would refuse the
///        launch): a plan that should have chosen a smaller configuration (the plans themselves
///        are checked against every device profile's limits by host tests).
///        Cheap enough to call before every launch; capture-safe (it queues nothing).
/// @param[in] kernel the `__global__` function, cast to `const void*`
/// @param[in] dynamic_bytes dynamic shared memory per block
void OptInSharedMemory(const void* kernel, std::size_t dynamic_bytes);

/// @brief Throws `std::logic_error` naming @p kernel, the limit and whose it is when a block of
///        @p threads threads and @p dynamic_bytes of dynamic shared memory, with the kernel's
///        compiled registers and static shared memory, cannot run under the planning limits
///        (`BlockFitError`): under `STAGED_DEVICE_PROFILE` the launch the profiled GPU would
///        refuse is refused here too. `ResidentBlocks` calls it for every plan it sizes.
/// @param[in] kernel the `__global__` function, cast to `const void*`
/// @param[in] threads threads per block
/// @param[in] dynamic_bytes dynamic shared memory per block
void RequireBlockFits(const void* kernel, int threads, std::size_t dynamic_bytes);

/// @brief Whether @p kernel may be launched with programmatic stream serialization (it may start
///        before the previous grid of its stream has finished): the planning limits' compute
///        capability is 9.0 or newer *and* the kernel's code, as loaded for this GPU, was
///        compiled from PTX of sm_90 or newer, so that its `cudaGridDependencySynchronize()`
///        (guarded by `__CUDA_ARCH__ >= 900`) is really there. A build for sm_80 run on an H100,
///        or a PTX-only build for sm_75, is launched plainly. Cached per device and kernel.
/// @param[in] kernel the `__global__` function, cast to `const void*`
bool ProgrammaticLaunchAvailable(const void* kernel);

}  // namespace staged
