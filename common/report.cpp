/// @file report.cpp
/// @brief Ratio resolution and the three output formats of a report.
#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>

namespace staged {

std::string VerifiedName(Verified v) {
  switch (v) {
    case Verified::kYes:
      return "yes";
    case Verified::kNo:
      return "no";
    case Verified::kSkipped:
      return "skipped";
    case Verified::kReference:
      return "reference";
  }
  return "no";
}

double GigabytesPerSecond(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

Report::Report(std::string chapter, std::uint64_t seed, DeviceInfo device,
               std::string library_variant)
    : chapter_(std::move(chapter)),
      seed_(seed),
      device_(std::move(device)),
      library_variant_(std::move(library_variant)) {}

ReportRow& Report::Add(ReportRow row) {
  rows_.push_back(std::move(row));
  return rows_.back();
}

void Report::SetLibraryRef(const std::string& variant, const std::string& ref) {
  for (ReportRow& r : rows_) {
    if (r.variant == variant) r.library_ref = ref;
  }
}

void Report::ReplaceLibraryRef(const std::string& from, const std::string& to) {
  if (library_variant_ == from) library_variant_ = to;
  for (ReportRow& r : rows_) {
    if (r.library_ref == from) r.library_ref = to;
  }
}

std::string Report::FastestOf(const std::vector<std::string>& variants) const {
  std::string best;
  double best_ms = 0;
  for (const std::string& v : variants) {
    for (const ReportRow& r : rows_) {
      if (r.variant != v) continue;
      if (best.empty() || r.time.median_ms < best_ms) {
        best = v;
        best_ms = r.time.median_ms;
      }
      break;
    }
  }
  return best;
}

const ReportRow* Report::Find(const std::string& variant, const ReportRow& like) const {
  for (const auto& r : rows_) {
    if (r.variant == variant && r.n == like.n && r.dist == like.dist) return &r;
  }
  return nullptr;
}

std::vector<FinalRow> Report::Finalize() const {
  std::vector<FinalRow> out;
  auto ratio = [](const ReportRow* ref, const ReportRow& r) -> std::optional<double> {
    if (ref == nullptr || !(r.time.median_ms > 0) || !(ref->time.median_ms > 0)) return {};
    return ref->time.median_ms / r.time.median_ms;
  };
  for (const auto& r : rows_) {
    FinalRow f;
    f.row = r;
    f.pct_peak = r.pct_peak;
    Ceiling ceiling = r.ceiling;
    if (ceiling == Ceiling::kAuto) {
      ceiling = r.unit == "GB/s"      ? Ceiling::kCopy
                : r.unit == "GFLOP/s" ? Ceiling::kFp32
                                      : Ceiling::kNone;
    }
    const double peak = ceiling == Ceiling::kCopy   ? device_.copy_gbps
                        : ceiling == Ceiling::kRead ? device_.read_gbps
                        : ceiling == Ceiling::kFp32 ? device_.fp32_gflops
                                                    : 0.0;
    if (!f.pct_peak && peak > 0) f.pct_peak = 100.0 * r.throughput / peak;
    f.speedup_cpu = ratio(Find(r.cpu_ref.empty() ? "cpu" : r.cpu_ref, r), r);
    f.speedup_naive = ratio(Find(r.naive_ref.empty() ? "naive" : r.naive_ref, r), r);
    f.vs_library = ratio(Find(r.library_ref.empty() ? library_variant_ : r.library_ref, r), r);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<std::string> Report::UngatedRows() const {
  std::vector<std::string> names;
  for (const auto& r : rows_) {
    if (!r.time.ungated_reason.empty()) {
      names.push_back(r.variant + " (n = " + std::to_string(r.n) + ", " + r.dist + ")");
    }
  }
  return names;
}

bool Report::AllVerified() const {
  for (const auto& r : rows_) {
    if (r.verified == Verified::kNo) return false;
  }
  return true;
}

namespace {

std::string Num(double v, int precision) {
  if (!std::isfinite(v)) return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string Opt(const std::optional<double>& v, int precision, const char* none) {
  return v ? Num(*v, precision) : none;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string Pad(std::string s, std::size_t width, bool left) {
  if (s.size() >= width) return s;
  return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

}  // namespace

void Report::Print(std::ostream& out, OutputFormat format) const {
  const auto rows = Finalize();
  if (format == OutputFormat::kCsv) {
    out << kReportColumns << "\n";
    for (const auto& f : rows) {
      const auto& r = f.row;
      out << chapter_ << ',' << r.variant << ',' << r.n << ',' << r.dist << ',' << seed_ << ','
          << Num(r.time.median_ms, 6) << ',' << Num(r.time.min_ms, 6) << ','
          << Num(r.time.max_ms, 6) << ',' << r.time.reps << ',' << Num(r.throughput, 3) << ','
          << r.unit << ',' << Opt(f.pct_peak, 2, "") << ',' << Opt(f.speedup_cpu, 3, "") << ','
          << Opt(f.speedup_naive, 3, "") << ',' << Opt(f.vs_library, 3, "") << ','
          << VerifiedName(r.verified) << "\n";
    }
    return;
  }
  if (format == OutputFormat::kJson) {
    out << "{\n  \"device\": {\"name\": " << JsonString(device_.name) << ", \"cc\": \""
        << device_.cc_major << '.' << device_.cc_minor << "\", \"sms\": " << device_.sm_count
        << ", \"copy_gbps\": " << Num(device_.copy_gbps, 1)
        << ", \"read_gbps\": " << Num(device_.read_gbps, 1)
        << ", \"fp32_gflops\": " << Num(device_.fp32_gflops, 1)
        << ", \"fp32_source\": " << JsonString(device_.fp32_source) << "},\n  \"rows\": [";
    auto field = [](const std::optional<double>& v, int p) { return v ? Num(*v, p) : "null"; };
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& f = rows[i];
      const auto& r = f.row;
      out << (i ? ",\n" : "\n") << "    {\"chapter\": " << JsonString(chapter_)
          << ", \"variant\": " << JsonString(r.variant) << ", \"n\": " << r.n
          << ", \"dist\": " << JsonString(r.dist) << ", \"seed\": " << seed_
          << ", \"median_ms\": " << Num(r.time.median_ms, 6)
          << ", \"min_ms\": " << Num(r.time.min_ms, 6) << ", \"max_ms\": " << Num(r.time.max_ms, 6)
          << ", \"reps\": " << r.time.reps << ", \"throughput\": " << Num(r.throughput, 3)
          << ", \"unit\": " << JsonString(r.unit) << ", \"pct_peak\": " << field(f.pct_peak, 2)
          << ", \"speedup_cpu\": " << field(f.speedup_cpu, 3)
          << ", \"speedup_naive\": " << field(f.speedup_naive, 3)
          << ", \"vs_library\": " << field(f.vs_library, 3)
          << ", \"verified\": " << JsonString(VerifiedName(r.verified)) << "}";
    }
    out << "\n  ]\n}\n";
    return;
  }
  // Human table.
  out << "device:  " << device_.Describe() << "\n";
  out << "chapter: " << chapter_ << "   seed: " << seed_ << "\n\n";
  const std::vector<std::string> head = {"variant", "n",      "dist",       "median ms", "min ms",
                                         "max ms",  "reps",   "throughput", "% peak",    "x cpu",
                                         "x naive", "vs lib", "verified"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& f : rows) {
    const auto& r = f.row;
    cells.push_back({r.variant, std::to_string(r.n), r.dist, Num(r.time.median_ms, 4),
                     Num(r.time.min_ms, 4), Num(r.time.max_ms, 4), std::to_string(r.time.reps),
                     Num(r.throughput, 1) + " " + r.unit, Opt(f.pct_peak, 1, "-"),
                     Opt(f.speedup_cpu, 2, "-"), Opt(f.speedup_naive, 2, "-"),
                     Opt(f.vs_library, 2, "-"), VerifiedName(r.verified)});
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t c = 0; c < head.size(); ++c) {
    width[c] = head[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& v) {
    for (std::size_t c = 0; c < v.size(); ++c) {
      out << (c ? "  " : "") << Pad(v[c], width[c], c == 0 || c == 2 || c + 1 == v.size());
    }
    out << "\n";
  };
  line(head);
  for (const auto& row : cells) line(row);
  bool any_skipped = false;
  for (const auto& r : rows_) any_skipped |= r.verified == Verified::kSkipped;
  out << "\nverified: " << (!AllVerified() ? "no" : (any_skipped ? "skipped (--no-verify)" : "yes"))
      << "\n";
}

}  // namespace staged
