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
#include <vector>

#include "common/device_limits.hpp"

namespace ch03::optimized {

/// Keys a histogram/partition block handles as one chunk: one column of the histogram matrix.
/// The matrix has one entry per bucket and chunk, and each entry costs a scattered 4-byte store
/// (histogram), scan traffic and a scattered load (partition): 32768-key chunks halve that
/// against chunks of one pass.
inline constexpr std::uint32_t kChunk = 32768;
/// Keys of a chunk a block holds at once (16 per thread), in kChunk / kChunkPass passes: the
/// rank partition's tile in shared memory.
inline constexpr std::uint32_t kChunkPass = 16384;
static_assert(kChunk % kChunkPass == 0, "a chunk is a whole number of passes");
/// Threads of a histogram/partition/min-max block.
inline constexpr int kChunkThreads = 1024;
/// Most buckets per segment (shared counters of a histogram/partition block; the partition's
/// scan takes 8 per thread). Level 0 uses up to this many when they finish the sort: 8192
/// buckets of the 4096-key tile's target hold 30M keys in one level, of the 16384-key tile's
/// 127M.
inline constexpr std::uint32_t kMaxBuckets = 8192;
/// Most buckets of a deeper segment. Such buckets are split again anyway, so fewer of them cost
/// less where the bucket count is paid (the histogram's rows, the partition's runs, at least 8
/// keys per chunk), and this bound keeps the matrix of a deeper level within n / 8 + n / 32 +
/// 4096 entries (plan.cpp).
inline constexpr std::uint32_t kMaxDeeperBuckets = 2048;
// snippet-begin: ch03-oversized-first
/// Buckets of level 0 when n is over every tile's one-level bound, so that every bucket goes on
/// to level 1: the pass tile's runs are then kChunkPass / 512 = 32 keys, a whole 128-byte line
/// each, the chunk tile's 64 (level 1 splits each bucket, n / 512 keys, into long runs again). More
/// buckets would only shorten the runs: each piece of a run is a write request of its own.
inline constexpr std::uint32_t kOversizedFirstBuckets = kChunkPass / 32;
// snippet-end: ch03-oversized-first
/// Fewest level-0 buckets the counting sorter's tile choice keeps: several per SM, so that the
/// sort step fills the GPU.
inline constexpr std::uint32_t kMinFirstBuckets = 512;
/// Longest oversized bucket whose min and max the sorting block reduces itself, unless it is
/// within twice its segment's mean bucket (`BlockReduces`); longer ones (a skewed cluster) are
/// reduced by `SurveySegmentsKernel`, one block per chunk, at the next level.
inline constexpr std::uint32_t kBlockMinMaxKeys = 1u << 18;
/// Fewest buckets of a segment from the third level on: a segment that reaches it defeated
/// equal-width buckets twice, so each further level narrows its range at least 64-fold.
inline constexpr std::uint32_t kMinDeepBuckets = 64;
/// Most levels a sort may use. Ranges shrink at least 2-fold at level 1 (except the end buckets
/// of a sampled core and the buckets between level 0's splitters, which need not shrink) and
/// 64-fold from level 2 on, so every oversized
/// bucket is single-valued (all equal, hence final) within `LevelBound` levels: 9 for keys
/// spanning all 2^32 values, whatever level 0's bucket count. The rest is margin.
inline constexpr std::uint32_t kMaxLevels = 12;
/// Keys drawn from a sampled segment to find its core (sampled_core.cuh), sorted by one block.
inline constexpr std::uint32_t kSampleKeys = 8192;
/// Most distinct values a sample of the input may show for level 0 to bucket by them
/// (`kSplitters`: a bucket per value and one between each two, 2m + 1 <= 129). Their counters
/// take the first half of the histogram's and partition's kMaxBuckets shared words, the values
/// the second half.
inline constexpr std::uint32_t kMaxFewValues = 64;
static_assert(2 * kMaxFewValues + 1 <= kMaxBuckets / 2 && kMaxFewValues <= kMaxBuckets / 2,
              "counters and values each within half of the shared words");
/// Fewest keys for which level 0 samples its input to choose its bucket map (`ChooseFirstMap`):
/// below this, the sample would be most of the input, and a level more costs little.
inline constexpr std::uint32_t kMinSampledKeys = 16 * kSampleKeys;
/// Deepest level whose unreduced segments (spans over kBlockMinMaxKeys) are bucketed over a
/// sampled core: level 1, where a skewed cluster first shows up. The two end buckets of a core
/// need not narrow the range; after this level the equal-width rule's 64-fold narrowing still
/// makes every oversized bucket single-valued within kMaxLevels. (A cluster still over
/// kBlockMinMaxKeys after level 1 is mostly one value, whose bucket the next level finds all
/// equal: a second sample would not help it.)
inline constexpr std::uint32_t kMaxSampledLevel = 1;

/// The on-chip sort of step 5: a counting sort over narrow sub-buckets (counting_tile.cuh, the
/// default), the Portuguese report's bitonic network (bitonic_tile.cuh), or a block radix sort
/// (radix_tile.cuh), the last two kept beside it for comparison.
enum class BucketSorter { kCounting, kRadix, kBitonic };

// snippet-begin: ch03-tiles
/// One on-chip tile: the most keys a block sorts, the mean bucket size aimed at so that
/// uniform buckets (Poisson spread, about sqrt(mean)) stay within it with 6.5 standard
/// deviations to spare, and the shared memory its block needs.
struct TileShape {
  std::uint32_t keys;    ///< capacity of the tile
  std::uint32_t target;  ///< mean keys per bucket the bucket count aims at
  std::uint32_t smem;    ///< shared memory of one sorting block, bytes (at most)
};

/// Shared memory a sorting block uses besides its tile's arrays (scan and min/max scratch, a few
/// broadcast words), at most.
inline constexpr std::uint32_t kTileScratchBytes = 1024;
/// Shared memory of the counting sorter's block: the tile and half as many sub-bucket counters.
/// @param[in] keys the tile
constexpr std::uint32_t CountingTileBytes(std::uint32_t keys) {
  return 4 * keys + 4 * (keys / 2) + kTileScratchBytes;
}
/// Shared memory of the bitonic sorter's block: the padded tile.
/// @param[in] keys the tile
constexpr std::uint32_t BitonicTileBytes(std::uint32_t keys) {
  return 4 * keys + kTileScratchBytes;
}
/// Shared memory of the radix sorter's block: the tile and 256 digit counters per warp (+1).
/// @param[in] keys the tile
/// @param[in] threads its block
constexpr std::uint32_t RadixTileBytes(std::uint32_t keys, std::uint32_t threads) {
  return 4 * keys + 4 * 256 * (threads / 32 + 1) + kTileScratchBytes;
}

/// Tiles of the radix sorter (256 x 16, 512 x 16 and 512 x 72 threads x keys).
inline constexpr TileShape kRadixTiles[] = {{4096, 3700, RadixTileBytes(4096, 256)},
                                            {8192, 7600, RadixTileBytes(8192, 512)},
                                            {36864, 35500, RadixTileBytes(36864, 512)}};
/// Tiles of the bitonic sorter (256 and 512 threads).
inline constexpr TileShape kBitonicTiles[] = {{4096, 3700, BitonicTileBytes(4096)},
                                              {8192, 7000, BitonicTileBytes(8192)}};
/// Tiles of the counting sorter (256, 512 and 1024 threads).
inline constexpr TileShape kCountingTiles[] = {{4096, 3700, CountingTileBytes(4096)},
                                               {8192, 7000, CountingTileBytes(8192)},
                                               {16384, 15500, CountingTileBytes(16384)}};
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
  std::uint32_t matrix_base = 0;   ///< first entry of its chunks x buckets matrix
  /// How a key finds its bucket (`BucketMapKind`): equal widths over `range`, over a sampled
  /// `core`, or between sampled splitters
  std::uint32_t sampled = 0;
  KeyRange core{0xFFFFFFFFu, 0};  ///< the sampled core, written by SurveySegmentsKernel
  std::uint32_t splitters = 0;    ///< m values, when sampled == kSplitters (2m + 1 buckets)
  std::uint32_t core_low = 1;     ///< buckets below the core, when sampled == kCore
  std::uint32_t core_high = 1;    ///< buckets above the core, when sampled == kCore
  /// The core buckets' scale when they hold a whole number of values each (level 0's kCore,
  /// `CorePieces::scale`), else 0: equal widths over the core
  std::uint64_t core_scale = 0;
};

/// Values of `Segment::sampled`.
enum BucketMapKind : std::uint32_t {
  kEqualWidths = 0,  ///< h equal widths over the segment's [min, max]
  /// equal widths over a sampled core and over the ranges below and above it (sampled_core.cuh):
  /// a skewed cluster at level 1 (one bucket below, one above), or a cluster a level-0 sample
  /// finds crowding an equal-width bucket (buckets by each piece's share, `PlanCorePieces`)
  kCore = 1,
  /// 2m + 1 buckets around the m values of a sample that shows few (`kMaxFewValues`): bucket
  /// 2j + 1 holds the keys equal to value j (all equal: final once partitioned), bucket 2j the
  /// keys strictly between values j - 1 and j. Level 0 only.
  kSplitters = 2,
};

/// The three key arrays of a sort. Level 0 reads `in`; level k >= 1 reads what level k - 1
/// partitioned (its oversized buckets stayed there); each level partitions into the array it
/// does not read, and the sort step always writes `out`. `in` may be `out` (the DoubleBuffer
/// form, `SortDoubleBuffer`): level 0 then writes nothing to `out` before its partition has
/// read every key.
struct Buffers {
  const std::uint32_t* in;  ///< the input (written only where it is also `out`)
  std::uint32_t* part;      ///< partition buffer
  std::uint32_t* out;       ///< the sorted output
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

/// Bits of `LevelState::error`: why a sort stopped with buckets left unsorted.
enum SortError : std::uint32_t {
  kErrorListFull = 1,  ///< more oversized buckets than the span list holds
  kErrorTooDeep = 2,   ///< buckets still oversized after kMaxLevels levels
  kErrorTooLarge = 4,  ///< a level's matrix or bucket totals exceeded the workspace's
};

/// What a level's kernels read about the level (device memory).
struct LevelState {
  std::uint32_t level = 0;            ///< 0 for the input, then 1, 2, ...
  std::uint32_t num_segments = 0;     ///< entries of the segment table
  std::uint32_t chunks = 0;           ///< histogram/partition work items (sum of chunks)
  std::uint32_t buckets = 0;          ///< sort work items, bucket totals (sum of buckets)
  std::uint32_t matrix = 0;           ///< histogram matrix entries (sum of buckets x chunks)
  std::uint32_t tile_target = 0;      ///< mean bucket size the level aimed at
  std::uint32_t minmax_segments = 0;  ///< segments whose range SurveySegmentsKernel must reduce
  std::uint32_t next_sort = 0;        ///< work queue of SortBucketsKernel (bucket sizes vary)
  std::uint32_t overflow_count = 0;   ///< buckets listed for `OverflowTile` (the overflow list)
  std::uint32_t next_overflow = 0;    ///< work queue of SortOverflowKernel
  std::uint32_t error = 0;            ///< `SortError` bits: a bound was exceeded (keys unsorted)
  /// The sort's arrays, in the deeper levels' state only: level 0's histogram writes them, the
  /// deeper levels' kernels read them (`ArraysRef`), so that their graph serves any arrays
  Buffers arrays{};
};

/// A level's histogram, as steps 1 to 5 share it.
struct Counts {
  /// The chunk-major matrix: entry matrix_base + local * buckets + b counts chunk `local`'s keys
  /// of bucket b (step 1 writes a chunk's row with one coalesced store per bucket).
  std::uint32_t* matrix;
  /// One word per bucket of the level (bucket_base + b), zero before step 1, which adds each
  /// chunk's count to it. Step 4 takes each chunk's run back out of it (an atomic subtraction,
  /// whose old value less the count is where the run starts within the bucket), which leaves it
  /// zero again.
  std::uint32_t* totals;
  /// The exclusive scan of the totals (steps 2 and 3): where each bucket starts (`BucketStart`).
  std::uint32_t* starts;
};

/// Level 0 as the host plans it from n.
struct FirstLevelPlan {
  TileShape tile;         ///< the tile of level 0
  std::uint32_t buckets;  ///< h0 (equal widths)
  std::uint32_t chunks;   ///< ceil(n / kChunk)
  std::uint64_t matrix;   ///< h0 x chunks
  /// Most buckets of level 0 over a sampled core (`kCore`): min(2 h0, kMaxBuckets), room to give
  /// each value of a narrow cluster its own bucket.
  std::uint32_t max_buckets;
  /// max(h0, 2 kMaxFewValues + 1, max_buckets): the buckets any level-0 map may use
  std::uint32_t bucket_bound;
  /// bucket_bound x chunks: the matrix entries any level-0 map may use
  std::uint64_t matrix_bound;
};

/// How step 4 moves a chunk's keys into their buckets' slots.
enum class PartitionPath {
  /// The whole chunk ranked by bucket in one shared tile laid out by the chunk's row of the
  /// histogram matrix, then written out as one contiguous run per bucket; needs
  /// kChunkTileSharedBytes of shared memory per block.
  kChunkTile,
  /// Ranked by bucket one pass (kChunkPass keys) at a time in a shared tile, each pass written out
  /// as one contiguous run per bucket (coalesced stores); needs kPassTileSharedBytes per block.
  kPassTile,
  /// Each key to its bucket's next slot, taken by a shared atomic on the bucket's cursor (no
  /// tile: kMaxBuckets counters, 32 KiB, fit any GPU); stores scatter within each run.
  kScatter,
};
/// Shared memory of the pass-tile partition's block: one pass of the chunk and one word per
/// bucket.
inline constexpr std::uint32_t kPassTileSharedBytes =
    4 * (kChunkPass + kMaxBuckets) + kTileScratchBytes;
/// Shared memory of the chunk-tile partition's block: the whole chunk and one word per bucket.
inline constexpr std::uint32_t kChunkTileSharedBytes =
    4 * (kChunk + kMaxBuckets) + kTileScratchBytes;
/// Shared memory of one block of @p path (at most).
/// @param[in] path the partition
constexpr std::uint32_t PartitionSharedBytes(PartitionPath path) {
  return path == PartitionPath::kChunkTile  ? kChunkTileSharedBytes
         : path == PartitionPath::kPassTile ? kPassTileSharedBytes
                                            : 4 * kMaxBuckets + kTileScratchBytes;
}
/// The chunk tile where one block may use kChunkTileSharedBytes (161 KiB: sm_80, sm_90,
/// sm_100), else the pass tile where it may use kPassTileSharedBytes (97 KiB: sm_86, sm_89,
/// sm_120), else the scatter (sm_75's 64 KiB).
/// @param[in] limits the planning limits
PartitionPath ChoosePartition(const staged::DeviceLimits& limits);

/// Tiles of @p sorter whose block fits @p limits (`TileShape::smem` within `smem_per_block`),
/// smallest first. The 4096-key tile of every sorter fits any GPU of sm_75 or newer.
/// @param[in] sorter the on-chip sort
/// @param[in] limits the planning limits
std::vector<TileShape> TilesOf(BucketSorter sorter, const staged::DeviceLimits& limits);
/// The tile of levels 1, 2, ...: for the bitonic and counting sorters their smallest (a network's
/// work per key grows with its depth: 78 layers over 4096-key tiles against 91 over 8192; the
/// counting sorter's small tile runs four blocks per SM where the largest runs one; and a deeper
/// segment's buckets are few and long however many there are, so a larger tile saves the
/// partition little, while more, narrower buckets finish a narrow cluster sooner); for the radix
/// sorter its largest (its passes follow the bits that differ, not the tile, so the largest
/// leaves the fewest oversized buckets).
/// @param[in] sorter the on-chip sort
/// @param[in] limits the planning limits
TileShape DeeperTile(BucketSorter sorter, const staged::DeviceLimits& limits);
/// The tile that sorts a deeper level's buckets over `DeeperTile` (after the level's step 5,
/// from a list): the largest tile of @p sorter, or keys 0 when that is the deeper tile itself
/// (the radix sorter). A bucket a little over the small tile (a Poisson tail, or the edge of a
/// cluster where the bucket count followed the segment's length, not its keys' spread) is
/// sorted at once instead of costing the segment another level.
/// @param[in] sorter the on-chip sort
/// @param[in] limits the planning limits
TileShape OverflowTile(BucketSorter sorter, const staged::DeviceLimits& limits);
/// Buckets of level 0: ceil(n / target) in [1, kMaxBuckets].
/// @param[in] n keys
/// @param[in] target mean bucket size
std::uint32_t FirstLevelBuckets(std::uint64_t n, std::uint32_t target);
/// Plans level 0 from the tiles whose kMaxBuckets buckets of their target size hold n, each
/// with ceil(n / target) buckets. The bitonic and radix sorters take the smallest (more, shorter
/// buckets: fewer bitonic layers, more blocks in flight, fewer radix passes). The counting
/// sorter, whose work per key does not grow with the tile, takes the largest that still gives
/// at least kMinFirstBuckets buckets (fewer buckets make the partition's runs longer), or the
/// smallest when none does. No tile holds n: the largest, with kOversizedFirstBuckets buckets, all
/// oversized, which go on to level 1.
/// @param[in] n keys, >= 1
/// @param[in] sorter the on-chip sort
/// @param[in] limits the planning limits (which tiles fit)
FirstLevelPlan PlanFirstLevel(std::uint64_t n, BucketSorter sorter,
                              const staged::DeviceLimits& limits);
/// Entries of the histogram matrix any level of a sort of at most @p n keys may use (level 0's,
/// or the bound of a deeper level: see plan.cpp).
/// @param[in] n keys
/// @param[in] sorter the on-chip sort
/// @param[in] limits the planning limits
std::uint64_t MatrixCapacity(std::uint64_t n, BucketSorter sorter,
                             const staged::DeviceLimits& limits);
/// Buckets any level of a sort of at most @p n keys may have (the entries of the bucket totals:
/// level 0's at most kMaxBuckets, or the bound of a deeper level: see plan.cpp).
/// @param[in] n keys
std::uint64_t BucketCapacity(std::uint64_t n);
/// @brief The most levels a sort may use (level 0 included) for keys spanning @p range values
///        (max - min + 1) with @p first_buckets buckets at level 0: the planner's rule, as a
///        bound the tests hold every input to.
///
/// h buckets over R values span at most R / (h - 1) + 1 values each (the bucket scale rounds
/// down). Level 1 may leave a bucket's span as it is (the end buckets of a sampled core); every
/// later level has at least kMinDeepBuckets buckets per segment, so a bucket spans at most
/// span / 63 + 1 values, until one value is left; a bucket of one value is final where it is
/// found, or, when it was too long for its sorting block to reduce (over kBlockMinMaxKeys
/// keys), one level later. Splitters at level 0 (`kSplitters`) need not narrow a bucket's span
/// either: such a sort is bounded as one with a single level-0 bucket.
/// @param[in] range values between the smallest and the largest key, counted inclusively (>= 1)
/// @param[in] first_buckets buckets of level 0 (>= 1; 1 where level 0 used splitters)
std::uint32_t LevelBound(std::uint64_t range, std::uint32_t first_buckets);
/// Most spans (oversized buckets) one level can list for @p n keys: each holds more keys than
/// the smallest tile.
/// @param[in] n keys
/// @param[in] sorter the on-chip sort
/// @param[in] limits the planning limits
std::uint64_t SpanCapacity(std::uint64_t n, BucketSorter sorter,
                           const staged::DeviceLimits& limits);

}  // namespace ch03::optimized
