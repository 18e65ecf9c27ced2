/**
 * @file mppsort.cuh
 * @brief Chapter 03 contract: mppSort, a bucket sort of 32-bit keys in five kernels.
 *
 * The five steps (seed 001): (1) per-block bucket histograms over [min, max] plus the global
 * histogram, (2) scan of the global histogram, (3) column scan of the per-block histogram
 * matrix, (4) scatter of each key into its bucket's slot, (5) a bitonic sort of each bucket,
 * one block per bucket. Every variant sorts `d_in[0, n)` into `d_out[0, n)`; any n in
 * [0, kMaxKeys].
 *
 * @code
 * ch03::optimized::Workspace ws(n);
 * ch03::optimized::Sort(d_in, d_out, n, ws, stream);
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/device_buffer.hpp"
#include "common/stream.hpp"

namespace ch03 {

/// Largest n any variant accepts: bucket offsets are 32-bit counts.
inline constexpr std::uint64_t kMaxKeys = 0xFFFFFFFFull;

/// Bucket limit i (0 <= i <= h) of the naive table: `min + floor(i * R / h)` with
/// R = max - min + 1, computed in 64 bits so [0, 0xFFFFFFFF] does not overflow. Limit h is
/// max + 1; a key belongs to the last bucket whose limit is <= key.
/// @param[in] min smallest key
/// @param[in] max largest key
/// @param[in] h number of buckets, >= 1
/// @param[in] i limit index in [0, h]
__host__ __device__ inline std::uint64_t BucketLimit(std::uint32_t min, std::uint32_t max,
                                                     std::uint32_t h, std::uint32_t i) {
  const std::uint64_t range = static_cast<std::uint64_t>(max) - min + 1;
  return min + (static_cast<std::uint64_t>(i) * range) / h;
}

/// Fixed-point multiplier of the arithmetic bucket index: floor(h * 2^32 / R), R = max-min+1.
/// @param[in] min smallest key
/// @param[in] max largest key (>= min)
/// @param[in] h number of buckets, in [1, 2^31)
__host__ __device__ inline std::uint64_t BucketScale(std::uint32_t min, std::uint32_t max,
                                                     std::uint32_t h) {
  return (static_cast<std::uint64_t>(h) << 32) / (static_cast<std::uint64_t>(max) - min + 1);
}

/// Arithmetic bucket of @p key: ((key - min) * scale) >> 32, which is < h and non-decreasing in
/// key. (key - min) < R and scale <= h * 2^32 / R, so the product stays below h * 2^32 < 2^64.
/// @param[in] key a key in [min, max]
/// @param[in] min smallest key
/// @param[in] scale `BucketScale(min, max, h)`
__host__ __device__ inline std::uint32_t ArithmeticBucket(std::uint32_t key, std::uint32_t min,
                                                          std::uint64_t scale) {
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(key - min) * scale) >> 32);
}

/// CPU references of every step (tests and verification).
namespace cpu {
/// Sorts a copy of @p keys with std::sort (the timed CPU baseline).
/// @param[in] keys input keys
std::vector<std::uint32_t> Sort(const std::vector<std::uint32_t>& keys);
/// Sorts a copy of @p keys by an LSD radix sort (four 8-bit digits, a pass skipped when every
/// key has the same digit): O(n), the verification reference when the std::sort row is skipped.
/// @param[in] keys input keys
std::vector<std::uint32_t> RadixSort(const std::vector<std::uint32_t>& keys);
/// The naive bucket of @p key by binary search over the h + 1 limits of `BucketLimit`.
/// @param[in] key key in [min, max]
/// @param[in] min smallest key
/// @param[in] max largest key
/// @param[in] h number of buckets
std::uint32_t TableBucket(std::uint32_t key, std::uint32_t min, std::uint32_t max, std::uint32_t h);
/// Row-major per-block histograms (rows x h): row r counts the keys of
/// [r * chunk, (r + 1) * chunk) per `TableBucket`. The global histogram is its column sums.
/// @param[in] keys input keys
/// @param[in] h number of buckets
/// @param[in] rows number of blocks (rows * chunk >= keys.size())
/// @param[in] chunk keys per block
std::vector<std::uint32_t> BlockHistograms(const std::vector<std::uint32_t>& keys, std::uint32_t h,
                                           std::uint32_t rows, std::uint64_t chunk);
/// Exclusive prefix sum.
/// @param[in] in values
std::vector<std::uint32_t> ExclusiveScan(const std::vector<std::uint32_t>& in);
/// Column-wise exclusive scan of a row-major rows x cols matrix.
/// @param[in] m matrix
/// @param[in] rows rows
/// @param[in] cols columns
std::vector<std::uint32_t> VerticalScan(const std::vector<std::uint32_t>& m, std::uint32_t rows,
                                        std::uint32_t cols);
}  // namespace cpu

/// The seed's five kernels, with the bucket-limit table, h buckets (default 1024).
namespace naive {
/// Default bucket count (the seed's h).
inline constexpr std::uint32_t kDefaultBuckets = 1024;
/// Largest h: GlobalHistoScan scans h counters in one block of 1024 threads (2 per thread).
inline constexpr std::uint32_t kMaxBuckets = 2048;
/// Most rows of the histogram matrix: VerticalScanHH scans one column per block.
inline constexpr std::uint32_t kMaxRows = 1024;
/// Keys a bucket may hold to be sorted in shared memory; larger buckets use global memory.
inline constexpr std::uint32_t kTile = 8192;
/// Threads of every naive block.
inline constexpr int kThreads = 1024;

/// Device scratch of one naive sort of up to `capacity` keys with `buckets` buckets.
struct Workspace {
  /// @param[in] capacity largest n this workspace serves
  /// @param[in] buckets h, in [1, kMaxBuckets]
  Workspace(std::size_t capacity, std::uint32_t buckets);
  std::size_t capacity;                        ///< largest n
  std::uint32_t buckets;                       ///< h
  staged::DeviceBuffer<std::uint32_t> part;    ///< keys after Partition
  staged::DeviceBuffer<std::uint32_t> minmax;  ///< {min, max}
  staged::DeviceBuffer<std::uint32_t> hh;      ///< per-block histograms, rows x h
  staged::DeviceBuffer<std::uint32_t> psv;     ///< column-scanned hh
  staged::DeviceBuffer<std::uint32_t> hg;      ///< global histogram
  staged::DeviceBuffer<std::uint32_t> shg;     ///< scanned global histogram (bucket starts)
};
/// Rows (blocks) of the histogram matrix for @p n keys: ceil(n / kThreads), at most kMaxRows.
/// @param[in] n keys
std::uint32_t Rows(std::size_t n);
/// Keys per block: ceil(n / Rows(n)).
/// @param[in] n keys
std::uint64_t Chunk(std::size_t n);
/// min and max of @p d_in by per-thread reductions and global atomics into @p d_minmax[0..1].
/// @param[in] d_in keys
/// @param[in] n keys, >= 1
/// @param[out] d_minmax {min, max}
/// @param[in] stream stream
void MinMax(const std::uint32_t* d_in, std::size_t n, std::uint32_t* d_minmax, cudaStream_t stream);
/// Step 1: per-block histograms (row r = keys of block r) and the global histogram.
/// @param[in] d_in keys
/// @param[in] n keys
/// @param[in] d_minmax {min, max}
/// @param[in] h buckets
/// @param[in] rows blocks
/// @param[in] chunk keys per block
/// @param[out] d_hh rows x h matrix
/// @param[out] d_hg h counters
/// @param[in] stream stream
void BlocksHistoAndScan(const std::uint32_t* d_in, std::size_t n, const std::uint32_t* d_minmax,
                        std::uint32_t h, std::uint32_t rows, std::uint64_t chunk,
                        std::uint32_t* d_hh, std::uint32_t* d_hg, cudaStream_t stream);
/// Step 2: exclusive Blelloch scan of the global histogram in one block.
/// @param[in] d_hg h counters
/// @param[in] h buckets, <= kMaxBuckets
/// @param[out] d_shg bucket starts
/// @param[in] stream stream
void GlobalHistoScan(const std::uint32_t* d_hg, std::uint32_t h, std::uint32_t* d_shg,
                     cudaStream_t stream);
/// Step 3: exclusive Blelloch scan of every column of the rows x h matrix, one block per column.
/// @param[in] d_hh matrix
/// @param[in] rows rows, <= kMaxRows
/// @param[in] h columns
/// @param[out] d_psv column-scanned matrix
/// @param[in] stream stream
void VerticalScanHH(const std::uint32_t* d_hh, std::uint32_t rows, std::uint32_t h,
                    std::uint32_t* d_psv, cudaStream_t stream);
/// Step 4: scatter of every key to shg[b] + psv[row][b] + its rank in the block.
/// @param[in] d_in keys
/// @param[in] n keys
/// @param[in] d_minmax {min, max}
/// @param[in] h buckets
/// @param[in] rows blocks
/// @param[in] chunk keys per block
/// @param[in] d_shg bucket starts
/// @param[in] d_psv column-scanned matrix
/// @param[out] d_out partitioned keys
/// @param[in] stream stream
void Partition(const std::uint32_t* d_in, std::size_t n, const std::uint32_t* d_minmax,
               std::uint32_t h, std::uint32_t rows, std::uint64_t chunk, const std::uint32_t* d_shg,
               const std::uint32_t* d_psv, std::uint32_t* d_out, cudaStream_t stream);
/// Step 5: bitonic sort of every bucket of at most kTile keys in shared memory (one block per
/// bucket); bucket b is [shg[b], shg[b+1]) (the last ends at n). Larger buckets are left alone.
/// @param[in] d_in partitioned keys
/// @param[out] d_out sorted keys (may equal @p d_in)
/// @param[in] d_shg bucket starts
/// @param[in] h buckets
/// @param[in] n keys
/// @param[in] stream stream
void SegmentedBitonicSort(const std::uint32_t* d_in, std::uint32_t* d_out,
                          const std::uint32_t* d_shg, std::uint32_t h, std::size_t n,
                          cudaStream_t stream);
/// Sorts @p d_out[begin, begin + len) in place by a bitonic network in global memory, one
/// launch per step (the path for buckets larger than kTile).
/// @param[in,out] d_out keys
/// @param[in] begin first key
/// @param[in] len keys
/// @param[in] stream stream
void GlobalBitonicSort(std::uint32_t* d_out, std::size_t begin, std::size_t len,
                       cudaStream_t stream);
/// The five steps in sequence. Synchronises @p stream once (to find oversized buckets).
/// @param[in] d_in keys
/// @param[out] d_out sorted keys
/// @param[in] n keys, <= ws.capacity
/// @param[in] ws scratch
/// @param[in] stream stream
void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream);
}  // namespace naive

/// Arithmetic buckets, chapter 01's min/max, chapter 02's scan, shared-memory ranking before a
/// coalesced scatter, register/warp/shared bitonic sort, and recursive re-bucketing.
namespace optimized {
/// Keys the larger bitonic tile holds: a block of 512 threads x kKeysPerThread.
inline constexpr std::uint32_t kTile = 8192;
/// Keys the smaller bitonic tile holds: a block of 256 threads x kKeysPerThread.
inline constexpr std::uint32_t kSmallTile = 4096;
/// Keys each bitonic thread keeps in registers (a block has tile / kKeysPerThread threads).
inline constexpr int kKeysPerThread = 16;
/// Keys a histogram/partition block handles (its rank tile in shared memory).
inline constexpr std::uint32_t kChunk = 16384;
/// Threads of a histogram/partition/min-max block.
inline constexpr int kChunkThreads = 1024;
/// Most buckets per segment (counters in shared memory, histogram matrix size).
inline constexpr std::uint32_t kMaxBuckets = 2048;
/// Longest oversized bucket whose min and max the bitonic block reduces itself; longer ones
/// (a skewed cluster) are reduced by SegmentMinMax with one block per chunk at the next level.
inline constexpr std::uint64_t kBlockMinMaxKeys = 32 * std::uint64_t{kTile};
/// Mean keys per bucket with the kTile tile: far enough below it that uniform keys (Poisson
/// spread, sqrt(7000) ~ 84) never overflow a tile.
inline constexpr std::uint32_t kTargetBucketKeys = 7000;
/// Mean keys per bucket with the kSmallTile tile (6.5 standard deviations below it).
inline constexpr std::uint32_t kSmallTargetBucketKeys = 3700;

/// Mean keys per bucket the bucket count aims at with @p tile.
/// @param[in] tile kTile or kSmallTile
constexpr std::uint32_t TargetBucketKeys(std::uint32_t tile) {
  return tile == kSmallTile ? kSmallTargetBucketKeys : kTargetBucketKeys;
}

/// Buckets for a segment of @p len keys: ceil(len / TargetBucketKeys(tile)) in [1, kMaxBuckets].
/// @param[in] len keys in the segment
/// @param[in] tile the level's tile
std::uint32_t BucketsFor(std::uint64_t len, std::uint32_t tile);

/// One range of keys bucketed by one level, and where its data lives in the level's arrays.
struct Segment {
  std::uint64_t begin = 0;        ///< first key (absolute index)
  std::uint64_t len = 0;          ///< keys
  std::uint64_t matrix_base = 0;  ///< first entry of its buckets x chunks matrix
  std::uint32_t buckets = 0;      ///< h of this segment
  std::uint32_t chunks = 0;       ///< ceil(len / kChunk)
  std::uint32_t chunk_base = 0;   ///< first chunk (block) of the level that is this segment's
  std::uint32_t bucket_base = 0;  ///< first bucket (bitonic block) of the level
};
/// A range of keys: a bucket too large for one tile, bucketed again by the next level.
struct Span {
  std::uint64_t begin;             ///< first key
  std::uint64_t len;               ///< keys
  std::uint32_t min = 0xFFFFFFFF;  ///< smallest key, from the bitonic kernel (see kBlockMinMaxKeys)
  std::uint32_t max = 0;           ///< largest key, from the bitonic kernel (see kBlockMinMaxKeys)
};
/// Totals of one level's plan.
struct LevelPlan {
  std::vector<Segment> segments;  ///< in order of `begin`
  std::uint32_t chunks = 0;       ///< blocks of the histogram and partition kernels
  std::uint32_t buckets = 0;      ///< blocks of the bitonic kernel
  std::uint64_t matrix = 0;       ///< histogram matrix entries
  std::uint32_t tile = kTile;     ///< keys one bitonic block sorts at this level
};
/// Plans a level over @p spans (each bucket too long for the previous level's tile, or the
/// whole input at level 0). The level sorts with kSmallTile when every span fits kMaxBuckets
/// buckets of kSmallTargetBucketKeys: a bitonic network over 4096 keys does 12 * 13 / 2 = 78
/// steps against 91 over 8192, and 3700-key buckets pad less than 7000-key ones. Otherwise
/// (one level over more than 7.6M keys) it keeps kTile, whose larger buckets let one level
/// sort up to 14M uniform keys.
/// @param[in] spans ranges to bucket
LevelPlan PlanLevel(const std::vector<Span>& spans);

/// The steps timed separately in the per-kernel breakdown.
enum class Stage : int {
  kMinMax,     ///< min and max (chapter 01 at level 0; below, SegmentMinMax for buckets
               ///< longer than kBlockMinMaxKeys, the bitonic kernel for the others)
  kHistogram,  ///< per-chunk bucket histograms
  kScan,       ///< scan of the bucket-major matrix (chapter 02)
  kPartition,  ///< ranking in shared memory and coalesced scatter
  kBitonic,    ///< on-chip bitonic sort of each bucket
};
/// Number of stages.
inline constexpr int kStageCount = 5;
/// Names of the stages as the report prints them (`optimized:<name>`).
inline constexpr std::array<const char*, kStageCount> kStageNames = {"minmax", "histogram", "scan",
                                                                     "partition", "bitonic"};

/// Records CUDA events around each stage and sums the time per stage over one or more sorts.
class StageTimer {
 public:
  /// Records the start of @p stage on @p stream.
  /// @param[in] stage the stage
  /// @param[in] stream stream
  void Begin(Stage stage, cudaStream_t stream);
  /// Records the end of the stage begun last.
  /// @param[in] stream stream
  void End(cudaStream_t stream);
  /// Waits for the events and returns milliseconds per stage since the last `Reset`.
  std::array<double, kStageCount> Collect();
  /// Forgets the recorded intervals (events are kept for reuse).
  void Reset() { used_ = 0; }

 private:
  struct Interval {
    Stage stage;
    staged::Event start;
    staged::Event stop;
  };
  std::vector<Interval> intervals_;
  std::size_t used_ = 0;
};

/// Device and pinned scratch of the optimized sort; grows when a level needs more.
class Workspace {
 public:
  /// @param[in] capacity largest n this workspace serves without growing
  explicit Workspace(std::size_t capacity);
  /// Grows the buffers that depend on n and on the level plan.
  /// @param[in] n keys
  /// @param[in] plan the next level
  void Reserve(std::size_t n, const LevelPlan& plan);
  staged::DeviceBuffer<std::uint32_t> part;    ///< keys after a partition (ping-pong with out)
  staged::DeviceBuffer<std::uint32_t> matrix;  ///< histogram matrix, scanned in place
  staged::DeviceBuffer<unsigned char> temp;    ///< chapter 01 and chapter 02 scratch
  staged::DeviceBuffer<Segment> segments;      ///< the level's segments
  staged::DeviceBuffer<ch01::MinMaxPair<std::uint32_t>> minmax;  ///< per segment
  staged::DeviceBuffer<Span> oversized;       ///< buckets left for the next level
  staged::DeviceBuffer<std::uint32_t> count;  ///< number of `oversized` entries
  staged::PinnedBuffer<Segment> h_segments;   ///< staging of `segments`
  staged::PinnedBuffer<ch01::MinMaxPair<std::uint32_t>> h_minmax;  ///< staging of `minmax`
  staged::PinnedBuffer<Span> h_oversized;                          ///< host copy of `oversized`
  staged::PinnedBuffer<std::uint32_t> h_count;                     ///< host copy of `count`
  int levels = 0;                                                  ///< levels the last sort needed
};

/// min/max of every segment longer than kBlockMinMaxKeys (atomics per block); their entries of
/// @p d_minmax must hold {0xFFFFFFFF, 0}; shorter segments are skipped.
/// @param[in] d_keys keys
/// @param[in] d_segments segments
/// @param[in] num_segments segments
/// @param[in] chunks blocks (sum of chunks)
/// @param[in,out] d_minmax one pair per segment
/// @param[in] stream stream
void SegmentMinMax(const std::uint32_t* d_keys, const Segment* d_segments,
                   std::uint32_t num_segments, std::uint32_t chunks,
                   ch01::MinMaxPair<std::uint32_t>* d_minmax, cudaStream_t stream);
/// Bucket-major histogram matrix: entry matrix_base + b * chunks + c counts the keys of chunk c
/// of a segment that fall into its bucket b.
/// @param[in] d_keys keys
/// @param[in] d_segments segments
/// @param[in] num_segments segments
/// @param[in] chunks blocks
/// @param[in] d_minmax per-segment min/max
/// @param[out] d_matrix the matrix
/// @param[in] stream stream
void Histogram(const std::uint32_t* d_keys, const Segment* d_segments, std::uint32_t num_segments,
               std::uint32_t chunks, const ch01::MinMaxPair<std::uint32_t>* d_minmax,
               std::uint32_t* d_matrix, cudaStream_t stream);
/// Ranks each chunk's keys by bucket in shared memory and writes them as contiguous runs to
/// their slots: segment.begin + scanned[matrix_base + b * chunks + c] - scanned[matrix_base].
/// Segments whose min == max are written straight to @p d_out (they are sorted).
/// @param[in] d_keys keys
/// @param[in] d_segments segments
/// @param[in] num_segments segments
/// @param[in] chunks blocks
/// @param[in] d_minmax per-segment min/max
/// @param[in] d_scanned exclusive scan of the matrix
/// @param[out] d_part partitioned keys
/// @param[out] d_out final keys of all-equal segments
/// @param[in] stream stream
void Partition(const std::uint32_t* d_keys, const Segment* d_segments, std::uint32_t num_segments,
               std::uint32_t chunks, const ch01::MinMaxPair<std::uint32_t>* d_minmax,
               const std::uint32_t* d_scanned, std::uint32_t* d_part, std::uint32_t* d_out,
               cudaStream_t stream);
/// Sorts every bucket of at most @p tile keys from @p d_part into @p d_out (in place allowed);
/// reduces the min and max of every larger bucket of at most kBlockMinMaxKeys keys: an
/// all-equal one is copied to @p d_out (final), any other is appended to @p d_oversized with
/// its min and max; longer buckets are appended with {min, max} = {0xFFFFFFFF, 0}.
/// @param[in] d_part partitioned keys
/// @param[out] d_out sorted keys
/// @param[in] d_segments segments
/// @param[in] num_segments segments
/// @param[in] buckets blocks (sum of buckets)
/// @param[in] d_minmax per-segment min/max
/// @param[in] d_scanned exclusive scan of the matrix
/// @param[out] d_oversized spans of oversized buckets
/// @param[in,out] d_count number of spans (set to 0 before)
/// @param[in] tile kTile or kSmallTile (the level plan's)
/// @param[in] stream stream
void BitonicSortBuckets(const std::uint32_t* d_part, std::uint32_t* d_out,
                        const Segment* d_segments, std::uint32_t num_segments,
                        std::uint32_t buckets, const ch01::MinMaxPair<std::uint32_t>* d_minmax,
                        const std::uint32_t* d_scanned, Span* d_oversized, std::uint32_t* d_count,
                        std::uint32_t tile, cudaStream_t stream);
/// Sorts @p d_in[0, n) into @p d_out: level 0 over [min, max], then levels over oversized
/// buckets until none is left. Synchronises @p stream once per level.
/// @param[in] d_in keys (not modified)
/// @param[out] d_out sorted keys (must not alias @p d_in)
/// @param[in] n keys, <= kMaxKeys
/// @param[in] ws scratch
/// @param[in] stream stream
/// @param[in] timer when not null, each stage is bracketed by events
void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream, StageTimer* timer = nullptr);
}  // namespace optimized

/// The baselines, at their best: preallocated scratch, 32-bit counts, no host synchronisation.
namespace library {
/// A thrust allocator that hands out one preallocated device block (thrust::sort of 32-bit keys
/// asks for exactly one temporary block per call), so no cudaMalloc/cudaFree runs inside a sort.
class PreallocatedAllocator {
 public:
  using value_type = char;  ///< thrust allocates bytes
  /// @param[in] bytes size of the block
  explicit PreallocatedAllocator(std::size_t bytes);
  /// Returns the block; throws `std::logic_error` when it is in use or too small.
  /// @param[in] bytes bytes thrust asks for
  char* allocate(std::ptrdiff_t bytes);
  /// Marks the block free again.
  /// @param[in] p the block
  /// @param[in] bytes ignored
  void deallocate(char* p, std::size_t bytes);

 private:
  staged::DeviceBuffer<char> block_;
  bool in_use_ = false;
};
/// Scratch of the library sorts for up to `capacity` keys.
struct Workspace {
  /// @param[in] capacity largest n
  explicit Workspace(std::size_t capacity);
  staged::DeviceBuffer<unsigned char> cub_temp;  ///< DeviceRadixSort scratch
  PreallocatedAllocator thrust_alloc;            ///< thrust::sort's temporary block
};
/// Copies @p d_in to @p d_out and sorts it with thrust::sort (CUB's radix sort underneath, with
/// a 64-bit count), on @p stream, with the workspace's allocator and no synchronisation.
/// @param[in] d_in keys
/// @param[out] d_out sorted keys
/// @param[in] n keys, <= the workspace's capacity
/// @param[in] ws scratch
/// @param[in] stream stream
void ThrustSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
                cudaStream_t stream);
/// cub::DeviceRadixSort::SortKeys of @p d_in into @p d_out, 32-bit count when n <= INT_MAX.
/// @param[in] d_in keys
/// @param[out] d_out sorted keys
/// @param[in] n keys, <= the workspace's capacity
/// @param[in] ws scratch
/// @param[in] stream stream
void CubRadixSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
                  cudaStream_t stream);
}  // namespace library

}  // namespace ch03
