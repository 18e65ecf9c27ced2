/**
 * @file optimized.cu
 * @brief Chapter 02, optimized variant: privatized histogram and counting sort written as runs.
 *        (The scan stages live in scan_blelloch.cu and scan_lookback.cu.)
 *
 * Changes relative to naive.cu:
 * 1. Histogram privatized per lane: each block keeps 256 rows of 32 32-bit counters in shared
 *    memory (32 KiB), and lane l of every warp counts into column l, so every shared atomic
 *    of a warp touches 32 different banks whatever the bytes: no contention on uniform, skewed
 *    or all-equal input. Each block adds its counters to the global histogram once (256 global
 *    atomics per block instead of one per byte).
 * 2. Histogram reads 16-byte words (`uint4`), eight loads per thread in flight while the
 *    previous eight are counted; the first eight are issued before the counters are zeroed, so
 *    the zeroing hides under their latency. A word of sixteen equal bytes is counted with one
 *    atomic. Unaligned head and tail bytes are counted one by one.
 * 3. Histogram grid chosen from n: one block per SM at most (one block's 16 warps keep enough
 *    loads in flight), and fewer blocks when n is small, so that zeroing and summing a block's
 *    32 KiB of counters never costs much more than the bytes it counts.
 * 4. Sort: no scatter and no separate scan launch. The output is a concatenation of runs, so
 *    each block scans the 256 counts itself (warp shuffles), and each thread builds whole
 *    16-byte output words from the 257 run starts (binary search in shared memory) and stores
 *    them coalesced: n bytes written once, no atomics, deterministic.
 */
#include <cuda_runtime.h>

#include <cstdint>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/warp_scan.cuh"
#include "common/aligned_split.hpp"
#include "common/cuda_check.hpp"
#include "common/resident_grid.hpp"

namespace ch02::optimized {

// snippet-begin: ch02-hist-constants
/// Threads per histogram block: 16 warps share one set of per-lane counters.
constexpr int kHistBlockSize = 2 * kNumBins;
/// Counter columns per bin: one per lane.
constexpr int kHistColumns = kWarpSize;
/// Shared-memory bytes of a block's counters: 256 rows of 32 32-bit words.
constexpr int kHistSharedBytes = kNumBins * kHistColumns * 4;
/// Independent 16-byte loads per histogram thread in one batch.
constexpr int kHistUnroll = 8;
/// Input bytes per histogram block below which another block is not worth its fixed cost
/// (zeroing and summing 32 KiB of counters, 256 global atomics): one 16-byte word per thread.
constexpr std::size_t kHistBytesPerBlock = std::size_t{16} * kHistBlockSize;
// snippet-end: ch02-hist-constants
/// Threads per block of the run-writing kernel: one per bin for the scan of the counts.
constexpr int kFillBlockSize = kNumBins;
/// 16-byte output words per run-writing thread below which fewer blocks are launched.
constexpr std::size_t kFillWordsPerThread = 4;
static_assert(kFillBlockSize == kNumBins, "the run writer scans one count per thread");
static_assert(kHistBlockSize == 2 * kNumBins, "two threads sum each row of counters");

// snippet-begin: ch02-hist-count-word
/// Counts one byte into the calling lane's column with one shared atomic. Lanes of a warp never
/// share a word; the atomic is there because lane l of every warp of the block adds to the same
/// column.
/// @param[in,out] counters the block's counters (bytes)
/// @param[in] offset byte offset of the counter: 128 x bin + 4 x lane
__device__ __forceinline__ void CountAt(unsigned char* counters, std::uint32_t offset) {
  atomicAdd(reinterpret_cast<unsigned int*>(counters + offset), 1u);
}

/// Counts the four bytes of @p word into the calling lane's counters.
/// @param[in,out] counters the block's counters (bytes)
/// @param[in] lane8 8 x lane (see below)
/// @param[in] word four input bytes
__device__ __forceinline__ void CountWord(unsigned char* counters, std::uint32_t lane8,
                                          std::uint32_t word) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    // One PRMT builds 256 x byte_k + 8 x lane (result byte 0 = byte 0 of lane8, byte 1 = byte k
    // of word, bytes 2-3 = byte 1 of lane8 = 0); halved, it is the offset 128 x byte_k + 4 x lane.
    CountAt(counters, __byte_perm(word, lane8, 0x5504u | (k << 4)) >> 1);
  }
}
// snippet-end: ch02-hist-count-word

/// Counts the sixteen bytes of @p v into the calling lane's counters.
/// @param[in,out] counters the block's counters (bytes)
/// @param[in] lane8 8 x lane
/// @param[in] v sixteen input bytes
__device__ __forceinline__ void CountVector(unsigned char* counters, std::uint32_t lane8,
                                            const uint4& v) {
  // snippet-begin: ch02-hist-count-vector
  // Sixteen equal bytes (inside a long run, or all-equal input) count with one atomic of 16.
  const std::uint32_t splat = __byte_perm(v.x, 0, 0);  // byte 0 of v.x in all four bytes
  if (v.x == splat && v.y == splat && v.z == splat && v.w == splat) {
    atomicAdd(reinterpret_cast<unsigned int*>(counters + (__byte_perm(splat, lane8, 0x5504u) >> 1)),
              16u);
    return;
  }
  CountWord(counters, lane8, v.x);
  CountWord(counters, lane8, v.y);
  CountWord(counters, lane8, v.z);
  CountWord(counters, lane8, v.w);
  // snippet-end: ch02-hist-count-vector
}

/// Loads the 16-byte words i, i + stride, ..., i + 7 stride that lie below @p end (the others
/// are left zero and never counted).
/// @param[in] vec aligned 16-byte input words
/// @param[in] i first word of the batch
/// @param[in] end words at or past this index are not read
/// @param[in] stride threads of the grid
/// @param[out] v the batch
__device__ __forceinline__ void LoadBatch(const uint4* __restrict__ vec, std::size_t i,
                                          std::size_t end, std::size_t stride,
                                          uint4 (&v)[kHistUnroll]) {
#pragma unroll
  for (int u = 0; u < kHistUnroll; ++u) {
    // Streaming loads: every input byte is read once.
    v[u] = i + u * stride < end ? __ldcs(vec + i + u * stride) : make_uint4(0, 0, 0, 0);
  }
}

/**
 * @brief Privatized histogram: every lane counts into its own column of 32-bit counters in
 *        shared memory (one conflict-free shared atomic per byte), 16-byte loads, one global
 *        merge per block.
 *
 * Thread t of the grid reads 16-byte words t, t + T, t + 2T, ... (T = all threads) in batches
 * of `kHistUnroll`, loading batch k + 1 while it counts batch k. Byte b goes to word (b, lane)
 * of the block's 256 x 32 counters: lane l always hits bank l, whatever the bytes, so uniform,
 * skewed and all-equal input never conflict (one PRMT, one shift and one shared atomic per
 * byte; one atomic for a word of sixteen equal bytes). A column counts at most n < 2^32 bytes,
 * so 32-bit counters never overflow. Bytes before the first 16-byte boundary (@p head of them)
 * and after the last one (fewer than 16) are counted by threads 0..15 one at a time. Finally
 * threads 2b and 2b + 1 sum row b and add it to @p hist: 256 global atomics per block. Reads n
 * bytes once; writes 1 KiB per block.
 * @par Launch configuration
 * 1-D grid of `kHistBlockSize` threads, at most one block per SM (`HistogramBlocks`); 32 KiB of
 * static shared memory per block.
 * @pre @p hist is zeroed; in + head is 16-byte aligned; head < 16; n - head - 16 num_vec < 16;
 *      n < 2^32.
 * @param[in] in device bytes
 * @param[in] n number of bytes
 * @param[in] head bytes before the first aligned 16-byte word
 * @param[in] num_vec aligned 16-byte words after the head
 * @param[in,out] hist 256 global counters
 */
__global__ void __launch_bounds__(kHistBlockSize)
    PrivatizedHistogramKernel(const std::uint8_t* __restrict__ in, std::size_t n, std::size_t head,
                              std::size_t num_vec, std::uint32_t* __restrict__ hist) {
  __shared__ uint4 shared_counters[kHistSharedBytes / 16];
  unsigned char* counters = reinterpret_cast<unsigned char*>(shared_counters);
  const std::uint32_t lane = threadIdx.x % kWarpSize;
  const std::uint32_t lane8 = 8 * lane;
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kHistBlockSize + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kHistBlockSize;

  // snippet-begin: ch02-hist-loop
  uint4 v[kHistUnroll];
  LoadBatch(vec, tid, num_vec, threads, v);
  for (int i = threadIdx.x; i < kHistSharedBytes / 16; i += kHistBlockSize) {
    shared_counters[i] = make_uint4(0, 0, 0, 0);
  }
  // Every counter must be zero before any thread counts into it.
  __syncthreads();

  for (std::size_t i = tid; i < num_vec; i += kHistUnroll * threads) {
    uint4 w[kHistUnroll];
    LoadBatch(vec, i + kHistUnroll * threads, num_vec, threads, w);
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) {
      if (i + u * threads < num_vec) CountVector(counters, lane8, v[u]);
    }
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) v[u] = w[u];
  }
  // snippet-end: ch02-hist-loop

  // Unaligned edges: at most 15 bytes each, one per thread.
  const std::size_t tail_start = head + num_vec * 16;
  if (tid < head) CountAt(counters, (static_cast<std::uint32_t>(in[tid]) << 7) | (lane8 >> 1));
  if (tid < n - tail_start) {
    CountAt(counters, (static_cast<std::uint32_t>(in[tail_start + tid]) << 7) | (lane8 >> 1));
  }
  // All threads must have finished counting before the rows are summed.
  __syncthreads();

  // snippet-begin: ch02-hist-merge
  // Thread t sums half a row: bin t / 2, words 16 (t mod 2) .. 16 (t mod 2) + 15, read as four
  // 16-byte vectors starting at vector (bin mod 4) so that eight neighbouring threads (four bins,
  // two halves) hit eight different 16-byte bank groups.
  const int bin = threadIdx.x / 2;
  const int half = threadIdx.x % 2;
  const uint4* row = shared_counters + bin * (kHistColumns / 4) + half * 4;
  std::uint32_t sum = 0;
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const uint4 c = row[(q + bin) % 4];
    sum += c.x + c.y + c.z + c.w;
  }
  // Threads 2b and 2b + 1 are neighbouring lanes of one warp.
  sum += __shfl_xor_sync(kFullWarp, sum, 1);
  if (half == 0 && sum > 0) atomicAdd(&hist[bin], sum);
  // snippet-end: ch02-hist-merge
}

/// Largest bin b with start[b] <= p: the bin that holds output position @p p.
/// @param[in] start 257 run starts (exclusive scan of the histogram, then n)
/// @param[in] p output position, p < start[256]
/// @return the byte value at position @p p
__device__ __forceinline__ std::uint32_t BinOf(const std::uint32_t* start, std::uint32_t p) {
  // snippet-begin: ch02-bin-of
  // Empty bins share their start with the next bin; taking the largest such b skips them.
  std::uint32_t bin = 0;
#pragma unroll
  for (std::uint32_t step = kNumBins / 2; step > 0; step >>= 1) {
    if (start[bin + step] <= p) bin += step;
  }
  return bin;
  // snippet-end: ch02-bin-of
}

/**
 * @brief Scans the 256 counts and writes the sorted output straight from them, 16 bytes per
 *        store.
 *
 * Each block first turns @p hist into the 257 run starts in shared memory: thread t holds
 * count t, a warp shuffle scan and the totals of the warps in front give its exclusive prefix.
 * (A separate scan launch for 256 numbers would cost more than the scan itself.) Word w then
 * covers positions p0 = head + 16 w ... p0 + 15. The thread finds the bin of p0 by a binary
 * search over the run starts; when the run reaches past p0 + 15 (the common case) the word is
 * the bin replicated, otherwise it walks the starts byte by byte. Consecutive threads store
 * consecutive words, so each warp writes 512 contiguous bytes. The unaligned head and tail
 * bytes are written one by one. Writes n bytes, reads 1 KiB per block.
 * @par Launch configuration
 * 1-D grid of `kFillBlockSize` (= 256) threads, at most as many blocks as are resident,
 * grid-stride over the words.
 * @pre @p hist is the histogram of n bytes; out + head is 16-byte aligned; head < 16;
 *      n - head - 16 num_vec < 16.
 * @param[in] hist 256 counts
 * @param[in] n number of bytes
 * @param[in] head bytes before the first aligned 16-byte word of @p out
 * @param[in] num_vec aligned 16-byte words after the head
 * @param[out] out sorted bytes
 */
__global__ void __launch_bounds__(kFillBlockSize)
    WriteRunsKernel(const std::uint32_t* __restrict__ hist, std::size_t n, std::size_t head,
                    std::size_t num_vec, std::uint8_t* __restrict__ out) {
  __shared__ std::uint32_t start[kNumBins + 1];
  // 16-byte aligned and a whole number of 16-byte blocks long: see the first barrier.
  __shared__ alignas(16) std::uint32_t warp_totals[kFillBlockSize / kWarpSize];
  static_assert(sizeof(warp_totals) % 16 == 0, "warp_totals fills whole 16-byte blocks");
  const int lane = threadIdx.x % kWarpSize;
  const int warp = threadIdx.x / kWarpSize;
  // snippet-begin: ch02-runs-scan
  const std::uint32_t count = hist[threadIdx.x];
  if (threadIdx.x == 0) start[kNumBins] = static_cast<std::uint32_t>(n);
  const std::uint32_t inclusive = WarpInclusiveSum(count, lane);
  if (lane == kWarpSize - 1) warp_totals[warp] = inclusive;
  // Every warp's total must be written before the totals in front of a warp are added. ptxas
  // merges the eight 4-byte reads below into 16-byte loads from 16-byte aligned addresses: they
  // must cover nothing that another thread writes before the next barrier. warp_totals owns its
  // 16-byte blocks, and start[256] (its neighbour when it is not aligned) is written above.
  __syncthreads();
  std::uint32_t offset = 0;
#pragma unroll
  for (int w = 0; w < kFillBlockSize / kWarpSize; ++w) offset += w < warp ? warp_totals[w] : 0u;
  start[threadIdx.x] = offset + inclusive - count;
  // Every thread searches the whole table.
  __syncthreads();
  // snippet-end: ch02-runs-scan

  // snippet-begin: ch02-runs-write
  uint4* vec = reinterpret_cast<uint4*>(out + head);
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kFillBlockSize + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kFillBlockSize;
  for (std::size_t w = tid; w < num_vec; w += threads) {
    const std::uint32_t p0 = static_cast<std::uint32_t>(head + 16 * w);
    std::uint32_t bin = BinOf(start, p0);
    uint4 word;
    if (start[bin + 1] >= p0 + 16) {
      const std::uint32_t fill = bin * 0x01010101u;  // the byte in all four lanes of a word
      word = make_uint4(fill, fill, fill, fill);
    } else {
      std::uint32_t lanes[4] = {0, 0, 0, 0};
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        // start[256] = n > p0 + k, so bin never passes 255.
        while (start[bin + 1] <= p0 + k) ++bin;
        lanes[k / 4] |= bin << (8 * (k % 4));
      }
      word = make_uint4(lanes[0], lanes[1], lanes[2], lanes[3]);
    }
    // Streaming store: the output is not read again by this kernel.
    __stcs(vec + w, word);
  }
  // snippet-end: ch02-runs-write
  const std::size_t tail_start = head + num_vec * 16;
  if (tid < head)
    out[tid] = static_cast<std::uint8_t>(BinOf(start, static_cast<std::uint32_t>(tid)));
  if (tid < n - tail_start) {
    const auto p = static_cast<std::uint32_t>(tail_start + tid);
    out[p] = static_cast<std::uint8_t>(BinOf(start, p));
  }
}

unsigned HistogramBlocks(std::size_t n) {
  // snippet-begin: ch02-hist-grid
  // One block per SM at most: its 16 warps already keep 64 KiB of loads in flight, and a
  // second block would only add another 32 KiB of counters to zero and sum.
  return staged::ResidentGrid(reinterpret_cast<const void*>(PrivatizedHistogramKernel),
                              kHistBlockSize, 0, n, kHistBytesPerBlock, 1);
  // snippet-end: ch02-hist-grid
}

std::size_t HistogramTempBytes(std::size_t /*n*/) { return 0; }

void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("optimized::Histogram", n, d_temp, temp_bytes, HistogramTempBytes(n));
  CUDA_CHECK(cudaMemsetAsync(d_hist, 0, kNumBins * sizeof(std::uint32_t), stream));
  if (n == 0) return;
  const staged::AlignedSplit split = staged::SplitAt16(d_in, n, 1);
  PrivatizedHistogramKernel<<<HistogramBlocks(n), kHistBlockSize, 0, stream>>>(
      d_in, n, split.head, split.vectors, d_hist);
  CUDA_CHECK_LAST_LAUNCH();
}

std::size_t CountingSortTempBytes(std::size_t /*n*/) { return kCountsBytes; }

void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("optimized::CountingSort", n, d_temp, temp_bytes, CountingSortTempBytes(n));
  if (n == 0) return;
  auto* d_hist = static_cast<std::uint32_t*>(d_temp);
  Histogram(d_in, n, d_hist, nullptr, 0, stream);
  const staged::AlignedSplit split = staged::SplitAt16(d_out, n, 1);
  const unsigned grid =
      staged::ResidentGrid(reinterpret_cast<const void*>(WriteRunsKernel), kFillBlockSize, 0,
                           split.vectors, kFillBlockSize * kFillWordsPerThread);
  WriteRunsKernel<<<grid, kFillBlockSize, 0, stream>>>(d_hist, n, split.head, split.vectors, d_out);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch02::optimized
