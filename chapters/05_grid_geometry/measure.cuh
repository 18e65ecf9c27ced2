/**
 * @file measure.cuh
 * @brief What main.cu and study.cu share: one problem (A, B and C for one N), "run once, verify,
 *        then time" for any variant and launch mode, the rules for timing them (gated or not,
 *        how many reps), and the throughput unit of the chapter.
 *
 * @par Gated and ungated timing
 * `staged::TimeGpu` normally holds each rep behind a closed `StreamGate`, so the events measure
 * GPU time only. That works when a run is one host call (a launch or a graph replay): the host
 * queues it, then the gate opens. The paper's 1-D and single-block arrangements issue K/2 and
 * K²/4 launches per run (up to tens of thousands). The driver queues only about a thousand
 * launches, so a closed gate would stall the host, and besides, the cost of issuing those
 * launches is exactly what the arrangement comparison and the launch-overhead study are about.
 * So the rule (`IsGated`): plain launch loops of the 1-D and single-block arrangements (and the
 * empty-launch loop of the study) are timed *without* the gate, and their times include the
 * host's submission work; the 2-D grid (one launch), graph replays and persistent launches are
 * timed behind the gate (GPU time only).
 *
 * @par L2
 * As in every chapter, a point whose A, B and C (3N² integers) are smaller than 4 × L2 is timed
 * with L2 flushed before each rep (`staged::ShouldFlushL2`), for every variant of the run. For
 * an ungated rep, `TimeGpu` waits for the flush to finish before the host starts issuing the
 * rep's launches, so the flush hides none of the submission time those rows measure.
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

/// GPU work on one stream (a plain launch loop, a graph replay, a persistent launch, ...) and
/// whether it may be timed behind the stream gate.
struct Work {
  std::function<void(cudaStream_t)> run;  ///< queues one whole product on the stream
  bool gated = true;                      ///< false: the host issues many launches per run
};

/// True when a run of @p cfg with @p launch is one host call (one launch, or one graph
/// replay), so it can be timed behind the stream gate; false for the plain launch loops of the
/// 1-D and single-block arrangements (see the file comment).
/// @param[in] cfg the variant
/// @param[in] launch how its launches are issued
bool IsGated(const Config& cfg, Launch launch);

/// Checks a C copied back to the host; returns the verdict.
using Checker = std::function<staged::VerifyReport(const std::vector<std::int32_t>& c)>;

/// Work that computes C for @p cfg with @p launch. Graph modes capture once here (on @p stream)
/// and each call replays the graph.
/// @param[in,out] p the problem (its device buffers)
/// @param[in] cfg the variant
/// @param[in] launch how its launches are issued
/// @param[in] stream where graph modes capture
Work MakeWork(Problem& p, const Config& cfg, Launch launch, cudaStream_t stream);

/// How to time a point: up to `reps` reps after `warmup` warm-ups, but never more reps than fit
/// in `rep_budget_ms` (at least one), judged from the checked run's time.
struct TimingPlan {
  int warmup = 1;                ///< warm-up runs for points whose reps fit the budget
  int reps = 10;                 ///< timed reps for points whose reps fit the budget
  double rep_budget_ms = 300.0;  ///< time the timed reps of one point may take
};

/// The `TimeGpu` options for a point whose checked run took @p first_ms: `plan.reps` reps and
/// `plan.warmup` warm-ups when they fit `plan.rep_budget_ms`; otherwise as many reps as fit (at
/// least 1) and no warm-up (the checked run was one); L2 flushed before each rep when the
/// problem's 3N² integers are below 4 × L2.
/// @param[in] plan the plan
/// @param[in] first_ms time of the checked run
/// @param[in] gated whether the work may run behind the stream gate
/// @param[in] flush_l2 whether to flush L2 before each rep
staged::TimingOptions TimingFor(const TimingPlan& plan, double first_ms, bool gated, bool flush_l2);

/// The result of one measured variant.
struct Measured {
  staged::TimingStats time;     ///< timed reps (after the checked run)
  staged::VerifyReport check;   ///< verdict of the checked run (`checked == 0`: not checked)
  double first_ms = 0.0;        ///< the checked run's time (includes one-off costs)
  std::vector<std::int32_t> c;  ///< C of the checked run, on the host
};

/// Poisons C, runs @p work once, copies C back and checks it with @p check (skipped when empty),
/// then times @p work according to @p plan (gated when `work.gated`, L2 never flushed; see the
/// file comment). Everything runs on
/// @p stream; the waits (the copy of C) happen before the timed reps.
/// @param[in,out] p the problem
/// @param[in] work what to run
/// @param[in] check the verdict on C (may be empty)
/// @param[in] plan reps and warm-ups
/// @param[in] stream the stream
Measured RunCheckTime(Problem& p, const Work& work, const Checker& check, const TimingPlan& plan,
                      cudaStream_t stream);

/// Integer operations per second of one product: 2N³ / time, in 10⁹/s (`GIOP/s`).
/// @param[in] n the side N
/// @param[in] ms time of one product
double Giops(std::int64_t n, double ms);

/// The unit string of Giops.
inline constexpr const char* kUnit = "GIOP/s";

/// % of the device's int32 multiply-add peak for @p giops: the int32 IMAD rate of sm_80/sm_90
/// is half the FP32 FMA rate (64 vs 128 lanes per SM per clock), so the peak is fp32_gflops / 2.
/// @param[in] giops a throughput from Giops
/// @param[in] device the device and its measured FP32 rate
double PercentOfIntPeak(double giops, const staged::DeviceInfo& device);

}  // namespace ch05
