/**
 * @file first_map.cuh
 * @brief Stage 6: level 0's bucket map chosen from a sample of the input. Every histogram block
 *        draws the same kSampleKeys keys and makes the same choice: a bucket per value when the
 *        sample shows few values (`kSplitters`), three pieces of equal widths around a crowd
 *        the sample shows (`kCore`), else equal widths over [min, max].
 */
#pragma once

#include <climits>
#include <cstdint>

#include "chapters/03_mppsort/chunks.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/segments.cuh"

namespace ch03::optimized {

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
  std::uint64_t scale;    ///< the core buckets' scale (kCore: `CorePieces::scale`), else 0
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
  seg.core_scale = map.scale;
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
  // snippet-begin: ch03-choose-map
  if (threadIdx.x == 0) {
    FirstMap map{kEqualWidths, buckets, 0, KeyRange{0xFFFFFFFFu, 0}, 1, 1, 0};
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
      map.scale = p.scale;
      map.buckets = p.low + p.over + p.high;
    }
    sh.map = map;
  }
  // snippet-end: ch03-choose-map
  __syncthreads();  // the choice and the values visible
}

/// Writes level 0's segment with the choice @p map, and the values of a kSplitters map (the
/// second half of @p words), to the records the later steps read (`Level::publish`): level 0's
/// other histogram blocks read the segment the host wrote, which stays as it is. Also sets the
/// level's bucket count and matrix size, which the scan and the sort step read. Every thread of
/// one block calls it.
/// @param[in] lv level 0
/// @param[in] seg level 0's segment as the histogram read it
/// @param[in] map the choice
/// @param[in] words the block's counter words
__device__ void PublishFirstMap(const Level& lv, Segment seg, const FirstMap& map,
                                const std::uint32_t* words) {
  for (std::uint32_t i = threadIdx.x; i < map.values; i += blockDim.x) {
    lv.publish.values[i] = SplitterWords(words)[i];
  }
  if (threadIdx.x == 0) {
    ApplyFirstMap(map, seg);
    *lv.publish.segment = seg;
    lv.state->buckets = map.buckets;
    lv.state->matrix = map.buckets * seg.chunks;
  }
}

}  // namespace ch03::optimized
