/// @file ch04_matmul_global_vs_shared_test.cu
/// @brief Chapter 04 GPU tests: every kernel against the double-precision CPU reference over
///        square, rectangular, unaligned and empty shapes, exact int32 products, NaN/inf
///        propagation, and the mutation check: at every shape the benchmark measures, the
///        checker the executable uses accepts the default kernel's product and rejects it with
///        a dropped k-tile, row or column or a transposed tile. The host tests are in
///        ch04_matmul_global_vs_shared_host_test.cu.
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
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "ch04_shapes.hpp"
#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "common/resident_grid.hpp"
#include "common/stream.hpp"
#include "gpu_test.hpp"

namespace ch04 {
namespace {

using namespace ch04::testing;  // NOLINT: the shared shapes, reference and faults

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

/// Compares the M×N product @p out of shape @p s with the CPU reference @p r.
staged::VerifyReport AgainstCpu(const Reference& r, const float* out, const Shape& s) {
  return CompareProduct(r.c.data(), out, r.abs_product.data(), r.c.size(), s.k);
}

/// Checks @p v on shape @p s against the CPU reference (inputs from CpuReference).
void ExpectMatchesCpu(const Variant& v, const Shape& s) {
  const Reference& r = CpuReference(s);
  staged::DeviceBuffer<float> a(r.a), b(r.b);
  const std::vector<float> out = RunPoisoned(v, a, b, s);
  const staged::VerifyReport rep = AgainstCpu(r, out.data(), s);
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
  const staged::VerifyReport rep = AgainstCpu(r, host.data(), s);
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

/// Block slots of one wave of stage 4's 128×128 blocks on the current device (as planned).
int StreamKSlots() {
  const optimized::Residency r = optimized::DeviceResidency();
  return r.sms * r.tile128x128;
}

class Ch04Workspace : public staged::testing::GpuTest {};

TEST_F(Ch04Workspace, OnlySplittingStagesNeedOneAndItMustBeAligned) {
  EXPECT_GT(optimized::WorkspaceBytes(1024, 1024, 1024, optimized::Stage::kSplitK), 0u);
  EXPECT_GT(optimized::WorkspaceBytes(127, 129, 4099), 0u);  // best = split-K here
  // Best = stream-K at 4096³ when the tiles leave a partial last wave on this device.
  EXPECT_EQ(optimized::WorkspaceBytes(4096, 4096, 4096) > 0,
            optimized::PlanStreamK(4096, 4096, 4096, optimized::DeviceResidency()).sk_tiles > 0);
  EXPECT_EQ(optimized::WorkspaceBytes(4096, 4096, 4104), 0u);  // K % 16 != 0: stage 4
  EXPECT_EQ(optimized::WorkspaceBytes(1024, 1024, 1024, optimized::Stage::kDoubleBuffer), 0u);
  EXPECT_EQ(optimized::WorkspaceBytes(1024, 1024, 0, optimized::Stage::kSplitK), 0u);
  staged::DeviceBuffer<float> a(64 * 64), b(64 * 64), c(64 * 64), ws(4096);
  EXPECT_THROW(optimized::Matmul(a.data(), b.data(), c.data(), 64, 64, 64,
                                 optimized::Stage::kSplitK, nullptr, {ws.data() + 1, 1024}),
               staged::UsageError);
}

// -------------------------------------------------------------------------------------------
// Stage 8 on shapes whose last wave this device's stream-K blocks share (built from its SM
// count, so every case splits wherever it runs: the tests assert the plan first).

/// A stream-K case: tile rows × tile columns from the slot count, and K.
struct StreamKCase {
  const char* name;
  int (*tile_rows)(int slots);
  int (*tile_cols)(int slots);
  int k;
};

void PrintTo(const StreamKCase& c, std::ostream* os) { *os << c.name; }

Shape StreamKShape(const StreamKCase& c) {
  const int slots = StreamKSlots();
  return {128 * c.tile_rows(slots), 128 * c.tile_cols(slots), c.k};
}

/// Runs stage 8 on @p s with the first @p ws_bytes of @p ws as its workspace and returns C. C
/// and the whole workspace are poisoned first (C with NaN, the workspace with @p poison bytes:
/// 0xFF makes every partial sum NaN), so a fixup that reads a slot before (or without) its
/// piece's store cannot pass on what an earlier call left there.
std::vector<float> RunStreamK(const staged::DeviceBuffer<float>& a, const float* b, const Shape& s,
                              staged::DeviceBuffer<float>& ws, std::size_t ws_bytes,
                              int poison = 0xFF) {
  staged::DeviceBuffer<float> c(Elements(s.m, s.n));
  c.FillBytes(0xFF);
  if (!ws.empty()) ws.FillBytes(poison);
  optimized::Matmul(a.data(), b, c.data(), s.m, s.n, s.k, optimized::Stage::kStreamK, nullptr,
                    {ws.data(), ws_bytes});
  CUDA_CHECK(cudaDeviceSynchronize());
  return c.ToHost();
}

/// Floats of a workspace of @p bytes (at least one, so that it has an address).
std::size_t WorkspaceFloats(std::size_t bytes) {
  return (bytes + sizeof(float) - 1) / sizeof(float) + 1;
}

/// A second B for shape @p s (another seed) and the reference of A·B with it.
Reference SecondInput(const Shape& s) {
  Reference r;
  r.a = CpuReference(s).a;
  r.b = FloatInput(Elements(s.k, s.n), kTestSeed + 2);
  r.c.resize(Elements(s.m, s.n));
  r.abs_product.resize(r.c.size());
  cpu::Matmul(r.a.data(), r.b.data(), r.c.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(r.a.data(), r.b.data(), r.abs_product.data(), s.m, s.n, s.k);
  return r;
}

class Ch04StreamK : public staged::testing::GpuTestWithParam<StreamKCase> {};

TEST_P(Ch04StreamK, SplitsAndMatchesCpu) {
  const Shape s = StreamKShape(GetParam());
  const optimized::StreamKPlan plan =
      optimized::PlanStreamK(s.m, s.n, s.k, optimized::DeviceResidency());
  ASSERT_GT(plan.sk_tiles, 0) << ShapeName(s) << ": the case must split on this device";
  const Reference& r = CpuReference(s);
  staged::DeviceBuffer<float> a(r.a), b(r.b);
  const std::size_t bytes = optimized::WorkspaceBytes(s.m, s.n, s.k, optimized::Stage::kStreamK);
  ASSERT_GT(bytes, 0u);
  staged::DeviceBuffer<float> ws(WorkspaceFloats(bytes));
  const std::vector<float> out = RunStreamK(a, b.data(), s, ws, bytes);
  const staged::VerifyReport rep = AgainstCpu(r, out.data(), s);
  EXPECT_TRUE(rep.ok) << ShapeName(s) << ": " << rep.Summary();
  // The split tiles' pieces are added in block order: the same bits on every run.
  EXPECT_EQ(RunStreamK(a, b.data(), s, ws, bytes), out) << ShapeName(s) << " differs between runs";
}

TEST_P(Ch04StreamK, AlternatingInputsOnOnePoisonedWorkspace) {
  // One workspace for every call, filled with NaN before each, and two different B in turn:
  // the partial sums a call finds in its slots are never its own from an earlier call, so a
  // fixup that adds a slot before its piece stored it, or a piece of another tile, shows up.
  // Each product matches its CPU reference, and every run of one B gives the same bits.
  const Shape s = StreamKShape(GetParam());
  ASSERT_GT(optimized::PlanStreamK(s.m, s.n, s.k, optimized::DeviceResidency()).sk_tiles, 0)
      << ShapeName(s);
  const Reference& first = CpuReference(s);
  const Reference second = SecondInput(s);
  const Reference* refs[2] = {&first, &second};
  staged::DeviceBuffer<float> a(first.a), b0(first.b), b1(second.b);
  const float* bs[2] = {b0.data(), b1.data()};
  const std::size_t bytes = optimized::WorkspaceBytes(s.m, s.n, s.k, optimized::Stage::kStreamK);
  staged::DeviceBuffer<float> ws(WorkspaceFloats(bytes));
  std::vector<float> runs[2];
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 2; ++i) {
      const std::vector<float> out = RunStreamK(a, bs[i], s, ws, bytes);
      const staged::VerifyReport rep = AgainstCpu(*refs[i], out.data(), s);
      EXPECT_TRUE(rep.ok) << ShapeName(s) << ", B " << i << ", round " << round << ": "
                          << rep.Summary();
      if (round == 0) {
        runs[i] = out;
      } else {
        EXPECT_EQ(out, runs[i]) << ShapeName(s) << ", B " << i << ": round " << round
                                << " differs from round 0";
      }
    }
  }
  EXPECT_NE(runs[0], runs[1]) << "the two inputs must give different products";
}

TEST_P(Ch04StreamK, ShortWorkspaceRunsStage4) {
  // With less workspace than the plan needs, stage 8 runs stage 4 alone: its product is stage
  // 4's bit for bit, and the workspace is left as it was (no counters reset, no partial sums).
  // With the full workspace, the same observation sees stream-K write to it.
  const Shape s = StreamKShape(GetParam());
  const Reference& r = CpuReference(s);
  staged::DeviceBuffer<float> a(r.a), b(r.b);
  const std::size_t bytes = optimized::WorkspaceBytes(s.m, s.n, s.k, optimized::Stage::kStreamK);
  staged::DeviceBuffer<float> c4(Elements(s.m, s.n));
  optimized::Matmul(a.data(), b.data(), c4.data(), s.m, s.n, s.k, optimized::Stage::kDoubleBuffer,
                    nullptr);
  const std::vector<float> stage4 = c4.ToHost();
  staged::DeviceBuffer<float> ws(WorkspaceFloats(bytes));
  const auto untouched = [&ws] {
    const std::vector<float> host = ws.ToHost();
    const auto* bytes_of = reinterpret_cast<const unsigned char*>(host.data());
    return std::all_of(bytes_of, bytes_of + host.size() * sizeof(float),
                       [](unsigned char x) { return x == 0xA5; });
  };
  for (std::size_t given : {std::size_t{0}, bytes - 16}) {
    const std::vector<float> out = RunStreamK(a, b.data(), s, ws, given, 0xA5);
    const staged::VerifyReport rep = AgainstCpu(r, out.data(), s);
    EXPECT_TRUE(rep.ok) << ShapeName(s) << " with " << given << " bytes: " << rep.Summary();
    EXPECT_EQ(out, stage4) << ShapeName(s) << " with " << given << " bytes: not stage 4's product";
    EXPECT_TRUE(untouched()) << ShapeName(s) << " with " << given << " bytes: workspace written";
  }
  staged::DeviceBuffer<float> none;
  EXPECT_EQ(RunStreamK(a, b.data(), s, none, 0), stage4) << ShapeName(s) << " with no workspace";
  RunStreamK(a, b.data(), s, ws, bytes, 0xA5);
  EXPECT_FALSE(untouched()) << ShapeName(s) << ": the full workspace was not used";
}

TEST_P(Ch04StreamK, TwoHostThreadsAgree) {
  // Two host threads, each with its stream, workspace and output, at the same time: the same
  // bits as one call alone.
  const Shape s = StreamKShape(GetParam());
  const Reference& r = CpuReference(s);
  staged::DeviceBuffer<float> a(r.a), b(r.b);
  const std::size_t bytes = optimized::WorkspaceBytes(s.m, s.n, s.k, optimized::Stage::kStreamK);
  staged::DeviceBuffer<float> alone_ws(WorkspaceFloats(bytes));
  const std::vector<float> alone = RunStreamK(a, b.data(), s, alone_ws, bytes);
  std::vector<float> results[2];
  std::string errors[2];
  const auto run = [&](int i) {
    try {
      staged::Stream stream;
      staged::DeviceBuffer<float> c(Elements(s.m, s.n));
      staged::DeviceBuffer<float> ws(bytes / sizeof(float) + 1);
      for (int rep = 0; rep < 3; ++rep) {
        ws.FillBytes(0xFF, stream.get());  // NaN partial sums: no rep finds the last one's
        optimized::Matmul(a.data(), b.data(), c.data(), s.m, s.n, s.k,
                          optimized::Stage::kStreamK, stream.get(), {ws.data(), bytes});
      }
      CUDA_CHECK(cudaStreamSynchronize(stream.get()));
      results[i] = c.ToHost();
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  };
  std::thread first(run, 0);
  std::thread second(run, 1);
  first.join();
  second.join();
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(errors[i].empty()) << errors[i];
    EXPECT_EQ(results[i], alone) << ShapeName(s) << ": thread " << i;
  }
}

TEST_P(Ch04StreamK, UnalignedRunsStage4) {
  // B or C one float past an aligned address: the stream-K blocks' 16-byte copies and stores
  // cannot be used, and the stage runs stage 4 (its scalar instances) instead.
  const Shape s = StreamKShape(GetParam());
  const Reference& r = CpuReference(s);
  const std::size_t bytes = optimized::WorkspaceBytes(s.m, s.n, s.k, optimized::Stage::kStreamK);
  staged::DeviceBuffer<float> ws(bytes / sizeof(float));
  staged::DeviceBuffer<float> a(r.a);
  std::vector<float> b_shifted(r.b.size() + 1, 0.f);
  std::copy(r.b.begin(), r.b.end(), b_shifted.begin() + 1);
  staged::DeviceBuffer<float> b(r.b), b_off(b_shifted);
  for (bool shift_b : {true, false}) {
    staged::DeviceBuffer<float> c(Elements(s.m, s.n) + 1);
    c.FillBytes(0xFF);
    const float* b_ptr = shift_b ? b_off.data() + 1 : b.data();
    float* c_ptr = shift_b ? c.data() : c.data() + 1;
    optimized::Matmul(a.data(), b_ptr, c_ptr, s.m, s.n, s.k, optimized::Stage::kStreamK, nullptr,
                      {ws.data(), bytes});
    const std::vector<float> host = c.ToHost();
    const float* out = host.data() + (shift_b ? 0 : 1);
    const staged::VerifyReport rep = AgainstCpu(r, out, s);
    EXPECT_TRUE(rep.ok) << ShapeName(s) << (shift_b ? " B" : " C") << " offset: " << rep.Summary();
  }
}

// Each case reaches a different part of the stream-K blocks: HalfWave, ranges that cross a
// tile boundary (K/16 not a multiple of the k-steps per block) over three rows of tiles;
// ManyPieces, eight one-step pieces per tile; WholeTiles, one-step tiles that no block splits;
// UnderAWave, no full wave at all (no stage-4 part).
INSTANTIATE_TEST_SUITE_P(
    Device, Ch04StreamK,
    ::testing::Values(
        StreamKCase{"HalfWave", [](int) { return 3; }, [](int slots) { return slots / 2; }, 80},
        StreamKCase{"ManyPieces", [](int) { return 1; }, [](int slots) { return slots + 3; }, 128},
        StreamKCase{"WholeTiles", [](int) { return 1; },
                    [](int slots) { return slots + slots / 2; }, 16},
        StreamKCase{"UnderAWave", [](int) { return 1; }, [](int slots) { return slots / 2; }, 208}),
    [](const auto& info) { return std::string(info.param.name); });

class Ch04Residency : public staged::testing::GpuTest {};

TEST_F(Ch04Residency, ArchitectureLimitsModelMatchesTheDevice) {
  // The host-side model the plans are tested with (each kernel's threads, static shared memory
  // and launch bound under the planning limits) gives what the occupancy API gives here.
  const optimized::Residency device = optimized::DeviceResidency();
  const optimized::Residency model = optimized::ModelResidency(staged::PlanningLimits());
  EXPECT_EQ(device.sms, model.sms);
  EXPECT_EQ(device.tile128x128, model.tile128x128);
  EXPECT_EQ(device.tile128x64, model.tile128x64);
  EXPECT_EQ(device.tile64x128, model.tile64x128);
  EXPECT_EQ(device.tile64x64, model.tile64x64);
  EXPECT_EQ(device.streamk, model.streamk);
  for (const auto& [tile_m, tile_n] : {std::pair{128, 128}, {128, 64}, {64, 128}, {64, 64}}) {
    EXPECT_EQ(optimized::ResidentTileBlocks(tile_m, tile_n), device.Tile(tile_m, tile_n));
  }
  EXPECT_EQ(optimized::ResidentStreamKBlocks(), device.streamk);
  EXPECT_THROW(optimized::ResidentTileBlocks(32, 128), std::invalid_argument);
}

TEST_F(Ch04Residency, KernelsReachTheirLaunchBoundsOnALargeSm) {
  // Where an SM has 64 Ki registers and room in shared memory (sm_80, sm_90, sm_100), each
  // kernel holds the blocks its __launch_bounds__ asks for: 16 warps of every split-K tile, two
  // stream-K blocks (a register or shared-memory change can break it). The GPU's own limits,
  // whatever profile the suite plans for.
  staged::testing::ScopedDeviceProfile own("");
  const staged::DeviceLimits limits = staged::PlanningLimits();
  if (limits.smem_per_sm < 160 * 1024 || limits.max_threads_per_sm < 2048) {
    GTEST_SKIP() << "this GPU's SM (" << limits.smem_per_sm / 1024 << " KiB, "
                 << limits.max_threads_per_sm << " threads) holds fewer by design";
  }
  for (const auto& [tile_m, tile_n] : {std::pair{128, 128}, {128, 64}, {64, 128}, {64, 64}}) {
    const int warps = tile_m * tile_n / 64 / 32;
    EXPECT_EQ(optimized::ResidentTileBlocks(tile_m, tile_n), optimized::kSplitKWarpsPerSm / warps)
        << tile_m << "x" << tile_n;
  }
  EXPECT_EQ(optimized::ResidentStreamKBlocks(), optimized::kStreamKBlocksPerSm);
}

class Ch04IntStages : public staged::testing::GpuTest {};

TEST_F(Ch04IntStages, FloatOnlyStagesRefuseInt) {
  staged::DeviceBuffer<std::int32_t> a(4), b(4), c(4);
  EXPECT_THROW(optimized::Matmul(a.data(), b.data(), c.data(), 2, 2, 2, optimized::Stage::kWarpTile,
                                 nullptr),
               staged::UsageError);
}

// -------------------------------------------------------------------------------------------
// The mutation check at the benchmark's sizes (kBenchShapes; a host test keeps it equal to
// bench.args).

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
