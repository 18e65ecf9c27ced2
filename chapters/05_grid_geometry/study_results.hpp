/**
 * @file study_results.hpp
 * @brief `ch05_study`'s memory: the median of every measured row at every N, which the printed
 *        tables read and which decides whether a column's next point is affordable.
 */
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <string>

namespace ch05::study {

/// Medians (ms) by row name (`grid_1d_mxm_shared`, `block_4x8`, `cpu`, ...) and N.
class Results {
 public:
  /// Records the median @p ms of row @p name at @p n.
  void Set(const std::string& name, int n, double ms) { ms_[name][n] = ms; }
  /// The median of row @p name at @p n, if it was measured.
  std::optional<double> Get(const std::string& name, int n) const {
    const auto it = ms_.find(name);
    if (it == ms_.end()) return {};
    const auto jt = it->second.find(n);
    if (jt == it->second.end()) return {};
    return jt->second;
  }
  /// True when row @p name's next point at @p n is predicted (N³ scaling from its last point)
  /// to take at most @p budget_ms per run, or when the row has no point yet.
  bool Affordable(const std::string& name, int n, double budget_ms) const {
    const auto it = ms_.find(name);
    if (it == ms_.end() || it->second.empty()) return true;
    const auto& [last_n, last_ms] = *it->second.rbegin();
    return last_ms * std::pow(static_cast<double>(n) / last_n, 3.0) <= budget_ms;
  }

 private:
  std::map<std::string, std::map<int, double>> ms_;
};

/// @p num / @p den when both exist and the denominator is positive.
inline std::optional<double> Ratio(std::optional<double> num, std::optional<double> den) {
  if (!num || !den || !(*den > 0)) return {};
  return *num / *den;
}

}  // namespace ch05::study
