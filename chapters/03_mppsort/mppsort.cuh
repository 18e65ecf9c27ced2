/**
 * @file mppsort.cuh
 * @brief Chapter 03 contract: mppSort, a bucket sort of 32-bit keys in five kernels, and its six
 *        stages.
 *
 * The five steps (the Portuguese report): (1) per-block bucket histograms over [min, max] plus
 * the global histogram, (2) scan of the global histogram, (3) column scan of the per-block
 * histogram matrix, (4) scatter of each key into its bucket's slot, (5) a bitonic sort of each
 * bucket, one block per bucket. Every variant sorts `d_in[0, n)` into `d_out[0, n)`; any n in
 * [0, kMaxKeys].
 *
 * @code
 * ch03::optimized::Workspace ws(n);              // all device scratch, allocated once
 * ch03::optimized::Sort(d_in, d_out, n, ws, stream);
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "chapters/03_mppsort/plan.hpp"
#include "chapters/03_mppsort/step_timer.hpp"
#include "chapters/03_mppsort/workspace.hpp"
#include "common/device_buffer.hpp"
#include "common/device_limits.hpp"
#include "common/stream.hpp"

namespace ch03 {

/// Largest n any variant accepts: bucket offsets are 32-bit counts.
inline constexpr std::uint64_t kMaxKeys = 0xFFFFFFFFull;

// snippet-begin: ch03-stages
/// The stages from the report's five kernels to the default sort, one idea each. Each is a
/// runnable variant (`StageSorter`) with its own row, `optimized:<name>`.
enum class Stage {
  kBuckets = 1,  ///< computed buckets and one scan (stage1_buckets.cu)
  kRanked,       ///< a ranked partition that writes runs (stage2_ranked.cu)
  kRegisters,    ///< the bitonic tile in registers, and h from n (stage3_registers.cu)
  kLevels,       ///< oversized buckets bucketed again, levels planned on the GPU (levels.cu)
  kCounting,     ///< the counting sort on chip (counting_tile.cuh)
  kSampled,      ///< level 0's buckets from a sample of the keys (first_map.cuh): the default
};
// snippet-end: ch03-stages
/// A stage: its number, the word of its row and of `--stage`, and its idea in a line.
struct StageInfo {
  Stage stage;       ///< the stage
  const char* name;  ///< `buckets`, `ranked`, ...
  const char* idea;  ///< what it adds
};
/// Every stage, in order.
const std::vector<StageInfo>& AllStages();
/// The stage named @p name (`StageInfo::name`); throws `staged::UsageError` otherwise.
/// @param[in] name the word
Stage ParseStage(const std::string& name);
/// Stages 1 to 3 sort a bucket over their tile in global memory (the naive variant's fallback):
/// the driver runs them up to this many keys, where few buckets are oversized.
inline constexpr std::uint64_t kOneLevelMaxKeys = std::uint64_t{16} << 20;

// snippet-begin: ch03-bucket-limit
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
// snippet-end: ch03-bucket-limit

// snippet-begin: ch03-arithmetic-bucket
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
// snippet-end: ch03-arithmetic-bucket

/// Inputs that defeat equal-width buckets (`--adversary`): each puts most keys into one bucket
/// level after level, so the sort must still finish in a bounded number of levels.
enum class Adversary {
  kNone,     ///< use `--dist`
  kPowers,   ///< 0 and every power of two 2^0 .. 2^31, n / 33 copies of each
  kSpike,    ///< 99.9 % one value, 0.1 % uniform noise over the whole range
  kOutlier,  ///< keys in a range 1024 values wide, plus one key 0xFFFFFFFF
};
/// `none`, `powers`, `spike` or `outlier` -> Adversary; throws `staged::UsageError` otherwise.
/// @param[in] name the word
Adversary ParseAdversary(const std::string& name);
/// The word of @p a (`powers`, ...), used in the report's `dist` column.
/// @param[in] a the adversary
std::string AdversaryName(Adversary a);
/// @p n keys of kind @p a, each a pure function of (seed, index) like `staged::Generate`.
/// @param[in] n keys
/// @param[in] a the kind (not kNone)
/// @param[in] seed generator seed
std::vector<std::uint32_t> AdversarialKeys(std::size_t n, Adversary a, std::uint64_t seed);

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

/// The Portuguese report's five kernels, with the bucket-limit table, h buckets (default 1024).
namespace naive {
/// Default bucket count (the Portuguese report's h).
inline constexpr std::uint32_t kDefaultBuckets = 1024;
/// Largest h: GlobalHistoScan scans h counters in one block of 1024 threads (2 per thread).
inline constexpr std::uint32_t kMaxBuckets = 2048;
/// Most rows of the histogram matrix: VerticalScanHH scans one column per block.
inline constexpr std::uint32_t kMaxRows = 1024;
/// Keys a bucket may hold to be sorted in shared memory; larger buckets use global memory.
inline constexpr std::uint32_t kTile = 8192;
/// Threads of every naive block.
inline constexpr int kThreads = 1024;
/// Smallest power of two >= @p x (at least 2): the length of a bitonic network over x keys.
/// @param[in] x a length
__host__ __device__ inline std::uint64_t PowerOfTwoAtLeast(std::uint64_t x) {
  std::uint64_t m = 2;
  while (m < x) m *= 2;
  return m;
}

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
/// Sorts every bucket of more than @p tile keys (the ones `SegmentedBitonicSort` or a stage's
/// on-chip sort skipped) in global memory: reads the bucket starts back (one synchronisation),
/// copies each such bucket from @p d_part to @p d_out and sorts it there with
/// `GlobalBitonicSort`. Buckets as in `SegmentedBitonicSort`.
/// @param[in] d_part partitioned keys
/// @param[out] d_out where the sorted buckets go
/// @param[in] d_starts bucket starts (device)
/// @param[in] h buckets
/// @param[in] n keys
/// @param[in] tile the most keys the on-chip sort took
/// @param[in] stream stream
void SortOversizedBuckets(const std::uint32_t* d_part, std::uint32_t* d_out,
                          const std::uint32_t* d_starts, std::uint32_t h, std::size_t n,
                          std::uint32_t tile, cudaStream_t stream);
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

/// Stages 4 to 6 (and the default sort): levels planned on the device, the counting sort on
/// chip, level 0 from a sample. Its pieces: plan.hpp (tiles, bucket counts, the records the
/// kernels read), workspace.hpp (`Workspace`, `Options`), steps.cuh (one launcher per step),
/// step_timer.hpp (`StepTimer`).
namespace optimized {
/// The options that run @p stage (4 to 6): the bitonic tile at stage 4, the counting tile from
/// stage 5, level 0's sample at stage 6 (the default options).
/// @param[in] stage kLevels, kCounting or kSampled
Options OptionsFor(Stage stage);
/// Sorts @p d_in[0, n) into @p d_out: level 0 from the host's plan, then levels over the
/// oversized buckets planned on the device until none is left. Queues work on @p stream only: no
/// allocation and no host synchronisation, except in the first call with a new n (level 0's
/// records) or after the workspace grew (the deeper levels' graph), and with
/// `Options::device_loop == false` (one read-back per level). The workspace's bounds hold any
/// input of up to kMaxKeys keys in at most `LevelBound` levels; should one ever be reached, the
/// sort stops with buckets unsorted and reports it where the caller can see it after
/// synchronising: `ws.Errors(stream)` is 0 for a complete sort (`SortError` bits otherwise).
/// @param[in] d_in keys (not modified)
/// @param[out] d_out sorted keys (must not alias @p d_in)
/// @param[in] n keys, <= kMaxKeys
/// @param[in] ws scratch (grows when n exceeds its capacity)
/// @param[in] stream stream
/// @param[in] timer when not null, each step is bracketed by events
void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
          cudaStream_t stream, StepTimer* timer = nullptr);
/// `Sort` under CUB's DoubleBuffer contract: sorts @p d_keys[0, n) in place, with @p d_alt as
/// the partition buffer (its contents are lost); the sorted keys are in @p d_keys.
/// @param[in,out] d_keys the keys, then the sorted keys
/// @param[out] d_alt n keys of scratch (not overlapping @p d_keys)
/// @param[in] n keys, <= kMaxKeys
/// @param[in] ws scratch (its own partition buffer is not used)
/// @param[in] stream stream
/// @param[in] timer when not null, each step is bracketed by events
void SortDoubleBuffer(std::uint32_t* d_keys, std::uint32_t* d_alt, std::size_t n, Workspace& ws,
                      cudaStream_t stream, StepTimer* timer = nullptr);
}  // namespace optimized

}  // namespace ch03
