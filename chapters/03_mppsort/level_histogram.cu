/**
 * @file level_histogram.cu
 * @brief Step 1 of a level (stages 4 to 6): every chunk of every segment counted per bucket,
 *        its row of the chunk-major matrix written and added to the bucket totals; at level 0
 *        with a sample (stage 6), each block chooses level 0's bucket map first
 *        (first_map.cuh).
 *
 * Changes relative to stage 3's histogram (stage1_buckets.cu, one block per chunk of one
 * segment):
 * 1. A level has many segments (the oversized buckets of the level before, each with its own
 *    [min, max] and bucket count): a block finds its chunk's segment (`LocateChunk`).
 * 2. A resident grid: the deeper levels' sizes are known only on the GPU, so each block takes
 *    chunks blockIdx.x, blockIdx.x + gridDim.x, ... and loads its next chunk ahead.
 * 3. All 16 loads of a pass are issued before its first atomic, and the chunk's second pass
 *    is in flight under the first pass's atomics.
 */
#include <cstdint>

#include "chapters/03_mppsort/chunks.cuh"
#include "chapters/03_mppsort/first_map.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

namespace ch03::optimized {

/**
 * @brief Step 1: for each chunk of the level, counts its keys per bucket of its segment in
 *        shared memory, writes the counts to the chunk's row of the chunk-major matrix and adds
 *        them to the level's bucket totals (`Counts`).
 *
 * A block handles chunks blockIdx.x, blockIdx.x + gridDim.x, ..., each in passes of kChunkPass
 * keys, and issues the next pass's loads before it counts the current one, so that they land
 * while its shared atomics run: a pass's atomics take longer than its loads, and blocks that
 * load, then count, then write leave the memory idle while they count.
 * At level 0 the first block also writes the records the later steps read (`Level::publish`):
 * the segment with its bucket map, the map's splitters and the sort's arrays.
 * @par Launch configuration
 * A resident grid of kChunkThreads-thread blocks (one per SM: two passes' keys per thread need
 * up to 64 registers), at most one per chunk; static shared memory kMaxBuckets words.
 * @param[in] lv the level
 * @param[in] arrays the sort's arrays
 * @param[in,out] hist the matrix (entry matrix_base + local * buckets + bucket: keys of the
 *                 bucket in the chunk) and the bucket totals (all-equal segments are skipped:
 *                 their partition is a copy)
 * Reads 4 bytes per key; writes 4 * buckets bytes per chunk, coalesced, and adds as many to the
 * totals.
 */
__global__ void __launch_bounds__(kChunkThreads, 1)
    HistogramKernel(Level lv, ArraysRef arrays, Counts hist) {
  __shared__ alignas(16) std::uint32_t counts[kMaxBuckets];
  __shared__ FirstMapShared first;
  const Buffers b = arrays.Get();
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
    if (blockIdx.x == 0) PublishFirstMap(lv, lv.segments[0], first.map, counts);
  } else {
    if (lv.publish.segment != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
      *lv.publish.segment = lv.segments[0];  // equal widths: the segment as the host planned it
    }
    LoadSplitters(lv, counts);
  }
  if (lv.publish.arrays != nullptr && blockIdx.x == 0 && threadIdx.x == 0) *lv.publish.arrays = b;
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    const ChunkView c = LocateChunk(lv.segments, num, item);
    Segment seg = lv.segments[c.segment];
    if (choose) ApplyFirstMap(first.map, seg);
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

void Histogram(const Level& lv, const ArraysRef& arrays, const Counts& hist, std::uint32_t items,
               cudaStream_t stream) {
  const auto* kernel = reinterpret_cast<const void*>(HistogramKernel);
  if (!lv.dynamic && items == 0) return;
  // Always a resident grid: a block's later chunks are what its loads overlap with.
  const unsigned grid = lv.dynamic ? staged::ResidentBlocks(kernel, kChunkThreads, 0)
                                   : staged::ResidentGrid(kernel, kChunkThreads, 0, items, 1);
  HistogramKernel<<<grid, kChunkThreads, 0, stream>>>(lv, arrays, hist);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch03::optimized
