/// @file ch04_tensor_host_test.cu
/// @brief Chapter 04's tensor-core checks that need no GPU: the TF32 and BF16 rounding the
///        reference emulates, the bound's size, and the checker against a host model of the
///        tensor cores' accumulation (truncated FP32 sums of exact products): the model passes,
///        every fault fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ch04_shapes.hpp"
#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"

namespace ch04 {
namespace {

using namespace ch04::testing;  // NOLINT: the shared shapes and faults
using tensor::Precision;

std::uint32_t Bits(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

TEST(Ch04Tf32, RoundsToNearestTiesAwayFromZero) {
  const float ulp = std::ldexp(1.0f, -10);  // TF32's spacing in [1, 2)
  EXPECT_EQ(tensor::RoundTf32(1.0f), 1.0f);
  EXPECT_EQ(tensor::RoundTf32(1.0f + ulp / 2), 1.0f + ulp);        // tie: away from zero
  EXPECT_EQ(tensor::RoundTf32(-(1.0f + ulp / 2)), -(1.0f + ulp));  // ... for negatives too
  EXPECT_EQ(tensor::RoundTf32(1.0f + ulp + ulp / 2), 1.0f + 2 * ulp);  // not to even
  EXPECT_EQ(tensor::RoundTf32(std::nextafter(1.0f + ulp / 2, 0.0f)), 1.0f);
  EXPECT_EQ(tensor::RoundTf32(std::nextafter(1.0f + ulp / 2, 2.0f)), 1.0f + ulp);
  EXPECT_EQ(tensor::RoundTf32(std::numeric_limits<float>::max()),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(tensor::RoundTf32(-std::numeric_limits<float>::infinity()),
            -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(tensor::RoundTf32(kNaN)));
  // Every rounded value keeps 10 mantissa bits and is within half a TF32 ulp.
  for (float x : FloatInput(10000, kTestSeed)) {
    const float r = tensor::RoundTf32(x);
    EXPECT_EQ(Bits(r) & 0x1FFFu, 0u) << x;
    EXPECT_LE(std::fabs(r - x), std::ldexp(std::fabs(x), -11)) << x;
  }
}

TEST(Ch04Bf16, RoundsToNearestEven) {
  const float ulp = std::ldexp(1.0f, -7);  // BF16's spacing in [1, 2)
  EXPECT_EQ(tensor::RoundBf16(1.0f + ulp / 2), 1.0f);                  // tie: to even
  EXPECT_EQ(tensor::RoundBf16(1.0f + ulp + ulp / 2), 1.0f + 2 * ulp);  // tie: to even
  EXPECT_EQ(tensor::RoundBf16(std::nextafter(1.0f + ulp / 2, 2.0f)), 1.0f + ulp);
  for (float x : FloatInput(10000, kTestSeed)) {
    const float r = tensor::RoundBf16(x);
    EXPECT_EQ(Bits(r) & 0xFFFFu, 0u) << x;
    EXPECT_LE(std::fabs(r - x), std::ldexp(std::fabs(x), -8)) << x;
  }
}

TEST(Ch04TensorBound, AllowsTruncatedSumsAndStaysBelowADroppedKTile) {
  for (int k : {1, 8, 64, 1000, 4099, 8192}) {
    // The kernel's truncating accumulation gets twice the reference's allowance.
    EXPECT_GT(tensor::AccumulationScale(k), 1.4 * ToleranceScale(k)) << k;
    EXPECT_LT(tensor::AccumulationScale(k), 1.6 * ToleranceScale(k)) << k;
  }
  // Uniform [-1, 1) inputs: (|A|·|B|)_ij ≈ K/4; a dropped k-tile of 8 has standard deviation
  // 0.94. The tolerance must be well below it at the longest K the chapter runs.
  EXPECT_LT(tensor::AccumulationScale(8192) * 8192 / 4, 0.4);
  EXPECT_EQ(tensor::InputRoundingScale(Precision::kBf16), 0.0);
  EXPECT_GT(tensor::InputRoundingScale(Precision::kTf32), 4 * std::ldexp(1.0, -10));
  EXPECT_LT(tensor::InputRoundingScale(Precision::kTf32), 5 * std::ldexp(1.0, -10));
}

/// @p x rounded toward zero to float.
float TowardZero(double x) {
  const float f = static_cast<float>(x);  // to nearest
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) {
    return std::nextafter(f, 0.0f);
  }
  return f;
}

/// A host model of the tensor cores on the rounded inputs: each instruction adds the exact
/// products of @p step consecutive k to the FP32 accumulator, the sum truncated (toward zero).
std::vector<float> TruncatedTensorProduct(const std::vector<float>& a, const std::vector<float>& b,
                                          const Shape& s, int step) {
  std::vector<float> c(Elements(s.m, s.n));
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      float acc = 0.0f;
      for (int p0 = 0; p0 < s.k; p0 += step) {
        double sum = acc;
        for (int p = p0; p < std::min(p0 + step, s.k); ++p) {
          sum += static_cast<double>(a[Elements(i, s.k) + p]) * b[Elements(p, s.n) + j];
        }
        acc = TowardZero(sum);
      }
      c[Elements(i, s.n) + j] = acc;
    }
  }
  return c;
}

struct TensorCase {
  Precision p;
  Shape s;
};

class Ch04TensorChecker : public ::testing::TestWithParam<TensorCase> {};

TEST_P(Ch04TensorChecker, ModelPassesAndEveryFaultFails) {
  const auto [p, s] = GetParam();
  const std::vector<float> a = tensor::Rounded(p, FloatInput(Elements(s.m, s.k), kTestSeed));
  const std::vector<float> b = tensor::Rounded(p, FloatInput(Elements(s.k, s.n), kTestSeed + 1));
  std::vector<float> ref(Elements(s.m, s.n)), abs_product(ref.size());
  cpu::Matmul(a.data(), b.data(), ref.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(a.data(), b.data(), abs_product.data(), s.m, s.n, s.k);
  const double scale = tensor::AccumulationScale(s.k);
  const std::vector<float> c =
      TruncatedTensorProduct(a, b, s, p == Precision::kTf32 ? 8 : 16);
  const staged::VerifyReport clean =
      CompareProductWithin(ref.data(), c.data(), abs_product.data(), c.size(), s.k, scale);
  EXPECT_TRUE(clean.ok) << ShapeName(s) << ": " << clean.Summary();
  for (Fault f : kAllFaults) {
    if (!Applies(f, s)) continue;
    const std::vector<float> bad = Inject(f, c, a, b, s);
    EXPECT_FALSE(
        CompareProductWithin(ref.data(), bad.data(), abs_product.data(), bad.size(), s.k, scale)
            .ok)
        << tensor::Name(p) << " " << ShapeName(s) << ": " << FaultName(f) << " was not caught";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Host, Ch04TensorChecker,
    ::testing::Values(TensorCase{Precision::kTf32, {64, 64, 8192}},
                      TensorCase{Precision::kBf16, {64, 64, 8192}},
                      TensorCase{Precision::kTf32, {130, 129, 1000}},
                      TensorCase{Precision::kBf16, {130, 129, 1000}},
                      TensorCase{Precision::kTf32, {200, 200, 64}},
                      TensorCase{Precision::kBf16, {17, 33, 9}}),
    [](const auto& info) {
      return std::string(tensor::Name(info.param.p)) + "_" + ShapeName(info.param.s);
    });

}  // namespace
}  // namespace ch04
