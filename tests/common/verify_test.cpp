/// @file verify_test.cpp
/// @brief Host tests of the verification helpers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/verify.hpp"

namespace staged {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(CompareExact, EqualArraysPass) {
  std::vector<int> a = {1, 2, 3};
  VerifyReport r = CompareExact(a.data(), a.data(), a.size());
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(r.checked, 3u);
  EXPECT_EQ(r.Summary(), "verified 3 elements");
}

TEST(CompareExact, ListsFirstMismatchesAndCountsAll) {
  std::vector<std::uint32_t> e(100, 7), a(100, 7);
  for (int i = 10; i < 30; ++i) a[i] = 8;
  VerifyReport r = CompareExact(e.data(), a.data(), e.size());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.mismatches, 20u);
  ASSERT_EQ(r.first.size(), kListedMismatches);
  EXPECT_EQ(r.first[0].index, 10u);
  EXPECT_EQ(r.first[0].expected, "7");
  EXPECT_EQ(r.first[0].actual, "8");
  EXPECT_NE(r.Summary().find("MISMATCH: 20 of 100"), std::string::npos);
}

TEST(CompareExact, FloatingPointIsBitExact) {
  std::vector<double> e = {0.0, kNaN, kInf, 1.0};
  std::vector<double> same = {0.0, kNaN, kInf, 1.0};
  EXPECT_TRUE(CompareExact(e.data(), same.data(), 4).ok);
  std::vector<double> negzero = {-0.0, kNaN, kInf, 1.0};
  EXPECT_FALSE(CompareExact(e.data(), negzero.data(), 4).ok);
  std::vector<double> nan_where_finite = {0.0, kNaN, kInf, kNaN};
  EXPECT_FALSE(CompareExact(e.data(), nan_where_finite.data(), 4).ok);
  std::vector<double> finite_where_nan = {0.0, 5.0, kInf, 1.0};
  EXPECT_FALSE(CompareExact(e.data(), finite_where_nan.data(), 4).ok);
  std::vector<std::uint8_t> bytes = {200}, other = {201};
  VerifyReport r = CompareExact(bytes.data(), other.data(), 1);
  EXPECT_EQ(r.first[0].expected, "200");  // printed as a number, not a character
}

TEST(CompareTolerance, AbsolutePlusRelative) {
  std::vector<double> e = {1.0, 1000.0, 0.0};
  std::vector<double> a = {1.0 + 1e-7, 1000.0 + 1e-3, 1e-7};
  VerifyReport r = CompareTolerance(e.data(), a.data(), 3, 1e-6, 1e-5);
  EXPECT_TRUE(r.ok) << r.Summary();
  EXPECT_NEAR(r.max_abs_error, 1e-3, 1e-9);
  std::vector<double> off = {1.0 + 1e-4, 1000.0, 0.0};
  EXPECT_FALSE(CompareTolerance(e.data(), off.data(), 3, 1e-6, 1e-5).ok);
}

TEST(CompareTolerance, NaNNeverPassesInfinitiesMustMatch) {
  std::vector<double> nan = {kNaN};
  EXPECT_FALSE(CompareTolerance(nan.data(), nan.data(), 1, 1e9, 1e9).ok);
  std::vector<double> one = {1.0};
  EXPECT_FALSE(CompareTolerance(one.data(), nan.data(), 1, 1e9, 1e9).ok);
  EXPECT_FALSE(CompareTolerance(nan.data(), one.data(), 1, 1e9, 1e9).ok);
  std::vector<double> inf = {kInf}, ninf = {-kInf}, big = {1e300};
  EXPECT_TRUE(CompareTolerance(inf.data(), inf.data(), 1, 0, 0).ok);
  EXPECT_FALSE(CompareTolerance(inf.data(), ninf.data(), 1, 1e9, 1e9).ok);
  EXPECT_FALSE(CompareTolerance(inf.data(), big.data(), 1, 1e9, 1e9).ok);
}

TEST(CheckSortedPermutation, AcceptsSortedPermutation) {
  std::vector<std::uint32_t> in = {5, 1, 4, 1, 0xFFFFFFFFu, 0};
  std::vector<std::uint32_t> out = {0, 1, 1, 4, 5, 0xFFFFFFFFu};
  EXPECT_TRUE(CheckSortedPermutation(in.data(), in.size(), out.data(), out.size()).ok);
  EXPECT_TRUE(CheckSortedPermutation<int>(nullptr, 0, nullptr, 0).ok);
}

TEST(CheckSortedPermutation, RejectsUnsortedWrongMultisetAndWrongLength) {
  std::vector<std::uint32_t> in = {3, 1, 2};
  std::vector<std::uint32_t> unsorted = {1, 3, 2};
  VerifyReport r = CheckSortedPermutation(in.data(), 3, unsorted.data(), 3);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.note.find("not sorted"), std::string::npos);
  EXPECT_EQ(r.first.at(0).index, 2u);
  std::vector<std::uint32_t> dup = {1, 1, 2};  // sorted, but 3 was replaced by 1
  r = CheckSortedPermutation(in.data(), 3, dup.data(), 3);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.note.find("not a permutation"), std::string::npos);
  r = CheckSortedPermutation(in.data(), 3, dup.data(), 2);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.Summary().find("output has 2 elements, input 3"), std::string::npos);
}

}  // namespace
}  // namespace staged
