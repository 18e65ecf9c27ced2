/**
 * @file msort.cuh
 * @brief Chapter 06 contract: chapter 03's bucket sort across k GPUs of one machine, with NCCL
 *        for the exchange, and the naive version that gathers every key to one GPU.
 *
 * One process drives the k GPUs (`Cluster`: one NCCL communicator and one stream per GPU).
 * GPU g holds keys[g], n_g keys (any n_g, 0 included). `Sort` leaves GPU g with a sorted run
 * out[g]; the runs in GPU order are the sorted whole, and `Result::offsets[g]` is where run g
 * starts in it. The five steps, as chapter 03's within one GPU:
 *   1. sample: kSamplesPerGpu keys per GPU, tagged with their global positions (splitters.hpp);
 *   2. splitters: the samples copied to the host, sorted, k - 1 splitters chosen and copied to
 *      every GPU (a few KB each way);
 *   3. partition: each GPU counts its keys per destination GPU and writes them as k runs
 *      (per-block counts, a scan, a scatter: chapter 03's stage 1 with a splitter search in place
 *      of the computed bucket);
 *   4. exchange: the k x k counts all-gathered (`ncclAllGather`), then every run sent to its GPU
 *      (`ncclSend`/`ncclRecv` in one group);
 *   5. sort: each GPU sorts what it received with chapter 03's sort.
 * With one GPU the sort is chapter 03's sort of its keys: no sample, partition or exchange.
 *
 * @code
 * ch06::Cluster cluster(ch06::Cluster::AllGpus());
 * ch06::Workspace ws(cluster, capacity_per_gpu);
 * ch06::Result r = ch06::Sort(cluster, shards, ws);   // shards[g]: GPU g's keys
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chapters/06_multi_gpu_sort/splitters.hpp"
#include "common/device_buffer.hpp"

namespace ch03::optimized {
class Workspace;
}

namespace ch06 {

/// k GPUs of this machine, each with its NCCL communicator and a stream.
class Cluster {
 public:
  /// Opens NCCL over @p devices (device ordinals, each once, 1 to kMaxGpus of them).
  /// Throws `staged::UsageError` for a bad list and `std::runtime_error` naming NCCL's error.
  explicit Cluster(std::vector<int> devices);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;
  /// The first @p k devices of this machine; throws `staged::UsageError` when it has fewer.
  /// @param[in] k GPUs wanted (0: every GPU, at most kMaxGpus)
  static std::vector<int> FirstGpus(int k);
  /// GPUs in the cluster.
  int size() const { return static_cast<int>(devices_.size()); }
  /// Device ordinal of rank @p g.
  int device(int g) const { return devices_[static_cast<std::size_t>(g)]; }
  /// Stream of rank @p g (created on its device).
  cudaStream_t stream(int g) const { return streams_[static_cast<std::size_t>(g)]; }
  /// NCCL communicator of rank @p g, as an opaque pointer (ncclComm_t).
  void* comm(int g) const { return comms_[static_cast<std::size_t>(g)]; }
  /// Waits for every rank's stream.
  void Synchronize() const;
  /// "NCCL 2.x.y".
  static std::string NcclVersion();

 private:
  std::vector<int> devices_;
  std::vector<cudaStream_t> streams_;
  std::vector<void*> comms_;
};

/// One GPU's keys: a device pointer on that GPU and a count.
struct Shard {
  const std::uint32_t* keys = nullptr;  ///< on the rank's device
  std::size_t n = 0;                    ///< keys
};

/// Where the sorted keys are: per rank a device pointer into the workspace and a count.
struct Result {
  std::vector<const std::uint32_t*> keys;  ///< rank g's sorted run (on its device)
  std::vector<std::size_t> counts;         ///< its length
  std::vector<std::size_t> offsets;        ///< where it starts in the whole
};

/// Device scratch of every rank: the partitioned keys, the received keys, the sorted run, the
/// counts, and chapter 03's workspace. Sized for @p capacity keys per rank; the receive and
/// sorted buffers grow (synchronising) when a rank receives more.
class Workspace {
 public:
  /// @param[in] cluster the ranks
  /// @param[in] capacity keys a rank holds or receives before anything grows
  Workspace(const Cluster& cluster, std::size_t capacity);
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  /// Per-rank buffers.
  struct Rank {
    staged::DeviceBuffer<std::uint32_t> part;          ///< keys in k runs by destination
    staged::DeviceBuffer<std::uint32_t> received;      ///< the runs sent to this rank
    staged::DeviceBuffer<std::uint32_t> sorted;        ///< this rank's sorted run
    staged::DeviceBuffer<std::uint64_t> block_counts;  ///< destination-major per-block counts
    staged::DeviceBuffer<unsigned char> scan_temp;     ///< CUB's scratch for their scan
    staged::DeviceBuffer<Tagged> sample;               ///< this rank's sample
    staged::DeviceBuffer<Tagged> splitters;            ///< the k - 1 splitters
    staged::DeviceBuffer<std::uint64_t> counts;        ///< its counts per destination (k)
    staged::DeviceBuffer<std::uint64_t> all_counts;    ///< every rank's (k x k, all-gathered)
    std::unique_ptr<ch03::optimized::Workspace> sort;  ///< chapter 03's scratch
    std::size_t input_capacity = 0;                    ///< keys part (and its counts) hold
    std::size_t output_capacity = 0;                   ///< keys received and sorted hold
  };
  /// Rank @p g's buffers.
  Rank& rank(int g) { return ranks_[static_cast<std::size_t>(g)]; }
  /// Makes rank @p g's partition buffers hold @p n keys (reallocating, after synchronising its
  /// stream, only when they are smaller).
  void ReserveInput(const Cluster& cluster, int g, std::size_t n);
  /// Makes rank @p g's receive and sorted buffers hold @p n keys, likewise.
  void ReserveOutput(const Cluster& cluster, int g, std::size_t n);

 private:
  std::vector<Rank> ranks_;
  std::vector<int> devices_;  // each rank's buffers are freed with its device current
};

/// Host wall-clock milliseconds of each step of the last `Sort` that was given a `Steps*`, every
/// rank synchronised at each step's end (so the steps no longer overlap: for the breakdown only).
struct Steps {
  double sample_ms = 0;        ///< steps 1-2
  double partition_ms = 0;     ///< step 3
  double exchange_ms = 0;      ///< step 4
  double sort_ms = 0;          ///< step 5
  std::size_t moved_keys = 0;  ///< keys that left their GPU in step 4
};

/// Sorts the keys of every rank (see the file comment). Returns when the sort is queued and the
/// host knows the result's counts: steps 2 and 4 read a few KB back (the sample, the counts).
/// @param[in] cluster the ranks
/// @param[in] shards shards[g]: rank g's keys (cluster.size() of them)
/// @param[in] ws scratch
/// @param[in] seed sample positions
/// @param[out] steps when not null, per-step times (each step then synchronises every rank)
Result Sort(const Cluster& cluster, const std::vector<Shard>& shards, Workspace& ws,
            std::uint64_t seed = 1, Steps* steps = nullptr);

/// The naive version: every rank sends its keys to rank 0 (`ncclSend`/`ncclRecv`), which sorts
/// them all with chapter 03's sort; the result is one run on rank 0.
/// @param[in] cluster the ranks
/// @param[in] shards as for `Sort`
/// @param[in] ws scratch (rank 0's buffers grow to hold every key)
Result GatherSort(const Cluster& cluster, const std::vector<Shard>& shards, Workspace& ws);

/// A balanced all-to-all of @p keys_per_pair keys between every ordered pair of ranks
/// (`ncclSend`/`ncclRecv` in one group, from and into rank buffers of the workspace): the
/// exchange's ceiling on this machine, timed by the driver. Needs k * keys_per_pair keys of
/// `part` and of `received` per rank, reserved and filled by the caller (a smaller workspace is
/// refused with std::invalid_argument, since growing it would drop the keys in `part`).
void AllToAll(const Cluster& cluster, Workspace& ws, std::size_t keys_per_pair);

}  // namespace ch06
