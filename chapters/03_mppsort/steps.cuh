/**
 * @file steps.cuh
 * @brief The launchers of the optimized mppSort's kernels, one per step, as `Sort` and the
 *        tests call them. Each works on a whole level: every segment of its table at once.
 *
 * A launcher given `lv.dynamic == false` is told the level's @p items (the level must be level 0,
 * whose sizes the host knows) and runs one block per item, or for the partition a resident grid
 * of at most that many; with `lv.dynamic == true` it runs as many blocks as fit on the GPU at
 * once, and they take items from the level's work queue (levels planned on the device, whose
 * sizes only the device knows).
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "chapters/03_mppsort/plan.hpp"
#include "chapters/03_mppsort/segments.cuh"

namespace ch03::optimized {

class Workspace;

/// Step 1: for every segment that is not all-equal, counts each chunk's keys per bucket into the
/// chunk's row of the matrix and adds them to the level's bucket totals.
/// @param[in] lv the level
/// @param[in] arrays the sort's arrays (the level reads `LevelSource`)
/// @param[in,out] counts the level's matrix (written) and bucket totals (zero on entry)
/// @param[in] items the level's chunks (used when !lv.dynamic)
/// @param[in] stream stream
void Histogram(const Level& lv, const ArraysRef& arrays, const Counts& counts, std::uint32_t items,
               cudaStream_t stream);

/// Step 4: moves each chunk's keys of bucket b to `LevelTarget`, into a run of bucket b that the
/// chunk takes from the bucket's total (`Counts::totals`: the runs of a bucket come in the order
/// the chunks take them, which is the order they are written in). Ranked in a shared tile and
/// written as contiguous runs (`PartitionPath::kPassTile`), or each key to its run's next slot
/// (`PartitionPath::kScatter`, for GPUs whose blocks cannot hold the tile). An all-equal segment
/// (min == max) is final: it is copied to `out`.
/// @param[in] lv the level
/// @param[in] arrays the sort's arrays
/// @param[in,out] counts the level's matrix, bucket totals (zero on return) and starts
/// @param[in] path the kernel (`ChoosePartition` of the planning limits)
/// @param[in] items the level's chunks (used when !lv.dynamic)
/// @param[in] stream stream
void Partition(const Level& lv, const ArraysRef& arrays, const Counts& counts, PartitionPath path,
               std::uint32_t items, cudaStream_t stream);

/// Step 5: sorts every bucket of at most `tile.keys` keys on chip from `LevelTarget` into `out`;
/// a larger bucket goes to @p overflow when it has at most @p overflow_keys keys (and the list
/// has room: capacity 0 or overflow_keys 0 turns it off), else to @p list with its [min, max]
/// when `BlockReduces` (the map's bounds for a bucket of equal widths over kBlockMinMaxKeys, else
/// reduced by the block; copied to `out` when min equals max), unreduced when not.
/// @param[in] lv the level
/// @param[in] arrays the sort's arrays
/// @param[in] starts the level's scanned bucket totals (`BucketStart`)
/// @param[in] list where oversized buckets go
/// @param[in] overflow where buckets for the overflow tile go (`SortOverflow` sorts them)
/// @param[in] sorter counting, radix or bitonic
/// @param[in] tile_keys the level's tile: one of `TilesOf(sorter, limits)`
/// @param[in] overflow_keys the overflow tile (`OverflowTile(sorter, limits).keys`), or 0
/// @param[in] items the level's buckets (used when !lv.dynamic)
/// @param[in] stream stream
void SortBuckets(const Level& lv, const ArraysRef& arrays, const std::uint32_t* starts,
                 const SpanList& list, const SpanList& overflow, BucketSorter sorter,
                 std::uint32_t tile_keys, std::uint32_t overflow_keys, std::uint32_t items,
                 cudaStream_t stream);

/// Step 5 for the overflow list: sorts each bucket `SortBuckets` listed there with the overflow
/// tile (a resident grid taking the list's entries in turn). Does nothing when the list's
/// capacity or @p overflow_keys is 0.
/// @param[in] lv the level (its state counts the list's entries)
/// @param[in] arrays the sort's arrays
/// @param[in] overflow the list `SortBuckets` filled
/// @param[in] sorter counting, radix or bitonic
/// @param[in] overflow_keys the overflow tile (`OverflowTile(sorter, limits).keys`)
/// @param[in] stream stream
void SortOverflow(const Level& lv, const ArraysRef& arrays, const SpanList& overflow,
                  BucketSorter sorter, std::uint32_t overflow_keys, cudaStream_t stream);

/// Surveys every segment marked `needs_minmax` (a span longer than kBlockMinMaxKeys): its min and
/// max, one block per chunk folding into the segment's range with atomicMin/atomicMax, and, for
/// a segment planned `Segment::sampled`, its core from a sorted sample of its keys.
/// @param[in] lv the level (dynamic: planned on the device)
/// @param[in] arrays the sort's arrays
/// @param[in,out] segments the level's table (the same as lv.segments)
/// @param[in] stream stream
void SurveySegments(const Level& lv, const ArraysRef& arrays, Segment* segments,
                    cudaStream_t stream);

/// What `PlanLevel` needs besides the lists.
struct PlanParams {
  std::uint32_t target = 0;               ///< mean bucket size of the deeper tile
  std::uint64_t matrix_capacity = 0;      ///< entries of the histogram matrix buffer
  std::uint64_t bucket_capacity = 0;      ///< entries of the bucket totals
  std::uint32_t* totals = nullptr;        ///< the bucket totals, zeroed for the planned level
  std::uint32_t max_segments = 0;         ///< entries of the segment table
  bool first = false;                     ///< true: plans level 1 (after level 0)
  bool set_condition = false;             ///< true: sets @p handle to "another level"
  cudaGraphConditionalHandle handle = 0;  ///< the loop's condition (in a graph)
};

/// Turns the listed spans into the next level's segment table and state (one block: a scan of
/// the spans' chunk, bucket and matrix counts), zeroes the level's bucket totals, resets the
/// list, and, in a graph, sets the
/// loop's condition to whether the new level has segments. Past kMaxLevels, or when a bound is
/// exceeded, it plans nothing and sets `SortError` bits in `state->error`.
/// @param[in] list the spans listed by the previous level's step 5
/// @param[out] segments the new level's table
/// @param[in,out] state the new level's state (its `level` is the previous one's)
/// @param[in] params bucket target, bounds, graph condition
/// @param[in] stream stream
void PlanLevel(const SpanList& list, Segment* segments, LevelState* state, const PlanParams& params,
               cudaStream_t stream);

/// One level planned on the device: SurveySegments, Histogram, the scan of the level's bucket
/// totals into its starts (`ExclusiveScanDeviceCount`: their number is read on the device),
/// Partition, SortBuckets,
/// SortOverflow, then PlanLevel for the next one. The body of the deeper levels' loop.
/// @param[in] ws the sort's workspace (tables, matrix, lists, and the record of the sort's
///            arrays that level 0's histogram wrote)
/// @param[in] params the closing PlanLevel's parameters (graph condition)
/// @param[in] stream stream (or a capturing one)
void EnqueueDeeperLevel(Workspace& ws, const PlanParams& params, cudaStream_t stream);

/// Runs levels 1, 2, ... after level 0: PlanLevel, then while it planned segments another level.
/// With `Options::device_loop` this is one launch of a CUDA graph whose WHILE node's condition
/// PlanLevel sets, so the host never waits; otherwise (or when the graph cannot be built) the
/// host reads each plan back and stops when it is empty. The levels read the sort's arrays from
/// the workspace's record (`Workspace::arrays`), so the graph is built once per workspace
/// allocation and serves every input and output array.
/// @param[in] ws the sort's workspace
/// @param[in] stream stream
void RunDeeperLevels(Workspace& ws, cudaStream_t stream);

}  // namespace ch03::optimized
