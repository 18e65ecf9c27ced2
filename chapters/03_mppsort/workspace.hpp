/**
 * @file workspace.hpp
 * @brief The device memory of the optimized mppSort, sized once for a capacity, and the CUDA
 *        graph of its deeper levels.
 *
 * Everything a sort of up to `capacity` keys needs is allocated by the constructor, so that
 * `Sort` allocates nothing and never synchronises the host: level 0's tables are written when n
 * changes (a synchronous copy of two small records, outside any timed loop), and the graph of
 * the deeper levels is built on the first sort after an allocation (it reads the sort's arrays
 * from a record, so it serves any input and output). A workspace serves one sort at a time;
 * concurrent sorts need one workspace each.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "chapters/03_mppsort/plan.hpp"
#include "common/device_buffer.hpp"

namespace ch03::optimized {

/// How the optimized sort runs.
struct Options {
  BucketSorter sorter = BucketSorter::kCounting;  ///< the on-chip sort of step 5
  /// true: the deeper levels run as one CUDA graph with a device-controlled loop; false: the
  /// host reads each level's plan back (one synchronisation per level, for comparison).
  bool device_loop = true;
  /// true: level 0 samples its input and, where equal widths would be crowded, buckets around
  /// the sampled values or in three pieces around a sampled cluster (`ChooseFirstMap`); false:
  /// equal widths always (the map the deeper levels then re-bucket, for comparison and for tests
  /// of the deeper levels).
  bool sample_first = true;
  /// true: step 4 ranks one pass of a chunk at a time (`PartitionPath::kPassTile`) even where a
  /// block holds the whole chunk's tile (for comparison).
  bool pass_tile = false;
  /// A device profile (`staged::DeviceProfiles`, e.g. "t4") whose limits the workspace plans for
  /// (capped by the planning limits), or "" for the planning limits themselves: how a test runs
  /// a smaller GPU's tiles and partition on a large one.
  std::string profile;
};

/// Device scratch of the optimized sort (see the file comment).
class Workspace {
 public:
  /// @param[in] capacity largest n this workspace serves without reallocating
  /// @param[in] options sorter and loop
  explicit Workspace(std::size_t capacity, Options options = {});
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// The options the workspace was made for.
  const Options& options() const { return options_; }
  /// Readies the workspace for a sort of @p n keys: reallocates when n exceeds the capacity
  /// (synchronising the device) and rewrites level 0's records when n changed.
  /// @param[in] n keys, >= 1
  void Prepare(std::size_t n);
  /// Level 0 as planned for the last `Prepare`.
  const FirstLevelPlan& first_plan() const { return first_plan_; }
  /// The limits the workspace plans for (the planning limits, or `Options::profile`'s).
  const staged::DeviceLimits& limits() const { return limits_; }
  /// How step 4 runs on these limits (`ChoosePartition`; the pass tile for
  /// `Options::pass_tile`).
  PartitionPath partition() const {
    const PartitionPath path = ChoosePartition(limits_);
    return path == PartitionPath::kChunkTile && options_.pass_tile ? PartitionPath::kPassTile
                                                                   : path;
  }
  /// Device address of level 0's [min, max] (chapter 01's MinMax writes it).
  KeyRange* FirstRange();
  /// Device address of the sort's arrays as the deeper levels read them (`LevelState::arrays`
  /// of the deeper state): level 0's histogram writes them.
  Buffers* ArraysRecord();
  /// The oversized-bucket list.
  SpanList Spans();
  /// The deeper levels' overflow list (`OverflowTile`; capacity 0 when the sorter has none),
  /// counted in the deeper state.
  SpanList Overflow();
  /// Entries of the histogram matrix any level may use (`MatrixCapacity`).
  std::uint64_t matrix_capacity() const { return matrix_capacity_; }
  /// Entries of the bucket totals and of the starts any level may use (`BucketCapacity`).
  std::uint64_t bucket_capacity() const { return bucket_capacity_; }
  /// The matrix, bucket totals and starts, as the steps take them.
  Counts counts() { return Counts{matrix.data(), totals.data(), starts.data()}; }
  /// Entries of the span list and of the deeper segment table.
  std::uint32_t span_capacity() const { return span_capacity_; }
  /// Bumped whenever the buffers are reallocated (the deeper graph must then be rebuilt).
  std::uint64_t generation() const { return generation_; }
  /// Reads the state of the last level planned on the device (synchronises @p stream).
  /// @param[in] stream the stream of the last sort
  LevelState ReadState(cudaStream_t stream);
  /// @brief Why the last sort on @p stream left buckets unsorted: 0 when every key is in
  ///        place, else `SortError` bits (synchronises @p stream). `Sort` never waits for the
  ///        device, so it cannot throw for this: a caller that needs the guarantee checks here
  ///        (the bounds are sized so that no input of up to `kMaxKeys` keys reaches them).
  /// @param[in] stream the stream of the last sort
  std::uint32_t Errors(cudaStream_t stream) { return ReadState(stream).error; }
  /// Levels the last sort ran (level 0 counts; synchronises @p stream).
  /// @param[in] stream the stream of the last sort
  int LevelsUsed(cudaStream_t stream) { return static_cast<int>(ReadState(stream).level); }
  /// Level 0's segment as the last sort published it: its bucket map (`Segment::sampled`),
  /// buckets and splitters (synchronises @p stream).
  /// @param[in] stream the stream of the last sort
  Segment ReadFirstSegment(cudaStream_t stream);

  staged::DeviceBuffer<std::uint32_t> part;  ///< partition buffer (n keys)
  /// The level's chunk-major histogram matrix (`matrix_capacity()` words).
  staged::DeviceBuffer<std::uint32_t> matrix;
  staged::DeviceBuffer<std::uint32_t> totals;       ///< the level's bucket totals
  staged::DeviceBuffer<std::uint32_t> starts;       ///< the scanned totals: each bucket's start
  staged::DeviceBuffer<unsigned char> minmax_temp;  ///< chapter 01's scratch
  staged::DeviceBuffer<unsigned char> scan_temp;    ///< chapter 02's scratch
  staged::DeviceBuffer<Segment> first_segment;      ///< level 0's one segment, as planned
  /// Level 0's segment with the bucket map its histogram chose (`Publish::segment`)
  staged::DeviceBuffer<Segment> first_published;
  staged::DeviceBuffer<LevelState> first_state;    ///< level 0's state
  staged::DeviceBuffer<std::uint32_t> splitters;   ///< level 0's sampled values (kMaxFewValues)
  staged::DeviceBuffer<Segment> segments;          ///< the deeper level's table
  staged::DeviceBuffer<LevelState> state;          ///< the deeper level's state
  staged::DeviceBuffer<Span> spans;                ///< oversized buckets of a level
  staged::DeviceBuffer<Span> overflow;             ///< buckets for the overflow tile
  staged::DeviceBuffer<std::uint32_t> span_count;  ///< entries of `spans`
  staged::PinnedBuffer<LevelState> h_state;        ///< host copy of `state`

  /// The deeper levels' executable graph and what it was built for (levels.cu).
  struct DeeperGraph {
    cudaGraphExec_t exec = nullptr;    ///< null until built
    std::uint64_t generation = ~0ull;  ///< the workspace buffers baked into its kernels
    bool unavailable = false;          ///< building failed once: use the host loop
    int builds = 0;                    ///< times it was built (once per allocation)
  };
  DeeperGraph graph;  ///< see `RunDeeperLevels`

 private:
  void Allocate(std::size_t capacity);

  Options options_;
  staged::DeviceLimits limits_;
  std::size_t capacity_ = 0;
  std::uint64_t matrix_capacity_ = 0;
  std::uint64_t bucket_capacity_ = 0;
  std::uint32_t span_capacity_ = 0;
  std::size_t planned_n_ = 0;
  FirstLevelPlan first_plan_{};
  std::uint64_t generation_ = 0;
};

}  // namespace ch03::optimized
