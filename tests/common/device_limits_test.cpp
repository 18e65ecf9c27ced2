/// @file device_limits_test.cpp
/// @brief Host tests of the device profiles and the occupancy arithmetic (device_limits.hpp).
#include "common/device_limits.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "common/errors.hpp"

namespace staged {
namespace {

TEST(DeviceProfiles, PublishedLimitsOfEachGpu) {
  const DeviceLimits& t4 = DeviceProfile("t4");
  EXPECT_EQ(t4.cc, 75);
  EXPECT_EQ(t4.sm_count, 40);
  EXPECT_EQ(t4.smem_per_block, 64u * 1024);
  EXPECT_EQ(t4.smem_per_sm, 64u * 1024);
  EXPECT_EQ(t4.max_threads_per_sm, 1024);
  const DeviceLimits& rtx3060 = DeviceProfile("rtx3060");
  EXPECT_EQ(rtx3060.cc, 86);
  EXPECT_EQ(rtx3060.sm_count, 28);
  EXPECT_EQ(rtx3060.smem_per_block, 99u * 1024);
  EXPECT_EQ(rtx3060.max_threads_per_sm, 1536);
  const DeviceLimits& rtx4090 = DeviceProfile("rtx4090");
  EXPECT_EQ(rtx4090.cc, 89);
  EXPECT_EQ(rtx4090.sm_count, 128);
  EXPECT_EQ(rtx4090.smem_per_block, 99u * 1024);
  const DeviceLimits& a100 = DeviceProfile("a100");
  EXPECT_EQ(a100.cc, 80);
  EXPECT_EQ(a100.sm_count, 108);
  EXPECT_EQ(a100.smem_per_block, 163u * 1024);
  for (const DeviceLimits& p : DeviceProfiles()) {
    EXPECT_LE(p.smem_per_block + p.smem_reserved_per_block, p.smem_per_sm) << p.name;
    EXPECT_EQ(p.regs_per_sm, 65536) << p.name;
    EXPECT_GE(p.cc, 75) << p.name;
  }
}

TEST(DeviceProfiles, TheGpusStudentsUseHaveTheirProductsSmCountAndL2) {
  const struct {
    const char* name;
    int cc;
    int sms;
    std::size_t l2_mib;
  } expected[] = {{"rtx2080", 75, 46, 4},        {"rtx3060-laptop", 86, 30, 3},
                  {"rtx4060-laptop", 89, 24, 32}, {"l4", 89, 58, 48},
                  {"a10g", 86, 80, 6},            {"h100", 90, 132, 50},          {"h200", 90, 132, 60}};
  for (const auto& e : expected) {
    const DeviceLimits& p = DeviceProfile(e.name);
    EXPECT_EQ(p.cc, e.cc) << e.name;
    EXPECT_EQ(p.sm_count, e.sms) << e.name;
    EXPECT_EQ(p.l2_bytes, e.l2_mib << 20) << e.name;
  }
}

TEST(DeviceProfiles, ProfilesOfOneComputeCapabilityShareItsPerSmLimits) {
  // The per-SM and per-block limits are facts of the compute capability, not of the product.
  for (const DeviceLimits& a : DeviceProfiles()) {
    for (const DeviceLimits& b : DeviceProfiles()) {
      if (a.cc != b.cc) continue;
      EXPECT_EQ(a.smem_per_block, b.smem_per_block) << a.name << " vs " << b.name;
      EXPECT_EQ(a.smem_per_sm, b.smem_per_sm) << a.name << " vs " << b.name;
      EXPECT_EQ(a.smem_reserved_per_block, b.smem_reserved_per_block) << a.name << " vs " << b.name;
      EXPECT_EQ(a.max_threads_per_sm, b.max_threads_per_sm) << a.name << " vs " << b.name;
      EXPECT_EQ(a.max_blocks_per_sm, b.max_blocks_per_sm) << a.name << " vs " << b.name;
    }
  }
}

TEST(DeviceProfiles, SharedMemoryPastABlocksLimitIsNamedWithWhoseLimitItIs) {
  const DeviceLimits& t4 = DeviceProfile("t4");
  EXPECT_EQ(SharedMemoryFitError(t4, 64 * 1024), "");
  EXPECT_EQ(SharedMemoryFitError(t4, 97 * 1024),
            "99328 bytes of shared memory per block; the t4 profile (STAGED_DEVICE_PROFILE) "
            "allows 65536");
  DeviceLimits device = DeviceProfile("h200");
  device.name = "device";
  EXPECT_EQ(SharedMemoryFitError(device, 227 * 1024), "");
  EXPECT_EQ(SharedMemoryFitError(device, 227 * 1024 + 1),
            "232449 bytes of shared memory per block; this GPU allows 232448");
}

TEST(DeviceProfiles, UnknownNameIsAUsageError) {
  EXPECT_THROW(DeviceProfile("gtx1080"), UsageError);
  try {
    DeviceProfile("gtx1080");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("t4"), std::string::npos) << "lists the profiles";
  }
}

TEST(DeviceProfiles, CapTakesTheSmallerOfEachLimit) {
  DeviceLimits device = DeviceProfile("h200");
  device.name = "device";
  const DeviceLimits t4 = CapLimits(DeviceProfile("t4"), device);
  EXPECT_EQ(t4.name, "t4");
  EXPECT_EQ(t4.cc, 75);
  EXPECT_EQ(t4.sm_count, 40);
  EXPECT_EQ(t4.smem_per_block, 64u * 1024);
  // The system's reservation is the running GPU's (1 KiB per block on sm_90), not the T4's 0.
  EXPECT_EQ(t4.smem_reserved_per_block, 1024u);
  device.sm_count = 20;  // a GPU smaller than the profile: its own count
  EXPECT_EQ(CapLimits(DeviceProfile("t4"), device).sm_count, 20);
}

TEST(Occupancy, EachLimitCanBeTheBindingOne) {
  const DeviceLimits& h200 = DeviceProfile("h200");
  // Threads: 2048 / 1024.
  EXPECT_EQ(BlocksPerSmUnder(h200, 1024, 0, 32), 2);
  // Blocks: 32 blocks of one warp.
  EXPECT_EQ(BlocksPerSmUnder(h200, 32, 0, 16), 32);
  // Shared memory: 228 KiB / (32 KiB + 1 KiB reserved) = 6.
  EXPECT_EQ(BlocksPerSmUnder(h200, 256, 32 * 1024, 32), 6);
  // Registers: 128 per thread, 256 threads: 65536 / 32768 = 2.
  EXPECT_EQ(BlocksPerSmUnder(h200, 256, 0, 128), 2);
  // Registers are allocated per warp in units of 256: 33 registers take 40 (1280 a warp).
  EXPECT_EQ(BlocksPerSmUnder(h200, 1024, 0, 33), 1);
  // A T4 SM: 64 KiB, one 32 KiB block with nothing reserved... two with 0 reserved.
  EXPECT_EQ(BlocksPerSmUnder(DeviceProfile("t4"), 256, 32 * 1024, 32), 2);
  EXPECT_EQ(BlocksPerSmUnder(DeviceProfile("t4"), 256, 32 * 1024 + 8, 32), 1);
  // Does not fit at all: more shared memory than a block may have, or too many threads.
  EXPECT_EQ(BlocksPerSmUnder(DeviceProfile("t4"), 256, 64 * 1024 + 1, 32), 0);
  EXPECT_EQ(BlocksPerSmUnder(h200, 2048, 0, 16), 0);
  EXPECT_FALSE(FitsBlock(DeviceProfile("rtx3060"), 256, 100 * 1024));
  EXPECT_TRUE(FitsBlock(DeviceProfile("rtx3060"), 256, 99 * 1024));
}

// Each limit a block can break, named with whose limit it is.
TEST(Occupancy, BlockFitErrorNamesTheLimitABlockBreaks) {
  const DeviceLimits& t4 = DeviceProfile("t4");
  EXPECT_EQ(BlockFitError(t4, 1024, 64 * 1024, 64), "");
  EXPECT_EQ(BlockFitError(t4, 1025, 0, 0), "a block of 1025 threads; a block holds 1 to 1024");
  EXPECT_EQ(BlockFitError(t4, 0, 0, 0), "a block of 0 threads; a block holds 1 to 1024");
  EXPECT_EQ(BlockFitError(t4, 256, 64 * 1024 + 1, 32),
            "65537 bytes of shared memory per block; the t4 profile (STAGED_DEVICE_PROFILE) "
            "allows 65536");
  // 1024 threads at 65 registers: 65 * 32 rounds to 2304 a warp, 73728 for 32 warps.
  EXPECT_EQ(BlockFitError(t4, 1024, 0, 65),
            "a block of 1024 threads at 65 registers each (73728 allocated); the t4 profile "
            "(STAGED_DEVICE_PROFILE) has 65536 per SM");
  DeviceLimits device = DeviceProfile("h200");
  device.name = "device";
  EXPECT_EQ(BlockFitError(device, 1024, 0, 64), "");
  EXPECT_NE(BlockFitError(device, 1024, 0, 72).find("this GPU has 65536 per SM"),
            std::string::npos);
  // A profile whose SM holds fewer threads than a block may have.
  DeviceLimits small = DeviceProfile("t4");
  small.max_threads_per_sm = 768;
  EXPECT_EQ(BlockFitError(small, 1024, 0, 0),
            "a block of 1024 threads; the t4 profile (STAGED_DEVICE_PROFILE) holds 768 threads "
            "per SM");
  // The block fits the per-block limit but not the SM with the system's reserve.
  small = DeviceProfile("rtx3060");
  small.smem_per_sm = small.smem_per_block;
  EXPECT_NE(BlockFitError(small, 256, small.smem_per_block, 0).find("per SM"), std::string::npos);
}

// BlockFitError is "" exactly when the occupancy model puts at least one block on an SM, under
// every profile: a plan that passes the check is one the model can size.
TEST(Occupancy, BlockFitErrorAgreesWithTheOccupancyModel) {
  for (const DeviceLimits& l : DeviceProfiles()) {
    for (int threads : {1, 32, 96, 256, 768, 1024, 1025}) {
      for (std::size_t smem : {std::size_t{0}, std::size_t{48 * 1024}, l.smem_per_block - 1,
                               l.smem_per_block, l.smem_per_block + 1}) {
        for (int regs : {0, 32, 64, 65, 128, 255}) {
          EXPECT_EQ(BlockFitError(l, threads, smem, regs).empty(),
                    BlocksPerSmUnder(l, threads, smem, regs) >= 1)
              << l.name << ": " << threads << " threads, " << smem << " bytes, " << regs
              << " registers";
        }
      }
    }
  }
}

TEST(Occupancy, LaunchBoundRegisters) {
  // __launch_bounds__(256, 2): 65536 / 512 = 128; (1024, 1): 64; (256, 6): 42 -> 40.
  EXPECT_EQ(LaunchBoundRegisters(65536, 256, 2), 128);
  EXPECT_EQ(LaunchBoundRegisters(65536, 1024, 1), 64);
  EXPECT_EQ(LaunchBoundRegisters(65536, 256, 6), 40);
  EXPECT_EQ(LaunchBoundRegisters(65536, 32, 1), 255);
}

}  // namespace
}  // namespace staged
