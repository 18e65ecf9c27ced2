/// @file timing_caveats.cpp
/// @brief The process-wide list of timing caveats.
#include "timing_caveats.hpp"

#include <algorithm>
#include <mutex>
#include <ostream>

namespace staged {

namespace {
std::mutex& CaveatMutex() {
  static std::mutex m;
  return m;
}
std::vector<std::string>& Caveats() {
  static std::vector<std::string> caveats;
  return caveats;
}
}  // namespace

void NoteTimingCaveat(const std::string& reason) {
  const std::lock_guard<std::mutex> lock(CaveatMutex());
  auto& caveats = Caveats();
  if (std::find(caveats.begin(), caveats.end(), reason) == caveats.end()) {
    caveats.push_back(reason);
  }
}

std::vector<std::string> TimingCaveats() {
  const std::lock_guard<std::mutex> lock(CaveatMutex());
  return Caveats();
}

void PrintTimingCaveats(std::ostream& out) {
  for (const std::string& reason : TimingCaveats()) {
    out << "note: times not comparable with a normal run: " << reason << "\n";
  }
}

}  // namespace staged
