/**
 * @file wgmma.cuh
 * @brief Chapter 04 stage 10's kernels, inside the chapter: the Hopper products compiled for
 *        sm_90a alone (wgmma.cu in BF16 and FP16, wgmma_tf32.cu in TF32), which `hopper.cpp`
 *        calls where tensor.cuh's `HopperAvailable` and `HopperFits` hold. A build that does not
 *        target sm_90 leaves both files out, and these are not defined.
 */
#pragma once

#include <cuda_runtime_api.h>

#include "chapters/04_matmul_global_vs_shared/tensor.cuh"

namespace ch04::tensor::wgmma {

/// The kernel for @p p (TF32, BF16 or FP16), for cudaFuncGetAttributes.
const void* Kernel(Precision p);

/// The TF32 kernel (wgmma_tf32.cu).
const void* KernelTf32();

/// @brief Queues C = A·B (row-major; 16-bit A and B of precision @p p, FP32 C) on @p stream.
///        The caller has checked M, N, K > 0, `HopperFits` and `HopperAvailable`.
void Launch(Precision p, const void* a, const void* b, float* c, int m, int n, int k,
            cudaStream_t stream);

/// @brief Queues C = A·B (row-major; FP32 A and B, both rounded to TF32 on the way, FP32 C) on
///        @p stream (wgmma_tf32.cu). The caller has checked as for Launch.
void LaunchTf32(const float* a, const float* b, float* c, int m, int n, int k,
                cudaStream_t stream);

}  // namespace ch04::tensor::wgmma
