/**
 * @file main.cu
 * @brief Driver of ch03_naive and ch03_optimized: generate keys, run every variant once and
 *        verify it, then time it; rows in GE/s (n / time / 1e9), as the Portuguese report reports.
 *
 * Rows: cpu (std::sort); CUB's radix sort in each form (`library:cub-keys32`, `-keys64`: input
 * kept; `-dbuf32`, `-dbuf64`: DoubleBuffer, input overwritten) and `library:thrust`; naive;
 * ch03_optimized adds one row per stage (`optimized:<stage>`; stages 1 to 3 up to
 * kOneLevelMaxKeys), `optimized` (the default sort, or what the chapter flags ask for), its
 * DoubleBuffer form (`optimized-dbuf`) and its per-step breakdown (`step:<step>`).
 * `vs_library` compares each row with the fastest CUB row of the same contract, measured in this
 * run: the fastest input-keeping row, and for `-dbuf` rows the fastest DoubleBuffer row.
 * `pct_peak` is the effective bandwidth of one read and one write of the keys (8n bytes / time)
 * against the measured copy bandwidth (of the step rows, only min/max and histogram, 4n bytes
 * against the read bandwidth, and the partition, 8n against the copy bandwidth). Every GPU row
 * gets the same L2 treatment (flushed before each rep when in + out + scratch is below 4x L2).
 * With `--cpu-reps 0` the CPU row is dropped and results are checked against a CPU LSD radix sort
 * (O(n)) instead of std::sort: the reference never comes from a GPU library.
 *
 * ch03_optimized's flags: `--stages all|none|1-3|4-6` (which stages get a row), `--bucket-sort
 * counting|bitonic|radix`, `--host-loop`, `--equal-widths`, `--pass-tile` (the `optimized` row,
 * renamed `optimized-bitonic` etc.), `--workspace N` (also time the sort through a workspace
 * sized for N keys). Both executables: `--adversary powers|spike|outlier` (in place of `--dist`),
 * `--extremes`, `--buckets` (naive), `--skip-naive` (ch03_optimized).
 */
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chapters/03_mppsort/driver.cuh"
#include "chapters/03_mppsort/library.cuh"
#include "chapters/03_mppsort/mppsort.cuh"
#include "chapters/03_mppsort/stages.cuh"
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

/// What the driver says about the optimized sort's last run through @p ws.
void DescribeLevels(ch03::optimized::Workspace& ws, const std::string& name, std::size_t n,
                    bool gated, cudaStream_t s) {
  std::fprintf(stderr, "ch03: %s sorted in %d level(s); deeper levels %s\n", name.c_str(),
               n > 0 ? ws.LevelsUsed(s) : 0,
               gated ? "looped on the device (graph)" : "driven from the host");
  if (n == 0) return;
  const ch03::optimized::Segment first = ws.ReadFirstSegment(s);
  if (first.sampled == ch03::optimized::kSplitters) {
    std::fprintf(stderr,
                 "ch03: level 0 bucketed around the %u values its sample shows (%u buckets)\n",
                 first.splitters, first.buckets);
  } else if (first.sampled == ch03::optimized::kCore) {
    std::fprintf(stderr,
                 "ch03: level 0 bucketed in three pieces around the crowd its sample shows in "
                 "[%u, %u]: %u + %u + %u buckets\n",
                 first.core.min, first.core.max, first.core_low,
                 first.buckets - first.core_low - first.core_high, first.core_high);
  } else {
    std::fprintf(stderr, "ch03: level 0 bucketed by %u equal widths\n", first.buckets);
  }
  const ch03::optimized::PartitionPath path = ws.partition();
  const char* partition = path == ch03::optimized::PartitionPath::kChunkTile  ? "chunk-tile"
                          : path == ch03::optimized::PartitionPath::kPassTile ? "pass-tile"
                                                                              : "scatter";
  std::fprintf(stderr, "ch03: planned for %s: %s partition, level-0 tile of %u keys\n",
               ws.limits().name.c_str(), partition, ws.first_plan().tile.keys);
}

/// CUB's radix sort in each form, and thrust::sort; each row compared with the fastest CUB
/// row of its contract, measured here. Returns the fastest DoubleBuffer row.
std::string TimeLibrary(ch03::Driver& d) {
  ch03::library::Workspace ws(d.n());
  std::vector<std::string> keeping, overwriting;  // the rows of each contract
  for (const ch03::library::CubEntry& e : ch03::library::CubEntries()) {
    if (!ch03::library::CountHolds(d.n(), e.wide_count)) continue;
    if (e.keeps_input) {
      d.Run(
          e.row,
          [&](cudaStream_t st) {
            ch03::library::CubSortKeys(d.in(), d.out(), d.n(), e.wide_count, ws, st);
          },
          d.gated());
    } else {
      d.RunInPlace(
          e.row,
          [&](cudaStream_t st) {
            return ch03::library::CubSortDoubleBuffer(d.keys(), d.out(), d.n(), e.wide_count, ws,
                                                      st);
          },
          d.gated());
    }
    (e.keeps_input ? keeping : overwriting).push_back(e.row);
  }
  const std::string keeps = d.report().FastestOf(keeping);
  const std::string dbuf = d.report().FastestOf(overwriting);
  d.report().SetLibraryVariant(keeps);
  for (const ch03::library::CubEntry& e : ch03::library::CubEntries()) {
    if (!e.keeps_input) d.report().SetLibraryRef(e.row, dbuf);
  }
  std::fprintf(stderr,
               "ch03: vs_library against %s, the fastest CUB row that keeps its input; "
               "DoubleBuffer rows against %s\n",
               keeps.c_str(), dbuf.c_str());
  d.Run(
      "library:thrust",
      [&](cudaStream_t st) { ch03::library::ThrustSort(d.in(), d.out(), d.n(), ws, st); },
      d.gated());
  return dbuf;
}

/// The stage rows (`optimized:<stage>`) of stages 1 to 3 and of stages 4 to 6, as asked, each
/// sort on a workspace of its own, freed before the next one is made.
void TimeStages(ch03::Driver& d, bool one_level_stages, bool level_stages) {
  bool noted = false;
  for (const ch03::StageInfo& info : ch03::AllStages()) {
    const bool one_level = info.stage <= ch03::Stage::kRegisters;
    if (!(one_level ? one_level_stages : level_stages)) continue;
    if (one_level && d.n() > ch03::kOneLevelMaxKeys) {
      if (!noted) {
        std::fprintf(stderr,
                     "ch03: stages 1-3 not timed above %lluM keys (their oversized buckets sort "
                     "in global memory)\n",
                     static_cast<unsigned long long>(ch03::kOneLevelMaxKeys >> 20));
      }
      noted = true;
      continue;
    }
    ch03::StageSorter sorter(info.stage, d.n());
    auto sort = [&](cudaStream_t st) { sorter.Sort(d.in(), d.out(), d.n(), st); };
    bool gated = false;  // stages 1 to 3 read the bucket starts back
    if (ch03::optimized::Workspace* ws = sorter.levels()) {
      sort(d.stream());  // level 0's records and the deeper levels' graph, untimed
      RequireComplete(*ws, d.n(), d.stream());
      gated = !ws->graph.unavailable;
    }
    d.Run(std::string("optimized:") + info.name, sort, gated ? d.gated() : d.ungated());
  }
}

/// The per-step rows (`step:<step>`) of the sort through @p ws: events around each step of
/// level 0 and around all deeper levels, behind the gate like the total when it can be.
void TimeSteps(ch03::Driver& d, ch03::optimized::Workspace& ws, bool gated) {
  using ch03::optimized::Step;
  ch03::optimized::StepTimer timer;
  std::vector<std::vector<double>> samples(ch03::optimized::kStepCount);
  std::optional<staged::L2Flusher> flusher;
  if (d.flushes_l2()) flusher.emplace();
  staged::StreamGate gate;
  const cudaStream_t s = d.stream();
  for (int rep = 0; rep < std::max(d.gated().reps, 1); ++rep) {
    if (flusher) flusher->Flush(s);
    timer.Reset();
    if (gated) {
      gate.Close(s);
      staged::GateGuard open_on_exit(gate);
      ch03::optimized::Sort(d.in(), d.out(), d.n(), ws, s, &timer);
    } else {
      ch03::optimized::Sort(d.in(), d.out(), d.n(), ws, s, &timer);
    }
    const auto ms = timer.Collect();
    if (gated && gate.TimedOut()) staged::ThrowGateTimeout();
    for (int i = 0; i < ch03::optimized::kStepCount; ++i) samples[i].push_back(ms[i]);
  }
  // A step's percentage where its traffic is known: min/max reads the keys (4n bytes, against
  // the read ceiling), so does the histogram unless the keys are all equal (then it skips them),
  // and the partition reads and writes them (8n, against the copy bandwidth). The scan's, the
  // sort step's and the deeper levels' traffic depends on the data: no percentage.
  const std::vector<std::uint32_t>& keys = d.host_keys();
  const bool all_equal =
      !keys.empty() &&
      std::all_of(keys.begin(), keys.end(), [&](std::uint32_t k) { return k == keys[0]; });
  const double read_gbps = d.read_gbps();
  const staged::Verified v = d.Check("step breakdown", d.out());
  for (int i = 0; i < ch03::optimized::kStepCount; ++i) {
    const auto step = static_cast<Step>(i);
    const staged::TimingStats t = staged::Summarize(samples[i]);
    staged::ReportRow& row = d.Add(std::string("step:") + ch03::optimized::kStepNames[i], t, v);
    row.cpu_ref = row.naive_ref = row.library_ref = "none";
    const bool reads_keys = step == Step::kMinMax || (step == Step::kHistogram && !all_equal);
    if (reads_keys && t.median_ms > 0 && read_gbps > 0) {
      row.pct_peak = 100.0 * (4.0 * d.n() / (t.median_ms * 1e-3) / 1e9) / read_gbps;
    } else if (step != Step::kPartition) {
      row.pct_peak.reset();
    }
  }
}

/// The `optimized` row (the default sort, or what the chapter flags ask for); for the default
/// sort also its DoubleBuffer form and its per-step breakdown; and the same sort through a
/// workspace sized for @p reuse_capacity keys.
void TimeOptimized(ch03::Driver& d, const ch03::optimized::Options& options,
                   const std::string& name, std::uint64_t reuse_capacity,
                   const std::string& dbuf_ref) {
  ch03::optimized::Workspace ws(d.n(), options);
  auto sort = [&](cudaStream_t st) { ch03::optimized::Sort(d.in(), d.out(), d.n(), ws, st); };
  // One untimed sort builds level 0's records and the deeper levels' graph; whether the graph
  // could be built decides whether the sort may run behind the gate.
  sort(d.stream());
  RequireComplete(ws, d.n(), d.stream());
  const bool gated = options.device_loop && !ws.graph.unavailable;
  const staged::TimingOptions& timing = gated ? d.gated() : d.ungated();
  d.Run(name, sort, timing);
  if (name == "optimized") {
    // The DoubleBuffer contract: the input may be overwritten, as CUB's DoubleBuffer rows do.
    const std::string dbuf = name + "-dbuf";
    d.RunInPlace(
        dbuf,
        [&](cudaStream_t st) {
          ch03::optimized::SortDoubleBuffer(d.keys(), d.out(), d.n(), ws, st);
          return static_cast<const std::uint32_t*>(d.keys());
        },
        timing);
    RequireComplete(ws, d.n(), d.stream());
    d.report().SetLibraryRef(dbuf, dbuf_ref);
  }
  if (reuse_capacity > d.n()) {
    // The same sort through a workspace sized for more keys: its deeper levels must cost what
    // the fitted workspace's do (each scans its own level's matrix, not the buffer).
    ch03::optimized::Workspace big(reuse_capacity, options);
    auto big_sort = [&](cudaStream_t st) {
      ch03::optimized::Sort(d.in(), d.out(), d.n(), big, st);
    };
    big_sort(d.stream());
    RequireComplete(big, d.n(), d.stream());
    d.Run(name + ":workspace-" + SizeName(reuse_capacity), big_sort, timing);
  }
  if (name == "optimized") TimeSteps(d, ws, gated);
  DescribeLevels(ws, name, d.n(), gated, d.stream());
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = 8u << 20;
  defaults.min_n = 0;
  defaults.max_n = ch03::kMaxKeys;
  const bool is_optimized = std::string(STAGED_VARIANT) == "optimized";
  staged::Cli cli("ch03_" STAGED_VARIANT,
                  "mppSort: bucket sort of 32-bit keys in five kernels, against CUB's radix sort",
                  defaults);
  std::int64_t buckets = ch03::naive::kDefaultBuckets;
  bool extremes = false, skip_naive = false, host_loop = false, equal_widths = false;
  bool pass_tile = false;
  std::string sorter_name = "counting", adversary_name = "none", stages = "all";
  std::uint64_t reuse_capacity = 0;
  cli.AddInt("buckets", &buckets, 1, ch03::naive::kMaxBuckets,
             "buckets h of the naive variant (the optimized one picks h from n)");
  cli.AddFlag("extremes", &extremes, "plant keys 0 and 0xFFFFFFFF in the input");
  cli.AddChoice("adversary", &adversary_name, {"none", "powers", "spike", "outlier"},
                "keys that defeat equal-width buckets instead of --dist: 0 and every 2^k; 99.9% "
                "one value; a narrow range plus 0xFFFFFFFF");
  if (is_optimized) {
    cli.AddFlag("skip-naive", &skip_naive,
                "do not run the naive variant (slow on large n: its big buckets sort in global "
                "memory)");
    cli.AddChoice("stages", &stages, {"all", "none", "1-3", "4-6"},
                  "which stages to time as rows of their own, optimized:<stage> (stages 1-3 "
                  "only up to 16M keys)");
    cli.AddChoice("bucket-sort", &sorter_name, {"counting", "bitonic", "radix"},
                  "the optimized row's on-chip sort of each bucket (row optimized-bitonic, "
                  "optimized-radix)");
    cli.AddFlag("host-loop", &host_loop,
                "the optimized row's levels after the first driven by the host (one sync per "
                "level; row optimized-hostloop)");
    cli.AddFlag("equal-widths", &equal_widths,
                "the optimized row's level 0 with equal-width buckets, without a sample of the "
                "input (row optimized-equalwidths)");
    cli.AddFlag("pass-tile", &pass_tile,
                "the optimized row's partition ranks one pass of a chunk at a time even where a "
                "block holds the whole chunk (row optimized-passtile)");
    cli.AddSize("workspace", &reuse_capacity, 0, ch03::kMaxKeys,
                "also time the sort with a workspace sized for this many keys (row "
                "optimized:workspace-N), as a caller that reuses one large workspace would");
  }
  auto ctx = staged::StartRun(cli, argc, argv);
  if (!ctx) return 0;
  const staged::CommonOptions& opt = ctx->options;
  const std::size_t n = opt.n;
  const ch03::Adversary adversary = ch03::ParseAdversary(adversary_name);
  ch03::optimized::Options options;
  options.sorter = sorter_name == "radix"     ? ch03::optimized::BucketSorter::kRadix
                   : sorter_name == "bitonic" ? ch03::optimized::BucketSorter::kBitonic
                                              : ch03::optimized::BucketSorter::kCounting;
  options.device_loop = !host_loop;
  options.sample_first = !equal_widths;
  options.pass_tile = pass_tile;
  std::string opt_name = "optimized";
  if (sorter_name != "counting") opt_name += "-" + sorter_name;
  if (host_loop) opt_name += "-hostloop";
  if (equal_widths) opt_name += "-equalwidths";
  if (pass_tile) opt_name += "-passtile";

  // in, out, the DoubleBuffer rows' keys, one variant's workspace at a time (a partition
  // buffer and a matrix of at most n / 2 entries), CUB's and thrust's scratch (~n each), the
  // naive workspace (~1.1 n): about 8 arrays of n keys. A reused workspace adds its partition
  // buffer and matrix (under 1.25 keys per key).
  const std::size_t reuse_bytes = reuse_capacity > n ? reuse_capacity * 5 : 0;
  staged::RequireDeviceMemory(8 * n * sizeof(std::uint32_t) + reuse_bytes + (64u << 20),
                              "mppSort buffers");
  std::vector<std::uint32_t> keys = adversary == ch03::Adversary::kNone
                                        ? staged::Generate<std::uint32_t>(n, opt.dist, opt.seed)
                                        : ch03::AdversarialKeys(n, adversary, opt.seed);
  if (extremes && n >= 1) keys[0] = 0;
  if (extremes && n >= 2) keys[n - 1] = 0xFFFFFFFFu;
  // The dist column names what was sorted: an adversary, or the distribution (with the planted
  // extremes, so that such rows do not collide with the plain distribution's).
  const std::string dist = (adversary == ch03::Adversary::kNone ? staged::DistributionName(opt.dist)
                                                                : ch03::AdversaryName(adversary)) +
                           (extremes ? "-extremes" : "");

  ch03::Driver d(*ctx, std::move(keys), dist);
  const std::string dbuf_ref = TimeLibrary(d);
  // The default sort is timed next, beside its baselines: rows timed after the stage rows ran
  // measurably slower at 1M-4M keys than the same sort timed before them.
  if (is_optimized) TimeOptimized(d, options, opt_name, reuse_capacity, dbuf_ref);
  if (!skip_naive) {
    ch03::naive::Workspace naive_ws(n, static_cast<std::uint32_t>(buckets));
    // naive::Sort reads the bucket starts back once to find buckets over its shared tile.
    d.Run(
        "naive", [&](cudaStream_t st) { ch03::naive::Sort(d.in(), d.out(), n, naive_ws, st); },
        d.ungated());
  }
  if (is_optimized && stages != "none") TimeStages(d, stages != "4-6", stages != "1-3");
  for (const SourceRow& paper : kSourceTable) {
    if (paper.n == n) {
      std::fprintf(stderr,
                   "ch03: the Portuguese report (GTX 1080 Ti, h=1024, 10 reps) at this n: mppSort "
                   "%.2f GE/s, Thrust %.2f GE/s (%.2fx)\n",
                   paper.mppsort, paper.thrust, paper.mppsort / paper.thrust);
    }
  }
  return staged::FinishRun(d.report(), opt);
}

}  // namespace

/// Runs the chapter driver; exit codes as in errors.hpp.
/// @param[in] argc argument count
/// @param[in] argv arguments
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
