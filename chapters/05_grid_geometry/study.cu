/**
 * @file study.cu
 * @brief `ch05_study`: the paper's sweep in one process. Tables 1 (global memory), 2 (CPU),
 *        3 (shared memory) and 4 (block sizes) on this GPU beside Widuch's 9600M GT numbers
 *        (study_tables.cpp), and the launch-overhead study (launch_overhead.cpp). This file is
 *        the driver: which rows run at which N, how each is verified, and the report rows.
 *
 * Sweep: the paper's N (160 … 1760 step 160, then 2080 … 6240 step 320; Table 4 stops at 1600),
 * limited by --max-n. Below 160 (--max-n < 160, for sanitizers) the sweep is N = {max-n/2 − 7,
 * max-n}, sizes that are not multiples of any tile.
 *
 * Budget: single-block arrangements put all the work on one SM (at N = 6240, 2.4·10¹¹
 * multiply-adds through one block at a time): they run only up to --single-max-n (default
 * 2240). Any column (CPU included) stops once its next point, predicted from its last one by N³
 * scaling, would exceed --point-budget-ms per run. Each point gets --reps timed reps, fewer
 * when they would take longer than --rep-budget-ms (`ch05::TimingFor`): the long points of the
 * single-block, block-size and 1-D global columns, where one run takes tens to hundreds of
 * milliseconds, get fewer than --reps (at least one).
 *
 * Timing: the 2-D grid, graph replays and persistent launches are GPU time behind the stream
 * gate; the plain 1-D and single-block loops and the empty-launch loop include the host's
 * submission of their launches (measure.cuh, `IsGated`).
 *
 * Verification (every variant at every N): where the CPU product ran (N small enough for the
 * budget), every element of every variant against it, exactly. Beyond, the 2-D shared M×2M
 * result is checked on --samples CPU dot products plus the corners, and every other variant is
 * compared with it element by element (exactly).
 *
 * Output: --format table prints the tables; csv/json print the report rows on stdout (variant
 * names such as `grid_2d_mx2m_shared`, `block_4x8`, `grid_single_mx2m_shared+graph`,
 * `empty_launch+graph`, `cpu`; n = N) and the tables on stderr. Progress goes to stderr.
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "chapters/05_grid_geometry/launch_overhead.hpp"
#include "chapters/05_grid_geometry/measure.cuh"
#include "chapters/05_grid_geometry/paper_tables.hpp"
#include "chapters/05_grid_geometry/study_results.hpp"
#include "chapters/05_grid_geometry/study_tables.hpp"
#include "common/cuda_check.hpp"
#include "common/entry.hpp"
#include "common/stream.hpp"
#include "common/timing_caveats.hpp"

namespace {

using ch05::Arrangement;
using ch05::Config;
using ch05::Launch;
using ch05::Memory;
using ch05::Shape;

constexpr const char* kChapter = "05_grid_geometry";

/// Every non-empty ordered subset of "1,2,3,4", the accepted values of --tables.
std::vector<std::string> TableChoices() {
  std::vector<std::string> out;
  for (int mask = 1; mask < 16; ++mask) {
    std::string s;
    for (int t = 0; t < 4; ++t) {
      if (mask & (1 << t)) s += (s.empty() ? "" : ",") + std::to_string(t + 1);
    }
    out.push_back(s);
  }
  return out;
}

/// The sweep's N: the paper's sizes up to @p max_n, or two awkward sizes below the first.
std::vector<int> SweepSizes(std::int64_t max_n) {
  std::vector<int> ns;
  for (int n : ch05::paper::kSizes) {
    if (n <= max_n) ns.push_back(n);
  }
  if (ns.empty()) {
    const int small = static_cast<int>(max_n / 2 - 7);
    if (small >= 1) ns.push_back(small);
    ns.push_back(static_cast<int>(max_n));
  }
  return ns;
}

/// Whether the GPU has a kernel run-time limit (a display watchdog).
bool WatchdogOn(int device) {
  int timeout = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&timeout, cudaDevAttrKernelExecTimeout, device));
  return timeout != 0;
}

/// The device, the watchdog and the conventions, before the tables.
void PrintHeader(std::FILE* out, const staged::DeviceInfo& device, bool watchdog,
                 double longest_launch_ms, std::int64_t single_max_n, std::int64_t budget_ms) {
  std::fprintf(out, "device: %s\n", device.Describe().c_str());
  std::fprintf(
      out, "kernel run-time limit (watchdog): %s; longest single 2-D launch measured: %.1f ms\n",
      watchdog ? "ON" : "none (cudaDevAttrKernelExecTimeout = 0)", longest_launch_ms);
  std::fprintf(out,
               "int32 values in [-8, 8]; times are medians in ms; '-' = not run (paper: not "
               "measured; here: over --single-max-n %lld or the %lld ms point budget)\n",
               static_cast<long long>(single_max_n), static_cast<long long>(budget_ms));
}

/// Why the paper's 2-D columns stop early, and how this GPU compares.
void PrintWatchdogNote(std::FILE* out, bool watchdog, double longest_launch_ms) {
  std::fprintf(out,
               "\nWatchdog: the paper's Windows display driver killed kernels running longer than "
               "about 2 s (WDDM TDR), so its one-launch 2-D grid stopped at N = 960 (global) and "
               "1760 (shared). Here the limit is %s and the longest 2-D launch took %.1f ms.\n",
               watchdog ? "ON (a display is attached)" : "off (no display on this GPU)",
               longest_launch_ms);
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = 6240;
  defaults.min_n = 1;
  defaults.max_n = static_cast<std::uint64_t>(ch05::kMaxN);
  defaults.has_dist = false;
  defaults.reps = 10;
  defaults.warmup = 1;
  defaults.cpu_reps = 1;
  staged::Cli cli("ch05_study",
                  "Widuch (2010) Tables 1-4 and the launch-overhead study on this GPU (--n or "
                  "--max-n: the largest N of the sweep; the smaller of the two applies)",
                  defaults);
  std::int64_t max_n = 6240;
  std::int64_t single_max_n = 2240;
  std::int64_t budget_ms = 1000;
  std::int64_t rep_budget_ms = 300;
  std::int64_t samples = 2048;
  std::string tables = "1,2,3,4";
  bool no_graphs = false;
  cli.AddInt("max-n", &max_n, 1, ch05::kMaxN,
             "largest N of the sweep; below 160 the sweep is N = {max-n/2-7, max-n}");
  cli.AddChoice("tables", &tables, TableChoices(), "which of the paper's tables to run");
  cli.AddInt("single-max-n", &single_max_n, 0, ch05::kMaxN,
             "largest N for the single-block columns of Tables 1 and 3 (one SM does all the work; "
             "seconds per point beyond)");
  cli.AddInt("point-budget-ms", &budget_ms, 1, 3600000,
             "skip a point whose time, predicted by N^3 from the column's last point, exceeds "
             "this");
  cli.AddInt("rep-budget-ms", &rep_budget_ms, 1, 3600000,
             "fewer than --reps timed reps (at least 1) for a point whose reps would take longer");
  cli.AddInt("samples", &samples, 0, 1 << 20,
             "CPU dot products that check the 2-D result where the full CPU product is not run");
  cli.AddFlag("no-graphs", &no_graphs, "skip the launch-overhead study");
  auto ctx = staged::StartRun(cli, argc, argv);
  if (!ctx) return 0;
  const staged::CommonOptions& opt = ctx->options;
  // --n is the common flag for the problem size; here it bounds the sweep like --max-n.
  max_n = std::min<std::int64_t>(max_n, static_cast<std::int64_t>(opt.n));
  ch05::study::TableSelection want;
  for (int t = 1; t <= 4; ++t) want.want[t] = tables.find(char('0' + t)) != std::string::npos;

  const std::vector<int> ns = SweepSizes(max_n);
  const bool tiny = ns.front() < ch05::paper::kSizes[0];
  std::set<int> graph_ns = {160, 480, 960, 1600};
  if (tiny) graph_ns = std::set<int>(ns.begin(), ns.end());

  staged::Stream stream;
  // No library row: chapter 05 compares arrangements with each other, the paper and the CPU.
  staged::Report report(kChapter, opt.seed, ctx->device, "library:none");
  ch05::study::Results res;
  const ch05::TimingPlan plan{opt.warmup, opt.reps, static_cast<double>(rep_budget_ms)};
  const Config gpu_ref_cfg{Arrangement::kGrid2d, Shape::kMx2M, Memory::kShared, 16};
  const Config single16{Arrangement::kSingle, Shape::kMx2M, Memory::kShared, 16};
  const std::string naive_name = ch05::VariantName(ch05::ParseVariant("naive"));
  double longest_launch_ms = 0.0;
  // The single-block M×2M shared rows, which Table 4 repeats as block_16x32.
  std::map<int, staged::ReportRow> single16_rows;

  // The report rows (the CSV): GIOP/s and % of the int32 peak; the empty-launch rows compute
  // nothing, so they carry only their time.
  auto add_row = [&](const std::string& name, int n, const staged::TimingStats& t,
                     staged::Verified v) {
    staged::ReportRow row;
    row.variant = name;
    row.n = static_cast<std::uint64_t>(n);
    row.dist = "-";
    row.time = t;
    row.unit = ch05::kUnit;
    if (name.rfind("empty_launch", 0) != 0) {
      row.throughput = ch05::Giops(n, t.median_ms);
      row.pct_peak = ch05::PercentOfIntPeak(row.throughput, ctx->device);
    }
    row.verified = v;
    row.naive_ref = naive_name;
    report.Add(row);
    res.Set(name, n, t.median_ms);
    if (name == ch05::VariantName(single16)) single16_rows[n] = row;
  };

  for (int n : ns) {
    std::cerr << "[ch05_study] N = " << n << "\n";
    ch05::Problem p(n, opt.seed);

    // CPU product: Table 2 and the full reference, while the budget allows.
    std::vector<std::int32_t> cpu_c;
    if ((want.want[2] || opt.verify) && res.Affordable("cpu", n, static_cast<double>(budget_ms))) {
      cpu_c.resize(static_cast<std::size_t>(n) * n);
      const staged::TimingStats t = staged::TimeCpu(
          staged::TimingOptions{0, std::max(1, opt.cpu_reps), false},
          [&] { ch04::cpu::Matmul<std::int32_t>(p.a.data(), p.b.data(), cpu_c.data(), n, n, n); });
      add_row("cpu", n, t, staged::Verified::kReference);
      std::cerr << "  cpu " << t.median_ms << " ms\n";
    }
    const bool full = opt.verify && !cpu_c.empty();

    // Checks one row against the CPU product (all of C), or, beyond the CPU's budget, the GPU
    // reference against sampled dot products and every other row against the GPU reference.
    std::vector<std::int32_t> reference;
    auto measure = [&](const std::string& name, const Config& cfg, Launch launch) {
      const ch05::Work work = ch05::MakeWork(p, cfg, launch, stream.get());
      ch05::Checker check;
      if (opt.verify && reference.empty() && !full) {
        check = [&](const std::vector<std::int32_t>& c) {
          return ch05::SampleCheck(p.a.data(), p.b.data(), c.data(), n, static_cast<int>(samples),
                                   opt.seed);
        };
      } else if (opt.verify) {
        const std::vector<std::int32_t>& ref = full ? cpu_c : reference;
        check = [&ref](const std::vector<std::int32_t>& c) {
          return staged::CompareExact(ref.data(), c.data(), c.size());
        };
      }
      ch05::Measured m = ch05::RunCheckTime(p, work, check, plan, stream.get());
      const staged::Verified v = !opt.verify  ? staged::Verified::kSkipped
                                 : m.check.ok ? staged::Verified::kYes
                                              : staged::Verified::kNo;
      if (!m.check.ok) std::cerr << "  " << name << " N=" << n << ": " << m.check.Summary() << "\n";
      add_row(name, n, m.time, v);
      if (launch == Launch::kPlain && cfg.arrangement == Arrangement::kGrid2d) {
        longest_launch_ms = std::max(longest_launch_ms, m.time.max_ms);
      }
      std::cerr << "  " << name << " " << m.time.median_ms << " ms x" << m.time.reps
                << (m.check.ok ? "" : " FAILED") << "\n";
      return m;
    };
    {
      ch05::Measured m = measure(ch05::VariantName(gpu_ref_cfg), gpu_ref_cfg, Launch::kPlain);
      if (opt.verify && !full) reference = std::move(m.c);
    }

    // Tables 1 and 3.
    for (Memory memory : {Memory::kGlobal, Memory::kShared}) {
      if (!want.want[memory == Memory::kGlobal ? 1 : 3]) continue;
      for (const Config& cfg : ch05::study::TableColumns(memory)) {
        const std::string name = ch05::VariantName(cfg);
        if (name == ch05::VariantName(gpu_ref_cfg)) continue;  // measured above
        if (cfg.arrangement == Arrangement::kSingle &&
            (n > single_max_n || !res.Affordable(name, n, static_cast<double>(budget_ms)))) {
          continue;
        }
        measure(name, cfg, Launch::kPlain);
      }
    }

    // Table 4: single block, shared, M×2M with M = 1, 2, 4, 8 (16 is Table 3's column).
    if (want.want[4] && (n <= ch05::study::kTable4MaxN || tiny)) {
      for (int m : ch05::kSupportedM) {
        const Config cfg{Arrangement::kSingle, Shape::kMx2M, Memory::kShared, m};
        const std::string name = ch05::VariantName(cfg, true);
        if (m == 16) continue;  // block_16x32 is single16, repeated below
        if (!res.Affordable(name, n, static_cast<double>(budget_ms))) continue;
        measure(name, cfg, Launch::kPlain);
      }
    }

    // Beyond the paper: launch overhead, at a few N.
    if (!no_graphs && graph_ns.count(n) != 0) {
      ch05::study::MeasureLaunchOverhead(
          n, res,
          [&](const std::string& name, const Config& cfg, Launch launch) {
            measure(name, cfg, launch);
          },
          [&](const std::string& name, const staged::TimingStats& t) {
            add_row(name, n, t, staged::Verified::kReference);
          },
          opt.warmup, opt.reps, stream.get());
    }
  }
  // Table 4's 16x32 column is the single-block M×2M shared measurement under its block name.
  if (want.want[4]) {
    for (const auto& [n, row] : single16_rows) {
      if (n > ch05::study::kTable4MaxN && !tiny) continue;
      staged::ReportRow copy = row;
      copy.variant = ch05::VariantName(single16, true);
      report.Add(copy);
      res.Set(copy.variant, n, copy.time.median_ms);
    }
  }

  const bool watchdog = WatchdogOn(ctx->device.ordinal);
  auto print_study = [&](std::FILE* out) {
    PrintHeader(out, ctx->device, watchdog, longest_launch_ms, single_max_n, budget_ms);
    ch05::study::PrintPaperTables(out, res, ns, want);
    ch05::study::PrintLaunchOverhead(out, res, ns);
    PrintWatchdogNote(out, watchdog, longest_launch_ms);
  };
  if (opt.format != staged::OutputFormat::kTable) {
    // CSV/JSON keep stdout machine-readable; the tables go to the log on stderr.
    report.Print(std::cout, opt.format);
    std::cout.flush();
    print_study(stderr);
  } else {
    print_study(stdout);
    std::fprintf(stdout, "\nverified: %s\n",
                 report.AllVerified() ? (opt.verify ? "yes" : "skipped") : "no");
  }
  std::fflush(stdout);
  staged::PrintTimingCaveats(opt.format == staged::OutputFormat::kTable ? std::cout : std::cerr);
  std::cout.flush();
  if (!report.AllVerified()) {
    throw staged::VerificationError("a variant differs from its reference (rerun with --seed " +
                                    std::to_string(opt.seed) + ")");
  }
  return 0;
}

}  // namespace

/// Entry point: maps exceptions to the chapter's exit codes.
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
