/**
 * @file chunks.cuh
 * @brief How the histogram and partition blocks of a level walk their chunks: a chunk of kChunk
 *        keys in passes of kChunkPass (16 keys per thread), loaded with coalesced loads, and the
 *        block's next chunk loaded ahead.
 */
#pragma once

#include <cstdint>

#include "chapters/03_mppsort/plan.hpp"
#include "chapters/03_mppsort/segments.cuh"

namespace ch03::optimized {

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

}  // namespace ch03::optimized
