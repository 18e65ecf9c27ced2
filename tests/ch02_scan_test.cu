/// @file ch02_scan_test.cu
/// @brief Chapter 02 scan tests (GPU): every scan stage (naive, Blelloch, look-back, CUB)
///        against the CPU over sizes x data x pointer layouts (aligned, offset, mismatched, in
///        place), the look-back scan's two contrasts (scan_lookback_variants.hpp),
///        wrap-around with an independent formula, concurrent
///        streams, host threads and graph replay. The look-back scan's layout, protocol and
///        occupancy are tested in ch02_lookback_test.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_variants.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch02 {
namespace {

using staged::testing::kTestSeed;

// ---------------------------------------------------------------------------------------------
// GPU tests: every scan stage against the CPU.

enum class Stage { kNaive, kBlelloch, kLookback, kLibrary, kLibraryCount64 };
const char* StageName(Stage s) {
  switch (s) {
    case Stage::kNaive:
      return "Naive";
    case Stage::kBlelloch:
      return "Blelloch";
    case Stage::kLookback:
      return "Lookback";
    case Stage::kLibrary:
      return "Library";
    case Stage::kLibraryCount64:
      return "LibraryCount64";
  }
  return "?";
}
void PrintTo(Stage s, std::ostream* os) { *os << StageName(s); }

// Whether the stage may scan in place (the naive ping-pong and CUB's ExclusiveSum are not
// documented to).
bool InPlaceAllowed(Stage s) { return s == Stage::kBlelloch || s == Stage::kLookback; }

template <typename T>
struct ScanFns {
  void (*scan)(const T*, T*, std::size_t, void*, std::size_t, cudaStream_t);
  std::size_t (*temp)(std::size_t);
};

template <typename T>
ScanFns<T> Fns(Stage s) {
  switch (s) {
    case Stage::kNaive:
      return {naive::ExclusiveScan<T>, naive::ExclusiveScanTempBytes<T>};
    case Stage::kBlelloch:
      return {optimized::ExclusiveScanBlelloch<T>, optimized::ExclusiveScanBlellochTempBytes<T>};
    case Stage::kLookback:
      return {optimized::ExclusiveScan<T>, optimized::ExclusiveScanTempBytes<T>};
    case Stage::kLibrary:
      break;
    case Stage::kLibraryCount64:
      return {library::ExclusiveScanCount64<T>, library::ExclusiveScanTempBytes<T>};
  }
  return {library::ExclusiveScan<T>, library::ExclusiveScanTempBytes<T>};
}

// Where input and output sit, in elements past a 256-byte aligned allocation. Equal offsets mod
// 4 take the look-back scan's 16-byte path with a lead; different ones its 4-byte path.
struct Layout {
  const char* name;
  std::size_t in_offset;
  std::size_t out_offset;
  bool in_place;  // output written over the input (out_offset unused)
};
constexpr Layout kAligned{"Aligned", 0, 0, false};
constexpr Layout kLead1{"Lead1", 1, 1, false};
constexpr Layout kLead3{"Lead3", 3, 3, false};
constexpr Layout kMismatched{"Mismatched", 0, 1, false};
constexpr Layout kMismatchedLead{"MismatchedLead", 2, 1, false};
constexpr Layout kInPlace{"InPlace", 0, 0, true};
constexpr Layout kInPlaceLead2{"InPlaceLead2", 2, 0, true};

// Input data, generated per element type.
enum class Data { kUniform, kSmall, kMax };
const char* DataName(Data d) {
  return d == Data::kUniform ? "uniform" : d == Data::kSmall ? "small" : "max";
}

template <typename T>
std::vector<T> MakeScanInput(std::size_t n, Data data) {
  const auto raw = staged::Generate<std::uint32_t>(n, staged::Distribution::kUniform, kTestSeed);
  std::vector<T> in(n);
  for (std::size_t i = 0; i < n; ++i) {
    switch (data) {
      case Data::kUniform:  // the full 32-bit range: sums wrap all the time
        in[i] = static_cast<T>(raw[i]);
        break;
      case Data::kSmall:  // [0, 1000) or [-500, 500)
        in[i] = static_cast<T>(raw[i] % 1000) - (std::is_signed_v<T> ? T(500) : T(0));
        break;
      case Data::kMax:  // 0xFFFFFFFF (uint32) or INT32_MAX
        in[i] = std::is_signed_v<T> ? static_cast<T>(0x7FFFFFFF) : static_cast<T>(0xFFFFFFFFu);
        break;
    }
  }
  return in;
}

constexpr std::uint32_t kPoisonWord = 0xA5A5A5A5u;

// Scans @p in with @p fns in @p layout; checks the result against the CPU, that nothing outside
// the output was written and (out of place) that the input is unchanged. Scratch starts poisoned.
template <typename T>
void CheckScan(const ScanFns<T>& fns, const Layout& layout, const std::vector<T>& in,
               const std::string& where) {
  const std::size_t n = in.size();
  staged::DeviceBuffer<T> d_a(layout.in_offset + n + 1);
  staged::DeviceBuffer<T> d_b(layout.in_place ? 0 : layout.out_offset + n + 1);
  d_b.FillBytes(0xA5);
  std::vector<T> host_a(d_a.size(), static_cast<T>(kPoisonWord));
  std::copy(in.begin(), in.end(), host_a.begin() + layout.in_offset);
  d_a.CopyFromHost(host_a);
  const std::size_t temp = fns.temp(n);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  d_temp.FillBytes(0xFF);
  T* in_ptr = d_a.data() + layout.in_offset;
  T* out_ptr = layout.in_place ? in_ptr : d_b.data() + layout.out_offset;
  fns.scan(in_ptr, out_ptr, n, d_temp.data(), temp, nullptr);

  std::vector<T> ref(n);
  cpu::ExclusiveScan(in.data(), ref.data(), n);
  const std::vector<T> a = d_a.ToHost();
  const std::vector<T> out_all = layout.in_place ? a : d_b.ToHost();
  const std::size_t out_offset = layout.in_place ? layout.in_offset : layout.out_offset;
  const auto r = staged::CompareExact(ref.data(), out_all.data() + out_offset, n);
  EXPECT_TRUE(r.ok) << where << ": " << r.Summary();
  if (n > 0) EXPECT_EQ(out_all[out_offset], T{0}) << where;
  for (std::size_t i = 0; i < out_offset; ++i) {
    EXPECT_EQ(out_all[i], static_cast<T>(kPoisonWord)) << where << ": wrote before the output";
  }
  EXPECT_EQ(out_all[out_offset + n], static_cast<T>(kPoisonWord)) << where << ": wrote past it";
  if (!layout.in_place) {
    EXPECT_TRUE(std::equal(in.begin(), in.end(), a.begin() + layout.in_offset))
        << where << ": the input changed";
  }
}

struct ScanCase {
  Stage stage;
  std::size_t n;
  Layout layout;
};

void PrintTo(const ScanCase& c, std::ostream* os) {
  *os << StageName(c.stage) << " n=" << c.n << " " << c.layout.name;
}

std::string ScanCaseName(const ::testing::TestParamInfo<ScanCase>& info) {
  return std::string(StageName(info.param.stage)) + "_N" + std::to_string(info.param.n) + "_" +
         info.param.layout.name;
}

// Sizes around the look-back tile (8192), its 32-tile look-back group (262144), its 256-tile
// window (2^21) and the Blelloch tile (1024), primes and a few large ones.
constexpr std::size_t kSmallSizes[] = {0,     1,      2,      31,     32,     33,   1021,
                                       1024,  1025,   4097,   8191,   8192,   8193, 24593,
                                       40961, 262143, 262145, 270337, 1000003};
constexpr std::size_t kLargeSizes[] = {(1u << 20) + 3, (1u << 21) + 4095, (1u << 24) + 1};

std::vector<ScanCase> ScanCases() {
  std::vector<ScanCase> cases;
  for (Stage stage : {Stage::kNaive, Stage::kBlelloch, Stage::kLookback, Stage::kLibrary,
                      Stage::kLibraryCount64}) {
    std::vector<Layout> layouts = {kAligned, kLead1, kLead3, kMismatched, kMismatchedLead};
    std::vector<Layout> large = {kAligned, kMismatched};
    if (InPlaceAllowed(stage)) {
      layouts.push_back(kInPlace);
      layouts.push_back(kInPlaceLead2);
      large.push_back(kInPlaceLead2);
    }
    for (std::size_t n : kSmallSizes) {
      for (const Layout& l : layouts) cases.push_back({stage, n, l});
    }
    for (std::size_t n : kLargeSizes) {
      for (const Layout& l : large) cases.push_back({stage, n, l});
    }
  }
  return cases;
}

class ExclusiveScanCases : public staged::testing::GpuTestWithParam<ScanCase> {};

TEST_P(ExclusiveScanCases, MatchesCpu) {
  const ScanCase c = GetParam();
  // Three kinds of data for small sizes; the full-range one alone for the large ones.
  std::vector<Data> datas = {Data::kUniform};
  if (c.n < (1u << 20)) datas = {Data::kUniform, Data::kSmall, Data::kMax};
  for (Data d : datas) {
    const std::string where = std::string(StageName(c.stage)) + " n = " + std::to_string(c.n) +
                              " " + c.layout.name + " " + DataName(d) + " seed " +
                              std::to_string(kTestSeed);
    CheckScan(Fns<std::uint32_t>(c.stage), c.layout, MakeScanInput<std::uint32_t>(c.n, d),
              where + " uint32");
    CheckScan(Fns<std::int32_t>(c.stage), c.layout, MakeScanInput<std::int32_t>(c.n, d),
              where + " int32");
  }
}

INSTANTIATE_TEST_SUITE_P(Ch02, ExclusiveScanCases, ::testing::ValuesIn(ScanCases()), ScanCaseName);

class ScanWrap : public staged::testing::GpuTestWithParam<Stage> {};

// 0xFFFFFFFF is -1 modulo 2^32, so out[i] = -i: a reference that needs no CPU scan. The sum
// wraps in every tile and across every tile boundary.
TEST_P(ScanWrap, AllOnesGiveMinusIndex) {
  const ScanFns<std::uint32_t> fns = Fns<std::uint32_t>(GetParam());
  constexpr std::size_t kN = 3 * lookback::Shape::kTile + 17;
  const std::vector<std::uint32_t> in(kN, 0xFFFFFFFFu);
  staged::DeviceBuffer<std::uint32_t> d_in(in);
  staged::DeviceBuffer<std::uint32_t> d_out(kN);
  const std::size_t temp = fns.temp(kN);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  fns.scan(d_in.data(), d_out.data(), kN, d_temp.data(), temp, nullptr);
  const std::vector<std::uint32_t> out = d_out.ToHost();
  std::size_t bad = 0;
  for (std::size_t i = 0; i < kN; ++i) bad += out[i] != static_cast<std::uint32_t>(0u - i);
  EXPECT_EQ(bad, 0u) << StageName(GetParam());
}

INSTANTIATE_TEST_SUITE_P(Ch02, ScanWrap,
                         ::testing::Values(Stage::kNaive, Stage::kBlelloch, Stage::kLookback,
                                           Stage::kLibrary, Stage::kLibraryCount64),
                         [](const ::testing::TestParamInfo<Stage>& info) {
                           return std::string(StageName(info.param));
                         });

// The look-back scan's two contrasts (the optimized:scan-registers and optimized:scan-tile4096
// rows; the chapter's own scan is ExclusiveScanCases' Lookback stage) against the CPU: tile
// boundaries of 4096 and 8192, a 32-tile look-back group of either, the 16-byte path with and
// without a lead, the 4-byte path, in place. Full-range data (sums wrap) and all-ones.
struct ContrastCase {
  std::size_t variant;  // index into lookback::Variants()
  std::size_t n;
  Layout layout;
};

// "registers" for optimized:scan-registers: the part of the row after the last '-'.
std::string ContrastName(std::size_t variant) {
  const std::string& row = lookback::Variants()[variant].row;
  return row.substr(row.rfind('-') + 1);
}

void PrintTo(const ContrastCase& c, std::ostream* os) {
  *os << ContrastName(c.variant) << " n=" << c.n << " " << c.layout.name;
}

std::string ContrastCaseName(const ::testing::TestParamInfo<ContrastCase>& info) {
  return ContrastName(info.param.variant) + "_N" + std::to_string(info.param.n) + "_" +
         info.param.layout.name;
}

std::vector<ContrastCase> ContrastCases() {
  std::vector<ContrastCase> cases;
  // Every variant but the last, the chapter's own.
  for (std::size_t v = 0; v + 1 < lookback::Variants().size(); ++v) {
    for (std::size_t n : {1ul, 4097ul, 8193ul, 24593ul, 135169ul, 270337ul, 1000003ul}) {
      for (const Layout& l : {kAligned, kLead1, kMismatchedLead, kInPlaceLead2}) {
        cases.push_back({v, n, l});
      }
    }
  }
  return cases;
}

class LookbackContrasts : public staged::testing::GpuTestWithParam<ContrastCase> {};

TEST_P(LookbackContrasts, MatchesCpu) {
  const ContrastCase c = GetParam();
  const lookback::Variant& v = lookback::Variants()[c.variant];
  const ScanFns<std::uint32_t> fns{v.scan, v.temp_bytes};
  for (Data d : {Data::kUniform, Data::kMax}) {
    CheckScan(fns, c.layout, MakeScanInput<std::uint32_t>(c.n, d),
              v.row + " n = " + std::to_string(c.n) + " " + c.layout.name + " " + DataName(d) +
                  " seed " + std::to_string(kTestSeed));
  }
}

INSTANTIATE_TEST_SUITE_P(Ch02, LookbackContrasts, ::testing::ValuesIn(ContrastCases()),
                         ContrastCaseName);

// Runs 2^28 + 1 elements in place, from an offset that gives the 16-byte path a lead of one:
// every word is 0x01010101 (set by cudaMemset, no host copy), so out[i] = i * 0x01010101
// modulo 2^32, and the words on either side must keep their value.
TEST(ScanLargest, LookbackInPlaceAt2To28Plus1) {
  STAGED_REQUIRE_GPU();
  constexpr std::size_t kN = (std::size_t{1} << 28) + 1;
  constexpr std::uint32_t kWord = 0x01010101u;
  const std::size_t temp = optimized::ExclusiveScanTempBytes<std::uint32_t>(kN);
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  if (free_bytes < (kN + 2) * 4 + temp + (std::size_t{512} << 20)) {
    GTEST_SKIP() << "needs about 1.6 GB of free device memory";
  }
  staged::DeviceBuffer<std::uint32_t> d(kN + 2);
  d.FillBytes(0x01);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  optimized::ExclusiveScan(d.data() + 1, d.data() + 1, kN, d_temp.data(), temp, nullptr);
  const std::vector<std::uint32_t> out = d.ToHost();
  EXPECT_EQ(out[0], kWord) << "wrote before the output";
  EXPECT_EQ(out[kN + 1], kWord) << "wrote past the output";
  std::size_t bad = 0;
  std::size_t first_bad = kN;
  for (std::size_t i = 0; i < kN; ++i) {
    if (out[i + 1] != static_cast<std::uint32_t>(i * kWord)) {
      if (bad++ == 0) first_bad = i;
    }
  }
  EXPECT_EQ(bad, 0u) << "first wrong element " << first_bad;
}

// The scan of a count only the device knows (chapter 03's deeper levels): the first *d_count
// elements of a larger buffer are scanned, in place and out of place, at offsets that give
// either access width; everything past the count keeps its poison, and a count over the buffer
// is clamped to it.
TEST(ScanDeviceCount, ScansTheCountAndNothingPast) {
  STAGED_REQUIRE_GPU();
  constexpr std::size_t kMax = (1u << 20) + 7;
  const std::vector<std::uint32_t> in =
      staged::Generate<std::uint32_t>(kMax, staged::Distribution::kUniform, kTestSeed);
  const std::size_t temp = optimized::ExclusiveScanTempBytes<std::uint32_t>(kMax);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  staged::DeviceBuffer<std::uint32_t> d_count(1);
  for (std::uint32_t count : {0u, 1u, 4095u, 4096u, 8193u, 100003u, 1u << 20,
                              static_cast<std::uint32_t>(kMax), 0xFFFFFFFFu}) {
    // In place; out of place at the same offset (16-byte path) and at the other (4-byte path).
    for (const int layout : {0, 1, 2}) {
      const bool in_place = layout == 0;
      for (const std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
        const std::size_t out_offset = layout == 2 ? 1 - offset : offset;
        SCOPED_TRACE("count " + std::to_string(count) + (in_place ? " in place" : "") +
                     " offsets " + std::to_string(offset) + "/" + std::to_string(out_offset) +
                     " seed " + std::to_string(kTestSeed));
        std::vector<std::uint32_t> padded(kMax + 1, 0xDEADBEEFu);
        std::copy(in.begin(), in.end(), padded.begin() + offset);
        staged::DeviceBuffer<std::uint32_t> d_in(padded), d_out(kMax + 1);
        d_out.FillBytes(0xAB);
        d_temp.FillBytes(0xCD);  // scratch left dirty by an earlier call
        d_count.CopyFromHost(&count, 1);
        std::uint32_t* out = in_place ? d_in.data() + offset : d_out.data() + out_offset;
        optimized::ExclusiveScanDeviceCount<std::uint32_t>(
            d_in.data() + offset, out, kMax, d_count.data(), d_temp.data(), temp, nullptr);
        const std::vector<std::uint32_t> got_all = in_place ? d_in.ToHost() : d_out.ToHost();
        const std::size_t base = in_place ? offset : out_offset;
        const std::size_t n = std::min<std::size_t>(count, kMax);
        std::uint32_t sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(got_all[base + i], sum) << "element " << i;
          sum += in[i];
        }
        for (std::size_t i = n; i < kMax; ++i) {
          const std::uint32_t untouched = in_place ? in[i] : 0xABABABABu;
          ASSERT_EQ(got_all[base + i], untouched) << "element " << i << " past the count";
        }
      }
    }
  }
  EXPECT_THROW(optimized::ExclusiveScanDeviceCount<std::uint32_t>(
                   d_count.data(), d_count.data(), 1, nullptr, d_temp.data(), temp, nullptr),
               std::invalid_argument);
}

// The look-back scan keeps 64-bit status words, updated atomically, 256 bytes into its scratch:
// a piece of a buffer at a multiple of 16 bytes works, 4 or 8 bytes past one is refused before
// anything is queued (the output keeps its poison). The CUB baselines check the same contract
// (CUB alone would accept any address); the host tests cover the launchers whose scratch size
// needs no GPU.
TEST(ScratchAlignment, ScratchAtMultiplesOfSixteenWorksAndOtherOffsetsAreRefused) {
  STAGED_REQUIRE_GPU();
  constexpr std::size_t kN = 100003;
  const auto words = staged::Generate<std::uint32_t>(kN, staged::Distribution::kUniform, kTestSeed);
  const auto bytes = staged::Generate<std::uint8_t>(kN, staged::Distribution::kUniform, kTestSeed);
  std::vector<std::uint32_t> scanned(kN);
  cpu::ExclusiveScan(words.data(), scanned.data(), kN);
  std::vector<std::uint8_t> sorted(kN);
  cpu::CountingSort(bytes.data(), sorted.data(), kN);
  std::vector<std::uint32_t> hist(kNumBins);
  cpu::Histogram(bytes.data(), kN, hist.data());
  const std::size_t temp =
      std::max({optimized::ExclusiveScanTempBytes<std::uint32_t>(kN),
                library::ExclusiveScanTempBytes<std::uint32_t>(kN), library::HistogramTempBytes(kN),
                library::CountingSortTempBytes(kN), library::CountingSortPipelineTempBytes(kN)});
  staged::DeviceBuffer<unsigned char> d_temp(temp + 512);  // room for the largest offset
  staged::DeviceBuffer<std::uint32_t> d_words(words);
  staged::DeviceBuffer<std::uint8_t> d_bytes(bytes);
  staged::DeviceBuffer<std::uint32_t> d_scan(kN);
  staged::DeviceBuffer<std::uint8_t> d_sorted(kN);
  staged::DeviceBuffer<std::uint32_t> d_hist(kNumBins);
  using ScanFn =
      void (*)(const std::uint32_t*, std::uint32_t*, std::size_t, void*, std::size_t, cudaStream_t);
  using SortFn =
      void (*)(const std::uint8_t*, std::uint8_t*, std::size_t, void*, std::size_t, cudaStream_t);
  const std::pair<const char*, ScanFn> scans[] = {
      {"optimized::ExclusiveScan", optimized::ExclusiveScan<std::uint32_t>},
      {"library::ExclusiveScan", library::ExclusiveScan<std::uint32_t>},
      {"library::ExclusiveScanCount64", library::ExclusiveScanCount64<std::uint32_t>}};
  const std::pair<const char*, SortFn> sorts[] = {
      {"library::CountingSort", library::CountingSort},
      {"library::CountingSortCount64", library::CountingSortCount64},
      {"library::CountingSortPipeline", library::CountingSortPipeline}};
  for (const std::size_t offset : {16u, 256u, 4u, 8u}) {
    void* t = d_temp.data() + offset;
    const bool aligned = offset % 16 == 0;
    const std::string where = ", scratch at offset " + std::to_string(offset);
    for (const auto& [name, scan] : scans) {
      d_temp.FillBytes(0xA5);
      d_scan.FillBytes(0xFF);
      if (aligned) {
        scan(d_words.data(), d_scan.data(), kN, t, temp, nullptr);
      } else {
        EXPECT_THROW(scan(d_words.data(), d_scan.data(), kN, t, temp, nullptr), staged::UsageError)
            << name << where;
      }
      const std::vector<std::uint32_t> want =
          aligned ? scanned : std::vector<std::uint32_t>(kN, ~0u);
      const auto r = staged::CompareExact(want.data(), d_scan.ToHost().data(), kN);
      EXPECT_TRUE(r.ok) << name << where << ": " << r.Summary();
    }
    for (const auto& [name, sort] : sorts) {
      d_temp.FillBytes(0xA5);
      d_sorted.FillBytes(0xFF);
      if (aligned) {
        sort(d_bytes.data(), d_sorted.data(), kN, t, temp, nullptr);
      } else {
        EXPECT_THROW(sort(d_bytes.data(), d_sorted.data(), kN, t, temp, nullptr),
                     staged::UsageError)
            << name << where;
      }
      const std::vector<std::uint8_t> want = aligned ? sorted : std::vector<std::uint8_t>(kN, 0xFF);
      const auto r = staged::CompareExact(want.data(), d_sorted.ToHost().data(), kN);
      EXPECT_TRUE(r.ok) << name << where << ": " << r.Summary();
    }
    d_hist.FillBytes(0xFF);
    if (aligned) {
      library::Histogram(d_bytes.data(), kN, d_hist.data(), t, temp, nullptr);
    } else {
      EXPECT_THROW(library::Histogram(d_bytes.data(), kN, d_hist.data(), t, temp, nullptr),
                   staged::UsageError)
          << "library::Histogram" << where;
    }
    const std::vector<std::uint32_t> want =
        aligned ? hist : std::vector<std::uint32_t>(kNumBins, ~0u);
    const auto r = staged::CompareExact(want.data(), d_hist.ToHost().data(), kNumBins);
    EXPECT_TRUE(r.ok) << "library::Histogram" << where << ": " << r.Summary();
  }
}

// Eight streams, each with its own sizes, buffers and poisoned scratch, queue several scans
// (look-back out of place and in place, Blelloch) with no synchronisation between any of them;
// everything is checked at the end. Shared state between calls would mix them up.
TEST(ScanConcurrency, EightStreamsWithOwnScratchAndNoSync) {
  STAGED_REQUIRE_GPU();
  constexpr int kStreams = 8;
  const std::size_t sizes[kStreams] = {1,     4097,   100003, (1u << 20) + 5,
                                       12295, 777777, 131073, (1u << 22) + 7};
  struct Job {
    std::vector<std::uint32_t> in;
    std::vector<std::uint32_t> ref;
    staged::DeviceBuffer<std::uint32_t> d_in, d_out, d_blelloch, d_inplace;
    staged::DeviceBuffer<unsigned char> d_temp, d_temp_blelloch;
    staged::Stream stream;
  };
  std::vector<Job> jobs(kStreams);
  for (int s = 0; s < kStreams; ++s) {
    Job& j = jobs[s];
    const std::size_t n = sizes[s];
    j.in = staged::Generate<std::uint32_t>(n, staged::Distribution::kUniform, kTestSeed + s);
    j.ref.resize(n);
    cpu::ExclusiveScan(j.in.data(), j.ref.data(), n);
    j.d_in = staged::DeviceBuffer<std::uint32_t>(j.in);
    j.d_inplace = staged::DeviceBuffer<std::uint32_t>(j.in);
    j.d_out = staged::DeviceBuffer<std::uint32_t>(n);
    j.d_blelloch = staged::DeviceBuffer<std::uint32_t>(n);
    j.d_temp =
        staged::DeviceBuffer<unsigned char>(optimized::ExclusiveScanTempBytes<std::uint32_t>(n));
    j.d_temp_blelloch = staged::DeviceBuffer<unsigned char>(
        optimized::ExclusiveScanBlellochTempBytes<std::uint32_t>(n));
    j.d_temp.FillBytes(0xFF);
  }
  // Round-robin over the streams: scans of different streams overlap on the GPU.
  for (int round = 0; round < 3; ++round) {
    for (Job& j : jobs) {
      const std::size_t n = j.in.size();
      cudaStream_t st = j.stream.get();
      if (round == 0) {
        optimized::ExclusiveScan(j.d_in.data(), j.d_out.data(), n, j.d_temp.data(), j.d_temp.size(),
                                 st);
      } else if (round == 1) {
        optimized::ExclusiveScanBlelloch(j.d_in.data(), j.d_blelloch.data(), n,
                                         j.d_temp_blelloch.data(), j.d_temp_blelloch.size(), st);
      } else {
        optimized::ExclusiveScan(j.d_inplace.data(), j.d_inplace.data(), n, j.d_temp.data(),
                                 j.d_temp.size(), st);
      }
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int s = 0; s < kStreams; ++s) {
    const Job& j = jobs[s];
    const std::string where = "stream " + std::to_string(s) + " n = " + std::to_string(sizes[s]);
    EXPECT_TRUE(staged::CompareExact(j.ref.data(), j.d_out.ToHost().data(), sizes[s]).ok) << where;
    EXPECT_TRUE(staged::CompareExact(j.ref.data(), j.d_blelloch.ToHost().data(), sizes[s]).ok)
        << where << " Blelloch";
    EXPECT_TRUE(staged::CompareExact(j.ref.data(), j.d_inplace.ToHost().data(), sizes[s]).ok)
        << where << " in place";
  }
}

// Two host threads loop on their own `cudaStreamPerThread` (one handle, two GPU streams) with
// different sizes, re-poisoning scratch and output before every scan.
TEST(ScanConcurrency, TwoHostThreadsOnPerThreadStreams) {
  STAGED_REQUIRE_GPU();
  constexpr int kLoops = 20;
  std::atomic<int> failures[2] = {0, 0};
  auto body = [&](int t) {
    const std::size_t n = 300007 + 65536 * static_cast<std::size_t>(t);
    const auto in =
        staged::Generate<std::uint32_t>(n, staged::Distribution::kUniform, kTestSeed + t);
    std::vector<std::uint32_t> ref(n);
    cpu::ExclusiveScan(in.data(), ref.data(), n);
    staged::DeviceBuffer<std::uint32_t> d_in(n);
    staged::DeviceBuffer<std::uint32_t> d_out(n);
    const std::size_t temp = optimized::ExclusiveScanTempBytes<std::uint32_t>(n);
    staged::DeviceBuffer<unsigned char> d_temp(temp);
    d_in.CopyFromHost(in.data(), n, cudaStreamPerThread);
    std::vector<std::uint32_t> out(n);
    for (int i = 0; i < kLoops; ++i) {
      d_temp.FillBytes(0xFF, cudaStreamPerThread);
      d_out.FillBytes(0xFF, cudaStreamPerThread);
      optimized::ExclusiveScan(d_in.data(), d_out.data(), n, d_temp.data(), temp,
                               cudaStreamPerThread);
      d_out.CopyToHost(out.data(), n, cudaStreamPerThread);
      if (out != ref) ++failures[t];
    }
  };
  std::thread first(body, 0);
  std::thread second(body, 1);
  first.join();
  second.join();
  EXPECT_EQ(failures[0].load(), 0);
  EXPECT_EQ(failures[1].load(), 0);
}

// The memset and the kernel of one scan captured into a graph and replayed twice, with new input
// between the replays: the scratch is reset by every replay, not only by the first call.
TEST(ScanGraph, CapturedLookbackReplaysWithFreshScratch) {
  STAGED_REQUIRE_GPU();
  constexpr std::size_t kN = 5 * lookback::Shape::kTile + 3;
  staged::Stream stream;
  staged::DeviceBuffer<std::uint32_t> d_in(kN);
  staged::DeviceBuffer<std::uint32_t> d_out(kN);
  const std::size_t temp = optimized::ExclusiveScanTempBytes<std::uint32_t>(kN);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  optimized::ExclusiveScan(d_in.data(), d_out.data(), kN, d_temp.data(), temp, stream.get());
  CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 2; ++replay) {
    const auto in =
        staged::Generate<std::uint32_t>(kN, staged::Distribution::kUniform, kTestSeed + replay);
    std::vector<std::uint32_t> ref(kN);
    cpu::ExclusiveScan(in.data(), ref.data(), kN);
    d_in.CopyFromHost(in.data(), kN, stream.get());
    CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    std::vector<std::uint32_t> out(kN);
    d_out.CopyToHost(out.data(), kN, stream.get());
    EXPECT_TRUE(staged::CompareExact(ref.data(), out.data(), kN).ok) << "replay " << replay;
  }
  CUDA_CHECK(cudaGraphExecDestroy(exec));
  CUDA_CHECK(cudaGraphDestroy(graph));
}

// ---------------------------------------------------------------------------------------------
// GPU: occupancy of the look-back variants (their layout is checked in ch02_lookback_test.cu).

// Every variant reaches the occupancy it is compiled for on a GPU with the registers and the
// shared memory of an sm_90 SM (64 Ki registers, 228 KiB): the scan's speed rests on the bytes
// its tiles hold per SM (scan_lookback.cuh), and the shared-memory carveout is only a hint.
TEST(ScanOccupancy, VariantsReachTheirBlocksPerSm) {
  STAGED_REQUIRE_GPU();
  staged::testing::ScopedDeviceProfile own("");  // this GPU's SM, whatever the suite plans for
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  int smem_per_sm = 0;
  int regs_per_sm = 0;
  CUDA_CHECK(
      cudaDeviceGetAttribute(&smem_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  CUDA_CHECK(
      cudaDeviceGetAttribute(&regs_per_sm, cudaDevAttrMaxRegistersPerMultiprocessor, device));
  const bool sm90_sized = smem_per_sm >= 228 * 1024 && regs_per_sm >= 65536;
  for (const lookback::Variant& v : lookback::Variants()) {
    const int blocks = v.resident_blocks();
    EXPECT_GE(blocks, 1) << v.row;
    // Compiled from sm_75 PTX, a launch bound asks for no more than 1024 threads per SM.
    if (sm90_sized && lookback::KernelPtxVersion() >= 80) {
      EXPECT_GE(blocks, v.min_blocks_per_sm) << v.row << ": " << v.describe();
    }
  }
  EXPECT_EQ(lookback::Variants().back().min_blocks_per_sm, lookback::Shape::kMinBlocksPerSm);
}

}  // namespace
}  // namespace ch02
