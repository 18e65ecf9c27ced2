/// @file resident_grid_test.cpp
/// @brief Host tests of the 16-byte alignment split and the grid arithmetic.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/aligned_split.hpp"
#include "common/resident_grid.hpp"

namespace staged {
namespace {

TEST(SplitAt16, AlignedFloatsHaveNoHead) {
  const AlignedSplit s = SplitAt16(std::uintptr_t{4096}, 10, 4);
  EXPECT_EQ(s.head, 0u);
  EXPECT_EQ(s.vectors, 2u);
  EXPECT_EQ(s.tail, 2u);
}

TEST(SplitAt16, EveryOffsetAndLengthAddsUp) {
  for (std::size_t elem : {1u, 2u, 4u, 8u}) {
    for (std::uintptr_t offset = 0; offset < 16; offset += elem) {
      for (std::size_t n = 0; n < 70; ++n) {
        const AlignedSplit s = SplitAt16(std::uintptr_t{1024} + offset, n, elem);
        ASSERT_EQ(s.head + s.vectors * (16 / elem) + s.tail, n) << elem << " " << offset;
        ASSERT_LT(s.head, 16 / elem);
        ASSERT_LT(s.tail, 16 / elem);
        if (s.vectors > 0) {  // the body starts on a 16-byte boundary
          ASSERT_EQ((1024 + offset + s.head * elem) % 16, 0u);
        }
      }
    }
  }
}

TEST(SplitAt16, ShortArrayIsAllHead) {
  const AlignedSplit s = SplitAt16(std::uintptr_t{1}, 3, 1);
  EXPECT_EQ(s.head, 3u);
  EXPECT_EQ(s.vectors, 0u);
  EXPECT_EQ(s.tail, 0u);
}

TEST(IsAligned16, Pointers) {
  alignas(16) unsigned char buf[32] = {};
  EXPECT_TRUE(IsAligned16(buf));
  EXPECT_FALSE(IsAligned16(buf + 4));
  EXPECT_TRUE(IsAligned16(buf + 16));
}

TEST(GridFor, NeverMoreThanTheWorkNorTheGpuAndAtLeastOne) {
  EXPECT_EQ(GridFor(264, 0, 1024), 1u);
  EXPECT_EQ(GridFor(264, 1, 1024), 1u);
  EXPECT_EQ(GridFor(264, 1024 * 10 + 1, 1024), 11u);
  EXPECT_EQ(GridFor(264, std::size_t{1} << 40, 1024), 264u);
  EXPECT_EQ(GridFor(0, 5000, 1), 1u);
}

}  // namespace
}  // namespace staged
