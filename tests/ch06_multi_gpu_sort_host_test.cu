/// @file ch06_multi_gpu_sort_host_test.cu
/// @brief Host tests of chapter 06: the (key, position) order, the sample positions, the
///        splitter choice, and the distributed sort modelled on the CPU (every key in the right
///        run, the runs balanced for every input, all-equal keys included).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ch06_inputs.hpp"
#include "chapters/06_multi_gpu_sort/cpu.hpp"
#include "chapters/06_multi_gpu_sort/splitters.hpp"

namespace ch06 {
namespace {

TEST(Ch06Splitters, EqualKeysAreOrderedByPosition) {
  const Tagged s{7, 100};
  EXPECT_TRUE(Before(6, 999, s));
  EXPECT_TRUE(Before(7, 99, s));
  EXPECT_FALSE(Before(7, 100, s));
  EXPECT_FALSE(Before(7, 101, s));
  EXPECT_FALSE(Before(8, 0, s));
  const Tagged splitters[] = {{5, 0}, {7, 100}, {7, 200}};
  EXPECT_EQ(Bucket(4, 50, splitters, 3), 0);
  EXPECT_EQ(Bucket(5, 0, splitters, 3), 1);  // a splitter starts its bucket
  EXPECT_EQ(Bucket(7, 99, splitters, 3), 1);
  EXPECT_EQ(Bucket(7, 150, splitters, 3), 2);
  EXPECT_EQ(Bucket(7, 200, splitters, 3), 3);
  EXPECT_EQ(Bucket(9, 0, splitters, 3), 3);
}

TEST(Ch06Splitters, ChosenAtTheSampleQuantiles) {
  std::vector<Tagged> sample;
  for (std::uint32_t i = 0; i < 100; ++i) sample.push_back({99 - i, i});  // reverse order
  const std::vector<Tagged> s = ChooseSplitters(sample, 4);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].key, 25u);
  EXPECT_EQ(s[1].key, 50u);
  EXPECT_EQ(s[2].key, 75u);
  EXPECT_TRUE(ChooseSplitters(sample, 1).empty());
  EXPECT_THROW(ChooseSplitters(sample, 0), std::invalid_argument);
  EXPECT_THROW(ChooseSplitters(sample, kMaxGpus + 1), std::invalid_argument);
}

TEST(Ch06Splitters, AnEmptySampleSendsEveryKeyToRankZero) {
  const std::vector<Tagged> s = ChooseSplitters({}, 8);
  ASSERT_EQ(s.size(), 7u);
  EXPECT_EQ(Bucket(0xFFFFFFFFu, 0xFFFFFFFFFFFFFFFEull, s.data(), 7), 0);
  EXPECT_EQ(Bucket(0, 0, s.data(), 7), 0);
}

TEST(Ch06Splitters, SamplePositionsStayInTheirStratum) {
  for (std::uint64_t n : {1ull, 2ull, 7ull, 4095ull, 4096ull, 4097ull, 1000003ull, 1ull << 32}) {
    for (std::uint64_t j = 0; j < static_cast<std::uint64_t>(kSamplesPerGpu); ++j) {
      const std::uint64_t i = SamplePosition(j, kSamplesPerGpu, n, 42);
      ASSERT_LT(i, n) << "n = " << n << ", sample " << j;
      if (n >= static_cast<std::uint64_t>(kSamplesPerGpu)) {
        ASSERT_GE(i, j * n / kSamplesPerGpu) << "n = " << n << ", sample " << j;
        ASSERT_LT(i, (j + 1) * n / kSamplesPerGpu) << "n = " << n << ", sample " << j;
      }
    }
  }
}

// The model's runs, in rank order, are the sorted input, for every input, k and split.
TEST(Ch06Model, RunsInRankOrderAreTheSortedInput) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{100003}}) {
    for (const testing::Input& in : testing::AllInputs(n, 7)) {
      std::vector<std::uint32_t> expected = in.keys;
      std::sort(expected.begin(), expected.end());
      for (int k : {1, 2, 3, 8}) {
        for (const std::string& how : testing::SplitNames()) {
          const cpu::Model m =
              cpu::DistributedSort(testing::Cut(in.keys, testing::Split(n, k, how)), 11);
          std::vector<std::uint32_t> got;
          for (const auto& run : m.runs) got.insert(got.end(), run.begin(), run.end());
          ASSERT_EQ(got, expected) << in.name << ", n = " << n << ", k = " << k << ", " << how;
          std::uint64_t sent = 0;
          for (std::uint64_t c : m.sent) sent += c;
          EXPECT_EQ(sent, n);
        }
      }
    }
  }
}

// The sample's quantiles balance the runs for any input: no run over 1.15 x n / k at 2^20 keys
// on 8 GPUs. All-equal keys would all go to one GPU without the positions.
TEST(Ch06Model, RunsAreBalancedForEveryInput) {
  const std::size_t n = std::size_t{1} << 20;
  for (const testing::Input& in : testing::AllInputs(n, 3)) {
    for (int k : {2, 8}) {
      for (const char* how : {"even", "first", "gaps"}) {
        const cpu::Model m =
            cpu::DistributedSort(testing::Cut(in.keys, testing::Split(n, k, how)), 5);
        for (std::size_t g = 0; g < m.runs.size(); ++g) {
          EXPECT_LE(static_cast<double>(m.runs[g].size()), 1.15 * n / k)
              << in.name << ", k = " << k << ", " << how << ": rank " << g << " of " << k;
        }
      }
    }
  }
}

TEST(Ch06Model, SplitsCoverEveryKey) {
  for (int k = 1; k <= kMaxGpus; ++k) {
    for (const std::string& how : testing::SplitNames()) {
      for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{1000003}}) {
        const std::vector<std::size_t> s = testing::Split(n, k, how);
        std::size_t total = 0;
        for (std::size_t x : s) total += x;
        EXPECT_EQ(total, n) << k << " " << how;
      }
    }
  }
}

}  // namespace
}  // namespace ch06
