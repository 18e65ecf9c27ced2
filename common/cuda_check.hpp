/**
 * @file cuda_check.hpp
 * @brief `CUDA_CHECK` and friends: every CUDA runtime call is checked, failures throw.
 *
 * @code
 * CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
 * MyKernel<<<grid, block>>>(args);
 * CUDA_CHECK_LAST_LAUNCH();             // launch-configuration errors surface here
 * CUDA_CHECK_NOTHROW(cudaFree(ptr));    // destructors: report to stderr, never throw
 * @endcode
 * The message reads `file.cu:42: cudaMemcpy(...) failed: cudaErrorInvalidValue (invalid argument)`.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace staged {

/// A failed CUDA runtime call. Carries the `cudaError_t` so callers can tell "no GPU" apart.
class CudaError : public std::runtime_error {
 public:
  /// @param[in] code the error returned by the runtime
  /// @param[in] message the full, formatted message
  CudaError(cudaError_t code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  /// The runtime's error code.
  cudaError_t code() const noexcept { return code_; }

 private:
  cudaError_t code_;
};

/// Formats `source.cu:42: expr failed: cudaErrorName (description)` (the failing call's file
/// and line).
std::string FormatCudaError(cudaError_t code, const char* expr, const char* file, int line);

/// Throws `CudaError` for @p code unless it is `cudaSuccess`. Used by the macros below.
void CheckCuda(cudaError_t code, const char* expr, const char* file, int line);

/// Prints the error to stderr instead of throwing; returns whether @p code was `cudaSuccess`.
bool CheckCudaNoThrow(cudaError_t code, const char* expr, const char* file, int line) noexcept;

/// True for the error codes that mean "there is no usable GPU" rather than "a call failed". A
/// binary without code for the GPU (`cudaErrorNoKernelImageForDevice`) is not one of them: that
/// is a build problem, reported as a CUDA error (exit 3) with the rebuild command.
bool IsNoGpuError(cudaError_t code) noexcept;

}  // namespace staged

/// Checks a CUDA runtime call; throws `staged::CudaError` on failure.
#define CUDA_CHECK(expr) ::staged::CheckCuda((expr), #expr, __FILE__, __LINE__)

/// Checks the last kernel launch (bad configuration, too many resources); throws on failure.
#define CUDA_CHECK_LAST_LAUNCH() \
  ::staged::CheckCuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

/// For destructors and cleanup: reports a failure on stderr and never throws.
#define CUDA_CHECK_NOTHROW(expr) ::staged::CheckCudaNoThrow((expr), #expr, __FILE__, __LINE__)
