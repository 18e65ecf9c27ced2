/// @file report_test.cpp
/// @brief Host tests of the report: column order, ratios, formats.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "common/report.hpp"

namespace staged {
namespace {

DeviceInfo FakeDevice() {
  DeviceInfo d;
  d.name = "Test GPU";
  d.cc_major = 9;
  d.sm_count = 132;
  d.copy_gbps = 4000.0;
  d.read_gbps = 4500.0;
  d.fp32_gflops = 60000.0;
  d.fp32_source = "measured";
  return d;
}

ReportRow Row(const std::string& variant, double median, double throughput,
              const std::string& unit = "GB/s") {
  ReportRow r;
  r.variant = variant;
  r.n = 1024;
  r.dist = "uniform";
  r.time.median_ms = median;
  r.time.min_ms = median * 0.9;
  r.time.max_ms = median * 1.1;
  r.time.reps = 10;
  r.throughput = throughput;
  r.unit = unit;
  return r;
}

Report Sample() {
  Report rep("01_minmax_reduction", 42, FakeDevice(), "library:cub");
  rep.Add(Row("cpu", 8.0, 500.0)).verified = Verified::kReference;
  rep.Add(Row("naive", 4.0, 1000.0));
  rep.Add(Row("optimized", 1.0, 3600.0));
  rep.Add(Row("library:cub", 2.0, 2000.0));
  return rep;
}

TEST(Report, CsvHasExactColumnsInOrder) {
  std::ostringstream os;
  Sample().Print(os, OutputFormat::kCsv);
  std::string header;
  std::istringstream in(os.str());
  std::getline(in, header);
  EXPECT_EQ(header,
            "chapter,variant,n,dist,seed,median_ms,min_ms,max_ms,reps,throughput,unit,pct_peak,"
            "speedup_cpu,speedup_naive,vs_library,verified");
  std::string line;
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), 15) << line;
  }
  EXPECT_EQ(rows, 4);
  EXPECT_NE(os.str().find("01_minmax_reduction,optimized,1024,uniform,42,1.000000,0.900000,"
                          "1.100000,10,3600.000,GB/s,90.00,8.000,4.000,2.000,yes"),
            std::string::npos)
      << os.str();
}

TEST(Report, RatiosAreReferenceOverThisMedian) {
  auto rows = Sample().Finalize();
  const FinalRow& opt = rows[2];
  EXPECT_DOUBLE_EQ(*opt.speedup_cpu, 8.0);
  EXPECT_DOUBLE_EQ(*opt.speedup_naive, 4.0);
  EXPECT_DOUBLE_EQ(*opt.vs_library, 2.0);
  EXPECT_DOUBLE_EQ(*opt.pct_peak, 90.0);
  EXPECT_DOUBLE_EQ(*rows[3].vs_library, 1.0);
}

TEST(Report, PerRowReferencesAndMissingReferences) {
  Report rep("02_histogram_scan_countsort", 1, FakeDevice(), "library:cub-radix-sort");
  ReportRow h = Row("optimized:histogram", 1.0, 100.0);
  h.library_ref = "library:cub-histogram";
  rep.Add(h);
  rep.Add(Row("library:cub-histogram", 3.0, 30.0));
  ReportRow other = Row("optimized", 2.0, 10.0, "GE/s");
  other.n = 2048;  // no rows share its n: every ratio is left empty
  rep.Add(other);
  auto rows = rep.Finalize();
  EXPECT_DOUBLE_EQ(*rows[0].vs_library, 3.0);
  EXPECT_FALSE(rows[0].speedup_cpu.has_value());
  EXPECT_FALSE(rows[2].vs_library.has_value());
  EXPECT_FALSE(rows[2].pct_peak.has_value());  // GE/s has no automatic peak
  std::ostringstream os;
  rep.Print(os, OutputFormat::kCsv);
  EXPECT_NE(os.str().find(",GE/s,,,,,yes"), std::string::npos) << os.str();
}

// A reference chosen after measuring: the faster of a library call's two count widths becomes
// the reference of every row that named the first (explicitly and through the default).
TEST(Report, FastestOfChoosesTheReferenceAfterMeasuring) {
  Report rep("02_histogram_scan_countsort", 1, FakeDevice(), "library:cub-scan");
  ReportRow scan = Row("optimized:scan", 1.0, 100.0);
  rep.Add(scan);  // default reference
  ReportRow hist = Row("optimized:histogram", 1.0, 100.0);
  hist.library_ref = "library:cub-scan";
  rep.Add(hist);  // explicit reference
  ReportRow sort = Row("optimized", 1.0, 100.0);
  sort.library_ref = "library:cub-pipeline";
  rep.Add(sort);  // another reference: untouched
  rep.Add(Row("library:cub-scan", 3.0, 30.0));
  rep.Add(Row("library:cub-scan-count64", 2.0, 45.0));
  rep.Add(Row("library:cub-pipeline", 4.0, 10.0));
  EXPECT_EQ(rep.FastestOf({"library:cub-scan", "library:cub-scan-count64"}),
            "library:cub-scan-count64");
  EXPECT_EQ(rep.FastestOf({"library:cub-scan-count64", "library:cub-scan"}),
            "library:cub-scan-count64");
  EXPECT_EQ(rep.FastestOf({"library:none", "library:cub-pipeline"}), "library:cub-pipeline");
  EXPECT_EQ(rep.FastestOf({"library:none"}), "");
  EXPECT_EQ(rep.FastestOf({}), "");
  rep.ReplaceLibraryRef("library:cub-scan", "library:cub-scan-count64");
  const auto rows = rep.Finalize();
  EXPECT_DOUBLE_EQ(*rows[0].vs_library, 2.0);
  EXPECT_DOUBLE_EQ(*rows[1].vs_library, 2.0);
  EXPECT_DOUBLE_EQ(*rows[2].vs_library, 4.0);
  EXPECT_DOUBLE_EQ(*rows[3].vs_library, 2.0 / 3.0);  // the slower width against the faster
}

// On a tie the first candidate wins: the 32-bit count stays the reference unless the 64-bit one
// is faster.
TEST(Report, FastestOfKeepsTheFirstOnATie) {
  Report rep("01_minmax_reduction", 1, FakeDevice(), "library:cub");
  rep.Add(Row("library:cub", 2.0, 1.0));
  rep.Add(Row("library:cub-count64", 2.0, 1.0));
  EXPECT_EQ(rep.FastestOf({"library:cub", "library:cub-count64"}), "library:cub");
}

TEST(Report, GflopsUseTheFp32Peak) {
  Report rep("04_matmul_global_vs_shared", 1, FakeDevice(), "library:cublas");
  rep.Add(Row("optimized", 1.0, 30000.0, "GFLOP/s"));
  EXPECT_DOUBLE_EQ(*rep.Finalize()[0].pct_peak, 50.0);
}

TEST(Report, ReadOnlyRowsUseTheReadBandwidth) {
  Report rep("01_minmax_reduction", 1, FakeDevice(), "library:cub");
  ReportRow r = Row("optimized", 1.0, 3600.0);
  r.ceiling = Ceiling::kRead;
  rep.Add(r);
  ReportRow none = Row("optimized:other", 1.0, 3600.0);
  none.ceiling = Ceiling::kNone;
  rep.Add(none);
  ReportRow chosen = Row("optimized:set", 1.0, 3600.0);
  chosen.ceiling = Ceiling::kRead;
  chosen.pct_peak = 12.5;  // a value the chapter set wins over the ceiling
  rep.Add(chosen);
  const auto rows = rep.Finalize();
  EXPECT_DOUBLE_EQ(*rows[0].pct_peak, 80.0);  // 3600 / 4500
  EXPECT_FALSE(rows[1].pct_peak.has_value());
  EXPECT_DOUBLE_EQ(*rows[2].pct_peak, 12.5);
}

TEST(Report, RepsColumnCarriesEachRowsCount) {
  Report rep("03_mppsort", 1, FakeDevice(), "library:cub");
  ReportRow cpu = Row("cpu", 5.0, 1.0, "GE/s");
  cpu.time.reps = 1;
  cpu.verified = Verified::kReference;
  rep.Add(cpu);
  std::ostringstream os;
  rep.Print(os, OutputFormat::kCsv);
  EXPECT_NE(os.str().find(",5.500000,1,1.000,GE/s,"), std::string::npos) << os.str();
}

TEST(Report, VerificationVerdict) {
  Report good = Sample();
  EXPECT_TRUE(good.AllVerified());
  std::ostringstream os;
  good.Print(os, OutputFormat::kTable);
  EXPECT_NE(os.str().find("\nverified: yes\n"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("Test GPU"), std::string::npos);
  good.Add(Row("optimized:broken", 1.0, 1.0)).verified = Verified::kNo;
  EXPECT_FALSE(good.AllVerified());
  std::ostringstream bad;
  good.Print(bad, OutputFormat::kTable);
  EXPECT_NE(bad.str().find("\nverified: no\n"), std::string::npos);
}

TEST(Report, JsonHasDeviceAndRows) {
  std::ostringstream os;
  Sample().Print(os, OutputFormat::kJson);
  const std::string s = os.str();
  EXPECT_NE(s.find("\"device\": {\"name\": \"Test GPU\""), std::string::npos) << s;
  EXPECT_NE(s.find("\"variant\": \"optimized\""), std::string::npos);
  EXPECT_NE(s.find("\"speedup_cpu\": 8.000"), std::string::npos);
  EXPECT_EQ(std::count(s.begin(), s.end(), '{'), 6);  // root, device, 4 rows
}

TEST(Report, UngatedRowsAreNamedWithTheirSizeAndDistribution) {
  Report rep = Sample();
  EXPECT_TRUE(rep.UngatedRows().empty());
  ReportRow r = Row("optimized:ungated", 1.0, 1.0);
  r.time.ungated_reason = "the stream gate is off (STAGED_GATE_TIMEOUT_S=0)";
  rep.Add(r);
  EXPECT_EQ(rep.UngatedRows(), std::vector<std::string>{"optimized:ungated (n = 1024, uniform)"});
}

TEST(GigabytesPerSecond, Units) {
  EXPECT_DOUBLE_EQ(GigabytesPerSecond(2e9, 1000.0), 2.0);
  EXPECT_DOUBLE_EQ(GigabytesPerSecond(1e9, 0.0), 0.0);
}

}  // namespace
}  // namespace staged
