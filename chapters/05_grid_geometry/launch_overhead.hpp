/**
 * @file launch_overhead.hpp
 * @brief Beyond the paper, in `ch05_study`: what the 1-D and single-block arrangements pay for
 *        their launches, and how a CUDA Graph, a forked graph or a persistent grid removes it,
 *        beside a loop of as many empty launches.
 *
 * Timing: the plain launch loops and the empty-launch loop are timed without the stream gate
 * (their time includes the host's submission of every launch, which is the cost studied); a
 * graph replay and a persistent launch are one host call each and are timed behind the gate
 * (GPU time only). measure.cuh (`IsGated`) states the rule for the whole chapter.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "chapters/05_grid_geometry/study_results.hpp"
#include "common/timer.hpp"

namespace ch05::study {

/// Checks and times one row of the sweep: its name, its configuration and launch mode.
using MeasureRow = std::function<void(const std::string& name, const Config& cfg, Launch launch)>;

/// Records a timed row that computes nothing (the empty-launch loops).
using AddTimedRow = std::function<void(const std::string& name, const staged::TimingStats& t)>;

/// The configurations the study compares (M×2M, shared, M = 16): the 1-D and single-block ones.
std::vector<Config> LaunchOverheadConfigs();

/// Measures the launch-overhead rows at @p n: for each of `LaunchOverheadConfigs()` the plain
/// loop (unless @p res has it already), `+graph`, `+graph_fork` and `+persistent`; then
/// `empty_launch` (as many launches of an empty kernel as the single-block loop makes; ungated)
/// and `empty_launch+graph` (the same launches replayed as one graph; gated).
/// @param[in] n the side N
/// @param[in] res what the sweep measured so far
/// @param[in] measure checks and times a row (and records it)
/// @param[in] add_empty records an empty-launch row
/// @param[in] warmup,reps warm-ups and timed reps of the empty-launch rows
/// @param[in] stream the stream everything runs on
void MeasureLaunchOverhead(int n, const Results& res, const MeasureRow& measure,
                           const AddTimedRow& add_empty, int warmup, int reps, cudaStream_t stream);

/// Prints the launch-overhead table for every N of @p ns where the graph rows were measured.
/// @param[in] out where to print
/// @param[in] res the sweep's medians
/// @param[in] ns the sweep's N
void PrintLaunchOverhead(std::FILE* out, const Results& res, const std::vector<int>& ns);

}  // namespace ch05::study
