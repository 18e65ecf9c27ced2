/// @file cuda_check_test.cpp
/// @brief Host tests of the CUDA_CHECK family (no GPU needed: the error codes are injected).
#include <gtest/gtest.h>

#include <string>

#include "common/cuda_check.hpp"

namespace staged {
namespace {

TEST(CudaCheck, SuccessDoesNotThrow) { EXPECT_NO_THROW(CUDA_CHECK(cudaSuccess)); }

TEST(CudaCheck, FailureThrowsWithFileLineExpressionAndName) {
  try {
    CUDA_CHECK(cudaErrorInvalidValue);
    FAIL() << "expected a CudaError";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
    EXPECT_NE(what.find("cuda_check_test.cpp:"), std::string::npos) << what;
    // The expression text, then the error name and its description.
    EXPECT_NE(what.find(": cudaErrorInvalidValue failed: cudaErrorInvalidValue ("),
              std::string::npos)
        << what;
  }
}

TEST(CudaCheck, MessageNamesTheExpression) {
  const std::string msg =
      FormatCudaError(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "f.cu", 7);
  EXPECT_EQ(msg.rfind("f.cu:7: cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation (", 0), 0u)
      << msg;
}

TEST(CudaCheck, NoThrowVariantReportsAndReturnsFalse) {
  testing::internal::CaptureStderr();
  const bool ok = CUDA_CHECK_NOTHROW(cudaErrorLaunchFailure);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(ok);
  EXPECT_NE(err.find("cudaErrorLaunchFailure"), std::string::npos);
  EXPECT_TRUE(CUDA_CHECK_NOTHROW(cudaSuccess));
}

TEST(CudaCheck, NoGpuCodesAreRecognised) {
  EXPECT_TRUE(IsNoGpuError(cudaErrorNoDevice));
  EXPECT_TRUE(IsNoGpuError(cudaErrorInsufficientDriver));
  EXPECT_FALSE(IsNoGpuError(cudaErrorNoKernelImageForDevice));  // a build problem: exit 3
  EXPECT_FALSE(IsNoGpuError(cudaErrorInvalidValue));
  EXPECT_FALSE(IsNoGpuError(cudaErrorIllegalAddress));
}

}  // namespace
}  // namespace staged
