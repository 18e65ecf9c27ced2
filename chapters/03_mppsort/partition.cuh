/**
 * @file partition.cuh
 * @brief What the three partition kernels of level_partition.cu share: the level's source and
 *        targets, the chunk loop's opening (an all-equal chunk copied where it is final) and a
 *        chunk's run of a bucket taken from the bucket's total.
 */
#pragma once

#include <cstdint>

#include "chapters/03_mppsort/runs.cuh"
#include "chapters/03_mppsort/segments.cuh"
#include "chapters/03_mppsort/steps.cuh"

namespace ch03::optimized {

/// What a partition block of a level reads and writes.
struct LevelIo {
  Buffers b;                  ///< the sort's arrays
  const std::uint32_t* keys;  ///< the level's source
  std::uint32_t* target;      ///< the level's target
  bool final_direct;  ///< final buckets go straight to `out` (else the sort step copies them)
  /// @param[in] lv the level
  /// @param[in] arrays the sort's arrays
  __device__ LevelIo(const Level& lv, const ArraysRef& arrays)
      : b(arrays.Get()),
        keys(LevelSource(b, lv.state->level)),
        target(LevelTarget(b, lv.state->level)),
        final_direct(WritesFinalBuckets(b)) {}
  /// Where the keys of a bucket go: `out` for a final bucket (where the level may write it),
  /// else the level's target.
  /// @param[in] final whether the map knows the bucket holds one value
  __device__ std::uint32_t* To(bool final) const { return final && final_direct ? b.out : target; }
};

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

/// Opens item @p item of the level's chunk loop: where the chunk lies and its segment. A chunk
/// of an all-equal segment is copied to `out` there (`CopyFinalChunk`) and needs no more work.
/// Every thread of the block calls it.
/// @param[in] lv the level
/// @param[in] io the block's source and targets
/// @param[in] item the chunk's index in the level
/// @param[out] c the chunk
/// @param[out] seg its segment
/// @return whether the chunk still has to be partitioned (uniform per block)
__device__ __forceinline__ bool OpenChunk(const Level& lv, const LevelIo& io, std::uint32_t item,
                                          ChunkView& c, Segment& seg) {
  c = LocateChunk(lv.segments, lv.state->num_segments, item);
  seg = lv.segments[c.segment];
  if (seg.range.min != seg.range.max) return true;
  CopyFinalChunk(io.keys, io.b, c);
  return false;
}

/// Takes a run of @p count keys of bucket @p k of @p seg out of the bucket's total
/// (`TakeRunOffset`).
/// @param[in,out] hist the level's matrix, totals and starts
/// @param[in] seg the chunk's segment
/// @param[in] k bucket of the segment
/// @param[in] count the chunk's keys of bucket @p k (its entry of the matrix)
/// @return where the run starts in the level's target
__device__ __forceinline__ std::uint32_t TakeRun(const Counts& hist, const Segment& seg,
                                                 std::uint32_t k, std::uint32_t count) {
  return BucketStart(hist.starts, seg, k) + TakeRunOffset(&hist.totals[seg.bucket_base + k], count);
}

/// Takes chunk @p c's run of bucket @p k of @p seg, its length read from the matrix.
/// @param[in,out] hist the level's matrix, totals and starts
/// @param[in] seg the chunk's segment
/// @param[in] c the chunk
/// @param[in] k bucket of the segment
/// @return where the run starts in the level's target
__device__ __forceinline__ std::uint32_t TakeRun(const Counts& hist, const Segment& seg,
                                                 const ChunkView& c, std::uint32_t k) {
  return TakeRun(hist, seg, k, hist.matrix[seg.matrix_base + c.local * seg.buckets + k]);
}

}  // namespace ch03::optimized
