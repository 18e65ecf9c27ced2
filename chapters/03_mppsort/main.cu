/**
 * @file main.cu
 * @brief Driver of ch03_naive and ch03_optimized: generate keys, run every variant once and
 *        verify it, then time it; rows in GE/s (n / time / 1e9), as the Portuguese report reports.
 *
 * Rows: cpu (std::sort), naive, optimized and its stages (optimized executable only),
 * library:cub (CUB DeviceRadixSort, preallocated, 32-bit count: the `vs_library` reference) and
 * library:thrust (thrust::sort with a preallocated allocator, CUB's radix sort underneath).
 * `pct_peak` is the effective bandwidth of one read and one write of the keys (8n bytes / time)
 * (of the stage rows, only those whose traffic is known: min/max and histogram read 4n bytes,
 * against the measured read bandwidth; the partition reads and writes 8n)
 * as a percentage of the measured copy bandwidth. Every GPU variant gets the same L2 treatment
 * (flushed before each rep when in + out + scratch is below 4x L2). With `--cpu-reps 0` the CPU
 * row is dropped and results are checked against a CPU LSD radix sort (O(n)) instead of
 * std::sort: the reference never comes from a GPU library.
 *
 * Chapter flags: `--bucket-sort bitonic|radix` (the on-chip sort of step 5; the row is named
 * `optimized-radix` for the block radix sort), `--host-loop` (deeper levels driven from the host,
 * row `optimized-hostloop`, timed with the host's round trips), `--equal-widths` (level 0 without
 * its sample: equal-width buckets whatever the keys, row `optimized-equalwidths`),
 * `--adversary powers|spike|outlier`
 * (inputs that defeat equal-width buckets, in place of `--dist`), `--extremes`, `--buckets`,
 * `--skip-naive`, `--workspace N` (also time the sort through a workspace sized for N keys).
 */
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/device_buffer.hpp"
#include "common/entry.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/stream_gate.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace {

/// The Portuguese report's table (GTX 1080 Ti, h = 1024, 10 reps): n, mppSort GE/s, Thrust GE/s.
struct SourceRow {
  std::uint64_t n;
  double mppsort;
  double thrust;
};
constexpr SourceRow kSourceTable[] = {
    {1u << 20, 1.50, 1.36}, {2u << 20, 1.45, 2.30}, {4u << 20, 1.39, 2.77}, {8u << 20, 1.38, 3.30}};

/// Throws `VerificationError` when the last sort through @p ws left keys unsorted (a bound of
/// the workspace was reached: `Workspace::Errors`).
void RequireComplete(ch03::optimized::Workspace& ws, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const std::uint32_t errors = ws.Errors(stream);
  if (errors != 0) {
    throw staged::VerificationError("mppSort stopped with buckets unsorted (error bits " +
                                    std::to_string(errors) + ", level " +
                                    std::to_string(ws.LevelsUsed(stream)) + ")");
  }
}

/// @p n as a row suffix: "256M", "64K", or the number.
std::string SizeName(std::uint64_t n) {
  if (n % (1u << 20) == 0) return std::to_string(n >> 20) + "M";
  if (n % (1u << 10) == 0) return std::to_string(n >> 10) + "K";
  return std::to_string(n);
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = 8u << 20;
  defaults.min_n = 0;
  defaults.max_n = ch03::kMaxKeys;
  staged::Cli cli("ch03_" STAGED_VARIANT,
                  "mppSort: bucket sort of 32-bit keys in five kernels, against CUB's radix sort",
                  defaults);
  std::int64_t buckets = ch03::naive::kDefaultBuckets;
  bool extremes = false, skip_naive = false, host_loop = false, equal_widths = false;
  std::string sorter_name = "counting", adversary_name = "none";
  std::uint64_t reuse_capacity = 0;
  cli.AddInt("buckets", &buckets, 1, ch03::naive::kMaxBuckets,
             "buckets h of the naive variant (the optimized one picks h from n)");
  cli.AddFlag("extremes", &extremes, "plant keys 0 and 0xFFFFFFFF in the input");
  cli.AddFlag("skip-naive", &skip_naive,
              "do not run the naive variant (slow on large n: its big buckets sort in global "
              "memory)");
  cli.AddChoice("bucket-sort", &sorter_name, {"counting", "bitonic", "radix"},
                "on-chip sort of each bucket in the optimized variant");
  cli.AddFlag("host-loop", &host_loop,
              "optimized: the host drives the levels after the first (one sync per level)");
  cli.AddFlag("equal-widths", &equal_widths,
              "optimized: level 0 always uses equal-width buckets, without sampling the input "
              "for its values or a cluster (row optimized-equalwidths)");
  cli.AddChoice("adversary", &adversary_name, {"none", "powers", "spike", "outlier"},
                "keys that defeat equal-width buckets instead of --dist: 0 and every 2^k; 99.9% "
                "one value; a narrow range plus 0xFFFFFFFF");
  cli.AddSize("workspace", &reuse_capacity, 0, ch03::kMaxKeys,
              "optimized: also time the sort with a workspace sized for this many keys (row "
              "optimized:workspace-N), as a caller that reuses one large workspace would");
  auto ctx = staged::StartRun(cli, argc, argv);
  if (!ctx) return 0;
  const staged::CommonOptions& opt = ctx->options;
  const std::size_t n = opt.n;
  const std::string variant = STAGED_VARIANT;
  const bool is_optimized = variant == "optimized";
  const bool run_naive = !is_optimized || !skip_naive;
  const bool run_optimized = is_optimized;
  const ch03::Adversary adversary = ch03::ParseAdversary(adversary_name);
  ch03::optimized::Options options;
  options.sorter = sorter_name == "radix"     ? ch03::optimized::BucketSorter::kRadix
                   : sorter_name == "bitonic" ? ch03::optimized::BucketSorter::kBitonic
                                              : ch03::optimized::BucketSorter::kCounting;
  options.device_loop = !host_loop;
  options.sample_first = !equal_widths;
  std::string opt_name = "optimized";
  if (sorter_name != "counting") opt_name += "-" + sorter_name;
  if (host_loop) opt_name += "-hostloop";
  if (equal_widths) opt_name += "-equalwidths";

  // in, out, the partition buffers of naive and optimized, CUB's and thrust's scratch (~n
  // each), the histogram matrix (at most n / 2 entries): about 7 arrays of n keys.
  // A reused workspace adds its partition buffer and matrix (under 1.25 keys per key).
  const std::size_t reuse_bytes = reuse_capacity > n ? reuse_capacity * 5 : 0;
  staged::RequireDeviceMemory(7 * n * sizeof(std::uint32_t) + reuse_bytes + (64u << 20),
                              "mppSort buffers");
  std::vector<std::uint32_t> keys = adversary == ch03::Adversary::kNone
                                        ? staged::Generate<std::uint32_t>(n, opt.dist, opt.seed)
                                        : ch03::AdversarialKeys(n, adversary, opt.seed);
  if (extremes && n >= 1) keys[0] = 0;
  if (extremes && n >= 2) keys[n - 1] = 0xFFFFFFFFu;

  staged::Stream stream;
  const cudaStream_t s = stream.get();
  staged::DeviceBuffer<std::uint32_t> d_in(keys), d_out(n);
  ch03::naive::Workspace naive_ws(run_naive ? n : 0, static_cast<std::uint32_t>(buckets));
  ch03::optimized::Workspace opt_ws(run_optimized ? n : 0, options);
  ch03::library::Workspace lib_ws(n);

  staged::Report report("03_mppsort", opt.seed, ctx->device, "library:cub");
  // The dist column names what was sorted: an adversary, or the distribution (with the planted
  // extremes, so that such rows do not collide with the plain distribution's).
  const std::string dist = (adversary == ch03::Adversary::kNone ? staged::DistributionName(opt.dist)
                                                                : ch03::AdversaryName(adversary)) +
                           (extremes ? "-extremes" : "");
  const double copy_gbps = ctx->device.copy_gbps;
  auto add = [&](const std::string& name, const staged::TimingStats& t, staged::Verified v) {
    staged::ReportRow row;
    row.variant = name;
    row.n = n;
    row.dist = dist;
    row.time = t;
    row.unit = "GE/s";
    row.throughput = t.median_ms > 0 ? n / (t.median_ms * 1e-3) / 1e9 : 0.0;
    if (t.median_ms > 0 && copy_gbps > 0) {
      row.pct_peak = 100.0 * (8.0 * n / (t.median_ms * 1e-3) / 1e9) / copy_gbps;
    }
    row.verified = v;
    return &report.Add(row);
  };

  // Reference: std::sort (timed as the CPU row) or, with --cpu-reps 0, a CPU radix sort.
  std::vector<std::uint32_t> ref;
  if (opt.cpu_reps > 0) {
    staged::TimingOptions cpu_opt{0, opt.cpu_reps, false};
    const staged::TimingStats t = staged::TimeCpu(cpu_opt, [&] { ref = ch03::cpu::Sort(keys); });
    add("cpu", t, staged::Verified::kReference);
  } else if (opt.verify) {
    ref = ch03::cpu::RadixSort(keys);
  }
  auto check = [&](const std::string& what) {
    if (!opt.verify) return staged::Verified::kSkipped;
    const std::vector<std::uint32_t> got = d_out.ToHost();
    const staged::VerifyReport r = staged::CompareExact(ref.data(), got.data(), n);
    if (!r.ok)
      std::cerr << "ch03 " << what << " (seed " << opt.seed << "): " << r.Summary() << "\n";
    return r.ok ? staged::Verified::kYes : staged::Verified::kNo;
  };
  // snippet-begin: ch03-timing
  // One L2 policy for every variant: in + out + an n-key scratch buffer (each variant has one:
  // CUB's double buffer, thrust's temporary block, mppSort's partition buffer).
  const bool flush = staged::ShouldFlushL2(3 * n * sizeof(std::uint32_t), ctx->device.l2_bytes);
  const staged::TimingOptions gpu_opt{opt.warmup, opt.reps, flush, true};
  // Sorts that wait for the host inside a call (to read the sizes of the next step) cannot run
  // behind the timer's gate: their rows are timed without it and include those round trips.
  staged::TimingOptions host_sync_opt = gpu_opt;
  host_sync_opt.gate = false;
  // snippet-end: ch03-timing
  auto run = [&](const std::string& name, auto&& sort, const staged::TimingOptions& timing) {
    d_out.FillBytes(0xFF, s);  // poison: a missing write cannot pass as a sorted key
    sort(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    const staged::Verified v = check(name);
    const staged::TimingStats t = staged::TimeGpu(timing, sort, s);
    return std::make_pair(add(name, t, v), v);
  };

  run(
      "library:cub",
      [&](cudaStream_t st) {
        ch03::library::CubRadixSort(d_in.data(), d_out.data(), n, lib_ws, st);
      },
      gpu_opt);
  run(
      "library:thrust",
      [&](cudaStream_t st) { ch03::library::ThrustSort(d_in.data(), d_out.data(), n, lib_ws, st); },
      gpu_opt);
  if (run_naive) {
    // naive::Sort reads the bucket starts back once to find buckets over its shared tile.
    run(
        "naive",
        [&](cudaStream_t st) { ch03::naive::Sort(d_in.data(), d_out.data(), n, naive_ws, st); },
        host_sync_opt);
  }
  if (run_optimized) {
    auto sort = [&](cudaStream_t st) {
      ch03::optimized::Sort(d_in.data(), d_out.data(), n, opt_ws, st);
    };
    // One untimed sort builds level 0's records and the deeper levels' graph; whether the
    // graph could be built decides whether the sort may run behind the gate.
    sort(s);
    RequireComplete(opt_ws, n, s);
    const bool gated = options.device_loop && !opt_ws.graph.unavailable;
    auto [row, verdict] = run(opt_name, sort, gated ? gpu_opt : host_sync_opt);
    if (skip_naive) row->naive_ref = "none";
    if (reuse_capacity > n) {
      // The same sort through a workspace sized for more keys: its deeper levels must cost what
      // the fitted workspace's do (each scans its own level's matrix, not the buffer).
      ch03::optimized::Workspace big_ws(reuse_capacity, options);
      auto big_sort = [&](cudaStream_t st) {
        ch03::optimized::Sort(d_in.data(), d_out.data(), n, big_ws, st);
      };
      big_sort(s);
      RequireComplete(big_ws, n, s);
      auto [big_row, big_verdict] = run(opt_name + ":workspace-" + SizeName(reuse_capacity),
                                        big_sort, gated ? gpu_opt : host_sync_opt);
      (void)big_verdict;
      if (skip_naive) big_row->naive_ref = "none";
    }
    // Per-stage breakdown: the same sort with events around each stage (level 0's five steps,
    // then all deeper levels together), behind the gate like the total when it can be.
    ch03::optimized::StageTimer timer;
    std::vector<std::vector<double>> samples(ch03::optimized::kStageCount);
    std::optional<staged::L2Flusher> flusher;
    if (flush) flusher.emplace();
    staged::StreamGate gate;
    for (int rep = 0; rep < std::max(opt.reps, 1); ++rep) {
      if (flusher) flusher->Flush(s);
      timer.Reset();
      if (gated) {
        gate.Close(s);
        staged::GateGuard open_on_exit(gate);
        ch03::optimized::Sort(d_in.data(), d_out.data(), n, opt_ws, s, &timer);
      } else {
        ch03::optimized::Sort(d_in.data(), d_out.data(), n, opt_ws, s, &timer);
      }
      const auto ms = timer.Collect();
      if (gated && gate.TimedOut()) staged::ThrowGateTimeout();
      for (int i = 0; i < ch03::optimized::kStageCount; ++i) samples[i].push_back(ms[i]);
    }
    // A stage row's percentage where its traffic is known: min/max reads the keys (4n bytes,
    // against the read ceiling), so does the histogram unless the keys are all equal (then it
    // skips them), and the partition reads and writes them (8n, against the copy bandwidth).
    // The scan's, the sort step's and the deeper levels' traffic depends on the data: no
    // percentage.
    const bool all_equal = n > 0 && std::all_of(keys.begin(), keys.end(),
                                                [&](std::uint32_t k) { return k == keys[0]; });
    const double read_gbps = ctx->device.read_gbps;
    for (int i = 0; i < ch03::optimized::kStageCount; ++i) {
      const auto stage_id = static_cast<ch03::optimized::Stage>(i);
      const staged::TimingStats t = staged::Summarize(samples[i]);
      staged::ReportRow* stage = add(opt_name + ":" + ch03::optimized::kStageNames[i], t, verdict);
      stage->cpu_ref = stage->naive_ref = stage->library_ref = "none";
      const bool reads_keys = stage_id == ch03::optimized::Stage::kMinMax ||
                              (stage_id == ch03::optimized::Stage::kHistogram && !all_equal);
      if (reads_keys && t.median_ms > 0 && read_gbps > 0) {
        stage->pct_peak = 100.0 * (4.0 * n / (t.median_ms * 1e-3) / 1e9) / read_gbps;
      } else if (stage_id != ch03::optimized::Stage::kPartition) {
        stage->pct_peak.reset();
      }
    }
    std::fprintf(stderr, "ch03: %s sorted in %d level(s); deeper levels %s\n", opt_name.c_str(),
                 n > 0 ? opt_ws.LevelsUsed(s) : 0,
                 gated ? "looped on the device (graph)" : "driven from the host");
    if (n > 0) {
      const ch03::optimized::Segment first = opt_ws.ReadFirstSegment(s);
      if (first.sampled == ch03::optimized::kSplitters) {
        std::fprintf(stderr,
                     "ch03: level 0 bucketed around the %u values its sample shows (%u buckets)\n",
                     first.splitters, first.buckets);
      } else if (first.sampled == ch03::optimized::kCore) {
        std::fprintf(stderr,
                     "ch03: level 0 bucketed in three pieces around the crowd its sample shows "
                     "in [%u, %u]: %u + %u + %u buckets\n",
                     first.core.min, first.core.max, first.core_low,
                     first.buckets - first.core_low - first.core_high, first.core_high);
      } else {
        std::fprintf(stderr, "ch03: level 0 bucketed by %u equal widths\n", first.buckets);
      }
    }
    std::fprintf(
        stderr, "ch03: planned for %s: %s partition, level-0 tile of %u keys\n",
        opt_ws.limits().name.c_str(),
        opt_ws.partition() == ch03::optimized::PartitionPath::kRankTile ? "rank-tile" : "scatter",
        n > 0 ? opt_ws.first_plan().tile.keys : 0u);
  }
  for (const SourceRow& paper : kSourceTable) {
    if (paper.n == n) {
      std::fprintf(stderr,
                   "ch03: the Portuguese report (GTX 1080 Ti, h=1024, 10 reps) at this n: mppSort "
                   "%.2f GE/s, "
                   "Thrust %.2f GE/s (%.2fx)\n",
                   paper.mppsort, paper.thrust, paper.mppsort / paper.thrust);
    }
  }
  return staged::FinishRun(report, opt);
}

}  // namespace

/// Runs the chapter driver; exit codes as in errors.hpp.
/// @param[in] argc argument count
/// @param[in] argv arguments
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
