/**
 * @file optimized.cu
 * @brief Chapter 02, optimized variant: privatized histogram, work-efficient Blelloch scan,
 *        output written as runs.
 *
 * Changes relative to naive.cu:
 * 1. Histogram privatized: each warp counts into its own 256-counter table in shared memory,
 *    and each block adds its tables to the global histogram once (256 global atomics per
 *    block instead of one per byte).
 * 2. Histogram reads 16-byte words (`uint4`), four loads in flight per thread, over a grid
 *    sized to the GPU (grid-stride loop); unaligned head and tail bytes are counted one by one.
 * 3. Equal neighbours are merged in a register before they reach shared memory (run-length
 *    counting), so all-equal input costs one atomic per run, not one per byte: the throughput
 *    that a single hot counter would otherwise collapse is kept.
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

/// Threads per histogram block: 16 warps, so 16 private tables (16 KiB of shared memory).
inline constexpr int kHistBlockSize = 512;
/// Warps (and private sub-histograms) per histogram block.
inline constexpr int kHistWarps = kHistBlockSize / 32;
/// Independent 16-byte loads each histogram thread keeps in flight.
inline constexpr int kHistUnroll = 4;
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

/// Adds one byte to a thread's run; when the value changes, the finished run is added to the
/// warp's table with one shared atomic.
/// @param[in,out] table the warp's 256 shared counters
/// @param[in,out] current value of the open run
/// @param[in,out] run length of the open run
/// @param[in] value the next byte
__device__ __forceinline__ void CountByte(std::uint32_t* table, std::uint32_t& current,
                                          std::uint32_t& run, std::uint32_t value) {
  if (value != current) {
    if (run > 0) atomicAdd(&table[current], run);
    current = value;
    run = 0;
  }
  ++run;
}

/// Feeds the four bytes of @p word (lowest address first) to `CountByte`.
/// @param[in,out] table the warp's 256 shared counters
/// @param[in,out] current value of the open run
/// @param[in,out] run length of the open run
/// @param[in] word four input bytes
__device__ __forceinline__ void CountWord(std::uint32_t* table, std::uint32_t& current,
                                          std::uint32_t& run, std::uint32_t word) {
#pragma unroll
  for (int k = 0; k < 4; ++k) CountByte(table, current, run, (word >> (8 * k)) & 0xFFu);
}

/// Feeds the sixteen bytes of @p v to `CountWord`.
/// @param[in,out] table the warp's 256 shared counters
/// @param[in,out] current value of the open run
/// @param[in,out] run length of the open run
/// @param[in] v sixteen input bytes
__device__ __forceinline__ void CountVector(std::uint32_t* table, std::uint32_t& current,
                                            std::uint32_t& run, const uint4& v) {
  CountWord(table, current, run, v.x);
  CountWord(table, current, run, v.y);
  CountWord(table, current, run, v.z);
  CountWord(table, current, run, v.w);
}

/**
 * @brief Privatized histogram: per-warp shared sub-histograms, 16-byte loads, one global
 *        merge per block.
 *
 * Thread t of the grid reads 16-byte words t, t + T, t + 2T, ... (T = all threads), four at a
 * time, and counts their bytes into its warp's table through `CountByte`. Bytes before the
 * first 16-byte boundary (@p head of them) and after the last one (fewer than 16) are counted
 * by threads 0..15 one at a time. Finally the block's 16 tables are summed per bin and added
 * to @p hist: 256 global atomics per block. Reads n bytes once; writes 1 KiB per block.
 * @par Launch configuration
 * 1-D grid of `kHistBlockSize` threads, a few blocks per SM (all resident); 16 KiB static
 * shared memory per block.
 * @pre @p hist is zeroed; in + head is 16-byte aligned; head < 16; n - head - 16 num_vec < 16.
 * @param[in] in device bytes
 * @param[in] n number of bytes
 * @param[in] head bytes before the first aligned 16-byte word
 * @param[in] num_vec aligned 16-byte words after the head
 * @param[in,out] hist 256 global counters
 */
__global__ void __launch_bounds__(kHistBlockSize)
    PrivatizedHistogramKernel(const std::uint8_t* __restrict__ in, std::size_t n, std::size_t head,
                              std::size_t num_vec, std::uint32_t* __restrict__ hist) {
  __shared__ std::uint32_t tables[kHistWarps][kNumBins];
  for (int i = threadIdx.x; i < kHistWarps * kNumBins; i += kHistBlockSize) {
    tables[i / kNumBins][i % kNumBins] = 0;
  }
  // Every table must be zero before any warp counts into it.
  __syncthreads();

  // One table per warp: lanes of different warps never touch the same counter, so the only
  // contention left is inside a warp, and run merging removes most of that.
  std::uint32_t* table = tables[threadIdx.x / 32];
  std::uint32_t current = 0;
  std::uint32_t run = 0;
  const uint4* vec = reinterpret_cast<const uint4*>(in + head);
  const std::size_t tid = static_cast<std::size_t>(blockIdx.x) * kHistBlockSize + threadIdx.x;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * kHistBlockSize;

  std::size_t i = tid;
  // Four independent loads before any use: enough bytes in flight per SM to cover DRAM latency.
  for (; i + (kHistUnroll - 1) * threads < num_vec; i += kHistUnroll * threads) {
    uint4 v[kHistUnroll];
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) v[u] = __ldcs(vec + i + u * threads);
#pragma unroll
    for (int u = 0; u < kHistUnroll; ++u) CountVector(table, current, run, v[u]);
  }
  for (; i < num_vec; i += threads) CountVector(table, current, run, __ldcs(vec + i));

  // Unaligned edges: at most 15 bytes each, one per thread.
  const std::size_t tail_start = head + num_vec * 16;
  if (tid < head) CountByte(table, current, run, in[tid]);
  if (tid < n - tail_start) CountByte(table, current, run, in[tail_start + tid]);
  if (run > 0) atomicAdd(&table[current], run);
  // All warps must have finished counting before the tables are summed.
  __syncthreads();

  for (int b = threadIdx.x; b < kNumBins; b += kHistBlockSize) {
    std::uint32_t sum = 0;
    // Thread b reads column b of every table: consecutive threads, consecutive banks.
#pragma unroll
    for (int w = 0; w < kHistWarps; ++w) sum += tables[w][b];
    if (sum > 0) atomicAdd(&hist[b], sum);
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

// Blocks for a grid-stride kernel: as many as can be resident at once, but no more than the
// work needs (at least one). The occupancy query costs microseconds, as long as the kernel
// itself at small n, so its result is cached per kernel and device.
template <typename Kernel>
unsigned ResidentGrid(Kernel kernel, int block_size, std::size_t items_per_block,
                      std::size_t items) {
  static std::atomic<int> cached[kCachedDevices] = {};
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int resident = device < kCachedDevices ? cached[device].load() : 0;
  if (resident == 0) {
    int sms = 0;
    int per_sm = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_size, 0));
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
  const unsigned grid = ResidentGrid(PrivatizedHistogramKernel, kHistBlockSize,
                                     std::size_t{kHistBlockSize} * kHistUnroll, split.num_vec);
  PrivatizedHistogramKernel<<<grid, kHistBlockSize, 0, stream>>>(d_in, n, split.head, split.num_vec,
                                                                 d_hist);
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
  const unsigned grid =
      ResidentGrid(WriteRunsKernel, kFillBlockSize, std::size_t{kFillBlockSize} * 4, split.num_vec);
  WriteRunsKernel<<<grid, kFillBlockSize, 0, stream>>>(s.offsets, n, split.head, split.num_vec,
                                                       d_out);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch02::optimized
