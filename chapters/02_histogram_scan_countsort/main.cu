/**
 * @file main.cu
 * @brief Driver of `ch02_naive` and `ch02_optimized`: counting sort of bytes (histogram, scan,
 *        runs), verified against the CPU and timed against CUB; or, with `--stdin`, the seed's
 *        binary filter (4-byte little-endian n, n bytes in; n sorted bytes out).
 *
 * Run: `ch02_optimized --n 2^29 --dist uniform` (every variant, CUB and the CPU in one table),
 * `ch02_naive --n 1M`, `ch02_optimized --scan --n 2^24` (adds the scan rows, 32-bit elements),
 * `ch02_optimized --stdin < in.bin > out.bin`.
 */
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/stdin_mode.cuh"
#include "common/cli.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/entry.hpp"
#include "common/generate.hpp"
#include "common/report.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace {

constexpr const char* kChapter = "02_histogram_scan_countsort";
constexpr bool kIsOptimized = std::string_view(STAGED_VARIANT) == "optimized";

// A histogram or sort launcher with its scratch query, as declared in countsort.cuh.
using HistogramFn = void (*)(const std::uint8_t*, std::size_t, std::uint32_t*, void*, std::size_t,
                             cudaStream_t);
using ScanFn = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t, void*, std::size_t,
                        cudaStream_t);

struct Stage {
  const char* variant;  // report row name
  HistogramFn histogram;
  ch02::io::SortFn sort;
  ScanFn scan;
  std::size_t temp_bytes;
};

staged::Verified Check(const staged::VerifyReport& r, const std::string& what) {
  if (!r.ok) std::cerr << what << ": " << r.Summary() << "\n";
  return r.ok ? staged::Verified::kYes : staged::Verified::kNo;
}

int Run(int argc, char** argv) {
  staged::CliDefaults defaults;
  defaults.n = 1 << 24;
  defaults.min_n = 0;  // sorting nothing is valid: an empty output
  defaults.max_n = ch02::kMaxElements;
  staged::Cli cli("ch02_" STAGED_VARIANT,
                  "Counting sort of bytes: 256-bin histogram, exclusive scan, output runs",
                  defaults);
  bool stdin_mode = false;
  bool with_scan = false;
  cli.AddFlag("stdin", &stdin_mode,
              "filter mode: read a 4-byte little-endian n and n bytes (n <= 537000000) from "
              "stdin, write the n sorted bytes to stdout, timings to stderr; --n/--dist ignored");
  cli.AddFlag("scan", &with_scan,
              "also time the exclusive scan of n 32-bit integers (naive, optimized, CUB)");
  const staged::CommonOptions opt = cli.Parse(argc, argv);
  if (opt.help) return 0;

  if (stdin_mode) {
    if (kIsOptimized) {
      return ch02::io::RunStdinMode(stdin, stdout, std::cerr, "ch02_" STAGED_VARIANT,
                                    ch02::optimized::CountingSort,
                                    ch02::optimized::CountingSortTempBytes, opt.verify);
    }
    return ch02::io::RunStdinMode(stdin, stdout, std::cerr, "ch02_" STAGED_VARIANT,
                                  ch02::naive::CountingSort, ch02::naive::CountingSortTempBytes,
                                  opt.verify);
  }

  staged::DeviceInfo device = staged::RequireGpu();
  staged::MeasurePeaks(device);
  staged::Report report(kChapter, opt.seed, device, "library:cub-radix-sort");
  const std::size_t n = static_cast<std::size_t>(opt.n);
  const std::string dist = staged::DistributionName(opt.dist);

  // Variants this executable runs: the naive one times only itself and the CPU.
  std::vector<Stage> stages = {{"naive", ch02::naive::Histogram, ch02::naive::CountingSort,
                                ch02::naive::ExclusiveScan<std::uint32_t>,
                                ch02::naive::CountingSortTempBytes(n)}};
  if (kIsOptimized) {
    stages.push_back({"optimized", ch02::optimized::Histogram, ch02::optimized::CountingSort,
                      ch02::optimized::ExclusiveScan<std::uint32_t>,
                      ch02::optimized::CountingSortTempBytes(n)});
    stages.push_back(
        {"library", ch02::library::Histogram, ch02::library::CountingSort,
         ch02::library::ExclusiveScan<std::uint32_t>,
         std::max(ch02::library::CountingSortTempBytes(n), ch02::library::HistogramTempBytes(n))});
  }
  std::size_t temp_bytes = 0;
  for (const Stage& s : stages) {
    temp_bytes = std::max(temp_bytes, s.temp_bytes);
    if (with_scan) {
      temp_bytes = std::max({temp_bytes, ch02::naive::ExclusiveScanTempBytes<std::uint32_t>(n),
                             ch02::optimized::ExclusiveScanTempBytes<std::uint32_t>(n),
                             kIsOptimized ? ch02::library::ExclusiveScanTempBytes<std::uint32_t>(n)
                                          : std::size_t{0}});
    }
  }
  const std::size_t scan_bytes = with_scan ? 2 * n * sizeof(std::uint32_t) : 0;
  staged::RequireDeviceMemory(2 * n + temp_bytes + scan_bytes,
                              std::to_string(n) + " bytes, their sorted copy and scratch");

  // CPU references.
  const std::vector<std::uint8_t> h_in = staged::Generate<std::uint8_t>(n, opt.dist, opt.seed);
  std::vector<std::uint32_t> ref_hist(ch02::kNumBins);
  std::vector<std::uint8_t> ref_sorted(n);
  ch02::cpu::Histogram(h_in.data(), n, ref_hist.data());
  ch02::cpu::CountingSort(h_in.data(), ref_sorted.data(), n);

  staged::DeviceBuffer<std::uint8_t> d_in(h_in);
  staged::DeviceBuffer<std::uint8_t> d_out(n);
  staged::DeviceBuffer<std::uint32_t> d_hist(ch02::kNumBins);
  staged::DeviceBuffer<unsigned char> d_temp(temp_bytes);
  const staged::TimingOptions gpu_opt{opt.warmup, opt.reps, /*flush_l2=*/true};
  const double hist_bytes = static_cast<double>(n);
  const double sort_bytes = 2.0 * static_cast<double>(n);

  auto add = [&](const std::string& variant, const staged::TimingStats& t, double bytes,
                 staged::Verified verified, const std::string& cpu_ref,
                 const std::string& naive_ref, const std::string& library_ref) {
    staged::ReportRow row;
    row.variant = variant;
    row.n = n;
    row.dist = dist;
    row.time = t;
    row.throughput = staged::GigabytesPerSecond(bytes, t.median_ms);
    row.unit = "GB/s";
    row.verified = verified;
    row.cpu_ref = cpu_ref;
    row.naive_ref = naive_ref;
    row.library_ref = library_ref;
    report.Add(row);
  };

  if (opt.cpu_reps > 0) {
    const staged::TimingOptions cpu_opt{0, opt.cpu_reps, false};
    std::vector<std::uint32_t> hist(ch02::kNumBins);
    std::vector<std::uint8_t> sorted(n);
    add("cpu:histogram",
        staged::TimeCpu(cpu_opt, [&] { ch02::cpu::Histogram(h_in.data(), n, hist.data()); }),
        hist_bytes, staged::Verified::kReference, "cpu:histogram", "naive:histogram",
        "library:cub-histogram");
    add("cpu",
        staged::TimeCpu(cpu_opt, [&] { ch02::cpu::CountingSort(h_in.data(), sorted.data(), n); }),
        sort_bytes, staged::Verified::kReference, "", "", "");
  }

  for (const Stage& s : stages) {
    const bool is_library = std::string(s.variant) == "library";
    const std::string hist_row =
        is_library ? "library:cub-histogram" : std::string(s.variant) + ":histogram";
    const std::string sort_row = is_library ? "library:cub-radix-sort" : s.variant;
    // Run once and verify, then time.
    staged::Verified hist_ok = staged::Verified::kSkipped;
    staged::Verified sort_ok = staged::Verified::kSkipped;
    d_hist.FillBytes(0xFF);
    s.histogram(d_in.data(), n, d_hist.data(), d_temp.data(), temp_bytes, nullptr);
    d_out.FillBytes(0xAB);
    s.sort(d_in.data(), d_out.data(), n, d_temp.data(), temp_bytes, nullptr);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (opt.verify) {
      const std::vector<std::uint32_t> hist = d_hist.ToHost();
      hist_ok = Check(staged::CompareExact(ref_hist.data(), hist.data(), hist.size()),
                      hist_row + " (seed " + std::to_string(opt.seed) + ")");
      const std::vector<std::uint8_t> sorted = d_out.ToHost();
      sort_ok = Check(staged::CompareExact(ref_sorted.data(), sorted.data(), n),
                      sort_row + " (seed " + std::to_string(opt.seed) + ")");
    }
    const staged::TimingStats th = staged::TimeGpu(gpu_opt, [&](cudaStream_t st) {
      s.histogram(d_in.data(), n, d_hist.data(), d_temp.data(), temp_bytes, st);
    });
    const staged::TimingStats ts = staged::TimeGpu(gpu_opt, [&](cudaStream_t st) {
      s.sort(d_in.data(), d_out.data(), n, d_temp.data(), temp_bytes, st);
    });
    add(hist_row, th, hist_bytes, hist_ok, "cpu:histogram", "naive:histogram",
        "library:cub-histogram");
    add(sort_row, ts, sort_bytes, sort_ok, "cpu", "naive", "library:cub-radix-sort");
  }

  if (with_scan) {
    // Scan rows: n 32-bit counts (the bytes widened), as chapter 03 scans its histograms.
    const std::vector<std::uint32_t> h_counts(h_in.begin(), h_in.end());
    std::vector<std::uint32_t> ref_scan(n);
    ch02::cpu::ExclusiveScan(h_counts.data(), ref_scan.data(), n);
    staged::DeviceBuffer<std::uint32_t> d_counts(h_counts);
    staged::DeviceBuffer<std::uint32_t> d_scan(n);
    for (const Stage& s : stages) {
      const std::string name = std::string(s.variant) == "library"
                                   ? "library:cub-scan"
                                   : std::string(s.variant) + ":scan";
      staged::Verified ok = staged::Verified::kSkipped;
      d_scan.FillBytes(0xFF);
      s.scan(d_counts.data(), d_scan.data(), n, d_temp.data(), temp_bytes, nullptr);
      CUDA_CHECK(cudaDeviceSynchronize());
      if (opt.verify) {
        const std::vector<std::uint32_t> got = d_scan.ToHost();
        ok = Check(staged::CompareExact(ref_scan.data(), got.data(), n),
                   name + " (seed " + std::to_string(opt.seed) + ")");
      }
      const staged::TimingStats t = staged::TimeGpu(gpu_opt, [&](cudaStream_t st) {
        s.scan(d_counts.data(), d_scan.data(), n, d_temp.data(), temp_bytes, st);
      });
      add(name, t, 2.0 * sizeof(std::uint32_t) * n, ok, "-", "naive:scan", "library:cub-scan");
    }
  }
  return staged::FinishRun(report, opt);
}

}  // namespace

/// Entry point: benchmark mode (verified table of every variant) or the --stdin filter.
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
