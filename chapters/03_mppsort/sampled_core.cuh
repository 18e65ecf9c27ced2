/**
 * @file sampled_core.cuh
 * @brief Equal-width buckets over a sampled core for the segments that defeat equal widths over
 *        their [min, max]: a block draws kSampleKeys keys of the segment and sorts them; the
 *        core is [sample k, sample S - 1 - k] with k = S / h, one bucket's worth of samples; the
 *        keys below the core go to the first bucket, those above it to the last, and the h - 2
 *        buckets between split the core evenly.
 *
 * A segment longer than kBlockMinMaxKeys is a skewed cluster: its keys crowd a small part of its
 * [min, max] (a few thousand keys spread evenly would have been split by the level before), and
 * a few keys far from the cluster stretch the range. Over [min, max], the cluster falls into a
 * few buckets that need another level; over the core, the cluster is spread over every bucket,
 * and the stray keys fill the two end buckets, each about one bucket's worth. Inside the core the
 * buckets keep the equal-width spread (Poisson), not a sample's.
 */
#pragma once

#include <cmath>
#include <cstdint>

#include "chapters/03_mppsort/bitonic_tile.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/plan.hpp"
#include "chapters/03_mppsort/segments.cuh"

namespace ch03::optimized {

/// Equal-width buckets over a segment's [min, max] (`ArithmeticBucket`).
struct EqualWidthMap {
  std::uint32_t min;    ///< the segment's smallest key
  std::uint64_t scale;  ///< `BucketScale` of the segment
  /// The bucket of @p key.
  __host__ __device__ __forceinline__ std::uint32_t operator()(std::uint32_t key) const {
    return ArithmeticBucket(key, min, scale);
  }
  /// Whether bucket @p b is known to hold one value (never, for equal widths).
  __host__ __device__ __forceinline__ static constexpr bool Final(std::uint32_t) { return false; }
};

/// The values that equal widths over @p range put in bucket @p k of @p h: offset x (key - min)
/// goes to floor(x * scale / 2^32), so the bucket's first offset is ceil(k * 2^32 / scale) and
/// its last is one below the next bucket's first (R - 1 for the last bucket). Every key of the
/// bucket lies within; min > max when no value maps to it.
/// @param[in] range the segment's [min, max], min < max
/// @param[in] h its buckets, in [2, kMaxBuckets]
/// @param[in] k the bucket, below @p h
__host__ __device__ inline KeyRange EqualWidthBounds(const KeyRange& range, std::uint32_t h,
                                                     std::uint32_t k) {
  const std::uint64_t scale = BucketScale(range.min, range.max, h);
  const std::uint64_t last = std::uint64_t{range.max} - range.min;  // R - 1
  const auto first = [&](std::uint64_t b) { return ((b << 32) + scale - 1) / scale; };
  const std::uint64_t lo = first(k);
  const std::uint64_t next = k + 1 < h ? first(k + 1) : last + 1;
  const std::uint64_t hi = next - 1 < last ? next - 1 : last;
  if (lo > hi) return KeyRange{0xFFFFFFFFu, 0};
  return KeyRange{static_cast<std::uint32_t>(range.min + lo),
                  static_cast<std::uint32_t>(range.min + hi)};
}

// snippet-begin: ch03-core-map
/// Buckets of a sampled segment in three pieces of equal widths: `low` buckets from the segment's
/// min to just below the core [lo, hi], the buckets from `low` up to `above` - 1 over the core,
/// and the rest from just above the core to the segment's max. Level 1 gives each end one bucket
/// (0 below the core, h - 1 above it); level 0 gives each piece buckets by its share of the
/// sample (`PlanCorePieces`).
struct CoreMap {
  std::uint32_t lo;          ///< the core's smallest key
  std::uint32_t hi;          ///< the core's largest key
  std::uint64_t scale;       ///< `BucketScale(lo, hi, above - low)`
  std::uint32_t low;         ///< buckets below the core, >= 1
  std::uint32_t above;       ///< the first bucket above the core
  std::uint32_t min;         ///< the segment's smallest key (used when low > 1)
  std::uint64_t low_scale;   ///< `BucketScale(min, lo - 1, low)`, or 0 when low == 1
  std::uint64_t high_scale;  ///< `BucketScale(hi + 1, max, h - above)`, or 0 for one bucket
  /// The bucket of @p key.
  __host__ __device__ __forceinline__ std::uint32_t operator()(std::uint32_t key) const {
    if (key < lo) return ArithmeticBucket(key, min, low_scale);
    if (key > hi) return above + ArithmeticBucket(key, hi + 1, high_scale);
    return low + ArithmeticBucket(key, lo, scale);
  }
  /// Whether bucket @p b is known to hold one value (never: a core's buckets are ranges).
  __host__ __device__ __forceinline__ static constexpr bool Final(std::uint32_t) { return false; }
};
// snippet-end: ch03-core-map

// snippet-begin: ch03-splitter-map
/// Buckets around m sorted splitters s[0] <= ... <= s[m - 1] (`kSplitters`): with j the number
/// of splitters below the key, bucket 2j + 1 when the key equals s[j], else 2j. A value drawn
/// often fills several splitters, and all its keys land in one odd bucket, final as it is.
struct SplitterMap {
  const std::uint32_t* s;  ///< the splitters (shared memory in the kernels)
  std::uint32_t m;         ///< their number, >= 1
  std::uint32_t top;       ///< the largest power of two <= m
  /// The bucket of @p key: a binary search for j, one splitter load per halving.
  __host__ __device__ __forceinline__ std::uint32_t operator()(std::uint32_t key) const {
    std::uint32_t j = 0;  // splitters known to be below the key
    for (std::uint32_t step = top; step > 0; step >>= 1) {
      if (j + step <= m && s[j + step - 1] < key) j += step;
    }
    return 2 * j + (j < m && s[j] == key ? 1u : 0u);
  }
  /// Whether bucket @p b holds one value: the odd ones.
  __host__ __device__ __forceinline__ static constexpr bool Final(std::uint32_t b) {
    return (b & 1) != 0;
  }
};
// snippet-end: ch03-splitter-map

/// The map of @p m splitters at @p s.
/// @param[in] s the splitters, sorted
/// @param[in] m their number, >= 1
__host__ __device__ inline SplitterMap SplitterMapOf(const std::uint32_t* s, std::uint32_t m) {
  std::uint32_t top = 1;
  while (2 * top <= m) top *= 2;
  return SplitterMap{s, m, top};
}

/// Where a histogram or partition block keeps a splitter segment's splitters: the second half
/// of its kMaxBuckets counter words (the segment's 2m + 1 <= kMaxBuckets / 2 counters use the
/// first half).
/// @param[in] counters the block's kMaxBuckets words
__device__ __forceinline__ std::uint32_t* SplitterWords(std::uint32_t* counters) {
  return counters + kMaxBuckets / 2;
}
/// The same, read-only.
/// @param[in] counters the block's kMaxBuckets words
__device__ __forceinline__ const std::uint32_t* SplitterWords(const std::uint32_t* counters) {
  return counters + kMaxBuckets / 2;
}

/// Copies the splitters of level @p lv's segment 0 into @p counters' second half when that
/// segment is bucketed by them (uniform per block); ends with a barrier either way.
/// @param[in] lv the level
/// @param[in,out] counters the block's kMaxBuckets shared words
__device__ __forceinline__ void LoadSplitters(const Level& lv, std::uint32_t* counters) {
  if (lv.splitters != nullptr && lv.segments[0].sampled == kSplitters) {
    const std::uint32_t m = lv.segments[0].splitters;
    for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) {
      SplitterWords(counters)[i] = lv.splitters[i];
    }
  }
  __syncthreads();  // splitters visible
}

/// The map of a sampled segment of @p buckets buckets with core @p core and @p low and @p high
/// buckets below and above it.
/// @param[in] range the segment's [min, max]; min < core.min where low > 1, core.max < max where
///            high > 1
/// @param[in] core [lo, hi] of the core, lo <= hi
/// @param[in] low buckets below the core, >= 1
/// @param[in] high buckets above the core, >= 1
/// @param[in] buckets h of the segment, >= low + high + 1
/// @param[in] scale the core buckets' scale (`CorePieces::scale`), or 0 for equal widths over
///            the core, `BucketScale(core.min, core.max, buckets - low - high)`
__host__ __device__ inline CoreMap CoreMapOf(const KeyRange& range, const KeyRange& core,
                                             std::uint32_t low, std::uint32_t high,
                                             std::uint32_t buckets, std::uint64_t scale = 0) {
  const std::uint32_t above = buckets - high;
  return CoreMap{core.min,
                 core.max,
                 scale != 0 ? scale : BucketScale(core.min, core.max, above - low),
                 low,
                 above,
                 range.min,
                 low > 1 ? BucketScale(range.min, core.min - 1, low) : 0,
                 high > 1 ? BucketScale(core.max + 1, range.max, high) : 0};
}

/// The map of a level-1 sampled segment: one bucket below the core, one above it, @p buckets - 2
/// over it.
/// @param[in] core [lo, hi] of the core, lo <= hi
/// @param[in] buckets h of the segment, >= 3
__host__ __device__ inline CoreMap CoreMapOf(const KeyRange& core, std::uint32_t buckets) {
  return CoreMapOf(KeyRange{0, 0}, core, 1, 1, buckets);
}

/// Calls @p work with the bucket map of segment @p seg (min < max): a `SplitterMap` or a
/// `CoreMap` when it was sampled, else an `EqualWidthMap`. Each kind of map gets its own copy of
/// @p work, so none keeps another's values in registers. Uniform per block.
/// @param[in] seg the segment
/// @param[in] counters the block's kMaxBuckets shared words, splitters loaded (`LoadSplitters`)
/// @param[in] work callable taking the map
template <class Work>
__device__ __forceinline__ void WithBucketMap(const Segment& seg, std::uint32_t* counters,
                                              Work&& work) {
  if (seg.sampled == kSplitters) {
    work(SplitterMapOf(SplitterWords(counters), seg.splitters));
  } else if (seg.sampled == kCore) {
    work(CoreMapOf(seg.range, seg.core, seg.core_low, seg.core_high, seg.buckets, seg.core_scale));
  } else {
    work(EqualWidthMap{seg.range.min, BucketScale(seg.range.min, seg.range.max, seg.buckets)});
  }
}

/// Shared memory of `SampleCore`.
struct SampleShared {
  alignas(16) std::uint32_t tile[kSampleKeys];  ///< the sample, then sorted
};

/// Where sample @p i of segment @p seg is drawn: one key at a pseudo-random offset in each of
/// kSampleKeys equal strides, so that a sorted or periodic input is sampled evenly (every key
/// when the segment is shorter than the sample). A hash of (segment, i) picks the offset: the
/// same keys give the same sample, run after run. 32-bit arithmetic: no division per sample but
/// the stride's.
/// @param[in] seg the segment (begin, len)
/// @param[in] i the sample, below kSampleKeys
__device__ __forceinline__ std::uint32_t SamplePosition(const Segment& seg, std::uint32_t i) {
  const std::uint32_t stride = seg.len / kSampleKeys;
  if (stride == 0) return seg.begin + i * seg.len / kSampleKeys;  // len < kSampleKeys: no wrap
  const std::uint32_t hash = (((i + 1) * 0x9E3779B9u) ^ seg.begin) * 0x85EBCA6Bu;
  return seg.begin + i * stride + __umulhi(hash, stride);  // offset in [0, stride)
}

/// Most keys of a sample of kSampleKeys that one of @p bins equal-width bins may draw before the
/// bin counts as crowded: four times the mean, and at least the mean plus eight standard
/// deviations and 8 (a Poisson count), which uniform keys reach about once in 10^12 bins.
/// @param[in] bins equal-width bins over the range, >= 1
__host__ __device__ inline std::uint32_t CrowdedSamples(std::uint32_t bins) {
  const double mean = static_cast<double>(kSampleKeys) / bins;
  const double poisson = mean + 8.0 * sqrt(mean) + 8.0;
  return static_cast<std::uint32_t>(4.0 * mean > poisson ? 4.0 * mean : poisson);
}

/// Buckets for a piece of a level-0 core map that drew @p samples of the kSampleKeys: its share
/// of h0 = @p buckets with room for the sample's error. A piece's share of the sample is off by
/// about sqrt(samples) (a binomial count), so the piece is given buckets for samples + 4
/// sqrt(samples) + 4: its buckets then hold at most the tile's target on average, and the tile's
/// Poisson margin is left for the spread between them. At least one.
/// @param[in] samples the piece's samples, at most kSampleKeys
/// @param[in] buckets h0
__host__ __device__ inline std::uint32_t PieceBuckets(std::uint32_t samples,
                                                      std::uint32_t buckets) {
  const double high = samples + 4.0 * sqrt(static_cast<double>(samples)) + 4.0;
  const double share = ceil(high * buckets / kSampleKeys);
  return share < 1.0 ? 1u : static_cast<std::uint32_t>(share);
}

/// A level-0 core map's three pieces (`CoreMapOf`'s arguments but the range).
struct CorePieces {
  KeyRange core;        ///< the core, the crowd's samples widened by a margin each side
  std::uint32_t low;    ///< buckets below the core
  std::uint32_t over;   ///< buckets over the core
  std::uint32_t high;   ///< buckets above the core
  std::uint64_t scale;  ///< the core buckets' scale: `WholeValuesScale`, or equal widths
};

/// The scale of buckets of @p per_bucket values each: ceil(2^32 / per_bucket). Key offset x
/// then goes to bucket floor(x * scale / 2^32), and x + per_bucket to the next bucket or
/// later, so that no bucket holds more than @p per_bucket values; where that scale rounds up
/// (per_bucket not a power of two), a bucket may hold one value fewer. (floor(h 2^32 / R),
/// `BucketScale`, rounds the other way: a bucket may hold one value more than R / h.)
/// @param[in] per_bucket values per bucket, >= 1
__host__ __device__ constexpr std::uint64_t WholeValuesScale(std::uint64_t per_bucket) {
  return ((std::uint64_t{1} << 32) + per_bucket - 1) / per_bucket;
}

// snippet-begin: ch03-core-pieces
/**
 * @brief The pieces of level 0's core map around a sampled crowd: each piece gets
 *        `PieceBuckets` of its samples, the core two more; the core is the crowd's [min, max]
 *        sample widened each side by one of its buckets (at least @p min_margin values), so that
 *        the crowd's keys beyond its extreme samples (about one sample's worth each side) fall
 *        into the core's end buckets, not into the piece next to it; and the core's buckets hold
 *        at most a whole number of values each (`WholeValuesScale`), so that rounding never
 *        gives a bucket more values than planned (a narrow crowd gets a bucket per value).
 * @param[in] range level 0's [min, max]
 * @param[in] crowd the crowd's smallest and largest sample, within @p range
 * @param[in] min_margin fewest values to widen the core by each side (clamped to @p range)
 * @param[in] below samples below the crowd
 * @param[in] above samples above the crowd
 * @param[in] buckets h0
 * @param[in] max_buckets most buckets in all
 * @return the pieces; `over` is 0 when they do not fit @p max_buckets
 */
__host__ __device__ inline CorePieces PlanCorePieces(const KeyRange& range, const KeyRange& crowd,
                                                     std::uint32_t min_margin, std::uint32_t below,
                                                     std::uint32_t above, std::uint32_t buckets,
                                                     std::uint32_t max_buckets) {
  const std::uint32_t planned = PieceBuckets(kSampleKeys - below - above, buckets) + 2;
  const std::uint64_t crowd_values = std::uint64_t{crowd.max} - crowd.min + 1;
  const std::uint64_t bucket = (crowd_values + planned - 3) / (planned - 2);  // of the crowd
  const std::uint64_t wide = bucket > min_margin ? bucket : std::uint64_t{min_margin};
  const std::uint32_t margin =
      static_cast<std::uint32_t>(wide < 0xFFFFFFFFull ? wide : 0xFFFFFFFFull);
  CorePieces p;
  p.core.min = crowd.min - (crowd.min - range.min < margin ? crowd.min - range.min : margin);
  p.core.max = crowd.max + (range.max - crowd.max < margin ? range.max - crowd.max : margin);
  p.low = p.core.min > range.min ? PieceBuckets(below, buckets) : 1;
  p.high = p.core.max < range.max ? PieceBuckets(above, buckets) : 1;
  const std::uint64_t values = std::uint64_t{p.core.max} - p.core.min + 1;
  const std::uint64_t per_bucket = values / planned > 0 ? values / planned : 1;  // values
  // The buckets the scale gives (the last one's index, plus one): at least planned.
  p.scale = WholeValuesScale(per_bucket);
  const std::uint64_t over = (((values - 1) * p.scale) >> 32) + 1;
  const std::uint32_t room = max_buckets > p.low + p.high ? max_buckets - p.low - p.high : 0;
  p.over = over < room ? static_cast<std::uint32_t>(over) : room;
  // No room for a whole number of values per bucket: equal widths over what is left.
  if (over > room) p.scale = 0;
  return p;
}
// snippet-end: ch03-core-pieces

/**
 * @brief The core of segment @p seg: draws kSampleKeys of its keys (one at a fixed pseudo-random
 *        offset in each of kSampleKeys equal strides, so that a sorted or periodic input is
 *        sampled evenly), sorts them with the bitonic network, and writes samples k and
 *        S - 1 - k, k = S / h.
 * @pre blockDim.x * kBitonicKeysPerThread >= kSampleKeys; seg.buckets >= 3. Every thread of the
 *      block calls it; it ends with a barrier.
 * @param[in] keys the level's source
 * @param[in] seg the segment (begin, len, buckets)
 * @param[out] core where the core goes
 * @param[in,out] sh the block's shared memory
 */
__device__ inline void SampleCore(const std::uint32_t* keys, const Segment& seg, KeyRange* core,
                                  SampleShared& sh) {
  // snippet-begin: ch03-sample-core
  constexpr int kPerThread = 8;  // independent loads in flight per thread
  for (std::uint32_t base = 0; base < kSampleKeys; base += kPerThread * blockDim.x) {
    std::uint32_t v[kPerThread];
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {
      const std::uint32_t i = base + q * blockDim.x + threadIdx.x;
      v[q] = i < kSampleKeys ? keys[SamplePosition(seg, i)] : 0;
    }
#pragma unroll
    for (int q = 0; q < kPerThread; ++q) {
      const std::uint32_t i = base + q * blockDim.x + threadIdx.x;
      if (i < kSampleKeys) sh.tile[i] = v[q];
    }
  }
  __syncthreads();  // the sample in the tile
  BitonicSortTile(sh.tile, kSampleKeys);
  const std::uint32_t k = kSampleKeys / seg.buckets;  // one bucket's worth of samples per end
  if (threadIdx.x == 0) *core = KeyRange{sh.tile[k], sh.tile[kSampleKeys - 1 - k]};
  // snippet-end: ch03-sample-core
  __syncthreads();  // the tile may be refilled by the block's next segment
}

}  // namespace ch03::optimized
