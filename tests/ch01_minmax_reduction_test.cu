/// @file ch01_minmax_reduction_test.cu
/// @brief Chapter 01 tests: one body over every GPU variant (naive, each optimized stage, CUB)
///        and every type, against the CPU reference; host tests of the key order, the CPU
///        reference and the grid maths.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch01 {
namespace {

using staged::testing::kTestSeed;

template <typename T>
using Launcher = void (*)(const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t, cudaStream_t);

/// A GPU variant under test.
template <typename T>
struct VariantEntry {
  const char* name;
  std::size_t (*temp_bytes)(std::size_t);
  Launcher<T> run;
};

template <typename T>
std::vector<VariantEntry<T>> AllVariants() {
  using optimized::Stage;
  return {
      {"naive", naive::MinMaxTempBytes<T>, naive::MinMax<T>},
      {"optimized:scalar-loads", optimized::MinMaxTempBytes<T>,
       [](const T* in, std::size_t n, MinMaxPair<T>* out, void* tmp, std::size_t b,
          cudaStream_t s) {
         optimized::MinMaxStage<T>(Stage::kScalarLoads, in, n, out, tmp, b, s);
       }},
      {"optimized:vector-loads", optimized::MinMaxTempBytes<T>,
       [](const T* in, std::size_t n, MinMaxPair<T>* out, void* tmp, std::size_t b,
          cudaStream_t s) {
         optimized::MinMaxStage<T>(Stage::kVectorLoads, in, n, out, tmp, b, s);
       }},
      {"optimized", optimized::MinMaxTempBytes<T>, optimized::MinMax<T>},
      {"library:cub", library::MinMaxTempBytes<T>, library::MinMax<T>},
  };
}

/// Copies @p host to the device @p offset elements past a cudaMalloc boundary, runs @p v into a
/// poisoned result and returns it.
template <typename T>
MinMaxPair<T> RunOnGpu(const VariantEntry<T>& v, const std::vector<T>& host, std::size_t offset,
                       cudaStream_t stream = nullptr) {
  const std::size_t n = host.size();
  staged::DeviceBuffer<T> d_buf(n + offset);
  CUDA_CHECK(cudaMemset(d_buf.data(), 0, (n + offset) * sizeof(T)));
  CUDA_CHECK(cudaMemcpy(d_buf.data() + offset, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const std::size_t bytes = v.temp_bytes(n);
  staged::DeviceBuffer<unsigned char> d_temp(bytes > 0 ? bytes : 1);
  // Poison the scratch too: no variant may rely on its contents.
  d_temp.FillBytes(0xA5);
  staged::DeviceBuffer<MinMaxPair<T>> d_result(1);
  d_result.FillBytes(0xFF);
  // The copies and fills above ran on the legacy stream; @p stream may be non-blocking.
  CUDA_CHECK(cudaDeviceSynchronize());
  v.run(d_buf.data() + offset, n, d_result.data(), d_temp.data(), d_temp.bytes(), stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  CUDA_CHECK(cudaGetLastError());
  return d_result.ToHost()[0];
}

template <typename T>
::testing::AssertionResult SamePair(const MinMaxPair<T>& expected, const MinMaxPair<T>& actual) {
  const T e[2] = {expected.min, expected.max};
  const T a[2] = {actual.min, actual.max};
  const staged::VerifyReport r = staged::CompareExact(e, a, 2);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "(index 0 = min, 1 = max) " << r.Summary();
}

/// The one test body: every variant, at every offset given, equals the CPU reference exactly.
template <typename T>
void ExpectEveryVariantMatches(const std::vector<T>& data, const std::string& what,
                               std::vector<std::size_t> offsets = {0}) {
  const MinMaxPair<T> ref = cpu::MinMax(data.data(), data.size());
  for (const auto& v : AllVariants<T>()) {
    for (std::size_t offset : offsets) {
      EXPECT_TRUE(SamePair(ref, RunOnGpu(v, data, offset)))
          << v.name << ", " << what << ", n = " << data.size() << ", offset " << offset << ", seed "
          << kTestSeed;
    }
  }
}

/// A value of @p T that is below every element of the generator's ranges, or above.
template <typename T>
T Extreme(bool low) {
  if constexpr (std::is_floating_point_v<T>) return low ? T(-7.5) : T(7.5);
  return low ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

/// All-negative data: the generator's values pushed below zero (for unsigned: the top half).
template <typename T>
std::vector<T> AllNegative(std::size_t n) {
  std::vector<T> x = staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed);
  for (T& v : x) {
    if constexpr (std::is_floating_point_v<T>) {
      v = -std::fabs(v) - T(0.5);
    } else if constexpr (std::is_signed_v<T>) {
      v = static_cast<T>(v | std::numeric_limits<T>::min());
    } else {
      v = static_cast<T>(v | 0x80000000u);
    }
  }
  return x;
}

const std::vector<std::size_t> kSizes = {1, 2, 31, 32, 33, 1023, 1024, 1025, 999983};
const std::size_t kLarge = (std::size_t{1} << 24) + 3;

// ---------------------------------------------------------------------------------------------
// GPU tests, every type.

template <typename T>
class MinMaxVariants : public staged::testing::GpuTest {};
using AllTypes = ::testing::Types<float, double, std::int32_t, std::uint32_t>;
TYPED_TEST_SUITE(MinMaxVariants, AllTypes);

TYPED_TEST(MinMaxVariants, MatchCpuOverSizesAndDistributions) {
  using staged::Distribution;
  for (std::size_t n : kSizes) {
    for (Distribution d : {Distribution::kUniform, Distribution::kSorted, Distribution::kReverse,
                           Distribution::kEqual, Distribution::kFew}) {
      ExpectEveryVariantMatches(staged::Generate<TypeParam>(n, d, kTestSeed),
                                staged::DistributionName(d));
    }
    ExpectEveryVariantMatches(AllNegative<TypeParam>(n), "all negative");
  }
}

TYPED_TEST(MinMaxVariants, MatchCpuAtTwoToTheTwentyFourPlusThree) {
  ExpectEveryVariantMatches(
      staged::Generate<TypeParam>(kLarge, staged::Distribution::kUniform, kTestSeed), "uniform",
      {0, 3});
}

TYPED_TEST(MinMaxVariants, PointersOffsetByOneToThreeElements) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5},
                        std::size_t{31}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    auto x = staged::Generate<TypeParam>(n, staged::Distribution::kUniform, kTestSeed);
    // Extremes in the misaligned head and in the tail, where the vector loads do not reach.
    x.front() = Extreme<TypeParam>(true);
    x.back() = Extreme<TypeParam>(false);
    ExpectEveryVariantMatches(x, "extremes at both ends", {0, 1, 2, 3});
  }
}

TYPED_TEST(MinMaxVariants, ExtremesAtFirstAndLastIndex) {
  for (std::size_t n : kSizes) {
    if (n < 2) continue;
    auto x = staged::Generate<TypeParam>(n, staged::Distribution::kUniform, kTestSeed);
    x.front() = Extreme<TypeParam>(true);
    x.back() = Extreme<TypeParam>(false);
    ExpectEveryVariantMatches(x, "min first, max last");
    std::swap(x.front(), x.back());
    ExpectEveryVariantMatches(x, "max first, min last");
  }
}

TYPED_TEST(MinMaxVariants, TypeLimits) {
  using L = std::numeric_limits<TypeParam>;
  std::vector<TypeParam> x(4099, TypeParam(1));
  x[17] = L::lowest();
  x[4000] = L::max();
  ExpectEveryVariantMatches(x, "lowest and max", {0, 1});
}

TYPED_TEST(MinMaxVariants, RepeatedLaunchesAndTwoStreams) {
  // The optimized kernel's ticket counter must come back to zero after every launch, and two
  // streams must not share one.
  const auto v = AllVariants<TypeParam>()[3];
  ASSERT_STREQ(v.name, "optimized");
  staged::Stream a;
  staged::Stream b;
  for (int rep = 0; rep < 3; ++rep) {
    for (std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{3000017}}) {
      auto x = staged::Generate<TypeParam>(n, staged::Distribution::kUniform, kTestSeed + rep);
      const MinMaxPair<TypeParam> ref = cpu::MinMax(x.data(), n);
      EXPECT_TRUE(SamePair(ref, RunOnGpu(v, x, 0, rep % 2 ? a.get() : b.get()))) << n;
      EXPECT_TRUE(SamePair(ref, RunOnGpu(v, x, 1))) << n;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// GPU tests, floating point: signed zeros, infinities, NaN.

template <typename T>
class MinMaxFloatVariants : public staged::testing::GpuTest {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MinMaxFloatVariants, FloatTypes);

TYPED_TEST(MinMaxFloatVariants, SignedZerosMinIsNegativeMaxIsPositive) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{2}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    std::vector<T> x(n, T(+0.0));
    x[n / 2] = T(-0.0);
    ExpectEveryVariantMatches(x, "one -0.0 among +0.0", {0, 1, 3});
    const MinMaxPair<T> ref = cpu::MinMax(x.data(), n);
    EXPECT_TRUE(std::signbit(ref.min));
    EXPECT_FALSE(std::signbit(ref.max));
    std::vector<T> neg(n, T(-0.0));
    ExpectEveryVariantMatches(neg, "all -0.0");
    std::vector<T> pos(n, T(+0.0));
    ExpectEveryVariantMatches(pos, "all +0.0");
  }
}

TYPED_TEST(MinMaxFloatVariants, Infinities) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    auto x = staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed);
    x[0] = inf;
    ExpectEveryVariantMatches(x, "+inf first", {0, 2});
    x[n - 1] = -inf;
    ExpectEveryVariantMatches(x, "+inf first, -inf last", {0, 2});
    std::vector<T> all(n, -inf);
    ExpectEveryVariantMatches(all, "all -inf");
  }
}

TYPED_TEST(MinMaxFloatVariants, AnyNaNMakesBothNaN) {
  using T = TypeParam;
  const T qnan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t n :
       {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      for (T nan : {qnan, -qnan}) {
        auto x = staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed);
        x[at] = nan;
        const MinMaxPair<T> ref = cpu::MinMax(x.data(), n);
        ASSERT_TRUE(std::isnan(ref.min) && std::isnan(ref.max)) << "policy: NaN propagates";
        ExpectEveryVariantMatches(x, "NaN at " + std::to_string(at), {0, 3});
      }
    }
    std::vector<T> all(n, qnan);
    ExpectEveryVariantMatches(all, "all NaN");
  }
}

// ---------------------------------------------------------------------------------------------
// Host tests: no GPU needed.

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

TEST(MinMaxGridMaths, SplitAtAlignment) {
  // Floats from an aligned address: no head, whole vectors, the rest is tail.
  auto s = optimized::SplitAtAlignment(0x1000, 10, 4);
  EXPECT_EQ(s.head, 0u);
  EXPECT_EQ(s.vectors, 2u);
  EXPECT_EQ(s.tail, 2u);
  // One float past the boundary: three floats of head.
  s = optimized::SplitAtAlignment(0x1004, 10, 4);
  EXPECT_EQ(s.head, 3u);
  EXPECT_EQ(s.vectors, 1u);
  EXPECT_EQ(s.tail, 3u);
  // Doubles 8 bytes past: one double of head.
  s = optimized::SplitAtAlignment(0x1008, 5, 8);
  EXPECT_EQ(s.head, 1u);
  EXPECT_EQ(s.vectors, 2u);
  EXPECT_EQ(s.tail, 0u);
  // Fewer elements than the head would be.
  s = optimized::SplitAtAlignment(0x1004, 2, 4);
  EXPECT_EQ(s.head, 2u);
  EXPECT_EQ(s.vectors, 0u);
  EXPECT_EQ(s.tail, 0u);
  for (std::size_t n = 1; n < 40; ++n) {
    for (std::uintptr_t off = 0; off < 16; off += 4) {
      s = optimized::SplitAtAlignment(0x2000 + off, n, 4);
      EXPECT_EQ(s.head + 4 * s.vectors + s.tail, n);
      EXPECT_LT(s.head, 4u);
      EXPECT_LT(s.tail, 4u);
      if (s.vectors > 0) EXPECT_EQ((0x2000 + off + 4 * s.head) % 16, 0u);
    }
  }
}

TEST(MinMaxGridMaths, GridBlocksFillsTheGpuButNotMore) {
  const std::size_t chunk = std::size_t(optimized::kBlockSize) * optimized::kUnroll;
  EXPECT_EQ(optimized::GridBlocks(0, optimized::kUnroll, 132, 8), 1u);
  EXPECT_EQ(optimized::GridBlocks(1, optimized::kUnroll, 132, 8), 1u);
  EXPECT_EQ(optimized::GridBlocks(chunk, optimized::kUnroll, 132, 8), 1u);
  EXPECT_EQ(optimized::GridBlocks(chunk + 1, optimized::kUnroll, 132, 8), 2u);
  EXPECT_EQ(optimized::GridBlocks(std::size_t{1} << 34, optimized::kUnroll, 132, 8), 132u * 8);
  EXPECT_EQ(optimized::GridBlocks(std::size_t{1} << 34, optimized::kUnroll, 1000, 8),
            unsigned(optimized::kMaxGridBlocks));
  EXPECT_EQ(optimized::GridBlocks(std::size_t{1} << 34, 1, 0, 0), 1u);
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
  EXPECT_EQ(optimized::MinMaxTempBytes<float>(1), optimized::MinMaxTempBytes<float>(1u << 30));
}

}  // namespace
}  // namespace ch01
