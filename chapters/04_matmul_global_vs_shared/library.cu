/**
 * @file library.cu
 * @brief The baseline: cuBLAS SGEMM in plain FP32, called on row-major data, and the
 *        large-size reference built from it.
 *
 * cuBLAS is column-major. A row-major M×N matrix C has the same bytes as the column-major
 * N×M matrix C^T, and C^T = B^T·A^T, so one SGEMM with the operands swapped (B first, then A),
 * no transposes and leading dimensions N, K, N computes row-major C = A·B without a copy.
 * The tensor-core baselines (`ch04::tensor::CublasTensor`) make the same call through
 * `cublasGemmEx`, whose compute type sets the precision.
 */
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"

namespace {

/// Throws std::runtime_error naming @p what when @p status is not success.
void CheckCublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + what +
                             " failed: " + cublasGetStatusString(status));
  }
}

}  // namespace

namespace ch04::library {

/**
 * @brief out[i] = |in[i]|, a grid-stride loop (builds |A| and |B| for the error bound).
 * @param[in] in the values
 * @param[out] out their magnitudes
 * @param[in] count number of elements
 * @par Launch configuration
 * any 1-D grid of 1-D blocks.
 */
__global__ void AbsKernel(const float* __restrict__ in, float* __restrict__ out,
                          std::size_t count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += stride) {
    out[i] = fabsf(in[i]);
  }
}

Cublas::Cublas() {
  CheckCublas(cublasCreate(&handle_), "cublasCreate");
  // Default math: SGEMM computes in FP32. Tensor cores (TF32) would need
  // CUBLAS_TF32_TENSOR_OP_MATH, which would make the baseline a different, less precise product.
  CheckCublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

Cublas::~Cublas() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

void Cublas::Matmul(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                    cudaStream_t stream) {
  CheckDimensions(m, n, k);
  if (EmptyProduct(d_c, m, n, k, stream)) return;  // cuBLAS would also reject lda = K = 0
  CheckCublas(cublasSetStream(handle_, stream), "cublasSetStream");
  const float one = 1.0f;
  const float zero = 0.0f;
  // snippet-begin: ch04-cublas-call
  // Column-major view: C^T (N×M) = B^T (N×K) · A^T (K×M).
  CheckCublas(
      cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, d_b, n, d_a, k, &zero, d_c, n),
      "cublasSgemm");
  // snippet-end: ch04-cublas-call
}

void Cublas::Reference(const float* d_a, const float* d_b, int m, int n, int k,
                       std::vector<float>* c, std::vector<float>* abs_product) {
  CheckDimensions(m, n, k);
  const std::size_t size_a = static_cast<std::size_t>(m) * k;
  const std::size_t size_b = static_cast<std::size_t>(k) * n;
  staged::DeviceBuffer<float> d_c(static_cast<std::size_t>(m) * n);
  staged::DeviceBuffer<float> d_abs_a(size_a);
  staged::DeviceBuffer<float> d_abs_b(size_b);
  Matmul(d_a, d_b, d_c.data(), m, n, k, nullptr);
  *c = d_c.ToHost();
  if (size_a > 0) {
    AbsKernel<<<1024, 256>>>(d_a, d_abs_a.data(), size_a);
    CUDA_CHECK_LAST_LAUNCH();
  }
  if (size_b > 0) {
    AbsKernel<<<1024, 256>>>(d_b, d_abs_b.data(), size_b);
    CUDA_CHECK_LAST_LAUNCH();
  }
  Matmul(d_abs_a.data(), d_abs_b.data(), d_c.data(), m, n, k, nullptr);
  *abs_product = d_c.ToHost();
}

}  // namespace ch04::library

namespace ch04::tensor {

CublasTensor::CublasTensor() {
  CheckCublas(cublasCreate(&handle_), "cublasCreate");
  // The math mode stays the default: each call's compute type says what the tensor cores do.
  CheckCublas(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
}

CublasTensor::~CublasTensor() {
  if (handle_ != nullptr) cublasDestroy(handle_);
}

namespace {

/// Row-major C (FP32) = A·B through cublasGemmEx with operands of @p type and @p compute.
void GemmEx(cublasHandle_t handle, const void* d_a, const void* d_b, float* d_c, int m, int n,
            int k, cudaDataType_t type, cublasComputeType_t compute, cudaStream_t stream) {
  CheckDimensions(m, n, k);
  if (EmptyProduct(d_c, m, n, k, stream)) return;
  CheckCublas(cublasSetStream(handle, stream), "cublasSetStream");
  const float one = 1.0f;
  const float zero = 0.0f;
  // snippet-begin: ch04-cublas-gemmex
  // Column-major view, as for SGEMM: C^T (N×M) = B^T (N×K) · A^T (K×M); C is FP32.
  CheckCublas(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, d_b, type, n,
                                    d_a, type, k, &zero, d_c, CUDA_R_32F, n, compute,
                                    CUBLAS_GEMM_DEFAULT),
                       "cublasGemmEx");
  // snippet-end: ch04-cublas-gemmex
}

}  // namespace

void CublasTensor::MatmulTf32(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                              cudaStream_t stream) {
  GemmEx(handle_, d_a, d_b, d_c, m, n, k, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, stream);
}

void CublasTensor::MatmulBf16(const __nv_bfloat16* d_a, const __nv_bfloat16* d_b, float* d_c,
                              int m, int n, int k, cudaStream_t stream) {
  GemmEx(handle_, d_a, d_b, d_c, m, n, k, CUDA_R_16BF, CUBLAS_COMPUTE_32F, stream);
}

void CublasTensor::MatmulFp16(const __half* d_a, const __half* d_b, float* d_c, int m, int n, int k,
                              cudaStream_t stream) {
  GemmEx(handle_, d_a, d_b, d_c, m, n, k, CUDA_R_16F, CUBLAS_COMPUTE_32F, stream);
}

}  // namespace ch04::tensor
