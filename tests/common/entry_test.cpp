/// @file entry_test.cpp
/// @brief Host tests of the exception-to-exit-code mapping.
#include <gtest/gtest.h>

#include <algorithm>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/cuda_check.hpp"
#include "common/entry.hpp"
#include "common/timing_caveats.hpp"

namespace staged {
namespace {

template <typename Body>
int RunBody(Body body, std::string* message = nullptr) {
  char name[] = "/path/to/ch00_test";
  char* argv[] = {name, nullptr};
  std::ostringstream err;
  const int rc = RunMain(
      1, argv, [&](int, char**) { return body(); }, err);
  if (message) *message = err.str();
  return rc;
}

TEST(RunMain, MapsEveryExceptionToItsExitCode) {
  EXPECT_EQ(RunBody([] { return 0; }), kExitOk);
  EXPECT_EQ(RunBody([]() -> int { throw VerificationError("x"); }), 1);
  EXPECT_EQ(RunBody([]() -> int { throw UsageError("x"); }), 2);
  EXPECT_EQ(RunBody([]() -> int { throw InputError("x"); }), 2);
  EXPECT_EQ(RunBody([]() -> int { throw std::bad_alloc(); }), 2);
  EXPECT_EQ(RunBody([]() -> int { throw CudaError(cudaErrorIllegalAddress, "x"); }), 3);
  EXPECT_EQ(RunBody([]() -> int { throw std::runtime_error("x"); }), 3);
  EXPECT_EQ(RunBody([]() -> int { throw NoGpuError("x"); }), 77);
  EXPECT_EQ(RunBody([]() -> int { throw CudaError(cudaErrorNoDevice, "x"); }), 77);
  EXPECT_EQ(RunBody([]() -> int { throw CudaError(cudaErrorInsufficientDriver, "x"); }), 77);
  EXPECT_EQ(RunBody([]() -> int { throw std::invalid_argument("scratch too small"); }), 2);
  EXPECT_EQ(RunBody([]() -> int { throw ArchitectureError("built for sm_90"); }), 3);
  // A binary without code for the GPU is a build problem, not a missing GPU: never a skip.
  EXPECT_EQ(RunBody([]() -> int { throw CudaError(cudaErrorNoKernelImageForDevice, "x"); }), 3);
}

TEST(RunMain, LauncherArgumentErrorsAreUsageErrors) {
  std::string msg;
  EXPECT_EQ(RunBody([]() -> int { throw std::invalid_argument("MinMax: n == 0"); }, &msg), 2);
  EXPECT_EQ(msg, "ch00_test: usage error: MinMax: n == 0\n");
}

TEST(RunMain, ArchitectureMismatchSaysHowToRebuild) {
  std::string msg;
  RunBody([]() -> int { throw ArchitectureError(ArchitectureMessage("80-real,90", 12, 0)); }, &msg);
  EXPECT_EQ(msg,
            "ch00_test: CUDA error: built for sm_80, sm_90; this GPU is sm_120: rebuild with "
            "-DCMAKE_CUDA_ARCHITECTURES=120\n");
}

TEST(NoGpuMessage, DriverLineOnlyWhenADriverExists) {
  EXPECT_EQ(NoGpuMessage(0, cudaErrorInsufficientDriver), "no NVIDIA GPU found");
  const std::string with_driver = NoGpuMessage(12040, cudaErrorNoDevice);
  EXPECT_EQ(with_driver.rfind("no NVIDIA GPU found\n  the NVIDIA driver (CUDA 12.4) reports: ", 0),
            0u)
      << with_driver;
  EXPECT_EQ(std::count(with_driver.begin(), with_driver.end(), '\n'), 1);
}

TEST(ArchitectureMessage, ListsEveryBuiltArchitecture) {
  EXPECT_EQ(ArchitectureMessage("90", 8, 0),
            "built for sm_90; this GPU is sm_80: rebuild with -DCMAKE_CUDA_ARCHITECTURES=80");
  EXPECT_EQ(ArchitectureMessage("75;80-real;90-virtual", 12, 1),
            "built for sm_75, sm_80, sm_90; this GPU is sm_121: rebuild with "
            "-DCMAKE_CUDA_ARCHITECTURES=121");
  EXPECT_EQ(ArchitectureMessage("native", 9, 0),
            "built for native; this GPU is sm_90: rebuild with -DCMAKE_CUDA_ARCHITECTURES=90");
}

TEST(BuiltArchitectures, NamesTheConfiguredList) { EXPECT_FALSE(BuiltArchitectures().empty()); }

TEST(RunMain, MessageIsOneLineNamingProgramAndProblem) {
  std::string msg;
  RunBody([]() -> int { throw UsageError("--n 0: the minimum of nothing is undefined"); }, &msg);
  EXPECT_EQ(msg, "ch00_test: usage error: --n 0: the minimum of nothing is undefined\n");
  RunBody([]() -> int { throw NoGpuError("no NVIDIA GPU found"); }, &msg);
  EXPECT_EQ(msg, "ch00_test: skipped: no NVIDIA GPU found\n");
}

TEST(RunMain, BodyExitCodePassesThrough) {
  EXPECT_EQ(RunBody([] { return 5; }), 5);
}

TEST(StartRun, UsageErrorsComeBeforeTheGpuCheck) {
  CliDefaults d;
  Cli cli("prog", "test", d);
  char name[] = "prog";
  char flag[] = "--bogus";
  char* argv[] = {name, flag, nullptr};
  EXPECT_THROW(StartRun(cli, 2, argv), UsageError);
}

TEST(StartRun, TheChaptersChecksComeBeforeTheGpuCheck) {
  // A combination of flags the chapter refuses is a usage error on any machine; flags it accepts
  // reach the GPU check (no GPU here: NoGpuError; a GPU: a run context).
  CliDefaults d;
  Cli cli("prog", "test", d);
  char name[] = "prog";
  char* argv[] = {name, nullptr};
  int checks = 0;
  EXPECT_THROW(StartRun(cli, 1, argv,
                        [&](const CommonOptions&) {
                          ++checks;
                          throw UsageError("--a with --b");
                        }),
               UsageError);
  EXPECT_EQ(checks, 1);
  try {
    (void)StartRun(cli, 1, argv, [&](const CommonOptions&) { ++checks; });
  } catch (const NoGpuError&) {
  }
  EXPECT_EQ(checks, 2);
}

TEST(StartRun, HelpReturnsNothingToRun) {
  CliDefaults d;
  Cli cli("prog", "test", d);
  char name[] = "prog";
  char flag[] = "--help";
  char* argv[] = {name, flag, nullptr};
  testing::internal::CaptureStdout();
  const auto ctx = StartRun(cli, 2, argv);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(ctx.has_value());
  EXPECT_NE(out.find("Usage: prog"), std::string::npos);
}

// Times that are not comparable say so next to the rows: under the table, or on stderr when
// stdout is CSV (which must stay one header and one line per row).
TEST(FinishRun, NotesTimingCaveatsAndTheRowsTheyTouched) {
  DeviceInfo device;
  device.name = "Test GPU";
  Report report("01_minmax_reduction", 42, device, "library:cub");
  ReportRow row;
  row.variant = "optimized";
  row.n = 1000;
  row.dist = "uniform";
  row.time.median_ms = row.time.min_ms = row.time.max_ms = 1.0;
  row.time.reps = 1;
  row.time.ungated_reason = "a caveat of the FinishRun test";
  report.Add(row);
  NoteTimingCaveat(row.time.ungated_reason);
  CommonOptions table;
  testing::internal::CaptureStdout();
  EXPECT_EQ(FinishRun(report, table), kExitOk);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("note: times not comparable with a normal run: a caveat of the FinishRun"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("note: rows timed without the stream gate: optimized (n = 1000, uniform)"),
            std::string::npos)
      << out;
  CommonOptions csv;
  csv.format = OutputFormat::kCsv;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(FinishRun(report, csv), kExitOk);
  const std::string csv_out = testing::internal::GetCapturedStdout();
  const std::string csv_err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(csv_out.find("note:"), std::string::npos) << csv_out;
  EXPECT_EQ(std::count(csv_out.begin(), csv_out.end(), '\n'), 2) << csv_out;
  EXPECT_NE(csv_err.find("a caveat of the FinishRun test"), std::string::npos) << csv_err;
}

}  // namespace
}  // namespace staged
