/// @file verify.cpp
/// @brief Formatting of verification reports.
#include "verify.hpp"

namespace staged {

std::string VerifyReport::Summary() const {
  std::ostringstream os;
  if (ok) {
    os << "verified " << checked << " elements";
    if (max_abs_error > 0.0)
      os << " (max abs error " << max_abs_error << ", max rel error " << max_rel_error << ")";
    return os.str();
  }
  os << "MISMATCH: " << mismatches << " of " << checked << " elements differ";
  if (!note.empty()) os << "; " << note;
  for (const Mismatch& m : first) {
    os << "\n  [" << m.index << "] expected " << m.expected << ", got " << m.actual;
  }
  return os.str();
}

}  // namespace staged
