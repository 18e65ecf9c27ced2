/// @file device_info_test.cpp
/// @brief Host tests of device-info helpers that need no GPU.
#include <gtest/gtest.h>

#include "common/device_info.hpp"
#include "common/errors.hpp"

namespace staged {
namespace {

TEST(DeviceInfo, Fp32LanesPerComputeCapability) {
  EXPECT_EQ(Fp32LanesPerSm(7, 0), 64);
  EXPECT_EQ(Fp32LanesPerSm(8, 0), 64);
  EXPECT_EQ(Fp32LanesPerSm(8, 6), 128);
  EXPECT_EQ(Fp32LanesPerSm(9, 0), 128);
  EXPECT_EQ(Fp32LanesPerSm(3, 5), 0);
}

TEST(DeviceInfo, AttributePeakOfAnH200) {
  DeviceInfo h200;
  h200.cc_major = 9;
  h200.sm_count = 132;
  h200.clock_khz = 1980000;
  EXPECT_NEAR(Fp32GflopsFromAttributes(h200), 66908.16, 0.01);
}

TEST(DeviceInfo, FormatBytes) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1536), "1.50 KiB");
  EXPECT_EQ(FormatBytes(141.0 * (1ull << 30)), "141.00 GiB");
}

TEST(DeviceInfo, RequireGpuAgreesWithGpuAvailable) {
  if (GpuAvailable()) {
    EXPECT_NO_THROW(RequireGpu());
  } else {
    try {
      RequireGpu();
      FAIL() << "RequireGpu returned without a GPU";
    } catch (const NoGpuError& e) {
      EXPECT_NE(std::string(e.what()).find("no NVIDIA GPU found"), std::string::npos);
    }
  }
}

TEST(DeviceInfo, DescribeShowsPeaksWithTheirSource) {
  DeviceInfo d;
  d.name = "X";
  d.cc_major = 9;
  d.sm_count = 1;
  d.copy_gbps = 4270;
  d.fp32_gflops = 60000;
  d.fp32_source = "attributes";
  const std::string s = d.Describe();
  EXPECT_NE(s.find("copy 4270 GB/s (measured)"), std::string::npos) << s;
  EXPECT_NE(s.find("FP32 60000 GFLOP/s (attributes)"), std::string::npos) << s;
}

TEST(DeviceInfo, TooOldMessageNamesTheGpuAndTheOldestSupported) {
  const std::string msg = TooOldMessage("Tesla P100-PCIE-16GB", 6, 0);
  EXPECT_NE(msg.find("Tesla P100-PCIE-16GB is sm_60"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sm_75"), std::string::npos) << msg;
  EXPECT_EQ(kMinComputeCapability, 75);
}

}  // namespace
}  // namespace staged
