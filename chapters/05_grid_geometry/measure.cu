/**
 * @file measure.cu
 * @brief Run once, verify, then time: the measuring loop shared by every chapter 05 executable.
 */
#include "chapters/05_grid_geometry/measure.cuh"

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

Work MakeWork(Problem& p, const Config& cfg, Launch launch, cudaStream_t stream) {
  const std::int32_t* a = p.d_a.data();
  const std::int32_t* b = p.d_b.data();
  std::int32_t* c = p.d_c.data();
  const int n = p.n;
  if (launch == Launch::kGraph || launch == Launch::kGraphFork) {
    // Captured and instantiated once; every call is one cudaGraphLaunch.
    auto graph = std::make_shared<GraphMatmul>(a, b, c, n, cfg, launch, stream);
    return [graph](cudaStream_t s) { graph->Replay(s); };
  }
  return [=](cudaStream_t s) { Matmul(a, b, c, n, cfg, launch, s); };
}

Measured RunCheckTime(Problem& p, const Work& work, const Checker& check, const TimingPlan& plan,
                      cudaStream_t stream) {
  Measured m;
  p.d_c.FillBytes(0xFF, stream);  // a C element the kernel forgets cannot pass by accident
  staged::GpuTimer timer(stream);
  timer.Start();
  work(stream);
  timer.Stop();
  m.first_ms = timer.ElapsedMs();
  if (check) {
    m.c.resize(p.d_c.size());
    p.d_c.CopyToHost(m.c.data(), m.c.size(), stream);
    m.check = check(m.c);
  }
  const bool slow = m.first_ms > plan.slow_ms;
  m.time = staged::TimeGpu(
      staged::TimingOptions{slow ? 0 : plan.warmup, slow ? 1 : plan.reps, false}, work, stream);
  return m;
}

double Giops(std::int64_t n, double ms) { return ms > 0 ? 2.0 * MultiplyAdds(n) / (ms * 1e6) : 0; }

double PercentOfIntPeak(double giops, const staged::DeviceInfo& device) {
  return device.fp32_gflops > 0 ? 100.0 * giops / (device.fp32_gflops / 2.0) : 0.0;
}

}  // namespace ch05
