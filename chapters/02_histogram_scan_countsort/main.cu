/**
 * @file main.cu
 * @brief Driver of `ch02_naive` and `ch02_optimized`: counting sort of bytes (histogram, scan,
 *        runs), verified against the CPU and timed against CUB; or, with `--stdin`, the Russian lab's
 *        binary filter (4-byte little-endian n, n bytes in; n sorted bytes out).
 *
 * Run: `ch02_optimized --n 2^29 --dist uniform` (every variant, CUB and the CPU in one table),
 * `ch02_naive --n 1M`, `ch02_optimized --scan --n 2^24` (adds the scan rows, 32-bit elements:
 * naive, Blelloch, the single-pass scan and its two contrasts, CUB; the single-pass kernels'
 * occupancy on stderr), `ch02_optimized --scan-only --n 2^28` (the scan rows alone),
 * `ch02_optimized --stdin < in.bin > out.bin`.
 *
 * Measurement: every GPU row is the median of `--reps` gated reps (device time only). All rows
 * of one run get the same L2 treatment: L2 is flushed before every rep unless the smallest
 * working set of the run is at least 4x L2. Histogram GB/s count n bytes read (against the
 * measured read bandwidth), sorts 2n bytes and scans 8n bytes (against the copy bandwidth).
 */
#include <algorithm>
#include <climits>
#include <cstdint>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_variants.hpp"
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
// The reference rows each kind of row is compared with.
constexpr const char* kLibraryHistogram = "library:cub-histogram";
constexpr const char* kLibrarySort = "library:cub-pipeline";
constexpr const char* kLibraryScan = "library:cub-scan";
// CUB's scan and radix sort again with a 64-bit item count (the rows above have a 32-bit one);
// the scan rows are compared with the faster of the two scans.
constexpr const char* kLibraryScanCount64 = "library:cub-scan-count64";
constexpr const char* kLibraryRadixCount64 = "library:cub-radix-sort-count64";

// A histogram or scan launcher, as declared in countsort.cuh.
using HistogramFn = void (*)(const std::uint8_t*, std::size_t, std::uint32_t*, void*, std::size_t,
                             cudaStream_t);
using ScanFn = void (*)(const std::uint32_t*, std::uint32_t*, std::size_t, void*, std::size_t,
                        cudaStream_t);

// One variant's histogram and counting sort (histogram may be null: the row is left out).
struct SortStage {
  std::string hist_row;
  HistogramFn histogram;
  std::string sort_row;
  ch02::io::SortFn sort;
  std::size_t temp_bytes;
};

// One scan variant.
struct ScanStage {
  std::string row;
  ScanFn scan;
  std::size_t temp_bytes;
};

std::vector<SortStage> SortStages(std::size_t n, bool skip_naive) {
  using namespace ch02;  // NOLINT: the variants' namespaces, listed side by side
  std::vector<SortStage> stages;
  if (!skip_naive || !kIsOptimized) {
    stages.push_back({"naive:histogram", naive::Histogram, "naive", naive::CountingSort,
                      std::max(naive::HistogramTempBytes(n), naive::CountingSortTempBytes(n))});
  }
  if (kIsOptimized) {
    stages.push_back(
        {"optimized:histogram", optimized::Histogram, "optimized", optimized::CountingSort,
         std::max(optimized::HistogramTempBytes(n), optimized::CountingSortTempBytes(n))});
    stages.push_back({kLibraryHistogram, library::Histogram, "library:cub-radix-sort",
                      library::CountingSort,
                      std::max(library::HistogramTempBytes(n), library::CountingSortTempBytes(n))});
    if (n <= static_cast<std::size_t>(INT_MAX)) {
      stages.push_back({"", nullptr, kLibraryRadixCount64, library::CountingSortCount64,
                        library::CountingSortTempBytes(n)});
    }
    stages.push_back({"", nullptr, kLibrarySort, library::CountingSortPipeline,
                      library::CountingSortPipelineTempBytes(n)});
  }
  return stages;
}

std::vector<ScanStage> ScanStages(std::size_t n, bool skip_naive) {
  using namespace ch02;  // NOLINT: as above
  std::vector<ScanStage> stages;
  if (!skip_naive || !kIsOptimized) {
    stages.push_back({"naive:scan", naive::ExclusiveScan<std::uint32_t>,
                      naive::ExclusiveScanTempBytes<std::uint32_t>(n)});
  }
  if (kIsOptimized) {
    stages.push_back({"optimized:scan-blelloch", optimized::ExclusiveScanBlelloch<std::uint32_t>,
                      optimized::ExclusiveScanBlellochTempBytes<std::uint32_t>(n)});
    // The single-pass scan's two contrasts, then optimized::ExclusiveScan (optimized:scan).
    for (const lookback::Variant& v : lookback::Variants()) {
      std::cerr << v.row << (v.change.empty() ? "" : " (" + v.change + ")") << ": " << v.describe()
                << "\n";
      stages.push_back({v.row, v.scan, v.temp_bytes(n)});
    }
    stages.push_back({kLibraryScan, library::ExclusiveScan<std::uint32_t>,
                      library::ExclusiveScanTempBytes<std::uint32_t>(n)});
    if (n <= static_cast<std::size_t>(INT_MAX)) {
      stages.push_back({kLibraryScanCount64, library::ExclusiveScanCount64<std::uint32_t>,
                        library::ExclusiveScanTempBytes<std::uint32_t>(n)});
    }
  }
  return stages;
}

staged::Verified Check(const staged::VerifyReport& r, const std::string& what) {
  if (!r.ok) std::cerr << what << ": " << r.Summary() << "\n";
  return r.ok ? staged::Verified::kYes : staged::Verified::kNo;
}

// Everything a row needs besides its timing.
struct RowInfo {
  std::string variant;
  double bytes;  // bytes the throughput counts
  staged::Ceiling ceiling;
  staged::Verified verified;
  std::string cpu_ref;
  std::string naive_ref;
  std::string library_ref;
};

void AddRow(staged::Report& report, std::size_t n, const std::string& dist, const RowInfo& info,
            const staged::TimingStats& t) {
  staged::ReportRow row;
  row.variant = info.variant;
  row.n = n;
  row.dist = dist;
  row.time = t;
  row.throughput = staged::GigabytesPerSecond(info.bytes, t.median_ms);
  row.unit = "GB/s";
  row.ceiling = info.ceiling;
  row.verified = info.verified;
  row.cpu_ref = info.cpu_ref;
  row.naive_ref = info.naive_ref;
  row.library_ref = info.library_ref;
  report.Add(row);
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
  bool scan_only = false;
  bool skip_naive = false;
  cli.AddFlag("stdin", &stdin_mode,
              "filter mode: read a 4-byte little-endian n and n bytes (n <= 537000000) from "
              "stdin, write the n sorted bytes to stdout, timings to stderr; --n/--dist ignored");
  cli.AddFlag("scan", &with_scan,
              "also time the exclusive scan of n 32-bit integers (naive, Blelloch, single-pass "
              "look-back and its two contrasts, CUB)");
  cli.AddFlag("scan-only", &scan_only, "time only the scan rows of --scan");
  if (kIsOptimized) {
    cli.AddFlag("skip-naive", &skip_naive,
                "leave out the naive rows (their global atomics take seconds on large all-equal "
                "inputs)");
  }
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
  staged::Report report(kChapter, opt.seed, device, kLibrarySort);
  const std::size_t n = static_cast<std::size_t>(opt.n);
  const std::string dist = staged::DistributionName(opt.dist);
  const bool sort_rows = !scan_only;
  const bool scan_rows = with_scan || scan_only;

  if (kIsOptimized && n > static_cast<std::size_t>(INT_MAX)) {
    std::cerr << "note: n > INT_MAX: the CUB scan and radix sort rows run with a 64-bit item "
                 "count (64-bit offsets), so their -count64 rows are left out\n";
  }
  std::vector<SortStage> sorts;
  if (sort_rows) sorts = SortStages(n, skip_naive);
  std::vector<ScanStage> scans;
  if (scan_rows) scans = ScanStages(n, skip_naive);
  std::size_t temp_bytes = 0;
  for (const SortStage& s : sorts) temp_bytes = std::max(temp_bytes, s.temp_bytes);
  for (const ScanStage& s : scans) temp_bytes = std::max(temp_bytes, s.temp_bytes);
  const std::size_t sort_bytes = sort_rows ? 2 * n : 0;
  const std::size_t scan_bytes = scan_rows ? 2 * n * sizeof(std::uint32_t) : 0;
  staged::RequireDeviceMemory(sort_bytes + scan_bytes + temp_bytes,
                              std::to_string(n) + " bytes, their sorted copy, scan and scratch");

  const std::vector<std::uint8_t> h_in = staged::Generate<std::uint8_t>(n, opt.dist, opt.seed);
  staged::DeviceBuffer<unsigned char> d_temp(temp_bytes);
  // One L2 treatment for every row: flush unless even the smallest working set of the run (n
  // bytes read by a histogram, or 8n by a scan-only run) is 4x L2 or more.
  const std::size_t smallest_working_set = sort_rows ? n : 8 * n;
  const staged::TimingOptions gpu_opt{opt.warmup, opt.reps,
                                      staged::ShouldFlushL2(smallest_working_set, device.l2_bytes)};
  const std::string seed_note = " (seed " + std::to_string(opt.seed) + ")";

  if (sort_rows) {
    std::vector<std::uint32_t> ref_hist(ch02::kNumBins);
    std::vector<std::uint8_t> ref_sorted(n);
    ch02::cpu::Histogram(h_in.data(), n, ref_hist.data());
    ch02::cpu::CountingSort(h_in.data(), ref_sorted.data(), n);
    const double hist_bytes = static_cast<double>(n);
    const double sorted_bytes = 2.0 * static_cast<double>(n);
    if (opt.cpu_reps > 0) {
      const staged::TimingOptions cpu_opt{0, opt.cpu_reps, false};
      std::vector<std::uint32_t> hist(ch02::kNumBins);
      std::vector<std::uint8_t> sorted(n);
      AddRow(report, n, dist,
             {"cpu:histogram", hist_bytes, staged::Ceiling::kRead, staged::Verified::kReference,
              "cpu:histogram", "naive:histogram", kLibraryHistogram},
             staged::TimeCpu(cpu_opt, [&] { ch02::cpu::Histogram(h_in.data(), n, hist.data()); }));
      AddRow(
          report, n, dist,
          {"cpu", sorted_bytes, staged::Ceiling::kCopy, staged::Verified::kReference, "", "", ""},
          staged::TimeCpu(cpu_opt,
                          [&] { ch02::cpu::CountingSort(h_in.data(), sorted.data(), n); }));
    }
    staged::DeviceBuffer<std::uint8_t> d_in(h_in);
    staged::DeviceBuffer<std::uint8_t> d_out(n);
    staged::DeviceBuffer<std::uint32_t> d_hist(ch02::kNumBins);
    for (const SortStage& s : sorts) {
      // Run once and verify, then time.
      staged::Verified hist_ok = staged::Verified::kSkipped;
      staged::Verified sort_ok = staged::Verified::kSkipped;
      d_hist.FillBytes(0xFF);
      d_out.FillBytes(0xAB);
      if (s.histogram)
        s.histogram(d_in.data(), n, d_hist.data(), d_temp.data(), temp_bytes, nullptr);
      s.sort(d_in.data(), d_out.data(), n, d_temp.data(), temp_bytes, nullptr);
      if (opt.verify) {
        if (s.histogram) {
          const std::vector<std::uint32_t> hist = d_hist.ToHost();
          hist_ok = Check(staged::CompareExact(ref_hist.data(), hist.data(), hist.size()),
                          s.hist_row + seed_note);
        }
        const std::vector<std::uint8_t> sorted = d_out.ToHost();
        sort_ok = Check(staged::CompareExact(ref_sorted.data(), sorted.data(), n),
                        s.sort_row + seed_note);
      }
      if (s.histogram) {
        AddRow(report, n, dist,
               {s.hist_row, hist_bytes, staged::Ceiling::kRead, hist_ok, "cpu:histogram",
                "naive:histogram", kLibraryHistogram},
               staged::TimeGpu(gpu_opt, [&](cudaStream_t st) {
                 s.histogram(d_in.data(), n, d_hist.data(), d_temp.data(), temp_bytes, st);
               }));
      }
      AddRow(
          report, n, dist,
          {s.sort_row, sorted_bytes, staged::Ceiling::kCopy, sort_ok, "cpu", "naive", kLibrarySort},
          staged::TimeGpu(gpu_opt, [&](cudaStream_t st) {
            s.sort(d_in.data(), d_out.data(), n, d_temp.data(), temp_bytes, st);
          }));
    }
  }

  if (scan_rows) {
    // n 32-bit counts (the bytes widened), as chapter 03 scans its histograms.
    const std::vector<std::uint32_t> h_counts(h_in.begin(), h_in.end());
    std::vector<std::uint32_t> ref_scan(n);
    ch02::cpu::ExclusiveScan(h_counts.data(), ref_scan.data(), n);
    staged::DeviceBuffer<std::uint32_t> d_counts(h_counts);
    staged::DeviceBuffer<std::uint32_t> d_scan(n);
    for (const ScanStage& s : scans) {
      staged::Verified ok = staged::Verified::kSkipped;
      d_scan.FillBytes(0xFF);
      s.scan(d_counts.data(), d_scan.data(), n, d_temp.data(), temp_bytes, nullptr);
      if (opt.verify) {
        const std::vector<std::uint32_t> got = d_scan.ToHost();
        ok = Check(staged::CompareExact(ref_scan.data(), got.data(), n), s.row + seed_note);
      }
      AddRow(report, n, dist,
             {s.row, 2.0 * sizeof(std::uint32_t) * n, staged::Ceiling::kCopy, ok, "-", "naive:scan",
              kLibraryScan},
             staged::TimeGpu(gpu_opt, [&](cudaStream_t st) {
               s.scan(d_counts.data(), d_scan.data(), n, d_temp.data(), temp_bytes, st);
             }));
    }
    // CUB at its best: the scan rows against the faster count width at this size.
    const std::string scan_ref = report.FastestOf({kLibraryScan, kLibraryScanCount64});
    if (!scan_ref.empty()) {
      report.ReplaceLibraryRef(kLibraryScan, scan_ref);
      std::cerr << "ch02: scan rows' vs_library against " << scan_ref
                << ", the faster of CUB's two count widths here\n";
    }
  }
  return staged::FinishRun(report, opt);
}

}  // namespace

/// Entry point: benchmark mode (verified table of every variant) or the --stdin filter.
int main(int argc, char** argv) { return staged::RunMain(argc, argv, Run); }
