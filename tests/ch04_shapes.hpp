/// @file ch04_shapes.hpp
/// @brief What chapter 04's host and GPU tests share: shapes, the cached double-precision CPU
///        reference, the faults the checker must catch (injected into a correct product on the
///        host) and the shapes the benchmark runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/generate.hpp"
#include "gpu_test.hpp"

namespace ch04::testing {

using staged::testing::kTestSeed;

inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
inline constexpr float kInf = std::numeric_limits<float>::infinity();

/// M×N×K of one product.
struct Shape {
  int m;
  int n;
  int k;
  bool operator<(const Shape& o) const { return std::tie(m, n, k) < std::tie(o.m, o.n, o.k); }
  bool operator==(const Shape& o) const { return m == o.m && n == o.n && k == o.k; }
};

inline std::string ShapeName(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

/// GoogleTest prints parameters with this (instead of their bytes).
inline void PrintTo(const Shape& s, std::ostream* os) { *os << ShapeName(s); }

inline std::size_t Elements(int rows, int cols) { return static_cast<std::size_t>(rows) * cols; }

/// Above this M·N·K, cuBLAS replaces the CPU as the float reference (as in main.cu).
inline constexpr std::uint64_t kCpuReferenceLimit = kCpuReferenceVolume;

inline std::uint64_t Volume(const Shape& s) { return static_cast<std::uint64_t>(s.m) * s.n * s.k; }

inline std::vector<float> FloatInput(std::size_t count, std::uint64_t seed) {
  return staged::Generate<float>(count, staged::Distribution::kUniform, seed);
}

/// Inputs and the double-precision reference of one shape, computed once per test binary.
struct Reference {
  std::vector<float> a, b, c, abs_product;
};

inline const Reference& CpuReference(const Shape& s) {
  static std::map<Shape, Reference> cache;  // the CPU product is the slow part of most tests
  auto it = cache.find(s);
  if (it != cache.end()) return it->second;
  Reference r;
  r.a = FloatInput(Elements(s.m, s.k), kTestSeed);
  r.b = FloatInput(Elements(s.k, s.n), kTestSeed + 1);
  r.c.resize(Elements(s.m, s.n));
  r.abs_product.resize(r.c.size());
  cpu::Matmul(r.a.data(), r.b.data(), r.c.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(r.a.data(), r.b.data(), r.abs_product.data(), s.m, s.n, s.k);
  return cache.emplace(s, std::move(r)).first->second;
}

// -------------------------------------------------------------------------------------------
// Faults injected into a correct product (host side), for the checker tests.

/// The faults a broken kernel typically makes.
enum class Fault {
  kDropKTile8,       ///< a 16×16 block of C misses the products of 8 consecutive k
  kDropKTile16,      ///< a 128×128 block of C misses the products of 16 consecutive k
  kDropRow,          ///< one row of C left at zero
  kDropColumn,       ///< one column of C left at zero
  kTransposeTile16,  ///< a 16×16 tile of C stored transposed
  kTransposeTile128,  ///< a 128×128 tile of C stored transposed (when C is that large)
  kSwappedKChunks,    ///< a 16×16 block of C read two 4-wide chunks of A's k-tile swapped (a
                      ///< wrong swizzle): Σ a_i,σ(p)·b_pj over 8 consecutive k
};

inline const char* FaultName(Fault f) {
  switch (f) {
    case Fault::kDropKTile8:
      return "k-tile of 8 dropped in a 16x16 block";
    case Fault::kDropKTile16:
      return "k-tile of 16 dropped in a 128x128 block";
    case Fault::kDropRow:
      return "row dropped";
    case Fault::kDropColumn:
      return "column dropped";
    case Fault::kTransposeTile16:
      return "16x16 tile transposed";
    case Fault::kSwappedKChunks:
      return "two 4-wide chunks of A swapped in a 16x16 block (a wrong swizzle)";
    default:
      return "128x128 tile transposed";
  }
}

inline const std::vector<Fault> kAllFaults = {
    Fault::kDropKTile8,       Fault::kDropKTile16,      Fault::kDropRow,      Fault::kDropColumn,
    Fault::kTransposeTile16, Fault::kTransposeTile128, Fault::kSwappedKChunks};

/// Whether @p f can change a product of shape @p s (a transposed tile needs two rows and two
/// columns, a 128×128 one needs C at least that large).
inline bool Applies(Fault f, const Shape& s) {
  if (f == Fault::kTransposeTile16) return s.m >= 2 && s.n >= 2;
  if (f == Fault::kTransposeTile128) return s.m >= 128 && s.n >= 128;
  if (f == Fault::kSwappedKChunks) return s.k >= 8;
  return s.k >= 1 || f == Fault::kDropRow || f == Fault::kDropColumn;
}

/// Subtracts Σ_{p in [k0, k1)} a_ip·b_pj from c over rows [r0, r1) and columns [c0, c1).
inline void DropProducts(std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b,
                  const Shape& s, int r0, int r1, int c0, int c1, int k0, int k1) {
  for (int i = r0; i < std::min(r1, s.m); ++i) {
    for (int j = c0; j < std::min(c1, s.n); ++j) {
      double dropped = 0.0;
      for (int p = k0; p < std::min(k1, s.k); ++p) {
        dropped += static_cast<double>(a[Elements(i, s.k) + p]) * b[Elements(p, s.n) + j];
      }
      float& v = c[Elements(i, s.n) + j];
      v = static_cast<float>(v - dropped);
    }
  }
}

/// @p c (a correct M×N product of @p a and @p b) with fault @p f injected.
inline std::vector<float> Inject(Fault f, std::vector<float> c, const std::vector<float>& a,
                          const std::vector<float>& b, const Shape& s) {
  const int mid_m = s.m / 2, mid_n = s.n / 2;
  switch (f) {
    case Fault::kDropKTile8: {
      const int r0 = mid_m / 16 * 16, c0 = mid_n / 16 * 16, k0 = s.k / 2 / 8 * 8;
      DropProducts(c, a, b, s, r0, r0 + 16, c0, c0 + 16, k0, k0 + 8);
      break;
    }
    case Fault::kDropKTile16:
      DropProducts(c, a, b, s, 0, 128, 0, 128, 0, 16);
      break;
    case Fault::kSwappedKChunks: {
      // Products of k in [k0, k0 + 8) taken with A's chunks swapped: a_i,p+4 with b_pj and
      // a_i,p with b_p+4,j.
      const int r0 = mid_m / 16 * 16, c0 = mid_n / 16 * 16, k0 = s.k / 2 / 8 * 8;
      for (int i = r0; i < std::min(r0 + 16, s.m); ++i) {
        for (int j = c0; j < std::min(c0 + 16, s.n); ++j) {
          double delta = 0.0;
          for (int p = k0; p < k0 + 8 && p < s.k; ++p) {
            const int q = p < k0 + 4 ? p + 4 : p - 4;
            const double bp = b[Elements(p, s.n) + j];
            delta += (static_cast<double>(a[Elements(i, s.k) + q]) - a[Elements(i, s.k) + p]) * bp;
          }
          float& v = c[Elements(i, s.n) + j];
          v = static_cast<float>(v + delta);
        }
      }
      break;
    }
    case Fault::kDropRow:
      for (int j = 0; j < s.n; ++j) c[Elements(mid_m, s.n) + j] = 0.0f;
      break;
    case Fault::kDropColumn:
      for (int i = 0; i < s.m; ++i) c[Elements(i, s.n) + mid_n] = 0.0f;
      break;
    default: {
      const int t = std::min({f == Fault::kTransposeTile16 ? 16 : 128, s.m, s.n});
      const std::vector<float> before = c;
      for (int i = 0; i < t; ++i) {
        for (int j = 0; j < t; ++j) c[Elements(i, s.n) + j] = before[Elements(j, s.n) + i];
      }
      break;
    }
  }
  return c;
}

/// Every float shape `bench.args` runs (a host test keeps the two lists equal).
inline const std::vector<Shape> kBenchShapes = {
    {256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024}, {2048, 2048, 2048},
    {4096, 4096, 4096}, {8192, 8192, 8192}, {4096, 4096, 512},  {8192, 1024, 8192},
    {1023, 1021, 1027}, {1000, 8, 1000},    {8, 1000, 1000},    {64, 4096, 4096},
    {4096, 64, 4096},   {127, 129, 4099},   {4096, 4096, 64},
};

/// The tensor-core shapes `bench.args` runs (`--type tf32` and `--type bf16` lines; a host test
/// keeps the lists equal): the mutation check's shapes for the tensor stage.
inline const std::vector<Shape> kTensorBenchShapes = {
    {512, 512, 512}, {4096, 4096, 4096}, {8192, 8192, 8192}, {1023, 1021, 1027}, {127, 129, 4099},
};

}  // namespace ch04::testing
