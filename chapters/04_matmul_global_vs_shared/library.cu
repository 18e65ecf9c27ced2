/**
 * @file library.cu
 * @brief The baseline: cuBLAS SGEMM in plain FP32, called on row-major data, and the
 *        large-size reference built from it.
 *
 * cuBLAS is column-major. A row-major M×N matrix C has the same bytes as the column-major
 * N×M matrix C^T, and C^T = B^T·A^T, so one SGEMM with the operands swapped (B first, then A),
 * no transposes and leading dimensions N, K, N computes row-major C = A·B without a copy.
 */
#include <cublas_v2.h>

#include <stdexcept>
#include <string>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"

namespace ch04::library {

namespace {

void CheckCublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLAS ") + what +
                             " failed: " + cublasGetStatusString(status));
  }
}

}  // namespace

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
  if (m == 0 || n == 0) return;
  if (k == 0) {  // an empty sum; cuBLAS would also reject lda = K = 0
    CUDA_CHECK(cudaMemsetAsync(d_c, 0, static_cast<std::size_t>(m) * n * sizeof(float), stream));
    return;
  }
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
