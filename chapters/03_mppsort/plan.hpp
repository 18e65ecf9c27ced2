/**
 * @file plan.hpp
 * @brief Host-side planning of the optimized mppSort: tile sizes, bucket counts, and the
 *        records a level's kernels read from device memory (segments, spans, level state).
 *
 * A *level* buckets one or more *segments* (ranges of keys) over their own [min, max]. Level 0
 * has one segment, the whole input, planned here on the host from n alone. Every bucket that
 * does not fit the on-chip tile becomes a *span*, and the spans of one level are the segments
 * of the next, planned on the device (`PlanLevelKernel` in levels.cu) so that no level waits
 * for the host. All positions are 32-bit: n <= 2^32 - 1.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace ch03::optimized {

/// Keys a histogram/partition block handles (its rank tile in shared memory).
inline constexpr std::uint32_t kChunk = 16384;
/// Threads of a histogram/partition/min-max block.
inline constexpr int kChunkThreads = 1024;
/// Most buckets per segment (shared counters of a histogram/partition block; the partition's
/// scan takes 8 per thread). Level 0 uses up to this many when they finish the sort: 8192
/// buckets of the 4096-key tile's target hold 30M keys in one level, of the 16384-key tile's
/// 127M.
inline constexpr std::uint32_t kMaxBuckets = 8192;
/// Most buckets of a segment whose buckets go on to another level: level 0 when n is over every
/// tile's one-level bound, and every deeper segment. Such buckets are split again anyway, so
/// fewer of them cost less where the bucket count is paid (the histogram's column writes, the
/// scan, the partition's run bases, runs of at least 8 keys per chunk), and this bound keeps the
/// matrix of a deeper level within n / 8 + n / 32 + 4096 entries (plan.cpp).
inline constexpr std::uint32_t kMaxDeeperBuckets = 2048;
/// Fewest level-0 buckets the counting sorter's tile choice keeps: several per SM, so that the
/// sort step fills the GPU.
inline constexpr std::uint32_t kMinFirstBuckets = 512;
/// Longest oversized bucket whose min and max the sorting block reduces itself; longer ones (a
/// skewed cluster) are reduced by `SurveySegmentsKernel`, one block per chunk, at the next level.
inline constexpr std::uint32_t kBlockMinMaxKeys = 1u << 18;
/// Fewest buckets of a segment from the third level on: a segment that reaches it defeated
/// equal-width buckets twice, so each further level narrows its range at least 64-fold.
inline constexpr std::uint32_t kMinDeepBuckets = 64;
/// Most levels a sort may use. Ranges shrink at least 2-fold at level 1 (except the end buckets
/// of a sampled core, which need not shrink) and 64-fold from level 2 on, so every oversized
/// bucket is single-valued (all equal, hence final) by level 8 (6 levels of 6 bits cover 32);
/// the margin covers the level that finds such a bucket's min == max.
inline constexpr std::uint32_t kMaxLevels = 12;
/// Keys drawn from a sampled segment to find its core (sampled_core.cuh), sorted by one block.
inline constexpr std::uint32_t kSampleKeys = 8192;
/// Deepest level whose unreduced segments (spans over kBlockMinMaxKeys) are bucketed over a
/// sampled core: level 1, where a skewed cluster first shows up. The two end buckets of a core
/// need not narrow the range; after this level the equal-width rule's 64-fold narrowing still
/// makes every oversized bucket single-valued within kMaxLevels. (A cluster still over
/// kBlockMinMaxKeys after level 1 is mostly one value, whose bucket the next level finds all
/// equal: a second sample would not help it.)
inline constexpr std::uint32_t kMaxSampledLevel = 1;

/// The on-chip sort of step 5: a counting sort over narrow sub-buckets (counting_tile.cuh, the
/// default), the seed's bitonic network (bitonic_tile.cuh), or a block radix sort
/// (radix_tile.cuh), the last two kept beside it for comparison.
enum class BucketSorter { kCounting, kRadix, kBitonic };

// snippet-begin: ch03-tiles
/// One on-chip tile: the most keys a block sorts, and the mean bucket size aimed at so that
/// uniform buckets (Poisson spread, about sqrt(mean)) stay within it with 6.5 standard
/// deviations to spare.
struct TileShape {
  std::uint32_t keys;    ///< capacity of the tile
  std::uint32_t target;  ///< mean keys per bucket the bucket count aims at
};

/// Tiles of the radix sorter (256 x 16, 512 x 16 and 512 x 72 threads x keys).
inline constexpr TileShape kRadixTiles[] = {{4096, 3700}, {8192, 7600}, {36864, 35500}};
/// Tiles of the bitonic sorter (256 and 512 threads).
inline constexpr TileShape kBitonicTiles[] = {{4096, 3700}, {8192, 7000}};
/// Tiles of the counting sorter (256, 512 and 1024 threads).
inline constexpr TileShape kCountingTiles[] = {{4096, 3700}, {8192, 7000}, {16384, 15500}};
// snippet-end: ch03-tiles

/// The [min, max] of a segment or span; {0xFFFFFFFF, 0} while unknown. Same layout as
/// `ch01::MinMaxPair<std::uint32_t>` (chapter 01's launcher writes level 0's).
struct KeyRange {
  std::uint32_t min;  ///< smallest key
  std::uint32_t max;  ///< largest key
};

/// One range of keys bucketed by one level, and where its data lives in the level's arrays.
struct Segment {
  std::uint32_t begin = 0;         ///< first key (absolute index)
  std::uint32_t len = 0;           ///< keys
  KeyRange range{0xFFFFFFFFu, 0};  ///< its keys' [min, max]
  std::uint32_t needs_minmax = 0;  ///< 1: `range` is reduced by SurveySegmentsKernel first
  std::uint32_t buckets = 0;       ///< h of this segment
  std::uint32_t chunks = 0;        ///< ceil(len / kChunk)
  std::uint32_t chunk_base = 0;    ///< first chunk of the level that is this segment's
  std::uint32_t bucket_base = 0;   ///< first bucket of the level that is this segment's
  std::uint32_t matrix_base = 0;   ///< first entry of its buckets x chunks matrix
  /// 0: equal-width buckets over `range`; 1: over `core`, with the keys below and above it in
  /// the first and last bucket (sampled_core.cuh)
  std::uint32_t sampled = 0;
  KeyRange core{0xFFFFFFFFu, 0};  ///< the sampled core, written by SurveySegmentsKernel
};

/// A bucket too large for the tile, left for the next level.
struct Span {
  std::uint32_t begin;  ///< first key
  std::uint32_t len;    ///< keys
  KeyRange range;       ///< [min, max] when the sorting block reduced it, else {0xFFFFFFFF, 0}
};

/// Where step 5 lists the buckets it cannot sort on chip.
struct SpanList {
  Span* spans;             ///< entries
  std::uint32_t* count;    ///< number of entries (the next `PlanLevel` resets it to 0)
  std::uint32_t capacity;  ///< room in `spans`
};

/// What a level's kernels read about the level (device memory).
struct LevelState {
  std::uint32_t level = 0;            ///< 0 for the input, then 1, 2, ...
  std::uint32_t num_segments = 0;     ///< entries of the segment table
  std::uint32_t chunks = 0;           ///< histogram/partition work items (sum of chunks)
  std::uint32_t buckets = 0;          ///< sort work items (sum of buckets)
  std::uint32_t matrix = 0;           ///< histogram matrix entries (sum of buckets x chunks)
  std::uint32_t tile_target = 0;      ///< mean bucket size the level aimed at
  std::uint32_t minmax_segments = 0;  ///< segments whose range SurveySegmentsKernel must reduce
  std::uint32_t next_sort = 0;        ///< work queue of SortBucketsKernel (bucket sizes vary)
  std::uint32_t overflow_count = 0;   ///< buckets listed for `OverflowTile` (the overflow list)
  std::uint32_t next_overflow = 0;    ///< work queue of SortOverflowKernel
  std::uint32_t error = 0;            ///< nonzero: a bound was exceeded (the sort is incomplete)
};

/// Level 0 as the host plans it from n.
struct FirstLevelPlan {
  TileShape tile;         ///< the tile of level 0
  std::uint32_t buckets;  ///< h0
  std::uint32_t chunks;   ///< ceil(n / kChunk)
  std::uint64_t matrix;   ///< h0 x chunks
};

/// Tiles of @p sorter, smallest first, and how many there are.
/// @param[in] sorter the on-chip sort
/// @param[out] count number of tiles
const TileShape* TilesOf(BucketSorter sorter, int& count);
/// The tile of levels 1, 2, ...: for the bitonic and counting sorters their smallest (a network's
/// work per key grows with its depth: 78 layers over 4096-key tiles against 91 over 8192; the
/// counting sorter's small tile runs four blocks per SM where the largest runs one; and a deeper
/// segment's buckets are few and long however many there are, so a larger tile saves the
/// partition little, while more, narrower buckets finish a narrow cluster sooner); for the radix
/// sorter its largest (its passes follow the bits that differ, not the tile, so the largest
/// leaves the fewest oversized buckets).
/// @param[in] sorter the on-chip sort
TileShape DeeperTile(BucketSorter sorter);
/// The tile that sorts a deeper level's buckets over `DeeperTile` (after the level's step 5,
/// from a list): the largest tile of @p sorter, or keys 0 when that is the deeper tile itself
/// (the radix sorter). A bucket a little over the small tile (a Poisson tail, or the edge of a
/// cluster where the bucket count followed the segment's length, not its keys' spread) is
/// sorted at once instead of costing the segment another level.
/// @param[in] sorter the on-chip sort
TileShape OverflowTile(BucketSorter sorter);
/// Buckets of level 0: ceil(n / target) in [1, kMaxBuckets].
/// @param[in] n keys
/// @param[in] target mean bucket size
std::uint32_t FirstLevelBuckets(std::uint64_t n, std::uint32_t target);
/// Plans level 0 from the tiles whose kMaxBuckets buckets of their target size hold n, each
/// with ceil(n / target) buckets. The bitonic and radix sorters take the smallest (more, shorter
/// buckets: fewer bitonic layers, more blocks in flight, fewer radix passes). The counting
/// sorter, whose work per key does not grow with the tile, takes the largest that still gives
/// at least kMinFirstBuckets buckets (fewer buckets make the partition's runs longer), or the
/// smallest when none does. No tile holds n: the largest, with kMaxDeeperBuckets buckets, all
/// oversized, which go on to level 1.
/// @param[in] n keys, >= 1
/// @param[in] sorter the on-chip sort
FirstLevelPlan PlanFirstLevel(std::uint64_t n, BucketSorter sorter);
/// Entries of the histogram matrix any level of a sort of at most @p n keys may use (level 0's,
/// or the bound of a deeper level: see plan.cpp).
/// @param[in] n keys
/// @param[in] sorter the on-chip sort
std::uint64_t MatrixCapacity(std::uint64_t n, BucketSorter sorter);
/// Most spans (oversized buckets) one level can list for @p n keys: each holds more keys than
/// the smallest tile.
/// @param[in] n keys
/// @param[in] sorter the on-chip sort
std::uint64_t SpanCapacity(std::uint64_t n, BucketSorter sorter);

}  // namespace ch03::optimized
