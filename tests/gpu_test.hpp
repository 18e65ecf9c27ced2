/// @file gpu_test.hpp
/// @brief Test helpers: skip GPU tests where no device is usable, seeded data, sizes.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/device_info.hpp"

/// Skips the current test (GTEST_SKIP) when no CUDA device can be used.
#define STAGED_REQUIRE_GPU()                                                  \
  do {                                                                        \
    if (!::staged::GpuAvailable()) GTEST_SKIP() << "no usable CUDA GPU here"; \
  } while (0)

namespace staged::testing {

/// Fixture for tests that need a GPU: skips in SetUp when there is none.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { STAGED_REQUIRE_GPU(); }
};

/// Parameterised fixture for tests that need a GPU.
template <typename Param>
class GpuTestWithParam : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { STAGED_REQUIRE_GPU(); }
};

/// The seed every test uses unless it says otherwise; printed by failing checks.
inline constexpr std::uint64_t kTestSeed = 20261121;

/// Sets `STAGED_DEVICE_PROFILE` to @p name ("" unsets it) for the scope, and restores it after:
/// for the few tests that check what the GPU itself holds whatever profile the suite runs under.
class ScopedDeviceProfile {
 public:
  /// @param[in] name a profile name, or "" for the device's own limits
  explicit ScopedDeviceProfile(const std::string& name) {
    const char* old = std::getenv(kProfileVariable);
    had_ = old != nullptr;
    if (had_) old_ = old;
    Set(name);
  }
  ~ScopedDeviceProfile() { Set(had_ ? old_ : std::string()); }
  ScopedDeviceProfile(const ScopedDeviceProfile&) = delete;
  ScopedDeviceProfile& operator=(const ScopedDeviceProfile&) = delete;

 private:
  static void Set(const std::string& name) {
    if (name.empty()) {
      ::unsetenv(kProfileVariable);
    } else {
      ::setenv(kProfileVariable, name.c_str(), 1);
    }
  }
  static constexpr const char* kProfileVariable = "STAGED_DEVICE_PROFILE";
  bool had_ = false;
  std::string old_;
};

}  // namespace staged::testing
