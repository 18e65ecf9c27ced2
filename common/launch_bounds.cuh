/**
 * @file launch_bounds.cuh
 * @brief The blocks per SM a `__launch_bounds__` may ask for on the architecture being compiled.
 *
 * `__launch_bounds__(threads, blocks)` caps the registers so that @p blocks blocks fit an SM;
 * asking for more threads than the SM holds (2048 on sm_80, sm_90 and sm_100; 1536 on sm_86,
 * sm_89 and sm_120; 1024 on sm_75) is an error for ptxas. `FitBlocksPerSm` keeps a kernel's
 * request within the SM of each architecture it is compiled for, so one source serves all.
 */
#pragma once

namespace staged {

/// Resident threads per SM of the architecture being compiled (the CUDA C++ Programming Guide's
/// table of technical specifications per compute capability); 2048 in the host pass.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
inline constexpr int kCompiledThreadsPerSm = 1024;
#elif defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || \
                                 __CUDA_ARCH__ == 890 || __CUDA_ARCH__ >= 1200)
inline constexpr int kCompiledThreadsPerSm = 1536;
#else
inline constexpr int kCompiledThreadsPerSm = 2048;
#endif

/// @p blocks, or fewer where blocks of @p threads threads would not fit the compiled SM.
/// @param[in] threads threads per block
/// @param[in] blocks the blocks per SM a kernel is tuned for
constexpr int FitBlocksPerSm(int threads, int blocks) {
  return blocks * threads <= kCompiledThreadsPerSm ? blocks : kCompiledThreadsPerSm / threads;
}

}  // namespace staged
