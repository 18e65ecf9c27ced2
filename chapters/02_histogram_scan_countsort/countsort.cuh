/**
 * @file countsort.cuh
 * @brief Chapter 02 contract: a 256-bin byte histogram, an exclusive prefix sum (scan) and a
 *        counting sort of bytes, each a separate reusable function in `ch02::cpu`,
 *        `ch02::naive`, `ch02::optimized` and `ch02::library` with one signature per idea.
 *
 * Every device function takes its scratch memory from the caller (`*TempBytes(n)` says how
 * much, as CUB does) and only enqueues work on @p stream, so one process can time the variants
 * side by side and one test body can run against all of them. Chapter 03 reuses
 * `ch02::optimized::ExclusiveScan` through this header.
 *
 * The scratch `d_temp` must be 16-byte aligned (`staged::kScratchAlignment`; the look-back scan
 * keeps 64-bit status words there, updated atomically): `cudaMalloc`'s pointers are, and a
 * piece of a larger buffer must start at a multiple of 16 bytes. Every launcher, the library
 * baselines and the look-back contrasts included, refuses another with `staged::UsageError`
 * (`CheckArguments`) before anything is queued.
 *
 * The optimized scan comes in two stages: `ExclusiveScanBlelloch` (the Russian lab's work-efficient
 * tree: the data crosses memory twice) and `ExclusiveScan` (single pass with decoupled
 * look-back).
 *
 * @code
 * std::size_t bytes = ch02::optimized::CountingSortTempBytes(n);
 * staged::DeviceBuffer<unsigned char> d_temp(bytes);
 * ch02::optimized::CountingSort(d_in, d_out, n, d_temp.data(), bytes, stream);
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

/// Chapter 02: histogram, scan and counting sort of bytes.
namespace ch02 {

/// Number of histogram bins: one per byte value.
inline constexpr int kNumBins = 256;

/// Largest element count the device functions accept: counts and offsets are 32-bit.
inline constexpr std::uint64_t kMaxElements = 0xFFFFFFFFull;

/// Alignment of every piece of scratch memory carved out of a caller's buffer.
inline constexpr std::size_t kTempAlignment = 256;

/// Rounds @p bytes up to a multiple of `kTempAlignment`.
constexpr std::size_t AlignTemp(std::size_t bytes) {
  return (bytes + kTempAlignment - 1) / kTempAlignment * kTempAlignment;
}

/// The scratch of a counting sort, carved from the caller's buffer as
/// [256 counts | 256 run starts | scratch of the scan of the counts].
struct SortScratch {
  std::uint32_t* hist;          ///< 256 counts
  std::uint32_t* offsets;       ///< 256 run starts (exclusive scan of `hist`)
  void* scan_temp;              ///< scratch of that scan
  std::size_t scan_temp_bytes;  ///< size of `scan_temp`
};

/// Bytes of one 256-entry table of counts, rounded to `kTempAlignment`.
inline constexpr std::size_t kCountsBytes = AlignTemp(kNumBins * sizeof(std::uint32_t));

/// Bytes of a `SortScratch` whose scan needs @p scan_temp_bytes.
/// @param[in] scan_temp_bytes scratch of the 256-element scan
/// @return total scratch bytes of the sort
constexpr std::size_t SortScratchBytes(std::size_t scan_temp_bytes) {
  return 2 * kCountsBytes + scan_temp_bytes;
}

/// Splits @p d_temp (at least `SortScratchBytes(scan_temp_bytes)` bytes) into a `SortScratch`.
/// @param[in] d_temp device scratch
/// @param[in] scan_temp_bytes scratch of the 256-element scan
/// @return the pieces
inline SortScratch CarveSortScratch(void* d_temp, std::size_t scan_temp_bytes) {
  auto* base = static_cast<unsigned char*>(d_temp);
  return {reinterpret_cast<std::uint32_t*>(base),
          reinterpret_cast<std::uint32_t*>(base + kCountsBytes), base + 2 * kCountsBytes,
          scan_temp_bytes};
}

/// Shared-memory banks on every GPU this tutorial targets (sm_80, sm_90).
inline constexpr int kNumBanks = 32;
/// log2(`kNumBanks`).
inline constexpr int kLogNumBanks = 5;

/**
 * @brief Padding added to shared-memory index @p index so that the strided accesses of the
 *        Blelloch scan fall into different banks (GPU Gems 3, ch. 39, with the parentheses the
 *        printed macro lacks).
 *
 * One extra word every 32 words (and one more every 1024) shifts index `k * 32` from bank 0 to
 * bank `k`. The Russian lab writes `((idx) >> BANKS + (idx) >> (LOG_2_BANKS << 1))`; since `+` binds
 * tighter than `>>` that parses as `idx >> (BANKS + idx) >> 8`, which is 0 (or undefined, once
 * the shift reaches 32), so the Russian lab's "conflict-free" scan had no padding at all.
 * @param[in] index unpadded index into the scan's shared array (>= 0)
 * @return the number of padding words to add to @p index
 */
// snippet-begin: ch02-conflict-free-offset
__host__ __device__ constexpr int ConflictFreeOffset(int index) {
  return (index >> kLogNumBanks) + (index >> (2 * kLogNumBanks));
}
// snippet-end: ch02-conflict-free-offset

/// Reference implementations on the CPU (exact; used to verify every device variant).
namespace cpu {

/// Counts each byte value of @p in[0, n) into @p hist[0, 256) (overwritten).
void Histogram(const std::uint8_t* in, std::size_t n, std::uint32_t* hist);

/// out[i] = in[0] + ... + in[i-1], out[0] = 0 (wrapping arithmetic). @p out may equal @p in.
/// @tparam T uint32_t or int32_t
template <typename T>
void ExclusiveScan(const T* in, T* out, std::size_t n);

/// Counting sort: histogram, exclusive scan, then each value written as one run.
void CountingSort(const std::uint8_t* in, std::uint8_t* out, std::size_t n);

}  // namespace cpu

// The naive, optimized and library namespaces below declare the same launchers on purpose: one
// signature per variant, so one test body and one driver run them all.
/// The Russian lab's scheme, corrected: global atomics, a simple scan, per-element atomic scatter.
namespace naive {

/// Device scratch bytes `Histogram` needs for @p n bytes (none).
std::size_t HistogramTempBytes(std::size_t n);
/**
 * @brief 256-bin histogram of @p n bytes with one global `atomicAdd` per byte.
 * @param[in] d_in device bytes
 * @param[in] n number of bytes (0 <= n <= kMaxElements)
 * @param[out] d_hist 256 device counters (overwritten)
 * @param[in] d_temp scratch of `HistogramTempBytes(n)` bytes, 16-byte aligned (may be null
 *            when that is 0)
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream);

/// Device scratch bytes `ExclusiveScan` needs for @p n elements (one ping-pong buffer).
/// @tparam T uint32_t or int32_t
template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n);
/**
 * @brief Exclusive prefix sum by the Hillis-Steele doubling scan: one launch per step,
 *        ceil(log2 n) steps, O(n log n) additions.
 * @tparam T uint32_t or int32_t
 * @param[in] d_in device input
 * @param[out] d_out device output; must not alias @p d_in
 * @param[in] n number of elements (any n >= 0)
 * @param[in] d_temp scratch of `ExclusiveScanTempBytes<T>(n)` bytes, 16-byte aligned
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream);

/// Device scratch bytes `CountingSort` needs for @p n bytes.
std::size_t CountingSortTempBytes(std::size_t n);
/**
 * @brief Counting sort: naive histogram, naive scan of the 256 counts, then every byte claims
 *        its slot with a global `atomicAdd` on its bin's offset (the Russian lab's scatter).
 * @param[in] d_in device bytes
 * @param[out] d_out n device bytes, sorted ascending; must not alias @p d_in
 * @param[in] n number of bytes (0 <= n <= kMaxElements)
 * @param[in] d_temp scratch of `CountingSortTempBytes(n)` bytes, 16-byte aligned
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream);
/// As `CountingSort`, the count always 64 bits (row `library:cub-radix-sort-count64`).
void CountingSortCount64(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                         std::size_t temp_bytes, cudaStream_t stream);

}  // namespace naive

/// Privatized histogram, the Blelloch and the single-pass look-back scans, output written as
/// runs.
namespace optimized {

/// Blocks `Histogram` launches for @p n bytes on the current device: ceil(n / 8 KiB), at least
/// one and at most one per SM (the grid grows with n until every SM has a block).
/// @param[in] n number of bytes
/// @return the grid size
unsigned HistogramBlocks(std::size_t n);

/// Device scratch bytes `Histogram` needs for @p n bytes (none).
std::size_t HistogramTempBytes(std::size_t n);
/**
 * @brief 256-bin histogram with per-lane 32-bit counters in shared memory (one conflict-free
 *        shared atomic per byte), 16-byte loads and one global merge per block.
 *        Same parameters as `naive::Histogram`.
 * @param[in] d_in device bytes (any alignment)
 * @param[in] n number of bytes (0 <= n <= kMaxElements)
 * @param[out] d_hist 256 device counters (overwritten)
 * @param[in] d_temp scratch of `HistogramTempBytes(n)` bytes, 16-byte aligned (may be null
 *            when that is 0)
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream);

/// Device scratch bytes `ExclusiveScan` needs for @p n elements: a tile counter and one 8-byte
/// status word per tile of the smallest tile the GPU may get (`lookback::ChooseShape`: 4096
/// elements), 0 for n = 0.
/// @tparam T uint32_t or int32_t
/// @param[in] n number of elements to scan
template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n);
/**
 * @brief Exclusive prefix sum of n elements in one pass over memory: single-pass scan with
 *        decoupled look-back (Merrill and Garland, 2016). The chapter's fastest scan.
 *
 * Each block copies a tile of 8192 elements into shared memory, scans it there and learns the
 * sum of everything before it from the status words its predecessors publish in @p d_temp (see
 * scan_lookback.cuh and scan_lookback_kernel.cuh). Every element is read once and written once.
 * Arithmetic wraps modulo 2^32. The scratch is reset on @p stream by every call, so calls on
 * different streams with different scratch may run concurrently.
 * @tparam T uint32_t or int32_t (explicitly instantiated for both)
 * @param[in] d_in device input (4-byte aligned, any offset)
 * @param[out] d_out device output; may equal @p d_in (in place), must not partially overlap it
 * @param[in] n number of elements (any n >= 0)
 * @param[in] d_temp scratch of at least `ExclusiveScanTempBytes<T>(n)` bytes, 16-byte aligned
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream);
/**
 * @brief `ExclusiveScan` of the first `*d_count` elements of a buffer of @p max_n, the count
 *        read on the device when the scan runs: for a length only the device knows (chapter 03's
 *        deeper levels), so the scan covers what is there, not the buffer's capacity.
 *
 * The grid still has one block per tile of @p max_n elements; the blocks past the count's last
 * tile return as soon as they draw their tile. Elements at and past `*d_count` are neither read
 * nor written.
 * @tparam T uint32_t or int32_t
 * @param[in] d_in device input
 * @param[out] d_out device output; may equal @p d_in
 * @param[in] max_n the most elements `*d_count` may name (it is clamped to it)
 * @param[in] d_count device pointer to the number of elements, written before the scan runs
 * @param[in] d_temp scratch of at least `ExclusiveScanTempBytes<T>(max_n)` bytes
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
template <typename T>
void ExclusiveScanDeviceCount(const T* d_in, T* d_out, std::size_t max_n,
                              const std::uint32_t* d_count, void* d_temp, std::size_t temp_bytes,
                              cudaStream_t stream);

/// Device scratch bytes `ExclusiveScanBlelloch` needs for @p n elements (0 up to 1024).
/// @tparam T uint32_t or int32_t
/// @param[in] n number of elements to scan
template <typename T>
std::size_t ExclusiveScanBlellochTempBytes(std::size_t n);
/**
 * @brief Exclusive prefix sum by the Russian lab's method: multi-block Blelloch scan with the tile
 *        totals scanned recursively.
 *
 * Each block scans a tile of 1024 elements in shared memory (up-sweep, down-sweep, padded by
 * `ConflictFreeOffset`), the tile totals are scanned by the same function, and a last pass
 * adds each tile's offset. Arithmetic wraps modulo 2^32.
 * @tparam T uint32_t or int32_t (explicitly instantiated for both)
 * @param[in] d_in device input
 * @param[out] d_out device output; may equal @p d_in (in place), must not partially overlap it
 * @param[in] n number of elements (any n >= 0)
 * @param[in] d_temp scratch of at least `ExclusiveScanBlellochTempBytes<T>(n)` bytes, 16-byte
 *            aligned
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
template <typename T>
void ExclusiveScanBlelloch(const T* d_in, T* d_out, std::size_t n, void* d_temp,
                           std::size_t temp_bytes, cudaStream_t stream);

/// Device scratch bytes `CountingSort` needs for @p n bytes (the 256 counts).
std::size_t CountingSortTempBytes(std::size_t n);
/**
 * @brief Counting sort: privatized histogram, then one kernel whose blocks each scan the 256
 *        counts and build every output 16-byte word from the run starts, stored once (no
 *        atomics, deterministic).
 * @param[in] d_in device bytes (any alignment)
 * @param[out] d_out n device bytes, sorted ascending; must not alias @p d_in
 * @param[in] n number of bytes (0 <= n <= kMaxElements)
 * @param[in] d_temp scratch of `CountingSortTempBytes(n)` bytes, 16-byte aligned
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream);
/// As `CountingSort`, the count always 64 bits (row `library:cub-radix-sort-count64`).
void CountingSortCount64(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                         std::size_t temp_bytes, cudaStream_t stream);

}  // namespace optimized

/// The baselines a professional would use: CUB.
namespace library {

/// Device scratch bytes `cub::DeviceHistogram::HistogramEven` needs for @p n bytes.
std::size_t HistogramTempBytes(std::size_t n);
/// 256-bin histogram by `cub::DeviceHistogram::HistogramEven` (levels 0, 1, ..., 256).
/// Parameters as `naive::Histogram`.
/// @param[in] d_in device bytes
/// @param[in] n number of bytes
/// @param[out] d_hist 256 device counters (overwritten)
/// @param[in] d_temp scratch of `HistogramTempBytes(n)` bytes, 16-byte aligned
/// @param[in] temp_bytes size of @p d_temp
/// @param[in] stream stream the work is queued on
void Histogram(const std::uint8_t* d_in, std::size_t n, std::uint32_t* d_hist, void* d_temp,
               std::size_t temp_bytes, cudaStream_t stream);

/// Device scratch bytes `cub::DeviceScan::ExclusiveSum` needs for @p n elements, with either
/// count width.
/// @tparam T uint32_t or int32_t
/// @param[in] n number of elements
template <typename T>
std::size_t ExclusiveScanTempBytes(std::size_t n);
/// Exclusive prefix sum by `cub::DeviceScan::ExclusiveSum`, the count as a 32-bit `int` up to
/// INT_MAX (row `library:cub-scan`).
/// @tparam T uint32_t or int32_t
/// @param[in] d_in device input
/// @param[out] d_out device output
/// @param[in] n number of elements
/// @param[in] d_temp scratch of `ExclusiveScanTempBytes<T>(n)` bytes, 16-byte aligned
/// @param[in] temp_bytes size of @p d_temp
/// @param[in] stream stream the work is queued on
template <typename T>
void ExclusiveScan(const T* d_in, T* d_out, std::size_t n, void* d_temp, std::size_t temp_bytes,
                   cudaStream_t stream);
/// As `ExclusiveScan`, the count always 64 bits (row `library:cub-scan-count64`): CUB tunes
/// each offset type on its own, and which is faster depends on the size and the GPU.
/// @tparam T uint32_t or int32_t
template <typename T>
void ExclusiveScanCount64(const T* d_in, T* d_out, std::size_t n, void* d_temp,
                          std::size_t temp_bytes, cudaStream_t stream);

/// Device scratch bytes `cub::DeviceRadixSort::SortKeys` needs for @p n bytes, with either count
/// width.
std::size_t CountingSortTempBytes(std::size_t n);
/// Sorts the bytes with `cub::DeviceRadixSort::SortKeys` over bits [0, 8): the library's way.
/// The item count is passed as a 32-bit `int` up to INT_MAX (CUB then uses 32-bit offsets;
/// row `library:cub-radix-sort`).
/// @param[in] d_in device bytes
/// @param[out] d_out n device bytes, sorted ascending
/// @param[in] n number of bytes
/// @param[in] d_temp scratch of `CountingSortTempBytes(n)` bytes, 16-byte aligned
/// @param[in] temp_bytes size of @p d_temp
/// @param[in] stream stream the work is queued on
void CountingSort(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                  std::size_t temp_bytes, cudaStream_t stream);
/// As `CountingSort`, the count always 64 bits (row `library:cub-radix-sort-count64`).
void CountingSortCount64(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n, void* d_temp,
                         std::size_t temp_bytes, cudaStream_t stream);

/// Device scratch bytes `CountingSortPipeline` needs for @p n bytes.
std::size_t CountingSortPipelineTempBytes(std::size_t n);
/**
 * @brief Counting sort from library pieces, step for step like ours: CUB
 *        `DeviceHistogram::HistogramEven`, `DeviceScan::ExclusiveSum` of the 256 counts, then
 *        `DeviceCopy::Batched` fills the 256 runs (constant-value input iterators, output
 *        pointers at the scanned offsets). Everything stays on the device: no host sync.
 * @param[in] d_in device bytes
 * @param[out] d_out n device bytes, sorted ascending
 * @param[in] n number of bytes
 * @param[in] d_temp scratch of `CountingSortPipelineTempBytes(n)` bytes, 16-byte aligned
 * @param[in] temp_bytes size of @p d_temp
 * @param[in] stream stream the work is queued on
 */
void CountingSortPipeline(const std::uint8_t* d_in, std::uint8_t* d_out, std::size_t n,
                          void* d_temp, std::size_t temp_bytes, cudaStream_t stream);

}  // namespace library

/// Throws `staged::UsageError` naming @p what unless @p d_temp is 16-byte aligned, and
/// `std::invalid_argument` unless @p temp_bytes >= @p needed (and @p d_temp is non-null when
/// @p needed > 0) and @p n <= kMaxElements.
/// @param[in] what the function checking its arguments
/// @param[in] n element count passed to it
/// @param[in] d_temp scratch pointer passed to it
/// @param[in] temp_bytes scratch size passed to it
/// @param[in] needed scratch size it requires
void CheckArguments(const char* what, std::size_t n, const void* d_temp, std::size_t temp_bytes,
                    std::size_t needed);

}  // namespace ch02
