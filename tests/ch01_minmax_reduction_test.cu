/// @file ch01_minmax_reduction_test.cu
/// @brief Chapter 01 GPU tests: one body over every GPU variant (naive, each optimized stage, CUB)
///        and every type, against the CPU reference; the optimized launcher under concurrency
///        (host threads, per-thread default streams, graph replays, hundreds of streams); host
///        tests of the key order, the CPU reference and the scratch contract.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "ch01_variants.hpp"
#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"
#include "gpu_test.hpp"

namespace ch01 {
namespace {

using staged::testing::kTestSeed;

/// The byte every test writes over scratch before a launch: no variant may rely on its contents.
constexpr int kScratchPoison = 0xA5;

/// Copies @p host to the device @p offset elements past a cudaMalloc boundary, runs @p v into a
/// poisoned result and returns it. Every step is queued on @p stream, in order.
template <typename T>
MinMaxPair<T> RunOnGpu(const VariantEntry<T>& v, const std::vector<T>& host, std::size_t offset,
                       cudaStream_t stream = nullptr) {
  const std::size_t n = host.size();
  staged::DeviceBuffer<T> d_buf(n + offset);
  d_buf.FillBytes(0, stream);
  CUDA_CHECK(cudaMemcpyAsync(d_buf.data() + offset, host.data(), n * sizeof(T),
                             cudaMemcpyHostToDevice, stream));
  const std::size_t bytes = v.temp_bytes(n);
  staged::DeviceBuffer<unsigned char> d_temp(bytes > 0 ? bytes : 1);
  d_temp.FillBytes(kScratchPoison, stream);
  staged::DeviceBuffer<MinMaxPair<T>> d_result(1);
  d_result.FillBytes(0xFF, stream);
  v.run(d_buf.data() + offset, n, d_result.data(), d_temp.data(), d_temp.bytes(), stream);
  MinMaxPair<T> out{};
  d_result.CopyToHost(&out, 1, stream);  // waits for the stream
  CUDA_CHECK(cudaGetLastError());
  return out;
}

template <typename T>
::testing::AssertionResult SamePair(const MinMaxPair<T>& expected, const MinMaxPair<T>& actual) {
  const T e[2] = {expected.min, expected.max};
  const T a[2] = {actual.min, actual.max};
  const staged::VerifyReport r = staged::CompareExact(e, a, 2);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "(index 0 = min, 1 = max) " << r.Summary();
}

/// The one test body: every variant, at every offset given, equals the CPU reference exactly.
template <typename T>
void ExpectEveryVariantMatches(const std::vector<T>& data, const std::string& what,
                               std::vector<std::size_t> offsets = {0}) {
  const MinMaxPair<T> ref = cpu::MinMax(data.data(), data.size());
  for (const auto& v : AllVariants<T>()) {
    for (std::size_t offset : offsets) {
      EXPECT_TRUE(SamePair(ref, RunOnGpu(v, data, offset)))
          << v.name << ", " << what << ", n = " << data.size() << ", offset " << offset << ", seed "
          << kTestSeed;
    }
  }
}

/// A value of @p T that is below every element of the generator's ranges, or above.
template <typename T>
T Extreme(bool low) {
  if constexpr (std::is_floating_point_v<T>) return low ? T(-7.5) : T(7.5);
  return low ? std::numeric_limits<T>::min() : std::numeric_limits<T>::max();
}

/// All-negative data: the generator's values pushed below zero (for unsigned: the top half).
template <typename T>
std::vector<T> AllNegative(std::size_t n) {
  std::vector<T> x = staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed);
  for (T& v : x) {
    if constexpr (std::is_floating_point_v<T>) {
      v = -std::fabs(v) - T(0.5);
    } else if constexpr (std::is_signed_v<T>) {
      v = static_cast<T>(v | std::numeric_limits<T>::min());
    } else {
      v = static_cast<T>(v | 0x80000000u);
    }
  }
  return x;
}

const std::vector<std::size_t> kSizes = {1, 2, 31, 32, 33, 1023, 1024, 1025, 999983};
const std::size_t kLarge = (std::size_t{1} << 24) + 3;

// ---------------------------------------------------------------------------------------------
// GPU tests, every type.

/// An input on the device (generated once) from which launches read windows, and the CPU
/// answer of each window: different windows give launches different data and answers.
template <typename T>
class SharedInput {
 public:
  /// Generates @p n elements (uniform, the test seed) and copies them to the device.
  explicit SharedInput(std::size_t n)
      : host_(staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed)), device_(host_) {}
  /// Device pointer to element @p offset.
  const T* At(std::size_t offset) const { return device_.data() + offset; }
  /// The CPU reference over elements [offset, offset + n).
  MinMaxPair<T> Expected(std::size_t offset, std::size_t n) const {
    return cpu::MinMax(host_.data() + offset, n);
  }

 private:
  std::vector<T> host_;
  staged::DeviceBuffer<T> device_;
};

/// Scratch for one launching context and result slots for many launches.
template <typename T>
struct Lane {
  /// @param[in] slots result slots
  explicit Lane(std::size_t slots) : temp(optimized::MinMaxTempBytes<T>(1)), results(slots) {}
  staged::DeviceBuffer<unsigned char> temp;     ///< the scratch of every launch of this lane
  staged::DeviceBuffer<MinMaxPair<T>> results;  ///< one pair per launch
};

/// Queues on @p stream, without waiting: poison @p lane's scratch and result slot @p slot, then
/// the optimized MinMax of @p d_in[0, n) into that slot.
template <typename T>
void QueueMinMax(const T* d_in, std::size_t n, Lane<T>& lane, std::size_t slot,
                 cudaStream_t stream) {
  lane.temp.FillBytes(kScratchPoison, stream);
  CUDA_CHECK(cudaMemsetAsync(lane.results.data() + slot, 0xFF, sizeof(MinMaxPair<T>), stream));
  optimized::MinMax(d_in, n, lane.results.data() + slot, lane.temp.data(), lane.temp.bytes(),
                    stream);
}

/// Checks every result slot of @p lane (after all device work) against @p expected.
template <typename T>
void ExpectResults(const Lane<T>& lane, const std::vector<MinMaxPair<T>>& expected,
                   const std::string& what) {
  const std::vector<MinMaxPair<T>> got = lane.results.ToHost();
  ASSERT_EQ(got.size(), expected.size());
  int failures = 0;
  for (std::size_t i = 0; i < got.size() && failures < 5; ++i) {
    const ::testing::AssertionResult same = SamePair(expected[i], got[i]);
    if (!same) ++failures;
    EXPECT_TRUE(same) << what << ", launch " << i << ", seed " << kTestSeed;
  }
}

/// One more launch on @p stream after a concurrency test: a counter left behind by the test
/// (the failure of a design that keeps it between calls) would spoil it.
template <typename T>
void ExpectLaunchStillCorrect(const SharedInput<T>& input, std::size_t n, cudaStream_t stream,
                              const std::string& what) {
  Lane<T> lane(1);
  QueueMinMax(input.At(1), n, lane, 0, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  ExpectResults(lane, {input.Expected(1, n)}, "launch after the test on " + what);
}

// Typed suites keep GoogleTest's numbered names (MinMaxVariants/0 ... /3): CTest's test discovery
// turns those into `MinMaxVariants.Test<float>`; it does not recognise named type parameters.
template <typename T>
class MinMaxVariants : public staged::testing::GpuTest {};
TYPED_TEST_SUITE(MinMaxVariants, AllTypes);

TYPED_TEST(MinMaxVariants, MatchCpuOverSizesAndDistributions) {
  using staged::Distribution;
  for (std::size_t n : kSizes) {
    for (Distribution d : {Distribution::kUniform, Distribution::kSorted, Distribution::kReverse,
                           Distribution::kEqual, Distribution::kFew}) {
      ExpectEveryVariantMatches(staged::Generate<TypeParam>(n, d, kTestSeed),
                                staged::DistributionName(d));
    }
    ExpectEveryVariantMatches(AllNegative<TypeParam>(n), "all negative");
  }
}

TYPED_TEST(MinMaxVariants, MatchCpuAtTwoToTheTwentyFourPlusThree) {
  ExpectEveryVariantMatches(
      staged::Generate<TypeParam>(kLarge, staged::Distribution::kUniform, kTestSeed), "uniform",
      {0, 3});
}

TYPED_TEST(MinMaxVariants, PointersOffsetByOneToThreeElements) {
  for (std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{5},
                        std::size_t{31}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    auto x = staged::Generate<TypeParam>(n, staged::Distribution::kUniform, kTestSeed);
    // Extremes in the misaligned head and in the tail, where the vector loads do not reach.
    x.front() = Extreme<TypeParam>(true);
    x.back() = Extreme<TypeParam>(false);
    ExpectEveryVariantMatches(x, "extremes at both ends", {0, 1, 2, 3});
  }
}

TYPED_TEST(MinMaxVariants, ExtremesAtFirstAndLastIndex) {
  for (std::size_t n : kSizes) {
    if (n < 2) continue;
    auto x = staged::Generate<TypeParam>(n, staged::Distribution::kUniform, kTestSeed);
    x.front() = Extreme<TypeParam>(true);
    x.back() = Extreme<TypeParam>(false);
    ExpectEveryVariantMatches(x, "min first, max last");
    std::swap(x.front(), x.back());
    ExpectEveryVariantMatches(x, "max first, min last");
  }
}

TYPED_TEST(MinMaxVariants, TypeLimits) {
  using L = std::numeric_limits<TypeParam>;
  std::vector<TypeParam> x(4099, TypeParam(1));
  x[17] = L::lowest();
  x[4000] = L::max();
  ExpectEveryVariantMatches(x, "lowest and max", {0, 1});
}

TYPED_TEST(MinMaxVariants, ScratchOffsetsNotMultiplesOf16AreRefused) {
  // A piece of a larger buffer is fine as scratch when it starts at a multiple of 16 bytes;
  // at 4 or 8 bytes past one (8-byte keys of double, a 4-byte counter) the launcher refuses it
  // before queuing anything, so the result keeps its poison.
  using T = TypeParam;
  const std::size_t n = 100003;
  SharedInput<T> input(n);
  const MinMaxPair<T> expected = input.Expected(0, n);
  MinMaxPair<T> poison;
  std::memset(&poison, 0xFF, sizeof poison);
  for (const auto& v : AllVariants<T>()) {
    const std::size_t bytes = v.temp_bytes(n);
    staged::DeviceBuffer<unsigned char> d_temp(bytes + 64);
    staged::DeviceBuffer<MinMaxPair<T>> d_result(1);
    for (const std::size_t offset : {16u, 48u, 4u, 8u, 12u}) {
      d_temp.FillBytes(kScratchPoison);
      d_result.FillBytes(0xFF);
      void* scratch = d_temp.data() + offset;
      if (offset % 16 == 0) {
        v.run(input.At(0), n, d_result.data(), scratch, bytes, nullptr);
        EXPECT_TRUE(SamePair(expected, d_result.ToHost()[0])) << v.name << ", offset " << offset;
      } else {
        EXPECT_THROW(v.run(input.At(0), n, d_result.data(), scratch, bytes, nullptr),
                     staged::UsageError)
            << v.name << ", offset " << offset;
        const MinMaxPair<T> got = d_result.ToHost()[0];
        EXPECT_EQ(std::memcmp(&got, &poison, sizeof got), 0) << v.name << " queued work";
      }
    }
  }
}

TYPED_TEST(MinMaxVariants, BackToBackOnTwoStreamsAndTheLegacyStream) {
  // Every launch queued before any wait: two non-blocking streams and the legacy stream run
  // at once, each with its own scratch, and each stream runs its launches back to back on one
  // scratch (the counter must be ready again for the next launch on the same stream).
  using T = TypeParam;
  constexpr int kReps = 4;
  const std::size_t sizes[] = {1, 4097, 3000017};
  const SharedInput<T> input(3000017 + kReps);
  staged::Stream a;
  staged::Stream b;
  const cudaStream_t streams[3] = {a.get(), b.get(), nullptr};
  std::vector<Lane<T>> lanes;
  for (int s = 0; s < 3; ++s) lanes.emplace_back(kReps * std::size(sizes));
  std::vector<std::vector<MinMaxPair<T>>> expected(3);
  for (int rep = 0; rep < kReps; ++rep) {
    for (std::size_t k = 0; k < std::size(sizes); ++k) {
      for (int s = 0; s < 3; ++s) {
        // Each stream reads another window at each rep: a stale partial cannot match.
        const std::size_t offset = (rep + s) % kReps;
        QueueMinMax(input.At(offset), sizes[k], lanes[s], rep * std::size(sizes) + k, streams[s]);
        expected[s].push_back(input.Expected(offset, sizes[k]));
      }
    }
  }
  for (int s = 0; s < 3; ++s) ExpectResults(lanes[s], expected[s], "stream " + std::to_string(s));
  ExpectLaunchStillCorrect(input, 3000017, a.get(), "stream a");
}

// ---------------------------------------------------------------------------------------------
// GPU tests, floating point: signed zeros, infinities, NaN.

template <typename T>
class MinMaxFloatVariants : public staged::testing::GpuTest {};
TYPED_TEST_SUITE(MinMaxFloatVariants, FloatTypes);

TYPED_TEST(MinMaxFloatVariants, SignedZerosMinIsNegativeMaxIsPositive) {
  using T = TypeParam;
  for (std::size_t n : {std::size_t{2}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    std::vector<T> x(n, T(+0.0));
    x[n / 2] = T(-0.0);
    ExpectEveryVariantMatches(x, "one -0.0 among +0.0", {0, 1, 3});
    const MinMaxPair<T> ref = cpu::MinMax(x.data(), n);
    EXPECT_TRUE(std::signbit(ref.min));
    EXPECT_FALSE(std::signbit(ref.max));
    std::vector<T> neg(n, T(-0.0));
    ExpectEveryVariantMatches(neg, "all -0.0");
    std::vector<T> pos(n, T(+0.0));
    ExpectEveryVariantMatches(pos, "all +0.0");
  }
}

TYPED_TEST(MinMaxFloatVariants, Infinities) {
  using T = TypeParam;
  const T inf = std::numeric_limits<T>::infinity();
  for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    auto x = staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed);
    x[0] = inf;
    ExpectEveryVariantMatches(x, "+inf first", {0, 2});
    x[n - 1] = -inf;
    ExpectEveryVariantMatches(x, "+inf first, -inf last", {0, 2});
    std::vector<T> all(n, -inf);
    ExpectEveryVariantMatches(all, "all -inf");
  }
}

TYPED_TEST(MinMaxFloatVariants, AnyNaNMakesBothNaN) {
  using T = TypeParam;
  const T qnan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t n :
       {std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{1025}, std::size_t{999983}}) {
    for (std::size_t at : {std::size_t{0}, n / 2, n - 1}) {
      for (T nan : {qnan, -qnan}) {
        auto x = staged::Generate<T>(n, staged::Distribution::kUniform, kTestSeed);
        x[at] = nan;
        const MinMaxPair<T> ref = cpu::MinMax(x.data(), n);
        ASSERT_TRUE(std::isnan(ref.min) && std::isnan(ref.max)) << "policy: NaN propagates";
        ExpectEveryVariantMatches(x, "NaN at " + std::to_string(at), {0, 3});
      }
    }
    std::vector<T> all(n, qnan);
    ExpectEveryVariantMatches(all, "all NaN");
  }
}

// ---------------------------------------------------------------------------------------------
// GPU tests: the optimized launcher under concurrency.
//
// An earlier design kept the last-block-done counter in a `__device__` array of 256 slots
// indexed by the stream handle. Two grids that share a slot while both are running break it:
// their blocks draw tickets from one counter, so the "last" ticket goes to a block while the
// other blocks of its grid are still working (the last block folds unwritten, poisoned
// partials) or never comes (the result is never written), and the counter is left off zero,
// so later launches through that slot fail too. Each test below makes such a pair and says
// which; each launch gets freshly poisoned scratch and result, and launches read different
// windows of the input, so neither an unwritten partial nor a stale one can pass unnoticed.

class MinMaxConcurrency : public staged::testing::GpuTest {};

/// Runs @p body(0) and @p body(1) on two host threads at once; rethrows what either threw.
void OnTwoHostThreads(const std::function<void(int)>& body) {
  std::exception_ptr errors[2];
  auto guarded = [&](int t) {
    try {
      body(t);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::thread first(guarded, 0);
  std::thread second(guarded, 1);
  first.join();
  second.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

TEST_F(MinMaxConcurrency, TwoHostThreadsOnPerThreadDefaultStreams) {
  // `cudaStreamPerThread` is one handle value in every host thread but a different GPU stream
  // in each: the two threads' grids run at the same time. With a counter per handle they drew
  // tickets from one counter (different grid sizes, so even the wrap-around disagreed).
  constexpr int kIterations = 200;
  const std::size_t sizes[2] = {65537, 300007};
  const SharedInput<float> input(sizes[1] + 4096);
  std::vector<Lane<float>> lanes;
  lanes.emplace_back(kIterations);
  lanes.emplace_back(kIterations);
  auto offset = [](int thread, int i) {
    return static_cast<std::size_t>(i * 7919 + thread) % 4096;
  };
  OnTwoHostThreads([&](int t) {
    for (int i = 0; i < kIterations; ++i) {
      QueueMinMax(input.At(offset(t, i)), sizes[t], lanes[t], i, cudaStreamPerThread);
    }
    CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
  });
  for (int t = 0; t < 2; ++t) {
    std::vector<MinMaxPair<float>> expected;
    for (int i = 0; i < kIterations; ++i)
      expected.push_back(input.Expected(offset(t, i), sizes[t]));
    ExpectResults(lanes[t], expected,
                  "thread " + std::to_string(t) + ", n = " + std::to_string(sizes[t]));
  }
  ExpectLaunchStillCorrect(input, sizes[1], cudaStreamPerThread, "cudaStreamPerThread");
}

TEST_F(MinMaxConcurrency, GraphReplaysBesideDirectLaunches) {
  // A graph captured on stream `capture` and replayed on stream `replay` while direct launches
  // run on `capture` itself and on `other`. A counter chosen by the handle at capture time is
  // baked into the graph's kernel node, so every replay shared it with the direct launches on
  // `capture`, which run at the same time.
  constexpr int kRounds = 100;
  const std::size_t n_graph = 400009;
  const std::size_t n_direct = 1000003;
  const SharedInput<float> input(n_direct + kRounds);
  staged::Stream capture;
  staged::Stream replay;
  staged::Stream other;
  Lane<float> graph_lane(1);  // what the graph's nodes point at
  // One launch before the capture: module loading and the occupancy query happen outside it.
  QueueMinMax(input.At(0), n_graph, graph_lane, 0, capture.get());
  capture.Synchronize();
  cudaGraph_t graph = nullptr;
  CUDA_CHECK(cudaStreamBeginCapture(capture.get(), cudaStreamCaptureModeThreadLocal));
  optimized::MinMax(input.At(0), n_graph, graph_lane.results.data(), graph_lane.temp.data(),
                    graph_lane.temp.bytes(), capture.get());
  CUDA_CHECK(cudaStreamEndCapture(capture.get(), &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
  CUDA_CHECK(instantiated);
  Lane<float> replays(kRounds);
  Lane<float> direct(kRounds);
  Lane<float> beside(kRounds);
  std::vector<MinMaxPair<float>> want_direct;
  std::vector<MinMaxPair<float>> want_beside;
  for (int i = 0; i < kRounds; ++i) {
    // Replay i: poisoned scratch and result first, then the graph, then the result saved.
    graph_lane.temp.FillBytes(kScratchPoison, replay.get());
    graph_lane.results.FillBytes(0xFF, replay.get());
    CUDA_CHECK(cudaGraphLaunch(exec, replay.get()));
    CUDA_CHECK(cudaMemcpyAsync(replays.results.data() + i, graph_lane.results.data(),
                               sizeof(MinMaxPair<float>), cudaMemcpyDeviceToDevice, replay.get()));
    QueueMinMax(input.At(i), n_direct, direct, i, capture.get());
    QueueMinMax(input.At(kRounds - 1 - i), n_direct - i, beside, i, other.get());
    want_direct.push_back(input.Expected(i, n_direct));
    want_beside.push_back(input.Expected(kRounds - 1 - i, n_direct - i));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec));
  ExpectResults(replays, std::vector<MinMaxPair<float>>(kRounds, input.Expected(0, n_graph)),
                "graph replay");
  ExpectResults(direct, want_direct, "direct launch on the capture stream");
  ExpectResults(beside, want_beside, "direct launch on another stream");
  ExpectLaunchStillCorrect(input, n_direct, capture.get(), "the capture stream");
  ExpectLaunchStillCorrect(input, n_graph, replay.get(), "the replay stream");
}

TEST_F(MinMaxConcurrency, ThreeHundredStreamsAtOnce) {
  // 300 streams, each with its own scratch, all queued before any wait, from two host threads
  // that also put every tenth launch on their `cudaStreamPerThread`. More streams than the old
  // design's 256 slots: past them it switched to another code path, so both paths ran at once
  // here, and the two threads' per-thread default streams shared one slot (see
  // TwoHostThreadsOnPerThreadDefaultStreams) while their grids overlapped.
  constexpr int kStreams = 300;
  constexpr int kPerThreadEvery = 10;
  const SharedInput<float> input(200000 + kStreams);
  auto size = [](int s) { return static_cast<std::size_t>(1000 + 661 * s); };
  std::vector<staged::Stream> streams(kStreams);
  std::vector<Lane<float>> lanes;
  for (int s = 0; s < kStreams; ++s) lanes.emplace_back(1);
  std::vector<Lane<float>> per_thread;
  per_thread.emplace_back(kStreams / kPerThreadEvery);
  per_thread.emplace_back(kStreams / kPerThreadEvery);
  OnTwoHostThreads([&](int t) {
    for (int s = t; s < kStreams; s += 2) {
      QueueMinMax(input.At(s), size(s), lanes[s], 0, streams[s].get());
      if (s % kPerThreadEvery < 2) {
        QueueMinMax(input.At(s), size(s), per_thread[t], s / kPerThreadEvery, cudaStreamPerThread);
      }
    }
  });
  CUDA_CHECK(cudaDeviceSynchronize());
  for (int s = 0; s < kStreams; ++s) {
    ExpectResults(lanes[s], {input.Expected(s, size(s))}, "stream " + std::to_string(s));
  }
  for (int t = 0; t < 2; ++t) {
    std::vector<MinMaxPair<float>> expected;
    for (int s = t; s < kStreams; s += kPerThreadEvery)
      expected.push_back(input.Expected(s, size(s)));
    ExpectResults(per_thread[t], expected, "per-thread stream of thread " + std::to_string(t));
  }
  ExpectLaunchStillCorrect(input, 200000, streams.back().get(), "stream 299");
  ExpectLaunchStillCorrect(input, 200000, nullptr, "the legacy stream");
}

// A ceiling a kernel beats is not a ceiling: the chapter's largest rows (4 GiB of floats or of
// doubles, timed as the driver times them: gated, no flush at this size) must not read faster
// than the read bandwidth the device probe measures. Times the GPU: runs alone (the suite
// ends in Timing).
template <typename T>
double ReadGbps(const VariantEntry<T>& v, const staged::DeviceBuffer<T>& d_in) {
  const std::size_t n = d_in.size();
  const std::size_t bytes = v.temp_bytes(n);
  staged::DeviceBuffer<unsigned char> d_temp(bytes > 0 ? bytes : 1);
  staged::DeviceBuffer<MinMaxPair<T>> d_result(1);
  const staged::TimingStats t =
      staged::TimeGpu(staged::TimingOptions{2, 10, false}, [&](cudaStream_t s) {
        v.run(d_in.data(), n, d_result.data(), d_temp.data(), d_temp.bytes(), s);
      });
  EXPECT_EQ(t.ungated_reason, "") << v.name;
  return static_cast<double>(n) * sizeof(T) / (t.median_ms * 1e6);
}

template <typename T>
void ExpectUnderTheReadCeiling(const staged::DeviceInfo& info) {
  std::size_t n = (std::size_t{4} << 30) / sizeof(T);  // the chapter's largest rows
  while (n * sizeof(T) > info.free_bytes / 2 && n > (std::size_t{1} << 24)) n /= 2;
  staged::DeviceBuffer<T> d_in(n);
  d_in.FillBytes(0x11);
  for (const auto& v : AllVariants<T>()) {
    const std::string name = v.name;
    if (name != "optimized" && name.rfind("library:", 0) != 0) continue;
    const double gbps = ReadGbps(v, d_in);
    EXPECT_LE(gbps, info.read_gbps) << v.name << " reads " << n * sizeof(T) << " bytes at " << gbps
                                    << " GB/s, above the measured ceiling";
  }
}

class MinMaxTiming : public staged::testing::GpuTest {};

TEST_F(MinMaxTiming, LargestRowsStayUnderTheMeasuredReadCeiling) {
  unsetenv("STAGED_SKIP_PEAKS");  // this test is about the measured ceiling
  staged::DeviceInfo info = staged::RequireGpu();
  staged::MeasurePeaks(info);
  ASSERT_GT(info.read_gbps, 0.0);
  ExpectUnderTheReadCeiling<float>(info);
  ExpectUnderTheReadCeiling<double>(info);
}

}  // namespace
}  // namespace ch01
