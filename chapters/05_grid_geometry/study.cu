/**
 * @file study.cu
 * @brief `ch05_study`: the paper's sweep in one process. Tables 1 (global memory), 2 (CPU),
 *        3 (shared memory) and 4 (block sizes) on this GPU beside Widuch's 9600M GT numbers, the
 *        ratios the paper discusses, and the launch-overhead study (plain launches vs CUDA Graph
 *        replay vs a persistent grid, plus an empty-kernel loop).
 *
 * Sweep: the paper's N (160 … 1760 step 160, then 2080 … 6240 step 320; Table 4 stops at 1600),
 * limited by --max-n. Below 160 (--max-n < 160, for sanitizers) the sweep is N = {max-n/2 − 7,
 * max-n}, sizes that are not multiples of any tile.
 *
 * Budget: single-block arrangements put all the work on one SM (N = 6240 is 2.4·10¹¹
 * multiply-adds on one of 132 SMs): they run only up to --single-max-n (default 2240). Any
 * column (CPU included) stops once its next point, predicted from its last one by N³ scaling,
 * would exceed --point-budget-ms. Points slower than 100 ms get one timed rep.
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
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "chapters/05_grid_geometry/measure.cuh"
#include "chapters/05_grid_geometry/paper_tables.hpp"
#include "common/cuda_check.hpp"
#include "common/entry.hpp"
#include "common/stream.hpp"

namespace {

using ch05::Arrangement;
using ch05::Config;
using ch05::Launch;
using ch05::Memory;
using ch05::Shape;

constexpr const char* kChapter = "05_grid_geometry";
constexpr int kTable4MaxN = 1600;
constexpr double kSlowMs = 100.0;

/// The six columns of Tables 1 and 3 for one memory kind, in the paper's order.
std::vector<Config> TableColumns(Memory memory) {
  std::vector<Config> cols;
  for (Arrangement arr : {Arrangement::kGrid2d, Arrangement::kGrid1d, Arrangement::kSingle}) {
    for (Shape shape : {Shape::kMxM, Shape::kMx2M}) cols.push_back({arr, shape, memory, 16});
  }
  return cols;
}

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

/// The measured medians and what was skipped, by row name and N.
class Results {
 public:
  void Set(const std::string& name, int n, double ms) { ms_[name][n] = ms; }
  std::optional<double> Get(const std::string& name, int n) const {
    auto it = ms_.find(name);
    if (it == ms_.end()) return {};
    auto jt = it->second.find(n);
    if (jt == it->second.end()) return {};
    return jt->second;
  }
  /// True when @p name's next point at @p n is predicted (N³ from its last point) under budget.
  bool Affordable(const std::string& name, int n, double budget_ms) const {
    auto it = ms_.find(name);
    if (it == ms_.end() || it->second.empty()) return true;
    const auto& [last_n, last_ms] = *it->second.rbegin();
    return last_ms * std::pow(static_cast<double>(n) / last_n, 3.0) <= budget_ms;
  }

 private:
  std::map<std::string, std::map<int, double>> ms_;
};

std::optional<double> Ratio(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || !(*den > 0)) return {};
  return *num / *den;
}

std::optional<double> PaperCell(double v) {
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

/// One column of a side-by-side table: a heading and the paper's and our value at each N.
struct Column {
  std::string head;                                 ///< column heading
  std::function<std::optional<double>(int)> paper;  ///< paper's value at N (or none)
  std::function<std::optional<double>(int)> ours;   ///< our value at N (or none)
};

/// Where the side-by-side tables go: stdout with --format table; stderr with csv/json, so a
/// CSV run still leaves the tables in its log.
std::FILE* g_tables = stdout;

void PrintTable(const std::string& title, const std::vector<std::string>& notes,
                const std::vector<int>& ns, const std::vector<Column>& cols, int precision) {
  std::fprintf(g_tables, "\n%s\n", title.c_str());
  for (const auto& note : notes) std::fprintf(g_tables, "  %s\n", note.c_str());
  const int w = 11;
  std::fprintf(g_tables, "%6s |", "N");
  for (const auto& c : cols) std::fprintf(g_tables, "%*s", w, c.head.c_str());
  std::fprintf(g_tables, " |");
  for (const auto& c : cols) std::fprintf(g_tables, "%*s", w, c.head.c_str());
  std::fprintf(g_tables, "\n%6s |%*s |%*s\n", "", static_cast<int>(w * cols.size()),
               "paper (9600M GT)", static_cast<int>(w * cols.size()), "this GPU");
  auto cell = [&](std::optional<double> v) {
    if (v) {
      std::fprintf(g_tables, "%*.*f", w, precision, *v);
    } else {
      std::fprintf(g_tables, "%*s", w, "-");
    }
  };
  for (int n : ns) {
    std::fprintf(g_tables, "%6d |", n);
    for (const auto& c : cols) cell(c.paper ? c.paper(n) : std::nullopt);
    std::fprintf(g_tables, " |");
    for (const auto& c : cols) cell(c.ours(n));
    std::fprintf(g_tables, "\n");
  }
}

int PaperRow(int n) {
  for (int i = 0; i < ch05::paper::kRows; ++i) {
    if (ch05::paper::kSizes[i] == n) return i;
  }
  return -1;
}

/// Prints every requested table beside the paper's, the ratios, and the launch-overhead study.
void PrintStudy(const Results& res, const std::vector<int>& ns, const bool want[5],
                const staged::DeviceInfo& device, double longest_launch_ms,
                std::int64_t single_max_n, std::int64_t budget_ms) {
  namespace pp = ch05::paper;
  int timeout = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&timeout, cudaDevAttrKernelExecTimeout, device.ordinal));
  std::fprintf(g_tables, "device: %s\n", device.Describe().c_str());
  std::fprintf(
      g_tables,
      "kernel run-time limit (watchdog): %s; longest single 2-D launch measured: %.1f ms\n",
      timeout ? "ON" : "none (cudaDevAttrKernelExecTimeout = 0)", longest_launch_ms);
  std::fprintf(g_tables,
               "int32 values in [-8, 8]; times are medians in ms; '-' = not run (paper: not "
               "measured; here: over --single-max-n %lld or the %lld ms point budget)\n",
               static_cast<long long>(single_max_n), static_cast<long long>(budget_ms));
  const std::vector<std::string> heads = {"2D 16x16", "2D 16x32", "1D 16x16",
                                          "1D 16x32", "1 16x16",  "1 16x32"};
  auto ours = [&res](const Config& cfg) {
    return [&res, name = ch05::VariantName(cfg)](int n) { return res.Get(name, n); };
  };
  auto paper_cell = [](const double(*table)[pp::kColumns], int c) {
    return [table, c](int n) -> std::optional<double> {
      const int r = PaperRow(n);
      return r < 0 ? std::nullopt : PaperCell(table[r][c]);
    };
  };
  auto paper_cpu = [](int n) -> std::optional<double> {
    const int r = PaperRow(n);
    return r < 0 ? std::nullopt : PaperCell(pp::kTable2[r]);
  };
  const std::vector<Config> global = TableColumns(Memory::kGlobal);
  const std::vector<Config> shared = TableColumns(Memory::kShared);
  auto time_columns = [&](const std::vector<Config>& cfgs, const double(*table)[pp::kColumns]) {
    std::vector<Column> cols;
    for (int c = 0; c < pp::kColumns; ++c) {
      cols.push_back({heads[c], paper_cell(table, c), ours(cfgs[c])});
    }
    return cols;
  };
  if (want[1]) {
    PrintTable("Table 1: global memory only, time (ms)",
               {"16x16 = M×M blocks, 16x32 = M×2M blocks (M = 16); 2D = one launch, 1D = one "
                "launch per tile row, 1 = one single-block launch per tile"},
               ns, time_columns(global, pp::kTable1), 2);
  }
  if (want[2]) {
    PrintTable(
        "Table 2: CPU, time (ms) (paper: a dot-product triple loop on a Core 2 Duo P8400; "
        "here ch04::cpu::Matmul, i-k-j order, one thread)",
        {}, ns, {{"CPU", paper_cpu, [&res](int n) { return res.Get("cpu", n); }}}, 2);
  }
  if (want[3]) {
    PrintTable("Table 3: shared memory, time (ms)", {}, ns, time_columns(shared, pp::kTable3), 2);
  }
  if (want[1] && want[3]) {
    std::vector<Column> cols;
    for (int c = 0; c < pp::kColumns; ++c) {
      cols.push_back({heads[c],
                      [=](int n) {
                        return Ratio(paper_cell(pp::kTable1, c)(n), paper_cell(pp::kTable3, c)(n));
                      },
                      [=](int n) { return Ratio(ours(global[c])(n), ours(shared[c])(n)); }});
    }
    PrintTable("Ratio: global / shared time (Table 1 / Table 3; > 1: shared memory wins)",
               {"paper at its largest N: ~1.5 for the single block, ~5 for the 1-D and 2-D grids"},
               ns, cols, 2);
  }
  for (Memory memory : {Memory::kShared, Memory::kGlobal}) {
    if (!want[memory == Memory::kShared ? 3 : 1]) continue;
    const auto& cfgs = memory == Memory::kShared ? shared : global;
    const auto* table = memory == Memory::kShared ? pp::kTable3 : pp::kTable1;
    std::vector<Column> cols;
    const int pairs[4][2] = {{2, 0}, {3, 1}, {4, 0}, {5, 1}};  // 1D/2D and 1/2D per shape
    const char* names[4] = {"1D/2D 16", "1D/2D 32", "1/2D 16", "1/2D 32"};
    for (int i = 0; i < 4; ++i) {
      const int num = pairs[i][0];
      const int den = pairs[i][1];
      cols.push_back(
          {names[i],
           [=](int n) { return Ratio(paper_cell(table, num)(n), paper_cell(table, den)(n)); },
           [=](int n) { return Ratio(ours(cfgs[num])(n), ours(cfgs[den])(n)); }});
    }
    PrintTable(std::string("Ratio: arrangement, time relative to the 2-D grid (") +
                   (memory == Memory::kShared ? "shared" : "global") + " memory)",
               {"16 = 16x16 blocks, 32 = 16x32 blocks; the paper's 2-D column stops at 960 "
                "(global) / 1760 (shared): its watchdog"},
               ns, cols, 2);
  }
  if (want[1] || want[3]) {
    std::vector<Column> cols;
    const char* names[6] = {"2D glob", "1D glob", "1 glob", "2D shr", "1D shr", "1 shr"};
    for (int i = 0; i < 6; ++i) {
      const bool is_shared = i >= 3;
      if (!want[is_shared ? 3 : 1]) continue;
      const auto& cfgs = is_shared ? shared : global;
      const auto* table = is_shared ? pp::kTable3 : pp::kTable1;
      const int mxm = 2 * (i % 3);
      cols.push_back(
          {names[i],
           [=](int n) { return Ratio(paper_cell(table, mxm)(n), paper_cell(table, mxm + 1)(n)); },
           [=](int n) { return Ratio(ours(cfgs[mxm])(n), ours(cfgs[mxm + 1])(n)); }});
    }
    PrintTable("Ratio: 16x16 time / 16x32 time (> 1: two outputs per thread win)", {}, ns, cols, 2);
  }
  if (want[2] && (want[1] || want[3])) {
    for (Memory memory : {Memory::kShared, Memory::kGlobal}) {
      if (!want[memory == Memory::kShared ? 3 : 1]) continue;
      const auto& cfgs = memory == Memory::kShared ? shared : global;
      const auto* table = memory == Memory::kShared ? pp::kTable3 : pp::kTable1;
      std::vector<Column> cols;
      for (int c = 0; c < pp::kColumns; ++c) {
        cols.push_back({heads[c],
                        [=](int n) { return Ratio(paper_cpu(n), paper_cell(table, c)(n)); },
                        [=, &res](int n) { return Ratio(res.Get("cpu", n), ours(cfgs[c])(n)); }});
      }
      PrintTable(std::string("Fig. 5 data: speed-up over the CPU (CPU time / GPU time), ") +
                     (memory == Memory::kShared ? "shared" : "global") + " memory",
                 {"paper at N = 6240: 1D 16x32 shared ~19x, 1D 16x16 ~15x, single 16x32 ~5x"}, ns,
                 cols, 2);
    }
  }
  if (want[4]) {
    std::vector<int> ns4;
    for (int n : ns) {
      if (n <= kTable4MaxN || ns.front() < pp::kSizes[0]) ns4.push_back(n);
    }
    auto paper4 = [](int c) {
      return [c](int n) -> std::optional<double> {
        const int r = PaperRow(n);
        return r < 0 || r >= pp::kTable4Rows ? std::nullopt : PaperCell(pp::kTable4[r][c]);
      };
    };
    auto ours4 = [&res](int c) {
      return [&res, c](int n) {
        const int m = ch05::kSupportedM[c];
        return res.Get(
            ch05::VariantName({Arrangement::kSingle, Shape::kMx2M, Memory::kShared, m}, true), n);
      };
    };
    std::vector<Column> times;
    std::vector<Column> steps;
    const char* names[5] = {"1x2", "2x4", "4x8", "8x16", "16x32"};
    const char* step_names[4] = {"1x2/2x4", "2x4/4x8", "4x8/8x16", "8x16/16x32"};
    for (int c = 0; c < pp::kTable4Columns; ++c) times.push_back({names[c], paper4(c), ours4(c)});
    for (int c = 0; c + 1 < pp::kTable4Columns; ++c) {
      steps.push_back({step_names[c], [=](int n) { return Ratio(paper4(c)(n), paper4(c + 1)(n)); },
                       [=](int n) { return Ratio(ours4(c)(n), ours4(c + 1)(n)); }});
    }
    PrintTable("Table 4: single block, shared memory, M×2M blocks, time (ms)",
               {"1x2 = M 1 (2 threads) ... 16x32 = M 16 (512 threads); 16x32 is Table 3's "
                "'1 16x32' column"},
               ns4, times, 2);
    PrintTable(
        "Fig. 6 data: speed-up of each block-size step (time of the smaller block / time "
        "of the next one)",
        {"paper: ~6x for 1x2 -> 2x4, ~5x for 2x4 -> 4x8, ~1.1x for 8x16 -> 16x32 (its 32 "
         "cores were already busy)"},
        ns4, steps, 2);
  }
  // Launch overhead study.
  std::fprintf(g_tables,
               "\nBeyond the paper: launch overhead of the 1-D and single-block arrangements "
               "(M×2M, shared, M = 16)\n");
  std::fprintf(g_tables,
               "  graph = the launch loop captured once into a CUDA Graph (serial chain) and "
               "replayed; fork = the same launches on %d parallel graph branches (they write "
               "disjoint tiles); persistent = one launch whose blocks walk the tiles; "
               "overhead/launch = (plain - persistent) / launches; empty = as many launches of an "
               "empty kernel\n",
               ch05::kForkBranches);
  std::fprintf(g_tables, "%6s %-7s %8s %10s %10s %10s %10s %8s %8s %11s %11s %11s %8s\n", "N",
               "arr", "launches", "plain ms", "graph ms", "fork ms", "persist ms", "x graph",
               "x fork", "ovh us/lau", "empty us/l", "emptyG us/l", "x emptyG");
  for (int n : ns) {
    for (Arrangement arr : {Arrangement::kGrid1d, Arrangement::kSingle}) {
      const Config cfg{arr, Shape::kMx2M, Memory::kShared, 16};
      const std::string name = ch05::VariantName(cfg);
      const auto graph = res.Get(name + "+graph", n);
      if (!graph) continue;
      const auto plain = res.Get(name, n);
      const auto fork = res.Get(name + "+graph_fork", n);
      const auto persistent = res.Get(name + "+persistent", n);
      const double launches = static_cast<double>(ch05::LaunchesPerRun(n, cfg));
      const double single_launches = static_cast<double>(
          ch05::LaunchesPerRun(n, {Arrangement::kSingle, Shape::kMx2M, Memory::kShared, 16}));
      auto v = [](std::optional<double> x) { return x ? *x : NAN; };
      const auto empty = res.Get("empty_launch", n);
      const auto empty_graph = res.Get("empty_launch+graph", n);
      std::fprintf(
          g_tables,
          "%6d %-7s %8.0f %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f %11.3f %11.3f %11.3f %8.2f\n", n,
          arr == Arrangement::kGrid1d ? "1-D" : "single", launches, v(plain), v(graph), v(fork),
          v(persistent), v(Ratio(plain, graph)), v(Ratio(plain, fork)),
          1000.0 * (v(plain) - v(persistent)) / launches, 1000.0 * v(empty) / single_launches,
          1000.0 * v(empty_graph) / single_launches, v(Ratio(empty, empty_graph)));
    }
  }
  std::fprintf(g_tables,
               "\nWatchdog: the paper's Windows display driver killed kernels running longer than "
               "about 2 s (WDDM TDR), so its one-launch 2-D grid stopped at N = 960 (global) and "
               "1760 (shared). Here the limit is %s and the longest 2-D launch took %.1f ms.\n",
               timeout ? "ON (a display is attached)" : "off (no display on this GPU)",
               longest_launch_ms);
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = 6240;
  defaults.min_n = 1;
  defaults.max_n = static_cast<std::uint64_t>(ch05::kMaxN);
  defaults.has_dist = false;
  defaults.reps = 3;
  defaults.warmup = 1;
  defaults.cpu_reps = 1;
  staged::Cli cli("ch05_study",
                  "Widuch (2010) Tables 1-4 and the launch-overhead study on this GPU (--n or "
                  "--max-n: the largest N of the sweep; the smaller of the two applies)",
                  defaults);
  std::int64_t max_n = 6240;
  std::int64_t single_max_n = 2240;
  std::int64_t budget_ms = 1000;
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
  cli.AddInt("samples", &samples, 0, 1 << 20,
             "CPU dot products that check the 2-D result where the full CPU product is not run");
  cli.AddFlag("no-graphs", &no_graphs, "skip the launch-overhead study");
  auto ctx = staged::StartRun(cli, argc, argv);
  if (!ctx) return 0;
  const staged::CommonOptions& opt = ctx->options;
  // --n is the common flag for the problem size; here it bounds the sweep like --max-n.
  max_n = std::min<std::int64_t>(max_n, static_cast<std::int64_t>(opt.n));
  const bool want[5] = {
      false, tables.find('1') != std::string::npos, tables.find('2') != std::string::npos,
      tables.find('3') != std::string::npos, tables.find('4') != std::string::npos};

  std::vector<int> ns;
  for (int n : ch05::paper::kSizes) {
    if (n <= max_n) ns.push_back(n);
  }
  if (ns.empty()) {
    const int small = static_cast<int>(max_n / 2 - 7);
    if (small >= 1) ns.push_back(small);
    ns.push_back(static_cast<int>(max_n));
  }
  const bool tiny = ns.front() < ch05::paper::kSizes[0];
  std::set<int> graph_ns = {160, 480, 960, 1600};
  if (tiny) graph_ns = std::set<int>(ns.begin(), ns.end());

  staged::Stream stream;
  staged::Report report(kChapter, opt.seed, ctx->device, "library:none");
  Results res;
  const ch05::TimingPlan plan{opt.warmup, opt.reps, kSlowMs};
  const Config gpu_ref_cfg{Arrangement::kGrid2d, Shape::kMx2M, Memory::kShared, 16};
  const std::string naive_name = ch05::VariantName(ch05::ParseVariant("naive"));
  double longest_launch_ms = 0.0;

  auto add_row = [&](const std::string& name, int n, const staged::TimingStats& t,
                     staged::Verified v) {
    staged::ReportRow row;
    row.variant = name;
    row.n = static_cast<std::uint64_t>(n);
    row.dist = "-";
    row.time = t;
    row.throughput = ch05::Giops(n, t.median_ms);
    row.unit = ch05::kUnit;
    if (name.rfind("empty_launch", 0) == 0) {
      row.throughput = 0.0;  // no arithmetic: the time is all launch cost
    } else {
      row.pct_peak = ch05::PercentOfIntPeak(row.throughput, ctx->device);
    }
    row.verified = v;
    row.naive_ref = naive_name;
    report.Add(row);
    res.Set(name, n, t.median_ms);
  };

  for (int n : ns) {
    std::cerr << "[ch05_study] N = " << n << "\n";
    ch05::Problem p(n, opt.seed);

    // CPU product: Table 2 and the full reference, while the budget allows.
    std::vector<std::int32_t> cpu_c;
    if ((want[2] || opt.verify) && res.Affordable("cpu", n, static_cast<double>(budget_ms))) {
      cpu_c.resize(static_cast<std::size_t>(n) * n);
      const staged::TimingStats t = staged::TimeCpu(
          staged::TimingOptions{0, std::max(1, opt.cpu_reps), false},
          [&] { ch04::cpu::Matmul<std::int32_t>(p.a.data(), p.b.data(), cpu_c.data(), n, n, n); });
      add_row("cpu", n, t, staged::Verified::kReference);
      std::cerr << "  cpu " << t.median_ms << " ms\n";
    }
    const bool full = opt.verify && !cpu_c.empty();

    // The GPU reference: 2-D, shared, M×2M, checked against the CPU (all of C or samples).
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
      std::cerr << "  " << name << " " << m.time.median_ms << " ms" << (m.check.ok ? "" : " FAILED")
                << "\n";
      return m;
    };
    {
      ch05::Measured m = measure(ch05::VariantName(gpu_ref_cfg), gpu_ref_cfg, Launch::kPlain);
      if (opt.verify && !full) reference = std::move(m.c);
    }

    // Tables 1 and 3.
    for (Memory memory : {Memory::kGlobal, Memory::kShared}) {
      if (!want[memory == Memory::kGlobal ? 1 : 3]) continue;
      for (const Config& cfg : TableColumns(memory)) {
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
    if (want[4] && (n <= kTable4MaxN || tiny)) {
      for (int m : ch05::kSupportedM) {
        const Config cfg{Arrangement::kSingle, Shape::kMx2M, Memory::kShared, m};
        const std::string name = ch05::VariantName(cfg, true);
        if (m == 16) {
          if (auto t = res.Get(ch05::VariantName(cfg), n)) res.Set(name, n, *t);
          continue;
        }
        if (!res.Affordable(name, n, static_cast<double>(budget_ms))) continue;
        measure(name, cfg, Launch::kPlain);
      }
    }

    // Beyond the paper: the launch loops of the 1-D and single-block arrangements as plain
    // launches, one graph (serial chain), a forked graph and a persistent grid; and as many
    // empty launches as the single-block loop makes, plain and as a graph.
    if (!no_graphs && graph_ns.count(n) != 0) {
      for (Arrangement arr : {Arrangement::kGrid1d, Arrangement::kSingle}) {
        const Config cfg{arr, Shape::kMx2M, Memory::kShared, 16};
        const std::string name = ch05::VariantName(cfg);
        if (!res.Get(name, n)) measure(name, cfg, Launch::kPlain);
        for (Launch l : {Launch::kGraph, Launch::kGraphFork, Launch::kPersistent}) {
          measure(name + ch05::LaunchSuffix(l), cfg, l);
        }
      }
      const int launches = static_cast<int>(
          ch05::LaunchesPerRun(n, {Arrangement::kSingle, Shape::kMx2M, Memory::kShared, 16}));
      const staged::TimingOptions t_opt{opt.warmup, opt.reps, false};
      add_row("empty_launch", n,
              staged::TimeGpu(
                  t_opt, [&](cudaStream_t s) { ch05::EmptyLaunches(launches, s); }, stream.get()),
              staged::Verified::kReference);
      ch05::EmptyGraph empty(launches, stream.get());
      add_row("empty_launch+graph", n,
              staged::TimeGpu(
                  t_opt, [&](cudaStream_t s) { empty.Replay(s); }, stream.get()),
              staged::Verified::kReference);
    }
  }
  // The block_16x32 rows repeat the single-block M×2M shared measurement (same configuration).
  for (int n : ns) {
    if (auto t = res.Get("block_16x32", n); t && want[4]) {
      staged::TimingStats ts;
      ts.median_ms = ts.min_ms = ts.max_ms = *t;
      ts.reps = 1;
      add_row("block_16x32", n, ts, staged::Verified::kYes);
    }
  }

  if (opt.format != staged::OutputFormat::kTable) {
    report.Print(std::cout, opt.format);
    std::cout.flush();
    g_tables = stderr;
    PrintStudy(res, ns, want, ctx->device, longest_launch_ms, single_max_n, budget_ms);
  } else {
    PrintStudy(res, ns, want, ctx->device, longest_launch_ms, single_max_n, budget_ms);
    std::fprintf(g_tables, "\nverified: %s\n",
                 report.AllVerified() ? (opt.verify ? "yes" : "skipped") : "no");
  }
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
