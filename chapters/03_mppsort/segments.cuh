/**
 * @file segments.cuh
 * @brief Device-side view of one level of the optimized mppSort: which segment a block's chunk
 *        or bucket belongs to, which buffers the level reads and writes, and how blocks take
 *        their work items.
 */
#pragma once

#include <cstdint>

#include "chapters/03_mppsort/plan.hpp"

namespace ch03::optimized {

/// Level 0's sample (`Options::sample_first`): h0 and the core map's most buckets for
/// `ChooseFirstMap`. `buckets` is 0 at the deeper levels and where level 0 keeps its equal
/// widths.
struct FirstSample {
  std::uint32_t buckets = 0;      ///< h0
  std::uint32_t max_buckets = 0;  ///< `FirstLevelPlan::max_buckets`
};

/// Whether level 0's partition may write a bucket it knows is final straight to `out`: not when
/// `out` is the input that the partition is still reading.
/// @param[in] b the sort's arrays
__host__ __device__ __forceinline__ bool WritesFinalBuckets(const Buffers& b) {
  return b.in != b.out;
}

/// The sort's arrays as a kernel receives them: by value at level 0, whose launches the host
/// makes for each sort, and from a record in device memory at the deeper levels, whose launches
/// a CUDA graph replays (so that one graph serves any input and output array). Level 0's
/// histogram writes the record (`Level::Publish::arrays`).
struct ArraysRef {
  /// A level-0 launch's arrays, by value.
  /// @param[in] b the arrays
  ArraysRef(const Buffers& b) : value(b) {}  // NOLINT: implicit, as a level-0 launch takes them
  /// The deeper levels' arrays, from @p r (written before the kernels run).
  /// @param[in] r the record
  explicit ArraysRef(const Buffers* r) : record(r) {}
  Buffers value{};                  ///< the arrays (used when `record` is null)
  const Buffers* record = nullptr;  ///< where the deeper levels read them
  /// The arrays.
  __device__ __forceinline__ Buffers Get() const { return record != nullptr ? *record : value; }
};

/// Level 0's histogram only: where its first block writes what the later steps read, records no
/// block of that kernel reads.
struct Publish {
  Segment* segment = nullptr;       ///< level 0's segment with the bucket map the sample chose
  std::uint32_t* values = nullptr;  ///< room for kMaxFewValues splitters (`kSplitters`)
  Buffers* arrays = nullptr;        ///< the deeper levels' `ArraysRef::record`
};

/// What every kernel of a level gets: the segment table and the level's state (both in device
/// memory), and whether the grid is resident (`dynamic`: levels planned on the device, whose
/// item counts only the device knows) or one block per item (level 0).
struct Level {
  /// The level's segment table. Level 0's histogram reads the segment that the host and the
  /// min/max pass wrote; level 0's later steps read the copy it publishes (`publish`).
  const Segment* segments;
  LevelState* state;  ///< level number, totals, work queues
  bool dynamic;       ///< true: a resident grid loops over the level's items
  /// The splitters of segment 0 when it is bucketed by them (`kSplitters`: level 0 only, whose
  /// one segment is the input), else unused; may be null at the deeper levels
  const std::uint32_t* splitters = nullptr;
  FirstSample first{};  ///< level 0's sample, if it takes one
  Publish publish{};    ///< level 0's histogram only
};

/// Where level @p level reads its keys: `in` at level 0, then `part` and `out` in turn.
/// @param[in] b the sort's arrays
/// @param[in] level level number
__device__ __forceinline__ const std::uint32_t* LevelSource(const Buffers& b, std::uint32_t level) {
  return level == 0 ? b.in : ((level & 1) ? b.part : b.out);
}

/// Where level @p level partitions to: `part` at even levels, `out` at odd ones (never its
/// source; the oversized buckets stay there for the next level).
/// @param[in] b the sort's arrays
/// @param[in] level level number
__device__ __forceinline__ std::uint32_t* LevelTarget(const Buffers& b, std::uint32_t level) {
  return (level & 1) ? b.out : b.part;
}

/// Largest segment s with segments[s].*base <= x (binary search; bases are non-decreasing).
/// @param[in] segments the level's table
/// @param[in] num entries, >= 1
/// @param[in] x chunk or bucket index of the level
/// @param[in] base `&Segment::chunk_base` or `&Segment::bucket_base`
__device__ __forceinline__ std::uint32_t FindSegment(const Segment* segments, std::uint32_t num,
                                                     std::uint32_t x,
                                                     std::uint32_t Segment::*base) {
  std::uint32_t lo = 0, hi = num;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (segments[mid].*base <= x)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/// Where bucket @p k (< seg.buckets) of @p seg starts: seg.begin plus the keys of the segment's
/// buckets before it, from the level's scanned bucket totals (relative to the segment's first
/// entry: an all-equal segment counts no keys there, so the scan's offsets differ from begin).
/// @param[in] starts the level's scanned bucket totals
/// @param[in] seg the segment
/// @param[in] k bucket of the segment
__device__ __forceinline__ std::uint32_t BucketStart(const std::uint32_t* starts,
                                                     const Segment& seg, std::uint32_t k) {
  return seg.begin + (starts[seg.bucket_base + k] - starts[seg.bucket_base]);
}

// snippet-begin: ch03-block-reduces
/// Whether the sort step's block reduces the min and max of an oversized bucket of @p len keys
/// itself: up to kBlockMinMaxKeys, or up to twice the mean bucket of its segment (@p seg_len
/// keys in @p buckets: level 0 over every tile's bound, whose buckets are all oversized by plan
/// and alike). A longer bucket is a skewed cluster, whose core the next level samples.
/// @param[in] len keys of the bucket
/// @param[in] seg_len keys of its segment
/// @param[in] buckets buckets of its segment
__host__ __device__ constexpr bool BlockReduces(std::uint32_t len, std::uint32_t seg_len,
                                                std::uint32_t buckets) {
  return len <= kBlockMinMaxKeys || std::uint64_t{len} * buckets <= 2 * std::uint64_t{seg_len};
}
// snippet-end: ch03-block-reduces

/// The keys one histogram/partition/min-max block handles.
struct ChunkView {
  std::uint32_t segment;  ///< segment index
  std::uint32_t local;    ///< chunk index within the segment
  std::uint32_t begin;    ///< first key
  std::uint32_t len;      ///< keys, in [1, kChunk]
};

/// Locates chunk @p chunk of the level.
/// @param[in] segments the level's table
/// @param[in] num entries
/// @param[in] chunk chunk index of the level
__device__ __forceinline__ ChunkView LocateChunk(const Segment* segments, std::uint32_t num,
                                                 std::uint32_t chunk) {
  const std::uint32_t s = FindSegment(segments, num, chunk, &Segment::chunk_base);
  const Segment& seg = segments[s];
  const std::uint32_t local = chunk - seg.chunk_base;
  const std::uint32_t offset = local * kChunk;  // < len <= 2^32 - 1
  const std::uint32_t left = seg.len - offset;
  return {s, local, seg.begin + offset, left < kChunk ? left : kChunk};
}

/// Hands a block its work items in turn: items b, b + grid, b + 2 grid, ... (chunks, which are
/// all alike), or tickets from an atomic counter (`dynamic`: buckets on a resident grid, whose
/// sizes vary, so that blocks that finish early take more). Every thread of the block calls
/// `Next` with the same arguments. The queue keeps only the current item: the counter and the
/// total are re-read from the kernel's parameters at each call, which spares registers in the
/// kernels that hold many keys.
class WorkQueue {
 public:
  /// Moves to the block's next item; false when the level has none left.
  /// @param[in] dynamic take tickets from @p counter (else step by the grid size)
  /// @param[in,out] counter the level's queue (used when @p dynamic)
  /// @param[in] total items of the level
  /// @param[in,out] ticket one word of shared memory (used when @p dynamic)
  __device__ bool Next(bool dynamic, std::uint32_t* counter, std::uint32_t total,
                       std::uint32_t* ticket) {
    if (!dynamic) {
      item_ = started_ ? item_ + gridDim.x : blockIdx.x;
      started_ = true;
      return item_ < total;
    }
    // The previous item's threads are done with the shared ticket before it is overwritten.
    __syncthreads();
    if (threadIdx.x == 0) *ticket = atomicAdd(counter, 1u);
    __syncthreads();  // every thread reads the same ticket
    item_ = *ticket;
    return item_ < total;
  }
  /// The current item.
  __device__ std::uint32_t item() const { return item_; }

 private:
  std::uint32_t item_ = 0;
  bool started_ = false;
};

}  // namespace ch03::optimized
