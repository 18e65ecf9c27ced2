/// @file ch05_grid_geometry_test.cu
/// @brief Chapter 05 GPU tests: every grid variant, block size and launch mode against the CPU
///        integer product (exact); graph replay; the ungated timing of long launch loops. The
///        host tests are in ch05_grid_geometry_host_test.cu.
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
