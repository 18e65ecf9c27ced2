/// @file ch02_histogram_scan_countsort_host_test.cu
/// @brief Chapter 02 host tests (no GPU needed): the Blelloch scan's padding formula against the
///        seed's macro and the bank conflicts it removes, the CPU references, and the launchers'
///        argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_variants.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch02 {
namespace {

using staged::testing::kTestSeed;

// ---------------------------------------------------------------------------------------------
// Host tests: padding formula, CPU references, argument checks.

// The Russian lab's macro exactly as printed, with BANKS = 16 and LOG_2_BANKS = 4. Only defined for
// idx < 16: beyond that the parsed shift count reaches 32 and the expression is undefined.
constexpr int SeedMacroAsParsed(int idx) { return ((idx) >> 16 + (idx) >> (4 << 1)); }

// Largest number of distinct words of one warp's accesses that share a bank (1 = no conflict)
// at the scan level whose pair distance is @p offset; @p right picks the right element of each
// pair (offset (2t + 2) - 1) instead of the left (offset (2t + 1) - 1).
int ScanConflictWays(int offset, bool padded, bool right, int tile) {
  const int active = tile / (2 * offset);
  int worst = 1;
  for (int warp = 0; warp * 32 < active; ++warp) {
    std::vector<std::vector<int>> words(kNumBanks);
    for (int lane = 0; lane < 32 && warp * 32 + lane < active; ++lane) {
      const int t = warp * 32 + lane;
      int index = offset * (2 * t + (right ? 2 : 1)) - 1;
      if (padded) index += ConflictFreeOffset(index);
      auto& bank = words[index % kNumBanks];
      if (std::find(bank.begin(), bank.end(), index) == bank.end()) bank.push_back(index);
    }
    for (const auto& bank : words) worst = std::max(worst, static_cast<int>(bank.size()));
  }
  return worst;
}

TEST(ConflictFreeOffset, FormulaValues) {
  EXPECT_EQ(ConflictFreeOffset(0), 0);
  EXPECT_EQ(ConflictFreeOffset(31), 0);
  EXPECT_EQ(ConflictFreeOffset(32), 1);
  EXPECT_EQ(ConflictFreeOffset(64), 2);
  EXPECT_EQ(ConflictFreeOffset(1023), 31);
  EXPECT_EQ(ConflictFreeOffset(1024), 33);  // 32 + one more every 1024
  static_assert(ConflictFreeOffset(1023) + 1023 < 1024 + 32, "padded tile fits its array");
}

TEST(ConflictFreeOffset, PaddedIndicesStayDistinctAndOrdered) {
  int previous = -1;
  for (int i = 0; i < 4096; ++i) {
    const int padded = i + ConflictFreeOffset(i);
    EXPECT_GT(padded, previous) << "index " << i;
    previous = padded;
  }
}

TEST(ConflictFreeOffset, SeedMacroParsesToNoPadding) {
  // `a >> B + a >> C` is `a >> (B + a) >> C`: the Russian lab's scan was never padded.
  for (int idx = 0; idx < 16; ++idx) EXPECT_EQ(SeedMacroAsParsed(idx), 0) << idx;
  EXPECT_EQ(ConflictFreeOffset(15 * 32), 15);
}

TEST(ConflictFreeOffset, RemovesEveryScanBankConflict) {
  constexpr int kTile = 1024;
  for (bool right : {false, true}) {
    for (int offset = 1; offset <= kTile / 2; offset *= 2) {
      EXPECT_EQ(ScanConflictWays(offset, true, right, kTile), 1)
          << "offset " << offset << (right ? " right" : " left");
    }
  }
  // Unpadded, the pair distance of 2 x offset words puts 2 x offset lanes on one bank (up to 32)
  // until fewer than 32 pairs remain: 2-way at the first level, 32-way at offset 16.
  EXPECT_EQ(ScanConflictWays(1, false, false, kTile), 2);
  EXPECT_EQ(ScanConflictWays(2, false, false, kTile), 4);
  EXPECT_EQ(ScanConflictWays(16, false, false, kTile), 32);
  EXPECT_EQ(ScanConflictWays(64, false, true, kTile), 8);
}

TEST(CpuReference, HistogramCountsEveryByte) {
  std::vector<std::uint8_t> in = {0, 255, 7, 7, 7, 0, 128};
  std::vector<std::uint32_t> hist(kNumBins, 99);
  cpu::Histogram(in.data(), in.size(), hist.data());
  EXPECT_EQ(hist[0], 2u);
  EXPECT_EQ(hist[7], 3u);
  EXPECT_EQ(hist[128], 1u);
  EXPECT_EQ(hist[255], 1u);
  EXPECT_EQ(std::accumulate(hist.begin(), hist.end(), 0u), in.size());
}

TEST(CpuReference, ExclusiveScanWrapsAndAllowsInPlace) {
  std::vector<std::int32_t> v = {3, -1, 4, -1, 5};
  cpu::ExclusiveScan(v.data(), v.data(), v.size());
  EXPECT_EQ(v, (std::vector<std::int32_t>{0, 3, 2, 6, 5}));
  std::vector<std::uint32_t> u = {0xFFFFFFFFu, 2, 1};
  std::vector<std::uint32_t> out(3);
  cpu::ExclusiveScan(u.data(), out.data(), u.size());
  EXPECT_EQ(out, (std::vector<std::uint32_t>{0, 0xFFFFFFFFu, 1}));
}

TEST(CpuReference, CountingSortIsSortedPermutation) {
  for (std::size_t n : {0u, 1u, 257u, 10007u}) {
    const auto in = staged::Generate<std::uint8_t>(n, staged::Distribution::kUniform, kTestSeed);
    std::vector<std::uint8_t> out(n);
    cpu::CountingSort(in.data(), out.data(), n);
    const auto r = staged::CheckSortedPermutation(in.data(), n, out.data(), n);
    EXPECT_TRUE(r.ok) << "n = " << n << " seed " << kTestSeed << ": " << r.Summary();
  }
}

TEST(Arguments, ShortScratchAndHugeSizesThrow) {
  EXPECT_THROW(CheckArguments("f", 10, nullptr, 0, 256), std::invalid_argument);
  EXPECT_THROW(CheckArguments("f", kMaxElements + 1, nullptr, 0, 0), std::invalid_argument);
  EXPECT_NO_THROW(CheckArguments("f", 10, nullptr, 0, 0));
  EXPECT_THROW(optimized::ExclusiveScan<std::uint32_t>(nullptr, nullptr, 10, nullptr, 0, nullptr),
               std::invalid_argument);
}

TEST(Arguments, MisalignedScratchIsAUsageErrorBeforeAnyCudaCall) {
  // The look-back scan keeps 64-bit status words, updated atomically, 256 bytes into its
  // scratch: a d_temp off a 16-byte boundary is refused by every launcher whose scratch size is
  // a host computation (the CUB baselines ask CUB, so their check is a GPU test), before any
  // CUDA call: the pointers are never dereferenced.
  const std::size_t big = std::size_t{1} << 30;
  EXPECT_THROW(CheckArguments("f", 10, reinterpret_cast<void*>(0x10004), big, 256),
               staged::UsageError);
  EXPECT_NO_THROW(CheckArguments("f", 10, reinterpret_cast<void*>(0x10010), big, 256));
  for (const std::uintptr_t offset : {4u, 8u, 12u}) {
    void* t = reinterpret_cast<void*>(std::uintptr_t{1} << 20 | offset);
    const std::uint8_t* bytes = nullptr;
    std::uint8_t* bytes_out = nullptr;
    std::uint32_t* u32 = nullptr;
    std::int32_t* i32 = nullptr;
    const std::size_t n = 100000;
    EXPECT_THROW(naive::Histogram(bytes, n, u32, t, big, nullptr), staged::UsageError);
    EXPECT_THROW(optimized::Histogram(bytes, n, u32, t, big, nullptr), staged::UsageError);
    EXPECT_THROW(naive::ExclusiveScan<std::uint32_t>(u32, u32, n, t, big, nullptr),
                 staged::UsageError);
    EXPECT_THROW(naive::ExclusiveScan<std::int32_t>(i32, i32, n, t, big, nullptr),
                 staged::UsageError);
    EXPECT_THROW(optimized::ExclusiveScanBlelloch<std::uint32_t>(u32, u32, n, t, big, nullptr),
                 staged::UsageError);
    EXPECT_THROW(optimized::ExclusiveScan<std::uint32_t>(u32, u32, n, t, big, nullptr),
                 staged::UsageError);
    EXPECT_THROW(optimized::ExclusiveScan<std::int32_t>(i32, i32, n, t, big, nullptr),
                 staged::UsageError);
    for (const lookback::Variant& v : lookback::Variants()) {
      EXPECT_THROW(v.scan(u32, u32, n, t, big, nullptr), staged::UsageError) << v.row;
    }
    EXPECT_THROW(naive::CountingSort(bytes, bytes_out, n, t, big, nullptr), staged::UsageError);
    EXPECT_THROW(optimized::CountingSort(bytes, bytes_out, n, t, big, nullptr), staged::UsageError);
  }
}

}  // namespace
}  // namespace ch02
