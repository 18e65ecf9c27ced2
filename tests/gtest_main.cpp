/// @file gtest_main.cpp
/// @brief GoogleTest entry point: like gtest_main, but a run in which every selected test was
///        skipped (no GPU) exits 77, CTest's skip code, instead of passing silently, and a
///        filter that selects no test is an error (exit 2), not a pass of nothing.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const auto* unit = ::testing::UnitTest::GetInstance();
  if (rc == 0 && unit->test_to_run_count() == 0 && !::testing::GTEST_FLAG(list_tests)) {
    // A typed suite's tests are named Suite/0.Test (one per type), a parameterised one's
    // Prefix/Suite.Test/Param: a filter written as Suite.Test selects neither.
    const std::string filter = ::testing::GTEST_FLAG(filter);
    std::fprintf(stderr,
                 "%s: no test matches --gtest_filter=%s; list the names with --gtest_list_tests "
                 "(typed tests are Suite/0.Test, parameterised ones Prefix/Suite.Test/Param)\n",
                 argv[0], filter.c_str());
    return 2;
  }
  if (rc == 0 && unit->test_to_run_count() > 0 &&
      unit->skipped_test_count() == unit->test_to_run_count()) {
    return 77;
  }
  return rc;
}
