/// @file ch03_mppsort_host_test.cu
/// @brief Chapter 03 host tests (no GPU needed): the bucket arithmetic, the level planning and
///        workspace capacities, the CPU references, the adversarial inputs and the bucket
///        sorter's argument check.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "ch03_bucket_reference.hpp"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "gpu_test.hpp"

namespace ch03 {
namespace {

using optimized::BucketSorter;
using staged::Distribution;
using staged::testing::kTestSeed;

/// The limits of the GPU whose plans the lesson quotes (every tile fits).
const staged::DeviceLimits& H200() { return staged::DeviceProfile("h200"); }

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
  for (std::uint32_t h : {1u, 2u, 3u, 64u, 1199u, 2048u}) {
    for (std::uint32_t i = 0; i + 1 < keys.size(); i += 2) {
      const std::uint32_t lo = std::min(keys[i], keys[i + 1]);
      const std::uint32_t hi = std::max(keys[i], keys[i + 1]);
      const std::uint64_t scale = BucketScale(lo, hi, h);
      ASSERT_EQ(ArithmeticBucket(lo, lo, scale), 0u);
      ASSERT_LT(ArithmeticBucket(hi, lo, scale), h) << "seed " << kTestSeed;
      if (h >= 2 && hi > lo) ASSERT_GE(ArithmeticBucket(hi, lo, scale), 1u) << "range must split";
    }
  }
}

TEST(BucketMath, NarrowRangeGivesEveryValueItsOwnBucket) {
  // R <= h: the multiplier is >= 2^32, so distinct keys land in distinct buckets (this is what
  // ends the recursion on few distinct values).
  for (std::uint32_t range : {2u, 3u, 64u}) {
    const std::uint64_t scale = BucketScale(1000, 1000 + range - 1, 64);
    for (std::uint32_t k = 1; k < range; ++k) {
      EXPECT_GT(ArithmeticBucket(1000 + k, 1000, scale), ArithmeticBucket(999 + k, 1000, scale));
    }
  }
}

TEST(Planning, FirstLevelPicksATileThatHoldsN) {
  using optimized::PlanFirstLevel;
  const auto radix = BucketSorter::kRadix, bitonic = BucketSorter::kBitonic;
  const auto counting = BucketSorter::kCounting;
  // The bitonic and radix sorters: the smallest tile whose 8192 buckets hold n.
  EXPECT_EQ(PlanFirstLevel(1, radix, H200()).tile.keys, 4096u);
  EXPECT_EQ(PlanFirstLevel(1, radix, H200()).buckets, 1u);
  EXPECT_EQ(PlanFirstLevel(1u << 20, radix, H200()).tile.keys, 4096u);
  EXPECT_EQ(PlanFirstLevel(1u << 20, radix, H200()).buckets, 284u);  // ceil(2^20 / 3700)
  EXPECT_EQ(PlanFirstLevel(8u << 20, radix, H200()).tile.keys, 4096u);
  EXPECT_EQ(PlanFirstLevel(8u << 20, radix, H200()).buckets, 2268u);
  EXPECT_EQ(PlanFirstLevel(8u << 20, bitonic, H200()).tile.keys, 4096u);
  EXPECT_EQ(PlanFirstLevel(8u << 20, bitonic, H200()).buckets, 2268u);
  // Up to 8192 buckets of 3700 keys (30.3M keys) sort in one level on the 4096-key tile.
  EXPECT_EQ(PlanFirstLevel(8192u * 3700, bitonic, H200()).tile.keys, 4096u);
  EXPECT_EQ(PlanFirstLevel(8192u * 3700, bitonic, H200()).buckets, optimized::kMaxBuckets);
  EXPECT_EQ(PlanFirstLevel(8192u * 3700 + 1, bitonic, H200()).tile.keys, 8192u);
  EXPECT_EQ(PlanFirstLevel(8192u * 3700 + 1, bitonic, H200()).buckets, 4331u);  // ceil(n / 7000)
  EXPECT_EQ(PlanFirstLevel(16u << 20, bitonic, H200()).buckets, 4535u);
  // 64M keys: the radix sorter's large tile holds them in one level of 1891 buckets; the
  // bitonic sorter's buckets all go on to level 1, 512 of them (runs of a 128-byte line).
  EXPECT_EQ(PlanFirstLevel(64u << 20, radix, H200()).tile.keys, 36864u);
  EXPECT_EQ(PlanFirstLevel(64u << 20, radix, H200()).buckets, 1891u);
  EXPECT_EQ(PlanFirstLevel(64u << 20, bitonic, H200()).tile.keys, 8192u);
  EXPECT_EQ(PlanFirstLevel(64u << 20, bitonic, H200()).buckets, 512u);
  EXPECT_EQ(optimized::kOversizedFirstBuckets, 512u);
  EXPECT_EQ(PlanFirstLevel(256u << 20, radix, H200()).buckets, 7562u);
  // The counting sorter: the largest tile that still gives kMinFirstBuckets buckets.
  EXPECT_EQ(PlanFirstLevel(1u << 20, counting, H200()).tile.keys,
            4096u);  // 68 of 16384 keys: too few
  EXPECT_EQ(PlanFirstLevel(1u << 20, counting, H200()).buckets, 284u);
  EXPECT_EQ(PlanFirstLevel(4u << 20, counting, H200()).tile.keys, 8192u);
  EXPECT_EQ(PlanFirstLevel(4u << 20, counting, H200()).buckets, 600u);
  EXPECT_EQ(PlanFirstLevel(511u * 15500, counting, H200()).tile.keys, 8192u);
  EXPECT_EQ(PlanFirstLevel(511u * 15500 + 1, counting, H200()).tile.keys, 16384u);
  EXPECT_EQ(PlanFirstLevel(511u * 15500 + 1, counting, H200()).buckets,
            optimized::kMinFirstBuckets);
  EXPECT_EQ(PlanFirstLevel(8u << 20, counting, H200()).buckets, 542u);
  // 64M keys in one level; 256M go on to level 1.
  EXPECT_EQ(PlanFirstLevel(64u << 20, counting, H200()).tile.keys, 16384u);
  EXPECT_EQ(PlanFirstLevel(64u << 20, counting, H200()).buckets, 4330u);
  EXPECT_EQ(PlanFirstLevel(256u << 20, counting, H200()).tile.keys, 16384u);
  EXPECT_EQ(PlanFirstLevel(256u << 20, counting, H200()).buckets,
            optimized::kOversizedFirstBuckets);
  const optimized::FirstLevelPlan p = PlanFirstLevel(100003, radix, H200());
  EXPECT_EQ(p.chunks, (100003 + optimized::kChunk - 1) / optimized::kChunk);
  EXPECT_EQ(p.matrix, std::uint64_t{p.buckets} * p.chunks);
}

TEST(Planning, TargetsLeaveRoomForPoissonSpread) {
  for (BucketSorter s : {BucketSorter::kCounting, BucketSorter::kRadix, BucketSorter::kBitonic}) {
    const std::vector<optimized::TileShape> tiles = optimized::TilesOf(s, H200());
    for (std::size_t i = 0; i < tiles.size(); ++i) {
      const double spread = std::sqrt(static_cast<double>(tiles[i].target));
      EXPECT_GE(tiles[i].keys, tiles[i].target + 6.5 * spread) << "tile " << tiles[i].keys;
      if (i > 0) EXPECT_GT(tiles[i].keys, tiles[i - 1].keys);
    }
    // Deeper levels: the radix sorter's largest tile, the others' smallest.
    EXPECT_EQ(optimized::DeeperTile(s, H200()).keys,
              s == BucketSorter::kRadix ? tiles.back().keys : tiles.front().keys);
  }
}

TEST(Planning, CapacitiesCoverLevelZeroAndDeeperLevels) {
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    for (std::uint64_t n : {1ull, 4097ull, 1ull << 20, 64ull << 20, 0xFFFFFFFFull}) {
      for (BucketSorter s :
           {BucketSorter::kCounting, BucketSorter::kRadix, BucketSorter::kBitonic}) {
        const std::uint64_t cap = optimized::MatrixCapacity(n, s, limits);
        EXPECT_GE(cap, optimized::PlanFirstLevel(n, s, limits).matrix) << limits.name;
        EXPECT_GE(cap, n / 8 + n / 32);
        EXPECT_LT(cap, std::uint64_t{1} << 32) << "matrix offsets are 32-bit";
        // Every span holds more keys than the smallest tile.
        EXPECT_GE(optimized::SpanCapacity(n, s, limits) * 4097, n);
        // Bucket totals: level 0's, and a deeper level of the shortest spans (4097 keys each),
        // each with kMinDeepBuckets buckets, the most per key; longer spans have fewer per key.
        const std::uint64_t buckets = optimized::BucketCapacity(n);
        EXPECT_GE(buckets, optimized::PlanFirstLevel(n, s, limits).bucket_bound);
        EXPECT_GE(buckets, n / 4097 * optimized::kMinDeepBuckets);
        EXPECT_GE(buckets, n / 4097 * 2 + n / optimized::DeeperTile(s, limits).target) << "level 1";
        EXPECT_LT(buckets, std::uint64_t{1} << 32);
      }
    }
  }
}

TEST(Planning, CapacityCoversLevelZeroOfEverySmallerN) {
  // A workspace sized for `cap` keys serves every n <= cap without reallocating; level 0's
  // matrix is not monotone in n where the tile changes (4096 buckets of the small tile just
  // below 15.2M keys, 2397 of the next at 16M).
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    for (BucketSorter s : {BucketSorter::kCounting, BucketSorter::kRadix, BucketSorter::kBitonic}) {
      const std::vector<optimized::TileShape> tiles = optimized::TilesOf(s, limits);
      std::vector<std::uint64_t> caps = {16u << 20, 64u << 20, 256u << 20};
      // Where the tile changes: a tile's kMaxBuckets bound, and the counting sorter's switch to
      // a larger tile once it gets kMinFirstBuckets buckets.
      std::vector<std::uint64_t> bounds;
      for (const optimized::TileShape& tile : tiles) {
        bounds.push_back(std::uint64_t{optimized::kMaxBuckets} * tile.target);
        bounds.push_back(std::uint64_t{optimized::kMinFirstBuckets - 1} * tile.target);
      }
      for (const std::uint64_t bound : bounds) {
        caps.insert(caps.end(), {bound - 1, bound, bound + 1, 2 * bound});
      }
      for (const std::uint64_t cap : caps) {
        const std::uint64_t capacity = optimized::MatrixCapacity(cap, s, limits);
        std::vector<std::uint64_t> sizes = {1, cap};
        for (std::uint64_t k = 1; k < 500; ++k) sizes.push_back(cap * k / 500 + 1);
        for (const std::uint64_t bound : bounds)
          sizes.insert(sizes.end(), {bound - 1, bound, bound + 1});
        for (const std::uint64_t n : sizes) {
          if (n > cap) continue;
          ASSERT_LE(optimized::PlanFirstLevel(n, s, limits).matrix, capacity)
              << limits.name << " cap " << cap << " n " << n;
        }
      }
    }
  }
}

// ---------------------------------------------------------------- architecture limits

TEST(ArchitectureLimits, EveryProfileGetsTilesAndAPartitionThatFitItsBlocks) {
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    SCOPED_TRACE(limits.name);
    for (BucketSorter s : {BucketSorter::kCounting, BucketSorter::kRadix, BucketSorter::kBitonic}) {
      const std::vector<optimized::TileShape> tiles = optimized::TilesOf(s, limits);
      ASSERT_FALSE(tiles.empty());
      EXPECT_EQ(tiles.front().keys, 4096u) << "the smallest tile fits every GPU";
      for (const optimized::TileShape& tile : tiles) {
        EXPECT_LE(tile.smem, limits.smem_per_block) << tile.keys;
        // 16 keys per thread, except the radix sorter's 36864-key tile (512 threads of 72).
        const int threads = static_cast<int>(std::min<std::uint32_t>(tile.keys / 16, 512));
        EXPECT_GE(staged::BlocksPerSmUnder(limits, threads, tile.smem, 32), 1) << tile.keys;
      }
      for (std::uint64_t n : {1ull, 1ull << 20, 64ull << 20, 0xFFFFFFFFull}) {
        const optimized::FirstLevelPlan plan = optimized::PlanFirstLevel(n, s, limits);
        EXPECT_LE(plan.tile.smem, limits.smem_per_block) << n;
      }
      EXPECT_LE(optimized::DeeperTile(s, limits).smem, limits.smem_per_block);
      EXPECT_LE(optimized::OverflowTile(s, limits).smem, limits.smem_per_block);
    }
    // The chunk tile where it fits, else the pass tile, else the scatter: in each case a
    // 1024-thread block fits.
    const optimized::PartitionPath path = optimized::ChoosePartition(limits);
    const std::size_t smem = path == optimized::PartitionPath::kChunkTile
                                 ? 4 * (std::size_t{optimized::kChunk} + optimized::kMaxBuckets)
                             : path == optimized::PartitionPath::kPassTile
                                 ? 4 * (std::size_t{optimized::kChunkPass} + optimized::kMaxBuckets)
                                 : 4 * std::size_t{optimized::kMaxBuckets};
    EXPECT_LE(smem + 1024, optimized::PartitionSharedBytes(path));
    EXPECT_LE(optimized::PartitionSharedBytes(path), limits.smem_per_block);
    EXPECT_GE(staged::BlocksPerSmUnder(limits, optimized::kChunkThreads, smem, 64), 1);
  }
}

TEST(ArchitectureLimits, SmallerBlocksTakeTheFallbacks) {
  // A T4 block holds 64 KiB: no pass tile (97 KiB), no 16384-key counting tile; a 99 KiB block
  // (RTX 30/40/50) holds both, but not the chunk tile (161 KiB) or the radix sorter's
  // 36864-key tile, which need an A100's.
  const staged::DeviceLimits& t4 = staged::DeviceProfile("t4");
  EXPECT_EQ(optimized::ChoosePartition(t4), optimized::PartitionPath::kScatter);
  EXPECT_EQ(optimized::TilesOf(BucketSorter::kCounting, t4).back().keys, 8192u);
  EXPECT_EQ(optimized::OverflowTile(BucketSorter::kCounting, t4).keys, 8192u);
  EXPECT_EQ(optimized::PlanFirstLevel(64u << 20, BucketSorter::kCounting, t4).tile.keys, 8192u);
  const staged::DeviceLimits& rtx3060 = staged::DeviceProfile("rtx3060");
  EXPECT_EQ(optimized::ChoosePartition(rtx3060), optimized::PartitionPath::kPassTile);
  EXPECT_EQ(optimized::TilesOf(BucketSorter::kCounting, rtx3060).back().keys, 16384u);
  EXPECT_EQ(optimized::TilesOf(BucketSorter::kRadix, rtx3060).back().keys, 8192u);
  EXPECT_EQ(optimized::DeeperTile(BucketSorter::kRadix, rtx3060).keys, 8192u);
  EXPECT_EQ(optimized::OverflowTile(BucketSorter::kRadix, rtx3060).keys, 0u);
  EXPECT_EQ(optimized::TilesOf(BucketSorter::kRadix, staged::DeviceProfile("a100")).back().keys,
            36864u);
  EXPECT_EQ(optimized::ChoosePartition(staged::DeviceProfile("a100")),
            optimized::PartitionPath::kChunkTile);
  EXPECT_EQ(optimized::ChoosePartition(H200()), optimized::PartitionPath::kChunkTile);
}

TEST(Planning, LevelBoundFollowsThePlannersNarrowing) {
  // Keys over all 2^32 values: 9 levels at most whatever level 0's bucket count, within
  // kMaxLevels; more level-0 buckets leave narrower buckets, so fewer levels.
  EXPECT_EQ(optimized::LevelBound(std::uint64_t{1} << 32, 1), 9u);
  EXPECT_LE(optimized::LevelBound(std::uint64_t{1} << 32, 1), optimized::kMaxLevels);
  EXPECT_EQ(optimized::LevelBound(std::uint64_t{1} << 32, 2048), 7u);
  for (std::uint32_t h : {1u, 2u, 27u, 2048u, 8192u}) {
    for (std::uint64_t range : {1ull, 2ull, 1025ull, 1ull << 20, 1ull << 32}) {
      EXPECT_LE(optimized::LevelBound(range, h), optimized::LevelBound(std::uint64_t{1} << 32, 1));
      EXPECT_GE(optimized::LevelBound(range, h), 3u);
    }
  }
}

TEST(SplitterMap, MatchesLowerBoundAndGivesEachSplitterValueItsOwnBucket) {
  // Bucket 2j + 1 for a key equal to a splitter, 2j between splitters, j = splitters below the
  // key (std::lower_bound): repeated splitters, one splitter, every m from 1 to 70 (powers of
  // two and not), the extreme keys.
  std::mt19937 rng(static_cast<unsigned>(kTestSeed));
  for (std::uint32_t m = 1; m <= 70; ++m) {
    std::vector<std::uint32_t> s(m);
    for (auto& v : s) v = rng() % 64 == 0 ? 0xFFFFFFFFu : (rng() % 4 == 0 ? 7u : rng() % 1000);
    std::sort(s.begin(), s.end());
    const optimized::SplitterMap map = optimized::SplitterMapOf(s.data(), m);
    for (std::uint32_t key : {0u, 6u, 7u, 8u, 999u, 1000u, 0xFFFFFFFEu, 0xFFFFFFFFu}) {
      const auto j =
          static_cast<std::uint32_t>(std::lower_bound(s.begin(), s.end(), key) - s.begin());
      const std::uint32_t want = 2 * j + (j < m && s[j] == key ? 1 : 0);
      ASSERT_EQ(map(key), want) << "m " << m << " key " << key;
      ASSERT_LE(map(key), 2 * m);
      EXPECT_EQ(optimized::SplitterMap::Final(map(key)), j < m && s[j] == key);
    }
    for (int t = 0; t < 200; ++t) {
      const std::uint32_t key = rng() % 1100;
      const auto j =
          static_cast<std::uint32_t>(std::lower_bound(s.begin(), s.end(), key) - s.begin());
      ASSERT_EQ(map(key), 2 * j + (j < m && s[j] == key ? 1 : 0)) << "m " << m << " key " << key;
    }
  }
}

TEST(Planning, EqualWidthBoundsHoldExactlyTheKeysOfTheirBucket) {
  // The reference: the first value of each bucket found by bisection over ArithmeticBucket,
  // which is non-decreasing in the key; bucket k holds [first(k), first(k + 1) - 1].
  std::mt19937 rng(kTestSeed);
  const auto check = [](optimized::KeyRange range, std::uint32_t h) {
    SCOPED_TRACE("range [" + std::to_string(range.min) + ", " + std::to_string(range.max) +
                 "], h = " + std::to_string(h));
    const std::uint64_t scale = BucketScale(range.min, range.max, h);
    const auto first = [&](std::uint32_t k) {  // smallest key whose bucket is >= k
      return testing::FirstKeyOfBucket(range.min, range.max, scale, k);
    };
    for (std::uint32_t k = 0; k < h; ++k) {
      const std::uint64_t lo = first(k), end = first(k + 1);
      const optimized::KeyRange got = optimized::EqualWidthBounds(range, h, k);
      if (lo >= end) {
        EXPECT_GT(got.min, got.max) << "bucket " << k << " holds no value";
      } else {
        EXPECT_EQ(got.min, lo) << "bucket " << k;
        EXPECT_EQ(got.max, end - 1) << "bucket " << k;
      }
    }
  };
  check({0, 0xFFFFFFFFu}, 512);
  check({0, 0xFFFFFFFFu}, optimized::kMaxBuckets);
  check({7, 11}, 5);  // one value per bucket
  check({7, 9}, 5);   // fewer values than buckets: some buckets hold none
  check({100, 612}, 512);
  check({0xFFFFFF00u, 0xFFFFFFFFu}, 3);
  for (int trial = 0; trial < 200; ++trial) {
    const std::uint32_t a = rng(), b = rng();
    const std::uint32_t h = 2 + rng() % (optimized::kMaxBuckets - 1);
    if (a != b) check({std::min(a, b), std::max(a, b)}, h);
  }
}

TEST(Planning, BlockReducesAllButClusters) {
  using optimized::BlockReduces;
  using optimized::kBlockMinMaxKeys;
  // Up to kBlockMinMaxKeys, whatever the segment.
  EXPECT_TRUE(BlockReduces(kBlockMinMaxKeys, 64u << 20, 4330));
  EXPECT_FALSE(BlockReduces(kBlockMinMaxKeys + 1, 64u << 20, 4330)) << "a cluster at 64M";
  // Level 0 of 256M keys, 512 buckets of 512Ki keys on average: each is reduced by its block
  // unless it holds over twice that (a cluster the level-0 sample missed).
  EXPECT_TRUE(BlockReduces((1u << 19) + 5000, 256u << 20, 512));
  EXPECT_TRUE(BlockReduces(1u << 20, 256u << 20, 512));
  EXPECT_FALSE(BlockReduces((1u << 20) + 1, 256u << 20, 512));
  // No overflow at the largest n.
  EXPECT_FALSE(BlockReduces(0xFFFFFFFFu, 0xFFFFFFFFu, 512));
  EXPECT_TRUE(BlockReduces(0xFFFFFFFFu / 512, 0xFFFFFFFFu, 512));
}

TEST(Planning, EitherLevelZeroMapFitsTheMatrix) {
  // The 2m + 1 buckets around m <= kMaxFewValues sampled values, like h0, fit the workspace's
  // matrix at every n, on every profile.
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    for (const BucketSorter sorter :
         {BucketSorter::kCounting, BucketSorter::kBitonic, BucketSorter::kRadix}) {
      for (std::uint64_t n : {1ull, 131072ull, 1000003ull, 8388608ull, 30000000ull, 67108864ull,
                              268435456ull, (1ull << 32) - 1}) {
        const optimized::FirstLevelPlan plan = optimized::PlanFirstLevel(n, sorter, limits);
        EXPECT_GE(plan.matrix_bound, plan.matrix);
        EXPECT_GE(plan.matrix_bound, (2ull * optimized::kMaxFewValues + 1) * plan.chunks);
        EXPECT_GE(plan.matrix_bound, std::uint64_t{plan.max_buckets} * plan.chunks);
        EXPECT_LE(plan.max_buckets, optimized::kMaxBuckets);
        EXPECT_GE(plan.max_buckets, std::min(2 * plan.buckets, optimized::kMaxBuckets));
        EXPECT_LE(plan.matrix_bound, optimized::MatrixCapacity(n, sorter, limits))
            << limits.name << " n " << n;
        EXPECT_EQ(plan.matrix_bound, std::uint64_t{plan.bucket_bound} * plan.chunks);
        EXPECT_LE(plan.bucket_bound, optimized::kMaxBuckets);
        EXPECT_LE(plan.bucket_bound, optimized::BucketCapacity(n));
      }
    }
  }
}

TEST(SampledCore, CrowdedSamplesFollowTheirRule) {
  // Four times the mean sample count per bin, or the mean + 8 sigma + 8 where that is more.
  EXPECT_EQ(optimized::CrowdedSamples(1), 4 * optimized::kSampleKeys);
  EXPECT_EQ(optimized::CrowdedSamples(512), 64u);   // mean 16: 64 > 16 + 32 + 8
  EXPECT_EQ(optimized::CrowdedSamples(2048), 28u);  // mean 4: 4 + 16 + 8 > 16
  EXPECT_EQ(optimized::CrowdedSamples(8192), 17u);  // mean 1: 1 + 8 + 8
}

TEST(SampledCore, ThreePiecesKeepOrderAndTheirBuckets) {
  // Level 0's core map: `low` buckets below the core, `high` above it, the rest over it; keys
  // in order get buckets in order, each piece only its own, including the range's extremes.
  for (const optimized::KeyRange range :
       {optimized::KeyRange{0, 0xFFFFFFFFu}, optimized::KeyRange{1000, 5000000}}) {
    for (const optimized::KeyRange core : {optimized::KeyRange{range.min + 100, range.min + 65635},
                                           optimized::KeyRange{range.min + 1, range.max - 1}}) {
      for (const std::uint32_t low : {1u, 2u, 27u}) {
        for (const std::uint32_t high : {1u, 3u, 27u}) {
          const std::uint32_t h = 542;
          const optimized::CoreMap map = optimized::CoreMapOf(range, core, low, high, h);
          // (An end of fewer values than buckets leaves its last buckets empty.)
          EXPECT_EQ(map(range.min), 0u);
          EXPECT_LT(map(core.min - 1), low);
          EXPECT_EQ(map(core.min), low);
          EXPECT_EQ(map(core.max), h - high - 1);
          EXPECT_EQ(map(core.max + 1), h - high);
          EXPECT_GE(map(range.max), h - high);
          EXPECT_LT(map(range.max), h);
          if (core.min - range.min >= low) EXPECT_EQ(map(core.min - 1), low - 1);
          if (range.max - core.max >= high) EXPECT_EQ(map(range.max), h - 1);
          std::uint32_t prev = 0;
          const std::uint64_t width = std::uint64_t{range.max} - range.min;
          for (std::uint64_t t = 0; t <= 4000; ++t) {
            const auto key = static_cast<std::uint32_t>(range.min + width * t / 4000);
            const std::uint32_t b = map(key);
            ASSERT_GE(b, prev) << "monotone at " << key;
            ASSERT_LT(b, h);
            ASSERT_EQ(key < core.min, b < low) << key;
            ASSERT_EQ(key > core.max, b >= h - high) << key;
            prev = b;
          }
        }
      }
    }
  }
  // One bucket per value when the core has as many buckets as values.
  const optimized::CoreMap values = optimized::CoreMapOf(
      optimized::KeyRange{0, 0xFFFFFFFFu}, optimized::KeyRange{1000, 2023}, 1, 1, 1026);
  for (std::uint32_t v = 1000; v <= 2023; ++v) ASSERT_EQ(values(v), 1 + (v - 1000));
}

TEST(SampledCore, PiecesGetBucketsForTheirSamplesAndTheirError) {
  // At least the piece's share of h0 with three standard deviations of its sample count to
  // spare (so that its buckets hold no more than the tile's target on average), not much more
  // than five, and at least one bucket.
  for (const std::uint32_t h : {284u, 542u, 4330u}) {
    std::uint32_t prev = 0;
    for (std::uint32_t s = 0; s <= optimized::kSampleKeys; ++s) {
      const std::uint32_t b = optimized::PieceBuckets(s, h);
      const double sd = std::sqrt(static_cast<double>(s));
      ASSERT_GE(b, 1u);
      ASSERT_GE(b, prev) << "more samples, fewer buckets at " << s;
      ASSERT_GE(b * double{optimized::kSampleKeys}, (s + 3.0 * sd) * h) << s;
      ASSERT_LE(b * double{optimized::kSampleKeys},
                (s + 5.0 * sd + 5.0) * h + optimized::kSampleKeys)
          << s;
      prev = b;
    }
  }
}

TEST(SampledCore, CorePiecesWidenTheCrowdAndKeepWholeValuesPerBucket) {
  const optimized::KeyRange full{0, 0xFFFFFFFFu};
  // Values of the map's core buckets: most values any bucket holds, and whether each value's
  // bucket is its own.
  const auto widest = [](const optimized::KeyRange& range, const optimized::CorePieces& p) {
    const optimized::CoreMap map =
        optimized::CoreMapOf(range, p.core, p.low, p.high, p.low + p.over + p.high, p.scale);
    std::vector<std::uint32_t> values(p.low + p.over + p.high, 0);
    for (std::uint64_t v = p.core.min; v <= p.core.max; ++v) {
      ++values[map(static_cast<std::uint32_t>(v))];
    }
    return *std::max_element(values.begin() + p.low, values.end() - p.high);
  };
  // A skewed cluster 65536 values wide with 7382 of the 8192 samples, 502 below and 308 above,
  // at 8M keys (h0 = 542).
  const optimized::KeyRange cluster{2651070089u, 2651135623u};
  const optimized::CorePieces p = optimized::PlanCorePieces(full, cluster, 64, 502, 308, 542, 1084);
  EXPECT_EQ(p.low, optimized::PieceBuckets(502, 542));
  EXPECT_EQ(p.high, optimized::PieceBuckets(308, 542));
  const std::uint32_t planned = optimized::PieceBuckets(7382, 542) + 2;
  EXPECT_GE(p.over, planned);
  // Widened by one of its buckets each side (at least the 64 asked for), the same both sides.
  const std::uint32_t margin = cluster.min - p.core.min;
  EXPECT_EQ(p.core.max - cluster.max, margin);
  EXPECT_GE(margin, 64u);
  EXPECT_GE(std::uint64_t{margin} * (planned - 2), std::uint64_t{cluster.max} - cluster.min + 1);
  EXPECT_LT(std::uint64_t{margin - 1} * (planned - 2),
            std::uint64_t{cluster.max} - cluster.min + 1);
  // Rounding gives no bucket more values than the planned mean.
  const std::uint64_t core_values = std::uint64_t{p.core.max} - p.core.min + 1;
  EXPECT_LE(std::uint64_t{widest(full, p)} * planned, core_values);

  // A narrow crowd (1024 values and a far key, at 8M keys): a bucket per value, margins too.
  const optimized::KeyRange outlier_range{5000, 0xFFFFFFF0u};
  const optimized::CorePieces narrow =
      optimized::PlanCorePieces(outlier_range, optimized::KeyRange{5000, 6023}, 2, 0, 1, 542, 1084);
  EXPECT_EQ(narrow.core.min, 5000u);  // the crowd starts the range: nothing below it
  EXPECT_EQ(narrow.low, 1u);
  EXPECT_GT(narrow.core.max, 6023u);
  EXPECT_EQ(narrow.over, narrow.core.max - narrow.core.min + 1);
  EXPECT_EQ(widest(outlier_range, narrow), 1u);
  // At 1M keys (h0 = 284, at most 568 buckets) the same crowd gets 3 values per bucket.
  const optimized::CorePieces three =
      optimized::PlanCorePieces(outlier_range, optimized::KeyRange{5000, 6023}, 2, 0, 1, 284, 568);
  EXPECT_EQ(widest(outlier_range, three), 3u);
  EXPECT_LE(three.low + three.over + three.high, 568u);

  // A crowd over the whole key range: nothing below or above, and no overflow of the margins.
  const optimized::CorePieces all = optimized::PlanCorePieces(full, full, 2, 0, 0, 542, 1084);
  EXPECT_EQ(all.core.min, 0u);
  EXPECT_EQ(all.core.max, 0xFFFFFFFFu);
  EXPECT_EQ(all.low, 1u);
  EXPECT_EQ(all.high, 1u);
  EXPECT_GT(all.over, 0u);
  // No room: the core gets what is left, or none.
  EXPECT_EQ(optimized::PlanCorePieces(full, cluster, 64, 502, 308, 542, 100).over,
            100 - p.low - p.high);
  EXPECT_EQ(optimized::PlanCorePieces(full, cluster, 64, 502, 308, 542, p.low + p.high).over, 0u);
}

TEST(SampledCore, NoCoreBucketHoldsMoreValuesThanPlannedForAnyWidth) {
  // The scale of buckets of per_bucket values (`WholeValuesScale`), for every (values, planned)
  // pair up to 3000 values: no bucket holds more than per_bucket = values / planned values,
  // the buckets come in order, and there are at least as many as planned. (floor(planned 2^32 /
  // values) gave about 6 % of these pairs a bucket of one value more: 9 values in 3 buckets,
  // a bucket of 4.)
  for (std::uint64_t values = 3; values <= 3000; ++values) {
    for (std::uint64_t planned = 3; planned <= values; planned += planned < 40 ? 1 : 37) {
      const std::uint64_t per_bucket = values / planned;
      const std::uint64_t scale = optimized::WholeValuesScale(per_bucket);
      const std::uint64_t over = (((values - 1) * scale) >> 32) + 1;
      ASSERT_GE(over, planned) << values << " " << planned;
      std::uint64_t run = 0, prev = 0;
      for (std::uint64_t x = 0; x < values; ++x) {
        const std::uint64_t b = (x * scale) >> 32;
        ASSERT_LT(b, over);
        ASSERT_LE(b, prev + 1) << "a bucket skipped";
        run = (x > 0 && b == prev) ? run + 1 : 1;
        ASSERT_LE(run, per_bucket) << values << " values, " << planned << " planned";
        prev = b;
      }
    }
  }
  // Cores as wide as the key range allows: the first key of each bucket is at most per_bucket
  // after the first key of the one before.
  for (const std::uint64_t values : {std::uint64_t{1} << 32, (std::uint64_t{1} << 32) - 1,
                                     std::uint64_t{3000000000u}, std::uint64_t{2147483648u}}) {
    for (const std::uint64_t planned : {3u, 1000u, 4000u, 8000u, 8190u}) {
      const std::uint64_t per_bucket = values / planned;
      const std::uint64_t scale = optimized::WholeValuesScale(per_bucket);
      const std::uint64_t over = (((values - 1) * scale) >> 32) + 1;
      ASSERT_GE(over, planned);
      std::uint64_t start = 0;
      for (std::uint64_t b = 1; b < over; ++b) {
        const std::uint64_t first = ((b << 32) + scale - 1) / scale;  // least x in bucket b
        ASSERT_LE(first - start, per_bucket) << values << " " << planned << " bucket " << b - 1;
        start = first;
      }
      ASSERT_LE(values - start, per_bucket) << values << " " << planned << " last bucket";
    }
  }
  // Through the planner: narrow crowds with a far key, at the bucket counts of 1M and 8M keys,
  // every core bucket within the planned values and the core's keys in the core's buckets.
  const optimized::KeyRange range{5000, 0xFFFFFFF0u};
  for (const std::uint32_t h0 : {284u, 542u}) {
    const std::uint32_t planned = optimized::PieceBuckets(optimized::kSampleKeys - 1, h0) + 2;
    for (std::uint32_t width = 3; width <= 3000; ++width) {
      const optimized::CorePieces p = optimized::PlanCorePieces(
          range, optimized::KeyRange{5000, 5000 + width - 1}, 2, 0, 1, h0, 2 * h0);
      ASSERT_GT(p.over, 0u);
      const std::uint64_t values = std::uint64_t{p.core.max} - p.core.min + 1;
      const std::uint64_t per_bucket = std::max<std::uint64_t>(values / planned, 1);
      const optimized::CoreMap map =
          optimized::CoreMapOf(range, p.core, p.low, p.high, p.low + p.over + p.high, p.scale);
      std::vector<std::uint32_t> held(p.low + p.over + p.high, 0);
      for (std::uint64_t v = p.core.min; v <= p.core.max; ++v) {
        const std::uint32_t b = map(static_cast<std::uint32_t>(v));
        ASSERT_GE(b, p.low);
        ASSERT_LT(b, p.low + p.over);
        ++held[b];
      }
      // Whole values per bucket unless the core would need more buckets than are left.
      if (p.scale == 0) {
        ASSERT_EQ(p.low + p.over + p.high, 2 * h0) << "equal widths with room to spare";
      } else {
        ASSERT_LE(*std::max_element(held.begin(), held.end()), per_bucket)
            << "crowd of " << width << " values, h0 " << h0;
      }
    }
  }
}

TEST(SampledCore, EndsAndEqualWidthsBetween) {
  // Keys below the core go to bucket 0, above it to h - 1, and the core's keys to 1 .. h - 2 in
  // order; a one-value core is bucket 1; the full key range does not overflow.
  for (const optimized::KeyRange core :
       {optimized::KeyRange{1000, 100999}, optimized::KeyRange{5, 5},
        optimized::KeyRange{0, 0xFFFFFFFFu}, optimized::KeyRange{0xFFFFFFF0u, 0xFFFFFFFFu}}) {
    for (std::uint32_t h : {3u, 4u, 100u, optimized::kMaxDeeperBuckets}) {
      const optimized::CoreMap map = optimized::CoreMapOf(core, h);
      if (core.min > 0) EXPECT_EQ(map(core.min - 1), 0u);
      EXPECT_EQ(map(0), core.min > 0 ? 0u : 1u);
      if (core.max < 0xFFFFFFFFu) EXPECT_EQ(map(core.max + 1), h - 1);
      EXPECT_EQ(map(core.min), 1u);
      // The core's largest key is in its last bucket when the core has a value per bucket.
      const std::uint64_t values = std::uint64_t{core.max} - core.min + 1;
      if (values >= h - 2) EXPECT_EQ(map(core.max), h - 2);
      EXPECT_LE(map(core.max), h - 2);
      std::uint32_t prev = 1;
      const std::uint64_t width = std::uint64_t{core.max} - core.min;
      for (std::uint64_t t = 0; t <= 1000; ++t) {
        const auto key = static_cast<std::uint32_t>(core.min + width * t / 1000);
        const std::uint32_t b = map(key);
        ASSERT_GE(b, prev) << "monotone";
        ASSERT_LE(b, h - 2);
        prev = b;
      }
    }
  }
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

TEST(Adversaries, ParseAndShape) {
  for (Adversary a :
       {Adversary::kNone, Adversary::kPowers, Adversary::kSpike, Adversary::kOutlier}) {
    EXPECT_EQ(ParseAdversary(AdversaryName(a)), a);
  }
  EXPECT_THROW(ParseAdversary("zipf"), staged::UsageError);
  const std::size_t n = 100000;
  const std::vector<std::uint32_t> powers = AdversarialKeys(n, Adversary::kPowers, kTestSeed);
  for (std::uint32_t k : powers) ASSERT_EQ(k & (k - 1), 0u) << k << " is not 0 or 2^k";
  EXPECT_GT(std::count(powers.begin(), powers.end(), 0u), 2000);
  EXPECT_GT(std::count(powers.begin(), powers.end(), 0x80000000u), 2000);
  const std::vector<std::uint32_t> spike = AdversarialKeys(n, Adversary::kSpike, kTestSeed);
  EXPECT_GT(std::count(spike.begin(), spike.end(), 0x5EED1234u), 99700);
  EXPECT_LT(std::count(spike.begin(), spike.end(), 0x5EED1234u), 100000);
  const std::vector<std::uint32_t> outlier = AdversarialKeys(n, Adversary::kOutlier, kTestSeed);
  EXPECT_EQ(std::count(outlier.begin(), outlier.end(), 0xFFFFFFFFu), 1);
  for (std::uint32_t k : outlier) ASSERT_TRUE(k == 0xFFFFFFFFu || (k >= 1000 && k < 2024));
  EXPECT_EQ(AdversarialKeys(n, Adversary::kSpike, kTestSeed), spike) << "not reproducible";
}

TEST(Planning, SortBucketsRejectsUnknownTiles) {
  const optimized::Level lv{nullptr, nullptr, false};
  const optimized::Buffers b{nullptr, nullptr, nullptr};
  EXPECT_THROW(
      optimized::SortBuckets(lv, b, nullptr, {}, {}, BucketSorter::kBitonic, 36864, 0, 1, nullptr),
      std::invalid_argument);
  // An overflow list needs an overflow tile larger than the level's.
  const optimized::SpanList overflow{nullptr, nullptr, 1};
  EXPECT_THROW(optimized::SortBuckets(lv, b, nullptr, {}, overflow, BucketSorter::kCounting, 16384,
                                      16384, 1, nullptr),
               std::invalid_argument);
  EXPECT_THROW(optimized::SortBuckets(lv, b, nullptr, {}, overflow, BucketSorter::kRadix, 36864,
                                      8192, 1, nullptr),
               std::invalid_argument);
  EXPECT_THROW(optimized::SortOverflow(lv, b, overflow, BucketSorter::kRadix, 36864, nullptr),
               std::invalid_argument);
}

TEST(Planning, OverflowTileIsTheLargestAboveTheDeeperTile) {
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    for (const BucketSorter sorter :
         {BucketSorter::kCounting, BucketSorter::kBitonic, BucketSorter::kRadix}) {
      const std::vector<optimized::TileShape> tiles = optimized::TilesOf(sorter, limits);
      const optimized::TileShape over = optimized::OverflowTile(sorter, limits);
      const optimized::TileShape deeper = optimized::DeeperTile(sorter, limits);
      if (deeper.keys == tiles.back().keys) {
        EXPECT_EQ(over.keys, 0u) << "the deeper tile is already the largest";
      } else {
        EXPECT_EQ(over.keys, tiles.back().keys);
        EXPECT_GT(over.keys, deeper.keys);
      }
    }
  }
  EXPECT_EQ(optimized::OverflowTile(BucketSorter::kCounting, H200()).keys, 16384u);
  EXPECT_EQ(optimized::OverflowTile(BucketSorter::kBitonic, H200()).keys, 8192u);
  EXPECT_EQ(optimized::OverflowTile(BucketSorter::kRadix, H200()).keys, 0u);
}

}  // namespace
}  // namespace ch03
