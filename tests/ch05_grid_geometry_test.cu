/// @file ch05_grid_geometry_test.cu
/// @brief Chapter 05 tests: host grid maths and the variant table (run everywhere); every grid
///        variant, block size and launch mode against the CPU integer product (GPU, exact).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "common/device_buffer.hpp"
#include "common/errors.hpp"
#include "common/stream.hpp"
#include "gpu_test.hpp"

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

/// (config, launch mode) pairs: the 12 grid variants plain, the 5 block sizes plain, and the
/// graph / forked graph / persistent forms of the 1-D and single-block arrangements.
std::vector<std::tuple<Config, Launch>> AllVariants() {
  std::vector<std::tuple<Config, Launch>> out;
  for (const auto& e : ch05::VariantTable()) {
    // naive, optimized and block_16x32 are grid_single_mxm_global, grid_2d_mx2m_shared and
    // grid_single_mx2m_shared under other names.
    if (e.name == "naive" || e.name == "optimized" || e.name == "block_16x32") continue;
    out.emplace_back(e.config, Launch::kPlain);
    if (e.name.rfind("grid_", 0) == 0 && e.config.arrangement != Arrangement::kGrid2d) {
      for (Launch l : {Launch::kGraph, Launch::kGraphFork, Launch::kPersistent}) {
        out.emplace_back(e.config, l);
      }
    }
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<std::tuple<Config, Launch>>& info) {
  const Config& c = std::get<0>(info.param);
  std::string name = ch05::VariantName(c) + "M" + std::to_string(c.m) +
                     ch05::LaunchSuffix(std::get<1>(info.param));
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

class GridVariants : public staged::testing::GpuTestWithParam<std::tuple<Config, Launch>> {};

TEST_P(GridVariants, MatchesCpuProductExactly) {
  const auto [cfg, launch] = GetParam();
  staged::Stream stream;
  std::vector<int> sizes = {1, 15, 16, 17, 32, 33, 160, 161, 320};
  // One large N; the single-block forms of small blocks launch one block per tile, so they get
  // a smaller "large" N to keep the test short.
  sizes.push_back(cfg.arrangement == Arrangement::kSingle && cfg.m < 8 ? 400 : 1024);
  for (int n : sizes) {
    const auto a =
        ch05::SmallIntMatrix(static_cast<std::size_t>(n) * n, staged::testing::kTestSeed);
    const auto b =
        ch05::SmallIntMatrix(static_cast<std::size_t>(n) * n, staged::testing::kTestSeed + 1);
    std::vector<std::int32_t> expected(a.size());
    ch04::cpu::Matmul<std::int32_t>(a.data(), b.data(), expected.data(), n, n, n);
    staged::DeviceBuffer<std::int32_t> d_a(a);
    staged::DeviceBuffer<std::int32_t> d_b(b);
    staged::DeviceBuffer<std::int32_t> d_c(a.size());
    d_c.FillBytes(0xFF);
    ch05::Matmul(d_a.data(), d_b.data(), d_c.data(), n, cfg, launch, stream.get());
    stream.Synchronize();
    const auto got = d_c.ToHost();
    const staged::VerifyReport r = staged::CompareExact(expected.data(), got.data(), got.size());
    ASSERT_TRUE(r.ok) << "N = " << n << ", seed " << staged::testing::kTestSeed << ": "
                      << r.Summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Chapter05, GridVariants, ::testing::ValuesIn(AllVariants()), ParamName);

class GraphReplay : public staged::testing::GpuTest {};

TEST_F(GraphReplay, ReplaysTheSameProductTwice) {
  const int n = 97;
  Config cfg = kMx2M16;
  cfg.arrangement = Arrangement::kSingle;
  const auto a = ch05::SmallIntMatrix(n * n, 3);
  const auto b = ch05::SmallIntMatrix(n * n, 4);
  std::vector<std::int32_t> expected(a.size());
  ch04::cpu::Matmul<std::int32_t>(a.data(), b.data(), expected.data(), n, n, n);
  staged::DeviceBuffer<std::int32_t> d_a(a);
  staged::DeviceBuffer<std::int32_t> d_b(b);
  staged::DeviceBuffer<std::int32_t> d_c(a.size());
  staged::Stream stream;
  ch05::GraphMatmul graph(d_a.data(), d_b.data(), d_c.data(), n, cfg, Launch::kGraph, stream.get());
  EXPECT_EQ(graph.nodes(), ch05::LaunchesPerRun(n, cfg));
  for (int rep = 0; rep < 2; ++rep) {
    d_c.FillBytes(0xFF, stream.get());
    graph.Replay(stream.get());
    stream.Synchronize();
    const auto got = d_c.ToHost();
    ASSERT_TRUE(staged::CompareExact(expected.data(), got.data(), got.size()).ok) << rep;
  }
  ch05::EmptyGraph empty(10, stream.get());
  empty.Replay(stream.get());
  ch05::EmptyLaunches(10, stream.get());
  stream.Synchronize();
}

}  // namespace
