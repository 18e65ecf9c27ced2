/**
 * @file measure.cuh
 * @brief What main.cu and study.cu share: one problem (A, B and C for one N), "run once, verify,
 *        then time" for any variant and launch mode, and the throughput unit of the chapter.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace ch05 {

/// A and B (values in [-8, 8]) on host and device, and a device C, for one N.
struct Problem {
  /// Refuses (InputError) a problem larger than free device memory, then generates A from
  /// @p seed and B from @p seed + 1 and copies them to the device.
  Problem(int n, std::uint64_t seed);
  int n;                                   ///< the side N
  std::vector<std::int32_t> a;             ///< A on the host
  std::vector<std::int32_t> b;             ///< B on the host
  staged::DeviceBuffer<std::int32_t> d_a;  ///< A on the device
  staged::DeviceBuffer<std::int32_t> d_b;  ///< B on the device
  staged::DeviceBuffer<std::int32_t> d_c;  ///< C on the device (poisoned before each check)
};

/// GPU work on one stream: a plain launch loop, a graph replay, a persistent launch, ...
using Work = std::function<void(cudaStream_t)>;

/// Checks a C copied back to the host; returns the verdict.
using Checker = std::function<staged::VerifyReport(const std::vector<std::int32_t>& c)>;

/// Work that computes C for @p cfg with @p launch. Graph modes capture once here (on @p stream)
/// and each call replays the graph.
Work MakeWork(Problem& p, const Config& cfg, Launch launch, cudaStream_t stream);

/// How to time: the usual warm-up and reps, but a point whose checked run took longer than
/// `slow_ms` gets no warm-up (the checked run was one) and a single timed rep.
struct TimingPlan {
  int warmup = 3;          ///< warm-up runs for fast points
  int reps = 20;           ///< timed reps for fast points
  double slow_ms = 250.0;  ///< above this, 0 warm-up and 1 rep
};

/// The result of one measured variant.
struct Measured {
  staged::TimingStats time;     ///< timed reps (after the checked run)
  staged::VerifyReport check;   ///< verdict of the checked run (`checked == 0`: not checked)
  double first_ms = 0.0;        ///< the checked run's time (includes one-off costs)
  std::vector<std::int32_t> c;  ///< C of the checked run, on the host
};

/// Poisons C, runs @p work once, copies C back and checks it with @p check (skipped when empty),
/// then times @p work according to @p plan. Everything runs on @p stream.
Measured RunCheckTime(Problem& p, const Work& work, const Checker& check, const TimingPlan& plan,
                      cudaStream_t stream);

/// Integer operations per second of one product: 2N³ / time, in 10⁹/s (`GIOP/s`).
double Giops(std::int64_t n, double ms);

/// The unit string of Giops.
inline constexpr const char* kUnit = "GIOP/s";

/// % of the device's int32 multiply-add peak for @p giops: the int32 IMAD rate of sm_80/sm_90
/// is half the FP32 FMA rate (64 vs 128 lanes per SM per clock), so the peak is fp32_gflops / 2.
double PercentOfIntPeak(double giops, const staged::DeviceInfo& device);

}  // namespace ch05
