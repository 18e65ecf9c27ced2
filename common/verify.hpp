/**
 * @file verify.hpp
 * @brief Result checks that return a report instead of exiting: exact comparison, abs + rel
 *        tolerance comparison (NaN never passes), and "sorted and a permutation of the input".
 *
 * @code
 * staged::VerifyReport r = staged::CompareTolerance(ref.data(), out.data(), n, 1e-5, 1e-4);
 * if (!r.ok) std::cerr << r.Summary() << "\n";
 * @endcode
 */
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace staged {

/// One differing element: where, what was expected, what was found.
struct Mismatch {
  std::size_t index = 0;  ///< position in the compared arrays
  std::string expected;   ///< the reference value, printed
  std::string actual;     ///< the computed value, printed
};

/// The outcome of a check. `ok` is the verdict; the rest explains it.
struct VerifyReport {
  bool ok = true;               ///< true when every element passed
  std::size_t checked = 0;      ///< elements examined
  std::size_t mismatches = 0;   ///< elements that failed
  std::vector<Mismatch> first;  ///< the first few failures, in index order
  double max_abs_error = 0.0;   ///< largest |actual - expected| over finite pairs
  double max_rel_error = 0.0;   ///< largest |actual - expected| / |expected|
  std::string note;             ///< a sentence for failures that are not per element

  /// One line (plus one per listed mismatch) suitable for stderr.
  std::string Summary() const;
};

/// How many mismatches a report lists by default.
inline constexpr std::size_t kListedMismatches = 8;

/// Implementation details of the checks.
namespace detail {
/// Prints @p v for a report (bytes as numbers, floating point with full precision).
template <typename T>
std::string Show(T v) {
  std::ostringstream os;
  if constexpr (std::is_floating_point_v<T>) {
    os.precision(std::is_same_v<T, float> ? 9 : 17);
    os << v;
  } else if constexpr (sizeof(T) == 1) {
    os << static_cast<int>(v);
  } else {
    os << v;
  }
  return os.str();
}
/// Counts a mismatch at @p i in @p r and lists it while fewer than @p max_listed are listed.
template <typename T>
void Record(VerifyReport& r, std::size_t i, T expected, T actual, std::size_t max_listed) {
  r.ok = false;
  ++r.mismatches;
  if (r.first.size() < max_listed) r.first.push_back({i, Show(expected), Show(actual)});
}
}  // namespace detail

/// Exact comparison. For floating point, values must be bit-identical (so -0.0 differs from
/// +0.0); a NaN passes only where the reference holds a NaN too.
template <typename T>
VerifyReport CompareExact(const T* expected, const T* actual, std::size_t n,
                          std::size_t max_listed = kListedMismatches) {
  VerifyReport r;
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    bool same;
    if constexpr (std::is_floating_point_v<T>) {
      same = (std::isnan(expected[i]) && std::isnan(actual[i])) ||
             (expected[i] == actual[i] && std::signbit(expected[i]) == std::signbit(actual[i]));
    } else {
      same = expected[i] == actual[i];
    }
    if (!same) detail::Record(r, i, expected[i], actual[i], max_listed);
  }
  return r;
}

/// Tolerance comparison: passes where |actual - expected| <= abs_tol + rel_tol * |expected|.
/// Infinities must match exactly. A NaN on either side never passes.
template <typename T>
VerifyReport CompareTolerance(const T* expected, const T* actual, std::size_t n, double abs_tol,
                              double rel_tol, std::size_t max_listed = kListedMismatches) {
  VerifyReport r;
  r.checked = n;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = static_cast<double>(expected[i]);
    const double a = static_cast<double>(actual[i]);
    bool pass;
    if (std::isnan(e) || std::isnan(a)) {
      pass = false;
    } else if (std::isinf(e) || std::isinf(a)) {
      pass = e == a;
    } else {
      const double err = std::fabs(a - e);
      r.max_abs_error = std::max(r.max_abs_error, err);
      if (e != 0.0) r.max_rel_error = std::max(r.max_rel_error, err / std::fabs(e));
      pass = err <= abs_tol + rel_tol * std::fabs(e);
    }
    if (!pass) detail::Record(r, i, expected[i], actual[i], max_listed);
  }
  return r;
}

/// Checks that @p output is non-decreasing and holds exactly the multiset of @p input.
/// Lists the first out-of-order positions; for a wrong multiset, the first differing rank.
template <typename T>
VerifyReport CheckSortedPermutation(const T* input, std::size_t n_in, const T* output,
                                    std::size_t n_out, std::size_t max_listed = kListedMismatches) {
  static_assert(!std::is_floating_point_v<T>, "sort checks are for integer keys");
  VerifyReport r;
  r.checked = n_out;
  if (n_in != n_out) {
    r.ok = false;
    r.note = "output has " + std::to_string(n_out) + " elements, input " + std::to_string(n_in);
    return r;
  }
  for (std::size_t i = 1; i < n_out; ++i) {
    if (output[i] < output[i - 1]) detail::Record(r, i, output[i - 1], output[i], max_listed);
  }
  if (!r.ok) {
    r.note = "output is not sorted (listed: expected >= previous element)";
    return r;
  }
  std::vector<T> ref(input, input + n_in);
  std::sort(ref.begin(), ref.end());
  for (std::size_t i = 0; i < n_in; ++i) {
    if (ref[i] != output[i]) detail::Record(r, i, ref[i], output[i], max_listed);
  }
  if (!r.ok) r.note = "output is sorted but not a permutation of the input";
  return r;
}

}  // namespace staged
