/**
 * @file measure.cu
 * @brief Run once, verify, then time: the measuring loop shared by every chapter 05 executable,
 *        and its two rules (which work is gated, how many reps a point gets).
 */
#include "chapters/05_grid_geometry/measure.cuh"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/cuda_check.hpp"

namespace ch05 {

Problem::Problem(int n_in, std::uint64_t seed) : n(n_in) {
  const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  staged::RequireDeviceMemory(
      3 * count * sizeof(std::int32_t),
      "A, B and C of " + std::to_string(n) + "x" + std::to_string(n) + " int32");
  a = SmallIntMatrix(count, seed);
  b = SmallIntMatrix(count, seed + 1);
  d_a = staged::DeviceBuffer<std::int32_t>(a);
  d_b = staged::DeviceBuffer<std::int32_t>(b);
  d_c = staged::DeviceBuffer<std::int32_t>(count);
}

// snippet-begin: ch05-is-gated
bool IsGated(const Config& cfg, Launch launch) {
  // A graph replay and a persistent launch are one host call whatever the arrangement; so is
  // the 2-D grid (one launch; a few more only past 65535 tile rows). The plain 1-D and
  // single-block loops issue one launch per tile row or per tile from the host.
  return launch != Launch::kPlain || cfg.arrangement == Arrangement::kGrid2d;
}
// snippet-end: ch05-is-gated

Work MakeWork(Problem& p, const Config& cfg, Launch launch, cudaStream_t stream) {
  const std::int32_t* a = p.d_a.data();
  const std::int32_t* b = p.d_b.data();
  std::int32_t* c = p.d_c.data();
  const int n = p.n;
  const bool gated = IsGated(cfg, launch);
  if (launch == Launch::kGraph || launch == Launch::kGraphFork) {
    // Captured and instantiated once; every call is one cudaGraphLaunch.
    auto graph = std::make_shared<GraphMatmul>(a, b, c, n, cfg, launch, stream);
    return {[graph](cudaStream_t s) { graph->Replay(s); }, gated};
  }
  return {[=](cudaStream_t s) { Matmul(a, b, c, n, cfg, launch, s); }, gated};
}

// snippet-begin: ch05-timing-for
staged::TimingOptions TimingFor(const TimingPlan& plan, double first_ms, bool gated,
                                bool flush_l2) {
  const int reps = std::max(plan.reps, 1);
  staged::TimingOptions options{plan.warmup, reps, flush_l2, gated};
  if (first_ms * reps > plan.rep_budget_ms) {
    const double fit = first_ms > 0 ? std::floor(plan.rep_budget_ms / first_ms) : reps;
    options.reps = static_cast<int>(std::clamp(fit, 1.0, static_cast<double>(reps)));
    options.warmup = 0;
  }
  return options;
}
// snippet-end: ch05-timing-for

Measured RunCheckTime(Problem& p, const Work& work, const Checker& check, const TimingPlan& plan,
                      cudaStream_t stream) {
  Measured m;
  p.d_c.FillBytes(0xFF, stream);  // a C element the kernel forgets cannot pass by accident
  // The checked run is timed without the gate (it only sizes the plan); the copy of C below
  // waits for the stream, outside any timed region.
  staged::GpuTimer timer(stream);
  timer.Start();
  work.run(stream);
  timer.Stop();
  m.first_ms = timer.ElapsedMs();
  if (check) {
    m.c.resize(p.d_c.size());
    p.d_c.CopyToHost(m.c.data(), m.c.size(), stream);
    m.check = check(m.c);
  }
  // snippet-begin: ch05-l2-rule
  int device = 0;
  int l2 = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
  const std::size_t bytes = 3 * p.d_c.bytes();  // A, B and C: N² integers each
  const bool flush = staged::ShouldFlushL2(bytes, static_cast<std::size_t>(l2));
  m.time = staged::TimeGpu(TimingFor(plan, m.first_ms, work.gated, flush), work.run, stream);
  // snippet-end: ch05-l2-rule
  return m;
}

double Giops(std::int64_t n, double ms) { return ms > 0 ? 2.0 * MultiplyAdds(n) / (ms * 1e6) : 0; }

double PercentOfIntPeak(double giops, const staged::DeviceInfo& device) {
  return device.fp32_gflops > 0 ? 100.0 * giops / (device.fp32_gflops / 2.0) : 0.0;
}

}  // namespace ch05
