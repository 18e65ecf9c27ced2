/**
 * @file optimized.cu
 * @brief Chapter 02, optimized variant: privatized histogram, work-efficient Blelloch scan,
 *        output written as runs.
 *
 * Changes relative to naive.cu:
 * 1. Histogram privatized per thread: each thread owns 256 16-bit counters in shared memory
 *    (64 KiB per block of 128 threads) laid out so that lane l always hits bank l, and counts
 *    each byte with one fire-and-forget shared atomic. No two lanes ever contend, so uniform,
 *    skewed and all-equal bytes run at the same speed. Each block adds its counters to the
 *    global histogram once (256 global atomics per block instead of one per byte).
 * 2. Histogram reads 16-byte words (`uint4`), eight loads in flight and the next eight
 *    prefetched per thread, over a grid sized to the GPU (grid-stride loop); unaligned head
 *    and tail bytes are counted one by one.
 * 3. The private counters are drained into registers every 4095 16-byte words per thread,
 *    before a 16-bit counter can overflow (only inputs above ~3.3 GB on an H200 need it).
 * 4. Scan: the work-efficient Blelloch up-sweep/down-sweep on tiles of 1024 elements in
 *    shared memory, indices padded by `ConflictFreeOffset` (the seed's macro, parenthesised
 *    correctly); tile totals scanned recursively; O(n) additions instead of O(n log n), and
 *    2 + 2/1024 passes over memory instead of 2 log2 n.
 * 5. Sort: no scatter. The output is a concatenation of runs, so each thread builds whole
 *    16-byte output words from the 257 scanned offsets (binary search in shared memory) and
 *    stores them coalesced: n bytes written once, no atomics, deterministic.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/cuda_check.hpp"

namespace ch02::optimized {

/// Threads per histogram block. Each owns 256 private 16-bit counters: 128 x 256 x 2 B =
/// 64 KiB of shared memory per block, three blocks (12 warps) per H200 SM.
inline constexpr int kHistBlockSize = 128;
/// Counter words per bin: threads t and t + 64 share word t of each bin's row (low and high half).
inline constexpr int kHistColumns = 64;
/// Shared-memory bytes of one histogram block's counters: 256 rows of 64 32-bit words.
inline constexpr int kHistSharedBytes = kNumBins * kHistColumns * 4;
/// Bins each histogram thread sums when the counters are drained.
inline constexpr int kHistBinsPerThread = kNumBins / kHistBlockSize;
/// Independent 16-byte loads per histogram thread, and as many prefetched behind them.
inline constexpr int kHistUnroll = 8;
/// 16-byte words a histogram thread counts between two drains: a 16-bit counter then holds at
/// most 4095 x 16 + 2 (edge bytes) = 65 522 < 65 536.
inline constexpr std::size_t kHistChunkVecs = 4095;
/// Threads per block of the run-writing kernel.
inline constexpr int kFillBlockSize = 256;
/// Threads per scan block; each thread owns two elements of the tile.
inline constexpr int kScanThreads = 512;
/// Elements scanned per block.
inline constexpr int kScanTile = 2 * kScanThreads;
/// Shared words of one scan tile including padding: highest padded index + 1.
inline constexpr int kScanShared = kScanTile + ConflictFreeOffset(kScanTile - 1);

/// Wrapping addition in 32-bit unsigned arithmetic (signed overflow would be undefined).
/// @tparam T uint32_t or int32_t
/// @param[in] a first term
/// @param[in] b second term
/// @return a + b modulo 2^32, as T
template <typename T>
__host__ __device__ __forceinline__ T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

/// Counts one byte into the calling thread's private counter with one shared atomic. No other
/// thread adds to that 16-bit half, so the atomic never waits for another lane; it is atomic
/// only because thread t +/- 64 updates the other half of the same word.
/// @param[in,out] counters the block's 64 KiB of counters
/// @param[in] offset byte offset of the counter's word: 256 x bin + `column`
/// @param[in] inc 1 (low half, threads 0..63) or 0x10000 (high half, threads 64..127)
__device__ __forceinline__ void CountAt(unsigned char* counters, std::uint32_t offset,
                                        std::uint32_t inc) {
  atomicAdd(reinterpret_cast<unsigned int*>(counters + offset), inc);
}

/// Counts the four bytes of @p word into the calling thread's private counters.
/// @param[in,out] counters the block's 64 KiB of counters
/// @param[in] column 4 x (threadIdx.x mod 64): the thread's byte offset inside a bin's row
/// @param[in] inc 1 or 0x10000 (see `CountAt`)
/// @param[in] word four input bytes
__device__ __forceinline__ void CountWord(unsigned char* counters, std::uint32_t column,
                                          std::uint32_t inc, std::uint32_t word) {
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    // One PRMT builds the whole offset 256 x byte_k + column: result byte 0 = column (selector
    // 4 = byte 0 of the second operand), byte 1 = byte k of word, bytes 2-3 = 0 (column < 256).
    CountAt(counters, __byte_perm(word, column, 0x5504u | (k << 4)), inc);
  }
}

/// Counts the sixteen bytes of @p v into the calling thread's private counters.
/// @param[in,out] counters the block's 64 KiB of counters
/// @param[in] column the thread's byte offset inside a bin's row
/// @param[in] inc 1 or 0x10000 (see `CountAt`)
/// @param[in] v sixteen input bytes
__device__ __forceinline__ void CountVector(unsigned char* counters, std::uint32_t column,
                                            std::uint32_t inc, const uint4& v) {
  CountWord(counters, column, inc, v.x);
  CountWord(counters, column, inc, v.y);
  CountWord(counters, column, inc, v.z);
  CountWord(counters, column, inc, v.w);
}

/// Counts the 16-byte words i, i + stride, ... below @p end, `kHistUnroll` at a time with the
/// next `kHistUnroll` loads already issued (software pipelining in registers), so every thread
/// always has loads in flight while it counts.
/// @param[in] vec aligned 16-byte input words
/// @param[in] i first word of this thread
/// @param[in] end words at or past this index are not read
/// @param[in] stride threads of the grid
/// @param[in,out] counters the block's 64 KiB of counters
/// @param[in] column the thread's byte offset inside a bin's row
/// @param[in] inc 1 or 0x10000 (see `CountAt`)
__device__ __forceinline__ void CountVectors(const uint4* __restrict__ vec, std::size_t i,
                                             std::size_t end, std::size_t stride,
                                             unsigned char* counters, std::uint32_t column,
                                             std::uint32_t inc) {
  if (i + (kHistUnroll - 1) * stride < end) {
    uint4 v[kHistUnroll];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) v[u] = __ldcs(vec + i + u * stride);
    while (true) {
      const std::size_t next = i + kHistUnroll * stride;
      const bool more = next + (kHistUnroll - 1) * stride < end;
      uint4 w[kHistUnroll];
      if (more) {
#pragma unroll
        for (int u = 0; u < kHistUnroll; ++u) w[u] = __ldcs(vec + next + u * stride);
      }
#pragma unroll
      for (int u = 0; u < kHistUnroll; ++u) CountVector(counters, column, inc, v[u]);
      i = next;
      if (!more) break;
#pragma unroll
      for (int u = 0; u < kHistUnroll; ++u) v[u] = w[u];
    }
  }
  for (; i < end; i += stride) CountVector(counters, column, inc, __ldcs(vec + i));
}

/// Adds the 128 private counters of bins threadIdx.x and threadIdx.x + 128 to @p sums, and
/// zeroes them when @p zero is set. Thread t starts its row at word t mod 64, so the 32 lanes of
/// a warp read 32 different banks.
/// @param[in,out] words the block's counters as 32-bit words
/// @param[in,out] sums running totals of the thread's two bins
/// @param[in] zero clear the counters after reading them (before counting resumes)
__device__ __forceinline__ void DrainCounters(std::uint32_t* words,
                                              std::uint32_t (&sums)[kHistBinsPerThread],
                                              bool zero) {
#pragma unroll
  for (int o = 0; o < kHistBinsPerThread; ++o) {
    std::uint32_t* row = words + (threadIdx.x + o * kHistBlockSize) * kHistColumns;
    std::uint32_t low = 0;
    std::uint32_t high = 0;
#pragma unroll 8
    for (int j = 0; j < kHistColumns; ++j) {
      const int c = (j + threadIdx.x) % kHistColumns;
      const std::uint32_t x = row[c];
      if (zero) row[c] = 0;
      low += x & 0xFFFFu;
      high += x >> 16;
    }
    sums[o] += low + high;
  }
}

/**
 * @brief Privatized histogram: every thread counts into its own 16-bit counters in shared
 *        memory (one conflict-free shared atomic per byte), 16-byte loads, one global merge per
 *        block.
 *
 * Thread t of the grid reads 16-byte words t, t + T, t + 2T, ... (T = all threads) through
 * `CountVectors` and adds each byte b to its private counter: the low (t mod 128 < 64) or high
 * half of word (t mod 64) of row b. Lane l of a warp always hits bank l, whatever the bytes, so
 * uniform, skewed and all-equal input cost the same: one PRMT, one address add and one shared
 * atomic per byte. Every `kHistChunkVecs` words per thread the block drains its counters into
 * registers (`DrainCounters`) before a 16-bit counter could overflow. Bytes before the first
 * 16-byte boundary (@p head of them) and after the last one (fewer than 16) are counted by
 * threads 0..15 one at a time. Finally thread t sums the 128 counters of bins t and t + 128 and
 * adds them to @p hist: 256 global atomics per block. Reads n bytes once; writes 1 KiB per
 * block.
 * @par Launch configuration
 * 1-D grid of `kHistBlockSize` threads, at most as many blocks as are resident (three per SM);
 * `kHistSharedBytes` (64 KiB) of dynamic shared memory per block.
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
  extern __shared__ uint4 shared_counters[];
  for (int i = threadIdx.x; i < kHistSharedBytes / 16; i += kHistBlockSize) {
    shared_counters[i] = make_uint4(0, 0, 0, 0);
  }
  // Every counter must be zero before any thread counts into it.
  __syncthreads();

  unsigned char* counters = reinterpret_cast<unsigned char*>(shared_counters);
  std::uint32_t* words = reinterpret_cast<std::uint32_t*>(shared_counters);
  const std::uint32_t column = (threadIdx.x % kHistColumns) * 4;
  const std::uint32_t inc = threadIdx.x < kHistColumns ? 1u : 0x10000u;
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kHistBlockSize + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kHistBlockSize;
  // The most words any thread counts; the same in every thread, so the drain barriers below are
  // reached by the whole block.
  const std::size_t per_thread = (num_vec + threads - 1) / threads;

  std::uint32_t sums[kHistBinsPerThread] = {};
  for (std::size_t k0 = 0; k0 < per_thread; k0 += kHistChunkVecs) {
    const std::size_t k1 = per_thread < k0 + kHistChunkVecs ? per_thread : k0 + kHistChunkVecs;
    const std::size_t end = num_vec < tid + k1 * threads ? num_vec : tid + k1 * threads;
    CountVectors(vec, tid + k0 * threads, end, threads, counters, column, inc);
    if (k1 < per_thread) {
      // Only inputs over 4095 x 16 bytes per thread (about 3.3 GB on an H200) get here: all
      // counting of this chunk ends before the drain, and the drain before counting resumes.
      __syncthreads();
      DrainCounters(words, sums, true);
      __syncthreads();
    }
  }

  // Unaligned edges: at most 15 bytes each, one per thread.
  const std::size_t tail_start = head + num_vec * 16;
  if (tid < head) CountAt(counters, (static_cast<std::uint32_t>(in[tid]) << 8) | column, inc);
  if (tid < n - tail_start) {
    CountAt(counters, (static_cast<std::uint32_t>(in[tail_start + tid]) << 8) | column, inc);
  }
  // All threads must have finished counting before the rows are summed.
  __syncthreads();
  DrainCounters(words, sums, false);
#pragma unroll
  for (int o = 0; o < kHistBinsPerThread; ++o) {
    if (sums[o] > 0) atomicAdd(&hist[threadIdx.x + o * kHistBlockSize], sums[o]);
  }
}

/**
 * @brief Work-efficient (Blelloch) exclusive scan of one tile of `kScanTile` elements.
 *
 * Thread t loads elements t and t + 512 of the tile (coalesced) into padded shared slots.
 * Up-sweep: at each level the thread pairs (offset(2t+1)-1, offset(2t+2)-1) add the left
 * partial sum into the right one, building a reduction tree whose root is the tile total.
 * The root is saved to @p tile_sums and replaced by 0; the down-sweep then walks the tree
 * back, each node passing its value to its left child and value + left child to its right.
 * 2 x 1023 additions per tile (O(n) work), 2 log2(1024) barriers. Reads and writes each
 * element once.
 * @tparam T uint32_t or int32_t
 * @par Launch configuration
 * 1-D grid of ceil(n / kScanTile) blocks of `kScanThreads` threads.
 * @pre in and out are equal or do not overlap (a block writes only the tile it has read).
 * @param[in] in input
 * @param[out] out exclusive scan of each tile, without the tile's offset
 * @param[in] n number of elements
 * @param[out] tile_sums total of each tile, or null when there is only one tile
 */
template <typename T>
__global__ void __launch_bounds__(kScanThreads)
    BlellochScanTileKernel(const T* in, T* out, std::size_t n, T* tile_sums) {
  __shared__ T s[kScanShared];
  const int tid = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kScanTile;
  const int ai = tid;
  const int bi = tid + kScanThreads;
  const int pa = ai + ConflictFreeOffset(ai);
  const int pb = bi + ConflictFreeOffset(bi);
  // Elements past n are zeros: they change no sum and every shared slot is initialised.
  s[pa] = base + ai < n ? in[base + ai] : T{0};
  s[pb] = base + bi < n ? in[base + bi] : T{0};

  int offset = 1;
  for (int d = kScanThreads; d > 0; d >>= 1) {
    // Level k reads what level k-1 wrote (and the first level reads the loads).
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1;
      int b = offset * (2 * tid + 2) - 1;
      a += ConflictFreeOffset(a);
      b += ConflictFreeOffset(b);
      s[b] = WrapAdd(s[b], s[a]);
    }
    offset <<= 1;
  }
  if (tid == 0) {
    // The last up-sweep level ran on thread 0 alone, so the root is visible without a barrier.
    const int root = kScanTile - 1 + ConflictFreeOffset(kScanTile - 1);
    if (tile_sums != nullptr) tile_sums[blockIdx.x] = s[root];
    s[root] = T{0};
  }
  for (int d = 1; d < kScanTile; d <<= 1) {
    offset >>= 1;
    // Each level reads the parents the previous level (or the root reset) wrote.
    __syncthreads();
    if (tid < d) {
      int a = offset * (2 * tid + 1) - 1;
      int b = offset * (2 * tid + 2) - 1;
      a += ConflictFreeOffset(a);
      b += ConflictFreeOffset(b);
      const T left = s[a];
      s[a] = s[b];
      s[b] = WrapAdd(s[b], left);
    }
  }
  // The last down-sweep level wrote slots other threads now read.
  __syncthreads();
  if (base + ai < n) out[base + ai] = s[pa];
  if (base + bi < n) out[base + bi] = s[pb];
}

/**
 * @brief Adds the scanned tile totals: every element of tile b + 1 gets offsets[b + 1].
 *
 * Block b handles tile b + 1 (tile 0's offset is 0); thread t updates elements t and t + 512.
 * Reads and writes n elements.
 * @tparam T uint32_t or int32_t
 * @par Launch configuration
 * ceil(n / kScanTile) - 1 blocks of `kScanThreads` threads.
 * @param[in,out] out per-tile scans
 * @param[in] n number of elements
 * @param[in] tile_offsets exclusive scan of the tile totals
 */
template <typename T>
__global__ void __launch_bounds__(kScanThreads)
    AddTileOffsetsKernel(T* __restrict__ out, std::size_t n, const T* __restrict__ tile_offsets) {
  const std::size_t tile = static_cast<std::size_t>(blockIdx.x) + 1;
  const T add = tile_offsets[tile];
  const std::size_t base = tile * kScanTile;
  for (int k = threadIdx.x; k < kScanTile; k += kScanThreads) {
    if (base + k < n) out[base + k] = WrapAdd(out[base + k], add);
  }
}

/// Largest bin b with start[b] <= p: the bin that holds output position @p p.
/// @param[in] start 257 run starts (exclusive scan of the histogram, then n)
/// @param[in] p output position, p < start[256]
/// @return the byte value at position @p p
__device__ __forceinline__ std::uint32_t BinOf(const std::uint32_t* start, std::uint32_t p) {
  // Empty bins share their start with the next bin; taking the largest such b skips them.
  std::uint32_t bin = 0;
#pragma unroll
  for (std::uint32_t step = kNumBins / 2; step > 0; step >>= 1) {
    if (start[bin + step] <= p) bin += step;
  }
  return bin;
}

/**
 * @brief Writes the sorted output straight from the scanned histogram, 16 bytes per store.
 *
 * Word w covers positions p0 = head + 16 w ... p0 + 15. The thread finds the bin of p0 by a
 * binary search over the run starts in shared memory; when the run reaches past p0 + 15 (the
 * common case) the word is the bin replicated, otherwise it walks the starts byte by byte.
 * Consecutive threads store consecutive words, so each warp writes 512 contiguous bytes.
 * The unaligned head and tail bytes are written one by one. Writes n bytes, reads 1 KiB.
 * @par Launch configuration
 * 1-D grid of `kFillBlockSize` threads, a few blocks per SM, grid-stride over the words.
 * @pre offsets is the exclusive scan of the histogram of n bytes; out + head is 16-byte
 *      aligned; head < 16; n - head - 16 num_vec < 16.
 * @param[in] offsets 256 run starts
 * @param[in] n number of bytes
 * @param[in] head bytes before the first aligned 16-byte word of @p out
 * @param[in] num_vec aligned 16-byte words after the head
 * @param[out] out sorted bytes
 */
__global__ void __launch_bounds__(kFillBlockSize)
    WriteRunsKernel(const std::uint32_t* __restrict__ offsets, std::size_t n, std::size_t head,
                    std::size_t num_vec, std::uint8_t* __restrict__ out) {
  __shared__ std::uint32_t start[kNumBins + 1];
  for (int b = threadIdx.x; b < kNumBins; b += kFillBlockSize) start[b] = offsets[b];
  if (threadIdx.x == 0) start[kNumBins] = static_cast<std::uint32_t>(n);
  // Every thread searches the whole table.
  __syncthreads();

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
  const std::size_t tail_start = head + num_vec * 16;
  if (tid < head)
    out[tid] = static_cast<std::uint8_t>(BinOf(start, static_cast<std::uint32_t>(tid)));
  if (tid < n - tail_start) {
    const auto p = static_cast<std::uint32_t>(tail_start + tid);
    out[p] = static_cast<std::uint8_t>(BinOf(start, p));
  }
}

namespace {

// A byte array split into an unaligned head, aligned 16-byte words and a short tail.
struct Split {
  std::size_t head;
  std::size_t num_vec;
};

Split SplitAt16(const void* ptr, std::size_t n) {
  const auto misalign = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(ptr) & 15u);
  const std::size_t head = std::min<std::size_t>(n, (16 - misalign) & 15u);
  return {head, (n - head) / 16};
}

// Devices whose resident-grid size is cached (more are queried on every call).
constexpr int kCachedDevices = 64;

// Blocks for a grid-stride kernel: as many as can be resident at once (with dynamic_smem bytes
// of dynamic shared memory each), but no more than the work needs (at least one). The occupancy
// query costs microseconds, as long as the kernel itself at small n, so its result is cached
// per kernel (one instantiation each) and device.
template <auto kKernel>
unsigned ResidentGrid(int block_size, int dynamic_smem, std::size_t items_per_block,
                      std::size_t items) {
  static std::atomic<int> cached[kCachedDevices] = {};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int resident = device < kCachedDevices ? cached[device].load() : 0;
  if (resident == 0) {
    int sms = 0;
    int per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kKernel, block_size, dynamic_smem));
    resident = sms * std::max(per_sm, 1);
    if (device < kCachedDevices) cached[device].store(resident);
  }
  const std::size_t needed = (items + items_per_block - 1) / items_per_block;
  return static_cast<unsigned>(
      std::clamp<std::size_t>(needed, 1, static_cast<std::size_t>(resident)));
}

}  // namespace

std::size_t HistogramTempBytes(std::size_t /*n*/) { return 0; }

void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("optimized::Histogram", n, d_temp, temp_bytes, HistogramTempBytes(n));
  CUDA_CHECK(cudaMemsetAsync(d_hist, 0, kNumBins * sizeof(std::uint32_t), stream));
  if (n == 0) return;
  const Split split = SplitAt16(d_in, n);
  // 64 KiB of dynamic shared memory is above the default 48 KiB limit: opt in (every call, so a
  // new context or device is covered; the call is cheap and queues no GPU work).
  CUDA_CHECK(cudaFuncSetAttribute(PrivatizedHistogramKernel,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, kHistSharedBytes));
  const unsigned grid = ResidentGrid<PrivatizedHistogramKernel>(
      kHistBlockSize, kHistSharedBytes, std::size_t{kHistBlockSize} * kHistUnroll, split.num_vec);
  PrivatizedHistogramKernel<<<grid, kHistBlockSize, kHistSharedBytes, stream>>>(
      d_in, n, split.head, split.num_vec, d_hist);
  CUDA_CHECK_LAST_LAUNCH();
}

template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n) {
  const std::size_t tiles = (n + kScanTile - 1) / kScanTile;
  if (tiles <= 1) return 0;
  return AlignTemp(tiles * sizeof(T)) + ExclusiveScanTempBytes<T>(tiles);
}

template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream) {
  const std::size_t needed = ExclusiveScanTempBytes<T>(n);
  CheckArguments("optimized::ExclusiveScan", n, d_temp, temp_bytes, needed);
  if (n == 0) return;
  const std::size_t tiles = (n + kScanTile - 1) / kScanTile;
  if (tiles == 1) {
    BlellochScanTileKernel<T><<<1, kScanThreads, 0, stream>>>(d_in, d_out, n, nullptr);
    CUDA_CHECK_LAST_LAUNCH();
    return;
  }
  // Level k+1 scans the tile totals of level k in place, in the scratch that follows them.
  T* d_sums = static_cast<T*>(d_temp);
  const std::size_t sums_bytes = AlignTemp(tiles * sizeof(T));
  BlellochScanTileKernel<T>
      <<<static_cast<unsigned>(tiles), kScanThreads, 0, stream>>>(d_in, d_out, n, d_sums);
  CUDA_CHECK_LAST_LAUNCH();
  ExclusiveScan<T>(d_sums, d_sums, tiles, static_cast<unsigned char*>(d_temp) + sums_bytes,
                   needed - sums_bytes, stream);
  AddTileOffsetsKernel<T>
      <<<static_cast<unsigned>(tiles - 1), kScanThreads, 0, stream>>>(d_out, n, d_sums);
  CUDA_CHECK_LAST_LAUNCH();
}

/// @cond INSTANTIATIONS
template std::size_t ExclusiveScanTempBytes<std::uint32_t>(std::size_t);
template std::size_t ExclusiveScanTempBytes<std::int32_t>(std::size_t);
template void ExclusiveScan<std::uint32_t>(const std::uint32_t*, std::uint32_t*, std::size_t, void*,
                                           std::size_t, cudaStream_t);
template void ExclusiveScan<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t, void*,
                                          std::size_t, cudaStream_t);
/// @endcond

std::size_t CountingSortTempBytes(std::size_t /*n*/) {
  return SortScratchBytes(ExclusiveScanTempBytes<std::uint32_t>(kNumBins));
}

void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream) {
  CheckArguments("optimized::CountingSort", n, d_temp, temp_bytes, CountingSortTempBytes(n));
  if (n == 0) return;
  const SortScratch s = CarveSortScratch(d_temp, ExclusiveScanTempBytes<std::uint32_t>(kNumBins));
  Histogram(d_in, n, s.hist, nullptr, 0, stream);
  ExclusiveScan<std::uint32_t>(s.hist, s.offsets, kNumBins, s.scan_temp, s.scan_temp_bytes, stream);
  const Split split = SplitAt16(d_out, n);
  const unsigned grid = ResidentGrid<WriteRunsKernel>(
      kFillBlockSize, 0, std::size_t{kFillBlockSize} * 4, split.num_vec);
  WriteRunsKernel<<<grid, kFillBlockSize, 0, stream>>>(s.offsets, n, split.head, split.num_vec,
                                                       d_out);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch02::optimized
