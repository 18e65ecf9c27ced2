/// @file launch_support.cpp
/// @brief The shared-memory opt-in and the programmatic-launch test.
#include "launch_support.hpp"

#include <cuda_runtime_api.h>
#include <cxxabi.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "device_limits.hpp"

namespace staged {
namespace {

/// The kernel's name as its source spells it (`ch03::optimized::PartitionKernel(...)`), not the
/// mangled symbol cudaFuncGetName returns.
std::string KernelName(const void* kernel) {
  const char* symbol = nullptr;
  if (cudaFuncGetName(&symbol, kernel) != cudaSuccess || symbol == nullptr) return "a kernel";
  int status = 0;
  char* plain = abi::__cxa_demangle(symbol, nullptr, nullptr, &status);
  std::string name = (status == 0 && plain != nullptr) ? plain : symbol;
  std::free(plain);
  return name;
}

}  // namespace

void OptInSharedMemory(const void* kernel, std::size_t dynamic_bytes) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  // The planning limits: under a device profile, the profiled GPU's block refuses what it would.
  const std::string error =
      SharedMemoryFitError(PlanningLimits(), attr.sharedSizeBytes + dynamic_bytes);
  if (!error.empty()) {
    throw std::logic_error(KernelName(kernel) + " asks for " + error);
  }
  if (static_cast<int>(dynamic_bytes) > attr.maxDynamicSharedSizeBytes) {  // over 48 KiB
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(dynamic_bytes)));
  }
}

void RequireBlockFits(const void* kernel, int threads, std::size_t dynamic_bytes) {
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  const std::string error =
      BlockFitError(PlanningLimits(), threads, attr.sharedSizeBytes + dynamic_bytes, attr.numRegs);
  if (!error.empty()) throw std::logic_error(KernelName(kernel) + " cannot run " + error);
}

bool ProgrammaticLaunchAvailable(const void* kernel) {
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, int> ptx_versions;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int ptx = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = ptx_versions.find({device, kernel});
    if (it != ptx_versions.end()) ptx = it->second;
  }
  if (ptx == 0) {
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    ptx = attr.ptxVersion;  // the virtual architecture the loaded code came from, e.g. 90
    std::lock_guard<std::mutex> lock(mutex);
    ptx_versions.emplace(std::make_pair(device, kernel), ptx);
  }
  return PlanningLimits().cc >= 90 && ptx >= 90;
}

}  // namespace staged
