/// @file gpu_test.hpp
/// @brief Test helpers: skip GPU tests where no device is usable, seeded data, sizes.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
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

}  // namespace staged::testing
