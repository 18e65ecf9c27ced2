/// @file stream_gate.cu
/// @brief The gate kernel, its host side, and the probe that tells whether a gate can hold work.
#include "stream_gate.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "stream.hpp"
#include "timing_caveats.hpp"

namespace staged {

namespace {

/// Nanoseconds since an arbitrary origin, from the GPU's global timer.
__device__ __forceinline__ std::uint64_t GlobalTimerNs() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/**
 * @brief Spins until the host sets @p open (or @p timeout_ns has passed, which it reports in
 *        @p timed_out). One thread; the flags live in host-mapped memory, read with volatile
 *        loads so every iteration sees the host's latest write.
 * @par Launch configuration
 * <<<1, 1>>> on the stream to hold.
 */
__global__ void StreamGateKernel(const volatile int* open, volatile int* timed_out,
                                 std::uint64_t timeout_ns) {
  const std::uint64_t start = GlobalTimerNs();
  while (*open == 0) {
    if (GlobalTimerNs() - start > timeout_ns) {
      *timed_out = 1;
      __threadfence_system();
      return;
    }
    __nanosleep(1000);  // poll about once a microsecond; keeps the SM and PCIe traffic low
  }
}

/// An empty kernel: the launch the probe queues behind a closed gate.
__global__ void GateProbeKernel() {}

/// `STAGED_GATE_TIMEOUT_S` as a number of seconds, or a negative value when unset or malformed.
double TimeoutFromEnvironment() {
  const char* env = std::getenv("STAGED_GATE_TIMEOUT_S");
  if (env == nullptr) return -1.0;
  char* end = nullptr;
  const double seconds = std::strtod(env, &end);
  return end != env && *end == '\0' && seconds >= 0 ? seconds : -1.0;
}

}  // namespace

StreamGate::StreamGate() {
  const double seconds = TimeoutFromEnvironment();
  if (seconds > 0) timeout_s_ = seconds;
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  open_ = static_cast<volatile int*>(p);
  timed_out_ = open_ + 1;
  *open_ = 1;
  *timed_out_ = 0;
}

StreamGate::~StreamGate() {
  if (open_ != nullptr) {
    *open_ = 1;
    CUDA_CHECK_NOTHROW(cudaFreeHost(const_cast<int*>(open_)));
  }
}

bool StreamGate::Enabled() { return TimeoutFromEnvironment() != 0.0; }

bool StreamGate::HoldsQueuedWork() {
  // Once per process (the first caller's device): a function-local static is initialised once,
  // even with several host threads.
  static const bool holds = [] {
    Stream stream;
    DeviceBuffer<unsigned char> src(256);
    DeviceBuffer<unsigned char> dst(256);
    src.FillBytes(0, stream.get());
    GateProbeKernel<<<1, 1, 0, stream.get()>>>();  // loaded before the gate closes
    CUDA_CHECK_LAST_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    StreamGate gate;
    gate.timeout_s_ = std::min(gate.timeout_s_, kTimeoutSeconds);  // never wait long here
    gate.Launch(stream.get());
    {
      // Each call returns at once where calls are queued; where a call waits for the stream,
      // it waits for the gate, which opens only by its timeout.
      GateGuard open_on_exit(gate);
      CUDA_CHECK(cudaMemsetAsync(dst.data(), 0, dst.bytes(), stream.get()));
      CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), dst.bytes(), cudaMemcpyDeviceToDevice,
                                 stream.get()));
      GateProbeKernel<<<1, 1, 0, stream.get()>>>();
      CUDA_CHECK_LAST_LAUNCH();
      Event done;
      done.Record(stream.get());
    }
    CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    return !gate.TimedOut();
  }();
  return holds;
}

bool StreamGate::Usable() { return Enabled() && HoldsQueuedWork(); }

std::string StreamGate::UnusableReason() {
  if (!Enabled()) {
    return "the stream gate is off (STAGED_GATE_TIMEOUT_S=0): each time includes the host's "
           "launch work";
  }
  if (!HoldsQueuedWork()) {
    return "CUDA calls here wait for the stream (as under compute-sanitizer): no work can queue "
           "behind the stream gate, so each time includes the host's launch work (and the "
           "tool's), and the peaks are not measured";
  }
  return "";
}

void StreamGate::Close(cudaStream_t stream) {
  *timed_out_ = 0;
  if (!Usable()) {  // the gate stays open: work starts as the host queues it
    NoteTimingCaveat(UnusableReason());
    return;
  }
  Launch(stream);
}

void StreamGate::Launch(cudaStream_t stream) {
  *timed_out_ = 0;
  *open_ = 0;
  int* d_open = nullptr;
  int* d_timed_out = nullptr;
  CUDA_CHECK(
      cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_open), const_cast<int*>(open_), 0));
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&d_timed_out),
                                      const_cast<int*>(timed_out_), 0));
  StreamGateKernel<<<1, 1, 0, stream>>>(d_open, d_timed_out,
                                        static_cast<std::uint64_t>(timeout_s_ * 1e9));
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    *open_ = 1;
    CheckCuda(err, "StreamGateKernel launch", __FILE__, __LINE__);
  }
}

void StreamGate::Open() noexcept { *open_ = 1; }

bool StreamGate::TimedOut() const noexcept { return *timed_out_ != 0; }

}  // namespace staged
