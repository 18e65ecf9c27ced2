/// @file ch01_minmax_reduction_host_test.cu
/// @brief Chapter 01 host tests (no GPU needed): the key order, the CPU reference, the launchers'
///        argument checks and the scratch sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "ch01_variants.hpp"
#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "gpu_test.hpp"

namespace ch01 {
namespace {

using staged::testing::kTestSeed;

template <typename T>
class OrderedKeyFloat : public ::testing::Test {};
TYPED_TEST_SUITE(OrderedKeyFloat, FloatTypes);

TYPED_TEST(OrderedKeyFloat, KeysIncreaseWithTheValueAndMinusZeroIsBelowPlusZero) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  using K = OrderedKey<T>;
  const std::vector<T> ascending = {-L::infinity(),   L::lowest(), T(-1),    -L::min(),
                                    -L::denorm_min(), T(-0.0),     T(+0.0),  L::denorm_min(),
                                    L::min(),         T(1),        L::max(), L::infinity()};
  for (std::size_t i = 1; i < ascending.size(); ++i) {
    EXPECT_LT(K::From(ascending[i - 1]), K::From(ascending[i])) << "at " << i;
  }
  EXPECT_EQ(K::From(-L::infinity()), K::kNegInf);
  EXPECT_EQ(K::From(L::infinity()), K::kPosInf);
  EXPECT_GT(K::From(L::quiet_NaN()), K::kPosInf);
  EXPECT_LT(K::From(-L::quiet_NaN()), K::kNegInf);
  const auto values = staged::Generate<T>(10000, staged::Distribution::kUniform, kTestSeed);
  for (T v : values) {
    const T back = K::To(K::From(v));
    EXPECT_EQ(BitCast<KeyOf<T>>(back), BitCast<KeyOf<T>>(v));
  }
  for (std::size_t i = 1; i < values.size(); ++i) {
    EXPECT_EQ(values[i - 1] < values[i], K::From(values[i - 1]) < K::From(values[i]));
  }
}

template <typename T>
class CpuReference : public ::testing::Test {};
TYPED_TEST_SUITE(CpuReference, AllTypes);

TYPED_TEST(CpuReference, SmallCasesAndTypeLimits) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  const std::vector<T> a = {T(3), T(1), T(2)};
  auto r = cpu::MinMax(a.data(), a.size());
  EXPECT_EQ(r.min, T(1));
  EXPECT_EQ(r.max, T(3));
  const std::vector<T> one = {T(5)};
  r = cpu::MinMax(one.data(), 1);
  EXPECT_EQ(r.min, T(5));
  EXPECT_EQ(r.max, T(5));
  const std::vector<T> lim = {T(0), L::max(), L::lowest(), T(1)};
  r = cpu::MinMax(lim.data(), lim.size());
  EXPECT_EQ(r.min, L::lowest());
  EXPECT_EQ(r.max, L::max());
}

TYPED_TEST(CpuReference, ZeroElementsIsAnErrorForEveryVariant) {
  using T = TypeParam;
  EXPECT_THROW(cpu::MinMax<T>(nullptr, 0), std::invalid_argument);
  // The launchers refuse n == 0 before touching the GPU.
  for (const auto& v : AllVariants<T>()) {
    EXPECT_THROW(v.run(nullptr, 0, nullptr, nullptr, 0, nullptr), std::invalid_argument) << v.name;
  }
}

TYPED_TEST(CpuReference, TooSmallScratchIsRefused) {
  using T = TypeParam;
  EXPECT_THROW(naive::MinMax<T>(nullptr, 1000, nullptr, nullptr, 0, nullptr),
               std::invalid_argument);
  EXPECT_THROW(optimized::MinMax<T>(nullptr, 1000, nullptr, nullptr, 0, nullptr),
               std::invalid_argument);
  // One byte short (the counter would not fit): refused before anything is queued, so the
  // pointer is never dereferenced.
  void* not_dereferenced = reinterpret_cast<void*>(std::uintptr_t{256});
  EXPECT_THROW(optimized::MinMax<T>(nullptr, 1000, nullptr, not_dereferenced,
                                    optimized::MinMaxTempBytes<T>(1000) - 1, nullptr),
               std::invalid_argument);
}

TYPED_TEST(CpuReference, MisalignedScratchIsAUsageErrorForEveryVariant) {
  using T = TypeParam;
  // The scratch holds 8-byte keys (double) and the finishing counter: every variant, CUB's
  // included, refuses a d_temp off a 16-byte boundary before any CUDA call, so this runs
  // without a GPU and the pointers are never dereferenced.
  for (const std::uintptr_t offset : {4u, 8u, 12u}) {
    void* misaligned = reinterpret_cast<void*>(std::uintptr_t{1} << 20 | offset);
    for (const auto& v : AllVariants<T>()) {
      EXPECT_THROW(v.run(nullptr, 1000, nullptr, misaligned, std::size_t{1} << 30, nullptr),
                   staged::UsageError)
          << v.name << ", d_temp 16-byte boundary + " << offset;
    }
  }
}

template <typename T>
class CpuReferenceFloat : public ::testing::Test {};
TYPED_TEST_SUITE(CpuReferenceFloat, FloatTypes);

TYPED_TEST(CpuReferenceFloat, SignedZerosInfinitiesAndNaN) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  for (const std::vector<T>& z :
       {std::vector<T>{T(+0.0), T(-0.0)}, std::vector<T>{T(-0.0), T(+0.0)}}) {
    const auto r = cpu::MinMax(z.data(), z.size());
    EXPECT_TRUE(r.min == 0 && std::signbit(r.min));
    EXPECT_TRUE(r.max == 0 && !std::signbit(r.max));
  }
  const std::vector<T> inf = {T(1), L::infinity(), -L::infinity(), T(2)};
  auto r = cpu::MinMax(inf.data(), inf.size());
  EXPECT_EQ(r.min, -L::infinity());
  EXPECT_EQ(r.max, L::infinity());
  for (T nan : {L::quiet_NaN(), -L::quiet_NaN(), L::signaling_NaN()}) {
    for (std::size_t at = 0; at < 4; ++at) {
      std::vector<T> x = {T(1), T(-2), T(3), T(0.5)};
      x[at] = nan;
      r = cpu::MinMax(x.data(), x.size());
      EXPECT_TRUE(std::isnan(r.min)) << at;
      EXPECT_TRUE(std::isnan(r.max)) << at;
    }
  }
}

TEST(MinMaxGridMaths, NaivePassesAndScratch) {
  EXPECT_EQ(naive::PassCount(1), 1u);
  EXPECT_EQ(naive::PassCount(256), 1u);
  EXPECT_EQ(naive::PassCount(257), 2u);
  EXPECT_EQ(naive::PassCount(65536), 2u);
  EXPECT_EQ(naive::PassCount(65537), 3u);
  EXPECT_EQ(naive::PassCount(std::size_t{1} << 30), 4u);
  EXPECT_EQ(naive::MinMaxTempBytes<float>(256), 0u);
  EXPECT_GE(naive::MinMaxTempBytes<float>(257), 2 * 2 * sizeof(float));
  EXPECT_GE(naive::MinMaxTempBytes<double>(std::size_t{1} << 20),
            2 * sizeof(double) * ((std::size_t{1} << 12) + (std::size_t{1} << 4)));
}

TEST(MinMaxGridMaths, OptimizedScratchIsConstantAndHoldsEveryPartialAndTheCounter) {
  // The scratch does not grow with n: kMaxGridBlocks key pairs (the grid never has more
  // blocks) and the 4-byte finishing counter behind them.
  EXPECT_EQ(optimized::MinMaxTempBytes<float>(1), optimized::MinMaxTempBytes<float>(1u << 30));
  EXPECT_GE(optimized::MinMaxTempBytes<float>(1),
            2 * sizeof(std::int32_t) * optimized::kMaxGridBlocks + sizeof(unsigned));
  EXPECT_GE(optimized::MinMaxTempBytes<double>(1),
            2 * sizeof(std::int64_t) * optimized::kMaxGridBlocks + sizeof(unsigned));
}

TEST(ArchitectureLimits, EveryProfileHoldsTheReductionBlocks) {
  // Both kernels' blocks fit every profile's SM (their shared memory: one key pair per thread for
  // the naive tree, per warp for the optimized kernel), and the optimized launcher's cap on
  // blocks per SM is within every profile's.
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    const int naive_smem = 2 * naive::kBlockSize * static_cast<int>(sizeof(double));
    const int opt_smem = 2 * (optimized::kBlockSize / 32) * static_cast<int>(sizeof(double)) + 16;
    EXPECT_GE(staged::BlocksPerSmUnder(
                  limits, naive::kBlockSize, naive_smem,
                  staged::LaunchBoundRegisters(limits.regs_per_sm, naive::kBlockSize, 1)),
              1)
        << limits.name;
    EXPECT_GE(staged::BlocksPerSmUnder(
                  limits, optimized::kBlockSize, opt_smem,
                  staged::LaunchBoundRegisters(limits.regs_per_sm, optimized::kBlockSize, 1)),
              1)
        << limits.name;
    EXPECT_LE(optimized::kMaxBlocksPerSm, limits.max_blocks_per_sm) << limits.name;
  }
}

}  // namespace
}  // namespace ch01
