/**
 * @file scan_blelloch.cu
 * @brief Chapter 02, the Russian lab's scan stage: the work-efficient (Blelloch) exclusive scan of
 *        GPU Gems 3 ch. 39, bank-conflict-free with the corrected padding, over any n.
 *
 * Changes relative to the naive Hillis-Steele scan (naive.cu):
 * 1. Each block scans a tile of 1024 elements in shared memory with the up-sweep/down-sweep
 *    tree: O(n) additions instead of O(n log n).
 * 2. Shared-memory indices padded by `ConflictFreeOffset` (the Russian lab's macro, parenthesised
 *    correctly), so no level of the tree has a bank conflict.
 * 3. Tile totals scanned recursively by the same function, then added to their tiles: the data
 *    crosses memory twice (scan the tiles, add their offsets: 2 reads and 2 writes of each
 *    element, with a small scan of the tile totals between) instead of 2 log2 n times. The
 *    single-pass scan (scan_lookback.cu) removes the second crossing.
 */
#include <cuda_runtime.h>

#include <cstdint>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/cuda_check.hpp"

namespace ch02::optimized {

/// Threads per Blelloch scan block; each thread owns two elements of the tile.
constexpr int kScanThreads = 512;
/// Elements scanned per block.
constexpr int kScanTile = 2 * kScanThreads;
/// Shared words of one scan tile including padding: highest padded index + 1.
constexpr int kScanShared = kScanTile + ConflictFreeOffset(kScanTile - 1);

/// Wrapping addition in 32-bit unsigned arithmetic (signed overflow would be undefined).
/// @tparam T uint32_t or int32_t
/// @param[in] a first term
/// @param[in] b second term
/// @return a + b modulo 2^32, as T
template <typename T>
__device__ __forceinline__ T WrapAdd(T a, T b) {
  return static_cast<T>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
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
  // snippet-begin: ch02-blelloch-load
  const int ai = tid;
  const int bi = tid + kScanThreads;
  const int pa = ai + ConflictFreeOffset(ai);
  const int pb = bi + ConflictFreeOffset(bi);
  // Elements past n are zeros: they change no sum and every shared slot is initialised.
  s[pa] = base + ai < n ? in[base + ai] : T{0};
  s[pb] = base + bi < n ? in[base + bi] : T{0};
  // snippet-end: ch02-blelloch-load

  // snippet-begin: ch02-blelloch-upsweep
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
  // snippet-end: ch02-blelloch-upsweep
  // snippet-begin: ch02-blelloch-downsweep
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
  // snippet-end: ch02-blelloch-downsweep
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

template <typename T>
std::size_t ExclusiveScanBlellochTempBytes(std::size_t n) {
  const std::size_t tiles = (n + kScanTile - 1) / kScanTile;
  if (tiles <= 1) return 0;
  return AlignTemp(tiles * sizeof(T)) + ExclusiveScanBlellochTempBytes<T>(tiles);
}

template <typename T>
void ExclusiveScanBlelloch(const T* d_in, T* d_out, std::size_t n, void* d_temp,
                           std::size_t temp_bytes, cudaStream_t stream) {
  const std::size_t needed = ExclusiveScanBlellochTempBytes<T>(n);
  CheckArguments("optimized::ExclusiveScanBlelloch", n, d_temp, temp_bytes, needed);
  if (n == 0) return;
  const std::size_t tiles = (n + kScanTile - 1) / kScanTile;
  if (tiles == 1) {
    BlellochScanTileKernel<T><<<1, kScanThreads, 0, stream>>>(d_in, d_out, n, nullptr);
    CUDA_CHECK_LAST_LAUNCH();
    return;
  }
  // snippet-begin: ch02-blelloch-levels
  // Level k+1 scans the tile totals of level k in place, in the scratch that follows them.
  T* d_sums = static_cast<T*>(d_temp);
  const std::size_t sums_bytes = AlignTemp(tiles * sizeof(T));
  BlellochScanTileKernel<T>
      <<<static_cast<unsigned>(tiles), kScanThreads, 0, stream>>>(d_in, d_out, n, d_sums);
  CUDA_CHECK_LAST_LAUNCH();
  ExclusiveScanBlelloch<T>(d_sums, d_sums, tiles, static_cast<unsigned char*>(d_temp) + sums_bytes,
                           needed - sums_bytes, stream);
  AddTileOffsetsKernel<T>
      <<<static_cast<unsigned>(tiles - 1), kScanThreads, 0, stream>>>(d_out, n, d_sums);
  CUDA_CHECK_LAST_LAUNCH();
  // snippet-end: ch02-blelloch-levels
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
template std::size_t ExclusiveScanBlellochTempBytes<std::uint32_t>(std::size_t);
template std::size_t ExclusiveScanBlellochTempBytes<std::int32_t>(std::size_t);
template void ExclusiveScanBlelloch<std::uint32_t>(const std::uint32_t*, std::uint32_t*,
                                                   std::size_t, void*, std::size_t, cudaStream_t);
template void ExclusiveScanBlelloch<std::int32_t>(const std::int32_t*, std::int32_t*, std::size_t,
                                                  void*, std::size_t, cudaStream_t);
/// @endcond

}  // namespace ch02::optimized
