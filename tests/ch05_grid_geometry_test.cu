/// @file ch05_grid_geometry_test.cu
/// @brief Chapter 05 tests: host grid maths, the variant table and the timing rules (run
///        everywhere); every grid variant, block size and launch mode against the CPU integer
///        product (GPU, exact); graph replay; the ungated timing of long launch loops (GPU).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "chapters/05_grid_geometry/measure.cuh"
#include "common/device_buffer.hpp"
#include "common/errors.hpp"
#include "common/stream.hpp"
#include "gpu_test.hpp"

namespace ch05 {

/// Prints a configuration in test output as its variant name and M.
void PrintTo(const Config& cfg, std::ostream* os) { *os << VariantName(cfg) << " M=" << cfg.m; }

}  // namespace ch05

namespace {

using ch05::Arrangement;
using ch05::Config;
using ch05::Launch;
using ch05::Memory;
using ch05::Shape;

constexpr Config kMx2M16{Arrangement::kGrid2d, Shape::kMx2M, Memory::kShared, 16};

TEST(GridMaths, TileEdgeAndThreads) {
  Config mxm{Arrangement::kGrid2d, Shape::kMxM, Memory::kGlobal, 16};
  EXPECT_EQ(ch05::TileEdge(mxm), 16);
  EXPECT_EQ(ch05::ThreadsPerBlock(mxm), 256);
  EXPECT_EQ(ch05::BlockDim(mxm).x, 16u);
  EXPECT_EQ(ch05::TileEdge(kMx2M16), 32);
  EXPECT_EQ(ch05::ThreadsPerBlock(kMx2M16), 512);
  EXPECT_EQ(ch05::BlockDim(kMx2M16).x, 32u);
  EXPECT_EQ(ch05::BlockDim(kMx2M16).y, 16u);
  Config one{Arrangement::kSingle, Shape::kMx2M, Memory::kShared, 1};
  EXPECT_EQ(ch05::ThreadsPerBlock(one), 2);
}

TEST(GridMaths, PaperLaunchCountsWhenNIsAMultipleOf2M) {
  // The paper: K = N/M; M×M needs K launches (1-D) and K² (single); M×2M needs K/2 and K²/4.
  const int n = 1600;
  const int k = n / 16;
  for (Shape shape : {Shape::kMxM, Shape::kMx2M}) {
    const int per_side = shape == Shape::kMxM ? k : k / 2;
    Config c{Arrangement::kGrid2d, shape, Memory::kShared, 16};
    EXPECT_EQ(ch05::LaunchesPerRun(n, c), 1);
    EXPECT_EQ(ch05::BlocksPerLaunch(n, c), std::int64_t{per_side} * per_side);
    c.arrangement = Arrangement::kGrid1d;
    EXPECT_EQ(ch05::LaunchesPerRun(n, c), per_side);
    EXPECT_EQ(ch05::BlocksPerLaunch(n, c), per_side);
    EXPECT_EQ(ch05::PersistentBlocks(n, c), per_side);
    c.arrangement = Arrangement::kSingle;
    EXPECT_EQ(ch05::LaunchesPerRun(n, c), std::int64_t{per_side} * per_side);
    EXPECT_EQ(ch05::BlocksPerLaunch(n, c), 1);
    EXPECT_EQ(ch05::PersistentBlocks(n, c), 1);
  }
}

TEST(GridMaths, AnyNRoundsTilesUp) {
  EXPECT_EQ(ch05::TilesPerSide(1, kMx2M16), 1);
  EXPECT_EQ(ch05::TilesPerSide(32, kMx2M16), 1);
  EXPECT_EQ(ch05::TilesPerSide(33, kMx2M16), 2);
  EXPECT_EQ(ch05::TilesPerSide(161, kMx2M16), 6);
  Config single = kMx2M16;
  single.arrangement = Arrangement::kSingle;
  EXPECT_EQ(ch05::LaunchesPerRun(161, single), 36);
  // A 2-D grid taller than 65535 tile rows is split into launches of at most 65535 rows.
  Config tiny{Arrangement::kGrid2d, Shape::kMxM, Memory::kGlobal, 1};
  EXPECT_EQ(ch05::LaunchesPerRun(65535, tiny), 1);
  EXPECT_EQ(ch05::LaunchesPerRun(65536, tiny), 2);
  EXPECT_EQ(ch05::BlocksPerLaunch(65536, tiny), std::int64_t{65536} * 65535);
}

TEST(VariantTable, NamesMapToConfigs) {
  EXPECT_EQ(ch05::VariantTable().size(), 19u);
  const Config naive = ch05::ParseVariant("naive");
  EXPECT_EQ(naive.arrangement, Arrangement::kSingle);
  EXPECT_EQ(naive.memory, Memory::kGlobal);
  EXPECT_EQ(naive.shape, Shape::kMxM);
  const Config opt = ch05::ParseVariant("optimized");
  EXPECT_EQ(ch05::VariantName(opt), "grid_2d_mx2m_shared");
  for (const auto& e : ch05::VariantTable()) {
    if (e.name.rfind("grid_", 0) == 0) EXPECT_EQ(ch05::VariantName(e.config), e.name);
    if (e.name.rfind("block_", 0) == 0) EXPECT_EQ(ch05::VariantName(e.config, true), e.name);
  }
  EXPECT_EQ(ch05::ParseVariant("block_4x8").m, 4);
  EXPECT_EQ(ch05::ParseVariant("block_4x8", 16).m, 4);  // block_* fix their own M
  EXPECT_EQ(ch05::ParseVariant("grid_1d_mxm_shared", 8).m, 8);
  EXPECT_THROW(ch05::ParseVariant("grid_3d_mxm_shared"), staged::UsageError);
  EXPECT_THROW(ch05::ParseVariant("grid_1d_mxm_shared", 3), staged::UsageError);
}

TEST(HostChecks, SmallIntsAndSampleCheck) {
  const int n = 37;
  const auto a = ch05::SmallIntMatrix(n * n, 1);
  const auto b = ch05::SmallIntMatrix(n * n, 2);
  for (auto v : a) ASSERT_TRUE(v >= -8 && v <= 8);
  std::vector<std::int32_t> c(n * n);
  ch04::cpu::Matmul<std::int32_t>(a.data(), b.data(), c.data(), n, n, n);
  EXPECT_TRUE(ch05::SampleCheck(a.data(), b.data(), c.data(), n, 100, 7).ok);
  c[n * n - 1] += 1;  // a corner is always checked
  EXPECT_FALSE(ch05::SampleCheck(a.data(), b.data(), c.data(), n, 0, 7).ok);
}

TEST(TimingRules, OnlyPlainOneDAndSingleBlockLoopsAreUngated) {
  // One host call per run (2-D launch, graph replay, persistent launch): behind the gate.
  // A host loop of K/2 or K²/4 launches: no gate (the driver queues only about a thousand).
  for (Shape shape : {Shape::kMxM, Shape::kMx2M}) {
    for (Memory memory : {Memory::kGlobal, Memory::kShared}) {
      for (Arrangement arr : {Arrangement::kGrid2d, Arrangement::kGrid1d, Arrangement::kSingle}) {
        const Config cfg{arr, shape, memory, 16};
        EXPECT_EQ(ch05::IsGated(cfg, Launch::kPlain), arr == Arrangement::kGrid2d)
            << ch05::VariantName(cfg);
        for (Launch l : {Launch::kGraph, Launch::kGraphFork, Launch::kPersistent}) {
          EXPECT_TRUE(ch05::IsGated(cfg, l)) << ch05::VariantName(cfg) << ch05::LaunchSuffix(l);
        }
      }
    }
  }
}

TEST(TimingRules, RepsShrinkToTheBudgetButNeverBelowOne) {
  const ch05::TimingPlan plan{2, 10, 300.0};
  // Ten 20 ms reps fit in 300 ms: the plan as asked, gate as given.
  staged::TimingOptions t = ch05::TimingFor(plan, 20.0, true, false);
  EXPECT_EQ(t.reps, 10);
  EXPECT_EQ(t.warmup, 2);
  EXPECT_TRUE(t.gate);
  EXPECT_FALSE(t.flush_l2);
  // 100 ms runs: three fit; no warm-up (the checked run was one); the flush as asked.
  t = ch05::TimingFor(plan, 100.0, false, true);
  EXPECT_EQ(t.reps, 3);
  EXPECT_EQ(t.warmup, 0);
  EXPECT_FALSE(t.gate);
  EXPECT_TRUE(t.flush_l2);
  // A run longer than the budget still gets one rep.
  t = ch05::TimingFor(plan, 5000.0, true, false);
  EXPECT_EQ(t.reps, 1);
  // Exactly at the budget: all reps.
  EXPECT_EQ(ch05::TimingFor(plan, 30.0, true, false).reps, 10);
  // A zero-time run (clock granularity) keeps every rep.
  EXPECT_EQ(ch05::TimingFor(plan, 0.0, true, false).reps, 10);
}

/// One parameter of GridVariants: a configuration and how its launches are issued.
struct GridCase {
  Config cfg;     ///< the variant
  Launch launch;  ///< plain loop, graph, forked graph or persistent
};

/// Prints a case as its row name, e.g. `grid_1d_mx2m_shared M=16 +graph`.
void PrintTo(const GridCase& c, std::ostream* os) {
  *os << ch05::VariantName(c.cfg) << " M=" << c.cfg.m << " " << ch05::LaunchSuffix(c.launch);
}

/// (config, launch mode) pairs: the 12 grid variants plain, the 5 block sizes plain, and the
/// graph / forked graph / persistent forms of the 1-D and single-block arrangements.
std::vector<GridCase> AllVariants() {
  std::vector<GridCase> out;
  for (const auto& e : ch05::VariantTable()) {
    // naive, optimized and block_16x32 are grid_single_mxm_global, grid_2d_mx2m_shared and
    // grid_single_mx2m_shared under other names.
    if (e.name == "naive" || e.name == "optimized" || e.name == "block_16x32") continue;
    out.push_back({e.config, Launch::kPlain});
    if (e.name.rfind("grid_", 0) == 0 && e.config.arrangement != Arrangement::kGrid2d) {
      for (Launch l : {Launch::kGraph, Launch::kGraphFork, Launch::kPersistent}) {
        out.push_back({e.config, l});
      }
    }
  }
  return out;
}

/// `Grid1dMx2mSharedM16GraphFork`: the row name in CamelCase (letters and digits only).
std::string ParamName(const ::testing::TestParamInfo<GridCase>& info) {
  const Config& c = info.param.cfg;
  std::string name =
      ch05::VariantName(c) + "M" + std::to_string(c.m) + ch05::LaunchSuffix(info.param.launch);
  std::string out;
  bool upper = true;
  for (char ch : name) {
    if (ch == '_' || ch == '+') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(ch))) : ch;
    upper = false;
  }
  return out;
}

/// Inputs of size N×N (the test seed) and their CPU product.
struct TestProblem {
  std::vector<std::int32_t> a;         ///< A
  std::vector<std::int32_t> b;         ///< B
  std::vector<std::int32_t> expected;  ///< A·B from ch04::cpu::Matmul
};

/// The problem of side @p n, computed once per process: every GridVariants instance checks
/// against the same CPU products, so they are not recomputed 40 times.
const TestProblem& TestProblemOfSize(int n) {
  static std::map<int, TestProblem> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    const std::size_t count = static_cast<std::size_t>(n) * n;
    TestProblem t{ch05::SmallIntMatrix(count, staged::testing::kTestSeed),
                  ch05::SmallIntMatrix(count, staged::testing::kTestSeed + 1),
                  std::vector<std::int32_t>(count)};
    ch04::cpu::Matmul<std::int32_t>(t.a.data(), t.b.data(), t.expected.data(), n, n, n);
    it = cache.emplace(n, std::move(t)).first;
  }
  return it->second;
}

class GridVariants : public staged::testing::GpuTestWithParam<GridCase> {};

TEST_P(GridVariants, MatchesCpu) {
  const auto [cfg, launch] = GetParam();
  staged::Stream stream;
  std::vector<int> sizes = {1, 15, 16, 17, 32, 33, 160, 161, 320};
  // One large N; the single-block forms of small blocks launch one block per tile, so they get
  // a smaller "large" N to keep the test short.
  sizes.push_back(cfg.arrangement == Arrangement::kSingle && cfg.m < 8 ? 400 : 1024);
  for (int n : sizes) {
    const TestProblem& t = TestProblemOfSize(n);
    const auto& a = t.a;
    const auto& b = t.b;
    const auto& expected = t.expected;
    // Inputs, poison and product all on the test's stream, in that order.
    staged::DeviceBuffer<std::int32_t> d_a(a.size());
    staged::DeviceBuffer<std::int32_t> d_b(b.size());
    staged::DeviceBuffer<std::int32_t> d_c(a.size());
    d_a.CopyFromHost(a.data(), a.size(), stream.get());
    d_b.CopyFromHost(b.data(), b.size(), stream.get());
    d_c.FillBytes(0xFF, stream.get());
    ch05::Matmul(d_a.data(), d_b.data(), d_c.data(), n, cfg, launch, stream.get());
    std::vector<std::int32_t> got(a.size());
    d_c.CopyToHost(got.data(), got.size(), stream.get());
    const staged::VerifyReport r = staged::CompareExact(expected.data(), got.data(), got.size());
    ASSERT_TRUE(r.ok) << "N = " << n << ", seed " << staged::testing::kTestSeed << ": "
                      << r.Summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Ch05, GridVariants, ::testing::ValuesIn(AllVariants()), ParamName);

class GraphReplay : public staged::testing::GpuTest {};

TEST_F(GraphReplay, ReplaysTheSameProductTwice) {
  const int n = 97;
  Config cfg = kMx2M16;
  cfg.arrangement = Arrangement::kSingle;
  const auto a = ch05::SmallIntMatrix(n * n, 3);
  const auto b = ch05::SmallIntMatrix(n * n, 4);
  std::vector<std::int32_t> expected(a.size());
  ch04::cpu::Matmul<std::int32_t>(a.data(), b.data(), expected.data(), n, n, n);
  staged::Stream stream;
  staged::DeviceBuffer<std::int32_t> d_a(a.size());
  staged::DeviceBuffer<std::int32_t> d_b(b.size());
  staged::DeviceBuffer<std::int32_t> d_c(a.size());
  d_a.CopyFromHost(a.data(), a.size(), stream.get());
  d_b.CopyFromHost(b.data(), b.size(), stream.get());
  ch05::GraphMatmul graph(d_a.data(), d_b.data(), d_c.data(), n, cfg, Launch::kGraph, stream.get());
  EXPECT_EQ(graph.nodes(), ch05::LaunchesPerRun(n, cfg));
  for (int rep = 0; rep < 2; ++rep) {
    d_c.FillBytes(0xFF, stream.get());
    graph.Replay(stream.get());
    std::vector<std::int32_t> got(a.size());
    d_c.CopyToHost(got.data(), got.size(), stream.get());
    ASSERT_TRUE(staged::CompareExact(expected.data(), got.data(), got.size()).ok) << rep;
  }
  ch05::EmptyGraph empty(10, stream.get());
  empty.Replay(stream.get());
  ch05::EmptyLaunches(10, stream.get());
  stream.Synchronize();
}

class MeasuredTiming : public staged::testing::GpuTest {};

TEST_F(MeasuredTiming, LongLaunchLoopsAreTimedWithoutTheGateAndGraphsBehindIt) {
  // N = 600 with 16x16 tiles: the single-block loop is 38² = 1444 launches per run, more than
  // the driver queues behind a closed gate; timed ungated it must finish, verified, with every
  // rep. Its graph and the 2-D grid are one host call each and are timed behind the gate.
  const int n = 600;
  ch05::Problem p(n, staged::testing::kTestSeed);
  std::vector<std::int32_t> expected(p.a.size());
  ch04::cpu::Matmul<std::int32_t>(p.a.data(), p.b.data(), expected.data(), n, n, n);
  const ch05::Checker exact = [&](const std::vector<std::int32_t>& c) {
    return staged::CompareExact(expected.data(), c.data(), c.size());
  };
  staged::Stream stream;
  const ch05::TimingPlan plan{1, 10, 60000.0};
  const Config single{Arrangement::kSingle, Shape::kMxM, Memory::kShared, 16};
  const Config grid2d{Arrangement::kGrid2d, Shape::kMxM, Memory::kShared, 16};
  ASSERT_EQ(ch05::LaunchesPerRun(n, single), 38 * 38);
  for (const auto& [cfg, launch] :
       {GridCase{single, Launch::kPlain}, GridCase{single, Launch::kGraph},
        GridCase{grid2d, Launch::kPlain}}) {
    const ch05::Work work = ch05::MakeWork(p, cfg, launch, stream.get());
    EXPECT_EQ(work.gated, launch != Launch::kPlain || cfg.arrangement == Arrangement::kGrid2d);
    const ch05::Measured m = ch05::RunCheckTime(p, work, exact, plan, stream.get());
    EXPECT_TRUE(m.check.ok) << ch05::VariantName(cfg) << ch05::LaunchSuffix(launch) << ": "
                            << m.check.Summary();
    EXPECT_EQ(m.time.reps, 10) << ch05::VariantName(cfg) << ch05::LaunchSuffix(launch);
    EXPECT_GT(m.time.median_ms, 0.0);
  }
}

}  // namespace
