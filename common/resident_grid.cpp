/// @file resident_grid.cpp
/// @brief The cached occupancy query behind `ResidentBlocks`.
#include "resident_grid.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

#include "cuda_check.hpp"
#include "device_limits.hpp"
#include "launch_support.hpp"

namespace staged {

int SmCount() { return PlanningLimits().sm_count; }

int BlocksPerSm(const void* kernel, int block_size, std::size_t dynamic_smem) {
  const DeviceLimits limits = PlanningLimits();
  const bool profiled = limits.name != "device";
  // A profile: a block its GPU would refuse is refused, naming the kernel and the limit.
  if (profiled) RequireBlockFits(kernel, block_size, dynamic_smem);
  int per_sm = 0;
  CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, dynamic_smem));
  if (profiled) {
    // No more blocks than the profile's smaller SM would hold (its registers, threads, blocks and
    // shared memory), with this kernel's compiled registers and static shared memory.
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    per_sm = std::min(
        per_sm,
        BlocksPerSmUnder(limits, block_size, attr.sharedSizeBytes + dynamic_smem, attr.numRegs));
  }
  return per_sm;
}

unsigned ResidentBlocks(const void* kernel, int block_size, std::size_t dynamic_smem,
                        int max_per_sm) {
  using Key = std::tuple<int, std::string, const void*, int, std::size_t, int>;
  static std::mutex mutex;
  static std::map<Key, unsigned> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Key key{device, ActiveProfileName(), kernel, block_size, dynamic_smem, max_per_sm};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  const int sms = SmCount();
  int per_sm = BlocksPerSm(kernel, block_size, dynamic_smem);
  if (per_sm < 1) {
    // The launch would fail (or, under a profile, could not run on the profile's GPU): a plan
    // chose more than the planning limits allow.
    throw std::logic_error("a block of " + std::to_string(block_size) + " threads and " +
                           std::to_string(dynamic_smem) +
                           " bytes of dynamic shared memory does not fit one SM of " +
                           PlanningLimits().name);
  }
  if (max_per_sm > 0) per_sm = std::min(per_sm, max_per_sm);
  const auto resident = static_cast<unsigned>(std::max(sms, 1) * per_sm);
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, resident);
  return resident;
}

unsigned GridFor(unsigned resident, std::size_t items, std::size_t items_per_block) {
  const std::size_t per = std::max<std::size_t>(items_per_block, 1);
  const std::size_t needed = (items + per - 1) / per;
  return static_cast<unsigned>(
      std::clamp<std::size_t>(needed, 1, std::max<std::size_t>(resident, 1)));
}

unsigned ResidentGrid(const void* kernel, int block_size, std::size_t dynamic_smem,
                      std::size_t items, std::size_t items_per_block, int max_per_sm) {
  return GridFor(ResidentBlocks(kernel, block_size, dynamic_smem, max_per_sm), items,
                 items_per_block);
}

}  // namespace staged
