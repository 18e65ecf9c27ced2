/**
 * @file sort_buckets.cu
 * @brief Step 5 of a level (stages 4 to 6): every bucket sorted on chip by one block, or listed
 *        for the next level when it is over the tile (with its min and max, which the block
 *        reduces on the way).
 *
 * Changes relative to stage 3's sort step (stage3_registers.cu, one block per bucket of one
 * segment, oversized buckets left for a global-memory sort):
 * 1. An oversized bucket becomes a span of the next level: the block that finds it reduces its
 *    min and max (16 loads in flight per thread) and appends it to the level's list (a bucket
 *    longer than `BlockReduces` allows, a skewed cluster, is listed unreduced), or writes it to
 *    `out` when all its keys are equal.
 * 2. The on-chip sorter is a template argument: the bitonic tile of stage 3 (stage 4), the
 *    counting tile (stage 5, counting_tile.cuh), or the block radix sort kept for comparison.
 * 3. At the deeper levels a resident grid takes buckets from a queue (their sizes vary), and a
 *    bucket over the small deeper tile but within the largest is listed for the overflow tile
 *    (`SortOverflowKernel`) instead of costing its keys another level.
 */
#include <climits>
#include <cstddef>
#include <stdexcept>
#include <string>

#include "chapters/01_minmax_reduction/block_minmax.cuh"
#include "chapters/03_mppsort/bitonic_tile.cuh"
#include "chapters/03_mppsort/counting_tile.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/radix_tile.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
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

/// The min and max of a bucket of @p len keys at @p keys, reduced by the block (16 loads in flight
/// per thread, then chapter 01's `BlockMinMax`) and given to every thread. Every thread of the
/// block calls it; it uses `sh.s_min`, `sh.s_max`, `sh.lo` and `sh.word`.
/// @param[in] keys the bucket
/// @param[in] len its keys
/// @param[in,out] sh the block's tile (its reduction scratch)
/// @param[out] lo the smallest key
/// @param[out] hi the largest key
template <class Shared, int kThreads>
__device__ void ReduceBucket(const std::uint32_t* keys, std::uint32_t len, Shared& sh,
                             std::uint32_t& lo, std::uint32_t& hi) {
  constexpr int kUnroll = 16;  // independent loads in flight per thread
  lo = UINT_MAX;
  hi = 0;
  std::uint32_t i = threadIdx.x;
  for (; i + (kUnroll - 1) * kThreads < len; i += kUnroll * kThreads) {
    std::uint32_t v[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) v[j] = keys[i + j * kThreads];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      lo = min(lo, v[j]);
      hi = max(hi, v[j]);
    }
  }
  for (; i < len; i += kThreads) {
    lo = min(lo, keys[i]);
    hi = max(hi, keys[i]);
  }
  ch01::BlockMinMax<std::uint32_t, kThreads>(lo, hi, sh.s_min, sh.s_max);
  ShareMinMax(lo, hi, sh);
}

/**
 * @brief Step 5: for each bucket of the level, sorts it on chip with `Sorter` from where the
 *        partition put it into `out`; lists it for the next level when it is over the tile.
 *
 * Bucket k of a segment is [begin, end) from the scanned bucket totals (`BucketStart` of k and
 * of k + 1). Over Sorter::kKeys keys and where `BlockReduces`, it is listed with its [min, max]:
 * the map's bounds where level 0 is over every tile's bound (over kBlockMinMaxKeys, equal
 * widths), else reduced by the block (`ReduceBucket`); it is copied to `out` when they are equal.
 * Longer buckets are listed unreduced. Segments with min == max were already
 * written by the partition.
 * @par Launch configuration
 * Blocks of Sorter::kThreads threads, one per bucket (level 0) or a resident grid taking buckets
 * from the level's queue; dynamic shared memory sizeof(Sorter::Shared); registers capped so
 * that Sorter::kMinBlocks blocks fit an SM.
 * @tparam Sorter `RadixTile<...>` or `BitonicTile<...>`
 * @param[in] lv the level
 * @param[in] arrays the sort's arrays (reads `LevelTarget`, writes `out`)
 * @param[in] starts the level's scanned bucket totals
 * @param[in] list where oversized buckets go
 * @param[in] overflow where buckets of (Sorter::kKeys, overflow_keys] go (capacity 0: none)
 * @param[in] overflow_keys the overflow tile (`OverflowTile`), or 0
 * Reads and writes 4 bytes per key of the sorted buckets; reads 4 of the reduced ones.
 */
template <class Sorter>
__global__ void __launch_bounds__(Sorter::kThreads, Sorter::kMinBlocks)
    SortBucketsKernel(Level lv, ArraysRef arrays, const std::uint32_t* starts, SpanList list,
                      SpanList overflow, std::uint32_t overflow_keys) {
  extern __shared__ uint4 smem_sort[];
  auto& sh = *reinterpret_cast<typename Sorter::Shared*>(smem_sort);
  __shared__ std::uint32_t ticket;
  const Buffers b = arrays.Get();
  for (WorkQueue queue; queue.Next(lv.dynamic, &lv.state->next_sort, lv.state->buckets, &ticket);) {
    // Read per bucket rather than kept in registers across the loop: the radix sorter needs
    // them all for its keys.
    const std::uint32_t item = queue.item(), num = lv.state->num_segments;
    const std::uint32_t* part = LevelTarget(b, lv.state->level);
    const std::uint32_t s = FindSegment(lv.segments, num, item, &Segment::bucket_base);
    const Segment seg = lv.segments[s];
    if (seg.range.min == seg.range.max) continue;  // the partition wrote it to out
    const std::uint32_t k = item - seg.bucket_base;
    if (seg.sampled == kSplitters && SplitterMap::Final(k) && WritesFinalBuckets(b)) {
      continue;  // one value: the partition wrote it to out
    }
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
    if (!BlockReduces(len, seg.len, seg.buckets)) {
      // A skewed cluster, which one block would take long over: SurveySegmentsKernel reduces it
      // at the next level.
      if (threadIdx.x == 0) AppendSpan(list, lv.state, Span{begin, len, {UINT_MAX, 0}});
      continue;
    }
    if (len > Sorter::kKeys) {
      // The next level needs this bucket's own [min, max]. A bucket of an oversized plan (level
      // 0 past every tile's bound, equal widths) has its bounds from the map: no key is read.
      // Else the block reduces it here, where it already knows the bucket, instead of in a
      // separate pass over every oversized key.
      std::uint32_t lo, hi;
      if (len > kBlockMinMaxKeys && seg.sampled == kEqualWidths) {
        const KeyRange bounds = EqualWidthBounds(seg.range, seg.buckets, k);
        lo = bounds.min;
        hi = bounds.max;
      } else {
        ReduceBucket<typename Sorter::Shared, Sorter::kThreads>(part + begin, len, sh, lo, hi);
      }
      if (lo == hi) {
        // All equal: already sorted, so final (copied when this level partitioned elsewhere).
        if (part != b.out) {
          for (std::uint32_t j = threadIdx.x; j < len; j += blockDim.x) {
            b.out[begin + j] = part[begin + j];
          }
        }
      } else if (threadIdx.x == 0) {
        AppendSpan(list, lv.state, Span{begin, len, {lo, hi}});
      }
      __syncthreads();  // sh read before the block's next bucket reuses it
      continue;
    }
    Sorter::SortBucket(part + begin, b.out + begin, len, sh);
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
 * @param[in] arrays the sort's arrays (reads `LevelTarget`, writes `out`)
 * @param[in] overflow the overflow list (its count, at most its capacity, of entries)
 * Reads and writes 4 bytes per key of the listed buckets.
 */
template <class Sorter>
__global__ void __launch_bounds__(Sorter::kThreads, Sorter::kMinBlocks)
    SortOverflowKernel(Level lv, ArraysRef arrays, SpanList overflow) {
  extern __shared__ uint4 smem_sort[];
  auto& sh = *reinterpret_cast<typename Sorter::Shared*>(smem_sort);
  __shared__ std::uint32_t ticket;
  const Buffers b = arrays.Get();
  // The list's count may exceed its capacity (an append past the end sets kErrorListFull and
  // stores nothing): only the entries written are read.
  const std::uint32_t listed = min(*overflow.count, overflow.capacity);
  for (WorkQueue queue; queue.Next(true, &lv.state->next_overflow, listed, &ticket);) {
    const Span span = overflow.spans[queue.item()];
    const std::uint32_t* part = LevelTarget(b, lv.state->level);
    Sorter::SortBucket(part + span.begin, b.out + span.begin, span.len, sh);
  }
}

// ------------------------------------------------------------------ launchers

// ------------------------------------------------------------------ launchers

namespace {
/// Blocks for a level's kernel: one per item at level 0, else as many as fit on the GPU.
unsigned GridFor(const Level& lv, const void* kernel, int threads, std::size_t smem,
                 std::uint32_t items) {
  return lv.dynamic ? staged::ResidentBlocks(kernel, threads, smem) : items;
}

template <class Sorter>
void LaunchSortBuckets(const Level& lv, const ArraysRef& b, const std::uint32_t* starts,
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
void LaunchSortOverflow(const Level& lv, const ArraysRef& b, const SpanList& overflow,
                        cudaStream_t stream) {
  const auto kernel = SortOverflowKernel<Sorter>;
  constexpr std::size_t kSmem = sizeof(typename Sorter::Shared);
  staged::OptInSharedMemory(reinterpret_cast<const void*>(kernel), kSmem);
  const unsigned grid =
      staged::ResidentBlocks(reinterpret_cast<const void*>(kernel), Sorter::kThreads, kSmem);
  kernel<<<grid, Sorter::kThreads, kSmem, stream>>>(lv, b, overflow);
  CUDA_CHECK_LAST_LAUNCH();
}
}  // namespace

void SortBuckets(const Level& lv, const ArraysRef& b, const std::uint32_t* starts,
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

void SortOverflow(const Level& lv, const ArraysRef& b, const SpanList& overflow,
                  BucketSorter sorter, std::uint32_t overflow_keys, cudaStream_t stream) {
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

}  // namespace ch03::optimized
