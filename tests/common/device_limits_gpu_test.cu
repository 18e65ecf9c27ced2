/// @file device_limits_gpu_test.cu
/// @brief GPU tests of the planning limits: the queried limits, the profile switch, the
///        occupancy model against the occupancy API, the shared-memory opt-in and the
///        programmatic-launch test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#include "common/launch_support.hpp"
#include "common/resident_grid.hpp"
#include "gpu_test.hpp"

namespace staged {
namespace {

/// Holds @p kSmem bytes of static shared memory; writes nothing unless told to.
template <int kSmem>
__global__ void __launch_bounds__(256) SharedHolderKernel(int* out, int flag) {
  __shared__ int scratch[kSmem / 4];
  scratch[threadIdx.x] = flag;
  __syncthreads();
  if (flag == 12345) out[threadIdx.x] = scratch[(threadIdx.x + 1) % 256];
}

/// Uses dynamic shared memory.
__global__ void DynamicSharedKernel(int* out) {
  extern __shared__ int dynamic[];
  dynamic[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  out[threadIdx.x] = dynamic[(threadIdx.x + 1) % blockDim.x];
}

/// Compiled from PTX of the build's architecture; waits for its prerequisite grid on sm_90.
__global__ void WaitingKernel(int* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
  out[0] = 1;
}

using DeviceLimitsGpu = testing::GpuTest;

TEST_F(DeviceLimitsGpu, QueriedLimitsAreTheDevicesAttributes) {
  testing::ScopedDeviceProfile own("");
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const DeviceLimits l = PlanningLimits();
  EXPECT_EQ(l.name, "device");
  EXPECT_EQ(l.cc, 10 * prop.major + prop.minor);
  EXPECT_EQ(l.sm_count, prop.multiProcessorCount);
  EXPECT_EQ(l.smem_per_block, prop.sharedMemPerBlockOptin);
  EXPECT_EQ(l.smem_per_sm, prop.sharedMemPerMultiprocessor);
  EXPECT_EQ(l.max_threads_per_sm, prop.maxThreadsPerMultiProcessor);
  EXPECT_EQ(l.regs_per_sm, prop.regsPerMultiprocessor);
  EXPECT_EQ(l.l2_bytes, static_cast<std::size_t>(prop.l2CacheSize));
}

TEST_F(DeviceLimitsGpu, TheProfileVariableSwitchesThePlanningLimits) {
  DeviceLimits own;
  {
    testing::ScopedDeviceProfile none("");
    own = PlanningLimits();
  }
  for (const DeviceLimits& p : DeviceProfiles()) {
    testing::ScopedDeviceProfile profile(p.name);
    const DeviceLimits l = PlanningLimits();
    EXPECT_EQ(l.name, p.name);
    EXPECT_EQ(l.sm_count, std::min(p.sm_count, own.sm_count));
    EXPECT_EQ(l.smem_per_block, std::min(p.smem_per_block, own.smem_per_block));
    EXPECT_EQ(SmCount(), l.sm_count);
  }
  testing::ScopedDeviceProfile unknown("gtx1080");
  EXPECT_THROW(PlanningLimits(), UsageError);
}

TEST_F(DeviceLimitsGpu, ArchitectureLimitsModelAgreesWithTheOccupancyApi) {
  // The host model of every plan's residency (BlocksPerSmUnder), on this GPU's own limits, with
  // each kernel's compiled registers and static shared memory, gives the occupancy API's answer.
  testing::ScopedDeviceProfile own("");
  const DeviceLimits l = PlanningLimits();
  const auto check = [&](const void* kernel, int threads, std::size_t dynamic) {
    // The model counts the SM's whole shared memory: ask for the carveout that gives it.
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                    cudaSharedmemCarveoutMaxShared));
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    int api = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&api, kernel, threads, dynamic));
    EXPECT_EQ(BlocksPerSmUnder(l, threads, attr.sharedSizeBytes + dynamic, attr.numRegs), api)
        << threads << " threads, " << attr.sharedSizeBytes + dynamic << " bytes, " << attr.numRegs
        << " registers";
  };
  check(reinterpret_cast<const void*>(SharedHolderKernel<1024>), 256, 0);
  check(reinterpret_cast<const void*>(SharedHolderKernel<16 * 1024>), 256, 0);
  check(reinterpret_cast<const void*>(SharedHolderKernel<40 * 1024>), 256, 0);
  const auto* dynamic = reinterpret_cast<const void*>(DynamicSharedKernel);
  OptInSharedMemory(dynamic, l.smem_per_block / 2);
  check(dynamic, 128, l.smem_per_block / 2);
}

TEST_F(DeviceLimitsGpu, ProfilesCapTheBlocksPerSm) {
  const auto* kernel = reinterpret_cast<const void*>(SharedHolderKernel<40 * 1024>);
  int own = 0;
  {
    testing::ScopedDeviceProfile none("");
    own = BlocksPerSm(kernel, 256, 0);
  }
  testing::ScopedDeviceProfile t4("t4");
  // A T4 SM holds one 40 KiB block (64 KiB in all), whatever this GPU holds.
  EXPECT_EQ(BlocksPerSm(kernel, 256, 0), 1);
  EXPECT_GE(own, 1);
  EXPECT_EQ(ResidentBlocks(kernel, 256, 0), static_cast<unsigned>(SmCount()));
}

TEST_F(DeviceLimitsGpu, OptInAllowsLargeBlocksAndRefusesTooLarge) {
  testing::ScopedDeviceProfile own("");
  const DeviceLimits l = PlanningLimits();
  const auto* kernel = reinterpret_cast<const void*>(DynamicSharedKernel);
  const std::size_t bytes = std::min<std::size_t>(l.smem_per_block, 96 * 1024);
  OptInSharedMemory(kernel, bytes);
  DeviceBuffer<int> out(256);
  DynamicSharedKernel<<<1, 256, bytes>>>(out.data());
  CUDA_CHECK_LAST_LAUNCH();
  CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out.ToHost()[255], 0);
  EXPECT_THROW(OptInSharedMemory(kernel, l.smem_per_block + 1), std::logic_error);
}

TEST_F(DeviceLimitsGpu, UnderEachProfileABlockPastItsSharedMemoryIsRefused) {
  // What the profiled GPU would refuse is refused here too, whatever this GPU allows, with the
  // kernel and the profile named; what fits it still launches.
  const auto* kernel = reinterpret_cast<const void*>(DynamicSharedKernel);
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  for (const DeviceLimits& profile : DeviceProfiles()) {
    testing::ScopedDeviceProfile scoped(profile.name);
    const DeviceLimits l = PlanningLimits();
    const std::size_t allowed = l.smem_per_block - attr.sharedSizeBytes;
    try {
      OptInSharedMemory(kernel, allowed + 1);
      ADD_FAILURE() << profile.name << ": a block past " << l.smem_per_block << " bytes ran";
    } catch (const std::logic_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(profile.name + " profile"), std::string::npos) << what;
      EXPECT_NE(what.find("DynamicSharedKernel"), std::string::npos) << what;
      EXPECT_NE(what.rfind("_Z", 0), 0u) << "the kernel named as its source spells it: " << what;
    }
    const std::size_t bytes = std::min<std::size_t>(allowed, 64 * 1024);
    OptInSharedMemory(kernel, bytes);
    DeviceBuffer<int> out(256);
    DynamicSharedKernel<<<1, 256, bytes>>>(out.data());
    CUDA_CHECK_LAST_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());
    EXPECT_EQ(out.ToHost()[255], 0) << profile.name;
  }
}

TEST_F(DeviceLimitsGpu, UnderEachProfileAPlanPastTheProfiledSmIsRefused) {
  // ResidentBlocks sizes every persistent grid: a block the profiled GPU could not hold (too many
  // threads, or its shared memory with the kernel's static part) is refused with the kernel and
  // the limit named, never planned as one block per SM.
  const auto* kernel = reinterpret_cast<const void*>(SharedHolderKernel<40 * 1024>);
  for (const DeviceLimits& profile : DeviceProfiles()) {
    testing::ScopedDeviceProfile scoped(profile.name);
    const DeviceLimits l = PlanningLimits();
    for (const auto& [threads, dynamic] :
         {std::pair<int, std::size_t>{1025, 0}, {256, l.smem_per_block - 40 * 1024 + 1}}) {
      try {
        ResidentBlocks(kernel, threads, dynamic);
        ADD_FAILURE() << profile.name << ": " << threads << " threads and " << dynamic
                      << " dynamic bytes were planned";
      } catch (const std::logic_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("SharedHolderKernel"), std::string::npos) << what;
        EXPECT_NE(what.find(threads > 1024 ? "1 to 1024" : profile.name + " profile"),
                  std::string::npos)
            << what;
      }
    }
    EXPECT_GE(ResidentBlocks(kernel, 256, 0), static_cast<unsigned>(SmCount())) << profile.name;
    EXPECT_NO_THROW(RequireBlockFits(kernel, 1024, 0)) << profile.name;
  }
}

TEST_F(DeviceLimitsGpu, UnderAProfileNoMoreMemoryIsFreeThanThatGpuHas) {
  testing::ScopedDeviceProfile laptop("rtx3060-laptop");  // a 6 GB card
  EXPECT_NO_THROW(RequireDeviceMemory(std::size_t{1} << 30, "1 GiB"));
  try {
    RequireDeviceMemory(std::size_t{7} << 30, "7 GiB");
    ADD_FAILURE() << "7 GiB were free under a 6 GB profile";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("of device memory but only 6.00 GiB is free"), std::string::npos) << what;
    EXPECT_NE(what.find("rtx3060-laptop profile"), std::string::npos) << what;
  }
  ::setenv("STAGED_MEMORY_NEED_ONLY", "1", 1);
  EXPECT_THROW(RequireDeviceMemory(std::size_t{7} << 30, "7 GiB"), MemoryNeedReported);
  ::unsetenv("STAGED_MEMORY_NEED_ONLY");
}

TEST_F(DeviceLimitsGpu, ProgrammaticLaunchNeedsSm90AndCodeForIt) {
  const auto* kernel = reinterpret_cast<const void*>(WaitingKernel);
  cudaFuncAttributes attr{};
  CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  bool own_cc90 = false;
  {
    testing::ScopedDeviceProfile own("");
    own_cc90 = PlanningLimits().cc >= 90;
    // Code built from PTX older than sm_90 (a 75-virtual or 80 build) has no wait in it.
    EXPECT_EQ(ProgrammaticLaunchAvailable(kernel), own_cc90 && attr.ptxVersion >= 90)
        << "ptxVersion " << attr.ptxVersion;
  }
  // A profile of an older GPU launches plainly.
  testing::ScopedDeviceProfile a100("a100");
  EXPECT_FALSE(ProgrammaticLaunchAvailable(kernel));
}

}  // namespace
}  // namespace staged
