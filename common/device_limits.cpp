/// @file device_limits.cpp
/// @brief The device profiles, the query of a GPU's limits, and the occupancy arithmetic.
#include "device_limits.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "cuda_check.hpp"
#include "errors.hpp"

namespace staged {

namespace {

constexpr std::size_t kKiB = 1024;
constexpr std::size_t kMiB = 1024 * 1024;
constexpr std::size_t kGiB = 1024 * kMiB;

/// Shared memory is allocated to blocks in units of this many bytes.
constexpr std::size_t kSharedAllocationUnit = 128;
/// Registers are allocated to warps in units of this many.
constexpr int kRegisterAllocationUnit = 256;
/// Threads of one block, on every GPU from sm_75.
constexpr int kMaxThreadsPerBlock = 1024;

// Per compute capability, the CUDA C++ Programming Guide's "Technical Specifications per Compute
// Capability" (shared memory per block after opting in and per SM, memory reserved per block,
// threads, blocks and registers per SM; for 12.0 also CCCL's cuda::arch traits of sm_120); per
// product (SMs, L2, memory: the data sheet's GB, taken as GiB as the GPUs report them), the
// document named beside it.
const std::vector<DeviceLimits> kProfiles = {
    // name       cc  SMs  smem/block   smem/SM     reserved threads blocks regs   L2   memory
    // Tesla T4 data sheet; Turing whitepaper (TU104 in the T4: 40 SMs, 4 MB L2)
    {"t4", 75, 40, 64 * kKiB, 64 * kKiB, 0, 1024, 16, 65536, 4 * kMiB, 16 * kGiB},
    // Turing whitepaper: GeForce RTX 2080 (TU104), 46 SMs, 4 MB L2
    {"rtx2080", 75, 46, 64 * kKiB, 64 * kKiB, 0, 1024, 16, 65536, 4 * kMiB, 8 * kGiB},
    // GeForce RTX 3060 desktop specifications: 3584 CUDA cores (28 SMs); GA106: 3 MB L2
    {"rtx3060", 86, 28, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 16, 65536, 3 * kMiB, 12 * kGiB},
    // GeForce RTX 3060 laptop GPU specifications: 3840 CUDA cores (30 SMs); GA106: 3 MB L2
    {"rtx3060-laptop", 86, 30, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 16, 65536, 3 * kMiB,
     6 * kGiB},
    // A10G (AWS EC2 G5 instances; GA102): AWS's G5 page gives its 24 GB; NVIDIA publishes no A10G
    // data sheet (only the A10's: 72 SMs), so the 80 SMs and 6 MB L2 are what the CUDA runtime
    // reports on a G5 instance
    {"a10g", 86, 80, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 16, 65536, 6 * kMiB, 24 * kGiB},
    // GeForce RTX 4060 laptop GPU specifications: 3072 CUDA cores (24 SMs); Ada whitepaper
    // (AD107): 32 MB L2
    {"rtx4060-laptop", 89, 24, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 24, 65536, 32 * kMiB,
     8 * kGiB},
    // NVIDIA L4 data sheet: 7424 CUDA cores (58 SMs), 48 MB L2
    {"l4", 89, 58, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 24, 65536, 48 * kMiB, 24 * kGiB},
    // Ada whitepaper: GeForce RTX 4090, 128 SMs, 72 MB L2
    {"rtx4090", 89, 128, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 24, 65536, 72 * kMiB, 24 * kGiB},
    // RTX Blackwell whitepaper: GeForce RTX 5090 (GB202), 21760 CUDA cores (170 SMs), 96 MB L2
    {"rtx5090", 120, 170, 99 * kKiB, 100 * kKiB, 1 * kKiB, 1536, 32, 65536, 96 * kMiB, 32 * kGiB},
    // A100 whitepaper: A100 SXM4, 108 SMs, 40 MB L2
    {"a100", 80, 108, 163 * kKiB, 164 * kKiB, 1 * kKiB, 2048, 32, 65536, 40 * kMiB, 40 * kGiB},
    // H100 whitepaper: H100 SXM5, 132 SMs, 50 MB L2
    {"h100", 90, 132, 227 * kKiB, 228 * kKiB, 1 * kKiB, 2048, 32, 65536, 50 * kMiB, 80 * kGiB},
    // H200 data sheet: 132 SMs; L2 as the H200 reports it (60 MiB)
    {"h200", 90, 132, 227 * kKiB, 228 * kKiB, 1 * kKiB, 2048, 32, 65536, 60 * kMiB, 141 * kGiB},
};

std::size_t RoundUp(std::size_t x, std::size_t unit) { return (x + unit - 1) / unit * unit; }

int Attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

}  // namespace

const std::vector<DeviceLimits>& DeviceProfiles() { return kProfiles; }

const DeviceLimits& DeviceProfile(std::string_view name) {
  std::string names;
  for (const DeviceLimits& p : kProfiles) {
    if (p.name == name) return p;
    names += (names.empty() ? "" : ", ") + p.name;
  }
  throw UsageError(std::string(kProfileVariable) + "=" + std::string(name) +
                   ": no such device profile (" + names + ")");
}

DeviceLimits CapLimits(const DeviceLimits& profile, const DeviceLimits& device) {
  DeviceLimits l = profile;
  l.cc = std::min(profile.cc, device.cc);
  l.sm_count = std::min(profile.sm_count, device.sm_count);
  l.smem_per_block = std::min(profile.smem_per_block, device.smem_per_block);
  l.smem_per_sm = std::min(profile.smem_per_sm, device.smem_per_sm);
  l.smem_reserved_per_block =
      std::max(profile.smem_reserved_per_block, device.smem_reserved_per_block);
  l.max_threads_per_sm = std::min(profile.max_threads_per_sm, device.max_threads_per_sm);
  l.max_blocks_per_sm = std::min(profile.max_blocks_per_sm, device.max_blocks_per_sm);
  l.regs_per_sm = std::min(profile.regs_per_sm, device.regs_per_sm);
  l.l2_bytes = std::min(profile.l2_bytes, device.l2_bytes);
  l.memory_bytes = std::min(profile.memory_bytes, device.memory_bytes);
  return l;
}

DeviceLimits QueryDeviceLimits(int device) {
  static std::mutex mutex;
  static std::map<int, DeviceLimits> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(device);
    if (it != cache.end()) return it->second;
  }
  DeviceLimits l;
  l.name = "device";
  l.cc = 10 * Attribute(cudaDevAttrComputeCapabilityMajor, device) +
         Attribute(cudaDevAttrComputeCapabilityMinor, device);
  l.sm_count = Attribute(cudaDevAttrMultiProcessorCount, device);
  l.smem_per_block =
      static_cast<std::size_t>(Attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  l.smem_per_sm =
      static_cast<std::size_t>(Attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  l.smem_reserved_per_block =
      static_cast<std::size_t>(Attribute(cudaDevAttrReservedSharedMemoryPerBlock, device));
  l.max_threads_per_sm = Attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
  l.max_blocks_per_sm = Attribute(cudaDevAttrMaxBlocksPerMultiprocessor, device);
  l.regs_per_sm = Attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device);
  l.l2_bytes = static_cast<std::size_t>(Attribute(cudaDevAttrL2CacheSize, device));
  std::size_t free_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &l.memory_bytes));
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(device, l);
  return l;
}

std::string ActiveProfileName() {
  const char* name = std::getenv(kProfileVariable);
  return name != nullptr ? std::string(name) : std::string();
}

DeviceLimits PlanningLimits() {
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const DeviceLimits own = QueryDeviceLimits(device);
  const std::string name = ActiveProfileName();
  return name.empty() ? own : CapLimits(DeviceProfile(name), own);
}

bool FitsBlock(const DeviceLimits& limits, int threads, std::size_t smem) {
  return BlockFitError(limits, threads, smem, 0).empty();
}

namespace {
// "this GPU" or "the t4 profile (STAGED_DEVICE_PROFILE)".
std::string Whose(const DeviceLimits& limits) {
  return limits.name == "device" ? "this GPU"
                                 : "the " + limits.name + " profile (" + kProfileVariable + ")";
}

// Registers one block holds: per warp, rounded up to the allocation unit.
std::size_t BlockRegisters(int threads, int regs) {
  const int warps = (threads + 31) / 32;
  return RoundUp(static_cast<std::size_t>(regs) * 32, kRegisterAllocationUnit) *
         static_cast<std::size_t>(warps);
}
}  // namespace

std::string SharedMemoryFitError(const DeviceLimits& limits, std::size_t smem) {
  if (smem <= limits.smem_per_block) return "";
  return std::to_string(smem) + " bytes of shared memory per block; " + Whose(limits) + " allows " +
         std::to_string(limits.smem_per_block);
}

std::string BlockFitError(const DeviceLimits& limits, int threads, std::size_t smem, int regs) {
  const std::string block = "a block of " + std::to_string(threads) + " threads";
  if (threads < 1 || threads > kMaxThreadsPerBlock) {
    return block + "; a block holds 1 to " + std::to_string(kMaxThreadsPerBlock);
  }
  if (threads > limits.max_threads_per_sm) {
    return block + "; " + Whose(limits) + " holds " + std::to_string(limits.max_threads_per_sm) +
           " threads per SM";
  }
  std::string error = SharedMemoryFitError(limits, smem);
  if (!error.empty()) return error;
  const std::size_t per_sm = RoundUp(smem, kSharedAllocationUnit) + limits.smem_reserved_per_block;
  if (per_sm > limits.smem_per_sm) {
    return std::to_string(per_sm) + " bytes of shared memory per block with its reserve; " +
           Whose(limits) + " has " + std::to_string(limits.smem_per_sm) + " per SM";
  }
  if (regs > 0 && BlockRegisters(threads, regs) > static_cast<std::size_t>(limits.regs_per_sm)) {
    return block + " at " + std::to_string(regs) + " registers each (" +
           std::to_string(BlockRegisters(threads, regs)) + " allocated); " + Whose(limits) +
           " has " + std::to_string(limits.regs_per_sm) + " per SM";
  }
  return "";
}

int BlocksPerSmUnder(const DeviceLimits& limits, int threads, std::size_t smem, int regs) {
  if (!BlockFitError(limits, threads, smem, regs).empty()) return 0;
  const int warps = (threads + 31) / 32;
  int blocks = std::min(limits.max_blocks_per_sm, limits.max_threads_per_sm / (32 * warps));
  const std::size_t per_block =
      RoundUp(smem, kSharedAllocationUnit) + limits.smem_reserved_per_block;
  if (per_block > 0) {
    blocks = std::min<int>(blocks, static_cast<int>(limits.smem_per_sm / per_block));
  }
  if (regs > 0) {
    blocks = std::min<int>(blocks, static_cast<int>(static_cast<std::size_t>(limits.regs_per_sm) /
                                                    BlockRegisters(threads, regs)));
  }
  return std::max(blocks, 0);
}

int LaunchBoundRegisters(int regs_per_sm, int threads, int min_blocks) {
  const int warps = (threads + 31) / 32;
  const int per_thread = regs_per_sm / (32 * warps * std::max(min_blocks, 1));
  return std::clamp(per_thread / 8 * 8, 8, 255);
}

}  // namespace staged
