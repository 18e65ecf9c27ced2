/// @file plan.cpp
/// @brief Host-side planning of the optimized mppSort: level 0's tile and bucket count, and the
///        bounds the workspace is sized by.
#include "chapters/03_mppsort/plan.hpp"

#include <algorithm>
#include <iterator>

namespace ch03::optimized {

const TileShape* TilesOf(BucketSorter sorter, int& count) {
  if (sorter == BucketSorter::kBitonic) {
    count = static_cast<int>(std::size(kBitonicTiles));
    return kBitonicTiles;
  }
  if (sorter == BucketSorter::kCounting) {
    count = static_cast<int>(std::size(kCountingTiles));
    return kCountingTiles;
  }
  count = static_cast<int>(std::size(kRadixTiles));
  return kRadixTiles;
}

TileShape DeeperTile(BucketSorter sorter) {
  int count = 0;
  const TileShape* tiles = TilesOf(sorter, count);
  return sorter == BucketSorter::kRadix ? tiles[count - 1] : tiles[0];
}

TileShape OverflowTile(BucketSorter sorter) {
  int count = 0;
  const TileShape* tiles = TilesOf(sorter, count);
  const TileShape largest = tiles[count - 1];
  return largest.keys > DeeperTile(sorter).keys ? largest : TileShape{0, 0};
}

std::uint32_t FirstLevelBuckets(std::uint64_t n, std::uint32_t target) {
  const std::uint64_t h = (n + target - 1) / target;
  return static_cast<std::uint32_t>(std::clamp<std::uint64_t>(h, 1, kMaxBuckets));
}

// snippet-begin: ch03-plan-first-level
FirstLevelPlan PlanFirstLevel(std::uint64_t n, BucketSorter sorter) {
  int count = 0;
  const TileShape* tiles = TilesOf(sorter, count);
  FirstLevelPlan plan;
  plan.tile = tiles[count - 1];
  plan.buckets = kMaxDeeperBuckets;  // unless one level holds n:
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
  return plan;
}
// snippet-end: ch03-plan-first-level

std::uint64_t MatrixCapacity(std::uint64_t n, BucketSorter sorter) {
  // A deeper segment of len keys has c = ceil(len / kChunk) chunks and h buckets, where h is
  // at most kMaxDeeperBuckets, at most max(kMinDeepBuckets, ceil(len / target)) and every
  // segment is longer than the smallest tile (4096 keys). Summed over segments of at most n keys:
  //   h * c <= len / 8 (kMaxDeeperBuckets / kChunk) + 65 * (len / kChunk + 1)
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
  int count = 0;
  const TileShape* tiles = TilesOf(sorter, count);
  std::uint64_t first = PlanFirstLevel(std::max<std::uint64_t>(n, 1), sorter).matrix;
  for (int i = 0; i < count; ++i) {
    for (const std::uint32_t buckets : {kMaxBuckets, kMinFirstBuckets - 1}) {
      const std::uint64_t m = std::min(n, std::uint64_t{buckets} * tiles[i].target);
      first = std::max(first, PlanFirstLevel(std::max<std::uint64_t>(m, 1), sorter).matrix);
    }
  }
  return std::max(first, deeper);
}

std::uint64_t SpanCapacity(std::uint64_t n, BucketSorter sorter) {
  int count = 0;
  const TileShape* tiles = TilesOf(sorter, count);
  return n / (tiles[0].keys + 1) + 1;
}

}  // namespace ch03::optimized
