/// @file ch03_mppsort_test.cu
/// @brief Chapter 03 GPU tests: each naive and optimized kernel alone against the CPU; every
///        variant end to end over sizes, distributions, extreme keys, offset pointers and
///        adversarial inputs; concurrent sorts. The host tests are in ch03_mppsort_host_test.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ch03_bucket_reference.hpp"
#include "chapters/03_mppsort/library.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/stages.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/device_limits.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch03 {
namespace {

using optimized::BucketSorter;
using staged::DeviceBuffer;
using staged::Distribution;
using staged::testing::kTestSeed;

std::vector<std::uint32_t> Keys(std::size_t n, Distribution d) {
  return staged::Generate<std::uint32_t>(n, d, kTestSeed);
}

/// The sorted keys: the CPU radix sort (O(n), itself checked against std::sort in the host tests).
std::vector<std::uint32_t> Sorted(const std::vector<std::uint32_t>& v) { return cpu::RadixSort(v); }

// ----------------------------------------------------------------------- naive kernels

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
      EXPECT_EQ(Sorted(part), Sorted(keys)) << "partition is not a permutation";

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

// ------------------------------------------------------------------- optimized kernels

/// A one-segment level (level 0) over @p keys with its records and matrix on the device.
struct FirstLevel {
  explicit FirstLevel(const std::vector<std::uint32_t>& keys, std::uint32_t buckets)
      : d_in(keys),
        segment(1),
        state(1),
        matrix(std::max<std::size_t>(buckets * Chunks(keys), 1)),
        totals(buckets),
        starts(buckets) {
    totals.FillBytes(0);  // step 1 adds to them
    const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
    seg.len = static_cast<std::uint32_t>(keys.size());
    seg.range = {*lo, *hi};
    seg.buckets = buckets;
    seg.chunks = Chunks(keys);
    st.num_segments = 1;
    st.chunks = seg.chunks;
    st.buckets = buckets;
    st.matrix = buckets * seg.chunks;
    segment.CopyFromHost(&seg, 1);
    state.CopyFromHost(&st, 1);
  }
  static std::uint32_t Chunks(const std::vector<std::uint32_t>& keys) {
    return static_cast<std::uint32_t>((keys.size() + optimized::kChunk - 1) / optimized::kChunk);
  }
  optimized::Level level() { return {segment.data(), state.data(), false}; }
  optimized::Segment seg;
  optimized::LevelState st;
  DeviceBuffer<std::uint32_t> d_in;
  DeviceBuffer<optimized::Segment> segment;
  DeviceBuffer<optimized::LevelState> state;
  DeviceBuffer<std::uint32_t> matrix;
  DeviceBuffer<std::uint32_t> totals;
  DeviceBuffer<std::uint32_t> starts;
  optimized::Counts counts() { return {matrix.data(), totals.data(), starts.data()}; }
};

/// Step 1's counts of one segment of @p keys with @p h buckets (@p bucket maps a key to its
/// bucket), on the CPU: the chunk-major matrix (entry c * h + k) followed by the h totals.
template <class BucketOf>
std::vector<std::uint32_t> CpuCounts(const std::vector<std::uint32_t>& keys, const BucketOf& bucket,
                                     std::uint32_t h) {
  const std::size_t chunks = (keys.size() + optimized::kChunk - 1) / optimized::kChunk;
  std::vector<std::uint32_t> counts(chunks * h + h, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ++counts[i / optimized::kChunk * h + bucket(keys[i])];
    ++counts[chunks * h + bucket(keys[i])];
  }
  return counts;
}

/// Checks a partition of one segment of @p keys into @p got: bucket k's keys, in any order (the
/// runs of a bucket come in the order the chunks took them), fill [starts[k], starts[k + 1]).
template <class BucketOf>
void ExpectBuckets(const std::vector<std::uint32_t>& keys, const BucketOf& bucket, std::uint32_t h,
                   const std::vector<std::uint32_t>& starts, std::vector<std::uint32_t> got) {
  std::vector<std::uint32_t> fill(starts.begin(), starts.begin() + h);
  std::vector<std::uint32_t> want(keys.size());
  for (const std::uint32_t key : keys) want[fill[bucket(key)]++] = key;
  for (std::uint32_t k = 0; k < h; ++k) {
    ASSERT_EQ(fill[k], k + 1 < h ? starts[k + 1] : keys.size()) << "bucket " << k;
    std::sort(want.begin() + starts[k], want.begin() + fill[k]);
    std::sort(got.begin() + starts[k], got.begin() + fill[k]);
  }
  ASSERT_EQ(got, want);
}

using OptimizedKernels = staged::testing::GpuTest;

/// Every partition: the chunk tile (GPUs whose blocks hold 161 KiB), the pass tile (97 KiB) and
/// the scatter (sm_75).
constexpr optimized::PartitionPath kPartitionPaths[] = {optimized::PartitionPath::kChunkTile,
                                                        optimized::PartitionPath::kPassTile,
                                                        optimized::PartitionPath::kScatter};
std::string PathName(optimized::PartitionPath path) {
  return path == optimized::PartitionPath::kChunkTile  ? "chunk-tile partition"
         : path == optimized::PartitionPath::kPassTile ? "pass-tile partition"
                                                       : "scatter partition";
}
/// Whether the planning limits' block holds @p path's shared memory: under a device profile of a
/// GPU whose block does not (a T4's 64 KiB), its launch is refused, as on that GPU.
bool PathFits(optimized::PartitionPath path) {
  return optimized::PartitionSharedBytes(path) <= staged::PlanningLimits().smem_per_block;
}
/// The largest tile of @p sorter that the planning limits' block holds.
std::uint32_t LargestTile(BucketSorter sorter) {
  return optimized::TilesOf(sorter, staged::PlanningLimits()).back().keys;
}

TEST_F(OptimizedKernels, HistogramScanPartitionMatchCpu) {
  // 20000 is one chunk of two passes, the second partial; 115457 ends in such a chunk after
  // three full ones. The largest n has more chunks (138) than an H100/H200 holds histogram or
  // partition blocks (one per SM), so some blocks handle a second chunk whose keys they loaded
  // ahead.
  static_assert(optimized::kChunk == 2 * optimized::kChunkPass,
                "the sizes below assume two passes");
  for (std::size_t n : {1u, 1023u, 20000u, 100003u, 115457u, (1u << 22) + 300007}) {
    for (Distribution d : {Distribution::kUniform, Distribution::kSkewed, Distribution::kFew,
                           Distribution::kEqual}) {
      SCOPED_TRACE("n " + std::to_string(n) + " " + staged::DistributionName(d) + " seed " +
                   std::to_string(kTestSeed));
      std::vector<std::uint32_t> keys = Keys(n, d);
      if (n > 2 && d != Distribution::kEqual) {
        keys[1] = 0;
        keys[2] = 0xFFFFFFFFu;
      }
      // Level 0's bucket count for n and, where the CPU check stays quick, the most buckets a
      // segment may have and 4093 (the partition scan's last group of four holds one).
      std::vector<std::uint32_t> bucket_counts = {optimized::FirstLevelBuckets(n, 3700)};
      if (n > 1 && n <= 100003) {
        bucket_counts.insert(bucket_counts.end(),
                             {optimized::kMaxBuckets, optimized::kMaxBuckets - 3});
      }
      for (const std::uint32_t h : bucket_counts) {
        SCOPED_TRACE("h " + std::to_string(h));
        FirstLevel level(keys, h);
        DeviceBuffer<std::uint32_t> part(n), out(n);
        part.FillBytes(0xFF);
        out.FillBytes(0xFF);
        const optimized::Buffers b{level.d_in.data(), part.data(), out.data()};
        const optimized::Segment& seg = level.seg;
        if (seg.range.min == seg.range.max) {
          // All equal: no histogram, either partition copies the keys to the output.
          for (const optimized::PartitionPath path : kPartitionPaths) {
            out.FillBytes(0xFF);
            if (!PathFits(path)) {
              EXPECT_THROW(
                  optimized::Partition(level.level(), b, level.counts(), path, seg.chunks, nullptr),
                  std::logic_error)
                  << PathName(path) << " launched past the block's shared memory";
              continue;
            }
            optimized::Partition(level.level(), b, level.counts(), path, seg.chunks, nullptr);
            EXPECT_EQ(out.ToHost(), keys) << PathName(path);
          }
          continue;
        }
        optimized::Histogram(level.level(), b, level.counts(), seg.chunks, nullptr);
        const std::uint64_t scale = BucketScale(seg.range.min, seg.range.max, h);
        const auto bucket = [&](std::uint32_t key) {
          return ArithmeticBucket(key, seg.range.min, scale);
        };
        const std::vector<std::uint32_t> want = CpuCounts(keys, bucket, h);
        std::vector<std::uint32_t> got = level.matrix.ToHost();
        got.resize(std::uint64_t{h} * seg.chunks);
        const std::vector<std::uint32_t> totals = level.totals.ToHost();
        got.insert(got.end(), totals.begin(), totals.end());
        ASSERT_EQ(got, want);

        const std::vector<std::uint32_t> starts = cpu::ExclusiveScan(totals);
        level.starts.CopyFromHost(starts);
        for (const optimized::PartitionPath path : kPartitionPaths) {
          SCOPED_TRACE(PathName(path));
          part.FillBytes(0xFF);
          level.totals.CopyFromHost(totals);
          if (!PathFits(path)) {
            EXPECT_THROW(
                optimized::Partition(level.level(), b, level.counts(), path, seg.chunks, nullptr),
                std::logic_error)
                << "launched past the block's shared memory";
            continue;
          }
          optimized::Partition(level.level(), b, level.counts(), path, seg.chunks, nullptr);
          const std::vector<std::uint32_t> p = part.ToHost();
          ExpectBuckets(keys, bucket, h, starts, p);
          EXPECT_EQ(level.totals.ToHost(), std::vector<std::uint32_t>(h, 0))
              << "the partition takes every run out of the totals";
          EXPECT_EQ(Sorted(p), Sorted(keys)) << "partition is not a permutation";
        }
      }
    }
  }
}

/// One on-chip sorter, tile and overflow tile (0: none), for the bucket-sort kernel tests.
struct TileCase {
  BucketSorter sorter;
  std::uint32_t tile;
  std::uint32_t overflow;
};
std::string SorterName(BucketSorter s) {
  switch (s) {
    case BucketSorter::kCounting:
      return "Counting";
    case BucketSorter::kRadix:
      return "Radix";
    case BucketSorter::kBitonic:
      return "Bitonic";
  }
  return "Unknown";
}
void PrintTo(const TileCase& c, std::ostream* os) {
  *os << SorterName(c.sorter) << " tile " << c.tile << " overflow tile " << c.overflow;
}
std::string TileCaseName(const ::testing::TestParamInfo<TileCase>& info) {
  return SorterName(info.param.sorter) + std::to_string(info.param.tile) +
         (info.param.overflow > 0 ? "Over" + std::to_string(info.param.overflow) : "");
}

/// One level-0 segment whose buckets have the lengths @p lens (any min < max: SortBuckets only
/// tests min == max), with its records on the device, as the bucket-sort kernel tests use it.
struct BucketLevel {
  BucketLevel(const std::vector<std::uint32_t>& lens, std::uint32_t chunks) : d_seg(1), d_state(1) {
    seg.len = std::accumulate(lens.begin(), lens.end(), 0u);
    seg.range = {0, 1};
    seg.buckets = static_cast<std::uint32_t>(lens.size());
    seg.chunks = chunks;
    optimized::LevelState st;
    st.num_segments = 1;
    st.buckets = seg.buckets;
    d_seg.CopyFromHost(&seg, 1);
    d_state.CopyFromHost(&st, 1);
  }
  optimized::Level level() { return {d_seg.data(), d_state.data(), false}; }
  optimized::Segment seg;
  DeviceBuffer<optimized::Segment> d_seg;
  DeviceBuffer<optimized::LevelState> d_state;
};

class SortBucketsKernel : public staged::testing::GpuTestWithParam<TileCase> {};

TEST_P(SortBucketsKernel, SortsEachBucketAndListsOversized) {
  const auto [sorter, tile, overflow_keys] = GetParam();
  // One segment whose buckets have the lengths below (their starts are the exclusive scan of the
  // lengths): empty, tiny, warp and tile boundaries, over the tile (sorted
  // by the overflow tile where the sorter has one and it fits, else listed with min and max),
  // over kBlockMinMaxKeys (listed unreduced), and an all-equal oversized bucket (copied, final).
  // Keys mix full-range, narrow-range (one radix pass; fewer values than the counting sorter's
  // sub-buckets), few values with many copies each, half of one value over a full range (a
  // sub-bucket crowded past kMaxSubBucketRun) and extremes.
  const std::vector<std::uint32_t> lens = {
      0,    1,        2, 31,   32,       33,     511,  512,   513,  1000,     tile - 1,
      tile, tile + 1, 3, 5000, tile * 2, 270000, 3000, 20000, 2500, tile + 77};
  const std::size_t equal = lens.size() - 1, narrow = 14, crowded = 17, few = 19;
  const std::uint32_t total = std::accumulate(lens.begin(), lens.end(), 0u);
  std::vector<std::uint32_t> keys = Keys(total, Distribution::kUniform);
  const std::vector<std::uint32_t> starts = cpu::ExclusiveScan(lens);
  for (std::uint32_t i = 0; i < lens[narrow]; ++i) keys[starts[narrow] + i] = 5000000u + i % 97;
  for (std::uint32_t i = 0; i < lens[crowded]; i += 2) keys[starts[crowded] + i] = 123456789u;
  for (std::uint32_t i = 0; i < lens[few]; ++i) keys[starts[few] + i] = 4000000000u + keys[i] % 17;
  // Fewer values than sub-buckets, about one key each.
  for (std::uint32_t i = 0; i < lens[9]; ++i) keys[starts[9] + i] = 7000000u + keys[i] % 1500;
  std::fill(keys.end() - lens[equal], keys.end(), 77u);
  keys[starts[10]] = 0;
  keys[starts[10] + 1] = 0xFFFFFFFFu;
  BucketLevel level(lens, 1);
  const optimized::Segment& seg = level.seg;
  auto& d_state = level.d_state;
  DeviceBuffer<std::uint32_t> d_scan(starts), d_part(keys), d_out(total), d_count(1);
  DeviceBuffer<optimized::Span> d_list(lens.size());
  d_out.FillBytes(0);
  d_count.FillBytes(0);
  d_list.FillBytes(0);  // only `count` entries are written; the copy below reads them all
  const optimized::Level lv = level.level();
  const optimized::Buffers b{nullptr, d_part.data(), d_out.data()};  // level 0 sorts part -> out
  const optimized::SpanList list{d_list.data(), d_count.data(),
                                 static_cast<std::uint32_t>(lens.size())};
  // The overflow list, as the deeper levels pass it, where the plan has a larger tile.
  const bool has_overflow = overflow_keys > tile;
  DeviceBuffer<optimized::Span> d_overflow(lens.size());
  const optimized::SpanList overflow =
      has_overflow ? optimized::SpanList{d_overflow.data(), &d_state.data()->overflow_count,
                                         static_cast<std::uint32_t>(lens.size())}
                   : optimized::SpanList{};
  const std::uint32_t overflow_tile = has_overflow ? overflow_keys : 0;
  const auto sort = [&, sorter = sorter, tile = tile] {
    optimized::SortBuckets(lv, b, d_scan.data(), list, overflow, sorter, tile, overflow_tile,
                           seg.buckets, nullptr);
    optimized::SortOverflow(lv, b, overflow, sorter, overflow_tile, nullptr);
  };
  const std::uint32_t largest = LargestTile(sorter);
  if (tile > largest || (has_overflow && overflow_keys > largest)) {
    // The planning limits' block cannot hold this tile (a profile of a smaller GPU): the launch
    // is refused, as that GPU would refuse it.
    EXPECT_THROW(sort(), std::logic_error) << "a tile past the block's shared memory launched";
    return;
  }
  sort();
  const std::vector<std::uint32_t> out = d_out.ToHost();
  std::vector<optimized::Span> want_list;
  for (std::size_t k = 0; k < lens.size(); ++k) {
    const auto first = keys.begin() + starts[k], last = first + lens[k];
    const bool overflowed = has_overflow && lens[k] <= overflow_keys;
    if (lens[k] > tile && k != equal && !overflowed) {
      const auto [lo, hi] = std::minmax_element(first, last);
      const bool reduced = lens[k] <= optimized::kBlockMinMaxKeys;
      want_list.push_back(
          {starts[k], lens[k],
           reduced ? optimized::KeyRange{*lo, *hi} : optimized::KeyRange{0xFFFFFFFFu, 0}});
      continue;
    }
    EXPECT_EQ(
        std::vector<std::uint32_t>(out.begin() + starts[k], out.begin() + starts[k] + lens[k]),
        Sorted(std::vector<std::uint32_t>(first, last)))
        << "bucket " << k << " of " << lens[k] << " keys, seed " << kTestSeed;
  }
  const std::uint32_t count = d_count.ToHost()[0];
  ASSERT_EQ(count, want_list.size());
  std::vector<optimized::Span> got = d_list.ToHost();
  got.resize(count);
  std::sort(got.begin(), got.end(), [](const auto& x, const auto& y) { return x.begin < y.begin; });
  for (std::size_t i = 0; i < count; ++i) {
    EXPECT_EQ(got[i].begin, want_list[i].begin);
    EXPECT_EQ(got[i].len, want_list[i].len);
    EXPECT_EQ(got[i].range.min, want_list[i].range.min) << "span at " << got[i].begin;
    EXPECT_EQ(got[i].range.max, want_list[i].range.max) << "span at " << got[i].begin;
  }
  const optimized::LevelState after = d_state.ToHost()[0];
  EXPECT_EQ(after.error, 0u);
  std::uint32_t want_overflow = 0;
  for (std::size_t k = 0; k < lens.size(); ++k) {
    want_overflow += has_overflow && lens[k] > tile && lens[k] <= overflow_keys ? 1 : 0;
  }
  EXPECT_EQ(after.overflow_count, want_overflow);
}

INSTANTIATE_TEST_SUITE_P(Ch03, SortBucketsKernel,
                         // Every tile with the overflow tile a plan gives it: the largest that
                         // fits (16384 on 99 KiB blocks, 8192 on a T4's 64 KiB).
                         ::testing::Values(TileCase{BucketSorter::kCounting, 4096, 16384},
                                           TileCase{BucketSorter::kCounting, 4096, 8192},
                                           TileCase{BucketSorter::kCounting, 8192, 16384},
                                           TileCase{BucketSorter::kCounting, 8192, 0},
                                           TileCase{BucketSorter::kCounting, 16384, 0},
                                           TileCase{BucketSorter::kRadix, 4096, 0},
                                           TileCase{BucketSorter::kRadix, 8192, 0},
                                           TileCase{BucketSorter::kRadix, 36864, 0},
                                           TileCase{BucketSorter::kBitonic, 4096, 8192},
                                           TileCase{BucketSorter::kBitonic, 8192, 0}),
                         TileCaseName);

TEST_F(OptimizedKernels, SortBucketsListsTheBucketsOfAnOversizedPlan) {
  // Level 0 over every tile's bound: all its buckets go on, each around the segment's mean (here
  // about 300000 keys, over kBlockMinMaxKeys). Over equal widths the sort step lists each with
  // its bucket's bounds, read from the map; over a sampled core it reduces their min and max; a
  // bucket over twice the mean is a cluster, listed unreduced; a bucket of one value is final,
  // copied to `out` and not listed.
  const std::vector<std::uint32_t> lens = {300000, 290000, 310000, 250000, 800001};
  static_assert(300000 > optimized::kBlockMinMaxKeys);
  const std::uint32_t total = std::accumulate(lens.begin(), lens.end(), 0u);
  const std::vector<std::uint32_t> starts = cpu::ExclusiveScan(lens);
  struct Case {
    const char* name;
    optimized::KeyRange range;
    std::uint32_t sampled;
  };
  for (const Case& c : {Case{"equal widths", {1000, 0xF0000000u}, optimized::kEqualWidths},
                        Case{"a value per bucket", {7, 11}, optimized::kEqualWidths},
                        Case{"sampled core", {0, 0xFFFFFFFFu}, optimized::kCore}}) {
    SCOPED_TRACE(c.name);
    const std::uint32_t h = static_cast<std::uint32_t>(lens.size());
    const std::uint64_t scale = BucketScale(c.range.min, c.range.max, h);
    // The values of bucket k, by bisection over the map (non-decreasing in the key).
    const auto first = [&](std::uint32_t k) {
      return testing::FirstKeyOfBucket(c.range.min, c.range.max, scale, k);
    };
    // Each bucket's keys drawn from its own values (where the map decides them), in no order.
    std::vector<std::uint32_t> keys = Keys(total, Distribution::kUniform);
    if (c.sampled == optimized::kEqualWidths) {
      for (std::uint32_t k = 0; k < h; ++k) {
        const std::uint64_t lo = first(k), values = first(k + 1) - lo;
        for (std::uint32_t i = 0; i < lens[k]; ++i) {
          keys[starts[k] + i] = static_cast<std::uint32_t>(lo + keys[starts[k] + i] % values);
        }
      }
    }
    BucketLevel level(lens, (total + optimized::kChunk - 1) / optimized::kChunk);
    level.seg.range = c.range;
    level.seg.sampled = c.sampled;
    level.d_seg.CopyFromHost(&level.seg, 1);
    DeviceBuffer<std::uint32_t> d_starts(starts), d_part(keys), d_out(total), d_count(1);
    DeviceBuffer<optimized::Span> d_list(lens.size());
    d_out.FillBytes(0);
    d_count.FillBytes(0);
    d_list.FillBytes(0);
    const optimized::Level lv = level.level();
    const optimized::Buffers b{nullptr, d_part.data(), d_out.data()};
    optimized::SortBuckets(lv, b, d_starts.data(),
                           {d_list.data(), d_count.data(), static_cast<std::uint32_t>(lens.size())},
                           optimized::SpanList{}, BucketSorter::kCounting,
                           LargestTile(BucketSorter::kCounting), 0, level.seg.buckets, nullptr);
    std::vector<optimized::Span> got = d_list.ToHost();
    got.resize(std::min<std::size_t>(d_count.ToHost()[0], got.size()));
    std::sort(got.begin(), got.end(),
              [](const auto& x, const auto& y) { return x.begin < y.begin; });
    const std::vector<std::uint32_t> out = d_out.ToHost();
    std::size_t listed = 0;
    for (std::size_t k = 0; k < lens.size(); ++k) {
      SCOPED_TRACE("bucket " + std::to_string(k));
      const auto begin = keys.begin() + starts[k], end = begin + lens[k];
      const bool cluster = 2 * std::uint64_t{total} < std::uint64_t{lens[k]} * lens.size();
      EXPECT_EQ(cluster, k + 1 == lens.size());
      const auto [lo, hi] = std::minmax_element(begin, end);
      if (!cluster && *lo == *hi) {  // one value: final, in `out`
        EXPECT_TRUE(std::equal(begin, end, out.begin() + starts[k]));
        continue;
      }
      ASSERT_LT(listed, got.size()) << "not listed";
      const optimized::Span& span = got[listed++];
      EXPECT_EQ(span.begin, starts[k]);
      EXPECT_EQ(span.len, lens[k]);
      optimized::KeyRange want{*lo, *hi};
      if (cluster) {
        want = {0xFFFFFFFFu, 0};
      } else if (c.sampled == optimized::kEqualWidths && lens[k] > optimized::kBlockMinMaxKeys) {
        // Over kBlockMinMaxKeys: the map's bounds; within it (bucket 3), reduced.
        want = {static_cast<std::uint32_t>(first(k)), static_cast<std::uint32_t>(first(k + 1) - 1)};
      }
      EXPECT_EQ(span.range.min, want.min);
      EXPECT_EQ(span.range.max, want.max);
    }
    EXPECT_EQ(listed, got.size()) << "a bucket listed twice or a final one listed";
  }
}

TEST_F(OptimizedKernels, PlanLevelBuildsTheTableFromSpans) {
  // Spans as a level's sort step lists them (any order): reduced ones and an unreduced one.
  const std::vector<optimized::Span> spans = {
      {100, 40000, {5, 900}}, {50000, 300000, {0xFFFFFFFFu, 0}}, {400000, 4097, {7, 8}}};
  DeviceBuffer<optimized::Span> d_spans(spans.size());
  d_spans.CopyFromHost(spans);
  DeviceBuffer<std::uint32_t> d_count(1);
  const std::uint32_t n_spans = static_cast<std::uint32_t>(spans.size());
  d_count.CopyFromHost(&n_spans, 1);
  DeviceBuffer<optimized::Segment> d_segs(8);
  // The kernel writes one entry per span; the copies below read the whole table.
  d_segs.FillBytes(0xFF);
  DeviceBuffer<optimized::LevelState> d_state(1);
  d_state.FillBytes(0);
  // The planned level's bucket totals are zeroed, and only they.
  DeviceBuffer<std::uint32_t> d_totals(257);
  d_totals.FillBytes(0xFF);
  const auto zeroed = [&] {
    const std::vector<std::uint32_t> t = d_totals.ToHost();
    return static_cast<std::uint32_t>(std::find(t.begin(), t.end(), 0xFFFFFFFFu) - t.begin());
  };
  optimized::PlanParams params;
  params.target = 35500;
  params.matrix_capacity = 1u << 20;
  params.bucket_capacity = 256;
  params.totals = d_totals.data();
  params.max_segments = 8;
  params.first = true;
  optimized::PlanLevel({d_spans.data(), d_count.data(), 8}, d_segs.data(), d_state.data(), params,
                       nullptr);
  const optimized::LevelState st = d_state.ToHost()[0];
  const std::vector<optimized::Segment> segs = d_segs.ToHost();
  EXPECT_EQ(st.level, 1u);
  EXPECT_EQ(st.num_segments, 3u);
  EXPECT_EQ(st.minmax_segments, 1u);
  EXPECT_EQ(st.error, 0u);
  EXPECT_EQ(d_count.ToHost()[0], 0u) << "the span list is emptied for the next level";
  std::uint32_t chunks = 0, buckets = 0, matrix = 0;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const optimized::Segment& s = segs[i];
    EXPECT_EQ(s.begin, spans[i].begin);
    EXPECT_EQ(s.len, spans[i].len);
    EXPECT_EQ(s.needs_minmax, i == 1 ? 1u : 0u);
    // The unreduced span (a skewed cluster) is bucketed over a sampled core.
    EXPECT_EQ(s.sampled, i == 1 ? 1u : 0u);
    // Level 1: ceil(len / target), at least 2.
    EXPECT_EQ(s.buckets, std::max<std::uint32_t>(2, (spans[i].len + 35499) / 35500));
    EXPECT_EQ(s.chunks, (spans[i].len + optimized::kChunk - 1) / optimized::kChunk);
    EXPECT_EQ(s.chunk_base, chunks);
    EXPECT_EQ(s.bucket_base, buckets);
    EXPECT_EQ(s.matrix_base, matrix);
    chunks += s.chunks;
    buckets += s.buckets;
    matrix += s.buckets * s.chunks;
  }
  EXPECT_EQ(st.chunks, chunks);
  EXPECT_EQ(st.buckets, buckets);
  EXPECT_EQ(st.matrix, matrix);
  EXPECT_EQ(zeroed(), buckets);

  // The next level from the same spans: at least kMinDeepBuckets buckets each.
  d_count.CopyFromHost(&n_spans, 1);
  params.first = false;
  optimized::PlanLevel({d_spans.data(), d_count.data(), 8}, d_segs.data(), d_state.data(), params,
                       nullptr);
  EXPECT_EQ(d_state.ToHost()[0].level, 2u);
  EXPECT_EQ(d_segs.ToHost()[2].buckets, optimized::kMinDeepBuckets);
  EXPECT_EQ(zeroed(), d_state.ToHost()[0].buckets);
  EXPECT_EQ(d_state.ToHost()[0].buckets, 3 * optimized::kMinDeepBuckets);
  // Past kMaxSampledLevel every segment has equal-width buckets over its range.
  static_assert(optimized::kMaxSampledLevel == 1);
  EXPECT_EQ(d_segs.ToHost()[1].sampled, 0u);

  // Past the last level, or over the matrix bound, nothing is planned and the error is set.
  optimized::LevelState deep;
  deep.level = optimized::kMaxLevels - 1;
  d_state.CopyFromHost(&deep, 1);
  d_count.CopyFromHost(&n_spans, 1);
  optimized::PlanLevel({d_spans.data(), d_count.data(), 8}, d_segs.data(), d_state.data(), params,
                       nullptr);
  EXPECT_EQ(d_state.ToHost()[0].num_segments, 0u);
  EXPECT_NE(d_state.ToHost()[0].error, 0u);
  params.first = true;
  params.matrix_capacity = 10;
  d_count.CopyFromHost(&n_spans, 1);
  optimized::PlanLevel({d_spans.data(), d_count.data(), 8}, d_segs.data(), d_state.data(), params,
                       nullptr);
  EXPECT_EQ(d_state.ToHost()[0].num_segments, 0u);
  EXPECT_EQ(d_state.ToHost()[0].error, optimized::kErrorTooLarge);
  // Over the bucket totals' bound: the same, and the totals are left alone.
  params.matrix_capacity = 1u << 20;
  params.bucket_capacity = buckets - 1;
  d_totals.FillBytes(0xFF);
  d_count.CopyFromHost(&n_spans, 1);
  optimized::PlanLevel({d_spans.data(), d_count.data(), 8}, d_segs.data(), d_state.data(), params,
                       nullptr);
  EXPECT_EQ(d_state.ToHost()[0].num_segments, 0u);
  EXPECT_EQ(d_state.ToHost()[0].error, optimized::kErrorTooLarge);
  EXPECT_EQ(zeroed(), 0u);
}

TEST_F(OptimizedKernels, PlanLevelCountsChunksOfTheLongestSpanIn64Bits) {
  // A span of 2^32 - 6 keys (all but a few of kMaxKeys in one bucket): 131072 chunks of kChunk,
  // a count that 32-bit arithmetic, (len + kChunk - 1) / kChunk, wraps to 0.
  const std::uint32_t len = 0xFFFFFFFAu;
  const optimized::Span span{3, len, {5, 9}};
  DeviceBuffer<optimized::Span> d_spans(1);
  d_spans.CopyFromHost(&span, 1);
  DeviceBuffer<std::uint32_t> d_count(1), d_totals(optimized::kMaxDeeperBuckets);
  const std::uint32_t one = 1;
  d_count.CopyFromHost(&one, 1);
  DeviceBuffer<optimized::Segment> d_segs(1);
  DeviceBuffer<optimized::LevelState> d_state(1);
  d_state.FillBytes(0);
  optimized::PlanParams params;
  params.target = 3700;
  params.matrix_capacity = std::uint64_t{1} << 40;
  params.bucket_capacity = optimized::kMaxDeeperBuckets;
  params.totals = d_totals.data();
  params.max_segments = 1;
  params.first = true;
  optimized::PlanLevel({d_spans.data(), d_count.data(), 1}, d_segs.data(), d_state.data(), params,
                       nullptr);
  const optimized::Segment seg = d_segs.ToHost()[0];
  const optimized::LevelState st = d_state.ToHost()[0];
  const std::uint64_t chunks = (std::uint64_t{len} + optimized::kChunk - 1) / optimized::kChunk;
  EXPECT_EQ(chunks, 131072u);
  EXPECT_EQ(st.error, 0u);
  EXPECT_EQ(seg.chunks, chunks);
  EXPECT_EQ(st.chunks, chunks);
  EXPECT_EQ(seg.buckets, optimized::kMaxDeeperBuckets);
  EXPECT_EQ(st.matrix, chunks * optimized::kMaxDeeperBuckets);
}

TEST_F(OptimizedKernels, OverflowListIsReadWithinItsCapacity) {
  // A list whose count went past its capacity (an append past the end stores nothing): the
  // overflow sort reads the entries within the capacity only. Entries past it hold spans of
  // other keys, which must stay as they are.
  const std::uint32_t n = 3 * 8192;
  std::vector<std::uint32_t> keys = Keys(n, Distribution::kUniform);
  DeviceBuffer<std::uint32_t> part(keys), out(n);
  out.FillBytes(0xAB);
  const std::vector<optimized::Span> spans = {
      {0, 8192, {0, 0}}, {8192, 8192, {0, 0}}, {16384, 8192, {0, 0}}};
  DeviceBuffer<optimized::Span> d_spans(spans.size());
  d_spans.CopyFromHost(spans);
  optimized::LevelState st;
  st.level = 1;  // level 1 reads the buckets from `out`'s twin: LevelTarget(1) is out
  st.overflow_count = 3;
  DeviceBuffer<optimized::LevelState> d_state(1);
  d_state.CopyFromHost(&st, 1);
  DeviceBuffer<optimized::Segment> d_seg(1);
  d_seg.FillBytes(0);
  // Level 1 partitions into `out` and sorts from there into `out` (in place).
  DeviceBuffer<std::uint32_t> sorted_in_place(keys);
  const optimized::Buffers b{nullptr, part.data(), sorted_in_place.data()};
  const optimized::Level lv{d_seg.data(), d_state.data(), true};
  auto* count = reinterpret_cast<std::uint32_t*>(reinterpret_cast<char*>(d_state.data()) +
                                                 offsetof(optimized::LevelState, overflow_count));
  const optimized::SpanList list{d_spans.data(), count, 1};  // room for one entry
  ASSERT_GE(LargestTile(BucketSorter::kCounting), 8192u) << "the spans fit every GPU's tile";
  optimized::SortOverflow(lv, b, list, BucketSorter::kCounting,
                          LargestTile(BucketSorter::kCounting), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<std::uint32_t> got = sorted_in_place.ToHost();
  std::vector<std::uint32_t> want = keys;
  std::sort(want.begin(), want.begin() + 8192);  // the one entry within the capacity
  EXPECT_EQ(got, want) << "entries past the capacity were read";
}

TEST_F(OptimizedKernels, SurveyReducesOnlyMarkedSegments) {
  const std::vector<std::uint32_t> keys = Keys(100003, Distribution::kUniform);
  std::vector<optimized::Segment> segs(2);
  segs[0].begin = 0;
  segs[0].len = 40000;
  segs[0].needs_minmax = 1;
  segs[0].chunks = (40000 + optimized::kChunk - 1) / optimized::kChunk;
  segs[1].begin = 40000;
  segs[1].len = 60003;
  segs[1].range = {1, 2};  // known: must stay untouched
  segs[1].chunks = (60003 + optimized::kChunk - 1) / optimized::kChunk;
  segs[1].chunk_base = segs[0].chunks;
  optimized::LevelState st;
  st.level = 1;  // level 1 reads `part`
  st.num_segments = 2;
  st.chunks = segs[0].chunks + segs[1].chunks;
  st.minmax_segments = 1;
  DeviceBuffer<optimized::Segment> d_segs(2);
  d_segs.CopyFromHost(segs);
  DeviceBuffer<optimized::LevelState> d_state(1);
  d_state.CopyFromHost(&st, 1);
  DeviceBuffer<std::uint32_t> d_part(keys);
  const optimized::Level lv{d_segs.data(), d_state.data(), true};
  optimized::SurveySegments(lv, optimized::Buffers{nullptr, d_part.data(), nullptr}, d_segs.data(),
                            nullptr);
  std::vector<optimized::Segment> got = d_segs.ToHost();
  const auto [lo, hi] = std::minmax_element(keys.begin(), keys.begin() + 40000);
  EXPECT_EQ(got[0].range.min, *lo);
  EXPECT_EQ(got[0].range.max, *hi);
  EXPECT_EQ(got[1].range.min, 1u);
  EXPECT_EQ(got[1].range.max, 2u);
  // No marked segment: the kernel returns at once (the ranges stay as they are).
  st.minmax_segments = 0;
  d_state.CopyFromHost(&st, 1);
  segs[0].range = {0xFFFFFFFFu, 0};
  d_segs.CopyFromHost(segs);
  optimized::SurveySegments(lv, optimized::Buffers{nullptr, d_part.data(), nullptr}, d_segs.data(),
                            nullptr);
  got = d_segs.ToHost();
  EXPECT_EQ(got[0].range.min, 0xFFFFFFFFu);
}

/// Surveys one sampled segment holding all of @p keys (level 1, h buckets) and returns its
/// core; checks that its range was reduced too.
optimized::KeyRange SurveyCore(const std::vector<std::uint32_t>& keys, std::uint32_t h) {
  optimized::Segment seg;
  seg.len = static_cast<std::uint32_t>(keys.size());
  seg.needs_minmax = 1;
  seg.sampled = 1;
  seg.buckets = h;
  seg.chunks = (seg.len + optimized::kChunk - 1) / optimized::kChunk;
  optimized::LevelState st;
  st.level = 1;  // level 1 reads `part`
  st.num_segments = 1;
  st.chunks = seg.chunks;
  st.minmax_segments = 1;
  DeviceBuffer<optimized::Segment> d_segs(1);
  d_segs.CopyFromHost(&seg, 1);
  DeviceBuffer<optimized::LevelState> d_state(1);
  d_state.CopyFromHost(&st, 1);
  DeviceBuffer<std::uint32_t> d_part(keys);
  const optimized::Level lv{d_segs.data(), d_state.data(), true};
  optimized::SurveySegments(lv, optimized::Buffers{nullptr, d_part.data(), nullptr}, d_segs.data(),
                            nullptr);
  const optimized::Segment got = d_segs.ToHost()[0];
  const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
  EXPECT_EQ(got.range.min, *lo);
  EXPECT_EQ(got.range.max, *hi);
  return got.core;
}

/// Keys per bucket of @p keys under @p map with @p h buckets.
template <class Map>
std::vector<std::size_t> BucketSizes(const std::vector<std::uint32_t>& keys, const Map& map,
                                     std::uint32_t h) {
  std::vector<std::size_t> sizes(h, 0);
  for (std::uint32_t k : keys) ++sizes.at(map(k));
  return sizes;
}

TEST_F(OptimizedKernels, SurveyCoreFitsASkewedCluster) {
  // A level-1 segment of the skewed distribution: level 0's bucket holding its cluster, 65536
  // values wide, and the few uniform keys that share that bucket (here 1 in 4000, spread over
  // the whole key range). Equal widths over [min, max] put the cluster in a few buckets; over
  // the sampled core every bucket of the cluster is near the mean, and each end bucket holds
  // about one bucket's worth.
  std::vector<std::uint32_t> keys = Keys(1000003, Distribution::kUniform);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i % 4000 != 0) keys[i] = 0x80000000u + (keys[i] & 0xFFFFu);
  }
  for (std::uint32_t h : {3u, 71u, optimized::kMaxDeeperBuckets}) {
    const optimized::KeyRange core = SurveyCore(keys, h);
    ASSERT_LE(core.min, core.max);
    ASSERT_TRUE(std::find(keys.begin(), keys.end(), core.min) != keys.end()) << "a sampled key";
    ASSERT_TRUE(std::find(keys.begin(), keys.end(), core.max) != keys.end()) << "a sampled key";
    const std::vector<std::size_t> sizes = BucketSizes(keys, optimized::CoreMapOf(core, h), h);
    const double mean = static_cast<double>(keys.size()) / h;
    // An end bucket holds the keys beyond sample kSampleKeys / h of 8192: about one mean
    // bucket, a few times that at most (the sample's spread at 4 samples per end).
    EXPECT_LE(static_cast<double>(sizes.front()), 3 * mean) << "h " << h;
    EXPECT_LE(static_cast<double>(sizes.back()), 3 * mean) << "h " << h;
    EXPECT_GT(sizes.front(), 0u) << "h " << h;
    EXPECT_GT(sizes.back(), 0u) << "h " << h;
    if (h == optimized::kMaxDeeperBuckets) {
      // Inside the core the cluster is uniform: its buckets hold the mean within a few Poisson
      // deviations, except the few that the core's ends cut or the sparse tenth reaches.
      const std::size_t near = std::count_if(sizes.begin(), sizes.end(), [&](std::size_t z) {
        return std::abs(static_cast<double>(z) - mean) < 6 * std::sqrt(mean);
      });
      EXPECT_GE(near, sizes.size() * 9 / 10);
    }
  }
}

TEST_F(OptimizedKernels, SurveyCoreOfEqualKeysIsOneValue) {
  // Half the keys one value v: the core is v or around it. All keys v: the core is [v, v], every
  // key lands in bucket 1 and the level's sort step finds it all equal.
  std::vector<std::uint32_t> keys = Keys(600001, Distribution::kUniform);
  const std::uint32_t v = 123456789u;
  for (std::size_t i = 0; i < keys.size(); i += 2) keys[i] = v;
  optimized::KeyRange core = SurveyCore(keys, 512);
  EXPECT_LE(core.min, v);
  EXPECT_GE(core.max, v);
  std::fill(keys.begin(), keys.end(), v);
  core = SurveyCore(keys, 64);
  EXPECT_EQ(core.min, v);
  EXPECT_EQ(core.max, v);
  EXPECT_EQ(optimized::CoreMapOf(core, 64)(v), 1u);
}

TEST_F(OptimizedKernels, HistogramAndPartitionFollowTheCore) {
  // One sampled segment at level 1 with a core that leaves keys on both sides: the matrix and the
  // totals count keys per CoreMap bucket, and the partition leaves each bucket's keys contiguous
  // in order.
  const std::vector<std::uint32_t> keys = Keys(70001, Distribution::kSkewed);
  const std::uint32_t h = 37;
  const std::vector<std::uint32_t> sorted = Sorted(keys);
  optimized::Segment seg;
  seg.len = static_cast<std::uint32_t>(keys.size());
  seg.range = {sorted.front(), sorted.back()};
  seg.buckets = h;
  seg.chunks = (seg.len + optimized::kChunk - 1) / optimized::kChunk;
  seg.sampled = 1;
  seg.core = {sorted[sorted.size() / 50], sorted[sorted.size() - sorted.size() / 40]};
  const optimized::CoreMap map = optimized::CoreMapOf(seg.core, h);
  optimized::LevelState st;
  st.level = 1;  // reads `part`, partitions to `out`
  st.num_segments = 1;
  st.chunks = seg.chunks;
  st.buckets = h;
  st.matrix = h * seg.chunks;
  DeviceBuffer<optimized::Segment> d_segs(1);
  d_segs.CopyFromHost(&seg, 1);
  DeviceBuffer<optimized::LevelState> d_state(1);
  d_state.CopyFromHost(&st, 1);
  DeviceBuffer<std::uint32_t> d_part(keys), d_out(keys.size()), d_matrix(st.matrix), d_totals(h),
      d_starts(h);
  d_totals.FillBytes(0);
  const optimized::Level lv{d_segs.data(), d_state.data(), true};
  const optimized::Buffers b{nullptr, d_part.data(), d_out.data()};
  const optimized::Counts counts{d_matrix.data(), d_totals.data(), d_starts.data()};
  optimized::Histogram(lv, b, counts, 0, nullptr);
  std::vector<std::uint32_t> got = d_matrix.ToHost();
  const std::vector<std::uint32_t> totals = d_totals.ToHost();
  got.insert(got.end(), totals.begin(), totals.end());
  ASSERT_EQ(got, CpuCounts(keys, map, h));
  EXPECT_GT(totals.front(), 0u);
  EXPECT_GT(totals.back(), 0u);
  const std::vector<std::uint32_t> starts = cpu::ExclusiveScan(totals);
  d_starts.CopyFromHost(starts);
  for (const optimized::PartitionPath path : kPartitionPaths) {
    SCOPED_TRACE(PathName(path));
    d_out.FillBytes(0xFF);
    d_totals.CopyFromHost(totals);
    if (!PathFits(path)) {
      EXPECT_THROW(optimized::Partition(lv, b, counts, path, 0, nullptr), std::logic_error)
          << PathName(path) << " launched past the block's shared memory";
      continue;
    }
    optimized::Partition(lv, b, counts, path, 0, nullptr);
    ExpectBuckets(keys, map, h, starts, d_out.ToHost());
    EXPECT_EQ(d_totals.ToHost(), std::vector<std::uint32_t>(h, 0));
  }
}

// ---------------------------------------------------------------------- end-to-end tests

/// Every way the chapter sorts: the naive variant, each stage, the default sort's alternatives
/// and its DoubleBuffer form, and the library's forms.
enum class Variant {
  kNaive,
  kBuckets,    // stage 1
  kRanked,     // stage 2
  kRegisters,  // stage 3
  kLevels,     // stage 4
  kCounting,   // stage 5
  kOptimized,  // stage 6, the default
  kOptimizedDoubleBuffer,
  kOptimizedBitonic,
  kOptimizedRadix,
  kOptimizedHostLoop,
  kOptimizedEqualWidths,
  kThrust,
  kCub32,
  kCub64,
  kCubDoubleBuffer32,
  kCubDoubleBuffer64,
};

std::string VariantName(Variant v) {
  switch (v) {
    case Variant::kNaive:
      return "Naive";
    case Variant::kBuckets:
      return "StageBuckets";
    case Variant::kRanked:
      return "StageRanked";
    case Variant::kRegisters:
      return "StageRegisters";
    case Variant::kLevels:
      return "StageLevels";
    case Variant::kCounting:
      return "StageCounting";
    case Variant::kOptimized:
      return "Optimized";
    case Variant::kOptimizedDoubleBuffer:
      return "OptDoubleBuffer";
    case Variant::kOptimizedBitonic:
      return "OptBitonic";
    case Variant::kOptimizedRadix:
      return "OptRadix";
    case Variant::kOptimizedHostLoop:
      return "OptHostLoop";
    case Variant::kOptimizedEqualWidths:
      return "OptEqualWidths";
    case Variant::kThrust:
      return "Thrust";
    case Variant::kCub32:
      return "CubKeys32";
    case Variant::kCub64:
      return "CubKeys64";
    case Variant::kCubDoubleBuffer32:
      return "CubDoubleBuffer32";
    case Variant::kCubDoubleBuffer64:
      return "CubDoubleBuffer64";
  }
  return "Unknown";
}

/// The stage @p v runs, if it is one.
std::optional<Stage> StageOf(Variant v) {
  switch (v) {
    case Variant::kBuckets:
      return Stage::kBuckets;
    case Variant::kRanked:
      return Stage::kRanked;
    case Variant::kRegisters:
      return Stage::kRegisters;
    case Variant::kLevels:
      return Stage::kLevels;
    case Variant::kCounting:
      return Stage::kCounting;
    default:
      return std::nullopt;
  }
}

optimized::Options OptionsOf(Variant v) {
  if (const auto stage = StageOf(v); stage && *stage >= Stage::kLevels) {
    return optimized::OptionsFor(*stage);
  }
  optimized::Options o;
  if (v == Variant::kOptimizedBitonic) o.sorter = BucketSorter::kBitonic;
  if (v == Variant::kOptimizedRadix) o.sorter = BucketSorter::kRadix;
  if (v == Variant::kOptimizedHostLoop) o.device_loop = false;
  if (v == Variant::kOptimizedEqualWidths) o.sample_first = false;
  return o;
}

/// Whether @p v runs through an `optimized::Workspace` (its levels can be read back).
bool IsOptimized(Variant v) {
  return v == Variant::kLevels || v == Variant::kCounting || v == Variant::kOptimized ||
         v == Variant::kOptimizedDoubleBuffer || v == Variant::kOptimizedBitonic ||
         v == Variant::kOptimizedRadix || v == Variant::kOptimizedHostLoop ||
         v == Variant::kOptimizedEqualWidths;
}

/// Sorts @p keys with @p v (the input copied to the device at offset @p in_offset, the output
/// written at @p out_offset) and returns the sorted keys; @p levels gets the optimized levels.
/// The DoubleBuffer forms sort the input copy in place, with the output array as their second
/// buffer, and the keys are read from whichever buffer holds them.
std::vector<std::uint32_t> RunSort(Variant v, const std::vector<std::uint32_t>& keys,
                                   int* levels = nullptr, std::size_t in_offset = 0,
                                   std::size_t out_offset = 0,
                                   optimized::Segment* first = nullptr) {
  const std::size_t n = keys.size();
  std::vector<std::uint32_t> padded(in_offset, 0xABCDEF01u);
  padded.insert(padded.end(), keys.begin(), keys.end());
  DeviceBuffer<std::uint32_t> d_in(padded), d_out(n + out_offset);
  d_out.FillBytes(0xFF);
  std::uint32_t* in = d_in.data() + in_offset;
  std::uint32_t* out = d_out.data() + out_offset;
  const std::uint32_t* result = out;
  if (v == Variant::kNaive) {
    naive::Workspace ws(n, naive::kDefaultBuckets);
    naive::Sort(in, out, n, ws, nullptr);
  } else if (StageOf(v) && *StageOf(v) <= Stage::kRegisters) {
    StageSorter sorter(*StageOf(v), n);
    sorter.Sort(in, out, n, nullptr);
  } else if (IsOptimized(v)) {
    optimized::Workspace ws(n, OptionsOf(v));
    if (v == Variant::kOptimizedDoubleBuffer) {
      optimized::SortDoubleBuffer(in, out, n, ws, nullptr);
      result = in;
    } else {
      optimized::Sort(in, out, n, ws, nullptr);
    }
    EXPECT_EQ(ws.Errors(nullptr), 0u) << "a level bound was exceeded";
    if (levels != nullptr) *levels = n > 0 ? ws.LevelsUsed(nullptr) : 0;
    if (first != nullptr) *first = ws.ReadFirstSegment(nullptr);
  } else if (v == Variant::kThrust) {
    library::Workspace ws(n);
    library::ThrustSort(in, out, n, ws, nullptr);
  } else {
    library::Workspace ws(n);
    const bool wide = v == Variant::kCub64 || v == Variant::kCubDoubleBuffer64;
    if (v == Variant::kCub32 || v == Variant::kCub64) {
      library::CubSortKeys(in, out, n, wide, ws, nullptr);
    } else {
      result = library::CubSortDoubleBuffer(in, out, n, wide, ws, nullptr);
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint32_t> got(n);
  if (n > 0) {
    CUDA_CHECK(cudaMemcpy(got.data(), result, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
  }
  return got;
}

struct SortCase {
  Variant variant;
  Distribution dist;
  std::size_t n;
};
void PrintTo(const SortCase& c, std::ostream* os) {
  *os << VariantName(c.variant) << " " << staged::DistributionName(c.dist) << " n=" << c.n;
}
std::string SortCaseName(const ::testing::TestParamInfo<SortCase>& info) {
  return VariantName(info.param.variant) + "_" + staged::DistributionName(info.param.dist) + "_N" +
         std::to_string(info.param.n);
}

std::vector<SortCase> SortCases() {
  std::vector<SortCase> cases;
  // Sizes: empty, one, two, a prime, warp and tile boundaries (4096 and 36864 keys), a chunk and
  // a bit, 2^20, and 8M + 5 (level 0 with 2268 buckets). Variants other than the default
  // optimized one run the smaller half.
  const std::vector<std::size_t> sizes = {0,     1,     2,      1023,     4096,          4097,
                                          16385, 36865, 100003, 1u << 20, (1u << 23) + 5};
  for (Variant v :
       {Variant::kNaive, Variant::kBuckets, Variant::kRanked, Variant::kRegisters, Variant::kLevels,
        Variant::kCounting, Variant::kOptimized, Variant::kOptimizedDoubleBuffer,
        Variant::kOptimizedBitonic, Variant::kOptimizedRadix, Variant::kOptimizedHostLoop,
        Variant::kThrust, Variant::kCub32, Variant::kCub64, Variant::kCubDoubleBuffer32,
        Variant::kCubDoubleBuffer64}) {
    for (Distribution d : staged::AllDistributions()) {
      for (std::size_t n : sizes) {
        // The large sizes: every stage and the default sort, and CUB's first form.
        const bool large = n > 100003;
        const bool staged_variant = StageOf(v).has_value() || v == Variant::kOptimized;
        if (large && !staged_variant && v != Variant::kCub32 && v != Variant::kNaive) continue;
        cases.push_back({v, d, n});
      }
    }
  }
  return cases;
}

class SortEndToEnd : public staged::testing::GpuTestWithParam<SortCase> {};

TEST_P(SortEndToEnd, MatchesStdSort) {
  const SortCase c = GetParam();
  const std::vector<std::uint32_t> keys = Keys(c.n, c.dist);
  const std::vector<std::uint32_t> out = RunSort(c.variant, keys);
  const std::vector<std::uint32_t> want = Sorted(keys);
  const staged::VerifyReport r = staged::CompareExact(want.data(), out.data(), c.n);
  EXPECT_TRUE(r.ok) << r.Summary() << " seed " << kTestSeed;
}

INSTANTIATE_TEST_SUITE_P(Ch03, SortEndToEnd, ::testing::ValuesIn(SortCases()), SortCaseName);

void PrintTo(Variant v, std::ostream* os) { *os << VariantName(v); }

class SortVariant : public staged::testing::GpuTestWithParam<Variant> {};

TEST_P(SortVariant, ExtremesAndZeros) {
  for (std::size_t n : {2u, 1025u, 300007u}) {
    std::vector<std::uint32_t> keys = Keys(n, Distribution::kFew);
    keys[0] = 0xFFFFFFFFu;
    keys[n - 1] = 0;
    for (std::size_t i = 1; i + 1 < n; i += 7) keys[i] = (i % 2) ? 0 : 0xFFFFFFFFu;
    EXPECT_EQ(RunSort(GetParam(), keys), Sorted(keys)) << "n " << n;
  }
}

TEST_P(SortVariant, OnlyTwoValues) {
  std::vector<std::uint32_t> keys(200000, 0);
  keys[12345] = 0xFFFFFFFFu;  // one bucket holds all but one key
  EXPECT_EQ(RunSort(GetParam(), keys), Sorted(keys));
}

TEST_P(SortVariant, OffsetPointers) {
  // Input and output at addresses that are 4, 8 and 12 bytes past 16-byte alignment.
  const std::vector<std::uint32_t> keys = Keys(100003, Distribution::kSkewed);
  for (std::size_t in_off : {1u, 3u}) {
    for (std::size_t out_off : {2u, 1u}) {
      EXPECT_EQ(RunSort(GetParam(), keys, nullptr, in_off, out_off), Sorted(keys))
          << "offsets " << in_off << " " << out_off;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Ch03, SortVariant,
    ::testing::Values(Variant::kNaive, Variant::kBuckets, Variant::kRanked, Variant::kRegisters,
                      Variant::kLevels, Variant::kCounting, Variant::kOptimized,
                      Variant::kOptimizedDoubleBuffer, Variant::kOptimizedBitonic,
                      Variant::kOptimizedRadix, Variant::kOptimizedHostLoop, Variant::kThrust,
                      Variant::kCub32, Variant::kCub64, Variant::kCubDoubleBuffer32,
                      Variant::kCubDoubleBuffer64),
    [](const ::testing::TestParamInfo<Variant>& info) { return VariantName(info.param); });

/// An adversarial input for the optimized variants.
struct AdversaryCase {
  Variant variant;
  Adversary adversary;
  std::size_t n;
};
void PrintTo(const AdversaryCase& c, std::ostream* os) {
  *os << VariantName(c.variant) << " " << AdversaryName(c.adversary) << " n=" << c.n;
}

class SortAdversary : public staged::testing::GpuTestWithParam<AdversaryCase> {};

TEST_P(SortAdversary, WithinLevelBound) {
  const AdversaryCase c = GetParam();
  const std::vector<std::uint32_t> keys = AdversarialKeys(c.n, c.adversary, kTestSeed);
  int levels = 0;
  optimized::Segment first;
  EXPECT_EQ(RunSort(c.variant, keys, &levels, 0, 0, &first), Sorted(keys)) << "seed " << kTestSeed;
  // The planner's own bound for these keys (their range and level 0's buckets), which every
  // level that narrows the ranges as planned keeps, and kMaxLevels only caps. Splitters or a
  // core at level 0 need not narrow a range: bounded as one level-0 bucket.
  const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
  const std::uint32_t buckets =
      first.sampled != optimized::kEqualWidths
          ? 1u
          : optimized::PlanFirstLevel(c.n, OptionsOf(c.variant).sorter, staged::PlanningLimits())
                .buckets;
  const std::uint32_t bound = optimized::LevelBound(std::uint64_t{*hi} - *lo + 1, buckets);
  EXPECT_GE(levels, 1);
  EXPECT_LE(levels, static_cast<int>(bound))
      << "range " << *lo << ".." << *hi << ", " << buckets << " level-0 buckets";
  EXPECT_LT(bound, optimized::kMaxLevels);
}

INSTANTIATE_TEST_SUITE_P(
    Ch03, SortAdversary, ::testing::ValuesIn([] {
      std::vector<AdversaryCase> cases;
      for (Variant v :
           {Variant::kLevels, Variant::kCounting, Variant::kOptimized,
            Variant::kOptimizedDoubleBuffer, Variant::kOptimizedBitonic, Variant::kOptimizedRadix,
            Variant::kOptimizedHostLoop, Variant::kOptimizedEqualWidths}) {
        for (Adversary a : {Adversary::kPowers, Adversary::kSpike, Adversary::kOutlier}) {
          for (std::size_t n : {33u * 3000u, 2u << 20}) cases.push_back({v, a, n});
        }
      }
      return cases;
    }()),
    [](const ::testing::TestParamInfo<AdversaryCase>& info) {
      return VariantName(info.param.variant) + "_" + AdversaryName(info.param.adversary) + "_N" +
             std::to_string(info.param.n);
    });

/// A distribution or an adversary of the chapter, for the level-0 map tests.
struct MapCase {
  const char* name;
  std::vector<std::uint32_t> (*keys)(std::size_t n);
  std::uint32_t map;  ///< level 0's map once sampled (`BucketMapKind`)
  int levels;         ///< levels the sort must finish in (0: at most 2)
  bool exact_values;  ///< whether the sample must show every value of the input
};

std::vector<MapCase> MapCases() {
  return {
      {"uniform", [](std::size_t n) { return Keys(n, Distribution::kUniform); },
       optimized::kEqualWidths, 1, false},
      {"sorted", [](std::size_t n) { return Keys(n, Distribution::kSorted); },
       optimized::kEqualWidths, 1, false},
      {"reverse", [](std::size_t n) { return Keys(n, Distribution::kReverse); },
       optimized::kEqualWidths, 1, false},
      {"equal", [](std::size_t n) { return Keys(n, Distribution::kEqual); },
       optimized::kEqualWidths, 1, false},
      {"few", [](std::size_t n) { return Keys(n, Distribution::kFew); }, optimized::kSplitters, 1,
       true},
      {"skewed", [](std::size_t n) { return Keys(n, Distribution::kSkewed); }, optimized::kCore, 1,
       false},
      {"powers", [](std::size_t n) { return AdversarialKeys(n, Adversary::kPowers, kTestSeed); },
       optimized::kSplitters, 1, true},
      {"spike", [](std::size_t n) { return AdversarialKeys(n, Adversary::kSpike, kTestSeed); },
       optimized::kSplitters, 1, false},
      {"outlier", [](std::size_t n) { return AdversarialKeys(n, Adversary::kOutlier, kTestSeed); },
       optimized::kCore, 1, false},
  };
}

using FirstMap = staged::testing::GpuTest;

TEST_F(FirstMap, EachInputGetsTheMapItsSampleCallsFor) {
  // Inputs of few values (16 repeated values, powers of two, a spike) get a bucket around each
  // value the sample shows, final once partitioned, and finish in one level; a cluster (skewed
  // keys, a narrow range and one far key) gets three pieces of equal widths around its sampled
  // core, and finish in one level too; spread keys keep equal widths. Below kMinSampledKeys
  // level 0 does not sample.
  for (Variant v : {Variant::kOptimized, Variant::kOptimizedBitonic, Variant::kOptimizedRadix}) {
    for (std::size_t n : {std::size_t{optimized::kMinSampledKeys} - 1, std::size_t{1} << 20,
                          std::size_t{3000017}}) {
      for (const MapCase& c : MapCases()) {
        SCOPED_TRACE(VariantName(v) + " " + c.name + " n " + std::to_string(n));
        const std::vector<std::uint32_t> keys = c.keys(n);
        int levels = 0;
        optimized::Segment first;
        ASSERT_EQ(RunSort(v, keys, &levels, 0, 0, &first), Sorted(keys)) << "seed " << kTestSeed;
        const bool sampled = n >= optimized::kMinSampledKeys;
        EXPECT_EQ(first.sampled, sampled ? c.map : optimized::kEqualWidths);
        const optimized::FirstLevelPlan plan =
            optimized::PlanFirstLevel(n, OptionsOf(v).sorter, staged::PlanningLimits());
        if (first.sampled == optimized::kSplitters) {
          std::vector<std::uint32_t> distinct = Sorted(keys);
          distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
          // Every value of these inputs is drawn, except maybe some of the spike's noise.
          if (c.exact_values) EXPECT_EQ(first.splitters, distinct.size());
          EXPECT_GE(first.splitters, 1u);
          EXPECT_LE(first.splitters,
                    std::min<std::size_t>(distinct.size(), optimized::kMaxFewValues));
          EXPECT_EQ(first.buckets, 2 * first.splitters + 1);
        } else if (first.sampled == optimized::kCore) {
          // Three pieces within the plan's room.
          EXPECT_GE(first.core_low, 1u);
          EXPECT_GE(first.core_high, 1u);
          EXPECT_GT(first.buckets, first.core_low + first.core_high);
          EXPECT_LE(first.buckets, plan.max_buckets);
          EXPECT_LE(first.core.min, first.core.max);
        } else {
          EXPECT_EQ(first.buckets, plan.buckets);
        }
        if (c.levels > 0 && (sampled || c.map == optimized::kEqualWidths)) {
          EXPECT_EQ(levels, c.levels);
        } else if (sampled) {
          EXPECT_LE(levels, 2);
        }
      }
    }
  }
}

TEST_F(FirstMap, ClustersSortInOneLevelWhateverTheSeed) {
  // Where the cluster lands, how many of the spread keys fall into its bin of the first look,
  // and how far its keys reach past its extreme samples change with the seed; the core map must
  // leave no bucket over the tile for any of them.
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    for (std::size_t n : {std::size_t{1} << 20, std::size_t{5} << 20}) {
      const std::vector<std::uint32_t> skewed =
          staged::Generate<std::uint32_t>(n, Distribution::kSkewed, seed);
      const std::vector<std::uint32_t> outlier = AdversarialKeys(n, Adversary::kOutlier, seed);
      for (const std::vector<std::uint32_t>* keys : {&skewed, &outlier}) {
        SCOPED_TRACE((keys == &skewed ? "skewed" : "outlier") + std::string(" seed ") +
                     std::to_string(seed) + " n " + std::to_string(n));
        int levels = 0;
        optimized::Segment first;
        ASSERT_EQ(RunSort(Variant::kOptimized, *keys, &levels, 0, 0, &first), Sorted(*keys));
        EXPECT_EQ(first.sampled, optimized::kCore);
        EXPECT_EQ(levels, 1);
      }
    }
  }
}

TEST_F(FirstMap, TheChoiceIsPublishedBesideThePlannedSegment) {
  // Level 0's histogram reads the segment the host planned and writes its choice to a record of
  // its own: after a sort whose sample calls for splitters, the planned segment still has equal
  // widths and the host's bucket count, and the published one has the splitters.
  const std::vector<std::uint32_t> keys = AdversarialKeys(1u << 20, Adversary::kSpike, kTestSeed);
  optimized::Workspace ws(keys.size());
  DeviceBuffer<std::uint32_t> in(keys), out(keys.size());
  optimized::Sort(in.data(), out.data(), keys.size(), ws, nullptr);
  ASSERT_EQ(out.ToHost(), Sorted(keys));
  const optimized::Segment planned = ws.first_segment.ToHost()[0];
  EXPECT_EQ(planned.sampled, optimized::kEqualWidths);
  EXPECT_EQ(planned.buckets, ws.first_plan().buckets);
  const optimized::Segment published = ws.ReadFirstSegment(nullptr);
  EXPECT_EQ(published.sampled, optimized::kSplitters);
  EXPECT_EQ(published.buckets, 2 * published.splitters + 1);
  EXPECT_EQ(published.range.min, planned.range.min);
  EXPECT_EQ(published.range.max, planned.range.max);
}

TEST_F(FirstMap, ANarrowCrowdWithAFarKeySortsInOneLevelAtEverySize) {
  // The outlier adversary (1024 values and one far key) at the sizes where the core's buckets
  // hold 3 values each: rounding once gave the first core bucket 4, over the tile's target, and
  // a second level.
  for (std::size_t n = 699000; n <= 721000; n += 2750) {
    const std::vector<std::uint32_t> keys = AdversarialKeys(n, Adversary::kOutlier, kTestSeed);
    int levels = 0;
    ASSERT_EQ(RunSort(Variant::kOptimized, keys, &levels), Sorted(keys)) << "n " << n;
    EXPECT_EQ(levels, 1) << "n " << n;
  }
}

TEST_F(FirstMap, AWorkspaceChoosesAgainForEachInput) {
  // A crowded input, then a spread one, then the crowded one again, on one workspace: each sort
  // chooses its own map and buckets (the choice is written on every call, not kept).
  const std::size_t n = std::size_t{1} << 20;
  const std::vector<std::uint32_t> powers = AdversarialKeys(n, Adversary::kPowers, kTestSeed);
  const std::vector<std::uint32_t> uniform = Keys(n, Distribution::kUniform);
  optimized::Workspace ws(n);
  DeviceBuffer<std::uint32_t> d_out(n);
  for (const auto* keys : {&powers, &uniform, &powers}) {
    DeviceBuffer<std::uint32_t> d_in(*keys);
    optimized::Sort(d_in.data(), d_out.data(), n, ws, nullptr);
    EXPECT_EQ(ws.Errors(nullptr), 0u);
    EXPECT_EQ(d_out.ToHost(), Sorted(*keys));
    EXPECT_EQ(ws.ReadFirstSegment(nullptr).sampled,
              keys == &powers ? optimized::kSplitters : optimized::kEqualWidths);
  }
}

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
  EXPECT_EQ(RunSort(Variant::kOptimizedEqualWidths, keys, &levels), Sorted(keys));
  EXPECT_GE(levels, 2);
  EXPECT_EQ(RunSort(Variant::kOptimized, keys), Sorted(keys)) << "splitters at level 0";
}

TEST_F(OversizedBuckets, SampledCoreFinishesASkewedClusterAtLevelOne) {
  // The skewed distribution's cluster (nine tenths of 2^21 keys) lands in one equal-width
  // level-0 bucket of over kBlockMinMaxKeys keys: level 1 buckets it over its sampled core,
  // where its buckets fit the tiles, so no third level runs (equal widths over its whole range
  // needed one).
  const std::vector<std::uint32_t> keys = Keys(std::size_t{1} << 21, Distribution::kSkewed);
  for (Variant v : {Variant::kOptimizedEqualWidths}) {
    int levels = 0;
    EXPECT_EQ(RunSort(v, keys, &levels), Sorted(keys)) << VariantName(v);
    EXPECT_EQ(levels, 2) << VariantName(v) << ": level 0 and level 1";
  }
}

TEST_F(OversizedBuckets, GeometricKeysConverge) {
  // Keys 2^k: every level splits off only the top values, the worst case for re-bucketing.
  std::vector<std::uint32_t> keys(300000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = 1u << (i % 32);
  for (Variant v : {Variant::kOptimized, Variant::kOptimizedEqualWidths}) {
    int levels = 0;
    EXPECT_EQ(RunSort(v, keys, &levels), Sorted(keys)) << VariantName(v) << " levels " << levels;
  }
}

using OptimizedWorkspace = staged::testing::GpuTest;

TEST_F(OptimizedWorkspace, ReusedAcrossSizesAndOutputs) {
  // One workspace, sizes up and down (level 0 replanned) and two outputs (graph rebuilt); the
  // skewed input needs deeper levels each time (equal widths at level 0).
  optimized::Options equal;
  equal.sample_first = false;
  optimized::Workspace ws(1u << 20, equal);
  DeviceBuffer<std::uint32_t> out_a(3u << 20), out_b(3u << 20);
  for (std::size_t n : {1u << 20, 5000u, 3u << 20, 1u << 20}) {
    const std::vector<std::uint32_t> keys = Keys(n, Distribution::kSkewed);
    DeviceBuffer<std::uint32_t> d_in(keys);
    for (DeviceBuffer<std::uint32_t>* out : {&out_a, &out_b}) {
      out->FillBytes(0xFF);
      optimized::Sort(d_in.data(), out->data(), n, ws, nullptr);
      std::vector<std::uint32_t> got = out->ToHost();
      got.resize(n);
      ASSERT_EQ(got, Sorted(keys)) << "n " << n;
    }
  }
  // The deeper levels read the arrays from the workspace's record: the graph was built for the
  // first allocation and again after the workspace grew for 3M keys, not for each output.
  EXPECT_EQ(ws.graph.builds, 2);
}

TEST_F(OptimizedWorkspace, ReusedAcrossInputsOfOneSize) {
  // One workspace per stage, grown from one key, on a stream of its own; every input in turn at
  // each size, each sorted several times (level 0 is planned once per size; each input's sample
  // chooses its own map): what one sort leaves in the workspace's records must not steer the
  // next.
  for (const Stage stage : {Stage::kLevels, Stage::kCounting, Stage::kSampled}) {
    optimized::Workspace ws(1, optimized::OptionsFor(stage));
    staged::Stream s;
    for (std::size_t n : {std::size_t{1}, std::size_t{12289}, std::size_t{300007}}) {
      std::vector<std::pair<std::string, std::vector<std::uint32_t>>> inputs;
      for (Distribution d : staged::AllDistributions()) {
        inputs.emplace_back(staged::DistributionName(d),
                            staged::Generate<std::uint32_t>(n, d, 20261206));
      }
      for (Adversary a : {Adversary::kPowers, Adversary::kSpike, Adversary::kOutlier}) {
        inputs.emplace_back(AdversaryName(a), AdversarialKeys(n, a, 20261206));
      }
      DeviceBuffer<std::uint32_t> out(n);
      for (const auto& [name, keys] : inputs) {
        const DeviceBuffer<std::uint32_t> d_in(keys);
        const std::vector<std::uint32_t> want = Sorted(keys);
        for (int again = 0; again < 3; ++again) {
          out.FillBytes(0xFF);
          optimized::Sort(d_in.data(), out.data(), n, ws, s.get());
          s.Synchronize();
          EXPECT_EQ(ws.Errors(s.get()), 0u) << name << ", n " << n;
          const std::vector<std::uint32_t> got = out.ToHost();
          const auto wrong = std::mismatch(got.begin(), got.end(), want.begin());
          EXPECT_TRUE(wrong.first == got.end())
              << "stage " << static_cast<int>(stage) << ", " << name << ", n " << n << ", sort "
              << again << ": first wrong key at " << (wrong.first - got.begin()) << " ("
              << (wrong.first == got.end() ? 0u : *wrong.first) << " for "
              << (wrong.first == got.end() ? 0u : *wrong.second) << ")";
        }
      }
    }
  }
}

TEST_F(OptimizedWorkspace, DoubleBufferSortsInPlaceWithTheDeeperGraph) {
  // The DoubleBuffer form after and before the two-array form on one workspace (one graph):
  // the keys end in the input array, sorted, through the deeper levels and through level 0's
  // buckets of one value (which it cannot write to the array it is still reading).
  for (const bool sampled : {false, true}) {
    optimized::Options options;
    options.sample_first = sampled;
    const std::vector<std::uint32_t> skewed = Keys(3000017, Distribution::kSkewed);
    const std::vector<std::uint32_t> powers =
        AdversarialKeys(1u << 20, Adversary::kPowers, kTestSeed);
    optimized::Workspace ws(skewed.size(), options);
    for (const std::vector<std::uint32_t>* keys : {&skewed, &powers, &skewed}) {
      const std::size_t n = keys->size();
      DeviceBuffer<std::uint32_t> a(*keys), b(n), out(n);
      out.FillBytes(0xFF);
      optimized::Sort(a.data(), out.data(), n, ws, nullptr);
      ASSERT_EQ(out.ToHost(), Sorted(*keys));
      b.FillBytes(0xEE);
      optimized::SortDoubleBuffer(a.data(), b.data(), n, ws, nullptr);
      EXPECT_EQ(ws.Errors(nullptr), 0u);
      ASSERT_EQ(a.ToHost(), Sorted(*keys)) << (sampled ? "sampled" : "equal widths") << " n " << n;
    }
    EXPECT_EQ(ws.graph.builds, 1);
  }
}

TEST_F(OptimizedWorkspace, ConcurrentSortsOnTwoStreams) {
  // Two sorts in flight at once, each with its own workspace, no synchronisation between their
  // launches; one needs deeper levels (its graph loops while the other runs).
  const std::vector<std::uint32_t> a = Keys(3000017, Distribution::kSkewed);
  const std::vector<std::uint32_t> b = Keys(1u << 20, Distribution::kUniform);
  staged::Stream s1, s2;
  optimized::Options equal;  // equal widths at level 0: the skewed cluster goes deeper
  equal.sample_first = false;
  optimized::Workspace ws1(a.size(), equal), ws2(b.size());
  DeviceBuffer<std::uint32_t> in1(a), in2(b), out1(a.size()), out2(b.size());
  for (int rep = 0; rep < 3; ++rep) {
    out1.FillBytes(0xFF);
    out2.FillBytes(0xFF);
    optimized::Sort(in1.data(), out1.data(), a.size(), ws1, s1.get());
    optimized::Sort(in2.data(), out2.data(), b.size(), ws2, s2.get());
    s1.Synchronize();
    s2.Synchronize();
    ASSERT_EQ(out1.ToHost(), Sorted(a)) << "rep " << rep;
    ASSERT_EQ(out2.ToHost(), Sorted(b)) << "rep " << rep;
  }
}

TEST_F(OptimizedWorkspace, EveryProfilesPlanSortsHere) {
  // The tiles and partition each profile's GPU would get (a T4: the scatter partition and the
  // 8192-key tiles), run on this GPU: level 0 alone, deeper levels with a skewed cluster, an
  // adversary.
  const std::vector<std::uint32_t> skewed = Keys(3000017, Distribution::kSkewed);
  const std::vector<std::uint32_t> uniform = Keys((1u << 22) + 3, Distribution::kUniform);
  const std::vector<std::uint32_t> spike = AdversarialKeys(1u << 20, Adversary::kSpike, kTestSeed);
  for (const staged::DeviceLimits& profile : staged::DeviceProfiles()) {
    for (const bool sample : {true, false}) {  // the spike's buckets by value, or its levels
      optimized::Options options;
      options.profile = profile.name;
      options.sample_first = sample;
      for (const std::vector<std::uint32_t>* keys : {&skewed, &uniform, &spike}) {
        SCOPED_TRACE(profile.name + (sample ? " sampled" : " equal widths") + " n " +
                     std::to_string(keys->size()));
        const std::size_t n = keys->size();
        optimized::Workspace ws(n, options);
        EXPECT_EQ(ws.limits().name, profile.name);
        // A Turing block holds 64 KiB, too little for either tile; an A100's or a Hopper's
        // (161 KiB and up) the chunk's, every other the pass's. (Under STAGED_DEVICE_PROFILE the
        // workspace plans for the smaller of the two GPUs.)
        const std::size_t block =
            std::min(profile.smem_per_block, staged::PlanningLimits().smem_per_block);
        EXPECT_EQ(ws.partition(), block < 97 * 1024    ? optimized::PartitionPath::kScatter
                                  : block < 161 * 1024 ? optimized::PartitionPath::kPassTile
                                                       : optimized::PartitionPath::kChunkTile);
        DeviceBuffer<std::uint32_t> in(*keys), out(n);
        out.FillBytes(0xFF);
        optimized::Sort(in.data(), out.data(), n, ws, nullptr);
        EXPECT_EQ(ws.Errors(nullptr), 0u);
        ASSERT_EQ(out.ToHost(), Sorted(*keys)) << "seed " << kTestSeed;
        const std::uint32_t want = !sample           ? optimized::kEqualWidths
                                   : keys == &spike  ? optimized::kSplitters
                                   : keys == &skewed ? optimized::kCore
                                                     : optimized::kEqualWidths;
        EXPECT_EQ(ws.ReadFirstSegment(nullptr).sampled, want);
      }
    }
  }
  optimized::Options t4;
  t4.profile = "t4";
  EXPECT_EQ(optimized::Workspace(1, t4).partition(), optimized::PartitionPath::kScatter);
  // The pass tile on request where the chunk tile would run: a sort through it.
  optimized::Options pass;
  pass.pass_tile = true;
  optimized::Workspace pass_ws(100003, pass);
  const optimized::PartitionPath chosen = optimized::Workspace(1).partition();
  EXPECT_EQ(pass_ws.partition(), chosen == optimized::PartitionPath::kChunkTile
                                     ? optimized::PartitionPath::kPassTile
                                     : chosen);
  const std::vector<std::uint32_t> keys = Keys(100003, Distribution::kUniform);
  DeviceBuffer<std::uint32_t> in(keys), out(keys.size());
  out.FillBytes(0xFF);
  optimized::Sort(in.data(), out.data(), keys.size(), pass_ws, nullptr);
  EXPECT_EQ(pass_ws.Errors(nullptr), 0u);
  EXPECT_EQ(out.ToHost(), Sorted(keys));
}

TEST_F(OptimizedWorkspace, ErrorsReachTheCaller) {
  // A level that cannot be planned leaves keys unsorted: the caller learns why from Errors().
  optimized::Workspace ws(100000);
  const std::vector<std::uint32_t> keys = Keys(100000, Distribution::kUniform);
  DeviceBuffer<std::uint32_t> in(keys), out(keys.size());
  optimized::Sort(in.data(), out.data(), keys.size(), ws, nullptr);
  EXPECT_EQ(ws.Errors(nullptr), 0u);
  // Two spans listed, but a table of one: the list overflowed.
  const optimized::Span spans[] = {{0, 50000, {1, 2}}, {50000, 50000, {3, 4}}};
  ws.spans.CopyFromHost(spans, 2);
  const std::uint32_t two = 2;
  ws.span_count.CopyFromHost(&two, 1);
  optimized::PlanParams params;
  params.target = 3700;
  params.matrix_capacity = ws.matrix_capacity();
  params.bucket_capacity = ws.bucket_capacity();
  params.totals = ws.counts().totals;
  params.max_segments = 1;
  params.first = true;
  optimized::PlanLevel(ws.Spans(), ws.segments.data(), ws.state.data(), params, nullptr);
  EXPECT_EQ(ws.Errors(nullptr), optimized::kErrorListFull);
  // The next sort starts clean.
  optimized::Sort(in.data(), out.data(), keys.size(), ws, nullptr);
  EXPECT_EQ(ws.Errors(nullptr), 0u);
  EXPECT_EQ(out.ToHost(), Sorted(keys));
}

TEST_F(OptimizedWorkspace, CountsHoldWhatThePlannerBounds) {
  // The matrix, the totals and the starts are three allocations, each as long as the planner's
  // bound for the workspace's capacity (so memcheck checks an index against its own piece).
  for (const std::size_t n : {std::size_t{1}, std::size_t{4097}, std::size_t{1000003}}) {
    optimized::Workspace ws(n);
    const optimized::Counts c = ws.counts();
    EXPECT_EQ(c.matrix, ws.matrix.data());
    EXPECT_EQ(c.totals, ws.totals.data());
    EXPECT_EQ(c.starts, ws.starts.data());
    EXPECT_EQ(ws.matrix_capacity(),
              optimized::MatrixCapacity(n, BucketSorter::kCounting, ws.limits()));
    EXPECT_EQ(ws.bucket_capacity(), optimized::BucketCapacity(n));
    EXPECT_EQ(ws.matrix.size(), ws.matrix_capacity()) << "n = " << n;
    EXPECT_EQ(ws.totals.size(), ws.bucket_capacity()) << "n = " << n;
    EXPECT_EQ(ws.starts.size(), ws.bucket_capacity()) << "n = " << n;
  }
}

TEST_F(OptimizedWorkspace, ReusedLargeWorkspaceScansOnlyTheLevel) {
  // A workspace sized for far more keys than the sort, its matrix and bucket totals poisoned:
  // each level zeroes the totals it adds to and scans only those, and reads only the matrix
  // entries its histogram wrote, so the poison changes nothing.
  const std::vector<std::uint32_t> keys = Keys(1000003, Distribution::kSkewed);
  optimized::Options equal;  // equal widths at level 0: the skewed cluster goes deeper
  equal.sample_first = false;
  optimized::Workspace ws(64u << 20, equal);
  ws.matrix.FillBytes(0xFF);
  ws.totals.FillBytes(0xFF);
  ws.starts.FillBytes(0xFF);
  DeviceBuffer<std::uint32_t> in(keys), out(keys.size());
  out.FillBytes(0xFF);
  optimized::Sort(in.data(), out.data(), keys.size(), ws, nullptr);
  EXPECT_EQ(ws.Errors(nullptr), 0u);
  EXPECT_GE(ws.LevelsUsed(nullptr), 2) << "the skewed cluster needs a deeper level";
  EXPECT_EQ(out.ToHost(), Sorted(keys));
  // Each level's scan wrote the starts of its own buckets only (hundreds, not the 1M-odd of
  // the workspace): the starts' last entry, and the matrix's, are as the poison left them.
  EXPECT_EQ(ws.starts.ToHost().back(), 0xFFFFFFFFu) << "the starts' last entry";
  EXPECT_EQ(ws.matrix.ToHost().back(), 0xFFFFFFFFu) << "the matrix's last entry";
}

TEST_F(OptimizedWorkspace, BackToBackSortsWithoutSynchronisation) {
  // The timed loop's pattern: many sorts queued on one stream with no host wait in between.
  const std::vector<std::uint32_t> keys = Keys(2000003, Distribution::kSkewed);
  optimized::Workspace ws(keys.size());
  DeviceBuffer<std::uint32_t> in(keys), out(keys.size());
  staged::Stream s;
  optimized::Sort(in.data(), out.data(), keys.size(), ws, s.get());  // builds the graph
  s.Synchronize();
  out.FillBytes(0xFF);
  for (int rep = 0; rep < 5; ++rep)
    optimized::Sort(in.data(), out.data(), keys.size(), ws, s.get());
  s.Synchronize();
  EXPECT_EQ(out.ToHost(), Sorted(keys));
}

// -------------------------------------------------------------- the largest input: 2^32 - 1

/// Key i of a large input, made on the device: @p value, or a hash of i when @p hashed.
__global__ void FillKeysKernel(std::uint32_t* keys, std::size_t n, std::uint32_t value,
                               bool hashed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ull + 0x5EEDull;  // splitmix64 of i
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    keys[i] = hashed ? static_cast<std::uint32_t>(x ^ (x >> 31)) : value;
  }
}

/// counts[0] += pairs out of order; counts[1] += keys; counts[2] += a mix of each key: the
/// output is sorted and, by its two sums, the same multiset of keys as the input (a check that
/// needs no copy of 16 GiB to the host).
__global__ void FingerprintKernel(const std::uint32_t* keys, std::size_t n,
                                  unsigned long long* counts) {
  unsigned long long unordered = 0, sum = 0, mix = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t k = keys[i];
    if (i + 1 < n && keys[i + 1] < k) ++unordered;
    sum += k;
    mix += (k * 0x9E3779B97F4A7C15ull) ^ (k << 29);
  }
  atomicAdd(&counts[0], unordered);
  atomicAdd(&counts[1], sum);
  atomicAdd(&counts[2], mix);
}

std::vector<unsigned long long> Fingerprint(const std::uint32_t* keys, std::size_t n) {
  DeviceBuffer<unsigned long long> counts(3);
  counts.FillBytes(0);
  FingerprintKernel<<<1024, 256>>>(keys, n, counts.data());
  CUDA_CHECK_LAST_LAUNCH();
  return counts.ToHost();
}

TEST(SortLargest, TwoTo32MinusOneKeys) {
  STAGED_REQUIRE_GPU();
  // kMaxKeys keys through the API: a level-0 bucket of all but one key (over 2^32 - kChunk keys,
  // whose chunk count once wrapped to 0 in 32 bits), and uniform keys.
  constexpr std::size_t n = kMaxKeys;
  std::size_t free_bytes = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t need =
      3 * n * sizeof(std::uint32_t) +
      (optimized::MatrixCapacity(n, BucketSorter::kCounting, staged::PlanningLimits()) +
       optimized::BucketCapacity(n)) *
          sizeof(std::uint32_t) +
      (std::size_t{2} << 30);
  if (free_bytes < need) {
    GTEST_SKIP() << "needs " << staged::FormatBytes(static_cast<double>(need))
                 << " of device memory (an H200 has it)";
  }
  DeviceBuffer<std::uint32_t> in(n), out(n);
  // Equal widths at level 0 for the first input: its bucket of all but one key goes on to
  // level 1 as a span of over 2^32 - kChunk keys (with a sample, level 0 would write it as a
  // bucket of one value at once).
  optimized::Options equal;
  equal.sample_first = false;
  optimized::Workspace ws(n, equal);
  // All 5 but one 0xFFFFFFFF.
  FillKeysKernel<<<4096, 256>>>(in.data(), n, 5u, false);
  CUDA_CHECK_LAST_LAUNCH();
  const std::uint32_t top = 0xFFFFFFFFu;
  staged::CopyToDeviceAndWait(in.data() + n / 3, &top, 1);
  out.FillBytes(0xAB);
  optimized::Sort(in.data(), out.data(), n, ws, nullptr);
  EXPECT_EQ(ws.Errors(nullptr), 0u);
  std::vector<unsigned long long> f = Fingerprint(out.data(), n);
  EXPECT_EQ(f[0], 0u) << "out of order";
  EXPECT_EQ(f[1], 5ull * (n - 1) + top);
  std::uint32_t last = 0, first = 0;
  CUDA_CHECK(cudaMemcpy(&last, out.data() + n - 1, sizeof(last), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(&first, out.data(), sizeof(first), cudaMemcpyDeviceToHost));
  EXPECT_EQ(last, top);
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(ws.LevelsUsed(nullptr), 2) << "the long bucket went on to level 1";
  // Uniform keys.
  FillKeysKernel<<<4096, 256>>>(in.data(), n, 0u, true);
  CUDA_CHECK_LAST_LAUNCH();
  const std::vector<unsigned long long> want = Fingerprint(in.data(), n);
  out.FillBytes(0xAB);
  optimized::Sort(in.data(), out.data(), n, ws, nullptr);
  EXPECT_EQ(ws.Errors(nullptr), 0u);
  f = Fingerprint(out.data(), n);
  EXPECT_EQ(f[0], 0u) << "out of order";
  EXPECT_EQ(f[1], want[1]) << "not the input's keys";
  EXPECT_EQ(f[2], want[2]) << "not the input's keys";
}

}  // namespace
}  // namespace ch03
