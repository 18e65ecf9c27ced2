/// @file timer_test.cpp
/// @brief Host tests of timing statistics and the CPU timer.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/timer.hpp"
#include "common/timing_caveats.hpp"

namespace staged {
namespace {

TEST(Summarize, OddCountMedianIsMiddle) {
  TimingStats s = Summarize({5.0, 1.0, 3.0});
  EXPECT_DOUBLE_EQ(s.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 5.0);
  EXPECT_EQ(s.reps, 3);
}

TEST(Summarize, EvenCountMedianAveragesMiddlePair) {
  TimingStats s = Summarize({4.0, 1.0, 2.0, 100.0});
  EXPECT_DOUBLE_EQ(s.median_ms, 3.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 100.0);
}

TEST(Summarize, EmptyIsAnError) { EXPECT_THROW(Summarize({}), std::invalid_argument); }

TEST(TimeCpu, RunsWarmupPlusRepsAndMeasuresWork) {
  int calls = 0;
  volatile double sink = 0;
  TimingStats s = TimeCpu(TimingOptions{2, 5, false}, [&] {
    ++calls;
    for (int i = 0; i < 200000; ++i) sink = sink + i * 0.5;
  });
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(s.reps, 5);
  EXPECT_GT(s.min_ms, 0.0);
  EXPECT_LE(s.min_ms, s.median_ms);
  EXPECT_LE(s.median_ms, s.max_ms);
}

TEST(ShouldFlushL2, BelowFourTimesL2Only) {
  constexpr std::size_t kL2 = 50u << 20;
  EXPECT_TRUE(ShouldFlushL2(0, kL2));
  EXPECT_TRUE(ShouldFlushL2(4 * kL2 - 1, kL2));
  EXPECT_FALSE(ShouldFlushL2(4 * kL2, kL2));
}

TEST(TimingOptions, GateIsOnByDefault) {
  const TimingOptions o{1, 2, false};
  EXPECT_TRUE(o.gate);
}

TEST(TimingCaveats, EachReasonIsNotedOnceAndPrintedAsNotComparable) {
  const std::string why = "a reason only this test gives";
  NoteTimingCaveat(why);
  NoteTimingCaveat(why);
  const std::vector<std::string> all = TimingCaveats();
  EXPECT_EQ(std::count(all.begin(), all.end(), why), 1);
  std::ostringstream out;
  PrintTimingCaveats(out);
  EXPECT_NE(out.str().find("note: times not comparable with a normal run: " + why + "\n"),
            std::string::npos)
      << out.str();
}

}  // namespace
}  // namespace staged
