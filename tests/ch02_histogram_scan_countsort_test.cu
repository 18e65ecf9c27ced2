/// @file ch02_histogram_scan_countsort_test.cu
/// @brief Chapter 02 GPU tests (skipped without one): histogram and counting sort of every
///        variant (naive, optimized, CUB radix sort, the CUB pipeline) against the CPU over
///        sizes, distributions, unaligned pointers, the optimized histogram's grid boundaries and
///        concurrent streams. The padding formula, the CPU references and the argument checks
///        are host tests (ch02_histogram_scan_countsort_host_test.cu); the scans are tested in
///        ch02_scan_test.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch02 {
namespace {

using staged::testing::kTestSeed;

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
    // The 64-bit count's radix sort and the pipeline share the library's histogram, tested
    // above: only their sorts are checked.
    {"LibraryCount64", nullptr, nullptr, library::CountingSortCount64,
     library::CountingSortTempBytes},
    {"Pipeline", nullptr, nullptr, library::CountingSortPipeline,
     library::CountingSortPipelineTempBytes},
};
constexpr int kNumVariants = sizeof(kVariants) / sizeof(kVariants[0]);
constexpr int kOptimized = 1;

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

struct SortCase {
  int variant;  // index into kVariants
  std::size_t n;
  Dist dist;
};

void PrintTo(const SortCase& c, std::ostream* os) {
  *os << kVariants[c.variant].name << " n=" << c.n << " " << DistName(c.dist);
}

std::string SortCaseName(const ::testing::TestParamInfo<SortCase>& info) {
  return std::string(kVariants[info.param.variant].name) + "_N" + std::to_string(info.param.n) +
         "_" + DistName(info.param.dist);
}

std::vector<SortCase> SortCases() {
  std::vector<SortCase> cases;
  for (int v = 0; v < kNumVariants; ++v) {
    for (std::size_t n : kSizes) {
      for (Dist d : kDists) cases.push_back({v, n, d});
    }
  }
  return cases;
}

// Runs histogram and sort of @p variant on @p in at byte offsets @p in_shift / @p out_shift of
// their device buffers (to exercise unaligned heads) and checks both against the CPU.
void CheckVariant(const Variant& v, const std::vector<std::uint8_t>& in, std::size_t in_shift,
                  std::size_t out_shift) {
  const std::size_t n = in.size();
  const std::string where =
      std::string(v.name) + " n = " + std::to_string(n) + " seed " + std::to_string(kTestSeed);
  staged::DeviceBuffer<std::uint8_t> d_in(n + in_shift);
  staged::CopyToDeviceAndWait(d_in.data() + in_shift, in.data(), n);
  staged::DeviceBuffer<std::uint8_t> d_out(n + out_shift + 1);
  d_out.FillBytes(0xAB);
  staged::DeviceBuffer<std::uint32_t> d_hist(kNumBins);
  d_hist.FillBytes(0xFF);
  const std::size_t temp = std::max(v.histogram ? v.histogram_temp(n) : 0, v.sort_temp(n));
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  d_temp.FillBytes(0xFF);

  if (v.histogram) {
    v.histogram(d_in.data() + in_shift, n, d_hist.data(), d_temp.data(), temp, nullptr);
  }
  v.sort(d_in.data() + in_shift, d_out.data() + out_shift, n, d_temp.data(), temp, nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());

  if (v.histogram) {
    std::vector<std::uint32_t> ref_hist(kNumBins);
    cpu::Histogram(in.data(), n, ref_hist.data());
    const std::vector<std::uint32_t> hist = d_hist.ToHost();
    EXPECT_EQ(std::accumulate(hist.begin(), hist.end(), std::uint64_t{0}), n) << where;
    const auto hr = staged::CompareExact(ref_hist.data(), hist.data(), kNumBins);
    EXPECT_TRUE(hr.ok) << where << " histogram: " << hr.Summary();
  }

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

class HistogramAndSort : public staged::testing::GpuTestWithParam<SortCase> {};

TEST_P(HistogramAndSort, MatchesCpu) {
  const SortCase c = GetParam();
  CheckVariant(kVariants[c.variant], MakeInput(c.n, c.dist), 0, 0);
}

INSTANTIATE_TEST_SUITE_P(Ch02, HistogramAndSort, ::testing::ValuesIn(SortCases()), SortCaseName);

class UnalignedHistogramAndSort : public staged::testing::GpuTestWithParam<int> {};

TEST_P(UnalignedHistogramAndSort, HeadsAndTailsAreCounted) {
  const Variant& v = kVariants[GetParam()];
  for (std::size_t n : {1u, 20u, 100u, 4099u, 300001u}) {
    for (std::size_t shift : {1u, 3u, 15u}) {
      CheckVariant(v, MakeInput(n, Dist::kSkewed), shift, 16 - shift);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ch02, UnalignedHistogramAndSort, ::testing::Range(0, kNumVariants),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string(kVariants[info.param].name);
                         });

// The smallest n >= lo at which HistogramBlocks(n) reaches @p blocks (it never decreases).
std::size_t FirstSizeWithBlocks(unsigned blocks, std::size_t lo, std::size_t hi) {
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (optimized::HistogramBlocks(mid) >= blocks) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo;
}

// The optimized histogram picks its grid from n: one block for small inputs, one more block per
// 8 KiB, at most one per SM. Sizes on both sides of the first two steps and of the point where
// the grid stops growing, with all-equal and skewed bytes and unaligned pointers, for the
// histogram and for the counting sort built on it.
TEST(HistogramGrid, BoundariesWhereTheGridChanges) {
  STAGED_REQUIRE_GPU();
  const std::size_t limit = std::size_t{1} << 30;
  const unsigned most = optimized::HistogramBlocks(limit);
  ASSERT_GE(most, 1u);
  EXPECT_EQ(optimized::HistogramBlocks(0), 1u);
  EXPECT_EQ(optimized::HistogramBlocks(1), 1u);
  std::vector<std::size_t> edges = {FirstSizeWithBlocks(2, 1, limit),
                                    FirstSizeWithBlocks(3, 1, limit),
                                    FirstSizeWithBlocks(most, 1, limit)};
  unsigned previous = 0;
  for (std::size_t n = 1; n < edges.back() + 20000; n += 4099) {
    const unsigned blocks = optimized::HistogramBlocks(n);
    EXPECT_GE(blocks, previous) << "n = " << n;
    EXPECT_LE(blocks, most) << "n = " << n;
    previous = blocks;
  }
  for (std::size_t edge : edges) {
    for (std::size_t n : {edge - 1, edge, edge + 1}) {
      for (Dist d : {Dist::kEqual, Dist::kSkewed}) {
        CheckVariant(kVariants[kOptimized], MakeInput(n, d), 0, 0);
        CheckVariant(kVariants[kOptimized], MakeInput(n, d), 7, 3);
      }
    }
  }
}

// Counting sorts of different sizes on four streams, each with its own poisoned scratch, queued
// without synchronisation and checked at the end against the CPU.
TEST(SortConcurrency, FourStreamsWithOwnScratch) {
  STAGED_REQUIRE_GPU();
  constexpr int kStreams = 4;
  const std::size_t sizes[kStreams] = {4099, 1000003, 5000011, 257};
  const Dist dists[kStreams] = {Dist::kEqual, Dist::kUniform, Dist::kSkewed, Dist::kFew};
  struct Job {
    std::vector<std::uint8_t> in;
    staged::DeviceBuffer<std::uint8_t> d_in, d_out;
    staged::DeviceBuffer<unsigned char> d_temp;
    staged::Stream stream;
  };
  std::vector<Job> jobs(kStreams);
  for (int s = 0; s < kStreams; ++s) {
    Job& j = jobs[s];
    j.in = MakeInput(sizes[s], dists[s]);
    j.d_in = staged::DeviceBuffer<std::uint8_t>(j.in);
    j.d_out = staged::DeviceBuffer<std::uint8_t>(sizes[s]);
    j.d_temp = staged::DeviceBuffer<unsigned char>(optimized::CountingSortTempBytes(sizes[s]));
    j.d_temp.FillBytes(0xFF);
  }
  for (int round = 0; round < 2; ++round) {
    for (Job& j : jobs) {
      optimized::CountingSort(j.d_in.data(), j.d_out.data(), j.in.size(), j.d_temp.data(),
                              j.d_temp.size(), j.stream.get());
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int s = 0; s < kStreams; ++s) {
    std::vector<std::uint8_t> ref(sizes[s]);
    cpu::CountingSort(jobs[s].in.data(), ref.data(), sizes[s]);
    const auto out = jobs[s].d_out.ToHost();
    EXPECT_TRUE(staged::CompareExact(ref.data(), out.data(), sizes[s]).ok) << "stream " << s;
  }
}

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

// 3.6 GB, more than 2^31 and close to the 2^32 limit of the 32-bit counts: two runs set by
// cudaMemset (no host copy), an odd length and an unaligned start so the edge bytes are counted
// as well. Each per-lane counter holds about n / (32 x blocks) here; a counter or an index kept
// in 32 bits where 64 are needed, or a lost edge byte, shows up as a wrong count.
TEST(HistogramLargest, OptimizedCountsMoreThan2To31Bytes) {
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

// The optimized sort twice on the same input, scratch poisoned before each run: both outputs
// equal the CPU counting sort (two values: long runs with many run boundaries inside words).
TEST(SortRepeatable, OptimizedMatchesCpuOnEveryRun) {
  STAGED_REQUIRE_GPU();
  const auto in = MakeInput(3000017, Dist::kTwoValues);
  std::vector<std::uint8_t> ref(in.size());
  cpu::CountingSort(in.data(), ref.data(), in.size());
  staged::DeviceBuffer<std::uint8_t> d_in(in);
  staged::DeviceBuffer<std::uint8_t> d_out(in.size());
  const std::size_t temp = optimized::CountingSortTempBytes(in.size());
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  for (int run = 0; run < 2; ++run) {
    d_temp.FillBytes(0xFF);
    d_out.FillBytes(run == 0 ? 0x00 : 0xFF);
    optimized::CountingSort(d_in.data(), d_out.data(), in.size(), d_temp.data(), temp, nullptr);
    const auto out = d_out.ToHost();
    const auto r = staged::CompareExact(ref.data(), out.data(), in.size());
    EXPECT_TRUE(r.ok) << "run " << run << " seed " << kTestSeed << ": " << r.Summary();
  }
}

}  // namespace
}  // namespace ch02
