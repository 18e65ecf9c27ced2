/// @file entry_test.cpp
/// @brief Host tests of the exception-to-exit-code mapping.
#include <gtest/gtest.h>

#include <new>
#include <sstream>
#include <stdexcept>

#include "common/cuda_check.hpp"
#include "common/entry.hpp"

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
}

TEST(RunMain, MessageIsOneLineNamingProgramAndProblem) {
  std::string msg;
  RunBody([]() -> int { throw UsageError("--n 0: the minimum of nothing is undefined"); }, &msg);
  EXPECT_EQ(msg, "ch00_test: usage error: --n 0: the minimum of nothing is undefined\n");
  RunBody([]() -> int { throw NoGpuError("no usable CUDA GPU"); }, &msg);
  EXPECT_EQ(msg, "ch00_test: skipped: no usable CUDA GPU\n");
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

}  // namespace
}  // namespace staged
