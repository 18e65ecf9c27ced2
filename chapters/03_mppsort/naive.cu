/**
 * @file naive.cu
 * @brief mppSort as the Portuguese report describes it: five kernels, buckets found by binary search in a
 *        table of h + 1 bucket limits, atomics in shared memory for the scatter, and a bitonic
 *        sort of each bucket in shared memory with the Portuguese report's alternating directions.
 *
 * Fixed relative to the Portuguese report: the limits are 64-bit (keys spanning 0..0xFFFFFFFF do not
 * overflow R = max - min + 1), buckets larger than the shared tile are sorted by a global-memory
 * bitonic network instead of being truncated, and any n works.
 */
#include <algorithm>
#include <climits>
#include <stdexcept>
#include <vector>

#include "chapters/01_minmax_reduction/block_minmax.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "common/cuda_check.hpp"

namespace ch03::naive {

/// Largest limit index b with limits[b] <= key (binary search over the h + 1 limits).
/// @param[in] limits the table in shared memory
/// @param[in] h buckets
/// @param[in] key a key in [limits[0], limits[h])
__device__ std::uint32_t TableLookup(const std::uint64_t* limits, std::uint32_t h,
                                     std::uint32_t key) {
  // snippet-begin: ch03-naive-lookup
  std::uint32_t lo = 0, hi = h;  // answer in [lo, hi)
  while (hi - lo > 1) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (limits[mid] <= key)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
  // snippet-end: ch03-naive-lookup
}

/// Fills limits[0..h] in shared memory and zeroes counts[0..h) (every thread of the block).
/// @param[out] limits table of h + 1 limits
/// @param[out] counts h counters (may be null)
/// @param[in] minmax {min, max}
/// @param[in] h buckets
__device__ void BuildLimits(std::uint64_t* limits, std::uint32_t* counts,
                            const std::uint32_t* minmax, std::uint32_t h) {
  const std::uint32_t min = minmax[0], max = minmax[1];
  for (std::uint32_t i = threadIdx.x; i <= h; i += blockDim.x) {
    limits[i] = BucketLimit(min, max, h, i);
    if (counts != nullptr && i < h) counts[i] = 0;
  }
}

/// Exclusive Blelloch scan of xy[0, m) in shared memory by the whole block (m a power of two).
/// @param[in,out] xy values, replaced by their exclusive prefix sums
/// @param[in] m length, a power of two >= 2
__device__ void BlellochScan(std::uint32_t* xy, std::uint32_t m) {
  // Up-sweep: node (i + 1) * 2d - 1 accumulates its left sibling d places before it.
  for (std::uint32_t d = 1; d < m; d *= 2) {
    __syncthreads();  // the previous level (or the load) is complete
    for (std::uint32_t i = threadIdx.x; (i + 1) * 2 * d - 1 < m; i += blockDim.x) {
      xy[(i + 1) * 2 * d - 1] += xy[(i + 1) * 2 * d - 1 - d];
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) xy[m - 1] = 0;
  // Down-sweep: each node passes its value left and the sum right.
  for (std::uint32_t d = m / 2; d >= 1; d /= 2) {
    __syncthreads();
    for (std::uint32_t i = threadIdx.x; (i + 1) * 2 * d - 1 < m; i += blockDim.x) {
      const std::uint32_t right = (i + 1) * 2 * d - 1;
      const std::uint32_t left = right - d;
      const std::uint32_t t = xy[left];
      xy[left] = xy[right];
      xy[right] += t;
    }
  }
  __syncthreads();
}

// ------------------------------------------------------------------ step 0: min and max

/**
 * @brief min and max of the keys: per-thread grid-stride reduction, warp shuffles, and one
 *        global atomicMin/atomicMax per warp.
 * @par Launch configuration
 * Any grid of kThreads-thread blocks; @p minmax must hold {0xFFFFFFFF, 0} before.
 * @param[in] in keys
 * @param[in] n keys
 * @param[in,out] minmax {min, max}
 * Reads 4n bytes.
 */
__global__ void MinMaxAtomicKernel(const std::uint32_t* in, std::size_t n, std::uint32_t* minmax) {
  std::uint32_t lo = UINT_MAX, hi = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    lo = min(lo, in[i]);
    hi = max(hi, in[i]);
  }
  ch01::WarpMinMax(lo, hi);  // chapter 01's shuffle butterfly: every lane gets the warp's pair
  if ((threadIdx.x & 31) == 0) {
    atomicMin(&minmax[0], lo);
    atomicMax(&minmax[1], hi);
  }
}

// ------------------------------------------------------------------ step 1: histograms

/**
 * @brief Step 1 (BlocksHistoAndScan): block r counts the keys of [r * chunk, (r + 1) * chunk)
 *        per bucket in shared memory, writes row r of hh and adds it to the global histogram.
 * @par Launch configuration
 * `rows` blocks of kThreads threads; dynamic shared memory (h + 1) * 8 + h * 4 bytes.
 * @pre hg zeroed; h <= kMaxBuckets.
 * @param[in] in keys
 * @param[in] n keys
 * @param[in] minmax {min, max}
 * @param[in] h buckets
 * @param[in] chunk keys per block
 * @param[out] hh rows x h matrix, row-major
 * @param[in,out] hg global histogram
 * Reads 4n bytes, writes 4 * rows * h bytes.
 */
__global__ void BlocksHistoAndScanKernel(const std::uint32_t* in, std::size_t n,
                                         const std::uint32_t* minmax, std::uint32_t h,
                                         std::uint64_t chunk, std::uint32_t* hh,
                                         std::uint32_t* hg) {
  extern __shared__ std::uint64_t smem_naive[];
  std::uint64_t* limits = smem_naive;
  auto* counts = reinterpret_cast<std::uint32_t*>(limits + h + 1);
  // snippet-begin: ch03-naive-histogram
  BuildLimits(limits, counts, minmax, h);
  __syncthreads();  // table and zeroed counters visible to the block
  const std::uint64_t begin = blockIdx.x * chunk;
  const std::uint64_t end = begin + chunk < n ? begin + chunk : n;
  for (std::uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    atomicAdd(&counts[TableLookup(limits, h, in[i])], 1u);
  }
  __syncthreads();  // every key of the block counted
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) {
    hh[static_cast<std::size_t>(blockIdx.x) * h + b] = counts[b];
    if (counts[b] != 0) atomicAdd(&hg[b], counts[b]);
  }
  // snippet-end: ch03-naive-histogram
}

// ------------------------------------------------------- steps 2 and 3: scans of the matrix

/**
 * @brief Step 2 (GlobalHistoScan): exclusive Blelloch scan of the h counters in one block,
 *        padded with zeros to a power of two (only the h real values are written back).
 * @par Launch configuration
 * One block of kThreads threads; static shared memory 2 * kThreads words.
 * @pre h <= kMaxBuckets.
 * @param[in] hg global histogram
 * @param[in] h buckets
 * @param[out] shg bucket starts
 */
__global__ void GlobalHistoScanKernel(const std::uint32_t* hg, std::uint32_t h,
                                      std::uint32_t* shg) {
  __shared__ std::uint32_t xy[kMaxBuckets];
  const auto m = static_cast<std::uint32_t>(PowerOfTwoAtLeast(h));
  for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) xy[i] = i < h ? hg[i] : 0;
  BlellochScan(xy, m);
  for (std::uint32_t i = threadIdx.x; i < h; i += blockDim.x) shg[i] = xy[i];
}

/**
 * @brief Step 3 (VerticalScanHH): block b scans column b of the rows x h matrix, so
 *        psv[r][b] = keys of bucket b in blocks before r.
 * @par Launch configuration
 * h blocks of kThreads threads; static shared memory kMaxRows words.
 * @pre rows <= kMaxRows.
 * @param[in] hh matrix
 * @param[in] rows rows
 * @param[in] h columns
 * @param[out] psv column-scanned matrix
 * Reads and writes 4 * rows * h bytes with a stride of h words (the Portuguese report's layout).
 */
__global__ void VerticalScanHHKernel(const std::uint32_t* hh, std::uint32_t rows, std::uint32_t h,
                                     std::uint32_t* psv) {
  __shared__ std::uint32_t xy[kMaxRows];
  // snippet-begin: ch03-naive-vertical
  const auto m = static_cast<std::uint32_t>(PowerOfTwoAtLeast(rows));
  const std::uint32_t b = blockIdx.x;
  for (std::uint32_t r = threadIdx.x; r < m; r += blockDim.x) {
    xy[r] = r < rows ? hh[static_cast<std::size_t>(r) * h + b] : 0;
  }
  BlellochScan(xy, m);
  for (std::uint32_t r = threadIdx.x; r < rows; r += blockDim.x) {
    psv[static_cast<std::size_t>(r) * h + b] = xy[r];
  }
  // snippet-end: ch03-naive-vertical
}

// ------------------------------------------------------------------ step 4: partition

/**
 * @brief Step 4 (Partition): block r starts each bucket's cursor at shg[b] + psv[r][b] in
 *        shared memory, then every thread reserves a slot per key with a shared atomic and
 *        stores the key there (scattered 4-byte stores).
 * @par Launch configuration
 * `rows` blocks of kThreads threads; dynamic shared memory (h + 1) * 8 + h * 4 bytes.
 * @param[in] in keys
 * @param[in] n keys
 * @param[in] minmax {min, max}
 * @param[in] h buckets
 * @param[in] chunk keys per block
 * @param[in] shg bucket starts
 * @param[in] psv column-scanned matrix
 * @param[out] out partitioned keys
 * Reads 4n bytes, writes 4n bytes.
 */
__global__ void PartitionKernel(const std::uint32_t* in, std::size_t n, const std::uint32_t* minmax,
                                std::uint32_t h, std::uint64_t chunk, const std::uint32_t* shg,
                                const std::uint32_t* psv, std::uint32_t* out) {
  extern __shared__ std::uint64_t smem_naive[];
  std::uint64_t* limits = smem_naive;
  auto* hlsh = reinterpret_cast<std::uint32_t*>(limits + h + 1);
  BuildLimits(limits, nullptr, minmax, h);
  // snippet-begin: ch03-naive-partition
  for (std::uint32_t b = threadIdx.x; b < h; b += blockDim.x) {
    hlsh[b] = shg[b] + psv[static_cast<std::size_t>(blockIdx.x) * h + b];
  }
  __syncthreads();  // table and cursors ready
  const std::uint64_t begin = blockIdx.x * chunk;
  const std::uint64_t end = begin + chunk < n ? begin + chunk : n;
  for (std::uint64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const std::uint32_t key = in[i];
    out[atomicAdd(&hlsh[TableLookup(limits, h, key)], 1u)] = key;
  }
  // snippet-end: ch03-naive-partition
}

// ------------------------------------------------------------------ step 5: sort each bucket

/**
 * @brief Step 5: block b sorts bucket b in shared memory with the Portuguese report's bitonic network
 *        (half the comparators ascending, half descending, then merges), padded with
 *        0xFFFFFFFF to a power of two; threads loop to cover m / 2 comparators.
 * @par Launch configuration
 * h blocks of kThreads threads; static shared memory kTile words.
 * @param[in] in partitioned keys
 * @param[out] out sorted keys (may equal in)
 * @param[in] shg bucket starts
 * @param[in] h buckets
 * @param[in] n keys
 * Reads and writes each bucket once; buckets over kTile keys are skipped.
 */
__global__ void SegmentedBitonicSortKernel(const std::uint32_t* in, std::uint32_t* out,
                                           const std::uint32_t* shg, std::uint32_t h,
                                           std::size_t n) {
  __shared__ std::uint32_t s_key[kTile];
  const std::uint32_t b = blockIdx.x;
  const std::uint64_t begin = shg[b];
  const std::uint64_t end = b + 1 < h ? shg[b + 1] : n;
  const std::uint64_t len = end - begin;
  if (len == 0 || len > kTile) return;  // uniform per block: no thread reaches a barrier
  // snippet-begin: ch03-naive-bitonic
  const auto m = static_cast<std::uint32_t>(PowerOfTwoAtLeast(len));
  for (std::uint32_t i = threadIdx.x; i < m; i += blockDim.x) {
    s_key[i] = i < len ? in[begin + i] : UINT_MAX;  // padding sorts to the end
  }
  for (std::uint32_t k = 2; k <= m; k *= 2) {
    for (std::uint32_t j = k / 2; j > 0; j /= 2) {
      __syncthreads();  // the previous step (or the load) is complete
      for (std::uint32_t i = threadIdx.x; i < m / 2; i += blockDim.x) {
        const std::uint32_t lo = 2 * i - (i & (j - 1));  // i-th pair of stride j
        const std::uint32_t hi = lo + j;
        const bool ascending = (lo & k) == 0;
        if ((s_key[lo] > s_key[hi]) == ascending) {
          const std::uint32_t t = s_key[lo];
          s_key[lo] = s_key[hi];
          s_key[hi] = t;
        }
      }
    }
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < len; i += blockDim.x) out[begin + i] = s_key[i];
  // snippet-end: ch03-naive-bitonic
}

// ------------------------------------------------------------------ launchers

Workspace::Workspace(std::size_t cap, std::uint32_t h)
    : capacity(cap),
      buckets(h),
      part(cap),
      minmax(2),
      hh(static_cast<std::size_t>(Rows(cap)) * h),
      psv(static_cast<std::size_t>(Rows(cap)) * h),
      hg(h),
      shg(h) {
  if (h < 1 || h > kMaxBuckets) throw std::invalid_argument("naive: buckets must be 1..2048");
}

std::uint32_t Rows(std::size_t n) {
  const std::size_t rows = (n + kThreads - 1) / kThreads;
  return static_cast<std::uint32_t>(std::clamp<std::size_t>(rows, 1, kMaxRows));
}

std::uint64_t Chunk(std::size_t n) {
  const std::uint32_t rows = Rows(n);
  return std::max<std::uint64_t>(1, (n + rows - 1) / rows);
}

namespace {
std::size_t TableSharedBytes(std::uint32_t h) {
  return (h + 1) * sizeof(std::uint64_t) + h * sizeof(std::uint32_t);
}
}  // namespace

void MinMax(const std::uint32_t* d_in, std::size_t n, std::uint32_t* d_minmax,
            cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_minmax, 0xFF, sizeof(std::uint32_t), stream));
  CUDA_CHECK(cudaMemsetAsync(d_minmax + 1, 0, sizeof(std::uint32_t), stream));
  const std::size_t blocks = std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, 1024);
  MinMaxAtomicKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(d_in, n, d_minmax);
  CUDA_CHECK_LAST_LAUNCH();
}

void BlocksHistoAndScan(const std::uint32_t* d_in, std::size_t n, const std::uint32_t* d_minmax,
                        std::uint32_t h, std::uint32_t rows, std::uint64_t chunk,
                        std::uint32_t* d_hh, std::uint32_t* d_hg, cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(d_hg, 0, h * sizeof(std::uint32_t), stream));
  BlocksHistoAndScanKernel<<<rows, kThreads, TableSharedBytes(h), stream>>>(d_in, n, d_minmax, h,
                                                                            chunk, d_hh, d_hg);
  CUDA_CHECK_LAST_LAUNCH();
}

void GlobalHistoScan(const std::uint32_t* d_hg, std::uint32_t h, std::uint32_t* d_shg,
                     cudaStream_t stream) {
  GlobalHistoScanKernel<<<1, kThreads, 0, stream>>>(d_hg, h, d_shg);
  CUDA_CHECK_LAST_LAUNCH();
}

void VerticalScanHH(const std::uint32_t* d_hh, std::uint32_t rows, std::uint32_t h,
                    std::uint32_t* d_psv, cudaStream_t stream) {
  VerticalScanHHKernel<<<h, kThreads / 2, 0, stream>>>(d_hh, rows, h, d_psv);
  CUDA_CHECK_LAST_LAUNCH();
}

void Partition(const std::uint32_t* d_in, std::size_t n, const std::uint32_t* d_minmax,
               std::uint32_t h, std::uint32_t rows, std::uint64_t chunk, const std::uint32_t* d_shg,
               const std::uint32_t* d_psv, std::uint32_t* d_out, cudaStream_t stream) {
  PartitionKernel<<<rows, kThreads, TableSharedBytes(h), stream>>>(d_in, n, d_minmax, h, chunk,
                                                                   d_shg, d_psv, d_out);
  CUDA_CHECK_LAST_LAUNCH();
}

void SegmentedBitonicSort(const std::uint32_t* d_in, std::uint32_t* d_out,
                          const std::uint32_t* d_shg, std::uint32_t h, std::size_t n,
                          cudaStream_t stream) {
  SegmentedBitonicSortKernel<<<h, kThreads, 0, stream>>>(d_in, d_out, d_shg, h, n);
  CUDA_CHECK_LAST_LAUNCH();
}

// ------------------------------------------------------------------ the sort

void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream) {
  if (n > ws.capacity) throw std::invalid_argument("naive::Sort: n exceeds the workspace");
  if (n == 0) return;
  const std::uint32_t h = ws.buckets, rows = Rows(n);
  const std::uint64_t chunk = Chunk(n);
  MinMax(d_in, n, ws.minmax.data(), stream);
  BlocksHistoAndScan(d_in, n, ws.minmax.data(), h, rows, chunk, ws.hh.data(), ws.hg.data(), stream);
  GlobalHistoScan(ws.hg.data(), h, ws.shg.data(), stream);
  VerticalScanHH(ws.hh.data(), rows, h, ws.psv.data(), stream);
  Partition(d_in, n, ws.minmax.data(), h, rows, chunk, ws.shg.data(), ws.psv.data(), ws.part.data(),
            stream);
  SegmentedBitonicSort(ws.part.data(), d_out, ws.shg.data(), h, n, stream);
  SortOversizedBuckets(ws.part.data(), d_out, ws.shg.data(), h, n, kTile, stream);
}

}  // namespace ch03::naive
