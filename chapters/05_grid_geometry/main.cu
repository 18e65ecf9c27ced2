/**
 * @file main.cu
 * @brief The driver of every chapter 05 executable: `ch05_<variant>` runs its own configuration
 *        (STAGED_VARIANT names it; VariantTable() maps the name to a Config) and the references
 *        its ratios need: the naive variant, chapter 04's 16×16 int tile and the CPU.
 *
 * Rows: `<variant>` (plain launches); for 1-D and single-block arrangements also
 * `<variant>+graph` (the launch loop captured once into a CUDA Graph and replayed),
 * `<variant>+graph_fork` (the same launches on parallel graph branches) and
 * `<variant>+persistent` (one launch whose blocks walk the tiles); `naive`; `ch04:tiled16`
 * (chapter 04's 16×16 shared-memory tile on the same int problem: the project's own kernel, a
 * point of comparison but not a library, so no row is the `vs_library` reference and that
 * column stays empty; compare medians directly); `cpu` (ch04::cpu::Matmul).
 *
 * Timing: rows whose run is one host call (2-D grid, graph replays, persistent launches,
 * chapter 04's tile) are GPU time behind the stream gate; the plain 1-D and single-block loops
 * include the host's submission of their launches (`IsGated` in measure.cuh says why). Every row
 * gets up to --reps reps, fewer when they would take longer than --rep-budget-ms (see
 * `TimingFor`); L2 is flushed before each rep when A, B and C are below 4 × L2 (measure.cuh).
 *
 * Verification: N <= --cpu-max-n: every element against the CPU product (exact). Larger N: every
 * element against chapter 04's tile kernel (an independent implementation, exact) plus
 * --samples elements and the corners recomputed on the CPU.
 */
#include <cstdint>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "chapters/05_grid_geometry/measure.cuh"
#include "common/entry.hpp"
#include "common/stream.hpp"

#ifndef STAGED_VARIANT
#error "STAGED_VARIANT must name the variant (set by staged_add_chapter)"
#endif

namespace {

constexpr const char* kChapter = "05_grid_geometry";
/// Chapter 04's 16x16 int tile: a comparison row, not a library (see the file comment).
constexpr const char* kCh04Row = "ch04:tiled16";
/// The report's library column names a row that chapter 05 does not have: vs_library stays empty.
constexpr const char* kNoLibrary = "library:none";

/// Default N of an executable: 1024, except for one block per tile with few threads, which
/// leaves one SM nearly idle (a 2-thread block does N³ multiply-adds two at a time, tens of
/// seconds at N = 1024): 512 below 32 threads per block, 256 below 8.
int DefaultN(const ch05::Config& cfg) {
  if (cfg.arrangement != ch05::Arrangement::kSingle) return 1024;
  const int threads = ch05::ThreadsPerBlock(cfg);
  return threads >= 32 ? 1024 : (threads >= 8 ? 512 : 256);
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = static_cast<std::uint64_t>(DefaultN(ch05::ParseVariant(STAGED_VARIANT, 0)));
  defaults.min_n = 1;
  defaults.max_n = static_cast<std::uint64_t>(ch05::kMaxN);
  defaults.has_dist = false;
  defaults.reps = 10;
  defaults.warmup = 2;
  defaults.cpu_reps = 1;
  staged::Cli cli("ch05_" STAGED_VARIANT,
                  "int C = A·B, variant " STAGED_VARIANT
                  " (grid arrangement x block shape x memory)",
                  defaults);
  std::int64_t m = 0;
  std::int64_t cpu_max_n = 1024;
  std::int64_t naive_max_n = 2048;
  std::int64_t samples = 4096;
  std::int64_t rep_budget_ms = 2000;
  // The block_* variants fix M: they take no --m.
  if (std::string(STAGED_VARIANT).rfind("block_", 0) != 0) {
    cli.AddInt("m", &m, 0, 16, "block parameter M: 1, 2, 4, 8 or 16 (0 = 16)");
  }
  cli.AddInt("cpu-max-n", &cpu_max_n, 0, ch05::kMaxN,
             "largest N checked element by element against the CPU product; "
             "above it: against chapter 04's tile kernel plus --samples CPU dot products");
  cli.AddInt("naive-max-n", &naive_max_n, 0, ch05::kMaxN,
             "largest N at which the naive row is timed (it launches one block per tile and takes "
             "seconds beyond)");
  cli.AddInt("samples", &samples, 0, 1 << 20,
             "C elements recomputed on the CPU when N > --cpu-max-n");
  cli.AddInt("rep-budget-ms", &rep_budget_ms, 1, 3600000,
             "fewer than --reps timed reps (at least 1) for a row whose reps would take longer");
  // --m is checked (ParseVariant) before the GPU is looked for.
  auto ctx = staged::StartRun(cli, argc, argv, [&](const staged::CommonOptions&) {
    (void)ch05::ParseVariant(STAGED_VARIANT, static_cast<int>(m));
  });
  if (!ctx) return 0;
  const staged::CommonOptions& opt = ctx->options;
  const ch05::Config cfg = ch05::ParseVariant(STAGED_VARIANT, static_cast<int>(m));
  const int n = static_cast<int>(opt.n);

  staged::Stream stream;
  ch05::Problem p(n, opt.seed);
  staged::Report report(kChapter, opt.seed, ctx->device, kNoLibrary);
  const ch05::TimingPlan plan{opt.warmup, opt.reps, static_cast<double>(rep_budget_ms)};

  // The CPU product: the reference when N is small enough, timed when --cpu-reps > 0.
  std::vector<std::int32_t> cpu_c;
  std::optional<staged::TimingStats> cpu_time;
  if (n <= cpu_max_n && (opt.verify || opt.cpu_reps > 0)) {
    cpu_c.resize(static_cast<std::size_t>(n) * n);
    auto product = [&] {
      ch04::cpu::Matmul<std::int32_t>(p.a.data(), p.b.data(), cpu_c.data(), n, n, n);
    };
    if (opt.cpu_reps > 0) {
      cpu_time = staged::TimeCpu(staged::TimingOptions{0, opt.cpu_reps, false}, product);
    } else {
      product();
    }
  }

  // Chapter 04's 16x16 tile: a comparison row, and the full-matrix reference above
  // --cpu-max-n. One launch, so it is timed behind the gate.
  const ch05::Work ch04_work{[&](cudaStream_t s) {
                               ch04::optimized::Matmul<std::int32_t>(
                                   p.d_a.data(), p.d_b.data(), p.d_c.data(), n, n, n,
                                   ch04::optimized::Stage::kTiled16, s);
                             },
                             true};
  const bool full_cpu = opt.verify && !cpu_c.empty();
  const ch05::Checker sampled = [&](const std::vector<std::int32_t>& c) {
    return ch05::SampleCheck(p.a.data(), p.b.data(), c.data(), n, static_cast<int>(samples),
                             opt.seed);
  };
  ch05::Checker ch04_check;
  if (full_cpu) {
    ch04_check = [&](const std::vector<std::int32_t>& c) {
      return staged::CompareExact(cpu_c.data(), c.data(), c.size());
    };
  } else if (opt.verify) {
    ch04_check = sampled;
  }
  ch05::Measured ch04_tile = ch05::RunCheckTime(p, ch04_work, ch04_check, plan, stream.get());
  std::vector<std::int32_t> reference = full_cpu ? cpu_c : ch04_tile.c;
  ch05::Checker check;
  if (opt.verify) {
    check = [&](const std::vector<std::int32_t>& c) {
      staged::VerifyReport r = staged::CompareExact(reference.data(), c.data(), c.size());
      if (r.ok && !full_cpu) r = sampled(c);
      return r;
    };
  }

  auto add_row = [&](const std::string& name, const ch05::Measured& meas) {
    staged::ReportRow row;
    row.variant = name;
    row.n = static_cast<std::uint64_t>(n);
    row.dist = "-";
    row.time = meas.time;
    row.throughput = ch05::Giops(n, meas.time.median_ms);
    row.unit = ch05::kUnit;
    row.pct_peak = ch05::PercentOfIntPeak(row.throughput, ctx->device);
    row.verified = !opt.verify ? staged::Verified::kSkipped
                               : (meas.check.ok ? staged::Verified::kYes : staged::Verified::kNo);
    if (!meas.check.ok) std::cerr << name << ": " << meas.check.Summary() << "\n";
    report.Add(row);
  };

  const std::string own = STAGED_VARIANT;
  std::vector<ch05::Launch> launches = {ch05::Launch::kPlain};
  if (cfg.arrangement != ch05::Arrangement::kGrid2d) {
    launches.insert(launches.end(),
                    {ch05::Launch::kGraph, ch05::Launch::kGraphFork, ch05::Launch::kPersistent});
  }
  for (ch05::Launch launch : launches) {
    const ch05::Work work = ch05::MakeWork(p, cfg, launch, stream.get());
    add_row(own + ch05::LaunchSuffix(launch),
            ch05::RunCheckTime(p, work, check, plan, stream.get()));
  }
  if (own != "naive") {
    if (n <= naive_max_n) {
      const ch05::Config naive = ch05::ParseVariant("naive");
      const ch05::Work work = ch05::MakeWork(p, naive, ch05::Launch::kPlain, stream.get());
      add_row("naive", ch05::RunCheckTime(p, work, check, plan, stream.get()));
    } else {
      std::cerr << "note: naive row skipped at N = " << n << " > --naive-max-n " << naive_max_n
                << " (no speedup_naive)\n";
    }
  }
  add_row(kCh04Row, ch04_tile);
  if (cpu_time) {
    staged::ReportRow row;
    row.variant = "cpu";
    row.n = static_cast<std::uint64_t>(n);
    row.dist = "-";
    row.time = *cpu_time;
    row.throughput = ch05::Giops(n, cpu_time->median_ms);
    row.unit = ch05::kUnit;
    row.verified = staged::Verified::kReference;
    report.Add(row);
  }
  return staged::FinishRun(report, opt);
}

}  // namespace

/// Entry point: maps exceptions to the chapter's exit codes.
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
