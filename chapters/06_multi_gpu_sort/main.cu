/**
 * @file main.cu
 * @brief Driver of `ch06_naive` and `ch06_optimized`: n 32-bit keys spread over k GPUs, sorted
 *        across them, verified against std::sort, timed against chapter 03 on one GPU.
 *
 * Rows (GE/s: total keys over the median time): cpu (std::sort of every key), naive (every key
 * sent to GPU 0 and sorted there), optimized (the distributed sort, `ch06_optimized` only),
 * `ch03:one-gpu` (chapter 03's sort of every key on GPU 0: the one-GPU reference `vs_library`
 * is taken against), and with k > 1 the exchange's breakdown: `step:sample`, `step:partition`,
 * `step:exchange`, `step:sort` (one run with every GPU synchronised after each step, ms) and
 * `library:nccl-alltoall` (a balanced all-to-all of the bytes the exchange moved, GB/s like
 * `step:exchange`). Every row is timed the same way: host wall clock from every GPU idle to every
 * GPU done, since the sort itself synchronises the host twice (the sample, the counts).
 *
 * `--n` is the total (strong scaling) or, with `--per-gpu`, each GPU's share (weak scaling).
 * `--shards even|uneven|one`: each GPU's share equal, growing with the rank (1 : 2 : ... : k),
 * or every key on GPU 0. A row that GPU 0's memory cannot hold (the naive and one-GPU rows, the
 * whole input on one GPU) is left out with a note.
 */
#include <algorithm>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/workspace.hpp"
#include "chapters/06_multi_gpu_sort/msort.cuh"
#include "common/cli.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/entry.hpp"
#include "common/generate.hpp"
#include "common/report.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace {

constexpr bool kOptimized = std::string_view(STAGED_VARIANT) == "optimized";

// Rank g's share of n keys: even (the remainder to the first ranks), in proportion 1 : 2 : ... :
// k, or all on rank 0.
std::vector<std::size_t> Shares(std::size_t n, int k, const std::string& how) {
  std::vector<std::size_t> s(static_cast<std::size_t>(k), 0);
  const auto K = static_cast<std::size_t>(k);
  if (how == "one") {
    s[0] = n;
  } else if (how == "uneven") {
    const std::size_t parts = K * (K + 1) / 2;
    std::size_t given = 0;
    for (std::size_t g = 0; g < K; ++g) given += s[g] = n / parts * (g + 1);
    s[K - 1] += n - given;
  } else {
    for (std::size_t g = 0; g < K; ++g) s[g] = n / K + (g < n % K ? 1 : 0);
  }
  return s;
}

staged::ReportRow Row(const std::string& variant, std::size_t n, const std::string& dist,
                      const staged::TimingStats& t, staged::Verified verified) {
  staged::ReportRow row;
  row.variant = variant;
  row.n = n;
  row.dist = dist;
  row.time = t;
  row.throughput = t.median_ms > 0 ? static_cast<double>(n) / (t.median_ms * 1e6) : 0.0;
  row.unit = "GE/s";
  row.ceiling = staged::Ceiling::kNone;
  row.verified = verified;
  return row;
}

// The result's runs, copied to the host in rank order.
std::vector<std::uint32_t> Gather(const ch06::Cluster& c, const ch06::Result& r) {
  std::vector<std::uint32_t> all;
  for (int g = 0; g < c.size(); ++g) {
    const auto G = static_cast<std::size_t>(g);
    if (r.counts[G] == 0) continue;
    CUDA_CHECK(cudaSetDevice(c.device(g)));
    const std::size_t at = all.size();
    all.resize(at + r.counts[G]);
    CUDA_CHECK(cudaMemcpy(all.data() + at, r.keys[G], r.counts[G] * sizeof(std::uint32_t),
                          cudaMemcpyDeviceToHost));
  }
  CUDA_CHECK(cudaSetDevice(c.device(0)));
  return all;
}

staged::Verified Check(const std::vector<std::uint32_t>& expected,
                       const std::vector<std::uint32_t>& got, const std::string& what,
                       bool sort_ok) {
  if (!sort_ok) {
    std::cerr << what << ": chapter 03's sort reported an incomplete sort\n";
    return staged::Verified::kNo;
  }
  if (got.size() != expected.size()) {
    std::cerr << what << ": " << got.size() << " keys out, " << expected.size() << " in\n";
    return staged::Verified::kNo;
  }
  const staged::VerifyReport r = staged::CompareExact(expected.data(), got.data(), got.size());
  if (!r.ok) std::cerr << what << ": " << r.Summary() << "\n";
  return r.ok ? staged::Verified::kYes : staged::Verified::kNo;
}

bool SortsComplete(const ch06::Cluster& c, ch06::Workspace& ws) {
  bool ok = true;
  for (int g = 0; g < c.size(); ++g) {
    CUDA_CHECK(cudaSetDevice(c.device(g)));
    ok = ok && ws.rank(g).sort->Errors(c.stream(g)) == 0;
  }
  CUDA_CHECK(cudaSetDevice(c.device(0)));
  return ok;
}

// The steps of the distributed sort (every GPU synchronised after each: a breakdown, not the
// total) and a balanced all-to-all of the bytes its exchange moved, each over --reps runs.
void TimeExchange(const ch06::Cluster& cluster, const std::vector<ch06::Shard>& shards,
                  ch06::Workspace& ws, const std::vector<std::uint32_t>& expected, std::size_t n,
                  const std::string& dist, const staged::CommonOptions& opt,
                  staged::Report& report) {
  const int k = cluster.size();
  std::vector<std::vector<double>> samples(4);
  std::size_t moved = 0;
  ch06::Result r;
  for (int rep = 0; rep < std::max(opt.reps, 1); ++rep) {
    ch06::Steps steps;
    r = ch06::Sort(cluster, shards, ws, opt.seed, &steps);
    const double ms[4] = {steps.sample_ms, steps.partition_ms, steps.exchange_ms, steps.sort_ms};
    for (int i = 0; i < 4; ++i) samples[static_cast<std::size_t>(i)].push_back(ms[i]);
    moved = steps.moved_keys;
  }
  const staged::Verified v =
      opt.verify ? Check(expected, Gather(cluster, r), "step breakdown", SortsComplete(cluster, ws))
                 : staged::Verified::kSkipped;
  const char* names[4] = {"step:sample", "step:partition", "step:exchange", "step:sort"};
  for (int i = 0; i < 4; ++i) {
    const staged::TimingStats t = staged::Summarize(samples[static_cast<std::size_t>(i)]);
    staged::ReportRow& row = report.Add(Row(names[i], n, dist, t, v));
    row.library_ref = row.naive_ref = row.cpu_ref = "none";
    if (i == 2) {  // the exchange: bytes that left their GPU over its time
      row.throughput = staged::GigabytesPerSecond(4.0 * static_cast<double>(moved), t.median_ms);
      row.unit = "GB/s";
    }
  }
  // The same bytes in a balanced all-to-all: rank g's run for p holds g + 1, checked at p.
  const std::size_t per_pair = moved / static_cast<std::size_t>(k * (k - 1));
  for (int g = 0; g < k; ++g) {
    ws.ReserveInput(cluster, g, per_pair * static_cast<std::size_t>(k));
    ws.ReserveOutput(cluster, g, per_pair * static_cast<std::size_t>(k));
    CUDA_CHECK(cudaSetDevice(cluster.device(g)));
    const std::vector<std::uint32_t> fill(per_pair * static_cast<std::size_t>(k),
                                          static_cast<std::uint32_t>(g + 1));
    staged::CopyToDeviceAndWait(ws.rank(g).part.data(), fill.data(), fill.size());
  }
  ch06::AllToAll(cluster, ws, per_pair);
  cluster.Synchronize();
  bool ok = true;
  for (int g = 0; g < k && opt.verify; ++g) {
    CUDA_CHECK(cudaSetDevice(cluster.device(g)));
    std::vector<std::uint32_t> got(per_pair * static_cast<std::size_t>(k));
    CUDA_CHECK(
        cudaMemcpy(got.data(), ws.rank(g).received.data(), got.size() * 4, cudaMemcpyDeviceToHost));
    for (int p = 0; p < k; ++p) {
      for (std::size_t i = 0; p != g && i < per_pair; ++i) {
        ok = ok &&
             got[static_cast<std::size_t>(p) * per_pair + i] == static_cast<std::uint32_t>(p + 1);
      }
    }
  }
  CUDA_CHECK(cudaSetDevice(cluster.device(0)));
  if (!ok) std::cerr << "library:nccl-alltoall: a rank received the wrong keys\n";
  const staged::TimingStats t = staged::TimeCpu(staged::TimingOptions{opt.warmup, opt.reps}, [&] {
    ch06::AllToAll(cluster, ws, per_pair);
    cluster.Synchronize();
  });
  staged::ReportRow& row = report.Add(Row("library:nccl-alltoall", n, dist, t,
                                          !opt.verify ? staged::Verified::kSkipped
                                          : ok        ? staged::Verified::kYes
                                                      : staged::Verified::kNo));
  row.throughput =
      staged::GigabytesPerSecond(4.0 * static_cast<double>(per_pair) * k * (k - 1), t.median_ms);
  row.unit = "GB/s";
  row.library_ref = row.naive_ref = row.cpu_ref = "none";
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = 16u << 20;
  defaults.min_n = 0;
  defaults.max_n = std::uint64_t{1} << 35;  // 8 GPUs of 2^32 keys; each GPU's share is checked
  staged::Cli cli("ch06_" STAGED_VARIANT,
                  "chapter 03's bucket sort across the GPUs of one machine, exchanging keys with "
                  "NCCL",
                  defaults);
  std::int64_t gpus = 0;
  bool per_gpu = false;
  std::string shards_how = "even", adversary_name = "none";
  cli.AddInt("gpus", &gpus, 0, ch06::kMaxGpus, "GPUs to sort across (0: every GPU, at most 8)");
  cli.AddFlag("per-gpu", &per_gpu, "--n is each GPU's share (weak scaling), not the total");
  cli.AddChoice("shards", &shards_how, {"even", "uneven", "one"},
                "how the keys start out: equal shares, shares 1 : 2 : ... : k, or all on GPU 0");
  cli.AddChoice("adversary", &adversary_name, {"none", "powers", "spike", "outlier"},
                "chapter 03's adversarial keys instead of --dist");
  auto ctx = staged::StartRun(cli, argc, argv);
  if (!ctx) return 0;
  const staged::CommonOptions& opt = ctx->options;
  ch06::Cluster cluster(ch06::Cluster::FirstGpus(static_cast<int>(gpus)));
  const int k = cluster.size();
  const std::size_t n = per_gpu ? opt.n * static_cast<std::size_t>(k) : opt.n;
  const std::vector<std::size_t> shares = Shares(n, k, shards_how);
  if (*std::max_element(shares.begin(), shares.end()) > ch03::kMaxKeys) {
    throw staged::UsageError("a GPU holds at most 2^32 - 1 keys: use more GPUs or a smaller --n");
  }
  std::cerr << "ch06: " << k << " GPU(s), " << ch06::Cluster::NcclVersion() << ", " << n
            << " keys (" << shards_how << " shares)\n";
  for (int g = 0; g < k; ++g) {
    CUDA_CHECK(cudaSetDevice(cluster.device(g)));
    staged::RequireDeviceMemory(shares[static_cast<std::size_t>(g)] * 4 * 8 + (64u << 20),
                                "GPU " + std::to_string(g) + "'s keys and buffers");
  }
  CUDA_CHECK(cudaSetDevice(cluster.device(0)));
  const ch03::Adversary adversary = ch03::ParseAdversary(adversary_name);
  const std::vector<std::uint32_t> keys =
      adversary == ch03::Adversary::kNone ? staged::Generate<std::uint32_t>(n, opt.dist, opt.seed)
                                          : ch03::AdversarialKeys(n, adversary, opt.seed);
  const std::string dist = adversary == ch03::Adversary::kNone ? staged::DistributionName(opt.dist)
                                                               : "adversary:" + adversary_name;
  std::vector<staged::DeviceBuffer<std::uint32_t>> d_keys;
  std::vector<ch06::Shard> shards;
  std::size_t at = 0;
  for (int g = 0; g < k; ++g) {
    const std::size_t s = shares[static_cast<std::size_t>(g)];
    CUDA_CHECK(cudaSetDevice(cluster.device(g)));
    d_keys.emplace_back(std::vector<std::uint32_t>(keys.begin() + at, keys.begin() + at + s));
    shards.push_back({d_keys.back().data(), s});
    at += s;
  }
  CUDA_CHECK(cudaSetDevice(cluster.device(0)));
  ch06::Workspace ws(cluster, *std::max_element(shares.begin(), shares.end()));

  staged::Report report("06_multi_gpu_sort", opt.seed, ctx->device, "ch03:one-gpu");
  std::vector<std::uint32_t> expected = keys;
  const staged::TimingStats t_cpu =
      staged::TimeCpu(staged::TimingOptions{0, std::max(opt.cpu_reps, 1)}, [&] {
        expected = keys;
        std::sort(expected.begin(), expected.end());
      });
  if (opt.cpu_reps > 0) report.Add(Row("cpu", n, dist, t_cpu, staged::Verified::kReference));
  const staged::TimingOptions timing{opt.warmup, opt.reps};

  // The one-GPU rows need every key on GPU 0: left out where it cannot hold them.
  std::size_t free0 = 0, total0 = 0;
  CUDA_CHECK(cudaMemGetInfo(&free0, &total0));
  const bool one_gpu_fits = n <= ch03::kMaxKeys && n * 4 * 7 + (64u << 20) < free0;
  if (!one_gpu_fits) {
    std::cerr << "ch06: naive and ch03:one-gpu left out: GPU 0 cannot hold all " << n << " keys\n";
  }
  auto run_rows = [&](const std::string& name, auto&& sort) {
    const ch06::Result r = sort();
    cluster.Synchronize();
    const staged::Verified v =
        opt.verify ? Check(expected, Gather(cluster, r), name, SortsComplete(cluster, ws))
                   : staged::Verified::kSkipped;
    report.Add(Row(name, n, dist,
                   staged::TimeCpu(timing,
                                   [&] {
                                     sort();
                                     cluster.Synchronize();
                                   }),
                   v));
  };
  if (one_gpu_fits) run_rows("naive", [&] { return ch06::GatherSort(cluster, shards, ws); });
  if (kOptimized) {
    run_rows("optimized", [&] { return ch06::Sort(cluster, shards, ws, opt.seed); });
    if (one_gpu_fits) {
      // Chapter 03 on GPU 0 alone, the keys already there (copied outside the timing).
      staged::DeviceBuffer<std::uint32_t> all(keys);
      staged::DeviceBuffer<std::uint32_t> out(std::max<std::size_t>(n, 1));
      ch03::optimized::Workspace one(std::max<std::size_t>(n, 1));
      auto sort_one = [&] {
        if (n > 0) ch03::optimized::Sort(all.data(), out.data(), n, one, cluster.stream(0));
        CUDA_CHECK(cudaStreamSynchronize(cluster.stream(0)));
      };
      sort_one();
      const staged::Verified v = opt.verify ? Check(expected, out.ToHost(), "ch03:one-gpu",
                                                    one.Errors(cluster.stream(0)) == 0)
                                            : staged::Verified::kSkipped;
      report.Add(Row("ch03:one-gpu", n, dist, staged::TimeCpu(timing, sort_one), v));
    }
    if (k > 1) TimeExchange(cluster, shards, ws, expected, n, dist, opt, report);
  }
  return staged::FinishRun(report, opt);
}

}  // namespace

/// Entry point: one verified and timed table.
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
