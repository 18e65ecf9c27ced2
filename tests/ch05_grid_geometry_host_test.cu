/// @file ch05_grid_geometry_host_test.cu
/// @brief Chapter 05 host tests (no GPU needed): the grid maths and launch counts, the variant
///        table, the sampled check and the timing rules.
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
#include "common/device_limits.hpp"
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

TEST(ArchitectureLimits, EveryProfileHoldsEveryBlockShape) {
  // Every block shape and M of the study (at most 2M x M = 512 threads, two int tiles of 2M x M
  // in shared memory) fits every profile's SM.
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    for (const int m : ch05::kSupportedM) {
      for (const ch05::Shape shape : {ch05::Shape::kMxM, ch05::Shape::kMx2M}) {
        Config cfg;
        cfg.m = m;
        cfg.shape = shape;
        const int threads = ch05::ThreadsPerBlock(cfg);
        const int smem = 2 * 2 * m * m * static_cast<int>(sizeof(std::int32_t));
        EXPECT_GE(staged::BlocksPerSmUnder(limits, threads, smem, 32), 1)
            << limits.name << " M " << m;
      }
    }
  }
}

}  // namespace
