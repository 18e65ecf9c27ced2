/// @file ch04_matmul_global_vs_shared_host_test.cu
/// @brief Chapter 04 host tests (no GPU needed): the CPU reference, the error bound (a float
///        product that must pass it and injected faults that must not), the stage table, the
///        shape rule and the split-K plan on an H200's 132 SMs, the dimension checks, and the
///        benchmark's shapes against the mutation check's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "ch04_shapes.hpp"
#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/device_limits.hpp"
#include "common/errors.hpp"

namespace ch04 {
namespace {

using namespace ch04::testing;  // NOLINT: the shared shapes, reference and faults

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
  EXPECT_EQ(optimized::ParseStage("streamk"), optimized::Stage::kStreamK);
}

// The shape rule, class by class, on an H200 (its profile: 132 SMs, 2 blocks of the 128×128
// kernels per SM, 16 warps of each split-K tile).
const optimized::Residency& H200() {
  static const optimized::Residency r = optimized::ModelResidency(staged::DeviceProfile("h200"));
  return r;
}

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
  EXPECT_EQ(optimized::Info(optimized::ChooseStage(c.shape.m, c.shape.n, c.shape.k, H200())).name,
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
        // Whole tiles, K of at least kStreamKMinK, a last wave at most 9/10 full: stream-K.
        RuleCase{{4096, 4096, 4096}, Stage::kStreamK},
        RuleCase{{8192, 8192, 8192}, Stage::kStreamK},
        RuleCase{{1536, 1536, 2048}, Stage::kStreamK},
        RuleCase{{4096, 4096, 1024}, Stage::kStreamK},
        // Enough 128×128 tiles for every SM, K longer than kShortK, and no partial wave to
        // share out (a last wave over 9/10 full, K too short, or tiles that are not whole):
        // the large-shape stage.
        RuleCase{{2048, 2048, 2048}, kLarge}, RuleCase{{4096, 4096, 512}, kLarge},
        RuleCase{{4096, 4096, 1008}, kLarge}, RuleCase{{4096, 4224, 4096}, kLarge},
        RuleCase{{4096, 4096, 4104}, kLarge}, RuleCase{{8192, 1024, 8192}, kLarge},
        RuleCase{{4097, 4095, 4093}, kLarge}, RuleCase{{1024, 2176, 65}, kLarge},
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
  const optimized::SplitPlan plan = optimized::PlanSplitK(s.m, s.n, s.k, H200());
  EXPECT_EQ(plan.tile_m, c.tile_m);
  EXPECT_EQ(plan.tile_n, c.tile_n);
  EXPECT_EQ(plan.splits, c.splits);
  // Every split is non-empty, starts at a multiple of 8, and together they cover K once.
  EXPECT_EQ(plan.k_chunk % 8, 0);
  EXPECT_GE(static_cast<long long>(plan.splits) * plan.k_chunk, s.k);
  EXPECT_LT(static_cast<long long>(plan.splits - 1) * plan.k_chunk, s.k);
  // A workspace for fewer splits caps the plan.
  for (int cap : {1, 2, 3}) {
    EXPECT_LE(optimized::PlanSplitK(s.m, s.n, s.k, H200(), cap).splits, cap);
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

// Stage 8's plan on 132 SMs: how many tiles stage 4 computes whole, how the rest is shared.
struct StreamKCase {
  Shape shape;
  int dp_tiles, sk_tiles, blocks, steps_per_block;
};

void PrintTo(const StreamKCase& c, std::ostream* os) { *os << ShapeName(c.shape); }

/// A stream-K plan on 132 SMs that splits: stage 4 takes whole waves; the blocks are one wave
/// at most, each with fewer k-steps than a tile has (so at most two pieces), and together they
/// cover the stream-K tiles' k-steps once.
void ExpectSharesEvenly(const optimized::StreamKPlan& plan, const Shape& s) {
  const long long slots = static_cast<long long>(H200().sms) * H200().tile128x128;
  const long long steps = static_cast<long long>(plan.sk_tiles) * (s.k / optimized::kStreamKDepth);
  EXPECT_EQ(plan.dp_tiles % slots, 0) << ShapeName(s);
  EXPECT_EQ(plan.dp_tiles + plan.sk_tiles, (s.m / 128LL) * (s.n / 128)) << ShapeName(s);
  EXPECT_LE(plan.blocks, slots) << ShapeName(s);
  EXPECT_LE(plan.steps_per_block, s.k / optimized::kStreamKDepth) << ShapeName(s);
  EXPECT_GE(static_cast<long long>(plan.blocks) * plan.steps_per_block, steps) << ShapeName(s);
  EXPECT_LT(static_cast<long long>(plan.blocks - 1) * plan.steps_per_block, steps) << ShapeName(s);
}

class Ch04StreamKPlan : public ::testing::TestWithParam<StreamKCase> {};

TEST_P(Ch04StreamKPlan, SharesTheLastWaveEvenly) {
  const StreamKCase& c = GetParam();
  const Shape& s = c.shape;
  const optimized::StreamKPlan plan = optimized::PlanStreamK(s.m, s.n, s.k, H200());
  EXPECT_EQ(plan.dp_tiles, c.dp_tiles);
  EXPECT_EQ(plan.sk_tiles, c.sk_tiles);
  EXPECT_EQ(plan.blocks, c.blocks);
  EXPECT_EQ(plan.steps_per_block, c.steps_per_block);
  if (plan.sk_tiles > 0) ExpectSharesEvenly(plan, s);
}

INSTANTIATE_TEST_SUITE_P(
    H200, Ch04StreamKPlan,
    ::testing::Values(
        // 3.88 waves: 792 tiles whole, 232 × 256 k-steps over 264 blocks.
        StreamKCase{{4096, 4096, 4096}, 792, 232, 264, 225},
        // 15.5 waves: 3960 whole, 136 × 512 k-steps over 264 blocks.
        StreamKCase{{8192, 8192, 8192}, 3960, 136, 264, 264},
        // Less than one wave (144 tiles): every tile shared, 144 × 128 k-steps.
        StreamKCase{{1536, 1536, 2048}, 0, 144, 264, 70},
        // One piece per block when the blocks outnumber the k-steps (3 tiles × 8).
        StreamKCase{{128, 128 * 267, 128}, 264, 3, 24, 1},
        // No split: a last wave over 9/10 full (256 of 264, 248 of 264), whole waves (528),
        // tiles or k-steps that are not whole, nothing to multiply.
        StreamKCase{{2048, 2048, 2048}, 0, 0, 0, 0}, StreamKCase{{8192, 1024, 8192}, 0, 0, 0, 0},
        StreamKCase{{128 * 24, 128 * 22, 4096}, 0, 0, 0, 0},
        StreamKCase{{4096, 4224 - 1, 4096}, 0, 0, 0, 0},
        StreamKCase{{4096, 4096, 4104}, 0, 0, 0, 0}, StreamKCase{{0, 4096, 4096}, 0, 0, 0, 0},
        StreamKCase{{4096, 4096, 0}, 0, 0, 0, 0}),
    [](const auto& info) { return ShapeName(info.param.shape); });

TEST(Ch04StreamKPlan, EveryWaveCountSplitsAsTheRuleSays) {
  // Across 0 .. 4 waves of tiles and several K: the plan splits exactly when the last wave is
  // non-empty and at most 9/10 full, and its blocks then cover the k-steps as stated.
  for (int tiles_n = 1; tiles_n <= 1100; tiles_n += 7) {
    for (int k : {16, 48, 1024, 4112}) {
      const optimized::StreamKPlan plan = optimized::PlanStreamK(128, 128 * tiles_n, k, H200());
      const int slots = H200().sms * H200().tile128x128;
      const int last_wave = tiles_n % slots;
      const bool split = last_wave > 0 && 10 * last_wave <= 9 * slots;
      ASSERT_EQ(plan.sk_tiles > 0, split) << tiles_n << " tiles, K " << k;
      if (!split) continue;
      EXPECT_EQ(plan.sk_tiles, last_wave);
      ExpectSharesEvenly(plan, {128, 128 * tiles_n, k});
    }
  }
}

// ---------------------------------------------------------------- architecture limits

TEST(ArchitectureLimits, EveryProfileHoldsEveryKernelThePlansUse) {
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    const optimized::Residency r = optimized::ModelResidency(limits);
    EXPECT_EQ(r.sms, limits.sm_count);
    for (const auto& [tile_m, tile_n] : {std::pair{128, 128}, {128, 64}, {64, 128}, {64, 64}}) {
      EXPECT_GE(r.Tile(tile_m, tile_n), 1) << limits.name << " " << tile_m << "x" << tile_n;
    }
    EXPECT_GE(r.streamk, 1) << limits.name;
  }
  // The H200's two 128×128 blocks and 16 warps of every split-K tile per SM; a T4's 64 KiB SM
  // holds one stream-K block (33 KiB) and three 128×64 pipeline blocks.
  EXPECT_EQ(H200().tile128x128, 2);
  EXPECT_EQ(H200().streamk, 2);
  EXPECT_EQ(H200().tile128x64, 4);
  EXPECT_EQ(H200().tile64x64, 8);
  const optimized::Residency t4 = optimized::ModelResidency(staged::DeviceProfile("t4"));
  EXPECT_EQ(t4.sms, 40);
  EXPECT_EQ(t4.streamk, 1);
  EXPECT_EQ(t4.tile128x128, 2);
  EXPECT_EQ(t4.tile128x64, 3);
}

TEST(ArchitectureLimits, EveryProfilesPlansStayWithinItsWaves) {
  // On every profile, for every shape of the benchmark and the rule's table: stream-K's blocks
  // are at most one wave of its kernel and span at most two tiles; split-K's splits cover K.
  const std::vector<Shape> shapes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {1536, 1536, 2048},
                                     {4096, 4096, 1024}, {2048, 2048, 2048}, {1024, 1024, 1024},
                                     {64, 4096, 4096},   {4096, 64, 4096},   {127, 129, 4099},
                                     {1000, 8, 1000},    {8192, 1024, 8192}, {128, 34176, 128}};
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    const optimized::Residency r = optimized::ModelResidency(limits);
    for (const Shape& s : shapes) {
      SCOPED_TRACE(limits.name + " " + ShapeName(s));
      const optimized::StreamKPlan sk = optimized::PlanStreamK(s.m, s.n, s.k, r);
      if (sk.sk_tiles > 0) {
        EXPECT_LE(sk.blocks, r.sms * r.streamk);
        EXPECT_LE(sk.steps_per_block, s.k / optimized::kStreamKDepth);
        EXPECT_EQ(sk.dp_tiles % (r.sms * r.tile128x128), 0);
      }
      const optimized::SplitPlan plan = optimized::PlanSplitK(s.m, s.n, s.k, r);
      EXPECT_GE(static_cast<long long>(plan.splits) * plan.k_chunk, s.k);
      EXPECT_GE(r.Tile(plan.tile_m, plan.tile_n), 1);
      (void)optimized::ChooseStage(s.m, s.n, s.k, r);
    }
  }
  // A T4 holds one stream-K block per SM: 40 blocks cannot share the last wave of 4096³ (64 of
  // its 80 slots) without spanning three tiles, so stage 4 runs it alone.
  const optimized::Residency t4 = optimized::ModelResidency(staged::DeviceProfile("t4"));
  EXPECT_EQ(optimized::PlanStreamK(4096, 4096, 4096, t4).sk_tiles, 0);
}

TEST(Ch04Stages, DimensionsAreChecked) {
  EXPECT_NO_THROW(CheckDimensions(0, 0, 0));
  EXPECT_NO_THROW(CheckDimensions(kMaxDimension, 1, 1));
  EXPECT_THROW(CheckDimensions(-1, 1, 1), staged::UsageError);
  EXPECT_THROW(CheckDimensions(1, kMaxDimension + 1, 1), staged::UsageError);
  EXPECT_THROW(CheckDimensions(1, 1, -5), staged::UsageError);
}

// -------------------------------------------------------------------------------------------
// The benchmark's shapes: the mutation check (GPU tests) covers exactly them.

/// The shapes the chapter's performance targets name (M×N×K).
const std::vector<Shape> kTargetShapes = {
    {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192},
    {4096, 4096, 512},  {8192, 1024, 8192}, {1023, 1021, 1027}, {1000, 8, 1000},
    {8, 1000, 1000},    {64, 4096, 4096},   {4096, 64, 4096},   {127, 129, 4099},
    {4096, 4096, 64},
};

/// The shapes of the lines of bench.args (`--m`, `--n`, `--k`; M and K default to N) whose
/// `--type` is @p want (float when the line names none).
std::vector<Shape> BenchArgsShapes(const std::string& want = "float") {
  std::ifstream in(CH04_BENCH_ARGS);
  EXPECT_TRUE(in.good()) << "cannot read " << CH04_BENCH_ARGS;
  std::vector<Shape> shapes;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream words(line);
    std::string word;
    int m = 0, n = 0, k = 0;
    std::string type = "float";
    while (words >> word) {
      if (word == "--m") words >> m;
      if (word == "--n") words >> n;
      if (word == "--k") words >> k;
      if (word == "--type") words >> type;
    }
    if (type == want && n > 0) shapes.push_back({m == 0 ? n : m, n, k == 0 ? n : k});
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
  // The tensor-core lines: each precision runs exactly the tensor mutation check's shapes.
  for (const std::string type : {"tf32", "bf16", "fp16"}) {
    std::vector<Shape> tensor = BenchArgsShapes(type);
    std::vector<Shape> want = kTensorBenchShapes;
    std::sort(tensor.begin(), tensor.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(tensor, want) << "--type " << type << " lines of bench.args";
  }
}

}  // namespace
}  // namespace ch04
