/// @file gtest_main.cpp
/// @brief GoogleTest entry point: like gtest_main, but a run in which every selected test was
///        skipped (no GPU) exits 77, CTest's skip code, instead of passing silently.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (rc == 0 && unit->test_to_run_count() > 0 &&
      unit->skipped_test_count() == unit->test_to_run_count()) {
    return 77;
  }
  return rc;
}
