/// @file device_buffer_test.cpp
/// @brief Host tests of DeviceBuffer/PinnedBuffer paths that allocate nothing.
#include <gtest/gtest.h>

#include <utility>

#include "common/device_buffer.hpp"

namespace staged {
namespace {

TEST(DeviceBuffer, EmptyBufferOwnsNothing) {
  DeviceBuffer<float> b(0);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.bytes(), 0u);
  EXPECT_TRUE(b.ToHost().empty());
  EXPECT_NO_THROW(b.FillBytes(0));
  EXPECT_NO_THROW(b.CopyFromHost(nullptr, 0));
}

TEST(DeviceBuffer, CopyPastTheEndThrowsBeforeTouchingTheDevice) {
  DeviceBuffer<int> b;
  int x[2] = {1, 2};
  EXPECT_THROW(b.CopyFromHost(x, 2), std::out_of_range);
  EXPECT_THROW(b.CopyToHost(x, 1), std::out_of_range);
}

TEST(DeviceBuffer, MoveLeavesSourceEmpty) {
  DeviceBuffer<int> a(0);
  DeviceBuffer<int> b(std::move(a));
  EXPECT_TRUE(a.empty());
  DeviceBuffer<int> c;
  c = std::move(b);
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(c.empty());
}

TEST(PinnedBuffer, EmptyBufferOwnsNothing) {
  PinnedBuffer<char> p(0);
  EXPECT_EQ(p.data(), nullptr);
  EXPECT_EQ(p.size(), 0u);
  PinnedBuffer<char> q(std::move(p));
  EXPECT_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace staged
