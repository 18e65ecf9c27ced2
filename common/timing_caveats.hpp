/**
 * @file timing_caveats.hpp
 * @brief Why the times of this process are not comparable with a normal run: the reasons the
 *        timer (or a stream gate) gave up part of its method, collected once each, so that the
 *        report can say so next to the rows.
 *
 * @code
 * staged::NoteTimingCaveat("the stream gate is off: each time includes the host's launch work");
 * for (const std::string& why : staged::TimingCaveats()) std::cerr << "note: " << why << "\n";
 * @endcode
 */
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace staged {

/// Records @p reason (once: a reason already noted is not repeated). Thread-safe.
/// @param[in] reason what was given up and what it means for the times, one sentence without a
///            final full stop
void NoteTimingCaveat(const std::string& reason);

/// Every reason noted so far in this process, in the order first noted.
std::vector<std::string> TimingCaveats();

/// Prints one line per caveat, "note: times not comparable with a normal run: <reason>"
/// (nothing when there is none).
/// @param[out] out where the lines go
void PrintTimingCaveats(std::ostream& out);

}  // namespace staged
