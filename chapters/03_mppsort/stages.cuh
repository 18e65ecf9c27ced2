/**
 * @file stages.cuh
 * @brief Chapter 03's stages 1 to 3 (one level of the five steps, `one_level`, with each
 *        stage's partition or sort step) and `StageSorter`, which runs any stage.
 *
 * @code
 * ch03::StageSorter stage2(ch03::Stage::kRanked, n);
 * stage2.Sort(d_in, d_out, n, stream);
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "common/device_buffer.hpp"
#include "common/device_limits.hpp"

namespace ch03 {

/// Stages 1 to 3: one level of the five steps, every bucket over the tile sorted in global
/// memory as the naive variant does (`naive::SortOversizedBuckets`). Each stage is this
/// pipeline with its own partition or sort step (`Steps`).
namespace one_level {
/// Keys a histogram/partition block handles (one row of the histogram matrix); the ranked
/// partition's tile in shared memory.
inline constexpr std::uint32_t kChunk = 16384;
/// Threads of a histogram/partition block (16 keys each).
inline constexpr int kThreads = 1024;
/// Most buckets: one shared counter each, eight per thread in the ranked partition's scan.
inline constexpr std::uint32_t kMaxBuckets = 8192;

/// Device scratch of a one-level sort of up to `capacity` keys.
struct Workspace {
  /// @param[in] capacity largest n
  explicit Workspace(std::size_t capacity);
  std::size_t capacity;                                         ///< largest n
  staged::DeviceBuffer<std::uint32_t> part;                     ///< keys after the partition
  staged::DeviceBuffer<std::uint32_t> matrix;                   ///< chunks x h, chunk-major
  staged::DeviceBuffer<std::uint32_t> totals;                   ///< keys per bucket
  staged::DeviceBuffer<std::uint32_t> starts;                   ///< the scanned totals
  staged::DeviceBuffer<ch01::MinMaxPair<std::uint32_t>> range;  ///< chapter 01's min and max
  staged::DeviceBuffer<unsigned char> minmax_temp;              ///< chapter 01's scratch
  staged::DeviceBuffer<unsigned char> scan_temp;                ///< chapter 02's scratch
};

/// What the partition and sort steps of a one-level sort get.
struct Args {
  const std::uint32_t* in;                       ///< the keys
  std::size_t n;                                 ///< their number, >= 1
  const ch01::MinMaxPair<std::uint32_t>* range;  ///< their [min, max] (device)
  std::uint32_t buckets;                         ///< h
  std::uint32_t chunks;                          ///< ceil(n / kChunk)
  std::uint32_t* matrix;                         ///< step 1 writes its rows, step 4 reads them
  std::uint32_t* totals;                         ///< step 1's totals (step 4 empties them)
  const std::uint32_t* starts;                   ///< where each bucket starts
  std::uint32_t* part;                           ///< where step 4 writes
  std::uint32_t* out;                            ///< where step 5 writes
};
/// A step's launcher.
using StepLauncher = void (*)(const Args&, cudaStream_t);

/// What makes a one-level sort one stage or another.
struct Steps {
  std::uint32_t buckets;      ///< h, in [1, kMaxBuckets]
  std::uint32_t tile;         ///< the most keys `sort_buckets` sorts; larger go to global memory
  StepLauncher partition;     ///< step 4
  StepLauncher sort_buckets;  ///< step 5 for the buckets of at most `tile` keys
};

/// Step 1 (every stage 1 to 3): one block per chunk counts its keys per arithmetic bucket, writes
/// its row of the matrix and adds it to the totals (zero before).
/// @param[in] a the sort (`part`, `starts` and `out` unused)
/// @param[in] stream stream
void Histogram(const Args& a, cudaStream_t stream);

/// The five steps with @p steps: chapter 01's min/max, `Histogram`, chapter 02's scan of the
/// totals, `steps.partition`, `steps.sort_buckets`, then the buckets over the tile in global
/// memory (one synchronisation).
/// @param[in] steps the stage's steps
/// @param[in] d_in keys
/// @param[out] d_out sorted keys (not @p d_in)
/// @param[in] n keys, <= ws.capacity
/// @param[in] ws scratch
/// @param[in] stream stream
void Sort(const Steps& steps, const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n,
          Workspace& ws, cudaStream_t stream);
}  // namespace one_level

/// Stage 1: computed buckets and one scan (the report's partition and bitonic sort).
namespace stage1 {
/// Step 4 as the report does it, from one scan: each block takes its run of every bucket out
/// of the bucket's total, then every key claims its run's next slot with a shared atomic.
/// @param[in] a the sort
/// @param[in] stream stream
void Partition(const one_level::Args& a, cudaStream_t stream);
/// Step 5 as the report does it (`naive::SegmentedBitonicSort`, tile `naive::kTile`).
/// @param[in] a the sort
/// @param[in] stream stream
void SortBuckets(const one_level::Args& a, cudaStream_t stream);
/// Stage 1's steps: h = 1024 (the report's), the scatter partition, the report's sort.
one_level::Steps Steps();
}  // namespace stage1

/// Stage 2: the partition ranks a chunk's keys by bucket in shared memory, then writes runs.
namespace stage2 {
/// Step 4: ranked in a shared tile, written as runs (coalesced); stage 1's scatter where a
/// block cannot hold the tile (`optimized::ChoosePartition`).
/// @param[in] a the sort
/// @param[in] stream stream
void Partition(const one_level::Args& a, cudaStream_t stream);
/// Stage 2's steps: stage 1's with this partition.
one_level::Steps Steps();
}  // namespace stage2

/// Stage 3: the bitonic tile in registers, shuffles and shared memory; h from n.
namespace stage3 {
/// Step 5: one block per bucket of at most 4096 keys, `optimized::BitonicTile<4096>`.
/// @param[in] a the sort
/// @param[in] stream stream
void SortBuckets4096(const one_level::Args& a, cudaStream_t stream);
/// Step 5: one block per bucket of at most 8192 keys, `optimized::BitonicTile<8192>`.
/// @param[in] a the sort
/// @param[in] stream stream
void SortBuckets8192(const one_level::Args& a, cudaStream_t stream);
/// Stage 3's steps for @p n keys: the bitonic tile and bucket count of
/// `optimized::PlanFirstLevel` (h = ceil(n / the tile's target)), stage 2's partition.
/// @param[in] n keys, >= 1
/// @param[in] limits the planning limits (which tiles fit)
one_level::Steps Steps(std::uint64_t n, const staged::DeviceLimits& limits);
}  // namespace stage3

/// Runs one stage on its own workspace: the one-level workspace of stages 1 to 3, or the
/// optimized workspace with `optimized::OptionsFor` (stage 6 may take other options).
class StageSorter {
 public:
  /// @param[in] stage the stage
  /// @param[in] capacity largest n
  /// @param[in] options the options of a stage 4 to 6 sort (default: `OptionsFor(stage)`)
  StageSorter(Stage stage, std::size_t capacity, std::optional<optimized::Options> options = {});
  /// Sorts @p d_in[0, n) into @p d_out (n <= capacity, or any n from stage 4 on).
  /// @param[in] d_in keys
  /// @param[out] d_out sorted keys
  /// @param[in] n keys
  /// @param[in] stream stream
  void Sort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, cudaStream_t stream);
  /// The stage.
  Stage stage() const { return stage_; }
  /// The workspace of a stage 4 to 6 sort, else null.
  optimized::Workspace* levels() { return levels_ ? &*levels_ : nullptr; }

 private:
  Stage stage_;
  std::optional<one_level::Workspace> one_;
  std::optional<optimized::Workspace> levels_;
  staged::DeviceLimits limits_;
};

}  // namespace ch03
