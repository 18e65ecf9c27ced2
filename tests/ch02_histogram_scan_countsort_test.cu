/// @file ch02_histogram_scan_countsort_test.cu
/// @brief Chapter 02 tests: the padding formula and CPU references (host), then one body per
///        operation run against every variant (naive, optimized, CUB) over sizes and
///        distributions (GPU; skipped without one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/generate.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch02 {
namespace {

using staged::testing::kTestSeed;

// ---------------------------------------------------------------------------------------------
// Host tests: padding formula, CPU references, argument checks.

// The seed's macro exactly as printed, with BANKS = 16 and LOG_2_BANKS = 4. Only defined for
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
  // `a >> B + a >> C` is `a >> (B + a) >> C`: the seed's scan was never padded.
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
  EXPECT_EQ(optimized::ExclusiveScanTempBytes<std::uint32_t>(1024), 0u);
  EXPECT_GT(optimized::ExclusiveScanTempBytes<std::uint32_t>(1025), 0u);
}

// ---------------------------------------------------------------------------------------------
// GPU tests: one body per operation, every variant.

using HistogramFn = void (*)(const std::uint8_t*, std::size_t, std::uint32_t*, void*, std::size_t,
                             cudaStream_t);
using HistogramTempFn = std::size_t (*)(std::size_t);
using SortFn = void (*)(const std::uint8_t*, std::uint8_t*, std::size_t, void*, std::size_t,
                        cudaStream_t);

struct Variant {
  const char* name;
  HistogramFn histogram;
  HistogramTempFn histogram_temp;
  SortFn sort;
  HistogramTempFn sort_temp;
};

const Variant kVariants[] = {
    {"Naive", naive::Histogram, naive::HistogramTempBytes, naive::CountingSort,
     naive::CountingSortTempBytes},
    {"Optimized", optimized::Histogram, optimized::HistogramTempBytes, optimized::CountingSort,
     optimized::CountingSortTempBytes},
    {"Library", library::Histogram, library::HistogramTempBytes, library::CountingSort,
     library::CountingSortTempBytes},
};

// Input distributions of the chapter: the generator's plus "two values".
enum class Dist { kUniform, kEqual, kTwoValues, kSkewed, kFew };

std::vector<std::uint8_t> MakeInput(std::size_t n, Dist dist) {
  switch (dist) {
    case Dist::kUniform:
      return staged::Generate<std::uint8_t>(n, staged::Distribution::kUniform, kTestSeed);
    case Dist::kEqual:
      return staged::Generate<std::uint8_t>(n, staged::Distribution::kEqual, kTestSeed);
    case Dist::kSkewed:
      return staged::Generate<std::uint8_t>(n, staged::Distribution::kSkewed, kTestSeed);
    case Dist::kFew:
      return staged::Generate<std::uint8_t>(n, staged::Distribution::kFew, kTestSeed);
    case Dist::kTwoValues: {
      auto bits = staged::Generate<std::uint8_t>(n, staged::Distribution::kUniform, kTestSeed);
      for (auto& b : bits) b = (b & 1) ? 3 : 250;
      return bits;
    }
  }
  return {};
}

const char* DistName(Dist d) {
  switch (d) {
    case Dist::kUniform:
      return "Uniform";
    case Dist::kEqual:
      return "Equal";
    case Dist::kTwoValues:
      return "TwoValues";
    case Dist::kSkewed:
      return "Skewed";
    case Dist::kFew:
      return "Few";
  }
  return "?";
}

constexpr std::size_t kSizes[] = {0, 1, 15, 16, 17, 255, 256, 257, 4095, 1000003, (1u << 24) + 1};
constexpr Dist kDists[] = {Dist::kUniform, Dist::kEqual, Dist::kTwoValues, Dist::kSkewed,
                           Dist::kFew};

using Case = std::tuple<int, std::size_t, Dist>;  // variant index, n, distribution

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return std::string(kVariants[std::get<0>(info.param)].name) + "N" +
         std::to_string(std::get<1>(info.param)) + DistName(std::get<2>(info.param));
}

// Runs histogram and sort of @p variant on @p in at byte offsets @p in_shift / @p out_shift of
// their device buffers (to exercise unaligned heads) and checks both against the CPU.
void CheckVariant(const Variant& v, const std::vector<std::uint8_t>& in, std::size_t in_shift,
                  std::size_t out_shift) {
  const std::size_t n = in.size();
  const std::string where =
      std::string(v.name) + " n = " + std::to_string(n) + " seed " + std::to_string(kTestSeed);
  staged::DeviceBuffer<std::uint8_t> d_in(n + in_shift);
  if (n > 0) {
    CUDA_CHECK(cudaMemcpy(d_in.data() + in_shift, in.data(), n, cudaMemcpyHostToDevice));
  }
  staged::DeviceBuffer<std::uint8_t> d_out(n + out_shift + 1);
  d_out.FillBytes(0xAB);
  staged::DeviceBuffer<std::uint32_t> d_hist(kNumBins);
  d_hist.FillBytes(0xFF);
  const std::size_t temp = std::max(v.histogram_temp(n), v.sort_temp(n));
  staged::DeviceBuffer<unsigned char> d_temp(temp);

  v.histogram(d_in.data() + in_shift, n, d_hist.data(), d_temp.data(), temp, nullptr);
  v.sort(d_in.data() + in_shift, d_out.data() + out_shift, n, d_temp.data(), temp, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  std::vector<std::uint32_t> ref_hist(kNumBins);
  cpu::Histogram(in.data(), n, ref_hist.data());
  const std::vector<std::uint32_t> hist = d_hist.ToHost();
  EXPECT_EQ(std::accumulate(hist.begin(), hist.end(), std::uint64_t{0}), n) << where;
  const auto hr = staged::CompareExact(ref_hist.data(), hist.data(), kNumBins);
  EXPECT_TRUE(hr.ok) << where << " histogram: " << hr.Summary();

  const std::vector<std::uint8_t> all = d_out.ToHost();
  const std::uint8_t* out = all.data() + out_shift;
  std::vector<std::uint8_t> ref(n);
  cpu::CountingSort(in.data(), ref.data(), n);
  // Sorted and a permutation: equal to the CPU counting sort, which is both by construction.
  EXPECT_TRUE(std::is_sorted(out, out + n)) << where;
  const auto sr = staged::CompareExact(ref.data(), out, n);
  EXPECT_TRUE(sr.ok) << where << " sort: " << sr.Summary();
  // Nothing written outside [out_shift, out_shift + n).
  for (std::size_t i = 0; i < out_shift; ++i) EXPECT_EQ(all[i], 0xAB) << where << " before";
  EXPECT_EQ(all[out_shift + n], 0xAB) << where << " after the end";
}

class HistogramAndSort : public staged::testing::GpuTestWithParam<Case> {};

TEST_P(HistogramAndSort, MatchesCpu) {
  const auto [variant, n, dist] = GetParam();
  CheckVariant(kVariants[variant], MakeInput(n, dist), 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Ch02, HistogramAndSort,
                         ::testing::Combine(::testing::Values(0, 1, 2), ::testing::ValuesIn(kSizes),
                                            ::testing::ValuesIn(kDists)),
                         CaseName);

class UnalignedHistogramAndSort : public staged::testing::GpuTestWithParam<int> {};

TEST_P(UnalignedHistogramAndSort, HeadsAndTailsAreCounted) {
  const Variant& v = kVariants[GetParam()];
  for (std::size_t n : {1u, 20u, 100u, 4099u, 300001u}) {
    for (std::size_t shift : {1u, 3u, 15u}) {
      CheckVariant(v, MakeInput(n, Dist::kSkewed), shift, 16 - shift);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ch02, UnalignedHistogramAndSort, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(kVariants[info.param].name);
                         });

TEST(HistogramAndSortLargest, SeedLimitOf537MillionBytes) {
  STAGED_REQUIRE_GPU();
  constexpr std::size_t kN = 537000000;
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < 4 * kN) GTEST_SKIP() << "needs about 2.2 GB of free device memory";
  const auto in = MakeInput(kN, Dist::kUniform);
  for (const Variant& v : kVariants) CheckVariant(v, in, 0, 0);
}

// The optimized histogram counts in 16-bit private counters and drains them every 4095 16-byte
// words per thread. On an H200 (396 resident blocks of 128 threads) only inputs above ~3.3 GB
// reach a drain, so this test counts 3.6 GB: two runs set by cudaMemset (no host copy), an odd
// length and an unaligned start so the edge bytes are counted as well. A missed drain would
// carry one thread's count into its neighbour's half-word and lose counts.
TEST(HistogramLargest, OptimizedDrainsSixteenBitCounters) {
  STAGED_REQUIRE_GPU();
  constexpr std::size_t kN = 3600000001;
  constexpr std::size_t kFirst = 1234567891;
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < kN + (std::size_t{1} << 30))
    GTEST_SKIP() << "needs about 4.7 GB of free device memory";
  staged::DeviceBuffer<std::uint8_t> d_in(kN + 1);
  std::uint8_t* in = d_in.data() + 1;
  CUDA_CHECK(cudaMemset(in, 0x11, kFirst));
  CUDA_CHECK(cudaMemset(in + kFirst, 0xEE, kN - kFirst));
  staged::DeviceBuffer<std::uint32_t> d_hist(kNumBins);
  d_hist.FillBytes(0xFF);
  optimized::Histogram(in, kN, d_hist.data(), nullptr, optimized::HistogramTempBytes(kN), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint32_t> expected(kNumBins, 0);
  expected[0x11] = static_cast<std::uint32_t>(kFirst);
  expected[0xEE] = static_cast<std::uint32_t>(kN - kFirst);
  EXPECT_EQ(d_hist.ToHost(), expected);
}

// Scan: one body over the three variants and both element types.

template <typename T>
using ScanFn = void (*)(const T*, T*, std::size_t, void*, std::size_t, cudaStream_t);
template <typename T>
using ScanTempFn = std::size_t (*)(std::size_t);

template <typename T>
struct ScanVariant {
  ScanFn<T> scan;
  ScanTempFn<T> temp;
  bool in_place;  // whether d_out == d_in is allowed
};

template <typename T>
ScanVariant<T> GetScan(int variant) {
  switch (variant) {
    case 0:
      return {naive::ExclusiveScan<T>, naive::ExclusiveScanTempBytes<T>, false};
    case 1:
      return {optimized::ExclusiveScan<T>, optimized::ExclusiveScanTempBytes<T>, true};
    default:
      return {library::ExclusiveScan<T>, library::ExclusiveScanTempBytes<T>, false};
  }
}

template <typename T>
void CheckScan(int variant, std::size_t n) {
  const ScanVariant<T> s = GetScan<T>(variant);
  const std::string where = std::string(kVariants[variant].name) + " n = " + std::to_string(n) +
                            " seed " + std::to_string(kTestSeed);
  // Values in [-500, 500) for int32 and [0, 1000) for uint32: sums stay far from overflow.
  const auto raw = staged::Generate<std::uint32_t>(n, staged::Distribution::kUniform, kTestSeed);
  std::vector<T> in(n);
  for (std::size_t i = 0; i < n; ++i) {
    in[i] = static_cast<T>(raw[i] % 1000) - (std::is_signed_v<T> ? T(500) : T(0));
  }
  staged::DeviceBuffer<T> d_in(in);
  staged::DeviceBuffer<T> d_out(n + 1);
  d_out.FillBytes(0xFF);
  const std::size_t temp = s.temp(n);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  s.scan(d_in.data(), d_out.data(), n, d_temp.data(), temp, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<T> out = d_out.ToHost();
  std::vector<T> ref(n);
  cpu::ExclusiveScan(in.data(), ref.data(), n);
  const auto r = staged::CompareExact(ref.data(), out.data(), n);
  EXPECT_TRUE(r.ok) << where << ": " << r.Summary();
  // The definition, independently of the CPU scan: out[0] = 0, out[i+1] - out[i] = in[i].
  if (n > 0) EXPECT_EQ(out[0], T{0}) << where;
  std::size_t bad = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) bad += out[i + 1] - out[i] != in[i];
  EXPECT_EQ(bad, 0u) << where << ": differences do not reproduce the input";
  EXPECT_EQ(out[n], static_cast<T>(-1)) << where << ": wrote past the end";
  if (s.in_place && n > 0) {
    s.scan(d_in.data(), d_in.data(), n, d_temp.data(), temp, nullptr);
    const std::vector<T> again = d_in.ToHost();
    EXPECT_TRUE(staged::CompareExact(ref.data(), again.data(), n).ok) << where << " in place";
  }
}

class ExclusiveScanSizes : public staged::testing::GpuTestWithParam<std::tuple<int, std::size_t>> {
};

TEST_P(ExclusiveScanSizes, DifferencesReproduceInput) {
  const auto [variant, n] = GetParam();
  CheckScan<std::uint32_t>(variant, n);
  CheckScan<std::int32_t>(variant, n);
}

constexpr std::size_t kScanSizes[] = {0,     1,       2,       255,     256,
                                      257,   1023,    1024,    1025,    4095,
                                      65537, 1000003, 1048577, 1050625, (1u << 24) + 1};

INSTANTIATE_TEST_SUITE_P(Ch02, ExclusiveScanSizes,
                         ::testing::Combine(::testing::Values(0, 1, 2),
                                            ::testing::ValuesIn(kScanSizes)),
                         [](const ::testing::TestParamInfo<std::tuple<int, std::size_t>>& info) {
                           return std::string(kVariants[std::get<0>(info.param)].name) + "N" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(HistogramDeterminism, OptimizedSortIsBitIdenticalAcrossRuns) {
  STAGED_REQUIRE_GPU();
  const auto in = MakeInput(3000017, Dist::kTwoValues);
  staged::DeviceBuffer<std::uint8_t> d_in(in);
  staged::DeviceBuffer<std::uint8_t> a(in.size()), b(in.size());
  const std::size_t temp = optimized::CountingSortTempBytes(in.size());
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  optimized::CountingSort(d_in.data(), a.data(), in.size(), d_temp.data(), temp, nullptr);
  optimized::CountingSort(d_in.data(), b.data(), in.size(), d_temp.data(), temp, nullptr);
  EXPECT_EQ(a.ToHost(), b.ToHost());
}

}  // namespace
}  // namespace ch02
