/**
 * @file wgmma.cuh
 * @brief Chapter 04 stage 10's kernel, inside the chapter: the Hopper product compiled for
 *        sm_90a alone (wgmma.cu), which `hopper.cpp` calls where tensor.cuh's
 *        `HopperAvailable` and `HopperFits` hold. A build that does not target sm_90 leaves
 *        wgmma.cu out, and these are not defined.
 */
#pragma once

#include <cuda_runtime_api.h>

#include "chapters/04_matmul_global_vs_shared/tensor.cuh"

namespace ch04::tensor::wgmma {

/// The kernel for @p p (BF16 or FP16), for cudaFuncGetAttributes and the shared-memory opt-in.
const void* Kernel(Precision p);

/// Shared memory the kernel asks for at launch, in bytes.
int SharedBytes();

/// @brief Queues C = A·B (row-major; 16-bit A and B of precision @p p, FP32 C) on @p stream.
///        The caller has checked M, N, K > 0, `HopperFits` and `HopperAvailable`.
void Launch(Precision p, const void* a, const void* b, float* c, int m, int n, int k,
            cudaStream_t stream);

}  // namespace ch04::tensor::wgmma
