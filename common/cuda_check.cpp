/// @file cuda_check.cpp
/// @brief Implementation of the `CUDA_CHECK` family.
#include "cuda_check.hpp"

#include <cstdio>

namespace staged {

std::string FormatCudaError(cudaError_t code, const char* expr, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + expr +
         " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")";
}

void CheckCuda(cudaError_t code, const char* expr, const char* file, int line) {
  if (code != cudaSuccess) throw CudaError(code, FormatCudaError(code, expr, file, line));
}

bool CheckCudaNoThrow(cudaError_t code, const char* expr, const char* file, int line) noexcept {
  if (code == cudaSuccess) return true;
  try {
    std::fprintf(stderr, "%s\n", FormatCudaError(code, expr, file, line).c_str());
  } catch (...) {
    std::fprintf(stderr, "%s:%d: CUDA error %d\n", file, line, static_cast<int>(code));
  }
  return false;
}

bool IsNoGpuError(cudaError_t code) noexcept {
  switch (code) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorInvalidDevice:
      return true;
    default:
      return false;
  }
}

}  // namespace staged
