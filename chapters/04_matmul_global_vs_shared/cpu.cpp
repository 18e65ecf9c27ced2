/**
 * @file cpu.cpp
 * @brief The CPU reference (accumulating in double for float, exactly for int32_t), |A|·|B|,
 *        the dimension checks, the empty products and the per-element error bound used to
 *        verify float results.
 */
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace ch04 {

void CheckDimensions(int m, int n, int k) {
  const int dims[3] = {m, n, k};
  const char* names[3] = {"M", "N", "K"};
  for (int i = 0; i < 3; ++i) {
    if (dims[i] < 0 || dims[i] > kMaxDimension) {
      throw staged::UsageError(std::string(names[i]) + " = " + std::to_string(dims[i]) +
                               " is out of range [0, " + std::to_string(kMaxDimension) + "]");
    }
  }
}

bool EmptyProduct(float* d_c, int m, int n, int k, cudaStream_t stream) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  CUDA_CHECK(cudaMemsetAsync(d_c, 0, static_cast<std::size_t>(m) * n * sizeof(float), stream));
  return true;
}

double GammaK(int k) {
  const double ku = static_cast<double>(k) * std::ldexp(1.0, -24);  // u = 2^-24 for float
  return ku / (1.0 - ku);  // k <= 2^19 keeps k·u <= 1/32, so the bound is finite
}

// snippet-begin: ch04-tolerance
double SumErrorScale(int k, double u) {
  const double ku = k * u;
  const double worst = ku / (1.0 - ku);
  return std::min(worst, kToleranceLambda * std::sqrt(static_cast<double>(k)) * u);
}

double ToleranceScale(int k) {
  const int kk = k < 1 ? 1 : k;
  // Kernel and reference each get min(worst case, probabilistic); |A|·|B| adds (1 + gamma_K).
  return 2.0 * SumErrorScale(kk, std::ldexp(1.0, -24)) * (1.0 + GammaK(kk));
}
// snippet-end: ch04-tolerance

double AbsoluteFloor(int k) { return 2.0 * (k < 1 ? 1 : k) * std::ldexp(1.0, -126); }

staged::VerifyReport CompareProductWithin(const float* expected, const float* actual,
                                          const float* abs_product, std::size_t count, int k,
                                          double scale) {
  staged::VerifyReport r;
  r.checked = count;
  const double floor = AbsoluteFloor(k);
  for (std::size_t i = 0; i < count; ++i) {
    const double e = expected[i];
    const double a = actual[i];
    bool pass;
    if (std::isnan(e)) {
      pass = std::isnan(a);  // NaN must propagate, never be hidden
    } else if (std::isinf(e) || !std::isfinite(a)) {
      pass = e == a;
    } else {
      const double err = std::fabs(a - e);
      r.max_abs_error = std::max(r.max_abs_error, err);
      if (e != 0.0) r.max_rel_error = std::max(r.max_rel_error, err / std::fabs(e));
      pass = err <= scale * static_cast<double>(abs_product[i]) + floor;
    }
    if (!pass) staged::detail::Record(r, i, expected[i], actual[i], staged::kListedMismatches);
  }
  if (!r.ok) {
    r.note = "tolerance per element: " + std::to_string(scale) + "·(|A|·|B|)_ij, K = " +
             std::to_string(k);
  }
  return r;
}

staged::VerifyReport CompareProduct(const float* expected, const float* actual,
                                    const float* abs_product, std::size_t count, int k) {
  staged::VerifyReport r =
      CompareProductWithin(expected, actual, abs_product, count, k, ToleranceScale(k));
  if (!r.ok) {
    r.note =
        "tolerance per element: 2·min(gamma_K, 10·sqrt(K)·u)·(1 + gamma_K)·(|A|·|B|)_ij, K = " +
        std::to_string(k);
  }
  return r;
}

namespace cpu {

template <typename T>
void Matmul(const T* a, const T* b, T* c, int m, int n, int k) {
  // Wider accumulator: double for float (the reference must be far more accurate than the
  // float kernels it checks), int64_t for int32_t (exact as long as the result fits).
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
  std::vector<Acc> row(static_cast<std::size_t>(n));
  for (int i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc{0});
    const T* a_row = a + static_cast<std::size_t>(i) * k;
    for (int p = 0; p < k; ++p) {
      const Acc aip = static_cast<Acc>(a_row[p]);
      const T* b_row = b + static_cast<std::size_t>(p) * n;
      for (int j = 0; j < n; ++j) row[j] += aip * static_cast<Acc>(b_row[j]);
    }
    T* c_row = c + static_cast<std::size_t>(i) * n;
    for (int j = 0; j < n; ++j) c_row[j] = static_cast<T>(row[j]);
  }
}

/// @cond
template void Matmul<float>(const float*, const float*, float*, int, int, int);
template void Matmul<std::int32_t>(const std::int32_t*, const std::int32_t*, std::int32_t*, int,
                                   int, int);
/// @endcond

void AbsMatmul(const float* a, const float* b, float* s, int m, int n, int k) {
  std::vector<double> row(static_cast<std::size_t>(n));
  for (int i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    const float* a_row = a + static_cast<std::size_t>(i) * k;
    for (int p = 0; p < k; ++p) {
      const double aip = std::fabs(static_cast<double>(a_row[p]));
      const float* b_row = b + static_cast<std::size_t>(p) * n;
      for (int j = 0; j < n; ++j) row[j] += aip * std::fabs(static_cast<double>(b_row[j]));
    }
    float* s_row = s + static_cast<std::size_t>(i) * n;
    for (int j = 0; j < n; ++j) s_row[j] = static_cast<float>(row[j]);
  }
}

}  // namespace cpu
}  // namespace ch04
