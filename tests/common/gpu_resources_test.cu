/// @file gpu_resources_test.cu
/// @brief GPU tests of the common library: buffers, streams, events (GpuResources, in parallel
///        with other tests), and the timers, the stream gate and the device peaks (GpuTiming,
///        alone). Each skips where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/errors.hpp"
#include "common/resident_grid.hpp"
#include "common/stream.hpp"
#include "common/stream_gate.hpp"
#include "common/timer.hpp"
#include "common/timing_caveats.hpp"
#include "gpu_test.hpp"

namespace staged {
namespace {

using staged::testing::GpuTest;

__global__ void AddOneKernel(int* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

__global__ void SpinKernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

class GpuResources : public GpuTest {};

/// Tests of the timer, the stream gate and the peak probes: they time the GPU, and the suite's
/// name makes them run alone (label timing, RUN_SERIAL).
class GpuTiming : public GpuTest {};

TEST_F(GpuResources, DeviceBufferRoundTripAndKernel) {
  std::vector<int> h(1000);
  std::iota(h.begin(), h.end(), 0);
  DeviceBuffer<int> d(h);
  AddOneKernel<<<4, 256>>>(d.data(), 1000);
  CUDA_CHECK_LAST_LAUNCH();
  std::vector<int> back = d.ToHost();
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(back[i], i + 1);
}

TEST_F(GpuResources, AnUploadIsCompleteBeforeANonBlockingStreamReadsIt) {
  // A pageable upload followed at once by a copy on a non-blocking stream: without the wait in
  // CopyToDeviceAndWait the copy can read the buffer while the upload's last DMA is in flight
  // (chapter 06's sort of a fresh shard read part of the previous input that way). A race: it
  // shows often, not always, without the wait.
  Stream s;
  for (int round = 0; round < 16; ++round) {
    const std::size_t n = round % 2 == 0 ? 12289 : (std::size_t{4} << 20) + 3;
    std::vector<unsigned> h(n);
    std::iota(h.begin(), h.end(), static_cast<unsigned>(round) << 24);
    DeviceBuffer<unsigned> copy(n);  // allocated first: nothing between the upload and the copy
    const DeviceBuffer<unsigned> d(h);
    CUDA_CHECK(cudaMemcpyAsync(copy.data(), d.data(), n * sizeof(unsigned),
                               cudaMemcpyDeviceToDevice, s.get()));
    s.Synchronize();
    ASSERT_EQ(copy.ToHost(), h) << "round " << round << ", " << n << " values";
  }
}

TEST_F(GpuResources, FillBytesPoisonsEveryByte) {
  DeviceBuffer<unsigned> d(77);
  d.FillBytes(0xFF);
  for (unsigned v : d.ToHost()) ASSERT_EQ(v, 0xFFFFFFFFu);
}

TEST_F(GpuResources, BadLaunchIsCaughtByLastLaunchCheck) {
  AddOneKernel<<<1, 4096>>>(nullptr, 0);  // 4096 threads per block is over every limit
  EXPECT_THROW(CUDA_CHECK_LAST_LAUNCH(), CudaError);
  // The check consumed the (non-sticky) launch error: a good launch after it checks clean.
  AddOneKernel<<<1, 32>>>(nullptr, 0);
  EXPECT_NO_THROW(CUDA_CHECK_LAST_LAUNCH());
  CUDA_CHECK(cudaDeviceSynchronize());
}

TEST_F(GpuResources, PinnedBufferAndStreamCopy) {
  PinnedBuffer<float> p(256);
  for (int i = 0; i < 256; ++i) p[i] = 0.5f * i;
  Stream s;
  DeviceBuffer<float> d(256);
  d.CopyFromHost(p.data(), 256, s.get());
  std::vector<float> back(256);
  d.CopyToHost(back.data(), 256, s.get());
  for (int i = 0; i < 256; ++i) ASSERT_EQ(back[i], 0.5f * i);
}

TEST_F(GpuTiming, GpuTimerMeasuresASpin) {
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  const long long cycles = static_cast<long long>(clock_khz) * 2;  // about 2 ms
  Stream s;
  TimingStats t = TimeGpu(
      TimingOptions{1, 5, true},
      [&](cudaStream_t st) {
        SpinKernel<<<1, 1, 0, st>>>(cycles);
        CUDA_CHECK_LAST_LAUNCH();
      },
      s.get());
  EXPECT_EQ(t.reps, 5);
  EXPECT_GT(t.min_ms, 1.0);
  EXPECT_LT(t.median_ms, 50.0);
}

TEST_F(GpuTiming, InTurnTimesEachWorkInRoundsAndKeepsTheirOrder) {
  // Three spins of about 1, 3 and 2 ms, timed in turn: each gets warmup + reps runs, in rounds
  // (the order of the runs is recorded on the host), and its own stats in the order given.
  int clock_khz = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  Stream s;
  std::vector<int> order;
  std::vector<std::function<void(cudaStream_t)>> works;
  for (int ms : {1, 3, 2}) {
    works.push_back([&, ms](cudaStream_t st) {
      order.push_back(ms);
      SpinKernel<<<1, 1, 0, st>>>(static_cast<long long>(clock_khz) * ms);
      CUDA_CHECK_LAST_LAUNCH();
    });
  }
  const std::vector<TimingStats> t = TimeGpuInTurn(TimingOptions{2, 4, true}, works, s.get());
  ASSERT_EQ(t.size(), 3u);
  const std::vector<int> expected = {1, 1, 3, 3, 2, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2, 1, 3, 2};
  EXPECT_EQ(order, expected);
  for (const TimingStats& x : t) EXPECT_EQ(x.reps, 4);
  EXPECT_GT(t[0].min_ms, 0.8);
  EXPECT_GT(t[1].min_ms, t[2].max_ms);
  EXPECT_GT(t[2].min_ms, t[0].max_ms);
  EXPECT_LT(t[1].median_ms, 50.0);
}

__global__ void EmptyTestKernel() {}

TEST_F(GpuTiming, EmptyLaunchUnderTheTimerCostsAFewMicroseconds) {
  const double us = MeasureEmptyLaunchUs(200);
  RecordProperty("empty_launch_us", std::to_string(us));
  std::printf("an empty kernel under TimeGpu: %.2f us\n", us);
  EXPECT_GT(us, 0.0);
  EXPECT_LT(us, 5.0) << "the timed region holds more than the device work of an empty launch";
}

TEST_F(GpuTiming, GateKeepsHostTimeOutOfTheTimedRegion) {
  // The work spends 2 ms on the host before its (tiny) launch. Gated, the GPU starts the clock
  // only when everything is queued, so the host's 2 ms are not counted; ungated, they are.
  unsetenv("STAGED_GATE_TIMEOUT_S");  // this test is about the gate itself
  Stream s;
  auto work = [](cudaStream_t st) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EmptyTestKernel<<<1, 32, 0, st>>>();
    CUDA_CHECK_LAST_LAUNCH();
  };
  const TimingStats gated = TimeGpu(TimingOptions{1, 5, false, true}, work, s.get());
  const TimingStats ungated = TimeGpu(TimingOptions{1, 5, false, false}, work, s.get());
  EXPECT_LT(gated.median_ms, 0.5);
  EXPECT_GT(ungated.median_ms, 1.5);
}

TEST_F(GpuTiming, GatedWorkThatWaitsForTheHostIsTimedWithoutTheGate) {
  // The work waits for its stream behind the closed gate: the gate opens by its timeout, and
  // that rep and the later ones are timed without it; the stats and the caveats say why.
  unsetenv("STAGED_GATE_TIMEOUT_S");  // the default timeout (2 s)
  Stream s;
  int runs = 0;
  TimingStats t;
  EXPECT_NO_THROW(t = TimeGpu(
                      TimingOptions{0, 3, false, true},
                      [&](cudaStream_t st) {
                        ++runs;
                        EmptyTestKernel<<<1, 32, 0, st>>>();
                        CUDA_CHECK(cudaStreamSynchronize(st));  // waits behind the closed gate
                      },
                      s.get()));
  EXPECT_EQ(t.reps, 3);
  EXPECT_EQ(runs, 4) << "the rep that timed out runs again without the gate";
  EXPECT_EQ(t.ungated_reason, kGatedWorkWaited);
  EXPECT_LT(t.max_ms, 1000.0) << "a rep kept the gate's timeout in its time";
  const std::vector<std::string> caveats = TimingCaveats();
  EXPECT_NE(std::find(caveats.begin(), caveats.end(), kGatedWorkWaited), caveats.end());
  // The stream is usable afterwards.
  EmptyTestKernel<<<1, 32, 0, s.get()>>>();
  CUDA_CHECK_LAST_LAUNCH();
  s.Synchronize();
}

TEST_F(GpuTiming, GatesHoldQueuedWorkOnThisGpu) {
  // Outside tools that make every CUDA call wait, a memset, a copy, a launch and an event queue
  // behind a closed gate, and timed work keeps the gate.
  unsetenv("STAGED_GATE_TIMEOUT_S");
  EXPECT_TRUE(StreamGate::HoldsQueuedWork());
  EXPECT_TRUE(StreamGate::Usable());
  EXPECT_EQ(StreamGate::UnusableReason(), "");
  Stream s;
  const TimingStats t = TimeGpu(
      TimingOptions{1, 3, true},
      [](cudaStream_t st) {
        EmptyTestKernel<<<1, 32, 0, st>>>();
        CUDA_CHECK_LAST_LAUNCH();
      },
      s.get());
  EXPECT_EQ(t.ungated_reason, "");
}

TEST_F(GpuTiming, GateTimeoutZeroTurnsTheGateOff) {
  // The sanitizer runs' setting: Close() queues nothing, so work that waits for its stream runs
  // (behind a closed gate it would time out, as the test above shows) and the host's time counts.
  setenv("STAGED_GATE_TIMEOUT_S", "0", 1);
  Stream s;
  auto work = [](cudaStream_t st) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    EmptyTestKernel<<<1, 32, 0, st>>>();
    CUDA_CHECK_LAST_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(st));
  };
  TimingStats t;
  EXPECT_NO_THROW(t = TimeGpu(TimingOptions{0, 3, false, true}, work, s.get()));
  EXPECT_FALSE(StreamGate::Usable());
  const std::string off = StreamGate::UnusableReason();
  // A gate driven by hand (as chapter 03's per-stage timing does) queues nothing either.
  StreamGate gate;
  gate.Close(s.get());
  work(s.get());
  gate.Open();
  unsetenv("STAGED_GATE_TIMEOUT_S");
  EXPECT_FALSE(gate.TimedOut());
  EXPECT_GT(t.median_ms, 1.5) << "with the gate off the host's 2 ms are inside the timed region";
  EXPECT_EQ(off.rfind("the stream gate is off (STAGED_GATE_TIMEOUT_S=0)", 0), 0u) << off;
  EXPECT_EQ(t.ungated_reason, off);
  const std::vector<std::string> caveats = TimingCaveats();
  EXPECT_NE(std::find(caveats.begin(), caveats.end(), off), caveats.end());
}

TEST_F(GpuResources, SmCountIsTheDevicesAttributeOrItsProfiles) {
  const DeviceInfo info = RequireGpu();
  {
    testing::ScopedDeviceProfile own("");
    EXPECT_EQ(SmCount(), info.sm_count);
  }
  testing::ScopedDeviceProfile t4("t4");
  EXPECT_EQ(SmCount(), std::min(info.sm_count, 40));
}

TEST_F(GpuTiming, DeviceInfoAndMeasuredPeaksAreSane) {
  unsetenv("STAGED_SKIP_PEAKS");  // this test is about the measurement itself
  DeviceInfo info = RequireGpu();
  EXPECT_FALSE(info.name.empty());
  EXPECT_GT(info.sm_count, 0);
  EXPECT_GT(info.l2_bytes, 0u);
  MeasurePeaks(info);
  EXPECT_GT(info.copy_gbps, 50.0);
  EXPECT_LT(info.copy_gbps, 20000.0);
  // A pure read stream moves at least as many bytes per second as a copy, but not twice as many.
  EXPECT_GT(info.read_gbps, 0.8 * info.copy_gbps);
  EXPECT_LT(info.read_gbps, 2.0 * info.copy_gbps);
  EXPECT_GT(info.fp32_gflops, 100.0);
  EXPECT_EQ(info.fp32_source, "measured");
  const double attr = Fp32GflopsFromAttributes(info);
  if (attr > 0) {
    EXPECT_LT(info.fp32_gflops, attr * 1.05) << "measured FP32 above the theoretical peak";
    EXPECT_GT(info.fp32_gflops, attr * 0.5) << "FFMA probe far below the theoretical peak";
  }
  EXPECT_NE(info.Describe().find("(measured)"), std::string::npos);
}

TEST_F(GpuTiming, SkipPeaksFallsBackToAttributes) {
  setenv("STAGED_SKIP_PEAKS", "1", 1);
  DeviceInfo info = RequireGpu();
  MeasurePeaks(info);
  unsetenv("STAGED_SKIP_PEAKS");
  EXPECT_EQ(info.copy_gbps, 0.0);
  EXPECT_EQ(info.read_gbps, 0.0);
  EXPECT_EQ(info.fp32_source, "attributes");
  EXPECT_DOUBLE_EQ(info.fp32_gflops, Fp32GflopsFromAttributes(info));
}

TEST_F(GpuResources, OversizedProblemIsAnInputError) {
  EXPECT_THROW(RequireDeviceMemory(std::size_t{1} << 50, "test problem"), InputError);
  EXPECT_NO_THROW(RequireDeviceMemory(1 << 20, "test problem"));
}

TEST_F(GpuResources, EventsOrderAndMeasure) {
  Event a, b;
  a.Record();
  SpinKernel<<<1, 1>>>(100000);
  CUDA_CHECK_LAST_LAUNCH();
  b.Record();
  b.Synchronize();
  EXPECT_GT(b.MillisecondsSince(a), 0.0f);
}

}  // namespace
}  // namespace staged
