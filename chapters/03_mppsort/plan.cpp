/// @file plan.cpp
/// @brief Host-side planning of the optimized mppSort: level 0's tile and bucket count, and the
///        bounds the workspace is sized by.
#include "chapters/03_mppsort/plan.hpp"

#include <algorithm>

namespace ch03::optimized {

PartitionPath ChoosePartition(const staged::DeviceLimits& limits) {
  for (const PartitionPath path : {PartitionPath::kChunkTile, PartitionPath::kPassTile}) {
    if (PartitionSharedBytes(path) <= limits.smem_per_block) return path;
  }
  return PartitionPath::kScatter;
}

std::vector<TileShape> TilesOf(BucketSorter sorter, const staged::DeviceLimits& limits) {
  const auto keep = [&](const auto& table) {
    std::vector<TileShape> tiles;
    for (const TileShape& t : table) {
      if (t.smem <= limits.smem_per_block) tiles.push_back(t);
    }
    return tiles;
  };
  if (sorter == BucketSorter::kBitonic) return keep(kBitonicTiles);
  if (sorter == BucketSorter::kCounting) return keep(kCountingTiles);
  return keep(kRadixTiles);
}

TileShape DeeperTile(BucketSorter sorter, const staged::DeviceLimits& limits) {
  const std::vector<TileShape> tiles = TilesOf(sorter, limits);
  return sorter == BucketSorter::kRadix ? tiles.back() : tiles.front();
}

TileShape OverflowTile(BucketSorter sorter, const staged::DeviceLimits& limits) {
  const TileShape largest = TilesOf(sorter, limits).back();
  return largest.keys > DeeperTile(sorter, limits).keys ? largest : TileShape{0, 0, 0};
}

std::uint32_t FirstLevelBuckets(std::uint64_t n, std::uint32_t target) {
  const std::uint64_t h = (n + target - 1) / target;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(h, 1, kMaxBuckets));
}

// snippet-begin: ch03-plan-first-level
FirstLevelPlan PlanFirstLevel(std::uint64_t n, BucketSorter sorter,
                              const staged::DeviceLimits& limits) {
  const std::vector<TileShape> tiles = TilesOf(sorter, limits);  // those the GPU holds
  const int count = static_cast<int>(tiles.size());
  FirstLevelPlan plan;
  plan.tile = tiles[count - 1];
  plan.buckets = kOversizedFirstBuckets;  // unless one level holds n:
  int pick = -1;
  for (int i = 0; i < count; ++i) {
    if (n > std::uint64_t{kMaxBuckets} * tiles[i].target) continue;  // too many buckets
    if (pick < 0) pick = i;                                          // the smallest that holds n
    if (sorter != BucketSorter::kCounting) break;
    if (FirstLevelBuckets(n, tiles[i].target) >= kMinFirstBuckets) pick = i;
  }
  if (pick >= 0) {
    plan.tile = tiles[pick];
    plan.buckets = FirstLevelBuckets(n, tiles[pick].target);
  }
  plan.chunks = static_cast<std::uint32_t>((n + kChunk - 1) / kChunk);
  plan.matrix = std::uint64_t{plan.buckets} * plan.chunks;
  plan.max_buckets = std::min(2 * plan.buckets, kMaxBuckets);
  plan.bucket_bound = std::max({plan.buckets, 2 * kMaxFewValues + 1, plan.max_buckets});
  plan.matrix_bound = std::uint64_t{plan.bucket_bound} * plan.chunks;
  return plan;
}
// snippet-end: ch03-plan-first-level

std::uint64_t MatrixCapacity(std::uint64_t n, BucketSorter sorter,
                             const staged::DeviceLimits& limits) {
  // A deeper segment of len keys has c = ceil(len / kChunk) chunks and h buckets, where h is
  // at most kMaxDeeperBuckets, at most max(kMinDeepBuckets, ceil(len / target)) and every
  // segment is longer than the smallest tile (4096 keys). Summed over segments of at most n keys:
  //   h * c <= len / 16 (kMaxDeeperBuckets / kChunk) + 65 * (len / kChunk + 1)
  //            + len / target + ...
  // which stays below n / 8 + n / 32 + 4096 for every target of at least 3700 keys.
  const std::uint64_t deeper = n / 8 + n / 32 + 4096;
  // Level 0 of every m <= n keys, not only of n: a workspace serves smaller sorts too, and the
  // matrix does not grow with m across a change of tile (8192 buckets of the bitonic sorter's
  // 4096-key tile just below 30.3M keys, 4331 of its 8192-key one just above).
  // The tile changes where a tile stops holding m in kMaxBuckets buckets, and, for the counting
  // sorter, where a larger tile reaches kMinFirstBuckets buckets. Between two changes the
  // buckets and the chunks grow with m, so the largest m before each change, and n itself, bound
  // it.
  std::uint64_t first = PlanFirstLevel(std::max<std::uint64_t>(n, 1), sorter, limits).matrix_bound;
  for (const TileShape& tile : TilesOf(sorter, limits)) {
    for (const std::uint32_t buckets : {kMaxBuckets, kMinFirstBuckets - 1}) {
      const std::uint64_t m = std::min(n, std::uint64_t{buckets} * tile.target);
      first = std::max(first,
                       PlanFirstLevel(std::max<std::uint64_t>(m, 1), sorter, limits).matrix_bound);
    }
  }
  return std::max(first, deeper);
}

std::uint64_t BucketCapacity(std::uint64_t n) {
  // A deeper level's segments are buckets over the smallest tile (4096 keys): at most n / 4097
  // of them, each with at most max(kMinDeepBuckets, ceil(len / target)) <= 65 + len / target
  // buckets. Summed: 65 n / 4097 + n / target, below n / 60 for every target of at least 3700
  // keys. Level 0 has at most kMaxBuckets.
  return std::max<std::uint64_t>(kMaxBuckets, n / 60 + 1);
}

std::uint32_t LevelBound(std::uint64_t range, std::uint32_t first_buckets) {
  // h buckets over R values take floor(h 2^32 / R) as their scale: each spans at most
  // R / (h - 1) + 1 values (R / h, widened by the rounding of the scale).
  std::uint64_t span = first_buckets > 1 ? range / (first_buckets - 1) + 1 : range;
  std::uint32_t levels = 2;  // levels 0 and 1; level 1 may keep the span
  while (span > 1) {
    span = span / (kMinDeepBuckets - 1) + 1;
    ++levels;
  }
  return levels + 1;  // the level that finds an unreduced single-valued bucket all equal
}

std::uint64_t SpanCapacity(std::uint64_t n, BucketSorter sorter,
                           const staged::DeviceLimits& limits) {
  return n / (TilesOf(sorter, limits).front().keys + 1) + 1;
}

}  // namespace ch03::optimized
