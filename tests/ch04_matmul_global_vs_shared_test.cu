/// @file ch04_matmul_global_vs_shared_test.cu
/// @brief Chapter 04 tests: the CPU reference and the error bound (host, including a float
///        product that must pass it and injected faults that must not), then every kernel
///        against the double-precision CPU reference over square, rectangular, unaligned and
///        empty shapes, exact int32 products, NaN/inf propagation, and the mutation check: at
///        every shape the benchmark measures, the checker the executable uses accepts the
///        default kernel's product and rejects it with a dropped k-tile, row or column or a
///        transposed tile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <map>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
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
  bool operator<(const Shape& o) const { return std::tie(m, n, k) < std::tie(o.m, o.n, o.k); }
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
};

std::string ShapeName(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

/// GoogleTest prints parameters with this (instead of their bytes).
void PrintTo(const Shape& s, std::ostream* os) { *os << ShapeName(s); }

std::size_t Elements(int rows, int cols) { return static_cast<std::size_t>(rows) * cols; }

/// Above this M·N·K, cuBLAS replaces the CPU as the float reference (as in main.cu).
constexpr std::uint64_t kCpuReferenceLimit = kCpuReferenceVolume;

std::uint64_t Volume(const Shape& s) { return static_cast<std::uint64_t>(s.m) * s.n * s.k; }

std::vector<float> FloatInput(std::size_t count, std::uint64_t seed) {
  return staged::Generate<float>(count, staged::Distribution::kUniform, seed);
}

/// Inputs and the double-precision reference of one shape, computed once per test binary.
struct Reference {
  std::vector<float> a, b, c, abs_product;
};

const Reference& CpuReference(const Shape& s) {
  static std::map<Shape, Reference> cache;  // the CPU product is the slow part of most tests
  auto it = cache.find(s);
  if (it != cache.end()) return it->second;
  Reference r;
  r.a = FloatInput(Elements(s.m, s.k), kTestSeed);
  r.b = FloatInput(Elements(s.k, s.n), kTestSeed + 1);
  r.c.resize(Elements(s.m, s.n));
  r.abs_product.resize(r.c.size());
  cpu::Matmul(r.a.data(), r.b.data(), r.c.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(r.a.data(), r.b.data(), r.abs_product.data(), s.m, s.n, s.k);
  return cache.emplace(s, std::move(r)).first->second;
}

// -------------------------------------------------------------------------------------------
// Faults injected into a correct product (host side), for the checker tests.

/// The faults a broken kernel typically makes.
enum class Fault {
  kDropKTile8,       ///< a 16×16 block of C misses the products of 8 consecutive k
  kDropKTile16,      ///< a 128×128 block of C misses the products of 16 consecutive k
  kDropRow,          ///< one row of C left at zero
  kDropColumn,       ///< one column of C left at zero
  kTransposeTile16,  ///< a 16×16 tile of C stored transposed
  kTransposeTile128  ///< a 128×128 tile of C stored transposed (when C is that large)
};

const char* FaultName(Fault f) {
  switch (f) {
    case Fault::kDropKTile8:
      return "k-tile of 8 dropped in a 16x16 block";
    case Fault::kDropKTile16:
      return "k-tile of 16 dropped in a 128x128 block";
    case Fault::kDropRow:
      return "row dropped";
    case Fault::kDropColumn:
      return "column dropped";
    case Fault::kTransposeTile16:
      return "16x16 tile transposed";
    default:
      return "128x128 tile transposed";
  }
}

const std::vector<Fault> kAllFaults = {Fault::kDropKTile8,      Fault::kDropKTile16,
                                       Fault::kDropRow,         Fault::kDropColumn,
                                       Fault::kTransposeTile16, Fault::kTransposeTile128};

/// Whether @p f can change a product of shape @p s (a transposed tile needs two rows and two
/// columns, a 128×128 one needs C at least that large).
bool Applies(Fault f, const Shape& s) {
  if (f == Fault::kTransposeTile16) return s.m >= 2 && s.n >= 2;
  if (f == Fault::kTransposeTile128) return s.m >= 128 && s.n >= 128;
  return s.k >= 1 || f == Fault::kDropRow || f == Fault::kDropColumn;
}

/// Subtracts Σ_{p in [k0, k1)} a_ip·b_pj from c over rows [r0, r1) and columns [c0, c1).
void DropProducts(std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b,
                  const Shape& s, int r0, int r1, int c0, int c1, int k0, int k1) {
  for (int i = r0; i < std::min(r1, s.m); ++i) {
    for (int j = c0; j < std::min(c1, s.n); ++j) {
      double dropped = 0.0;
      for (int p = k0; p < std::min(k1, s.k); ++p) {
        dropped += static_cast<double>(a[Elements(i, s.k) + p]) * b[Elements(p, s.n) + j];
      }
      float& v = c[Elements(i, s.n) + j];
      v = static_cast<float>(v - dropped);
    }
  }
}

/// @p c (a correct M×N product of @p a and @p b) with fault @p f injected.
std::vector<float> Inject(Fault f, std::vector<float> c, const std::vector<float>& a,
                          const std::vector<float>& b, const Shape& s) {
  const int mid_m = s.m / 2, mid_n = s.n / 2;
  switch (f) {
    case Fault::kDropKTile8: {
      const int r0 = mid_m / 16 * 16, c0 = mid_n / 16 * 16, k0 = s.k / 2 / 8 * 8;
      DropProducts(c, a, b, s, r0, r0 + 16, c0, c0 + 16, k0, k0 + 8);
      break;
    }
    case Fault::kDropKTile16:
      DropProducts(c, a, b, s, 0, 128, 0, 128, 0, 16);
      break;
    case Fault::kDropRow:
      for (int j = 0; j < s.n; ++j) c[Elements(mid_m, s.n) + j] = 0.0f;
      break;
    case Fault::kDropColumn:
      for (int i = 0; i < s.m; ++i) c[Elements(i, s.n) + mid_n] = 0.0f;
      break;
    default: {
      const int t = std::min({f == Fault::kTransposeTile16 ? 16 : 128, s.m, s.n});
      const std::vector<float> before = c;
      for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) c[Elements(i, s.n) + j] = before[Elements(j, s.n) + i];
      }
      break;
    }
  }
  return c;
}

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

TEST(Ch04Bound, ScaleIsWorstCaseForShortSumsProbabilisticForLongOnes) {
  const double u = std::ldexp(1.0, -24);
  EXPECT_NEAR(ToleranceScale(1) / (2 * u), 1.0, 1e-6);  // one product: one rounding each side
  EXPECT_NEAR(ToleranceScale(64) / (2 * GammaK(64)), 1.0, 1e-3);  // K < λ²: gamma_K is smaller
  EXPECT_NEAR(ToleranceScale(8192) / (2 * kToleranceLambda * std::sqrt(8192.0) * u), 1.0, 1e-3);
  EXPECT_GT(ToleranceScale(0), 0.0);  // K = 0 still gets a finite, positive factor
  // At K = 8192 with uniform [-1, 1) data, (|A||B|)_ij ≈ K/4: the tolerance must be well below
  // the standard deviation sqrt(8/9) of 8 dropped products, or a lost k-tile could pass.
  EXPECT_LT(ToleranceScale(8192) * 8192 / 4, 0.25);
  EXPECT_LT(AbsoluteFloor(1 << 19), 1e-30);
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
  actual[2] = 1e-30f;  // |A|·|B| = 0: only the underflow floor is allowed
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

/// A float product summed in the order with the largest error growth (one running sum per
/// element, no FMA): the worst a correct FP32 kernel can do on this data.
std::vector<float> SequentialFloatProduct(const Reference& r, const Shape& s) {
  std::vector<float> c(Elements(s.m, s.n));
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      volatile float sum = 0.0f;  // volatile: no reassociation, no contraction into FMA
      for (int p = 0; p < s.k; ++p) {
        const float prod = r.a[Elements(i, s.k) + p] * r.b[Elements(p, s.n) + j];
        sum = sum + prod;
      }
      c[Elements(i, s.n) + j] = sum;
    }
  }
  return c;
}

class Ch04Checker : public ::testing::TestWithParam<Shape> {};

TEST_P(Ch04Checker, CatchesFaults) {
  // Host-only half of the mutation check: a true FP32 product passes, each fault fails.
  const Shape s = GetParam();
  const Reference& r = CpuReference(s);
  const std::vector<float> c = SequentialFloatProduct(r, s);
  const std::size_t count = c.size();
  const staged::VerifyReport clean =
      CompareProduct(r.c.data(), c.data(), r.abs_product.data(), count, s.k);
  EXPECT_TRUE(clean.ok) << ShapeName(s) << ": " << clean.Summary();
  for (Fault f : kAllFaults) {
    if (!Applies(f, s)) continue;
    const std::vector<float> bad = Inject(f, c, r.a, r.b, s);
    EXPECT_FALSE(CompareProduct(r.c.data(), bad.data(), r.abs_product.data(), count, s.k).ok)
        << ShapeName(s) << ": " << FaultName(f) << " was not caught";
  }
}

INSTANTIATE_TEST_SUITE_P(Host, Ch04Checker,
                         ::testing::Values(Shape{64, 64, 4099}, Shape{130, 129, 1000},
                                           Shape{16, 8, 20000}, Shape{200, 200, 64}),
                         [](const auto& info) { return ShapeName(info.param); });

TEST(Ch04Stages, NamesParseAndBestIsListed) {
  for (const auto& info : optimized::AllStages()) {
    EXPECT_EQ(optimized::ParseStage(info.name), info.stage);
    EXPECT_EQ(optimized::Info(info.stage).name, std::string(info.name));
    EXPECT_GT(info.global_intensity, 0.0);
  }
  EXPECT_EQ(optimized::ParseStage("best"), optimized::Stage::kBest);
  EXPECT_EQ(optimized::Info(optimized::Stage::kBest).name, std::string("best"));
  EXPECT_THROW(optimized::ParseStage("tensorcore"), staged::UsageError);
  EXPECT_TRUE(optimized::Info(optimized::Stage::kTiled16).supports_int);
  EXPECT_TRUE(optimized::TimedOnShape(optimized::Stage::kSkinny, 8, 4096));
  EXPECT_FALSE(optimized::TimedOnShape(optimized::Stage::kSkinny, 4096, 4096));
  EXPECT_TRUE(optimized::TimedOnShape(optimized::Stage::kDoubleBuffer, 8, 8));
}

// The shape rule, class by class, on an H200 (132 SMs).
constexpr int kH200Sms = 132;

struct RuleCase {
  Shape shape;
  optimized::Stage expected;
};

void PrintTo(const RuleCase& c, std::ostream* os) {
  *os << ShapeName(c.shape) << "->" << optimized::Info(c.expected).name;
}

class Ch04Rule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(Ch04Rule, PicksTheStageForTheShapeClass) {
  const RuleCase& c = GetParam();
  EXPECT_EQ(optimized::Info(optimized::ChooseStage(c.shape.m, c.shape.n, c.shape.k, kH200Sms)).name,
            std::string(optimized::Info(c.expected).name))
      << ShapeName(c.shape);
}

TEST(Ch04Rule, LargeShapesGetAWholeKStageOf128x128Tiles) {
  // Rule 5 names a 128×128 kernel that runs all of K in one block (no split, no workspace).
  const optimized::StageInfo& info = optimized::Info(optimized::kLargeShapeStage);
  EXPECT_EQ(info.block_m, 128);
  EXPECT_EQ(info.block_n, 128);
  EXPECT_NE(optimized::kLargeShapeStage, optimized::Stage::kSplitK);
  EXPECT_NE(optimized::kLargeShapeStage, optimized::Stage::kBest);
}

using optimized::Stage;
constexpr Stage kLarge = optimized::kLargeShapeStage;
INSTANTIATE_TEST_SUITE_P(
    H200, Ch04Rule,
    ::testing::Values(
        // Enough 128×128 tiles for every SM, K longer than kShortK: the large-shape stage,
        // aligned or not.
        RuleCase{{4096, 4096, 4096}, kLarge}, RuleCase{{8192, 8192, 8192}, kLarge},
        RuleCase{{2048, 2048, 2048}, kLarge}, RuleCase{{4096, 4096, 512}, kLarge},
        RuleCase{{8192, 1024, 8192}, kLarge}, RuleCase{{4097, 4095, 4093}, kLarge},
        RuleCase{{1024, 2176, 65}, kLarge},
        // Short K: warp tiling.
        RuleCase{{4096, 4096, 64}, Stage::kWarpTile}, RuleCase{{1024, 2176, 64}, Stage::kWarpTile},
        RuleCase{{4095, 4097, 9}, Stage::kWarpTile},
        // Fewer 128×128 tiles than SMs: split-K.
        RuleCase{{1024, 1024, 1024}, Stage::kSplitK}, RuleCase{{1023, 1021, 1027}, Stage::kSplitK},
        RuleCase{{64, 4096, 4096}, Stage::kSplitK}, RuleCase{{4096, 64, 4096}, Stage::kSplitK},
        RuleCase{{127, 129, 4099}, Stage::kSplitK}, RuleCase{{256, 256, 256}, Stage::kSplitK},
        RuleCase{{1024, 2048, 64}, Stage::kSplitK},
        // Few rows or few columns, enough 8×8 tiles: skinny.
        RuleCase{{1000, 8, 1000}, Stage::kSkinny}, RuleCase{{8, 1000, 1000}, Stage::kSkinny},
        RuleCase{{16, 4096, 4096}, Stage::kSkinny},
        // Skinny but too few tiles to fill a quarter of the SMs: split-K instead.
        RuleCase{{8, 8, 100000}, Stage::kSplitK}, RuleCase{{17, 4096, 4096}, Stage::kSplitK},
        // Nothing to compute.
        RuleCase{{0, 5, 5}, Stage::kDoubleBuffer}, RuleCase{{5, 5, 0}, Stage::kDoubleBuffer}),
    [](const auto& info) { return ShapeName(info.param.shape); });

struct PlanCase {
  Shape shape;
  int tile_m, tile_n, splits;
};

void PrintTo(const PlanCase& c, std::ostream* os) { *os << ShapeName(c.shape); }

class Ch04Plan : public ::testing::TestWithParam<PlanCase> {};

TEST_P(Ch04Plan, FillsTheSmsAndCoversK) {
  const PlanCase& c = GetParam();
  const Shape& s = c.shape;
  const optimized::SplitPlan plan = optimized::PlanSplitK(s.m, s.n, s.k, kH200Sms);
  EXPECT_EQ(plan.tile_m, c.tile_m);
  EXPECT_EQ(plan.tile_n, c.tile_n);
  EXPECT_EQ(plan.splits, c.splits);
  // Every split is non-empty, starts at a multiple of 8, and together they cover K once.
  EXPECT_EQ(plan.k_chunk % 8, 0);
  EXPECT_GE(static_cast<long long>(plan.splits) * plan.k_chunk, s.k);
  EXPECT_LT(static_cast<long long>(plan.splits - 1) * plan.k_chunk, s.k);
  // A workspace for fewer splits caps the plan.
  for (int cap : {1, 2, 3}) {
    EXPECT_LE(optimized::PlanSplitK(s.m, s.n, s.k, kH200Sms, cap).splits, cap);
  }
}

INSTANTIATE_TEST_SUITE_P(H200, Ch04Plan,
                         ::testing::Values(PlanCase{{1024, 1024, 1024}, 128, 128, 4},
                                           PlanCase{{1023, 1021, 1027}, 128, 128, 4},
                                           PlanCase{{64, 4096, 4096}, 64, 128, 16},
                                           PlanCase{{4096, 64, 4096}, 128, 64, 16},
                                           PlanCase{{127, 129, 4099}, 128, 64, 129},
                                           PlanCase{{4096, 4096, 4096}, 128, 128, 1},
                                           PlanCase{{2048, 2048, 2048}, 128, 128, 1}),
                         [](const auto& info) { return ShapeName(info.param.shape); });

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

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

std::string Pascal(std::string name) {
  name[0] = static_cast<char>(name[0] - 'a' + 'A');
  return name;
}

std::vector<Variant> FloatVariants() {
  std::vector<Variant> v = {{"Naive", 0, optimized::Stage::kTiled16}};
  for (const auto& info : optimized::AllStages()) v.push_back({Pascal(info.name), 1, info.stage});
  v.push_back({"Best", 1, optimized::Stage::kBest});
  v.push_back({"Cublas", 2, optimized::Stage::kTiled16});
  return v;
}

std::vector<Variant> IntVariants() {
  return {{"Naive", 0, optimized::Stage::kTiled16},
          {"Tiled16", 1, optimized::Stage::kTiled16},
          {"Best", 1, optimized::Stage::kBest}};
}

library::Cublas& SharedCublas() {
  static library::Cublas handle;  // created on first use, by a test that has a GPU
  return handle;
}

/// Runs @p v; optimized stages get the workspace WorkspaceBytes asks for.
template <typename T>
void Launch(const Variant& v, const T* a, const T* b, T* c, const Shape& s) {
  if (v.kind == 0) {
    naive::Matmul(a, b, c, s.m, s.n, s.k, nullptr);
  } else if (v.kind == 1) {
    staged::DeviceBuffer<float> ws;
    if constexpr (std::is_same_v<T, float>) {
      ws = staged::DeviceBuffer<float>(optimized::WorkspaceBytes(s.m, s.n, s.k, v.stage) /
                                       sizeof(float));
    }
    optimized::Matmul(a, b, c, s.m, s.n, s.k, v.stage, nullptr, {ws.data(), ws.bytes()});
    CUDA_CHECK(cudaDeviceSynchronize());  // before the workspace is freed
  } else if constexpr (std::is_same_v<T, float>) {
    SharedCublas().Matmul(a, b, c, s.m, s.n, s.k, nullptr);
  }
}

/// Poisons C (all bits set: NaN for float, −1 for int), runs @p v and returns C.
template <typename T>
std::vector<T> RunPoisoned(const Variant& v, const staged::DeviceBuffer<T>& a,
                           const staged::DeviceBuffer<T>& b, const Shape& s) {
  staged::DeviceBuffer<T> c(Elements(s.m, s.n));
  c.FillBytes(0xFF);
  Launch<T>(v, a.data(), b.data(), c.data(), s);
  CUDA_CHECK(cudaDeviceSynchronize());
  return c.ToHost();
}

/// Checks @p v on shape @p s against the CPU reference (inputs from CpuReference).
void ExpectMatchesCpu(const Variant& v, const Shape& s) {
  const Reference& r = CpuReference(s);
  staged::DeviceBuffer<float> a(r.a), b(r.b);
  const std::vector<float> out = RunPoisoned(v, a, b, s);
  const staged::VerifyReport rep =
      CompareProduct(r.c.data(), out.data(), r.abs_product.data(), out.size(), s.k);
  EXPECT_TRUE(rep.ok) << v.name << " " << ShapeName(s) << " seed " << kTestSeed << ": "
                      << rep.Summary();
}

/// Shapes that reach every edge of every kernel: sides 1, 7-9 (the skinny tile), 63-65,
/// 127-129 (the 64- and 128-wide tiles ± 1), primes, K % 8 != 0, K % 4 == 0 with N % 4 != 0 and
/// the reverse (one operand on the 16-byte path), whole tiles (no bounds checks), long K.
const std::vector<Shape> kShapes = {
    {1, 1, 1},       {7, 9, 8},        {9, 7, 9},        {17, 33, 9},     {64, 64, 64},
    {63, 65, 127},   {65, 63, 129},    {127, 127, 127},  {128, 128, 128}, {129, 129, 129},
    {1000, 1, 1000}, {1, 1000, 1000},  {513, 257, 1025}, {100, 64, 30},   {96, 100, 36},
    {256, 384, 24},  {127, 129, 4099}, {8, 1000, 1000},  {1000, 8, 1000}, {64, 300, 2048},
    {300, 64, 2048}, {256, 256, 1024},
};

std::string ParamName(const std::tuple<Variant, Shape>& p) {
  return std::get<0>(p).name + "_" + ShapeName(std::get<1>(p));
}

class Ch04Float : public staged::testing::GpuTestWithParam<std::tuple<Variant, Shape>> {};

TEST_P(Ch04Float, MatchesCpu) {
  const auto& [v, s] = GetParam();
  ExpectMatchesCpu(v, s);
}

INSTANTIATE_TEST_SUITE_P(All, Ch04Float,
                         ::testing::Combine(::testing::ValuesIn(FloatVariants()),
                                            ::testing::ValuesIn(kShapes)),
                         [](const auto& info) { return ParamName(info.param); });

class Ch04NaN : public staged::testing::GpuTestWithParam<std::tuple<Variant, Shape>> {};

TEST_P(Ch04NaN, NaNAndInfinityPropagate) {
  const auto& [v, s] = GetParam();
  std::vector<float> h_a = FloatInput(Elements(s.m, s.k), kTestSeed);
  std::vector<float> h_b = FloatInput(Elements(s.k, s.n), kTestSeed + 1);
  const int row = s.m / 2, col = s.n - 1, p = s.k - 1;
  h_a[Elements(row, s.k) + p / 2] = kNaN;  // row `row` of C must be NaN
  h_b[Elements(p, s.n) + col] = kInf;      // column `col`: ±inf (or NaN)
  std::vector<float> ref(Elements(s.m, s.n)), abs_product(ref.size());
  cpu::Matmul(h_a.data(), h_b.data(), ref.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(h_a.data(), h_b.data(), abs_product.data(), s.m, s.n, s.k);
  staged::DeviceBuffer<float> a(h_a), b(h_b);
  const std::vector<float> out = RunPoisoned(v, a, b, s);
  const staged::VerifyReport rep =
      CompareProduct(ref.data(), out.data(), abs_product.data(), ref.size(), s.k);
  EXPECT_TRUE(rep.ok) << v.name << " " << ShapeName(s) << ": " << rep.Summary();
  for (int j = 0; j < s.n; ++j) {
    EXPECT_TRUE(std::isnan(out[Elements(row, s.n) + j])) << "column " << j;
  }
}

INSTANTIATE_TEST_SUITE_P(
    All, Ch04NaN,
    ::testing::Combine(::testing::ValuesIn(FloatVariants()),
                       ::testing::Values(Shape{129, 67, 95}, Shape{256, 256, 256},
                                         Shape{8, 300, 700}, Shape{300, 8, 700})),
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
  const auto h_a = input(Elements(s.m, s.k), kTestSeed);
  const auto h_b = input(Elements(s.k, s.n), kTestSeed + 1);
  std::vector<std::int32_t> ref(Elements(s.m, s.n));
  cpu::Matmul(h_a.data(), h_b.data(), ref.data(), s.m, s.n, s.k);
  staged::DeviceBuffer<std::int32_t> a(h_a), b(h_b);
  const auto out = RunPoisoned(v, a, b, s);
  const staged::VerifyReport r = staged::CompareExact(ref.data(), out.data(), ref.size());
  EXPECT_TRUE(r.ok) << v.name << " " << ShapeName(s) << " seed " << kTestSeed << ": "
                    << r.Summary();
}

INSTANTIATE_TEST_SUITE_P(
    All, Ch04Int,
    ::testing::Combine(::testing::ValuesIn(IntVariants()),
                       ::testing::Values(Shape{1, 1, 1}, Shape{17, 33, 9}, Shape{64, 64, 64},
                                         Shape{127, 127, 127}, Shape{128, 128, 128},
                                         Shape{129, 129, 129}, Shape{1000, 1, 1000},
                                         Shape{513, 257, 1025}, Shape{1024, 1024, 64})),
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
  const std::vector<float> h_a = FloatInput(Elements(s.m, s.k) + 1, kTestSeed);
  const std::vector<float> h_b = FloatInput(Elements(s.k, s.n) + 1, kTestSeed + 1);
  std::vector<float> ref(Elements(s.m, s.n)), abs_product(ref.size());
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

INSTANTIATE_TEST_SUITE_P(All, Ch04Edges, ::testing::ValuesIn(FloatVariants()),
                         [](const auto& info) { return info.param.name; });

/// Split-K with a workspace for exactly `slices` partial products (0: none at all).
struct SplitCase {
  Shape shape;
  int slices;
};

void PrintTo(const SplitCase& c, std::ostream* os) {
  *os << ShapeName(c.shape) << " with " << c.slices << " slices";
}

class Ch04SplitK : public staged::testing::GpuTestWithParam<SplitCase> {};

TEST_P(Ch04SplitK, AnyWorkspaceGivesTheProduct) {
  // A smaller workspace caps the splits (none without one): K ranges of every length, last
  // ranges shorter than the rest, single-tile ranges, odd K on the scalar path.
  const SplitCase& c = GetParam();
  const Shape& s = c.shape;
  const Reference& r = CpuReference(s);
  staged::DeviceBuffer<float> a(r.a), b(r.b), out(Elements(s.m, s.n));
  const std::size_t slice = Elements(s.m, (s.n + 3) / 4 * 4);
  staged::DeviceBuffer<float> ws(c.slices * slice);
  out.FillBytes(0xFF);
  optimized::Matmul(a.data(), b.data(), out.data(), s.m, s.n, s.k, optimized::Stage::kSplitK,
                    nullptr, {ws.data(), ws.bytes()});
  const std::vector<float> host = out.ToHost();
  const staged::VerifyReport rep =
      CompareProduct(r.c.data(), host.data(), r.abs_product.data(), host.size(), s.k);
  EXPECT_TRUE(rep.ok) << ShapeName(s) << " with " << c.slices << " slices: " << rep.Summary();
}

INSTANTIATE_TEST_SUITE_P(
    Caps, Ch04SplitK,
    ::testing::Values(SplitCase{{64, 64, 1000}, 0}, SplitCase{{64, 64, 1000}, 1},
                      SplitCase{{64, 64, 1000}, 2}, SplitCase{{64, 64, 1000}, 3},
                      SplitCase{{64, 64, 1000}, 7}, SplitCase{{64, 64, 1000}, 125},
                      SplitCase{{65, 63, 1001}, 5}, SplitCase{{65, 63, 1001}, 200},
                      SplitCase{{128, 128, 9}, 2}, SplitCase{{130, 130, 17}, 3},
                      // The 64-wide tiles whole, 16 splits (the plan of 64×4096×4096).
                      SplitCase{{64, 512, 2048}, 16}, SplitCase{{256, 64, 2048}, 16}),
    [](const auto& info) {
      return ShapeName(info.param.shape) + "_" + std::to_string(info.param.slices);
    });

class Ch04Workspace : public staged::testing::GpuTest {};

TEST_F(Ch04Workspace, OnlySplitKNeedsOneAndItMustBeAligned) {
  EXPECT_GT(optimized::WorkspaceBytes(1024, 1024, 1024, optimized::Stage::kSplitK), 0u);
  EXPECT_GT(optimized::WorkspaceBytes(127, 129, 4099), 0u);  // best = split-K here
  EXPECT_EQ(optimized::WorkspaceBytes(4096, 4096, 4096), 0u);
  EXPECT_EQ(optimized::WorkspaceBytes(1024, 1024, 1024, optimized::Stage::kDoubleBuffer), 0u);
  EXPECT_EQ(optimized::WorkspaceBytes(1024, 1024, 0, optimized::Stage::kSplitK), 0u);
  staged::DeviceBuffer<float> a(64 * 64), b(64 * 64), c(64 * 64), ws(4096);
  EXPECT_THROW(optimized::Matmul(a.data(), b.data(), c.data(), 64, 64, 64,
                                 optimized::Stage::kSplitK, nullptr, {ws.data() + 1, 1024}),
               std::invalid_argument);
}

class Ch04Residency : public staged::testing::GpuTest {};

TEST_F(Ch04Residency, SplitKTilesHoldTheWarpsThePlanAssumes) {
  // PlanSplitK's model assumes kSplitKWarpsPerSm warps per SM for every tile; the kernels'
  // __launch_bounds__ must make that true (a register or shared-memory change can break it).
  for (const auto& [tile_m, tile_n] : {std::pair{128, 128}, {128, 64}, {64, 128}, {64, 64}}) {
    const int warps = tile_m * tile_n / 64 / 32;
    EXPECT_EQ(optimized::ResidentTileBlocks(tile_m, tile_n), optimized::kSplitKWarpsPerSm / warps)
        << tile_m << "x" << tile_n;
  }
  EXPECT_THROW(optimized::ResidentTileBlocks(32, 128), std::invalid_argument);
}

class Ch04IntStages : public staged::testing::GpuTest {};

TEST_F(Ch04IntStages, FloatOnlyStagesRefuseInt) {
  staged::DeviceBuffer<std::int32_t> a(4), b(4), c(4);
  EXPECT_THROW(optimized::Matmul(a.data(), b.data(), c.data(), 2, 2, 2, optimized::Stage::kWarpTile,
                                 nullptr),
               staged::UsageError);
}

// -------------------------------------------------------------------------------------------
// The mutation check at the benchmark's sizes.

/// Every float shape `bench.args` runs (the host test below keeps the two lists equal).
const std::vector<Shape> kBenchShapes = {
    {256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048},
    {4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 4096, 512},  {8192, 1024, 8192},
    {1023, 1021, 1027}, {1000, 8, 1000},    {8, 1000, 1000},    {64, 4096, 4096},
    {4096, 64, 4096},   {127, 129, 4099},   {4096, 4096, 64},
};

/// The shapes the chapter's performance targets name (M×N×K).
const std::vector<Shape> kTargetShapes = {
    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
    {4096, 4096, 512},  {8192, 1024, 8192}, {1023, 1021, 1027}, {1000, 8, 1000},
    {8, 1000, 1000},    {64, 4096, 4096},   {4096, 64, 4096},   {127, 129, 4099},
    {4096, 4096, 64},
};

/// The float shapes of the lines of bench.args (`--m`, `--n`, `--k`; M and K default to N).
std::vector<Shape> BenchArgsShapes() {
  std::ifstream in(CH04_BENCH_ARGS);
  EXPECT_TRUE(in.good()) << "cannot read " << CH04_BENCH_ARGS;
  std::vector<Shape> shapes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string word;
    int m = 0, n = 0, k = 0;
    bool is_int = false;
    while (words >> word) {
      if (word == "--m") words >> m;
      if (word == "--n") words >> n;
      if (word == "--k") words >> k;
      if (word == "--type") {
        words >> word;
        is_int = word == "int32";
      }
    }
    if (!is_int && n > 0) shapes.push_back({m == 0 ? n : m, n, k == 0 ? n : k});
  }
  return shapes;
}

TEST(Ch04Bench, MutationShapesAreTheBenchmarkShapes) {
  const std::vector<Shape> bench = BenchArgsShapes();
  for (const Shape& s : bench) {
    EXPECT_NE(std::find(kBenchShapes.begin(), kBenchShapes.end(), s), kBenchShapes.end())
        << ShapeName(s) << " is benchmarked but not mutation-checked";
  }
  for (const Shape& s : kBenchShapes) {
    EXPECT_NE(std::find(bench.begin(), bench.end(), s), bench.end())
        << ShapeName(s) << " is mutation-checked but no longer benchmarked";
  }
  for (const Shape& s : kTargetShapes) {
    EXPECT_NE(std::find(bench.begin(), bench.end(), s), bench.end())
        << "target shape " << ShapeName(s) << " is not benchmarked";
  }
}

class Ch04Mutation : public staged::testing::GpuTestWithParam<Shape> {};

TEST_P(Ch04Mutation, CheckerRejectsEachFault) {
  // The reference as the executable builds it (the CPU up to 512^3, cuBLAS above), the
  // candidate from the default kernel; the clean candidate must pass, every fault must fail.
  const Shape s = GetParam();
  std::vector<float> h_a = FloatInput(Elements(s.m, s.k), kTestSeed);
  std::vector<float> h_b = FloatInput(Elements(s.k, s.n), kTestSeed + 1);
  staged::DeviceBuffer<float> a(h_a), b(h_b);
  std::vector<float> ref, abs_product;
  if (Volume(s) <= kCpuReferenceLimit) {
    const Reference& r = CpuReference(s);
    ref = r.c;
    abs_product = r.abs_product;
  } else {
    SharedCublas().Reference(a.data(), b.data(), s.m, s.n, s.k, &ref, &abs_product);
  }
  const Variant best{"Best", 1, optimized::Stage::kBest};
  const std::vector<float> out = RunPoisoned(best, a, b, s);
  const staged::VerifyReport clean =
      CompareProduct(ref.data(), out.data(), abs_product.data(), out.size(), s.k);
  ASSERT_TRUE(clean.ok) << ShapeName(s) << ": " << clean.Summary();
  for (Fault f : kAllFaults) {
    if (!Applies(f, s)) continue;
    const std::vector<float> bad = Inject(f, out, h_a, h_b, s);
    EXPECT_FALSE(CompareProduct(ref.data(), bad.data(), abs_product.data(), bad.size(), s.k).ok)
        << ShapeName(s) << ": " << FaultName(f) << " was not caught";
  }
}

INSTANTIATE_TEST_SUITE_P(Bench, Ch04Mutation, ::testing::ValuesIn(kBenchShapes),
                         [](const auto& info) { return ShapeName(info.param); });

}  // namespace
}  // namespace ch04
