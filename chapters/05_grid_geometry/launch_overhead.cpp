/// @file launch_overhead.cpp
/// @brief The launch-overhead rows of `ch05_study`: measured with the sweep's callbacks, printed
///        as one table (see launch_overhead.hpp for what is gated and why).
#include "chapters/05_grid_geometry/launch_overhead.hpp"

#include <cmath>
#include <optional>

#include "chapters/05_grid_geometry/measure.cuh"

namespace ch05::study {

std::vector<Config> LaunchOverheadConfigs() {
  return {{Arrangement::kGrid1d, Shape::kMx2M, Memory::kShared, 16},
          {Arrangement::kSingle, Shape::kMx2M, Memory::kShared, 16}};
}

namespace {

/// Launches of the single-block loop at @p n: the empty-launch rows make as many.
std::int64_t SingleBlockLaunches(int n) {
  return LaunchesPerRun(n, {Arrangement::kSingle, Shape::kMx2M, Memory::kShared, 16});
}

}  // namespace

void MeasureLaunchOverhead(int n, const Results& res, const MeasureRow& measure,
                           const AddTimedRow& add_empty, int warmup, int reps,
                           cudaStream_t stream) {
  for (const Config& cfg : LaunchOverheadConfigs()) {
    const std::string name = VariantName(cfg);
    if (!res.Get(name, n)) measure(name, cfg, Launch::kPlain);
    for (Launch l : {Launch::kGraph, Launch::kGraphFork, Launch::kPersistent}) {
      measure(name + LaunchSuffix(l), cfg, l);
    }
  }
  const int launches = static_cast<int>(SingleBlockLaunches(n));
  // The plain loop of empty launches: thousands of launches per rep, so no gate (its time is
  // the host's submission rate, the point of the row).
  add_empty("empty_launch", staged::TimeGpu(
                                staged::TimingOptions{warmup, reps, false, false},
                                [&](cudaStream_t s) { EmptyLaunches(launches, s); }, stream));
  // The same launches as one graph: one host call, timed behind the gate.
  EmptyGraph empty(launches, stream);
  add_empty("empty_launch+graph", staged::TimeGpu(
                                      staged::TimingOptions{warmup, reps, false, true},
                                      [&](cudaStream_t s) { empty.Replay(s); }, stream));
}

void PrintLaunchOverhead(std::FILE* out, const Results& res, const std::vector<int>& ns) {
  std::fprintf(out,
               "\nBeyond the paper: launch overhead of the 1-D and single-block arrangements "
               "(M×2M, shared, M = 16)\n");
  std::fprintf(out,
               "  graph = the launch loop captured once into a CUDA Graph (serial chain) and "
               "replayed; fork = the same launches on %d parallel graph branches (they write "
               "disjoint tiles); persistent = one launch whose blocks walk the tiles; "
               "overhead/launch = (plain - persistent) / launches; empty = as many launches of an "
               "empty kernel\n"
               "  plain and empty: host submission included (no stream gate); graph, fork, "
               "persistent and emptyG: GPU time only (gated)\n",
               kForkBranches);
  std::fprintf(out, "%6s %-7s %8s %10s %10s %10s %10s %8s %8s %11s %11s %11s %8s\n", "N", "arr",
               "launches", "plain ms", "graph ms", "fork ms", "persist ms", "x graph", "x fork",
               "ovh us/lau", "empty us/l", "emptyG us/l", "x emptyG");
  auto v = [](std::optional<double> x) { return x ? *x : NAN; };
  for (int n : ns) {
    const double single_launches = static_cast<double>(SingleBlockLaunches(n));
    const auto empty = res.Get("empty_launch", n);
    const auto empty_graph = res.Get("empty_launch+graph", n);
    for (const Config& cfg : LaunchOverheadConfigs()) {
      const std::string name = VariantName(cfg);
      const auto graph = res.Get(name + "+graph", n);
      if (!graph) continue;
      const auto plain = res.Get(name, n);
      const auto fork = res.Get(name + "+graph_fork", n);
      const auto persistent = res.Get(name + "+persistent", n);
      const double launches = static_cast<double>(LaunchesPerRun(n, cfg));
      std::fprintf(
          out,
          "%6d %-7s %8.0f %10.3f %10.3f %10.3f %10.3f %8.2f %8.2f %11.3f %11.3f %11.3f %8.2f\n", n,
          cfg.arrangement == Arrangement::kGrid1d ? "1-D" : "single", launches, v(plain), v(graph),
          v(fork), v(persistent), v(Ratio(plain, graph)), v(Ratio(plain, fork)),
          1000.0 * (v(plain) - v(persistent)) / launches, 1000.0 * v(empty) / single_launches,
          1000.0 * v(empty_graph) / single_launches, v(Ratio(empty, empty_graph)));
    }
  }
}

}  // namespace ch05::study
