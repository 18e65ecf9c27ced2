/// @file device_info.cu
/// @brief Device queries and the peak measurements (copy and read bandwidth, FP32 FMA rate).
#include "device_info.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_limits.hpp"
#include "errors.hpp"
#include "resident_grid.hpp"
#include "stream_gate.hpp"
#include "timer.hpp"
#include "timing_caveats.hpp"

namespace staged {

namespace {

constexpr int kFmaChains = 8;          // independent accumulators per thread hide FMA latency
constexpr int kFmaIterations = 16384;  // about 1 ms on a large GPU: launch-free
constexpr int kFmaBlock = 256;
constexpr int kReadBlock = 256;
// The read probe reads at least this much per launch (the buffer as many times as needed), so
// that a launch's fixed costs (start, tail, the timer's events) weigh less than in any kernel
// whose rows it bounds: chapter 01's largest row reads 4 GiB.
constexpr std::size_t kReadProbeTarget = std::size_t{4} << 30;

/**
 * @brief Peak-rate probe: each thread runs `kFmaChains` independent FMA chains.
 *
 * Every thread performs kFmaIterations x kFmaChains fused multiply-adds (2 flops each) on
 * registers only; the sum is stored only if it equals an impossible value, which keeps the
 * compiler from deleting the loop without adding memory traffic.
 * @par Launch configuration
 * Any grid of `kFmaBlock` threads per block; use several blocks per SM.
 * @param[in] seed a value the compiler cannot know
 * @param[out] sink written only in the impossible case
 */
__global__ void PeakFmaKernel(float seed, float* sink) {
  float acc[kFmaChains];
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) acc[c] = seed + static_cast<float>(threadIdx.x + c);
  const float a = 0.999999f;
  const float b = 1e-7f;
  for (int i = 0; i < kFmaIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) acc[c] = fmaf(acc[c], a, b);
  }
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < kFmaChains; ++c) sum += acc[c];
  if (sum == -1.0f) *sink = sum;  // never true for these inputs; defeats dead-code elimination
}

/// One 16-byte load through the read-only data path (`__ldg`, as chapter 01 reads) or as
/// streaming data (`__ldcs`, evict-first in L2, as chapter 02 reads).
template <bool kStreaming>
__device__ __forceinline__ uint4 ProbeLoad(const uint4* p) {
  if constexpr (kStreaming) {
    return __ldcs(p);
  } else {
    return __ldg(p);
  }
}

__device__ __forceinline__ unsigned Fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

/**
 * @brief Read-bandwidth probe: each block streams through consecutive chunks of
 *        kReadBlock x kUnroll x kWords 16-byte words (grid-stride over chunks), @p passes times
 *        over the buffer; every thread issues its kUnroll x kWords loads before using any, and
 *        folds them with XOR. The fold is stored only if it equals an impossible value, so the
 *        loads cannot be removed and nothing is written.
 * @tparam kUnroll load groups in flight per thread
 * @tparam kWords adjacent 16-byte words per group (1, or 2: 32 bytes per thread)
 * @tparam kStreaming `__ldcs` instead of `__ldg`
 * @par Launch configuration
 * Any grid of kReadBlock threads; use enough blocks to fill every SM.
 * @param[in] in @p vectors 16-byte words
 * @param[in] vectors number of words
 * @param[in] passes times the buffer is read
 * @param[out] sink written only in the impossible case
 */
template <int kUnroll, int kWords, bool kStreaming>
__global__ void __launch_bounds__(kReadBlock)
    PeakReadKernel(const uint4* __restrict__ in, std::size_t vectors, int passes, unsigned* sink) {
  constexpr std::size_t kChunk = static_cast<std::size_t>(kReadBlock) * kUnroll * kWords;
  unsigned acc = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::size_t c = static_cast<std::size_t>(blockIdx.x) * kChunk;
    for (; c + kChunk <= vectors; c += static_cast<std::size_t>(gridDim.x) * kChunk) {
      uint4 v[kUnroll][kWords];
      // Group u of thread t is words c + (u * kReadBlock + t) * kWords + w: each load
      // instruction is coalesced, and a block's loads cover one contiguous chunk.
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int w = 0; w < kWords; ++w) {
          v[u][w] = ProbeLoad<kStreaming>(in + c + (u * kReadBlock + threadIdx.x) * kWords + w);
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
#pragma unroll
        for (int w = 0; w < kWords; ++w) acc ^= Fold(v[u][w]);
      }
    }
    for (std::size_t i = c + threadIdx.x; i < vectors && c < vectors; i += kReadBlock) {
      acc ^= Fold(ProbeLoad<kStreaming>(in + i));  // the last, partial chunk (one block has it)
    }
  }
  if (acc == 0x9E3779B9u) *sink = acc;  // the buffer holds equal words: the XOR fold is 0
}

/// An empty kernel: what a launch costs when it does nothing.
__global__ void EmptyKernel() {}

/// Bytes of each probe buffer: 4 x L2 at least, capped at 512 MiB and a quarter of free memory.
std::size_t ProbeBytes(const DeviceInfo& info) {
  std::size_t bytes = std::max<std::size_t>(info.l2_bytes * 4, std::size_t{256} << 20);
  bytes = std::min<std::size_t>({bytes, std::size_t{512} << 20, info.free_bytes / 4});
  return bytes & ~std::size_t{255};
}

double MeasureCopyGbps(const DeviceInfo& info) {
  const std::size_t bytes = ProbeBytes(info);
  if (bytes == 0) return 0.0;
  DeviceBuffer<unsigned char> src(bytes);
  DeviceBuffer<unsigned char> dst(bytes);
  src.FillBytes(1);
  TimingOptions opt{2, 10, false};
  TimingStats t = TimeGpu(opt, [&](cudaStream_t s) {
    CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s));
  });
  return 2.0 * static_cast<double>(bytes) / (t.median_ms * 1e6);
}

/// GB/s of one read probe configuration over @p vectors words read @p passes times, with
/// @p grid_scale times the resident blocks.
template <int kUnroll, int kWords, bool kStreaming>
double TimeReadProbe(const uint4* in, std::size_t vectors, int passes, unsigned* sink,
                     int grid_scale) {
  const auto kernel = PeakReadKernel<kUnroll, kWords, kStreaming>;
  // The GPU's own residency, not a device profile's: the ceiling is this GPU's.
  int device = 0;
  int per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &per_sm, reinterpret_cast<const void*>(kernel), kReadBlock, 0));
  const unsigned blocks = static_cast<unsigned>(grid_scale) *
                          static_cast<unsigned>(std::max(per_sm, 1)) *
                          static_cast<unsigned>(QueryDeviceLimits(device).sm_count);
  TimingOptions opt{1, 7, false};
  const TimingStats t = TimeGpu(opt, [&](cudaStream_t s) {
    kernel<<<blocks, kReadBlock, 0, s>>>(in, vectors, passes, sink);
    CUDA_CHECK_LAST_LAUNCH();
  });
  return 16.0 * static_cast<double>(vectors) * passes / (t.median_ms * 1e6);
}

double MeasureReadGbps(const DeviceInfo& info) {
  // One buffer only, so up to 1 GiB (a quarter of free memory at most), read several times in
  // one launch: at least kReadProbeTarget bytes per launch.
  const std::size_t bytes =
      std::min<std::size_t>(std::size_t{1} << 30, info.free_bytes / 4) & ~std::size_t{255};
  if (bytes == 0) return 0.0;
  DeviceBuffer<unsigned char> src(bytes);
  DeviceBuffer<unsigned> sink(1);
  src.FillBytes(1);
  const auto* in = reinterpret_cast<const uint4*>(src.data());
  const std::size_t vectors = bytes / 16;
  const int passes = static_cast<int>((kReadProbeTarget + bytes - 1) / bytes);
  // The ceiling is the best of several ways to read: a kernel that reads faster than all of
  // them would be above 100 % of its ceiling, and a ceiling a kernel beats is none. Loads in
  // flight per thread (4 or 8 16-byte words, or 4 groups of 32 bytes), the read-only path or
  // streaming loads (the chapters use both), one or two waves of resident blocks.
  const double probes[] = {
      TimeReadProbe<4, 1, false>(in, vectors, passes, sink.data(), 1),
      TimeReadProbe<4, 1, false>(in, vectors, passes, sink.data(), 2),
      TimeReadProbe<8, 1, false>(in, vectors, passes, sink.data(), 1),
      TimeReadProbe<4, 2, false>(in, vectors, passes, sink.data(), 1),
      TimeReadProbe<4, 1, true>(in, vectors, passes, sink.data(), 1),
      TimeReadProbe<4, 2, true>(in, vectors, passes, sink.data(), 1),
  };
  return *std::max_element(std::begin(probes), std::end(probes));
}

double MeasureFp32Gflops(const DeviceInfo& info) {
  DeviceBuffer<float> sink(1);
  const int blocks = info.sm_count * 8;
  TimingOptions opt{2, 10, false};
  TimingStats t = TimeGpu(opt, [&](cudaStream_t s) {
    PeakFmaKernel<<<blocks, kFmaBlock, 0, s>>>(1.0f, sink.data());
    CUDA_CHECK_LAST_LAUNCH();
  });
  const double flops = 2.0 * kFmaChains * kFmaIterations * static_cast<double>(blocks) * kFmaBlock;
  return flops / (t.median_ms * 1e6);
}

}  // namespace

std::string FormatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.2f %s", bytes, units[u]);
  return buf;
}

std::string DeviceInfo::Describe() const {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(0);
  os << name << " (sm_" << cc_major << cc_minor << ", " << sm_count << " SMs, "
     << FormatBytes(static_cast<double>(total_bytes)) << ")";
  if (copy_gbps > 0) os << " | copy " << copy_gbps << " GB/s (measured)";
  if (read_gbps > 0) os << " | read " << read_gbps << " GB/s (measured)";
  if (fp32_gflops > 0) os << " | FP32 " << fp32_gflops << " GFLOP/s (" << fp32_source << ")";
  if (!profile.empty()) os << " | launches planned for device profile " << profile;
  return os.str();
}

bool GpuAvailable() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls start clean
    return false;
  }
  return count > 0;
}

std::string NoGpuMessage(int driver_version, cudaError_t error) {
  std::string msg = "no NVIDIA GPU found";
  if (driver_version > 0) {
    msg += "\n  the NVIDIA driver (CUDA " + std::to_string(driver_version / 1000) + "." +
           std::to_string(driver_version % 1000 / 10) +
           ") reports: " + (error != cudaSuccess ? cudaGetErrorString(error) : "no CUDA device");
  }
  return msg;
}

std::string BuiltArchitectures() {
#ifdef STAGED_CUDA_ARCHITECTURES
  return STAGED_CUDA_ARCHITECTURES;
#else
  return "unknown";
#endif
}

std::string TooOldMessage(const std::string& name, int cc_major, int cc_minor) {
  return name + " is sm_" + std::to_string(cc_major) + std::to_string(cc_minor) +
         ": staged-kernels needs sm_75 (Turing) or newer";
}

std::string ArchitectureMessage(const std::string& built, int cc_major, int cc_minor) {
  std::string list;
  std::size_t start = 0;
  while (start <= built.size()) {  // "80-real,90" (or ';') -> "sm_80, sm_90"
    const std::size_t end = std::min(built.find_first_of(",;", start), built.size());
    std::string arch = built.substr(start, end - start);
    arch = arch.substr(0, arch.find('-'));
    if (!arch.empty()) {
      if (!list.empty()) list += ", ";
      list += arch == "native" || arch == "all" || arch == "all-major" ? arch : "sm_" + arch;
    }
    start = end + 1;
  }
  const std::string here = std::to_string(cc_major) + std::to_string(cc_minor);
  return "built for " + (list.empty() ? std::string("unknown architectures") : list) +
         "; this GPU is sm_" + here + ": rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + here;
}

DeviceInfo RequireGpu() {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    throw NoGpuError(NoGpuMessage(driver, err));
  }
  DeviceInfo info;
  CUDA_CHECK(cudaGetDevice(&info.ordinal));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, info.ordinal));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.total_bytes = prop.totalGlobalMem;
  info.l2_bytes = static_cast<std::size_t>(prop.l2CacheSize);
  CUDA_CHECK(cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, info.ordinal));
  if (10 * info.cc_major + info.cc_minor < kMinComputeCapability) {
    throw NoGpuError(TooOldMessage(info.name, info.cc_major, info.cc_minor));
  }
  info.profile = ActiveProfileName();
  if (!info.profile.empty()) (void)DeviceProfile(info.profile);  // an unknown name: exit 2
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &total));
  // Does this executable hold code the GPU can run? Asking for a kernel's attributes loads it.
  cudaFuncAttributes attributes{};
  const cudaError_t image = cudaFuncGetAttributes(&attributes, EmptyKernel);
  if (image == cudaErrorNoKernelImageForDevice || image == cudaErrorInvalidDeviceFunction ||
      image == cudaErrorUnsupportedPtxVersion) {
    cudaGetLastError();
    throw ArchitectureError(
        ArchitectureMessage(BuiltArchitectures(), info.cc_major, info.cc_minor));
  }
  CUDA_CHECK(image);
  return info;
}

int Fp32LanesPerSm(int cc_major, int cc_minor) {
  if (cc_major == 6) return cc_minor == 0 ? 64 : 128;
  if (cc_major == 7) return 64;
  if (cc_major == 8) return cc_minor == 0 ? 64 : 128;
  if (cc_major >= 9) return 128;
  return 0;
}

double Fp32GflopsFromAttributes(const DeviceInfo& info) {
  return 2.0 * info.sm_count * Fp32LanesPerSm(info.cc_major, info.cc_minor) * info.clock_khz * 1e-6;
}

void MeasurePeaks(DeviceInfo& info) {
  // Under compute-sanitizer the probes only slow the run down: STAGED_SKIP_PEAKS=1 skips them,
  // and so does a tool found to make every CUDA call wait (the probes would measure the tool).
  const char* env = std::getenv("STAGED_SKIP_PEAKS");
  const bool skip = env != nullptr && env[0] == '1';
  const bool tool = !skip && StreamGate::Enabled() && !StreamGate::HoldsQueuedWork();
  if (tool) NoteTimingCaveat(StreamGate::UnusableReason());
  if (skip || tool) {
    info.copy_gbps = 0.0;
    info.read_gbps = 0.0;
    info.fp32_gflops = Fp32GflopsFromAttributes(info);
    info.fp32_source = "attributes";
    return;
  }
  info.copy_gbps = MeasureCopyGbps(info);
  info.read_gbps = MeasureReadGbps(info);
  info.fp32_gflops = MeasureFp32Gflops(info);
  info.fp32_source = "measured";
  if (!(info.fp32_gflops > 0)) {
    info.fp32_gflops = Fp32GflopsFromAttributes(info);
    info.fp32_source = "attributes";
  }
}

double MeasureEmptyLaunchUs(int reps) {
  TimingOptions opt{10, reps, false};
  TimingStats t = TimeGpu(opt, [](cudaStream_t s) {
    EmptyKernel<<<1, 32, 0, s>>>();
    CUDA_CHECK_LAST_LAUNCH();
  });
  return t.median_ms * 1e3;
}

void RequireDeviceMemory(std::size_t bytes, const std::string& what) {
  const char* need_only = std::getenv("STAGED_MEMORY_NEED_ONLY");
  if (need_only != nullptr && std::string(need_only) == "1") {
    std::cout << "memory need: " << bytes << " bytes (" << what << ")\n";
    throw MemoryNeedReported(what);
  }
  std::size_t free_bytes = 0;
  std::size_t total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  // Under a device profile, the profiled GPU's memory bounds what is free here too.
  const DeviceLimits limits = PlanningLimits();
  std::string whose;
  if (limits.name != "device" && limits.memory_bytes < free_bytes) {
    free_bytes = limits.memory_bytes;
    whose = " (the " + limits.name + " profile's " +
            FormatBytes(static_cast<double>(limits.memory_bytes)) + ")";
  }
  if (bytes > free_bytes) {
    throw InputError(what + " needs " + FormatBytes(static_cast<double>(bytes)) +
                     " of device memory but only " + FormatBytes(static_cast<double>(free_bytes)) +
                     " is free" + whose);
  }
}

}  // namespace staged
