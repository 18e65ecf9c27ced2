/**
 * @file stage2_ranked.cu
 * @brief Stage 2: the partition ranks a chunk's keys by bucket in shared memory, then writes
 *        each bucket's run contiguously.
 *
 * Changes relative to stage 1 (stage1_buckets.cu):
 * 4. Step 4 loads the chunk's kChunk keys (16 per thread), ranks them by bucket in a shared
 *    tile (a block-local counting sort: a shared atomic per key for its rank, a block scan of
 *    the counts for each bucket's local start), then writes the tile out in order: consecutive
 *    threads store consecutive addresses of one run, so the stores coalesce instead of
 *    scattering one 4-byte write per key.
 *    Where a block cannot hold the 97 KiB this takes (sm_75's 64 KiB), stage 1's scatter runs
 *    instead (`optimized::ChoosePartition`).
 */
#include <cstddef>

#include "chapters/03_mppsort/block_scan.cuh"
#include "chapters/03_mppsort/runs.cuh"
#include "chapters/03_mppsort/stages.cuh"
#include "common/cuda_check.hpp"
#include "common/launch_support.hpp"

namespace ch03::stage2 {

using one_level::kChunk;
using one_level::kMaxBuckets;
using one_level::kThreads;

/// Keys each thread holds.
inline constexpr int kKeysPerThread = static_cast<int>(kChunk) / kThreads;
static_assert(kKeysPerThread * kThreads == static_cast<int>(kChunk) && kChunk <= 65536);
/// Dynamic shared memory of the kernel: the tile and one counter per bucket.
inline constexpr std::size_t kSharedBytes = 4 * (std::size_t{kChunk} + kMaxBuckets);

/**
 * @brief Step 4, ranked: block r ranks chunk r's keys by bucket in a shared tile, then writes
 *        the tile out so that consecutive threads store consecutive addresses of one run.
 *
 * Key i of the ranked tile belongs to bucket b and goes to run_b + i - start_b, where start_b
 * is where bucket b's keys start in the tile and run_b where the block's run of b starts in the
 * output (`TakeRunOffset`). Once every key sits in the tile, each counter is turned from start_b into
 * run_b - start_b in place, so one word per bucket serves both.
 * @par Launch configuration
 * One block of kThreads threads per chunk; dynamic shared memory kSharedBytes (96 KiB, opted
 * into), static kBlockScanScratch words.
 * @param[in] in keys
 * @param[in] n keys
 * @param[in] range {min, max}
 * @param[in] h buckets, <= kMaxBuckets
 * @param[in] matrix step 1's rows
 * @param[in,out] totals step 1's totals (zero on return)
 * @param[in] starts the scanned totals
 * @param[out] part partitioned keys
 * Reads 4n bytes, writes 4n bytes (in runs).
 */
__global__ void __launch_bounds__(kThreads)
    PartitionRankedKernel(const std::uint32_t* in, std::size_t n,
                          const ch01::MinMaxPair<std::uint32_t>* range, std::uint32_t h,
                          const std::uint32_t* matrix, std::uint32_t* totals,
                          const std::uint32_t* starts, std::uint32_t* part) {
  extern __shared__ uint4 smem_ranked[];
  auto* tile = reinterpret_cast<std::uint32_t*>(smem_ranked);
  std::uint32_t* counts = tile + kChunk;  // ranks, then local starts, then run bases
  __shared__ std::uint32_t scan_scratch[optimized::kBlockScanScratch];
  const std::uint32_t min = range->min;
  const std::uint64_t scale = BucketScale(min, range->max, h);
  const std::uint64_t begin = std::uint64_t{blockIdx.x} * kChunk;
  const auto len = static_cast<std::uint32_t>(begin + kChunk < n ? kChunk : n - begin);
  std::uint32_t key[kKeysPerThread];
#pragma unroll
  for (int q = 0; q < kKeysPerThread; ++q) {  // coalesced, all in flight at once
    const std::uint32_t i = q * kThreads + threadIdx.x;
    key[q] = i < len ? in[begin + i] : 0;
  }
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) counts[b] = 0;
  __syncthreads();  // counters zeroed
  // snippet-begin: ch03-stage2-rank
  std::uint32_t rank[kKeysPerThread];  // each key's place among its bucket's keys in the chunk
#pragma unroll
  for (int q = 0; q < kKeysPerThread; ++q) {
    if (q * kThreads + threadIdx.x < len) {
      rank[q] = atomicAdd(&counts[ArithmeticBucket(key[q], min, scale)], 1u);
    }
  }
  __syncthreads();                                            // counts complete
  optimized::BlockExclusiveScan<8>(counts, h, scan_scratch);  // counts[b]: b's start
#pragma unroll
  for (int q = 0; q < kKeysPerThread; ++q) {
    if (q * kThreads + threadIdx.x < len) {
      tile[counts[ArithmeticBucket(key[q], min, scale)] + rank[q]] = key[q];
    }
  }
  __syncthreads();  // tile ranked: every key placed, every start read
  // snippet-end: ch03-stage2-rank
  // snippet-begin: ch03-stage2-write
  // Each thread turns its own buckets' starts into run bases (one word serves both).
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) {
    const std::uint32_t count = matrix[std::uint64_t{blockIdx.x} * h + b];
    const std::uint32_t run = starts[b] + TakeRunOffset(&totals[b], count);
    counts[b] = run - counts[b];  // modulo 2^32: run + i - start for i >= start
  }
  __syncthreads();  // run bases ready
  for (std::uint32_t i = threadIdx.x; i < len; i += blockDim.x) {
    const std::uint32_t k = tile[i];  // consecutive threads, consecutive slots of one run
    part[counts[ArithmeticBucket(k, min, scale)] + i] = k;
  }
  // snippet-end: ch03-stage2-write
}

void Partition(const one_level::Args& a, cudaStream_t stream) {
  const auto limits = staged::PlanningLimits();
  if (optimized::ChoosePartition(limits) == optimized::PartitionPath::kScatter) {
    stage1::Partition(a, stream);  // the tile does not fit this GPU's blocks
    return;
  }
  const auto* kernel = reinterpret_cast<const void*>(PartitionRankedKernel);
  staged::OptInSharedMemory(kernel, kSharedBytes);
  PartitionRankedKernel<<<a.chunks, kThreads, kSharedBytes, stream>>>(
      a.in, a.n, a.range, a.buckets, a.matrix, a.totals, a.starts, a.part);
  CUDA_CHECK_LAST_LAUNCH();
}

one_level::Steps Steps() {
  return {naive::kDefaultBuckets, naive::kTile, &Partition, &stage1::SortBuckets};
}

}  // namespace ch03::stage2
