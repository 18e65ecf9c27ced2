/**
 * @file stage1_buckets.cu
 * @brief Stage 1: the report's five kernels with a computed bucket and one scan.
 *
 * Changes relative to naive.cu:
 * 1. Min and max come from chapter 01's one-pass launcher (`ch01::optimized::MinMax`).
 * 2. The bucket is computed, not looked up: ((key - min) * floor(h * 2^32 / R)) >> 32 in 64-bit
 *    arithmetic (`ArithmeticBucket`: monotone, below h, no overflow for R up to 2^32).
 * 3. One scan instead of two: chapter 02's `ExclusiveScan` of the bucket totals gives each
 *    bucket's start, and each block takes its run of a bucket out of the bucket's total with one
 *    atomic (`TakeRunOffset`, runs.cuh), since the order of the runs inside a bucket does not
 *    matter. No column
 *    scan, so chunks of kChunk keys and any number of rows.
 * Steps 4 and 5 otherwise stay the report's: every key claims a slot with a shared atomic, and
 * each bucket is sorted by the report's bitonic network in shared memory.
 */
#include "chapters/03_mppsort/runs.cuh"
#include "chapters/03_mppsort/stages.cuh"
#include "common/cuda_check.hpp"

namespace ch03::stage1 {

using one_level::kChunk;
using one_level::kMaxBuckets;
using one_level::kThreads;

/**
 * @brief Step 1: block r counts the keys of chunk r per bucket in shared memory, writes row r of
 *        the matrix and adds it to the totals (as `naive::BlocksHistoAndScanKernel`, with the
 *        bucket computed).
 * @par Launch configuration
 * One block of kThreads threads per chunk; static shared memory kMaxBuckets words.
 * @pre totals zeroed; h <= kMaxBuckets.
 * @param[in] in keys
 * @param[in] n keys
 * @param[in] range {min, max}
 * @param[in] h buckets
 * @param[out] matrix chunks x h, row r = chunk r
 * @param[in,out] totals keys per bucket
 * Reads 4n bytes; writes 4 h bytes per chunk.
 */
__global__ void HistogramKernel(const std::uint32_t* in, std::size_t n,
                                const ch01::MinMaxPair<std::uint32_t>* range, std::uint32_t h,
                                std::uint32_t* matrix, std::uint32_t* totals) {
  __shared__ std::uint32_t counts[kMaxBuckets];
  // snippet-begin: ch03-stage1-histogram
  const std::uint32_t min = range->min;
  const std::uint64_t scale = BucketScale(min, range->max, h);  // one division per block
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) counts[b] = 0;
  __syncthreads();  // zeroed counters visible to the block
  const std::uint64_t begin = std::uint64_t{blockIdx.x} * kChunk;
  const std::uint64_t end = begin + kChunk < n ? begin + kChunk : n;
  for (std::uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    atomicAdd(&counts[ArithmeticBucket(in[i], min, scale)], 1u);  // a multiply, not a search
  }
  __syncthreads();  // every key of the block counted
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) {
    matrix[std::uint64_t{blockIdx.x} * h + b] = counts[b];
    if (counts[b] != 0) atomicAdd(&totals[b], counts[b]);
  }
  // snippet-end: ch03-stage1-histogram
}

/**
 * @brief Step 4: block r sets each bucket's cursor to its run (`TakeRunOffset`), then every key claims
 *        its run's next slot with a shared atomic and is stored there.
 * @par Launch configuration
 * One block of kThreads threads per chunk; static shared memory kMaxBuckets words.
 * @param[in] in keys
 * @param[in] n keys
 * @param[in] range {min, max}
 * @param[in] h buckets
 * @param[in] matrix step 1's rows
 * @param[in,out] totals step 1's totals (zero on return)
 * @param[in] starts the scanned totals
 * @param[out] part partitioned keys
 * Reads 4n bytes, writes 4n bytes (scattered within each run).
 */
__global__ void PartitionScatterKernel(const std::uint32_t* in, std::size_t n,
                                       const ch01::MinMaxPair<std::uint32_t>* range,
                                       std::uint32_t h, const std::uint32_t* matrix,
                                       std::uint32_t* totals, const std::uint32_t* starts,
                                       std::uint32_t* part) {
  __shared__ std::uint32_t cursor[kMaxBuckets];
  const std::uint32_t min = range->min;
  const std::uint64_t scale = BucketScale(min, range->max, h);
  // snippet-begin: ch03-stage1-partition
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) {
    // Where this block's run of bucket b starts: the bucket's start plus the run's offset.
    const std::uint32_t count = matrix[std::uint64_t{blockIdx.x} * h + b];
    cursor[b] = starts[b] + TakeRunOffset(&totals[b], count);
  }
  __syncthreads();  // cursors ready
  const std::uint64_t begin = std::uint64_t{blockIdx.x} * kChunk;
  const std::uint64_t end = begin + kChunk < n ? begin + kChunk : n;
  for (std::uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const std::uint32_t key = in[i];
    part[atomicAdd(&cursor[ArithmeticBucket(key, min, scale)], 1u)] = key;
  }
  // snippet-end: ch03-stage1-partition
}

}  // namespace ch03::stage1

namespace ch03::one_level {

void Histogram(const Args& a, cudaStream_t stream) {
  stage1::HistogramKernel<<<a.chunks, kThreads, 0, stream>>>(a.in, a.n, a.range, a.buckets,
                                                             a.matrix, a.totals);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch03::one_level

namespace ch03::stage1 {

void Partition(const one_level::Args& a, cudaStream_t stream) {
  PartitionScatterKernel<<<a.chunks, kThreads, 0, stream>>>(a.in, a.n, a.range, a.buckets, a.matrix,
                                                            a.totals, a.starts, a.part);
  CUDA_CHECK_LAST_LAUNCH();
}

void SortBuckets(const one_level::Args& a, cudaStream_t stream) {
  naive::SegmentedBitonicSort(a.part, a.out, a.starts, a.buckets, a.n, stream);
}

one_level::Steps Steps() {
  return {naive::kDefaultBuckets, naive::kTile, &Partition, &SortBuckets};
}

}  // namespace ch03::stage1
