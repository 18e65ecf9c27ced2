/// @file ch04_matmul_global_vs_shared_test.cu
/// @brief Chapter 04 tests: the CPU reference and the error bound (host), then the naive kernel,
///        every optimized stage and cuBLAS against the reference over square, rectangular,
///        unaligned and empty shapes, exact int32 products, NaN/inf propagation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/device_buffer.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "gpu_test.hpp"

namespace ch04 {
namespace {

using staged::testing::kTestSeed;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// M×N×K of one product.
struct Shape {
  int m;
  int n;
  int k;
};

std::string ShapeName(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

/// Above this M·N·K, cuBLAS (with the same bound) replaces the CPU as the float reference.
constexpr std::uint64_t kCpuReferenceLimit = std::uint64_t{1} << 28;

// -------------------------------------------------------------------------------------------
// Host tests.

TEST(Ch04Cpu, FloatMatchesHandComputedProduct) {
  // [1 2 3; 4 5 6] · [7 8; 9 10; 11 12] = [58 64; 139 154]
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9, 10, 11, 12};
  std::vector<float> c(4);
  cpu::Matmul(a.data(), b.data(), c.data(), 2, 2, 3);
  EXPECT_EQ(c, (std::vector<float>{58, 64, 139, 154}));
}

TEST(Ch04Cpu, IntIsExactNearTheInt32Limit) {
  // 2·(2^15)·(2^15) = 2^31 overflows, 2^15·2^15 + (2^15 − 1)·2^15 = 2^31 − 2^15 does not.
  const std::vector<std::int32_t> a = {1 << 15, (1 << 15) - 1}, b = {1 << 15, 1 << 15};
  std::int32_t c = 0;
  cpu::Matmul(a.data(), b.data(), &c, 1, 1, 2);
  EXPECT_EQ(c, 2147483647 - 32767);
}

TEST(Ch04Cpu, AccumulatesInDouble) {
  // 1 + 2^-30 − 1 is 0 in float arithmetic, 2^-30 in double.
  const std::vector<float> a = {1.0f, std::ldexp(1.0f, -30), -1.0f}, b = {1.0f, 1.0f, 1.0f};
  float c = -1.0f;
  cpu::Matmul(a.data(), b.data(), &c, 1, 1, 3);
  EXPECT_EQ(c, std::ldexp(1.0f, -30));
}

TEST(Ch04Cpu, EmptyInnerDimensionGivesZeros) {
  std::vector<float> c(6, 7.0f);
  cpu::Matmul<float>(nullptr, nullptr, c.data(), 2, 3, 0);
  EXPECT_EQ(c, std::vector<float>(6, 0.0f));
}

TEST(Ch04Cpu, AbsMatmulIsProductOfMagnitudes) {
  const std::vector<float> a = {-1, 2}, b = {3, -4};  // 1×2 times 2×1
  float s = 0;
  cpu::AbsMatmul(a.data(), b.data(), &s, 1, 1, 2);
  EXPECT_EQ(s, 11.0f);
}

TEST(Ch04Bound, GammaGrowsLikeKTimesUnitRoundoff) {
  EXPECT_NEAR(GammaK(1) / std::ldexp(1.0, -24), 1.0, 1e-6);
  EXPECT_NEAR(GammaK(4096) / (4096 * std::ldexp(1.0, -24)), 1.0, 1e-3);
  EXPECT_GT(ToleranceScale(0), 0.0);  // K = 0 still gets a finite, positive factor
}

TEST(Ch04Bound, CompareProductAppliesPerElementBound) {
  const int k = 1000;
  const double tol = ToleranceScale(k);
  const std::vector<float> expected = {1.0f, 100.0f, 0.0f};
  const std::vector<float> abs_product = {10.0f, 100.0f, 0.0f};
  std::vector<float> actual = {static_cast<float>(1.0 + 0.9 * tol * 10),
                               static_cast<float>(100.0 - 0.9 * tol * 100), 0.0f};
  EXPECT_TRUE(CompareProduct(expected.data(), actual.data(), abs_product.data(), 3, k).ok);
  actual[0] = static_cast<float>(1.0 + 2.0 * tol * 10);
  EXPECT_FALSE(CompareProduct(expected.data(), actual.data(), abs_product.data(), 3, k).ok);
  actual[0] = 1.0f;
  actual[2] = 1e-30f;  // |A|·|B| = 0: the product must be exactly zero
  EXPECT_FALSE(CompareProduct(expected.data(), actual.data(), abs_product.data(), 3, k).ok);
}

TEST(Ch04Bound, NaNAndInfinityMustPropagateExactly) {
  const std::vector<float> expected = {kNaN, kInf, -kInf};
  const std::vector<float> abs_product = {kInf, kInf, kInf};
  const std::vector<float> same = {kNaN, kInf, -kInf};
  EXPECT_TRUE(CompareProduct(expected.data(), same.data(), abs_product.data(), 3, 4).ok);
  const std::vector<float> finite = {0.0f, kInf, -kInf};
  EXPECT_FALSE(CompareProduct(expected.data(), finite.data(), abs_product.data(), 3, 4).ok);
  const std::vector<float> flipped = {kNaN, -kInf, -kInf};
  EXPECT_FALSE(CompareProduct(expected.data(), flipped.data(), abs_product.data(), 3, 4).ok);
  const std::vector<float> ref_finite = {1.0f}, got_nan = {kNaN}, s = {kInf};
  EXPECT_FALSE(CompareProduct(ref_finite.data(), got_nan.data(), s.data(), 1, 4).ok);
}

TEST(Ch04Stages, NamesParseAndBestIsListed) {
  for (const auto& info : optimized::AllStages()) {
    EXPECT_EQ(optimized::ParseStage(info.name), info.stage);
    EXPECT_GT(info.global_intensity, 0.0);
  }
  EXPECT_EQ(optimized::ParseStage("best"), optimized::kBestStage);
  EXPECT_THROW(optimized::ParseStage("tensorcore"), staged::UsageError);
  EXPECT_TRUE(optimized::Info(optimized::Stage::kTiled16).supports_int);
}

TEST(Ch04Stages, DimensionsAreChecked) {
  EXPECT_NO_THROW(CheckDimensions(0, 0, 0));
  EXPECT_NO_THROW(CheckDimensions(kMaxDimension, 1, 1));
  EXPECT_THROW(CheckDimensions(-1, 1, 1), staged::UsageError);
  EXPECT_THROW(CheckDimensions(1, kMaxDimension + 1, 1), staged::UsageError);
  EXPECT_THROW(CheckDimensions(1, 1, -5), staged::UsageError);
}

// -------------------------------------------------------------------------------------------
// GPU tests: one body, every variant.

/// What runs: the naive kernel, one optimized stage, or cuBLAS.
struct Variant {
  std::string name;        ///< PascalCase, used in test names
  int kind;                ///< 0 naive, 1 optimized stage, 2 cuBLAS
  optimized::Stage stage;  ///< for kind 1
};

std::vector<Variant> FloatVariants() {
  std::vector<Variant> v = {{"Naive", 0, optimized::Stage::kTiled16}};
  for (const auto& info : optimized::AllStages()) {
    std::string name = info.name;
    name[0] = static_cast<char>(name[0] - 'a' + 'A');
    v.push_back({name, 1, info.stage});
  }
  v.push_back({"Cublas", 2, optimized::Stage::kTiled16});
  return v;
}

std::vector<Variant> IntVariants() {
  return {{"Naive", 0, optimized::Stage::kTiled16}, {"Tiled16", 1, optimized::Stage::kTiled16}};
}

library::Cublas& SharedCublas() {
  static library::Cublas handle;  // created on first use, by a test that has a GPU
  return handle;
}

template <typename T>
void Launch(const Variant& v, const T* a, const T* b, T* c, const Shape& s) {
  if (v.kind == 0) {
    naive::Matmul(a, b, c, s.m, s.n, s.k, nullptr);
  } else if (v.kind == 1) {
    optimized::Matmul(a, b, c, s.m, s.n, s.k, v.stage, nullptr);
  } else if constexpr (std::is_same_v<T, float>) {
    SharedCublas().Matmul(a, b, c, s.m, s.n, s.k, nullptr);
  }
}

/// Poisons C (all bits set: NaN for float, −1 for int), runs @p v and returns C.
template <typename T>
std::vector<T> RunPoisoned(const Variant& v, const staged::DeviceBuffer<T>& a,
                           const staged::DeviceBuffer<T>& b, const Shape& s) {
  staged::DeviceBuffer<T> c(static_cast<std::size_t>(s.m) * s.n);
  c.FillBytes(0xFF);
  Launch<T>(v, a.data(), b.data(), c.data(), s);
  CUDA_CHECK(cudaDeviceSynchronize());
  return c.ToHost();
}

std::vector<float> FloatInput(std::size_t count, std::uint64_t seed) {
  return staged::Generate<float>(count, staged::Distribution::kUniform, seed);
}

/// Checks a float product against the CPU reference (or cuBLAS beyond kCpuReferenceLimit).
void ExpectFloatProduct(const Variant& v, const std::vector<float>& h_a,
                        const std::vector<float>& h_b, const Shape& s) {
  const std::size_t size_c = static_cast<std::size_t>(s.m) * s.n;
  staged::DeviceBuffer<float> a(h_a), b(h_b);
  std::vector<float> ref(size_c), abs_product(size_c);
  const std::uint64_t volume = static_cast<std::uint64_t>(s.m) * s.n * s.k;
  if (volume <= kCpuReferenceLimit) {
    cpu::Matmul(h_a.data(), h_b.data(), ref.data(), s.m, s.n, s.k);
    cpu::AbsMatmul(h_a.data(), h_b.data(), abs_product.data(), s.m, s.n, s.k);
  } else {
    SharedCublas().Reference(a.data(), b.data(), s.m, s.n, s.k, &ref, &abs_product);
  }
  const std::vector<float> out = RunPoisoned(v, a, b, s);
  const staged::VerifyReport r =
      CompareProduct(ref.data(), out.data(), abs_product.data(), size_c, s.k);
  EXPECT_TRUE(r.ok) << v.name << " " << ShapeName(s) << " seed " << kTestSeed << ": "
                    << r.Summary();
}

const std::vector<Shape> kShapes = {
    {1, 1, 1},          {17, 33, 9},     {64, 64, 64},     {127, 127, 127}, {128, 128, 128},
    {129, 129, 129},    {1000, 1, 1000}, {513, 257, 1025}, {100, 64, 30},  // N % 4 == 0, K % 4 !=
                                                                           // 0: 16-byte B, scalar A
    {96, 100, 36},   // both aligned, neither a multiple of the tile: checked 16-byte path
    {256, 384, 24},  // whole tiles: unchecked path, rectangular
    {2048, 2048, 2048},
};

std::string ParamName(const std::tuple<Variant, Shape>& p) {
  return std::get<0>(p).name + ShapeName(std::get<1>(p));
}

class Ch04Float : public staged::testing::GpuTestWithParam<std::tuple<Variant, Shape>> {};

TEST_P(Ch04Float, MatchesReferenceWithinBound) {
  const auto& [v, s] = GetParam();
  const std::vector<float> h_a = FloatInput(static_cast<std::size_t>(s.m) * s.k, kTestSeed);
  const std::vector<float> h_b = FloatInput(static_cast<std::size_t>(s.k) * s.n, kTestSeed + 1);
  ExpectFloatProduct(v, h_a, h_b, s);
}

TEST_P(Ch04Float, NaNAndInfinityPropagate) {
  const auto& [v, s] = GetParam();
  if (static_cast<std::uint64_t>(s.m) * s.n * s.k > kCpuReferenceLimit)
    GTEST_SKIP() << "NaN/inf propagation is checked against the CPU product, run up to 512^3 only";
  std::vector<float> h_a = FloatInput(static_cast<std::size_t>(s.m) * s.k, kTestSeed);
  std::vector<float> h_b = FloatInput(static_cast<std::size_t>(s.k) * s.n, kTestSeed + 1);
  const int row = s.m / 2, col = s.n - 1, p = s.k - 1;
  h_a[static_cast<std::size_t>(row) * s.k + p / 2] = kNaN;  // row `row` of C must be NaN
  h_b[static_cast<std::size_t>(p) * s.n + col] = kInf;      // column `col`: ±inf (or NaN)
  ExpectFloatProduct(v, h_a, h_b, s);
  staged::DeviceBuffer<float> a(h_a), b(h_b);
  const std::vector<float> out = RunPoisoned(v, a, b, s);
  for (int j = 0; j < s.n; ++j) {
    EXPECT_TRUE(std::isnan(out[static_cast<std::size_t>(row) * s.n + j])) << "column " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, Ch04Float,
                         ::testing::Combine(::testing::ValuesIn(FloatVariants()),
                                            ::testing::ValuesIn(kShapes)),
                         [](const auto& info) { return ParamName(info.param); });

class Ch04Int : public staged::testing::GpuTestWithParam<std::tuple<Variant, Shape>> {};

TEST_P(Ch04Int, IsExact) {
  const auto& [v, s] = GetParam();
  // Inputs in [-8, 8] (as the executables use): |C_ij| <= 64·K, far from int32 overflow.
  auto input = [](std::size_t count, std::uint64_t seed) {
    const auto raw = staged::Generate<std::uint32_t>(count, staged::Distribution::kUniform, seed);
    std::vector<std::int32_t> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::int32_t>(raw[i] % 17) - 8;
    return out;
  };
  const auto h_a = input(static_cast<std::size_t>(s.m) * s.k, kTestSeed);
  const auto h_b = input(static_cast<std::size_t>(s.k) * s.n, kTestSeed + 1);
  std::vector<std::int32_t> ref(static_cast<std::size_t>(s.m) * s.n);
  cpu::Matmul(h_a.data(), h_b.data(), ref.data(), s.m, s.n, s.k);
  staged::DeviceBuffer<std::int32_t> a(h_a), b(h_b);
  const auto out = RunPoisoned(v, a, b, s);
  const staged::VerifyReport r = staged::CompareExact(ref.data(), out.data(), ref.size());
  EXPECT_TRUE(r.ok) << v.name << " " << ShapeName(s) << " seed " << kTestSeed << ": "
                    << r.Summary();
}

INSTANTIATE_TEST_SUITE_P(
    IntVariants, Ch04Int,
    ::testing::Combine(::testing::ValuesIn(IntVariants()),
                       ::testing::Values(Shape{1, 1, 1}, Shape{17, 33, 9}, Shape{64, 64, 64},
                                         Shape{127, 127, 127}, Shape{128, 128, 128},
                                         Shape{129, 129, 129}, Shape{1000, 1, 1000},
                                         Shape{513, 257, 1025}, Shape{1024, 1024, 1024})),
    [](const auto& info) { return ParamName(info.param); });

class Ch04Edges : public staged::testing::GpuTestWithParam<Variant> {};

TEST_P(Ch04Edges, EmptyShapesWriteNothingOrZeros) {
  const Variant& v = GetParam();
  staged::DeviceBuffer<float> a(16), b(16);
  a.FillBytes(0);
  b.FillBytes(0);
  // M = 0 or N = 0: nothing to write, must not fail.
  staged::DeviceBuffer<float> none(1);
  EXPECT_NO_THROW(Launch<float>(v, a.data(), b.data(), none.data(), Shape{0, 4, 4}));
  EXPECT_NO_THROW(Launch<float>(v, a.data(), b.data(), none.data(), Shape{4, 0, 4}));
  // K = 0: an empty sum, C must be all zeros (the poison must be overwritten).
  const std::vector<float> out = RunPoisoned(v, a, b, Shape{3, 5, 0});
  EXPECT_EQ(out, std::vector<float>(15, 0.0f));
}

TEST_P(Ch04Edges, MisalignedPointersTakeTheScalarPath) {
  // K and N are multiples of 4, but A, B and C start one float past an aligned address.
  const Variant& v = GetParam();
  const Shape s{130, 132, 68};
  const std::vector<float> h_a = FloatInput(static_cast<std::size_t>(s.m) * s.k + 1, kTestSeed);
  const std::vector<float> h_b = FloatInput(static_cast<std::size_t>(s.k) * s.n + 1, kTestSeed + 1);
  std::vector<float> ref(static_cast<std::size_t>(s.m) * s.n), abs_product(ref.size());
  cpu::Matmul(h_a.data() + 1, h_b.data() + 1, ref.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(h_a.data() + 1, h_b.data() + 1, abs_product.data(), s.m, s.n, s.k);
  staged::DeviceBuffer<float> a(h_a), b(h_b), c(ref.size() + 1);
  c.FillBytes(0xFF);
  Launch<float>(v, a.data() + 1, b.data() + 1, c.data() + 1, s);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<float> out = c.ToHost();
  const staged::VerifyReport r =
      CompareProduct(ref.data(), out.data() + 1, abs_product.data(), ref.size(), s.k);
  EXPECT_TRUE(r.ok) << v.name << ": " << r.Summary();
}

INSTANTIATE_TEST_SUITE_P(AllVariants, Ch04Edges, ::testing::ValuesIn(FloatVariants()),
                         [](const auto& info) { return info.param.name; });

class Ch04IntStages : public staged::testing::GpuTest {};

TEST_F(Ch04IntStages, FloatOnlyStagesRefuseInt) {
  staged::DeviceBuffer<std::int32_t> a(4), b(4), c(4);
  EXPECT_THROW(optimized::Matmul(a.data(), b.data(), c.data(), 2, 2, 2, optimized::Stage::kWarpTile,
                                 nullptr),
               staged::UsageError);
}

}  // namespace
}  // namespace ch04
