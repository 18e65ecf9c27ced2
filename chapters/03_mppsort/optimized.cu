/**
 * @file optimized.cu
 * @brief mppSort tuned for a modern GPU: the Portuguese report's five steps, each pass over the keys either
 *        reading them once or reading and writing them once, every bucket sorted on chip, and
 *        no step waiting for the host.
 *
 * Changes relative to naive.cu (the sections below follow the same five steps):
 * 1. Min/max come from chapter 01's one-pass launcher (`ch01::optimized::MinMax`).
 * 2. The bucket is computed, not looked up: ((key - min) * floor(h * 2^32 / R)) >> 32 in 64-bit
 *    arithmetic (monotone, < h, no overflow for R up to 2^32, min == max gives bucket 0).
 * 3. One scan instead of two: the histogram writes each chunk's counts as a row of a chunk-major
 *    matrix (coalesced) and adds them to one total per bucket; one exclusive scan of the totals
 *    (chapter 02's `ExclusiveScan`) gives every bucket's start (GlobalHistoScan). VerticalScanHH
 *    is not needed: each chunk takes its run of a bucket out of the bucket's total with one atomic
 *    (change 22), since the order of the runs inside a bucket does not matter.
 * 4. Partition ranks 16384 keys of a chunk at a time by bucket in shared memory first (a
 *    block-local counting sort), then writes each bucket's run contiguously: stores coalesce
 *    instead of scattering.
 *    Where a block cannot hold the 97 KiB this takes (sm_75's 64 KiB), each key goes to its
 *    run's next slot from a shared cursor instead (PartitionScatterKernel, ChoosePartition).
 * 5. The bucket count follows n (at most kMaxBuckets per level) and the tile (plan.cpp), so that a
 *    uniform bucket fits the tile that sorts it.
 * 6. The Portuguese report's bitonic sort keeps 16 keys per thread in registers: short distances are register
 *    swaps and warp shuffles, only distances >= 512 go through shared memory (bitonic_tile.cuh).
 * 7. Buckets larger than a tile are bucketed again over their own [min, max], level after level,
 *    all segments of a level in one launch per kernel; all-equal ones are final at once.
 * 8. The min and max of an oversized bucket are reduced by the block that finds it, so deeper
 *    levels need no min/max pass except for buckets over kBlockMinMaxKeys (a skewed cluster).
 * 9. The histogram loads all 16 keys of a thread before its first atomic (16 loads in flight).
 * 10. The bitonic sorter's small tile (4096 keys, 256 threads) at level 0 wherever the level's
 *    buckets fit it, and at every deeper level.
 * 11. A block radix sort beside the bitonic network (radix_tile.cuh, `BucketSorter::kRadix`):
 *    a bucket's keys differ only in their low bits, so 2-3 passes of 8 bits replace 78-91 layers
 *    of compare-exchanges; its 36864-key tile (512 threads x 72 keys in registers, 161 KiB of
 *    shared memory: an A100's or H100's blocks) holds the 32K-key buckets of 64M keys in one
 *    level. It is slower than the network: per key, the radix passes' ranking and barriers cost
 *    more than the layers they replace, and the large tile leaves one block per SM
 *    (radix_tile.cuh).
 * 12. Levels after the first are planned on the device and run as a CUDA graph whose loop
 *    condition the planning kernel sets (levels.cu): no level waits for the host, and a sort
 *    whose buckets all fit costs one small kernel more than level 0.
 * 13. Histogram and partition run on resident grids (one block per SM) and load a block's next
 *    chunk ahead: under the current chunk's atomics (histogram), or into the registers the
 *    ranked keys left while the current tile is written out (partition).
 * 14. A counting sort on chip (counting_tile.cuh, `BucketSorter::kCounting`, the default): the
 *    bucket is spread over narrow sub-buckets by shared atomics, and each key is ranked among the
 *    two or so keys of its sub-bucket; buckets of few values need no ranking, and buckets with a
 *    crowded sub-bucket go through the bitonic network instead.
 * 15. Up to 8192 buckets per segment, and for the counting sorter the largest tile (up to 16384
 *    keys) that still gives kMinFirstBuckets buckets: fewer, longer partition runs, and 64M keys
 *    in one level. The partition gathers a chunk's run bases with all their loads in flight.
 * 16. An overflow tile at the deeper levels (`OverflowTile`, `SortOverflowKernel`): a bucket over
 *    the deeper tile but within the sorter's largest is listed and sorted by that tile at the same
 *    level, instead of costing its keys another level; so a deeper segment aims its buckets at
 *    the tile's target (ceil(len / target)), not at half of it.
 * 17. A counting-sort bucket of fewer values than sub-buckets is written from its scanned counts
 *    (each output slot finds its value by halving the value range): one atomic per key, and no
 *    key moves through the tile.
 * 18. A skewed cluster (a level-1 segment over kBlockMinMaxKeys) is bucketed over a core sampled
 *    from its keys, with the few keys outside it in the two end buckets (sampled_core.cuh,
 *    `SurveySegmentsKernel` in levels.cu): its buckets fit the tiles at level 1 instead of level 2.
 * 19. Chunks of kChunk = 32768 keys, counted and ranked in two passes of kChunkPass = 16384 (the
 *    rank tile's size): half the histogram matrix's entries, each of which costs a store and an
 *    atomic in the histogram and a load and an atomic in the partition; the partition keeps each
 *    bucket's cursor in registers from pass to pass.
 * 20. Level 0 samples its input (`ChooseFirstMap`, in each histogram block): when the sample
 *    shows at most kMaxFewValues values, level 0 has a bucket per value and one between each two
 *    (`SplitterMap`); the partition writes a one-value bucket straight to `out`, where it is
 *    final, so powers of two, a spike or a few repeated values sort in one level.
 * 21. Otherwise, when level 0's sample crowds one of kClusterBins equal-width bins, level 0
 *    buckets in three pieces of equal widths: below, over and above the crowd's sampled core
 *    (its strays dropped, a bucket's margin each side), each with buckets for its samples and
 *    their error, a whole number of values per core bucket (`FindCluster`, `PlanCorePieces`,
 *    `CoreMap`): a skewed cluster or a narrow range with a far key in one level.
 * 22. The partition takes a chunk's runs when it writes them (`TakeRun`): runs taken together lie
 *    side by side in each bucket and are written together, so the sectors two of them share fill
 *    up in L2 before they go to DRAM.
 * 23. Level 0 over every tile's one-level bound takes kOversizedFirstBuckets = 512 buckets (a pass
 *    writes runs of a whole 128-byte line), and the sort step reduces the min and max of a bucket
 *    within twice its segment's mean itself (`BlockReduces`): such buckets are oversized by plan,
 *    not skewed clusters.
 */
#include <algorithm>
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "chapters/01_minmax_reduction/block_minmax.cuh"
#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/03_mppsort/bitonic_tile.cuh"
#include "chapters/03_mppsort/block_scan.cuh"
#include "chapters/03_mppsort/counting_tile.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/radix_tile.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/launch_support.hpp"
#include "common/resident_grid.hpp"

namespace ch03::optimized {

static_assert(sizeof(KeyRange) == sizeof(ch01::MinMaxPair<std::uint32_t>) &&
                  offsetof(ch01::MinMaxPair<std::uint32_t>, max) == offsetof(KeyRange, max),
              "chapter 01 writes level 0's KeyRange as its MinMaxPair");

/// Whether a sorting block of @p Sorter (its shared struct and the work queue's ticket) stays
/// within @p bytes, the figure plan.hpp's tile tables give the planner.
/// @tparam Sorter a tile of step 5
/// @param[in] bytes `TileShape::smem`
template <class Sorter>
constexpr bool WithinTileBytes(std::uint32_t bytes) {
  return sizeof(typename Sorter::Shared) + sizeof(std::uint32_t) <= bytes;
}
static_assert(WithinTileBytes<CountingTile<4096>>(CountingTileBytes(4096)) &&
                  WithinTileBytes<CountingTile<8192>>(CountingTileBytes(8192)) &&
                  WithinTileBytes<CountingTile<16384>>(CountingTileBytes(16384)) &&
                  WithinTileBytes<BitonicTile<4096>>(BitonicTileBytes(4096)) &&
                  WithinTileBytes<BitonicTile<8192>>(BitonicTileBytes(8192)) &&
                  WithinTileBytes<RadixTile<256, 16>>(RadixTileBytes(4096, 256)) &&
                  WithinTileBytes<RadixTile<512, 16>>(RadixTileBytes(8192, 512)) &&
                  WithinTileBytes<RadixTile<512, 72>>(RadixTileBytes(36864, 512)),
              "plan.hpp's TileShape::smem bounds every tile's block");

/// Keys per thread of one pass over a chunk in the histogram/partition kernels.
inline constexpr int kChunkKeysPerThread = static_cast<int>(kChunkPass) / kChunkThreads;
static_assert(kChunkKeysPerThread * kChunkThreads == static_cast<int>(kChunkPass));
static_assert(kChunkPass <= 65536, "the partition keeps two ranks of a pass in one register");
/// Buckets per thread in the partition's scan and run bases.
inline constexpr int kBucketsPerThread = static_cast<int>(kMaxBuckets) / kChunkThreads;
static_assert(kBucketsPerThread == 8,
              "the partition's BlockExclusiveScan<8> scans eight counters per thread");

/// Passes of kChunkPass keys over chunk @p c (1 or 2).
/// @param[in] c the chunk
__device__ __forceinline__ std::uint32_t PassesOf(const ChunkView& c) {
  return (c.len + kChunkPass - 1) / kChunkPass;
}

/// Keys of pass @p pass over chunk @p c.
/// @param[in] c the chunk
/// @param[in] pass the pass, below `PassesOf(c)`
__device__ __forceinline__ std::uint32_t PassLength(const ChunkView& c, std::uint32_t pass) {
  const std::uint32_t left = c.len - pass * kChunkPass;
  return left < kChunkPass ? left : kChunkPass;
}

/// Loads the thread's keys of pass @p pass over chunk @p c with coalesced loads: key q is
/// element pass * kChunkPass + q * kChunkThreads + threadIdx.x of the chunk; entries past the
/// chunk's end are set to 0 and must be skipped by the caller.
/// @param[in] keys keys
/// @param[in] c the block's chunk
/// @param[in] pass the pass
/// @param[out] key the thread's kChunkKeysPerThread keys
__device__ __forceinline__ void LoadPass(const std::uint32_t* keys, const ChunkView& c,
                                         std::uint32_t pass,
                                         std::uint32_t (&key)[kChunkKeysPerThread]) {
  const std::uint32_t len = PassLength(c, pass), begin = c.begin + pass * kChunkPass;
#pragma unroll
  for (int q = 0; q < kChunkKeysPerThread; ++q) {
    const std::uint32_t i = q * kChunkThreads + threadIdx.x;
    key[q] = i < len ? keys[begin + i] : 0;
  }
}

/// Issues the loads of the first pass over chunk @p item into @p key (`LoadPass`) when the level
/// has that chunk and its segment is not all equal (such a chunk is neither counted nor ranked).
/// Every thread of the block gets the same answer.
/// @param[in] lv the level
/// @param[in] keys the level's source
/// @param[in] item chunk index of the level (may be past the last)
/// @param[out] key the thread's keys of that chunk's first pass
/// @return whether the loads were issued
__device__ __forceinline__ bool PrefetchChunk(const Level& lv, const std::uint32_t* keys,
                                              std::uint32_t item,
                                              std::uint32_t (&key)[kChunkKeysPerThread]) {
  if (item >= lv.state->chunks) return false;
  const ChunkView c = LocateChunk(lv.segments, lv.state->num_segments, item);
  const KeyRange range = lv.segments[c.segment].range;
  if (range.min == range.max) return false;
  LoadPass(keys, c, 0, key);
  return true;
}

// ------------------------------------------------------------------ step 0: min and max
// Chapter 01's `ch01::optimized::MinMax` (one pass, one launch), called by `Sort` below.

// ------------------------------------------------------------------ level 0's bucket map

/// Keys of level 0's sample that each thread of a histogram block holds in registers.
inline constexpr int kSamplesPerThread = static_cast<int>(kSampleKeys) / kChunkThreads;
static_assert(kSamplesPerThread * kChunkThreads == static_cast<int>(kSampleKeys),
              "the sample is a whole number of keys per thread");

/// Slots of `ChooseFirstMap`'s hash set of sampled values: room for kMaxFewValues values
/// and one more per thread (each stops inserting once more than kMaxFewValues are in).
inline constexpr std::uint32_t kValueSlots = 2048;
static_assert(kValueSlots > kMaxFewValues + 1 + kChunkThreads,
              "the set never fills, so every probe ends");

/// Bins over [min, max] that `FindCluster` counts the sample in: their counters fit the hash
/// set's words, and at 4 samples per bin uniform keys never reach `CrowdedSamples`.
inline constexpr std::uint32_t kClusterBins = 2048;
static_assert(kClusterBins <= 2 * kValueSlots, "the bins' counters fit the set's words");

/// What `FindCluster` finds (shared memory; read by thread 0 once it returns true).
struct ClusterShared {
  std::uint32_t first_bin;  ///< the first crowded bin
  std::uint32_t last_bin;   ///< the last crowded bin
  std::uint32_t lo;         ///< the smallest sample in the crowded bins
  std::uint32_t hi;         ///< the largest sample in the crowded bins
  std::uint32_t below;      ///< samples below [lo, hi]
  std::uint32_t above;      ///< samples above [lo, hi]
  CorePieces pieces;        ///< the core map's pieces
};

/// One look of `FindCluster` at the sample: counts the samples within @p span in kClusterBins
/// equal-width bins of it and finds the smallest and largest sample of the bins that hold more
/// than @p limit (`ClusterShared::lo`, `hi`). Every thread of the block calls it; uniform result.
/// @param[in] v the thread's samples
/// @param[in] span where to look, min <= max
/// @param[in] limit most samples of a bin that is not crowded
/// @param[out] bins kClusterBins words of shared memory
/// @param[out] sh where the span of the crowded bins goes
/// @return whether any bin is crowded
__device__ bool CrowdedSpan(const std::uint32_t (&v)[kSamplesPerThread], KeyRange span,
                            std::uint32_t limit, std::uint32_t* bins, ClusterShared& sh) {
  const EqualWidthMap bin{span.min, BucketScale(span.min, span.max, kClusterBins)};
  __syncthreads();  // the bins' words and `sh` no longer read
  for (std::uint32_t i = threadIdx.x; i < kClusterBins; i += blockDim.x) bins[i] = 0;
  if (threadIdx.x == 0) sh = ClusterShared{UINT_MAX, 0, UINT_MAX, 0, 0, 0, CorePieces{}};
  __syncthreads();  // counters zeroed
#pragma unroll
  for (int q = 0; q < kSamplesPerThread; ++q) {
    if (v[q] >= span.min && v[q] <= span.max) atomicAdd(&bins[bin(v[q])], 1u);
  }
  __syncthreads();  // counts complete
  for (std::uint32_t i = threadIdx.x; i < kClusterBins; i += blockDim.x) {
    if (bins[i] > limit) {
      atomicMin(&sh.first_bin, i);
      atomicMax(&sh.last_bin, i);
    }
  }
  __syncthreads();                               // the crowded bins known
  if (sh.first_bin > sh.last_bin) return false;  // none crowded
#pragma unroll
  for (int q = 0; q < kSamplesPerThread; ++q) {
    const std::uint32_t b = bin(v[q]);
    if (v[q] >= span.min && v[q] <= span.max && b >= sh.first_bin && b <= sh.last_bin) {
      atomicMin(&sh.lo, v[q]);
      atomicMax(&sh.hi, v[q]);
    }
  }
  __syncthreads();  // their span known
  return true;
}

// snippet-begin: ch03-find-cluster
/**
 * @brief Whether level 0's sample (@p v, kSampleKeys over the block) crowds an equal-width
 *        bucket, and if so the core map's pieces: counts the sample in kClusterBins equal-width
 *        bins of [min, max]; the crowd spans the samples of the bins over `CrowdedSamples`.
 *        A crowded bin may also hold a few samples of the keys spread around it, far from the
 *        crowd, so a second look counts the crowd's samples in kClusterBins bins of its own
 *        span and keeps the bins of two samples or more: a lone sample is a stray. The pieces
 *        below, over and above the crowd then get buckets by their samples (`PlanCorePieces`).
 * Every thread of the block calls it; uniform result.
 * @param[in] seg level 0's segment (its range)
 * @param[in] v the thread's samples
 * @param[out] bins kClusterBins words of shared memory
 * @param[out] sh where the pieces go
 * @param[in] buckets h0
 * @param[in] max_buckets most buckets of the core map
 */
__device__ bool FindCluster(const Segment& seg, const std::uint32_t (&v)[kSamplesPerThread],
                            std::uint32_t* bins, ClusterShared& sh, std::uint32_t buckets,
                            std::uint32_t max_buckets) {
  if (!CrowdedSpan(v, seg.range, CrowdedSamples(kClusterBins), bins, sh)) return false;  // spread
  KeyRange crowd{sh.lo, sh.hi};
  const std::uint64_t fine = (std::uint64_t{crowd.max} - crowd.min + kClusterBins) / kClusterBins;
  if (CrowdedSpan(v, crowd, 1, bins, sh)) crowd = KeyRange{sh.lo, sh.hi};  // strays dropped
#pragma unroll
  for (int q = 0; q < kSamplesPerThread; ++q) {
    if (v[q] < crowd.min) atomicAdd(&sh.below, 1u);
    if (v[q] > crowd.max) atomicAdd(&sh.above, 1u);
  }
  __syncthreads();  // the pieces' samples counted
  if (threadIdx.x == 0) {
    // The core is widened by at least two of the second look's bins: one it may have dropped at
    // either edge of the crowd (a bin of one sample), and the keys beyond that.
    sh.pieces = PlanCorePieces(seg.range, crowd, static_cast<std::uint32_t>(2 * fine), sh.below,
                               sh.above, buckets, max_buckets);
  }
  __syncthreads();  // the pieces visible
  return sh.pieces.over > 0;
}
// snippet-end: ch03-find-cluster

/// Level 0's bucket map as `ChooseFirstMap` chooses it: the fields of level 0's segment it sets.
/// (Trivial, to live in shared memory: `ChooseFirstMap` sets every field.)
struct FirstMap {
  std::uint32_t kind;     ///< `BucketMapKind`
  std::uint32_t buckets;  ///< h
  std::uint32_t values;   ///< m (kSplitters), else 0
  KeyRange core;          ///< the core (kCore)
  std::uint32_t low;      ///< buckets below the core (kCore), else 1
  std::uint32_t high;     ///< buckets above the core (kCore), else 1
};

/// Sets @p map's fields in @p seg.
/// @param[in] map the choice
/// @param[in,out] seg level 0's segment
__host__ __device__ inline void ApplyFirstMap(const FirstMap& map, Segment& seg) {
  seg.sampled = map.kind;
  seg.buckets = map.buckets;
  seg.splitters = map.values;
  seg.core = map.core;
  seg.core_low = map.low;
  seg.core_high = map.high;
}

/// Shared memory of `ChooseFirstMap` besides the block's kMaxBuckets counter words.
struct FirstMapShared {
  std::uint32_t found[kMaxFewValues];  ///< the sample's values, when few, in no order
  std::uint32_t distinct;              ///< values in the set
  std::uint32_t listed;                ///< values listed in `found`
  ClusterShared cluster;               ///< `FindCluster`'s findings
  FirstMap map;                        ///< the choice
};

/**
 * @brief Level 0's bucket map, chosen by one block from a sample of the input: draws
 *        kSampleKeys keys (`SamplePosition`) and collects their distinct values in a hash set
 *        in shared memory; when there are at most kMaxFewValues of them, level 0 buckets around
 *        those values (`kSplitters`: 2m + 1 buckets, the odd ones of one value each); else, when
 *        the sample crowds an equal-width bin, in three pieces of equal widths around the crowd's
 *        sampled core (`kCore`, `FindCluster`); else by its h0 equal widths.
 *
 * A value drawn many times (a spike, powers of two, a few repeated values) fills an equal-width
 * bucket that then needs level after level, or one value per bucket that a block must still
 * reduce and copy; around the sampled values each such value gets a bucket of its own that is
 * final once partitioned, and no key of it is sorted on chip. A cluster (skewed keys, a narrow
 * range with a far key) fills a few equal-width buckets that the next level must read and write
 * again; over its core, with the keys below and above it in buckets of their own, it is split at
 * once. Spread keys show thousands of values and keep equal widths, which cost one multiply per
 * key; a sample of up to 64 values costs a binary search of up to 7 steps per key.
 *
 * The sample is the same for every block, and so is the choice: each histogram block makes it
 * for itself (`HistogramKernel`), under the loads of its first chunk, instead of waiting for a
 * kernel of one block to make it for all.
 * Every thread of the block calls it; it ends with a barrier.
 * @param[in] keys the input
 * @param[in] seg level 0's segment (begin, len, chunks, range)
 * @param[in] buckets h0, the equal widths' count
 * @param[in] max_buckets most buckets of a core map (`FirstLevelPlan::max_buckets`)
 * @param[out] words the block's kMaxBuckets counter words: the set and the bins meanwhile, and
 *             the sorted values in their second half (`SplitterWords`) when the map is
 *             kSplitters
 * @param[out] sh the choice (`FirstMapShared::map`) and scratch
 * Reads kSampleKeys keys.
 */
__device__ void ChooseFirstMap(const std::uint32_t* keys, const Segment& seg, std::uint32_t buckets,
                               std::uint32_t max_buckets, std::uint32_t* words,
                               FirstMapShared& sh) {
  static_assert(2 * kValueSlots <= kMaxBuckets / 2, "the set below the values' half");
  auto* set = reinterpret_cast<unsigned long long*>(words);  // (1 << 32) | value, 0 if empty
  // snippet-begin: ch03-few-values
  std::uint32_t m = 0;  // the sample's values, when few
  bool crowd = false;   // else: a cluster that crowds equal widths (`FindCluster`)
  if (seg.len >= kMinSampledKeys && seg.range.min < seg.range.max) {  // uniform per block
    std::uint32_t v[kSamplesPerThread];
#pragma unroll
    for (int q = 0; q < kSamplesPerThread; ++q) {  // all loads in flight at once
      v[q] = keys[SamplePosition(seg, q * kChunkThreads + threadIdx.x)];
    }
    for (std::uint32_t i = threadIdx.x; i < kValueSlots; i += blockDim.x) set[i] = 0;
    if (threadIdx.x == 0) sh.distinct = sh.listed = 0;
    __syncthreads();  // the set empty
    auto* watch = const_cast<volatile std::uint32_t*>(&sh.distinct);
    for (int q = 0; q < kSamplesPerThread && *watch <= kMaxFewValues; ++q) {  // many values: stop
      const unsigned long long entry = (1ull << 32) | v[q];
      for (std::uint32_t slot = (v[q] * 0x9E3779B9u) >> 21;; slot = (slot + 1) % kValueSlots) {
        unsigned long long seen = const_cast<volatile unsigned long long*>(set)[slot];
        if (seen == 0) {
          seen = atomicCAS(&set[slot], 0ull, entry);
          if (seen == 0) {  // a new value
            atomicAdd(&sh.distinct, 1u);
            break;
          }
        }
        if (seen == entry) break;  // a value already in
      }
    }
    __syncthreads();  // every insert done
    if (sh.distinct <= kMaxFewValues) {
      for (std::uint32_t i = threadIdx.x; i < kValueSlots; i += blockDim.x) {
        if (set[i] != 0) sh.found[atomicAdd(&sh.listed, 1u)] = static_cast<std::uint32_t>(set[i]);
      }
      __syncthreads();  // the values listed (in no order)
      m = sh.listed;
      if (threadIdx.x < m) {  // value t goes where the values below it end
        const std::uint32_t mine = sh.found[threadIdx.x];
        std::uint32_t rank = 0;
        for (std::uint32_t u = 0; u < m; ++u) rank += sh.found[u] < mine ? 1 : 0;
        SplitterWords(words)[rank] = mine;
      }
    }
    // snippet-end: ch03-few-values
    // Many values: is there a cluster? The set's words become the bins' counters.
    if (m == 0) crowd = FindCluster(seg, v, words, sh.cluster, buckets, max_buckets);
  }
  if (threadIdx.x == 0) {
    FirstMap map{kEqualWidths, buckets, 0, KeyRange{0xFFFFFFFFu, 0}, 1, 1};
    if (m > 0) {
      map.kind = kSplitters;
      map.values = m;
      map.buckets = 2 * m + 1;
    } else if (crowd) {
      map.kind = kCore;
      const CorePieces& p = sh.cluster.pieces;
      map.core = p.core;
      map.low = p.low;
      map.high = p.high;
      map.buckets = p.low + p.over + p.high;
    }
    sh.map = map;
  }
  __syncthreads();  // the choice and the values visible
}

/// Writes the choice @p map into level 0's segment and state, and the values of a kSplitters
/// map (the second half of @p words) to the level's global copy, for the partition and the sort
/// step. Every thread of one block calls it.
/// @param[in] lv level 0 (`Level::first`)
/// @param[in] map the choice
/// @param[in] words the block's counter words
__device__ void PublishFirstMap(const Level& lv, const FirstMap& map, const std::uint32_t* words) {
  for (std::uint32_t i = threadIdx.x; i < map.values; i += blockDim.x) {
    lv.first.values[i] = SplitterWords(words)[i];
  }
  if (threadIdx.x == 0) {
    ApplyFirstMap(map, *lv.first.segment);
    lv.state->buckets = map.buckets;
    lv.state->matrix = map.buckets * lv.first.segment->chunks;
  }
}

// ------------------------------------------------------------------ step 1: histograms

/**
 * @brief Step 1: for each chunk of the level, counts its keys per bucket of its segment in
 *        shared memory, writes the counts to the chunk's row of the chunk-major matrix and adds
 *        them to the level's bucket totals (`Counts`).
 *
 * A block handles chunks blockIdx.x, blockIdx.x + gridDim.x, ..., each in passes of kChunkPass
 * keys, and issues the next pass's loads before it counts the current one, so that they land
 * while its shared atomics run: a pass's atomics take longer than its loads, and blocks that
 * load, then count, then write leave the memory idle while they count.
 * @par Launch configuration
 * A resident grid of kChunkThreads-thread blocks (one per SM: two passes' keys per thread need
 * up to 64 registers), at most one per chunk; static shared memory kMaxBuckets words.
 * @param[in] lv the level
 * @param[in] b the sort's arrays
 * @param[in,out] hist the matrix (entry matrix_base + local * buckets + bucket: keys of the
 *                 bucket in the chunk) and the bucket totals (all-equal segments are skipped:
 *                 their partition is a copy)
 * Reads 4 bytes per key; writes 4 * buckets bytes per chunk, coalesced, and adds as many to the
 * totals.
 */
__global__ void __launch_bounds__(kChunkThreads, 1)
    HistogramKernel(Level lv, Buffers b, Counts hist) {
  __shared__ alignas(16) std::uint32_t counts[kMaxBuckets];
  __shared__ FirstMapShared first;
  const std::uint32_t num = lv.state->num_segments, chunks = lv.state->chunks;
  const std::uint32_t* keys = LevelSource(b, lv.state->level);
  // snippet-begin: ch03-opt-histogram
  // All 16 loads of a pass are issued before its first atomic (16 loads in flight per thread,
  // not the few a strided loop keeps), and a pass ahead: the chunk's second pass under the
  // first's atomics, the block's next chunk under this one's row.
  std::uint32_t key[kChunkKeysPerThread];
  PrefetchChunk(lv, keys, blockIdx.x, key);
  // Level 0's map: every block draws the same sample under its first chunk's loads and makes the
  // same choice (`ChooseFirstMap`); the first block publishes it for the later steps.
  const bool choose = lv.first.buckets != 0;  // uniform
  if (choose) {
    ChooseFirstMap(keys, lv.segments[0], lv.first.buckets, lv.first.max_buckets, counts, first);
    if (blockIdx.x == 0) PublishFirstMap(lv, first.map, counts);
  } else {
    LoadSplitters(lv, counts);
  }
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    const ChunkView c = LocateChunk(lv.segments, num, item);
    Segment seg = lv.segments[c.segment];
    if (choose) ApplyFirstMap(first.map, seg);  // the first block may still be publishing it
    if (seg.range.min != seg.range.max) {  // uniform per block; an all-equal chunk is not counted
      for (std::uint32_t k = threadIdx.x; k < seg.buckets; k += blockDim.x) counts[k] = 0;
      __syncthreads();  // counters zeroed before any thread adds
      const std::uint32_t passes = PassesOf(c);
      for (std::uint32_t pass = 0; pass < passes; ++pass) {
        std::uint32_t next[kChunkKeysPerThread];
        if (pass + 1 < passes) LoadPass(keys, c, pass + 1, next);  // in flight under the atomics
        const std::uint32_t len = PassLength(c, pass);
        WithBucketMap(seg, counts, [&](const auto& bucket) {
#pragma unroll
          for (int q = 0; q < kChunkKeysPerThread; ++q) {
            if (q * kChunkThreads + threadIdx.x < len) atomicAdd(&counts[bucket(key[q])], 1u);
          }
        });
        if (pass + 1 < passes) {
#pragma unroll
          for (int q = 0; q < kChunkKeysPerThread; ++q) key[q] = next[q];
        }
      }
      __syncthreads();                                 // all keys counted
      PrefetchChunk(lv, keys, item + gridDim.x, key);  // in flight under the row's stores
      // The chunk's row: consecutive threads store consecutive words, and add to consecutive
      // totals (atomics whose result is not waited for).
      std::uint32_t* row = hist.matrix + seg.matrix_base + c.local * seg.buckets;
      for (std::uint32_t k = threadIdx.x; k < seg.buckets; k += blockDim.x) {
        const std::uint32_t count = counts[k];
        row[k] = count;
        if (count != 0) atomicAdd(&hist.totals[seg.bucket_base + k], count);
      }
      __syncthreads();  // counters read before the next chunk zeroes them
    } else {
      // PrefetchChunk did not load this chunk: the next chunk's first pass goes into key[].
      PrefetchChunk(lv, keys, item + gridDim.x, key);
    }
  }
  // snippet-end: ch03-opt-histogram
}

// ------------------------------------------------- steps 2 and 3: scan of the bucket totals
// Chapter 02's `ch02::optimized::ExclusiveScan` over the level's bucket totals, called by `Sort`.

// ------------------------------------------------------------------ step 4: partition

/// Copies chunk @p c of an all-equal segment to `out`, where it is final (equal keys are in
/// order), unless the level reads from `out` already. Every thread of the block calls it.
/// @param[in] keys the level's source
/// @param[in] b the sort's arrays
/// @param[in] c the chunk
__device__ __forceinline__ void CopyFinalChunk(const std::uint32_t* keys, const Buffers& b,
                                               const ChunkView& c) {
  if (keys == b.out) return;
  for (std::uint32_t i = threadIdx.x; i < c.len; i += blockDim.x) {
    b.out[c.begin + i] = keys[c.begin + i];
  }
}

// snippet-begin: ch03-opt-take-run
/// Takes chunk @p c's run of bucket @p k of @p seg out of the bucket's total: the total, less the
/// chunk's count, before the subtraction is the run's offset within the bucket (the runs of a
/// bucket fill it from its end down, in the order they are taken). A chunk without keys of the
/// bucket takes nothing.
/// @param[in,out] hist the level's matrix, totals and starts
/// @param[in] seg the chunk's segment
/// @param[in] c the chunk
/// @param[in] k bucket of the segment
/// @return where the run starts in the level's target
__device__ __forceinline__ std::uint32_t TakeRun(const Counts& hist, const Segment& seg,
                                                 const ChunkView& c, std::uint32_t k) {
  const std::uint32_t count = hist.matrix[seg.matrix_base + c.local * seg.buckets + k];
  const std::uint32_t start = BucketStart(hist.starts, seg, k);
  return count == 0 ? start : start + atomicSub(&hist.totals[seg.bucket_base + k], count) - count;
}
// snippet-end: ch03-opt-take-run

/**
 * @brief Step 4: for each chunk, in passes of kChunkPass keys, ranks a pass's keys by bucket in
 *        shared memory (a block-local counting sort), then writes the ranked tile out so that
 *        consecutive threads store consecutive addresses of one bucket's run.
 *
 * The chunk takes its run of each bucket k once, before its first pass: its count of k (its
 * row of the matrix) subtracted atomically from k's total leaves the run's offset within the
 * bucket, so the run starts at cursor[k] = `BucketStart` of k plus that offset, kept in the
 * registers of the thread that owns bucket k. Runs taken at about the same time sit side by
 * side in each bucket, and are written at about the same time: the pieces of a sector that two
 * blocks' runs share meet in L2. Key i of a pass's ranked tile belongs to bucket k and goes to
 * cursor[k] + i - local_start[k]; once every key sits in the tile, each counter is turned from
 * its bucket's local start into that run base in place, so one word per bucket serves both, and
 * the cursor moves past the pass's keys of bucket k for the next pass. A chunk of an all-equal
 * segment is copied to `out` (it is final).
 * A block handles chunks blockIdx.x, blockIdx.x + gridDim.x, ...; once a pass's keys sit ranked
 * in the tile, the registers that held them take the next pass's keys, whose loads stay in
 * flight while the tile is written out (one block per SM: nothing else would hide them).
 * @par Launch configuration
 * A resident grid of kChunkThreads-thread blocks (one per SM: 64 registers per thread), at most
 * one per chunk; dynamic shared memory 4 (kChunkPass + kMaxBuckets) bytes (96 KiB: within the
 * 99 KiB a block may have on sm_86, sm_89 and sm_120; `PartitionPath::kRankTile`).
 * @param[in] lv the level
 * @param[in] b the sort's arrays (reads `LevelSource`, writes `LevelTarget`)
 * @param[in,out] hist the level's matrix, bucket totals (zero on return) and starts
 * Reads and writes 4 bytes per key.
 */
__global__ void __launch_bounds__(kChunkThreads) PartitionKernel(Level lv, Buffers b, Counts hist) {
  extern __shared__ uint4 smem_partition[];
  auto* tile = reinterpret_cast<std::uint32_t*>(smem_partition);
  std::uint32_t* counts = tile + kChunkPass;  // local starts, then run bases
  __shared__ std::uint32_t scan_scratch[kBlockScanScratch];
  const std::uint32_t level = lv.state->level, num = lv.state->num_segments;
  const std::uint32_t chunks = lv.state->chunks;
  const std::uint32_t* keys = LevelSource(b, level);
  std::uint32_t* target = LevelTarget(b, level);
  std::uint32_t key[kChunkKeysPerThread];
  bool loaded = false;  // key[] holds (or is loading) chunk `item`'s keys; uniform per block
  LoadSplitters(lv, counts);
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    const ChunkView c = LocateChunk(lv.segments, num, item);
    const Segment seg = lv.segments[c.segment];
    if (seg.range.min == seg.range.max) {
      CopyFinalChunk(keys, b, c);
      continue;  // uniform per block (and PrefetchChunk never loads such a chunk)
    }
    // snippet-begin: ch03-opt-partition-rank
    if (!loaded) LoadPass(keys, c, 0, key);  // coalesced; in flight while the cursors load
    WithBucketMap(seg, counts, [&](const auto& bucket) {
      // The chunk's runs, taken once per chunk: where the chunk's run of each of this thread's
      // buckets starts in the output. The cursors carry over from pass to pass (coalesced loads
      // and atomics, all of a thread's in flight at once).
      std::uint32_t cursor[kBucketsPerThread];
#pragma unroll
      for (int u = 0; u < kBucketsPerThread; ++u) {
        const std::uint32_t k = u * kChunkThreads + threadIdx.x;
        if (k < seg.buckets) cursor[u] = TakeRun(hist, seg, c, k);
      }
      const std::uint32_t passes = PassesOf(c);
      for (std::uint32_t pass = 0; pass < passes; ++pass) {
        const std::uint32_t len = PassLength(c, pass);
        for (std::uint32_t k = threadIdx.x; k < seg.buckets; k += blockDim.x) counts[k] = 0;
        __syncthreads();  // counters zeroed

        // Each key's rank within its bucket comes from the shared atomic; a rank is below
        // kChunkPass, so two share a register (16 bits each), which leaves the registers for
        // the cursors.
        std::uint32_t rank[kChunkKeysPerThread / 2] = {};
#pragma unroll
        for (int q = 0; q < kChunkKeysPerThread; ++q) {
          if (q * kChunkThreads + threadIdx.x < len) {
            rank[q / 2] |= atomicAdd(&counts[bucket(key[q])], 1u) << (16 * (q % 2));
          }
        }
        __syncthreads();  // counts complete
        // counts[k] becomes bucket k's local start.
        BlockExclusiveScan<kBucketsPerThread>(counts, seg.buckets, scan_scratch);
#pragma unroll
        for (int q = 0; q < kChunkKeysPerThread; ++q) {
          if (q * kChunkThreads + threadIdx.x < len) {
            const std::uint32_t r = (rank[q / 2] >> (16 * (q % 2))) & 0xFFFFu;
            tile[counts[bucket(key[q])] + r] = key[q];
          }
        }
        __syncthreads();  // tile ranked
        // Tile entry i of bucket k goes to cursor[k] + i - start[k]; the cursor then moves past
        // the pass's keys of bucket k, start[k + 1] - start[k] (the pass's end after the last).
        std::uint32_t base[kBucketsPerThread];
#pragma unroll
        for (int u = 0; u < kBucketsPerThread; ++u) {
          const std::uint32_t k = u * kChunkThreads + threadIdx.x;
          if (k < seg.buckets) {
            const std::uint32_t start = counts[k], end = k + 1 < seg.buckets ? counts[k + 1] : len;
            base[u] = cursor[u] - start;  // cursor >= start: no wrap-around
            cursor[u] += end - start;
          }
        }
        __syncthreads();  // every start read before the run bases replace them
#pragma unroll
        for (int u = 0; u < kBucketsPerThread; ++u) {
          const std::uint32_t k = u * kChunkThreads + threadIdx.x;
          if (k < seg.buckets) counts[k] = base[u];
        }
        __syncthreads();  // run bases ready
        // snippet-end: ch03-opt-partition-rank
        // snippet-begin: ch03-opt-partition-write
        // key[] is free: the next pass's loads (this chunk's, or the block's next chunk's first)
        // go out now and land while this tile is written.
        if (pass + 1 < passes) {
          LoadPass(keys, c, pass + 1, key);
        } else {
          loaded = PrefetchChunk(lv, keys, item + gridDim.x, key);
        }
        for (std::uint32_t i = threadIdx.x; i < len; i += blockDim.x) {
          const std::uint32_t k = tile[i], bk = bucket(k);
          // consecutive i; a bucket of one value (splitters) is final: straight to out
          (bucket.Final(bk) ? b.out : target)[counts[bk] + i] = k;
        }
        __syncthreads();  // tile and run bases read before the next pass overwrites them
      }
    });
    // snippet-end: ch03-opt-partition-write
  }
}

/**
 * @brief Step 4 on a GPU whose blocks cannot hold the rank tile (`PartitionPath::kScatter`):
 *        for each chunk, every key takes the next slot of its bucket's run from a cursor in
 *        shared memory (one shared atomic per key) and is stored there directly.
 *
 * Cursor k starts at the chunk's run of bucket k (`TakeRun`, as in `PartitionKernel`); the run
 * holds exactly the chunk's keys of bucket k (the histogram counted them), so the atomics hand
 * out its slots and no more. The stores scatter within the runs instead of forming coalesced
 * ones, and the keys of a bucket land in no particular order (the sort step orders them). A
 * chunk of an all-equal segment is copied to `out`.
 * @par Launch configuration
 * A resident grid of kChunkThreads-thread blocks, at most one per chunk; static shared memory
 * kMaxBuckets words (32 KiB: any GPU of sm_75 or newer, no opt-in).
 * @param[in] lv the level
 * @param[in] b the sort's arrays (reads `LevelSource`, writes `LevelTarget`)
 * @param[in,out] hist the level's matrix, bucket totals (zero on return) and starts
 * Reads and writes 4 bytes per key.
 */
__global__ void __launch_bounds__(kChunkThreads)
    PartitionScatterKernel(Level lv, Buffers b, Counts hist) {
  __shared__ std::uint32_t cursor[kMaxBuckets];
  const std::uint32_t level = lv.state->level, num = lv.state->num_segments;
  const std::uint32_t chunks = lv.state->chunks;
  const std::uint32_t* keys = LevelSource(b, level);
  std::uint32_t* target = LevelTarget(b, level);
  LoadSplitters(lv, cursor);
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    const ChunkView c = LocateChunk(lv.segments, num, item);
    const Segment seg = lv.segments[c.segment];
    if (seg.range.min == seg.range.max) {
      CopyFinalChunk(keys, b, c);
      continue;  // uniform per block
    }
    // snippet-begin: ch03-opt-partition-scatter
    std::uint32_t key[kChunkKeysPerThread];
    LoadPass(keys, c, 0, key);  // all of a thread's loads in flight while the cursors are set
    for (std::uint32_t k = threadIdx.x; k < seg.buckets; k += blockDim.x) {
      cursor[k] = TakeRun(hist, seg, c, k);
    }
    __syncthreads();  // cursors set
    WithBucketMap(seg, cursor, [&](const auto& bucket) {
      const std::uint32_t passes = PassesOf(c);
      for (std::uint32_t pass = 0; pass < passes; ++pass) {
        if (pass > 0) LoadPass(keys, c, pass, key);
        const std::uint32_t len = PassLength(c, pass);
#pragma unroll
        for (int q = 0; q < kChunkKeysPerThread; ++q) {
          if (q * kChunkThreads + threadIdx.x < len) {
            const std::uint32_t bk = bucket(key[q]);
            (bucket.Final(bk) ? b.out : target)[atomicAdd(&cursor[bk], 1u)] = key[q];
          }
        }
      }
    });
    __syncthreads();  // cursors read before the next chunk sets them
    // snippet-end: ch03-opt-partition-scatter
  }
}

// ------------------------------------------------------------------ step 5: sort each bucket

/// Appends @p span to @p list (one thread); a full list marks the level's state as failed.
/// @param[in] list the span list
/// @param[in,out] state the level's state
/// @param[in] span the oversized bucket
__device__ void AppendSpan(const SpanList& list, LevelState* state, const Span& span) {
  const std::uint32_t i = atomicAdd(list.count, 1u);
  if (i < list.capacity) {
    list.spans[i] = span;
  } else {
    atomicOr(&state->error, static_cast<std::uint32_t>(kErrorListFull));
  }
}

/**
 * @brief Step 5: for each bucket of the level, sorts it on chip with `Sorter` from where the
 *        partition put it into `out`; lists it for the next level when it is over the tile.
 *
 * Bucket k of a segment is [begin, end) from the scanned bucket totals (`BucketStart` of k and
 * of k + 1). Over Sorter::kKeys keys and where `BlockReduces`, the block reduces its
 * min and max (16 loads in flight per thread) and lists it with them, or copies it to `out` when
 * they are equal; longer buckets are listed unreduced. Segments with min == max were already
 * written by the partition.
 * @par Launch configuration
 * Blocks of Sorter::kThreads threads, one per bucket (level 0) or a resident grid taking buckets
 * from the level's queue; dynamic shared memory sizeof(Sorter::Shared); registers capped so
 * that Sorter::kMinBlocks blocks fit an SM.
 * @tparam Sorter `RadixTile<...>` or `BitonicTile<...>`
 * @param[in] lv the level
 * @param[in] b the sort's arrays (reads `LevelTarget`, writes `out`)
 * @param[in] starts the level's scanned bucket totals
 * @param[in] list where oversized buckets go
 * @param[in] overflow where buckets of (Sorter::kKeys, overflow_keys] go (capacity 0: none)
 * @param[in] overflow_keys the overflow tile (`OverflowTile`), or 0
 * Reads and writes 4 bytes per key of the sorted buckets; reads 4 of the reduced ones.
 */
template <class Sorter>
__global__ void __launch_bounds__(Sorter::kThreads, Sorter::kMinBlocks)
    SortBucketsKernel(Level lv, Buffers b, const std::uint32_t* starts, SpanList list,
                      SpanList overflow, std::uint32_t overflow_keys) {
  extern __shared__ uint4 smem_sort[];
  auto& sh = *reinterpret_cast<typename Sorter::Shared*>(smem_sort);
  __shared__ std::uint32_t ticket;
  for (WorkQueue queue; queue.Next(lv.dynamic, &lv.state->next_sort, lv.state->buckets, &ticket);) {
    // Read per bucket rather than kept in registers across the loop: the radix sorter needs
    // them all for its keys.
    const std::uint32_t item = queue.item(), num = lv.state->num_segments;
    const std::uint32_t* part = LevelTarget(b, lv.state->level);
    const std::uint32_t s = FindSegment(lv.segments, num, item, &Segment::bucket_base);
    const Segment seg = lv.segments[s];
    if (seg.range.min == seg.range.max) continue;  // the partition wrote it to out
    const std::uint32_t k = item - seg.bucket_base;
    if (seg.sampled == kSplitters && SplitterMap::Final(k)) continue;  // the partition wrote it
    const std::uint32_t begin = BucketStart(starts, seg, k);
    const std::uint32_t end =
        k + 1 < seg.buckets ? BucketStart(starts, seg, k + 1) : seg.begin + seg.len;
    const std::uint32_t len = end - begin;
    if (len == 0) continue;
    if (len > Sorter::kKeys && len <= overflow_keys) {
      // A larger tile sorts it after this kernel (SortOverflowKernel), at this level.
      if (threadIdx.x == 0) AppendSpan(overflow, lv.state, Span{begin, len, {UINT_MAX, 0}});
      continue;
    }
    // snippet-begin: ch03-opt-oversized-reduce
    if (!BlockReduces(len, seg.len, seg.buckets)) {
      // A skewed cluster, which one block would take long over: SurveySegmentsKernel reduces it
      // at the next level.
      if (threadIdx.x == 0) AppendSpan(list, lv.state, Span{begin, len, {UINT_MAX, 0}});
      continue;
    }
    if (len > Sorter::kKeys) {
      // The next level needs this bucket's own [min, max]: reduce it here, where the block
      // already knows the bucket, instead of in a separate pass over every oversized key.
      constexpr int kUnroll = 16;  // independent loads in flight per thread
      const std::uint32_t* keys = part + begin;
      std::uint32_t lo = UINT_MAX, hi = 0, i = threadIdx.x;
      for (; i + (kUnroll - 1) * Sorter::kThreads < len; i += kUnroll * Sorter::kThreads) {
        std::uint32_t v[kUnroll];
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) v[j] = keys[i + j * Sorter::kThreads];
#pragma unroll
        for (int j = 0; j < kUnroll; ++j) {
          lo = min(lo, v[j]);
          hi = max(hi, v[j]);
        }
      }
      for (; i < len; i += Sorter::kThreads) {
        lo = min(lo, keys[i]);
        hi = max(hi, keys[i]);
      }
      // snippet-end: ch03-opt-oversized-reduce
      // snippet-begin: ch03-opt-oversized-list
      ch01::BlockMinMax<std::uint32_t, Sorter::kThreads>(lo, hi, sh.s_min, sh.s_max);
      if (threadIdx.x == 0) {
        sh.lo = lo;
        sh.word = hi;
      }
      __syncthreads();  // the bucket's min and max visible to all
      lo = sh.lo;
      hi = sh.word;
      if (lo == hi) {
        // All equal: already sorted, so final (copied when this level partitioned elsewhere).
        if (part != b.out) {
          for (std::uint32_t j = threadIdx.x; j < len; j += blockDim.x) b.out[begin + j] = keys[j];
        }
      } else if (threadIdx.x == 0) {
        AppendSpan(list, lv.state, Span{begin, len, {lo, hi}});
      }
      __syncthreads();  // sh read before the block's next bucket reuses it
      continue;
    }
    Sorter::SortBucket(part + begin, b.out + begin, len, sh);
    // snippet-end: ch03-opt-oversized-list
  }
}

/**
 * @brief Step 5 for the buckets that `SortBucketsKernel` found over its tile but within the
 *        overflow tile: sorts each listed bucket on chip with `Sorter` into `out`.
 * @par Launch configuration
 * A resident grid of Sorter::kThreads-thread blocks taking the list's entries from the level's
 * queue (`next_overflow`); dynamic shared memory sizeof(Sorter::Shared).
 * @tparam Sorter the overflow tile (`OverflowTile`)
 * @param[in] lv the level
 * @param[in] b the sort's arrays (reads `LevelTarget`, writes `out`)
 * @param[in] spans the overflow list (`state->overflow_count` entries)
 * Reads and writes 4 bytes per key of the listed buckets.
 */
template <class Sorter>
__global__ void __launch_bounds__(Sorter::kThreads, Sorter::kMinBlocks)
    SortOverflowKernel(Level lv, Buffers b, const Span* spans) {
  extern __shared__ uint4 smem_sort[];
  auto& sh = *reinterpret_cast<typename Sorter::Shared*>(smem_sort);
  __shared__ std::uint32_t ticket;
  for (WorkQueue queue;
       queue.Next(true, &lv.state->next_overflow, lv.state->overflow_count, &ticket);) {
    const Span span = spans[queue.item()];
    const std::uint32_t* part = LevelTarget(b, lv.state->level);
    Sorter::SortBucket(part + span.begin, b.out + span.begin, span.len, sh);
  }
}

// ------------------------------------------------------------------ launchers

namespace {
/// Blocks for a level's kernel: one per item at level 0, else as many as fit on the GPU.
unsigned GridFor(const Level& lv, const void* kernel, int threads, std::size_t smem,
                 std::uint32_t items) {
  return lv.dynamic ? staged::ResidentBlocks(kernel, threads, smem) : items;
}

template <class Sorter>
void LaunchSortBuckets(const Level& lv, const Buffers& b, const std::uint32_t* starts,
                       const SpanList& list, const SpanList& overflow, std::uint32_t overflow_keys,
                       std::uint32_t items, cudaStream_t stream) {
  const auto kernel = SortBucketsKernel<Sorter>;
  constexpr std::size_t kSmem = sizeof(typename Sorter::Shared);
  // Over 48 KiB of dynamic shared memory must be opted into; repeating it is cheap and keeps
  // the launcher self-contained.
  staged::OptInSharedMemory(reinterpret_cast<const void*>(kernel), kSmem);
  const unsigned grid =
      GridFor(lv, reinterpret_cast<const void*>(kernel), Sorter::kThreads, kSmem, items);
  if (grid == 0) return;
  kernel<<<grid, Sorter::kThreads, kSmem, stream>>>(lv, b, starts, list, overflow, overflow_keys);
  CUDA_CHECK_LAST_LAUNCH();
}

template <class Sorter>
void LaunchSortOverflow(const Level& lv, const Buffers& b, const SpanList& overflow,
                        cudaStream_t stream) {
  const auto kernel = SortOverflowKernel<Sorter>;
  constexpr std::size_t kSmem = sizeof(typename Sorter::Shared);
  staged::OptInSharedMemory(reinterpret_cast<const void*>(kernel), kSmem);
  const unsigned grid =
      staged::ResidentBlocks(reinterpret_cast<const void*>(kernel), Sorter::kThreads, kSmem);
  kernel<<<grid, Sorter::kThreads, kSmem, stream>>>(lv, b, overflow.spans);
  CUDA_CHECK_LAST_LAUNCH();
}

/// Dynamic shared memory of PartitionKernel: the tile of one pass and one word per bucket.
constexpr std::size_t kPartitionDynamicBytes = 4 * (std::size_t{kChunkPass} + kMaxBuckets);
static_assert(kPartitionDynamicBytes + 4 * kBlockScanScratch <= kPartitionSharedBytes,
              "plan.hpp's kPartitionSharedBytes bounds the rank-tile partition's block");
}  // namespace

void Histogram(const Level& lv, const Buffers& b, const Counts& hist, std::uint32_t items,
               cudaStream_t stream) {
  const auto* kernel = reinterpret_cast<const void*>(HistogramKernel);
  if (!lv.dynamic && items == 0) return;
  // Always a resident grid: a block's later chunks are what its loads overlap with.
  const unsigned grid = lv.dynamic ? staged::ResidentBlocks(kernel, kChunkThreads, 0)
                                   : staged::ResidentGrid(kernel, kChunkThreads, 0, items, 1);
  HistogramKernel<<<grid, kChunkThreads, 0, stream>>>(lv, b, hist);
  CUDA_CHECK_LAST_LAUNCH();
}

void Partition(const Level& lv, const Buffers& b, const Counts& hist, PartitionPath path,
               std::uint32_t items, cudaStream_t stream) {
  if (!lv.dynamic && items == 0) return;
  const bool rank = path == PartitionPath::kRankTile;
  const auto* kernel = rank ? reinterpret_cast<const void*>(PartitionKernel)
                            : reinterpret_cast<const void*>(PartitionScatterKernel);
  const std::size_t smem = rank ? kPartitionDynamicBytes : 0;
  staged::OptInSharedMemory(kernel, smem);
  // Always a resident grid: a block's later chunks are what its loads overlap with.
  const unsigned grid = lv.dynamic ? staged::ResidentBlocks(kernel, kChunkThreads, smem)
                                   : staged::ResidentGrid(kernel, kChunkThreads, smem, items, 1);
  if (rank) {
    PartitionKernel<<<grid, kChunkThreads, smem, stream>>>(lv, b, hist);
  } else {
    PartitionScatterKernel<<<grid, kChunkThreads, 0, stream>>>(lv, b, hist);
  }
  CUDA_CHECK_LAST_LAUNCH();
}

void SortBuckets(const Level& lv, const Buffers& b, const std::uint32_t* starts,
                 const SpanList& list, const SpanList& overflow, BucketSorter sorter,
                 std::uint32_t tile_keys, std::uint32_t overflow_keys, std::uint32_t items,
                 cudaStream_t stream) {
  if (overflow.capacity == 0) overflow_keys = 0;
  if (overflow_keys != 0 && overflow_keys <= tile_keys) {
    throw std::invalid_argument("SortBuckets: an overflow list needs a tile larger than " +
                                std::to_string(tile_keys) + " keys (see OverflowTile)");
  }
  const auto launch = [&](auto tile) {
    LaunchSortBuckets<decltype(tile)>(lv, b, starts, list, overflow, overflow_keys, items, stream);
  };
  if (sorter == BucketSorter::kCounting && tile_keys == 4096) {
    launch(CountingTile<4096>{});
  } else if (sorter == BucketSorter::kCounting && tile_keys == 8192) {
    launch(CountingTile<8192>{});
  } else if (sorter == BucketSorter::kCounting && tile_keys == 16384) {
    launch(CountingTile<16384>{});
  } else if (sorter == BucketSorter::kRadix && tile_keys == 4096) {
    launch(RadixTile<256, 16>{});
  } else if (sorter == BucketSorter::kRadix && tile_keys == 8192) {
    launch(RadixTile<512, 16>{});
  } else if (sorter == BucketSorter::kRadix && tile_keys == 36864) {
    launch(RadixTile<512, 72>{});
  } else if (sorter == BucketSorter::kBitonic && tile_keys == 4096) {
    launch(BitonicTile<4096>{});
  } else if (sorter == BucketSorter::kBitonic && tile_keys == 8192) {
    launch(BitonicTile<8192>{});
  } else {
    throw std::invalid_argument("SortBuckets: no tile of " + std::to_string(tile_keys) +
                                " keys for this sorter (see TilesOf)");
  }
}

void SortOverflow(const Level& lv, const Buffers& b, const SpanList& overflow, BucketSorter sorter,
                  std::uint32_t overflow_keys, cudaStream_t stream) {
  if (overflow.capacity == 0 || overflow_keys == 0) return;
  if (sorter == BucketSorter::kCounting && overflow_keys == 16384) {
    LaunchSortOverflow<CountingTile<16384>>(lv, b, overflow, stream);
  } else if (sorter == BucketSorter::kCounting && overflow_keys == 8192) {
    LaunchSortOverflow<CountingTile<8192>>(lv, b, overflow, stream);
  } else if (sorter == BucketSorter::kBitonic && overflow_keys == 8192) {
    LaunchSortOverflow<BitonicTile<8192>>(lv, b, overflow, stream);
  } else {
    throw std::invalid_argument("SortOverflow: no overflow tile of " +
                                std::to_string(overflow_keys) + " keys for this sorter");
  }
}

// ------------------------------------------------------------------ the sort

void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream, StageTimer* timer) {
  if (n > kMaxKeys) throw staged::InputError("mppSort: n must be at most 2^32 - 1 keys");
  if (n == 0) return;
  ws.Prepare(n);  // allocates and plans level 0 only when n is new to this workspace
  auto timed = [&](Stage stage, auto&& work) {
    if (timer != nullptr) timer->Begin(stage, stream);
    work();
    if (timer != nullptr) timer->End(stream);
  };
  // snippet-begin: ch03-opt-sort
  const FirstLevelPlan& plan = ws.first_plan();
  const Buffers b{d_in, ws.part.data(), d_out};
  Level lv{ws.first_segment.data(), ws.first_state.data(), false, ws.splitters.data()};
  if (ws.options().sample_first) {
    lv.first =
        FirstSample{plan.buckets, plan.max_buckets, ws.first_segment.data(), ws.splitters.data()};
  }
  timed(Stage::kMinMax, [&] {
    auto* range = reinterpret_cast<ch01::MinMaxPair<std::uint32_t>*>(ws.FirstRange());
    ch01::optimized::MinMax(d_in, n, range, ws.minmax_temp.data(), ws.minmax_temp.size(), stream);
  });
  const Counts hist = ws.counts();
  timed(Stage::kHistogram, [&] {
    CUDA_CHECK(cudaMemsetAsync(hist.totals, 0, sizeof(std::uint32_t) * plan.bucket_bound, stream));
    Histogram(lv, b, hist, plan.chunks, stream);
  });
  timed(Stage::kScan, [&] {
    // The map's choice sets the bucket count on the device: the scan reads it there.
    const std::uint32_t* entries = &ws.first_state.data()->buckets;
    ch02::optimized::ExclusiveScanDeviceCount<std::uint32_t>(
        hist.totals, hist.starts, plan.bucket_bound, entries, ws.scan_temp.data(),
        ws.scan_temp.size(), stream);
  });
  timed(Stage::kPartition, [&] { Partition(lv, b, hist, ws.partition(), plan.chunks, stream); });
  timed(Stage::kSort, [&] {
    SortBuckets(lv, b, hist.starts, ws.Spans(), SpanList{}, ws.options().sorter, plan.tile.keys, 0,
                plan.buckets, stream);
  });
  timed(Stage::kDeeper, [&] { RunDeeperLevels(ws, b, stream); });
  // snippet-end: ch03-opt-sort
}

}  // namespace ch03::optimized
