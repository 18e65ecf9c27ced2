/**
 * @file driver.cuh
 * @brief The chapter driver's run (main.cu): the keys, their CPU reference, the device arrays
 *        and the report, and how a row is verified and timed.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/device_buffer.hpp"
#include "common/entry.hpp"
#include "common/report.hpp"
#include "common/stream.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace ch03 {

/// One run of the driver: the keys, their reference, the device arrays, and the report.
class Driver {
 public:
  /// @param[in] ctx the run's options and device
  /// @param[in] keys the keys to sort
  /// @param[in] dist what they are, the rows' `dist` column
  Driver(const staged::RunContext& ctx, std::vector<std::uint32_t> keys, std::string dist)
      : ctx_(ctx),
        n_(keys.size()),
        keys_(std::move(keys)),
        dist_(std::move(dist)),
        d_in_(keys_),
        d_out_(n_),
        d_keys_(n_),
        report_("03_mppsort", ctx.options.seed, ctx.device, "library:cub-keys32") {
    const staged::CommonOptions& opt = ctx.options;
    // Reference: std::sort (timed as the CPU row) or, with --cpu-reps 0, a CPU radix sort.
    if (opt.cpu_reps > 0) {
      const staged::TimingOptions cpu_opt{0, opt.cpu_reps, false};
      Add("cpu", staged::TimeCpu(cpu_opt, [&] { ref_ = ch03::cpu::Sort(keys_); }),
          staged::Verified::kReference);
    } else if (opt.verify) {
      ref_ = ch03::cpu::RadixSort(keys_);
    }
    // snippet-begin: ch03-timing
    // One L2 policy for every variant: in + out + an n-key scratch buffer (each variant has
    // one: CUB's second buffer, thrust's temporary block, mppSort's partition buffer).
    const bool flush = staged::ShouldFlushL2(3 * n_ * sizeof(std::uint32_t), ctx.device.l2_bytes);
    gpu_opt_ = staged::TimingOptions{opt.warmup, opt.reps, flush, true};
    // Sorts that wait for the host inside a call (to read the sizes of the next step) cannot
    // run behind the timer's gate: their rows are timed without it and include those waits.
    host_sync_opt_ = gpu_opt_;
    host_sync_opt_.gate = false;
    // snippet-end: ch03-timing
  }

  std::size_t n() const { return n_; }                             ///< keys
  cudaStream_t stream() { return stream_.get(); }                  ///< the run's stream
  const std::uint32_t* in() { return d_in_.data(); }               ///< the keys, on the device
  std::uint32_t* out() { return d_out_.data(); }                   ///< n keys of output
  std::uint32_t* keys() { return d_keys_.data(); }                 ///< n keys a sort may overwrite
  staged::Report& report() { return report_; }                     ///< the rows so far
  const staged::TimingOptions& gated() const { return gpu_opt_; }  ///< GPU time only
  /// For sorts that wait for the host inside a call (timed with the host's share).
  const staged::TimingOptions& ungated() const { return host_sync_opt_; }
  bool flushes_l2() const { return gpu_opt_.flush_l2; }       ///< whether each rep flushes L2
  double read_gbps() const { return ctx_.device.read_gbps; }  ///< the measured read bandwidth
  const std::vector<std::uint32_t>& host_keys() const { return keys_; }  ///< the keys, on the host

  /// Adds a row of the report (valid until the next `Add`).
  staged::ReportRow& Add(const std::string& name, const staged::TimingStats& t,
                         staged::Verified v) {
    staged::ReportRow row;
    row.variant = name;
    row.n = n_;
    row.dist = dist_;
    row.time = t;
    row.unit = "GE/s";
    row.throughput = t.median_ms > 0 ? n_ / (t.median_ms * 1e-3) / 1e9 : 0.0;
    if (t.median_ms > 0 && ctx_.device.copy_gbps > 0) {
      row.pct_peak = 100.0 * (8.0 * n_ / (t.median_ms * 1e-3) / 1e9) / ctx_.device.copy_gbps;
    }
    row.verified = v;
    return report_.Add(row);
  }

  /// Compares the n keys at @p d_result with the reference (or skips, with --no-verify).
  staged::Verified Check(const std::string& what, const std::uint32_t* d_result) {
    if (!ctx_.options.verify) return staged::Verified::kSkipped;
    std::vector<std::uint32_t> got(n_);
    if (n_ > 0) {
      CUDA_CHECK(
          cudaMemcpy(got.data(), d_result, n_ * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    }
    const staged::VerifyReport r = staged::CompareExact(ref_.data(), got.data(), n_);
    if (!r.ok) {
      std::cerr << "ch03 " << what << " (seed " << ctx_.options.seed << "): " << r.Summary()
                << "\n";
    }
    return r.ok ? staged::Verified::kYes : staged::Verified::kNo;
  }

  /// Verifies, then times @p sort(stream) of `in()` into `out()` (poisoned first, so that a
  /// missing write cannot pass as a sorted key). Returns the row's median.
  template <typename Sort>
  double Run(const std::string& name, Sort&& sort, const staged::TimingOptions& timing) {
    d_out_.FillBytes(0xFF, stream());
    sort(stream());
    CUDA_CHECK(cudaStreamSynchronize(stream()));
    const staged::Verified v = Check(name, out());
    return Add(name, staged::TimeGpu(timing, sort, stream()), v).time.median_ms;
  }

  /// The same for a sort that overwrites its input: every run starts from a fresh copy of the
  /// input in `keys()` (untimed), with `out()` as its second buffer; @p sort returns the buffer
  /// that holds the sorted keys.
  template <typename Sort>
  double RunInPlace(const std::string& name, Sort&& sort, const staged::TimingOptions& timing) {
    auto restore = [&](cudaStream_t st) {
      if (n_ > 0) {
        CUDA_CHECK(cudaMemcpyAsync(keys(), in(), n_ * sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToDevice, st));
      }
    };
    restore(stream());
    d_out_.FillBytes(0xFF, stream());
    const std::uint32_t* result = sort(stream());
    CUDA_CHECK(cudaStreamSynchronize(stream()));
    const staged::Verified v = Check(name, result);
    auto timed = [&](cudaStream_t st) { sort(st); };
    return Add(name, staged::TimeGpuPrepared(timing, timed, restore, stream()), v).time.median_ms;
  }

 private:
  const staged::RunContext& ctx_;
  std::size_t n_;
  std::vector<std::uint32_t> keys_;
  std::string dist_;
  std::vector<std::uint32_t> ref_;
  staged::Stream stream_;
  staged::DeviceBuffer<std::uint32_t> d_in_, d_out_, d_keys_;
  staged::Report report_;
  staged::TimingOptions gpu_opt_, host_sync_opt_;
};

}  // namespace ch03
