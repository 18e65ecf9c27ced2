/**
 * @file report.hpp
 * @brief The benchmark report: a human table, CSV or JSON with one fixed column set.
 *
 * Columns, in this order:
 * `chapter,variant,n,dist,seed,median_ms,min_ms,max_ms,reps,throughput,unit,pct_peak,`
 * `speedup_cpu,speedup_naive,vs_library,verified`.
 *
 * Ratios are filled when the report is printed, from rows with the same n and dist:
 * `speedup_cpu` = CPU median / this median, `speedup_naive` = naive median / this median,
 * `vs_library` = library median / this median (higher is better for all three). Each row names
 * the rows it is compared with (`cpu_ref`, `naive_ref`, `library_ref`); the report supplies
 * defaults. `pct_peak` is computed against the row's `Ceiling`: by default GB/s against the
 * measured copy bandwidth and GFLOP/s against the FP32 rate; a read-only kernel names
 * `Ceiling::kRead` (the measured read bandwidth). Other units leave it to the chapter.
 */
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "device_info.hpp"
#include "timer.hpp"

namespace staged {

/// The exact CSV header every executable prints.
inline constexpr const char* kReportColumns =
    "chapter,variant,n,dist,seed,median_ms,min_ms,max_ms,reps,throughput,unit,pct_peak,"
    "speedup_cpu,speedup_naive,vs_library,verified";

/// Verification states a row can report.
enum class Verified { kYes, kNo, kSkipped, kReference };

/// `yes`, `no`, `skipped` or `reference`.
std::string VerifiedName(Verified v);

/// The measured ceiling a row's `pct_peak` is taken against.
enum class Ceiling {
  kAuto,  ///< GB/s: copy bandwidth; GFLOP/s: FP32 rate; other units: none
  kCopy,  ///< device copy bandwidth (bytes read + written): kernels that read and write
  kRead,  ///< read-only streaming bandwidth: kernels that only read
  kFp32,  ///< FP32 FMA rate
  kNone,  ///< no automatic percentage (the chapter may set `pct_peak` itself)
};

/// One measured variant.
struct ReportRow {
  std::string variant;      ///< `naive`, `optimized`, `optimized:<stage>`, `library:cub`, `cpu`
  std::uint64_t n = 0;      ///< problem size
  std::string dist;         ///< distribution name, or `-`
  TimingStats time;         ///< median/min/max in ms
  double throughput = 0.0;  ///< in `unit`
  std::string unit;         ///< `GB/s`, `GFLOP/s`, `GE/s`, ...
  std::optional<double> pct_peak;      ///< % of the measured peak (else from `ceiling`)
  Ceiling ceiling = Ceiling::kAuto;    ///< what `pct_peak` is measured against
  Verified verified = Verified::kYes;  ///< verification outcome
  std::string cpu_ref;                 ///< row used for speedup_cpu (empty: report default)
  std::string naive_ref;               ///< row used for speedup_naive (empty: report default)
  std::string library_ref;             ///< row used for vs_library (empty: report default)
};

/// A row after the ratios were computed (what is printed).
struct FinalRow {
  ReportRow row;                        ///< the measured values
  std::optional<double> pct_peak;       ///< resolved % of peak
  std::optional<double> speedup_cpu;    ///< CPU median / this median
  std::optional<double> speedup_naive;  ///< naive median / this median
  std::optional<double> vs_library;     ///< library median / this median
};

/// Collects rows for one chapter run and prints them.
class Report {
 public:
  /// @param[in] chapter folder name, e.g. `01_minmax_reduction`
  /// @param[in] seed the generator seed of this run (printed in every row)
  /// @param[in] device the device and its measured peaks
  /// @param[in] library_variant default `library_ref`, e.g. `library:cub`
  Report(std::string chapter, std::uint64_t seed, DeviceInfo device, std::string library_variant);

  /// Appends a row and returns it for further edits (valid until the next `Add`).
  ReportRow& Add(ReportRow row);
  /// Makes @p variant the default `library_ref`: for a reference chosen after its rows were
  /// measured (the fastest of several library rows).
  /// @param[in] variant a row's variant
  void SetLibraryVariant(std::string variant) { library_variant_ = std::move(variant); }
  /// Sets `library_ref` of every row named @p variant to @p ref.
  /// @param[in] variant the rows
  /// @param[in] ref the library row they are compared with
  void SetLibraryRef(const std::string& variant, const std::string& ref);
  /// Compares every row compared with @p from (its `library_ref`, or the default) with @p to
  /// instead: for a reference chosen after its rows were measured.
  /// @param[in] from the library row the rows were compared with
  /// @param[in] to the library row they are compared with now
  void ReplaceLibraryRef(const std::string& from, const std::string& to);
  /// Of @p variants, the one whose row has the smallest median (the first one on a tie); empty
  /// when none of them has a row. For a report of one size and distribution.
  /// @param[in] variants candidate rows, e.g. a library call with a 32- and a 64-bit count
  std::string FastestOf(const std::vector<std::string>& variants) const;
  /// All rows with their ratios resolved.
  std::vector<FinalRow> Finalize() const;
  /// True when no row reports `verified = no`.
  bool AllVerified() const;
  /// Prints the report; the table form ends with a line `verified: yes|no|skipped`.
  void Print(std::ostream& out, OutputFormat format) const;
  /// The rows whose reps were timed without the stream gate although it was asked for
  /// (`TimingStats::ungated_reason` set), as "variant (n = N, dist)".
  std::vector<std::string> UngatedRows() const;

 private:
  const ReportRow* Find(const std::string& variant, const ReportRow& like) const;
  std::string chapter_;
  std::uint64_t seed_;
  DeviceInfo device_;
  std::string library_variant_;
  std::vector<ReportRow> rows_;
};

/// Throughput in GB/s for @p bytes moved in @p ms milliseconds.
double GigabytesPerSecond(double bytes, double ms);

}  // namespace staged
