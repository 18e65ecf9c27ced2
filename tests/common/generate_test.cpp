/// @file generate_test.cpp
/// @brief Host tests of the seeded generators and their distributions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "common/errors.hpp"
#include "common/generate.hpp"

namespace staged {
namespace {

template <typename T>
class GenerateTyped : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::int32_t, std::uint32_t, std::uint8_t>;
TYPED_TEST_SUITE(GenerateTyped, Types);

TYPED_TEST(GenerateTyped, SameSeedSameDataOtherSeedOtherData) {
  for (Distribution d : {Distribution::kUniform, Distribution::kSkewed, Distribution::kFew}) {
    auto a = Generate<TypeParam>(5000, d, 1);
    auto b = Generate<TypeParam>(5000, d, 1);
    auto c = Generate<TypeParam>(5000, d, 2);
    EXPECT_EQ(a, b) << DistributionName(d);
    EXPECT_NE(a, c) << DistributionName(d);
  }
}

TYPED_TEST(GenerateTyped, ParallelFillMatchesSerialPrefix) {
  // Large n is filled by several threads; each element depends only on (seed, index).
  const std::size_t big = (std::size_t{1} << 20) + 17;
  auto large = Generate<TypeParam>(big, Distribution::kUniform, 9);
  auto small = Generate<TypeParam>(1000, Distribution::kUniform, 9);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), large.begin()));
}

TYPED_TEST(GenerateTyped, SortedAndReverseAreMonotone) {
  for (std::size_t n : {0u, 1u, 2u, 1000u, 65537u}) {
    auto s = Generate<TypeParam>(n, Distribution::kSorted, 3);
    auto r = Generate<TypeParam>(n, Distribution::kReverse, 3);
    ASSERT_EQ(s.size(), n);
    EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
    EXPECT_TRUE(std::is_sorted(r.rbegin(), r.rend()));
  }
}

TYPED_TEST(GenerateTyped, EqualIsOneValueFewIsAtMostSixteen) {
  auto e = Generate<TypeParam>(10000, Distribution::kEqual, 4);
  EXPECT_EQ(std::set<TypeParam>(e.begin(), e.end()).size(), 1u);
  auto f = Generate<TypeParam>(10000, Distribution::kFew, 4);
  const auto distinct = std::set<TypeParam>(f.begin(), f.end()).size();
  EXPECT_LE(distinct, 16u);
  EXPECT_GE(distinct, 2u);
}

TYPED_TEST(GenerateTyped, UniformSpreadsOverTheRange) {
  auto u = Generate<TypeParam>(100000, Distribution::kUniform, 5);
  const auto [lo, hi] = std::minmax_element(u.begin(), u.end());
  const double span = static_cast<double>(*hi) - static_cast<double>(*lo);
  double full;
  if constexpr (std::is_floating_point_v<TypeParam>) {
    full = 2.0;
    EXPECT_GE(*lo, TypeParam(-1));
    EXPECT_LT(*hi, TypeParam(1));
  } else {
    full = static_cast<double>(std::numeric_limits<TypeParam>::max()) -
           static_cast<double>(std::numeric_limits<TypeParam>::min());
  }
  EXPECT_GT(span, 0.99 * full);
}

TEST(Generate, SkewedPutsMostValuesInOneNarrowCluster) {
  auto k = Generate<std::uint32_t>(100000, Distribution::kSkewed, 6);
  std::map<std::uint32_t, int> buckets;  // 1024 buckets over the key range
  for (auto v : k) ++buckets[v >> 22];
  int largest = 0;
  for (auto& [b, c] : buckets) largest = std::max(largest, c);
  EXPECT_GT(largest, 85000);
  EXPECT_LT(largest, 95000);
  auto bytes = Generate<std::uint8_t>(100000, Distribution::kSkewed, 6);
  std::map<int, int> hist;
  for (auto v : bytes) ++hist[v];
  int top = 0;
  for (auto& [v, c] : hist) top = std::max(top, c);
  EXPECT_GT(top, 85000);
}

TEST(Distribution, NamesRoundTripAndUnknownIsUsageError) {
  for (Distribution d : AllDistributions()) EXPECT_EQ(ParseDistribution(DistributionName(d)), d);
  EXPECT_EQ(AllDistributions().size(), 6u);
  EXPECT_THROW(ParseDistribution("gaussian"), UsageError);
}

}  // namespace
}  // namespace staged
