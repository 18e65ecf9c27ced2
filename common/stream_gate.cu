/// @file stream_gate.cu
/// @brief The gate kernel and its host side.
#include "stream_gate.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#include "cuda_check.hpp"

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

}  // namespace

StreamGate::StreamGate() {
  if (const char* env = std::getenv("STAGED_GATE_TIMEOUT_S")) {
    char* end = nullptr;
    const double seconds = std::strtod(env, &end);
    if (end != env && *end == '\0') {
      if (seconds > 0) timeout_s_ = seconds;
      off_ = seconds == 0;
    }
  }
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

void StreamGate::Close(cudaStream_t stream) {
  *timed_out_ = 0;
  if (off_) return;  // the gate stays open: work starts as the host queues it
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
