/**
 * @file level_partition.cu
 * @brief Step 4 of a level (stages 4 to 6): every chunk's keys moved into their buckets' runs,
 *        ranked in a shared tile of the whole chunk (`PartitionChunkKernel`) or of one pass
 *        (`PartitionKernel`, where a block holds 97 but not 161 KiB) and written out as runs, or,
 *        where a block cannot hold either tile (sm_75), each key to its run's next slot
 *        (`PartitionScatterKernel`).
 *
 * Changes relative to stage 2's partition (stage2_ranked.cu, one block per chunk of one
 * segment):
 * 1. Segments and a resident grid, as in level_histogram.cu; a chunk of an all-equal segment is
 *    copied to `out`, where it is final.
 * 2. A chunk of kChunk keys is ranked in two passes of kChunkPass (the tile's size): half the
 *    matrix entries of one-pass chunks, and each bucket's cursor stays in registers from pass
 *    to pass.
 * 3. Once a pass's keys sit ranked in the tile, the registers that held them take the next
 *    pass's (or the next chunk's) keys, whose loads stay in flight while the tile is written.
 * 4. A bucket the map knows holds one value (stage 6's splitters) is final: written straight
 *    to `out` (unless `out` is the input, which the partition is still reading).
 * 5. Where a block holds 161 KiB, the whole chunk is ranked in one tile laid out by the chunk's
 *    row of the histogram matrix (`PartitionChunkKernel`): no count, zeroing or scan per pass,
 *    and runs twice as long as a pass's.
 */
#include <cstddef>
#include <cstdint>

#include "chapters/03_mppsort/block_scan.cuh"
#include "chapters/03_mppsort/chunks.cuh"
#include "chapters/03_mppsort/partition.cuh"
#include "chapters/03_mppsort/sampled_core.cuh"
#include "chapters/03_mppsort/steps.cuh"
#include "common/cuda_check.hpp"
#include "common/launch_support.hpp"
#include "common/resident_grid.hpp"

namespace ch03::optimized {

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
 * 99 KiB a block may have on sm_86, sm_89 and sm_120; `PartitionPath::kPassTile`).
 * @param[in] lv the level
 * @param[in] arrays the sort's arrays (reads `LevelSource`, writes `LevelTarget`)
 * @param[in,out] hist the level's matrix, bucket totals (zero on return) and starts
 * Reads and writes 4 bytes per key.
 */
__global__ void __launch_bounds__(kChunkThreads)
    PartitionKernel(Level lv, ArraysRef arrays, Counts hist) {
  extern __shared__ uint4 smem_partition[];
  auto* tile = reinterpret_cast<std::uint32_t*>(smem_partition);
  std::uint32_t* counts = tile + kChunkPass;  // local starts, then run bases
  __shared__ std::uint32_t scan_scratch[kBlockScanScratch];
  const LevelIo io(lv, arrays);
  const std::uint32_t chunks = lv.state->chunks;
  const std::uint32_t* keys = io.keys;
  std::uint32_t key[kChunkKeysPerThread];
  bool loaded = false;  // key[] holds (or is loading) chunk `item`'s keys; uniform per block
  LoadSplitters(lv, counts);
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    ChunkView c;
    Segment seg;
    if (!OpenChunk(lv, io, item, c, seg)) continue;  // uniform per block
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
          io.To(bucket.Final(bk))[counts[bk] + i] = k;
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
 * @param[in] arrays the sort's arrays (reads `LevelSource`, writes `LevelTarget`)
 * @param[in,out] hist the level's matrix, bucket totals (zero on return) and starts
 * Reads and writes 4 bytes per key.
 */
__global__ void __launch_bounds__(kChunkThreads)
    PartitionScatterKernel(Level lv, ArraysRef arrays, Counts hist) {
  __shared__ std::uint32_t cursor[kMaxBuckets];
  const LevelIo io(lv, arrays);
  const std::uint32_t chunks = lv.state->chunks;
  const std::uint32_t* keys = io.keys;
  LoadSplitters(lv, cursor);
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    ChunkView c;
    Segment seg;
    if (!OpenChunk(lv, io, item, c, seg)) continue;  // uniform per block
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
            io.To(bucket.Final(bk))[atomicAdd(&cursor[bk], 1u)] = key[q];
          }
        }
      }
    });
    __syncthreads();  // cursors read before the next chunk sets them
    // snippet-end: ch03-opt-partition-scatter
  }
}

/**
 * @brief Step 4 where a block holds a whole chunk (`PartitionPath::kChunkTile`): ranks the
 *        chunk's keys by bucket in one shared tile, then writes the tile out so that consecutive
 *        threads store consecutive addresses of one bucket's run.
 *
 * The histogram already counted the chunk's keys of each bucket (its row of the matrix), so the
 * tile's layout is known before any key is read: bucket k's keys start at the row's exclusive
 * scan, start[k]. Each key then takes the next slot of its bucket with one shared atomic on a
 * counter that starts at start[k], and is stored there at once: no per-pass count, zeroing or
 * scan, no rank kept in a register, and a run per bucket and chunk, twice as long as a pass's
 * (`PartitionKernel`). The chunk's run of bucket k is taken from k's total (`TakeRun`) as in
 * `PartitionKernel`; tile entry i of bucket k goes to run base[k] + i, base[k] = run - start[k]
 * (modulo 2^32). A chunk of an all-equal segment is copied to `out`. The next pass's (or
 * chunk's) loads go out once the keys in registers sit in the tile.
 * @par Launch configuration
 * A resident grid of kChunkThreads-thread blocks (one per SM), at most one per chunk; dynamic
 * shared memory 4 (kChunk + kMaxBuckets) bytes (160 KiB: sm_80, sm_90, sm_100).
 * @param[in] lv the level
 * @param[in] arrays the sort's arrays (reads `LevelSource`, writes `LevelTarget`)
 * @param[in,out] hist the level's matrix, bucket totals (zero on return) and starts
 * Reads and writes 4 bytes per key.
 */
__global__ void __launch_bounds__(kChunkThreads)
    PartitionChunkKernel(Level lv, ArraysRef arrays, Counts hist) {
  extern __shared__ uint4 smem_partition_chunk[];
  auto* tile = reinterpret_cast<std::uint32_t*>(smem_partition_chunk);
  std::uint32_t* slots = tile + kChunk;  // each bucket's next free slot in the tile, then run bases
  __shared__ std::uint32_t scan_scratch[kBlockScanScratch];
  const LevelIo io(lv, arrays);
  const std::uint32_t chunks = lv.state->chunks;
  const std::uint32_t* keys = io.keys;
  std::uint32_t key[kChunkKeysPerThread];
  bool loaded = false;
  LoadSplitters(lv, slots);
  for (std::uint32_t item = blockIdx.x; item < chunks; item += gridDim.x) {
    ChunkView c;
    Segment seg;
    if (!OpenChunk(lv, io, item, c, seg)) continue;  // uniform per block
    if (!loaded) LoadPass(keys, c, 0, key);
    // The chunk's row of the matrix: its count of each bucket. Its exclusive scan is where each
    // bucket's keys start in the tile; the run taken from the bucket's total, less that start,
    // is the run base: tile entry i of bucket k goes to base[k] + i.
    const std::uint32_t* row = hist.matrix + seg.matrix_base + c.local * seg.buckets;
    std::uint32_t run[kBucketsPerThread];
#pragma unroll
    for (int u = 0; u < kBucketsPerThread; ++u) {
      const std::uint32_t k = u * kChunkThreads + threadIdx.x;
      if (k < seg.buckets) {
        const std::uint32_t count = row[k];
        slots[k] = count;
        run[u] = TakeRun(hist, seg, k, count);
      }
    }
    __syncthreads();  // the row in slots
    BlockExclusiveScan<kBucketsPerThread>(slots, seg.buckets, scan_scratch);
#pragma unroll
    for (int u = 0; u < kBucketsPerThread; ++u) {
      const std::uint32_t k = u * kChunkThreads + threadIdx.x;
      if (k < seg.buckets) run[u] -= slots[k];  // the run base
    }
    __syncthreads();  // every start read before the atomics move them
    WithBucketMap(seg, slots, [&](const auto& bucket) {
      const std::uint32_t passes = PassesOf(c);
      for (std::uint32_t pass = 0; pass < passes; ++pass) {
        const std::uint32_t len = PassLength(c, pass);
#pragma unroll
        for (int q = 0; q < kChunkKeysPerThread; ++q) {
          if (q * kChunkThreads + threadIdx.x < len) {
            tile[atomicAdd(&slots[bucket(key[q])], 1u)] = key[q];
          }
        }
        if (pass + 1 < passes) {
          LoadPass(keys, c, pass + 1, key);
        } else {
          loaded = PrefetchChunk(lv, keys, item + gridDim.x, key);
        }
      }
      __syncthreads();  // the tile complete; every slot taken
#pragma unroll
      for (int u = 0; u < kBucketsPerThread; ++u) {
        const std::uint32_t k = u * kChunkThreads + threadIdx.x;
        if (k < seg.buckets) slots[k] = run[u];
      }
      __syncthreads();  // run bases ready
      for (std::uint32_t i = threadIdx.x; i < c.len; i += blockDim.x) {
        const std::uint32_t k = tile[i], bk = bucket(k);
        io.To(bucket.Final(bk))[slots[bk] + i] = k;
      }
      __syncthreads();  // tile and bases read before the next chunk
    });
  }
}

namespace {
/// Dynamic shared memory of PartitionKernel: the tile of one pass and one word per bucket.
constexpr std::size_t kPassTileDynamicBytes = 4 * (std::size_t{kChunkPass} + kMaxBuckets);
static_assert(kPassTileDynamicBytes + 4 * kBlockScanScratch <= kPassTileSharedBytes,
              "plan.hpp's kPassTileSharedBytes bounds the pass-tile partition's block");
/// Dynamic shared memory of PartitionChunkKernel: the tile of a whole chunk and one word per
/// bucket.
constexpr std::size_t kChunkTileDynamicBytes = 4 * (std::size_t{kChunk} + kMaxBuckets);
static_assert(kChunkTileDynamicBytes + 4 * kBlockScanScratch <= kChunkTileSharedBytes,
              "plan.hpp's kChunkTileSharedBytes bounds the chunk-tile partition's block");
}  // namespace

void Partition(const Level& lv, const ArraysRef& arrays, const Counts& hist, PartitionPath path,
               std::uint32_t items, cudaStream_t stream) {
  if (!lv.dynamic && items == 0) return;
  void (*kernel)(Level, ArraysRef, Counts) = PartitionScatterKernel;
  std::size_t smem = 0;
  if (path == PartitionPath::kChunkTile) {
    kernel = PartitionChunkKernel;
    smem = kChunkTileDynamicBytes;
  } else if (path == PartitionPath::kPassTile) {
    kernel = PartitionKernel;
    smem = kPassTileDynamicBytes;
  }
  const void* entry = reinterpret_cast<const void*>(kernel);
  staged::OptInSharedMemory(entry, smem);
  // Always a resident grid: a block's later chunks are what its loads overlap with.
  const unsigned grid = lv.dynamic ? staged::ResidentBlocks(entry, kChunkThreads, smem)
                                   : staged::ResidentGrid(entry, kChunkThreads, smem, items, 1);
  kernel<<<grid, kChunkThreads, smem, stream>>>(lv, arrays, hist);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch03::optimized
