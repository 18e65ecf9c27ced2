/**
 * @file tensor_reference.cpp
 * @brief What the tensor-core products are checked with: the inputs rounded as the tensor cores
 *        see them (TF32 as `cvt.rna.tf32.f32` rounds, BF16 to nearest even) and the bounds of
 *        tensor.cuh.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"

namespace ch04::tensor {

const char* Name(Precision p) {
  return p == Precision::kTf32 ? "tf32" : p == Precision::kBf16 ? "bf16" : "fp16";
}

// snippet-begin: ch04-round-tf32
float RoundTf32(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7F800000u) != 0x7F800000u) {  // finite: infinities and NaNs stay as they are
    // Add half of the 13 dropped bits' weight, then drop them: ties go away from zero (the
    // magnitude rounds up), and a carry into the exponent is the correct rounding.
    bits = (bits + 0x1000u) & 0xFFFFE000u;
  }
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}
// snippet-end: ch04-round-tf32

float TruncateTf32(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  if ((bits & 0x7F800000u) != 0x7F800000u) bits &= 0xFFFFE000u;  // finite: drop 13 bits
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

std::vector<float> Truncated(const std::vector<float>& values) {
  std::vector<float> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(), TruncateTf32);
  return out;
}

float RoundBf16(float x) { return __bfloat162float(__float2bfloat16_rn(x)); }

float RoundFp16(float x) { return __half2float(__float2half_rn(x)); }

std::vector<float> Rounded(Precision p, const std::vector<float>& values) {
  std::vector<float> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(),
                 p == Precision::kTf32   ? RoundTf32
                 : p == Precision::kBf16 ? RoundBf16
                                         : RoundFp16);
  return out;
}

std::vector<__nv_bfloat16> ToBf16(const std::vector<float>& values) {
  std::vector<__nv_bfloat16> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(),
                 [](float v) { return __float2bfloat16_rn(v); });
  return out;
}

std::vector<__half> ToFp16(const std::vector<float>& values) {
  std::vector<__half> out(values.size());
  std::transform(values.begin(), values.end(), out.begin(),
                 [](float v) { return __float2half_rn(v); });
  return out;
}

// snippet-begin: ch04-tensor-tolerance
double AccumulationScale(int k) {
  const int kk = k < 1 ? 1 : k;
  const double u = std::ldexp(1.0, -24);
  // The tensor cores' accumulation truncates (unit roundoff 2u); the reference rounds (u).
  return (SumErrorScale(kk, 2.0 * u) + SumErrorScale(kk, u)) * (1.0 + GammaK(kk));
}

double InputRoundingScale(Precision p) {
  if (p != Precision::kTf32) return 0.0;  // BF16 and FP16 inputs are multiplied as they are
  // Two roundings of the same inputs, each within u_in: each product of either is within
  // ((1 + u_in)^2 - 1)·|a||b| of ab, and |a||b| <= (1 + u_in)^2·|a'||b'|.
  const double u_in = std::ldexp(1.0, -10);
  const double one = (1.0 + u_in) * (1.0 + u_in);
  return 2.0 * (one - 1.0) * one;
}
// snippet-end: ch04-tensor-tolerance

}  // namespace ch04::tensor
