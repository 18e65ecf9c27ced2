/**
 * @file msort.cu
 * @brief The distributed sort's five steps across the ranks (msort.cuh), the naive gather to
 *        one GPU, and the balanced all-to-all the exchange is compared with.
 *
 * One host thread queues every rank's work on that rank's stream. NCCL calls for several ranks
 * from one thread go inside one ncclGroupStart/ncclGroupEnd, or the first rank's call would wait
 * for peers that have not been called yet. A rank's keys to itself are a device copy, not a
 * message.
 */
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/workspace.hpp"
#include "chapters/06_multi_gpu_sort/msort.cuh"
#include "chapters/06_multi_gpu_sort/nccl_check.hpp"
#include "chapters/06_multi_gpu_sort/partition.cuh"
#include "common/cuda_check.hpp"

namespace ch06 {
namespace {

ncclComm_t Comm(const Cluster& c, int g) { return static_cast<ncclComm_t>(c.comm(g)); }

// Host milliseconds since t, after every rank's stream is done (for Steps only).
double StepMs(const Cluster& c, std::chrono::steady_clock::time_point& t) {
  c.Synchronize();
  const auto now = std::chrono::steady_clock::now();
  const double ms = std::chrono::duration<double, std::milli>(now - t).count();
  t = now;
  return ms;
}

// Copies @p n keys on rank g's device (a rank's own run).
void CopyOnRank(const Cluster& c, int g, std::uint32_t* dst, const std::uint32_t* src,
                std::size_t n) {
  if (n == 0) return;
  CUDA_CHECK(
      cudaMemcpyAsync(dst, src, n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, c.stream(g)));
}

// Chapter 03's sort of n keys on rank g's device into the rank's sorted buffer.
void SortOnRank(const Cluster& c, Workspace& ws, int g, const std::uint32_t* keys, std::size_t n) {
  if (n == 0) return;
  Workspace::Rank& r = ws.rank(g);
  ch03::optimized::Sort(keys, r.sorted.data(), n, *r.sort, c.stream(g));
}

void CheckShards(const Cluster& c, const std::vector<Shard>& shards) {
  if (static_cast<int>(shards.size()) != c.size()) {
    throw std::invalid_argument("ch06::Sort: " + std::to_string(shards.size()) + " shards for " +
                                std::to_string(c.size()) + " GPUs");
  }
  for (const Shard& s : shards) {
    if (s.n > ch03::kMaxKeys) {
      throw std::invalid_argument("ch06::Sort: a GPU holds at most 2^32 - 1 keys");
    }
    if (s.n > 0 && s.keys == nullptr) throw std::invalid_argument("ch06::Sort: null keys");
  }
}

}  // namespace

Result Sort(const Cluster& c, const std::vector<Shard>& shards, Workspace& ws, std::uint64_t seed,
            Steps* steps) {
  CheckShards(c, shards);
  const int k = c.size();
  const auto K = static_cast<std::size_t>(k);
  if (k == 1) {  // one GPU: no splitters, nothing to exchange; chapter 03's sort of the shard
    auto t = std::chrono::steady_clock::now();
    ws.ReserveOutput(c, 0, shards[0].n);
    CUDA_CHECK(cudaSetDevice(c.device(0)));
    SortOnRank(c, ws, 0, shards[0].keys, shards[0].n);
    if (steps) *steps = Steps{0, 0, 0, StepMs(c, t), 0};
    return Result{{ws.rank(0).sorted.data()}, {shards[0].n}, {0}};
  }
  std::vector<std::uint64_t> first(K, 0);
  for (std::size_t g = 1; g < K; ++g) first[g] = first[g - 1] + shards[g - 1].n;
  auto t = std::chrono::steady_clock::now();

  // Steps 1-2: every rank's sample to the host, the splitters back to every rank.
  std::vector<Tagged> sample;
  for (int g = 0; g < k; ++g) {
    const Shard& s = shards[static_cast<std::size_t>(g)];
    if (s.n == 0) continue;
    CUDA_CHECK(cudaSetDevice(c.device(g)));
    ws.ReserveInput(c, g, s.n);
    partition::Sample(s.keys, s.n, first[static_cast<std::size_t>(g)], seed,
                      ws.rank(g).sample.data(), c.stream(g));
    const std::size_t at = sample.size();
    sample.resize(at + kSamplesPerGpu);
    CUDA_CHECK(cudaMemcpyAsync(sample.data() + at, ws.rank(g).sample.data(),
                               kSamplesPerGpu * sizeof(Tagged), cudaMemcpyDeviceToHost,
                               c.stream(g)));
  }
  c.Synchronize();
  const std::vector<Tagged> splitters = ChooseSplitters(std::move(sample), k);
  for (int g = 0; g < k; ++g) {
    if (k == 1) break;
    CUDA_CHECK(cudaSetDevice(c.device(g)));
    CUDA_CHECK(cudaMemcpyAsync(ws.rank(g).splitters.data(), splitters.data(),
                               (K - 1) * sizeof(Tagged), cudaMemcpyHostToDevice, c.stream(g)));
  }
  if (steps) steps->sample_ms = StepMs(c, t);

  // Step 3: each rank's keys in k runs by destination, and the runs' lengths.
  for (int g = 0; g < k; ++g) {
    const Shard& s = shards[static_cast<std::size_t>(g)];
    Workspace::Rank& r = ws.rank(g);
    CUDA_CHECK(cudaSetDevice(c.device(g)));
    partition::Partition(s.keys, s.n, first[static_cast<std::size_t>(g)], r.splitters.data(), k,
                         r.part.data(), r.block_counts.data(), r.scan_temp.data(),
                         r.scan_temp.size(), r.counts.data(), c.stream(g));
  }
  if (steps) steps->partition_ms = StepMs(c, t);

  // Step 4: the k x k counts on every rank (all-gather), read back once to size the messages.
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (int g = 0; g < k; ++g) {
    CheckNccl(ncclAllGather(ws.rank(g).counts.data(), ws.rank(g).all_counts.data(), K, ncclUint64,
                            Comm(c, g), c.stream(g)),
              "ncclAllGather");
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  std::vector<std::uint64_t> counts(K * K);  // counts[src * k + dst]
  CUDA_CHECK(cudaSetDevice(c.device(0)));
  CUDA_CHECK(cudaMemcpyAsync(counts.data(), ws.rank(0).all_counts.data(),
                             K * K * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, c.stream(0)));
  CUDA_CHECK(cudaStreamSynchronize(c.stream(0)));
  auto count = [&](std::size_t src, std::size_t dst) { return counts[src * K + dst]; };
  Result result;
  result.counts.assign(K, 0);
  for (std::size_t dst = 0; dst < K; ++dst) {
    for (std::size_t src = 0; src < K; ++src) result.counts[dst] += count(src, dst);
    ws.ReserveOutput(c, static_cast<int>(dst), result.counts[dst]);
  }
  std::size_t moved = 0;
  // snippet-begin: ch06-exchange
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t g = 0; g < K; ++g) {
    std::size_t send_at = 0;  // where run p starts in part
    std::size_t recv_at = 0;  // where the keys from p land in received
    for (std::size_t p = 0; p < K; ++p) {
      const std::size_t out = count(g, p);
      const std::size_t in = count(p, g);
      const int rank = static_cast<int>(g);
      if (p == g) {
        CUDA_CHECK(cudaSetDevice(c.device(rank)));
        CopyOnRank(c, rank, ws.rank(rank).received.data() + recv_at,
                   ws.rank(rank).part.data() + send_at, out);
      } else {
        if (out > 0) {
          CheckNccl(ncclSend(ws.rank(rank).part.data() + send_at, out, ncclUint32,
                             static_cast<int>(p), Comm(c, rank), c.stream(rank)),
                    "ncclSend");
          moved += out;
        }
        if (in > 0) {
          CheckNccl(ncclRecv(ws.rank(rank).received.data() + recv_at, in, ncclUint32,
                             static_cast<int>(p), Comm(c, rank), c.stream(rank)),
                    "ncclRecv");
        }
      }
      send_at += out;
      recv_at += in;
    }
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  // snippet-end: ch06-exchange
  if (steps) {
    steps->exchange_ms = StepMs(c, t);
    steps->moved_keys = moved;
  }

  // Step 5: each rank sorts what it received.
  result.offsets.assign(K, 0);
  result.keys.assign(K, nullptr);
  for (int g = 0; g < k; ++g) {
    const auto G = static_cast<std::size_t>(g);
    CUDA_CHECK(cudaSetDevice(c.device(g)));
    SortOnRank(c, ws, g, ws.rank(g).received.data(), result.counts[G]);
    result.keys[G] = ws.rank(g).sorted.data();
    if (g > 0) result.offsets[G] = result.offsets[G - 1] + result.counts[G - 1];
  }
  if (steps) steps->sort_ms = StepMs(c, t);
  CUDA_CHECK(cudaSetDevice(c.device(0)));
  return result;
}

Result GatherSort(const Cluster& c, const std::vector<Shard>& shards, Workspace& ws) {
  CheckShards(c, shards);
  const auto K = static_cast<std::size_t>(c.size());
  std::size_t total = 0;
  for (const Shard& s : shards) total += s.n;
  if (total > ch03::kMaxKeys) {
    throw std::invalid_argument("ch06::GatherSort: one GPU sorts at most 2^32 - 1 keys");
  }
  ws.ReserveOutput(c, 0, total);
  std::size_t at = 0;
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (std::size_t g = 0; g < K; ++g) {
    const Shard& s = shards[g];
    if (s.n > 0 && g == 0) {
      CUDA_CHECK(cudaSetDevice(c.device(0)));
      CopyOnRank(c, 0, ws.rank(0).received.data(), s.keys, s.n);
    } else if (s.n > 0) {
      CheckNccl(ncclSend(s.keys, s.n, ncclUint32, 0, Comm(c, static_cast<int>(g)),
                         c.stream(static_cast<int>(g))),
                "ncclSend");
      CheckNccl(ncclRecv(ws.rank(0).received.data() + at, s.n, ncclUint32, static_cast<int>(g),
                         Comm(c, 0), c.stream(0)),
                "ncclRecv");
    }
    at += s.n;
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  CUDA_CHECK(cudaSetDevice(c.device(0)));
  SortOnRank(c, ws, 0, ws.rank(0).received.data(), total);
  Result result;
  result.keys.assign(K, nullptr);
  result.counts.assign(K, 0);
  result.offsets.assign(K, total);
  result.keys[0] = ws.rank(0).sorted.data();
  result.counts[0] = total;
  result.offsets[0] = 0;
  return result;
}

void AllToAll(const Cluster& c, Workspace& ws, std::size_t keys_per_pair) {
  const int k = c.size();
  const std::size_t need = keys_per_pair * static_cast<std::size_t>(k);
  for (int g = 0; g < k; ++g) {
    // Growing a buffer here would drop the keys the caller wrote into `part`: refuse instead.
    const Workspace::Rank& r = ws.rank(g);
    if (need > r.input_capacity || need > r.output_capacity) {
      throw std::invalid_argument("AllToAll: rank " + std::to_string(g) + " holds " +
                                  std::to_string(std::min(r.input_capacity, r.output_capacity)) +
                                  " keys; the exchange needs " + std::to_string(need) +
                                  " (reserve them and fill part first)");
    }
  }
  CheckNccl(ncclGroupStart(), "ncclGroupStart");
  for (int g = 0; g < k; ++g) {
    for (int p = 0; p < k; ++p) {
      if (p == g || keys_per_pair == 0) continue;
      const std::size_t at = keys_per_pair * static_cast<std::size_t>(p);
      CheckNccl(ncclSend(ws.rank(g).part.data() + at, keys_per_pair, ncclUint32, p, Comm(c, g),
                         c.stream(g)),
                "ncclSend");
      CheckNccl(ncclRecv(ws.rank(g).received.data() + at, keys_per_pair, ncclUint32, p, Comm(c, g),
                         c.stream(g)),
                "ncclRecv");
    }
  }
  CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
}

}  // namespace ch06
