/**
 * @file hopper.cpp
 * @brief Stage 10's entry points: whether the Hopper product can run here, and the call that
 *        runs it (wgmma.cu in BF16 and FP16, wgmma_tf32.cu in TF32, compiled for sm_90a where
 *        the build targets 90) or, for operands TMA cannot describe, stage 9.
 */
#include <cuda_runtime_api.h>

#include <string>
#include <type_traits>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"
#include "common/aligned_split.hpp"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#ifdef STAGED_CH04_WGMMA
#include "chapters/04_matmul_global_vs_shared/wgmma.cuh"
#endif

namespace ch04::tensor {

bool HopperAvailable([[maybe_unused]] Precision p, std::string* why) {
  std::string reason;
  const staged::DeviceLimits limits = staged::PlanningLimits();
  if (limits.cc != 90) {
    reason = "the Hopper stage (wgmma, sm_90a) runs on compute capability 9.0 only; this GPU" +
             std::string(staged::ActiveProfileName().empty() ? "" : " (device profile)") +
             " is sm_" + std::to_string(limits.cc);
  } else {
#ifdef STAGED_CH04_WGMMA
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, wgmma::Kernel(p)) != cudaSuccess) {
      cudaGetLastError();  // the kernel has no code for this GPU: say so, do not fail later
      reason = "this build's Hopper stage (sm_90a code) does not load on this GPU";
    }
#else
    reason =
        "this build did not compile the Hopper stage: it does where the CUDA architectures "
        "include 90 (CUDAARCHS=90, or native on a Hopper GPU)";
#endif
  }
  if (why != nullptr) *why = reason;
  return reason.empty();
}

bool HopperFits(const void* d_a, const void* d_b, int n, int k) {
  return k % 8 == 0 && n % 8 == 0 && staged::IsAligned16(d_a) && staged::IsAligned16(d_b);
}

namespace {

template <class T, class Stage9>
void LaunchHopper(Precision p, const T* a, const T* b, float* c, int m, int n, int k,
                  cudaStream_t stream, Stage9 stage9) {
  CheckDimensions(m, n, k);
  if (EmptyProduct(c, m, n, k, stream)) return;
  std::string why;
  if (!HopperAvailable(p, &why)) throw staged::ArchitectureError(why);
  if (!HopperFits(a, b, n, k)) {
    stage9(a, b, c, m, n, k, stream);
    return;
  }
#ifdef STAGED_CH04_WGMMA
  if constexpr (std::is_same_v<T, float>) {
    wgmma::LaunchTf32(a, b, c, m, n, k, stream);
  } else {
    wgmma::Launch(p, a, b, c, m, n, k, stream);
  }
#endif
}

}  // namespace

void MatmulWgmmaTf32(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                     cudaStream_t stream) {
  LaunchHopper(Precision::kTf32, d_a, d_b, d_c, m, n, k, stream, MatmulTf32);
}

void MatmulWgmmaBf16(const __nv_bfloat16* d_a, const __nv_bfloat16* d_b, float* d_c, int m, int n,
                     int k, cudaStream_t stream) {
  LaunchHopper(Precision::kBf16, d_a, d_b, d_c, m, n, k, stream, MatmulBf16);
}

void MatmulWgmmaFp16(const __half* d_a, const __half* d_b, float* d_c, int m, int n, int k,
                     cudaStream_t stream) {
  LaunchHopper(Precision::kFp16, d_a, d_b, d_c, m, n, k, stream, MatmulFp16);
}

}  // namespace ch04::tensor
