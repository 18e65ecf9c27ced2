/// @file ch03_mppsort_test.cu
/// @brief Chapter 03 tests: bucket arithmetic and planning (host), each naive and optimized
///        kernel alone against the CPU, and every variant end to end over sizes and
///        distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/device_buffer.hpp"
#include "common/generate.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch03 {
namespace {

using staged::DeviceBuffer;
using staged::Distribution;
using staged::testing::kTestSeed;

// ----------------------------------------------------------------------------- host tests

TEST(BucketMath, FullRangeDoesNotOverflow) {
  const std::uint64_t scale = BucketScale(0, 0xFFFFFFFFu, 2048);
  EXPECT_EQ(ArithmeticBucket(0, 0, scale), 0u);
  EXPECT_EQ(ArithmeticBucket(0xFFFFFFFFu, 0, scale), 2047u);
  EXPECT_EQ(BucketLimit(0, 0xFFFFFFFFu, 1024, 1024), 0x100000000ull);
  EXPECT_EQ(cpu::TableBucket(0xFFFFFFFFu, 0, 0xFFFFFFFFu, 1024), 1023u);
  EXPECT_EQ(cpu::TableBucket(0, 0, 0xFFFFFFFFu, 1024), 0u);
}

TEST(BucketMath, EqualMinMaxGivesBucketZero) {
  EXPECT_EQ(ArithmeticBucket(77, 77, BucketScale(77, 77, 2048)), 0u);
  EXPECT_LT(cpu::TableBucket(77, 77, 77, 1024), 1024u);
}

TEST(BucketMath, ArithmeticBucketIsMonotoneAndInRange) {
  const std::vector<std::uint32_t> keys =
      staged::Generate<std::uint32_t>(20000, Distribution::kUniform, kTestSeed);
  for (std::uint32_t h : {1u, 2u, 3u, 1199u, 2048u}) {
    for (std::uint32_t i = 0; i + 1 < keys.size(); i += 2) {
      const std::uint32_t lo = std::min(keys[i], keys[i + 1]);
      const std::uint32_t hi = std::max(keys[i], keys[i + 1]);
      const std::uint64_t scale = BucketScale(lo, hi, h);
      const std::uint32_t b_lo = ArithmeticBucket(lo, lo, scale);
      const std::uint32_t b_hi = ArithmeticBucket(hi, lo, scale);
      ASSERT_EQ(b_lo, 0u);
      ASSERT_LT(b_hi, h) << "seed " << kTestSeed;
      if (h >= 2 && hi > lo) ASSERT_GE(b_hi, 1u) << "the largest key must leave bucket 0";
    }
  }
}

TEST(Planning, BucketsFollowLength) {
  for (std::uint32_t tile : {optimized::kTile, optimized::kSmallTile}) {
    const std::uint32_t target = optimized::TargetBucketKeys(tile);
    EXPECT_LT(target, tile);
    EXPECT_EQ(optimized::BucketsFor(1, tile), 1u);
    EXPECT_EQ(optimized::BucketsFor(target, tile), 1u);
    EXPECT_EQ(optimized::BucketsFor(target + 1, tile), 2u);
    EXPECT_EQ(optimized::BucketsFor(std::uint64_t{1} << 32, tile), optimized::kMaxBuckets);
  }
}

TEST(Planning, LevelUsesSmallTileOnlyWhenEverySpanFits) {
  const std::uint64_t fits =
      std::uint64_t{optimized::kMaxBuckets} * optimized::kSmallTargetBucketKeys;
  // The second level at 64M keys: 2048 spans of about 32K keys, 9 small buckets each.
  const optimized::LevelPlan second = optimized::PlanLevel({{0, 32768}, {32768, 33000}});
  EXPECT_EQ(second.tile, optimized::kSmallTile);
  EXPECT_EQ(second.segments[0].buckets, 9u);
  EXPECT_EQ(optimized::PlanLevel({{0, fits}}).tile, optimized::kSmallTile);
  // 8M keys in one level need the large tile: 2048 small buckets would hold only 7.6M.
  const optimized::LevelPlan one = optimized::PlanLevel({{0, 8u << 20}});
  EXPECT_EQ(one.tile, optimized::kTile);
  EXPECT_EQ(one.segments[0].buckets, 1199u);
  EXPECT_EQ(optimized::PlanLevel({{0, 1000}, {1000, fits + 1}}).tile, optimized::kTile);
}

TEST(Planning, LevelBasesArePrefixSums) {
  const optimized::LevelPlan plan =
      optimized::PlanLevel({{0, 9000}, {20000, 100000}, {200000, 16384}});
  ASSERT_EQ(plan.segments.size(), 3u);
  std::uint32_t chunks = 0, buckets = 0;
  std::uint64_t matrix = 0;
  for (const optimized::Segment& s : plan.segments) {
    EXPECT_EQ(s.chunk_base, chunks);
    EXPECT_EQ(s.bucket_base, buckets);
    EXPECT_EQ(s.matrix_base, matrix);
    EXPECT_EQ(s.chunks, (s.len + optimized::kChunk - 1) / optimized::kChunk);
    chunks += s.chunks;
    buckets += s.buckets;
    matrix += std::uint64_t{s.buckets} * s.chunks;
  }
  EXPECT_EQ(plan.chunks, chunks);
  EXPECT_EQ(plan.buckets, buckets);
  EXPECT_EQ(plan.matrix, matrix);
}

TEST(CpuReference, RadixSortMatchesStdSort) {
  for (Distribution d : staged::AllDistributions()) {
    for (std::size_t n : {0u, 1u, 2u, 255u, 257u, 100003u}) {
      std::vector<std::uint32_t> keys = staged::Generate<std::uint32_t>(n, d, kTestSeed);
      if (n > 2) {
        keys[n / 2] = 0;
        keys[n / 3] = 0xFFFFFFFFu;
      }
      std::vector<std::uint32_t> want = keys;
      std::sort(want.begin(), want.end());
      ASSERT_EQ(cpu::RadixSort(keys), want)
          << staged::DistributionName(d) << " n " << n << " seed " << kTestSeed;
    }
  }
  // Keys that differ in one digit only: the other three passes are skipped.
  const std::vector<std::uint32_t> one_digit = {0x12340056u, 0x12340012u, 0x123400FFu, 0x12340000u};
  EXPECT_EQ(cpu::RadixSort(one_digit),
            (std::vector<std::uint32_t>{0x12340000u, 0x12340012u, 0x12340056u, 0x123400FFu}));
}

TEST(CpuReference, ScansAndVerticalScan) {
  EXPECT_EQ(cpu::ExclusiveScan({3, 1, 4, 1, 5}), (std::vector<std::uint32_t>{0, 3, 4, 8, 9}));
  // 3 rows x 2 columns, row-major.
  EXPECT_EQ(cpu::VerticalScan({1, 2, 3, 4, 5, 6}, 3, 2),
            (std::vector<std::uint32_t>{0, 0, 1, 2, 4, 6}));
}

TEST(CpuReference, NaiveRowsCoverInput) {
  for (std::size_t n : {1u, 1023u, 1025u, 5000000u}) {
    const std::uint32_t rows = naive::Rows(n);
    EXPECT_GE(std::uint64_t{rows} * naive::Chunk(n), n);
    EXPECT_LE(rows, naive::kMaxRows);
  }
}

// ----------------------------------------------------------------------- per-kernel tests

std::vector<std::uint32_t> Keys(std::size_t n, Distribution d) {
  return staged::Generate<std::uint32_t>(n, d, kTestSeed);
}

using NaiveKernels = staged::testing::GpuTest;

TEST_F(NaiveKernels, EveryStepMatchesCpu) {
  for (std::size_t n : {1u, 1025u, 100003u, 1u << 20}) {
    for (Distribution d : {Distribution::kUniform, Distribution::kSkewed, Distribution::kEqual}) {
      SCOPED_TRACE("n " + std::to_string(n) + " " + staged::DistributionName(d) + " seed " +
                   std::to_string(kTestSeed));
      const std::vector<std::uint32_t> keys = Keys(n, d);
      const std::uint32_t h = 1000, rows = naive::Rows(n);
      const std::uint64_t chunk = naive::Chunk(n);
      naive::Workspace ws(n, h);
      DeviceBuffer<std::uint32_t> d_in(keys), d_out(n);
      naive::MinMax(d_in.data(), n, ws.minmax.data(), nullptr);
      const std::vector<std::uint32_t> mm = ws.minmax.ToHost();
      EXPECT_EQ(mm[0], *std::min_element(keys.begin(), keys.end()));
      EXPECT_EQ(mm[1], *std::max_element(keys.begin(), keys.end()));

      naive::BlocksHistoAndScan(d_in.data(), n, ws.minmax.data(), h, rows, chunk, ws.hh.data(),
                                ws.hg.data(), nullptr);
      const std::vector<std::uint32_t> hh = cpu::BlockHistograms(keys, h, rows, chunk);
      std::vector<std::uint32_t> hg(h, 0);
      for (std::size_t i = 0; i < hh.size(); ++i) hg[i % h] += hh[i];
      std::vector<std::uint32_t> got_hh = ws.hh.ToHost();
      got_hh.resize(hh.size());
      EXPECT_EQ(got_hh, hh);
      EXPECT_EQ(ws.hg.ToHost(), hg);

      naive::GlobalHistoScan(ws.hg.data(), h, ws.shg.data(), nullptr);
      const std::vector<std::uint32_t> shg = cpu::ExclusiveScan(hg);
      EXPECT_EQ(ws.shg.ToHost(), shg);

      naive::VerticalScanHH(ws.hh.data(), rows, h, ws.psv.data(), nullptr);
      std::vector<std::uint32_t> got_psv = ws.psv.ToHost();
      got_psv.resize(hh.size());
      EXPECT_EQ(got_psv, cpu::VerticalScan(hh, rows, h));

      naive::Partition(d_in.data(), n, ws.minmax.data(), h, rows, chunk, ws.shg.data(),
                       ws.psv.data(), ws.part.data(), nullptr);
      std::vector<std::uint32_t> part = ws.part.ToHost();
      part.resize(n);
      for (std::uint32_t b = 0; b < h; ++b) {
        const std::size_t end = b + 1 < h ? shg[b + 1] : n;
        for (std::size_t i = shg[b]; i < end; ++i) {
          ASSERT_EQ(cpu::TableBucket(part[i], mm[0], mm[1], h), b) << "position " << i;
        }
      }
      std::vector<std::uint32_t> a = part, b = keys;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b) << "partition is not a permutation";

      naive::SegmentedBitonicSort(ws.part.data(), d_out.data(), ws.shg.data(), h, n, nullptr);
      const std::vector<std::uint32_t> sorted = d_out.ToHost();
      for (std::uint32_t bk = 0; bk < h; ++bk) {
        const std::size_t end = bk + 1 < h ? shg[bk + 1] : n;
        if (end - shg[bk] > naive::kTile) continue;  // left to the global-memory path
        ASSERT_TRUE(std::is_sorted(sorted.begin() + shg[bk], sorted.begin() + end));
      }
    }
  }
}

TEST_F(NaiveKernels, GlobalBitonicSortsOddLengths) {
  for (std::size_t len : {2u, 3u, 1000u, 70001u}) {
    std::vector<std::uint32_t> keys = Keys(len + 10, Distribution::kUniform);
    DeviceBuffer<std::uint32_t> d(keys);
    naive::GlobalBitonicSort(d.data(), 5, len, nullptr);
    std::vector<std::uint32_t> got = d.ToHost(), want = keys;
    std::sort(want.begin() + 5, want.begin() + 5 + len);
    EXPECT_EQ(got, want) << "len " << len;
  }
}

/// A one-segment level over @p n keys with its matrix computed on the device.
struct OneLevel {
  explicit OneLevel(const std::vector<std::uint32_t>& keys)
      : plan(optimized::PlanLevel({optimized::Span{0, keys.size()}})),
        d_in(keys),
        segments(1),
        minmax(1),
        matrix(std::max<std::uint64_t>(plan.matrix, 1)) {
    segments.CopyFromHost(plan.segments.data(), 1);
    const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
    const ch01::MinMaxPair<std::uint32_t> mm{*lo, *hi};
    minmax.CopyFromHost(&mm, 1);
    optimized::Histogram(d_in.data(), segments.data(), 1, plan.chunks, minmax.data(), matrix.data(),
                         nullptr);
  }
  optimized::LevelPlan plan;
  DeviceBuffer<std::uint32_t> d_in;
  DeviceBuffer<optimized::Segment> segments;
  DeviceBuffer<ch01::MinMaxPair<std::uint32_t>> minmax;
  DeviceBuffer<std::uint32_t> matrix;
};

using OptimizedKernels = staged::testing::GpuTest;

TEST_F(OptimizedKernels, HistogramScanPartitionMatchCpu) {
  for (std::size_t n : {1u, 1023u, 100003u, (1u << 20) + 7}) {
    for (Distribution d : {Distribution::kUniform, Distribution::kSkewed, Distribution::kFew}) {
      SCOPED_TRACE("n " + std::to_string(n) + " " + staged::DistributionName(d) + " seed " +
                   std::to_string(kTestSeed));
      std::vector<std::uint32_t> keys = Keys(n, d);
      if (n > 2) {
        keys[1] = 0;
        keys[2] = 0xFFFFFFFFu;
      }
      OneLevel level(keys);
      const optimized::Segment seg = level.plan.segments[0];
      const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
      const std::uint64_t scale = BucketScale(*lo, *hi, seg.buckets);
      std::vector<std::uint32_t> want(level.plan.matrix, 0);
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t b = ArithmeticBucket(keys[i], *lo, scale);
        ++want[std::uint64_t{b} * seg.chunks + i / optimized::kChunk];
      }
      std::vector<std::uint32_t> got = level.matrix.ToHost();
      got.resize(want.size());
      ASSERT_EQ(got, want);

      const std::vector<std::uint32_t> scanned = cpu::ExclusiveScan(want);
      level.matrix.CopyFromHost(scanned);
      DeviceBuffer<std::uint32_t> part(n), out(n);
      optimized::Partition(level.d_in.data(), level.segments.data(), 1, level.plan.chunks,
                           level.minmax.data(), level.matrix.data(), part.data(), out.data(),
                           nullptr);
      // An all-equal segment (min == max, e.g. n = 1) is already sorted: Partition writes it
      // straight to `out`, every other segment to `part`.
      const std::vector<std::uint32_t> p = (*lo == *hi ? out : part).ToHost();
      for (std::uint32_t b = 0; b < seg.buckets; ++b) {
        const std::size_t begin = scanned[std::uint64_t{b} * seg.chunks];
        const std::size_t end =
            b + 1 < seg.buckets ? scanned[std::uint64_t{b + 1} * seg.chunks] : n;
        for (std::size_t i = begin; i < end; ++i) {
          ASSERT_EQ(ArithmeticBucket(p[i], *lo, scale), b) << "position " << i;
        }
      }
      std::vector<std::uint32_t> a = p, b = keys;
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      EXPECT_EQ(a, b) << "partition is not a permutation";
    }
  }
}

TEST_F(OptimizedKernels, BitonicSortsEachSegmentAndListsOversized) {
  // One segment whose "buckets" have the lengths below (one chunk, so the scanned matrix is
  // the exclusive scan of the lengths). With either tile, a bucket longer than the tile must be
  // listed with its min and max, untouched (9000 for both, 4097 and 8192 for the small one);
  // the 8500 equal keys exceed both but are final and copied to the output.
  const std::vector<std::uint32_t> lens = {0,    1,    2,    511,  512, 513, 1000,
                                           4096, 4097, 8192, 9000, 3,   8500};
  const std::uint32_t total = std::accumulate(lens.begin(), lens.end(), 0u);
  std::vector<std::uint32_t> keys = Keys(total, Distribution::kUniform);
  std::fill(keys.end() - 8500, keys.end(), 77u);
  optimized::Segment seg;
  seg.len = total;
  seg.buckets = static_cast<std::uint32_t>(lens.size());
  seg.chunks = 1;
  DeviceBuffer<optimized::Segment> d_seg(1);
  d_seg.CopyFromHost(&seg, 1);
  const ch01::MinMaxPair<std::uint32_t> mm{0, 1};
  DeviceBuffer<ch01::MinMaxPair<std::uint32_t>> d_mm(1);
  d_mm.CopyFromHost(&mm, 1);
  const std::vector<std::uint32_t> starts = cpu::ExclusiveScan(lens);
  const std::size_t equal = lens.size() - 1;
  for (std::uint32_t tile : {optimized::kTile, optimized::kSmallTile}) {
    SCOPED_TRACE("tile " + std::to_string(tile) + " seed " + std::to_string(kTestSeed));
    DeviceBuffer<std::uint32_t> d_scan(starts), d_in(keys), d_out(total), d_count(1);
    DeviceBuffer<optimized::Span> d_list(lens.size());
    d_out.FillBytes(0);
    d_count.FillBytes(0);
    d_list.FillBytes(0);  // only `count` entries are written; the copy below reads them all
    optimized::BitonicSortBuckets(d_in.data(), d_out.data(), d_seg.data(), 1, seg.buckets,
                                  d_mm.data(), d_scan.data(), d_list.data(), d_count.data(), tile,
                                  nullptr);
    const std::vector<std::uint32_t> out = d_out.ToHost();
    std::vector<optimized::Span> want_list;
    for (std::size_t b = 0; b < lens.size(); ++b) {
      if (lens[b] > tile && b != equal) {
        const auto [lo, hi] =
            std::minmax_element(keys.begin() + starts[b], keys.begin() + starts[b] + lens[b]);
        want_list.push_back({starts[b], lens[b], *lo, *hi});
        continue;
      }
      std::vector<std::uint32_t> want(keys.begin() + starts[b], keys.begin() + starts[b] + lens[b]);
      std::sort(want.begin(), want.end());
      EXPECT_TRUE(std::equal(want.begin(), want.end(), out.begin() + starts[b])) << "bucket " << b;
    }
    const std::uint32_t count = d_count.ToHost()[0];
    ASSERT_EQ(count, want_list.size());
    std::vector<optimized::Span> list = d_list.ToHost();
    list.resize(count);
    std::sort(list.begin(), list.end(),
              [](const optimized::Span& a, const optimized::Span& b) { return a.begin < b.begin; });
    for (std::size_t i = 0; i < count; ++i) {
      EXPECT_EQ(list[i].begin, want_list[i].begin);
      EXPECT_EQ(list[i].len, want_list[i].len);
      EXPECT_EQ(list[i].min, want_list[i].min);
      EXPECT_EQ(list[i].max, want_list[i].max);
    }
  }
}

// ---------------------------------------------------------------------- end-to-end tests

enum class Variant { kNaive, kOptimized, kThrust, kCub };

std::string VariantName(Variant v) {
  switch (v) {
    case Variant::kNaive:
      return "Naive";
    case Variant::kOptimized:
      return "Optimized";
    case Variant::kThrust:
      return "Thrust";
    case Variant::kCub:
      return "Cub";
  }
  return "Unknown";
}

std::vector<std::uint32_t> RunSort(Variant v, const std::vector<std::uint32_t>& keys,
                                   int* levels = nullptr) {
  const std::size_t n = keys.size();
  DeviceBuffer<std::uint32_t> d_in(keys), d_out(n);
  d_out.FillBytes(0xFF);
  switch (v) {
    case Variant::kNaive: {
      naive::Workspace ws(n, naive::kDefaultBuckets);
      naive::Sort(d_in.data(), d_out.data(), n, ws, nullptr);
      break;
    }
    case Variant::kOptimized: {
      optimized::Workspace ws(n);
      optimized::Sort(d_in.data(), d_out.data(), n, ws, nullptr);
      if (levels != nullptr) *levels = ws.levels;
      break;
    }
    case Variant::kThrust: {
      library::Workspace ws(n);
      library::ThrustSort(d_in.data(), d_out.data(), n, ws, nullptr);
      break;
    }
    case Variant::kCub: {
      library::Workspace ws(n);
      library::CubRadixSort(d_in.data(), d_out.data(), n, ws, nullptr);
      break;
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return d_out.ToHost();
}

using SortCase = std::tuple<Variant, Distribution, std::size_t>;
class SortEndToEnd : public staged::testing::GpuTestWithParam<SortCase> {};

TEST_P(SortEndToEnd, SortedPermutation) {
  const auto [variant, dist, n] = GetParam();
  std::vector<std::uint32_t> keys = Keys(n, dist);
  const std::vector<std::uint32_t> out = RunSort(variant, keys);
  const staged::VerifyReport r = staged::CheckSortedPermutation(keys.data(), n, out.data(), n);
  EXPECT_TRUE(r.ok) << r.Summary() << " seed " << kTestSeed;
}

INSTANTIATE_TEST_SUITE_P(
    AllVariants, SortEndToEnd,
    ::testing::Combine(::testing::Values(Variant::kNaive, Variant::kOptimized, Variant::kThrust,
                                         Variant::kCub),
                       ::testing::ValuesIn(staged::AllDistributions()),
                       ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{2},
                                         std::size_t{1023}, std::size_t{1025}, std::size_t{100003},
                                         std::size_t{1} << 20, (std::size_t{1} << 23) + 5)),
    [](const ::testing::TestParamInfo<SortCase>& info) {
      return VariantName(std::get<0>(info.param)) +
             staged::DistributionName(std::get<1>(info.param)) + "N" +
             std::to_string(std::get<2>(info.param));
    });

class SortSpecialKeys : public staged::testing::GpuTestWithParam<Variant> {};

TEST_P(SortSpecialKeys, ExtremesAndZeros) {
  for (std::size_t n : {2u, 1025u, 300007u}) {
    std::vector<std::uint32_t> keys = Keys(n, Distribution::kFew);
    keys[0] = 0xFFFFFFFFu;
    keys[n - 1] = 0;
    for (std::size_t i = 1; i + 1 < n; i += 7) keys[i] = (i % 2) ? 0 : 0xFFFFFFFFu;
    const std::vector<std::uint32_t> out = RunSort(GetParam(), keys);
    const staged::VerifyReport r = staged::CheckSortedPermutation(keys.data(), n, out.data(), n);
    EXPECT_TRUE(r.ok) << r.Summary() << " n " << n;
  }
}

TEST_P(SortSpecialKeys, OnlyTwoValues) {
  std::vector<std::uint32_t> keys(200000, 0);
  keys[12345] = 0xFFFFFFFFu;  // one bucket holds all but one key
  const std::vector<std::uint32_t> out = RunSort(GetParam(), keys);
  const staged::VerifyReport r =
      staged::CheckSortedPermutation(keys.data(), keys.size(), out.data(), out.size());
  EXPECT_TRUE(r.ok) << r.Summary();
}

INSTANTIATE_TEST_SUITE_P(AllVariants, SortSpecialKeys,
                         ::testing::Values(Variant::kNaive, Variant::kOptimized, Variant::kThrust,
                                           Variant::kCub),
                         [](const ::testing::TestParamInfo<Variant>& info) {
                           return VariantName(info.param);
                         });

using OversizedBuckets = staged::testing::GpuTest;

TEST_F(OversizedBuckets, ReBucketingSortsANarrowCluster) {
  // 2^21 keys in a cluster 4096 values wide plus two outliers: level 0 puts the cluster in one
  // bucket of ~2M keys, so the sort needs further levels.
  const std::size_t n = std::size_t{1} << 21;
  std::vector<std::uint32_t> keys = Keys(n, Distribution::kUniform);
  for (auto& k : keys) k = 1000000u + (k & 4095u);
  keys[7] = 0;
  keys[8] = 0xFFFFFFFFu;
  int levels = 0;
  const std::vector<std::uint32_t> out = RunSort(Variant::kOptimized, keys, &levels);
  const staged::VerifyReport r = staged::CheckSortedPermutation(keys.data(), n, out.data(), n);
  EXPECT_TRUE(r.ok) << r.Summary();
  EXPECT_GE(levels, 2);
}

TEST_F(OversizedBuckets, GeometricKeysConverge) {
  // Keys 2^k: every level splits off only the top values, the worst case for re-bucketing.
  std::vector<std::uint32_t> keys(300000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 1u << (i % 32);
  int levels = 0;
  const std::vector<std::uint32_t> out = RunSort(Variant::kOptimized, keys, &levels);
  const staged::VerifyReport r =
      staged::CheckSortedPermutation(keys.data(), keys.size(), out.data(), out.size());
  EXPECT_TRUE(r.ok) << r.Summary() << " levels " << levels;
}

}  // namespace
}  // namespace ch03
