/**
 * @file tensor.cuh
 * @brief Chapter 04 past FP32: C = A·B on the tensor cores (stage 9, warp-level `mma.sync`;
 *        stage 10 on Hopper, warp-group `wgmma` fed by TMA), in
 *        TF32 (FP32 inputs rounded to TF32 by the kernel), BF16 or FP16 (inputs of that type),
 *        all with FP32 accumulation and an FP32 C; the rounding the tensor cores apply, emulated on the host;
 *        the error bound their products are checked against; cuBLAS at the same precision.
 *
 * Shapes and pointers follow matmul.cuh (row-major, any M, N, K >= 0). TF32 and BF16 need sm_80
 * or newer; FP16 runs from sm_75 on (Turing's m16n8k8); `Available` says whether this GPU and
 * this build have the precision.
 *
 * @code
 * if (ch04::tensor::Available(ch04::tensor::Precision::kTf32)) {
 *   ch04::tensor::MatmulTf32(d_a, d_b, d_c, m, n, k, stream);    // float A, B; float C
 *   ch04::tensor::MatmulBf16(d_a16, d_b16, d_c, m, n, k, stream);  // bf16 A, B; float C
 * }
 * @endcode
 */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

/// @cond
struct cublasContext;
/// @endcond

namespace ch04::tensor {

/// What the tensor cores multiply: the inputs' format (the accumulation is FP32 for both).
enum class Precision {
  kTf32,  ///< FP32 inputs rounded to TF32 (8-bit exponent, 10-bit mantissa), round to nearest
          ///< (stage 10 truncates A: `MatmulWgmmaTf32`)
  kBf16,  ///< BF16 inputs (8-bit exponent, 7-bit mantissa)
  kFp16,  ///< FP16 inputs (5-bit exponent, 10-bit mantissa): the one precision of sm_75
};

/// `tf32`, `bf16` or `fp16`: the `--type` word and the first part of a row's shape label.
const char* Name(Precision p);

/// @brief @p x rounded to TF32 as `cvt.rna.tf32.f32` does: to the nearest value with 10
///        mantissa bits, ties away from zero (infinities and NaNs unchanged; a value that rounds
///        past the largest float becomes infinity). The result is a float whose low 13 bits are 0.
/// @param[in] x the float
float RoundTf32(float x);

/// @brief @p x truncated to TF32: its 13 low mantissa bits cleared (round toward zero), what the
///        tensor cores keep of an FP32 operand they read from shared memory (stage 10's A).
///        Infinities and NaNs are unchanged.
/// @param[in] x the float
float TruncateTf32(float x);

/// @brief Each element of @p values truncated to TF32 (`TruncateTf32`).
/// @param[in] values the floats
std::vector<float> Truncated(const std::vector<float>& values);

/// @brief @p x rounded to BF16 (round to nearest even) and widened back to float.
/// @param[in] x the float
float RoundBf16(float x);

/// @brief @p x rounded to FP16 (round to nearest even; past 65504, infinity) and widened back.
/// @param[in] x the float
float RoundFp16(float x);

/// @brief Each element of @p values rounded to @p p's input format (as floats): the values the
///        tensor cores multiply. The reference product is computed on these.
/// @param[in] p the precision
/// @param[in] values the inputs
std::vector<float> Rounded(Precision p, const std::vector<float>& values);

/// @brief @p values rounded to BF16 (round to nearest even).
/// @param[in] values the floats
std::vector<__nv_bfloat16> ToBf16(const std::vector<float>& values);

/// @brief @p values rounded to FP16 (round to nearest even).
/// @param[in] values the floats
std::vector<__half> ToFp16(const std::vector<float>& values);

/// @brief The per-element tolerance factor of a tensor-core product, checked against the exact
///        product of the rounded inputs: |C − C_ref| <= AccumulationScale(K)·(|A'|·|B'|)_ij +
///        AbsoluteFloor(K), where A', B' are the rounded inputs.
///
/// The products of rounded inputs are exact in FP32 (11 × 11 or 8 × 8 significant bits), so the
/// only error is the FP32 accumulation over K. The tensor cores add each instruction's products
/// to the accumulator after aligning them to the largest exponent and truncating (round toward
/// zero), whose unit roundoff is 2u = 2^-23, twice round-to-nearest's; the reference (FP32 SGEMM
/// above the CPU's size limit) errs by at most u = 2^-24 per addition. Each gets
/// min(gamma_K(u'), λ·sqrt(K)·u') as in ToleranceScale (λ = 10), times (1 + gamma_K) for |A'|·|B'|
/// summed in float: (min(gamma_K(2u), 20·sqrt(K)·u) + min(gamma_K(u), 10·sqrt(K)·u))·(1 + gamma_K).
/// At K = 8192 that is 1.6·10^-4 of (|A'|·|B'|)_ij ≈ 2048 for uniform [-1, 1) inputs, 0.33; a
/// k-tile of 8 dropped from an element changes it by a value of standard deviation 0.94.
/// Checked with ch04::CompareProductWithin.
/// @param[in] k inner dimension
double AccumulationScale(int k);

/// @brief What a different rounding of the inputs adds, for a product whose input rounding is
///        not documented (the library rows) checked against the reference of AccumulationScale:
///        two roundings of one input, each within u_in relative, give products within
///        2·((1 + u_in)^2 − 1)·(1 + u_in)^2·|a'||b'| of each other, with u_in = 2^-10 for TF32
///        (covers round-to-nearest, 2^-11, and truncation) and 0 for BF16 and FP16 (the inputs
///        are of that type already). Worst case: about 4·10^-3 of |A'|·|B'|.
/// @param[in] p the precision
double InputRoundingScale(Precision p);

/// @brief Whether this GPU (or the device profile in force) and this build can run the
///        tensor-core stage in @p p: compute capability 8.0 or newer for TF32 and BF16, 7.5 for
///        FP16, and the kernel's code compiled for it (a compute_75 PTX-only build carries FP16's
///        alone).
/// @param[in] p the precision
/// @param[out] why when false (and non-null): the reason, for a skip or an error message
bool Available(Precision p, std::string* why = nullptr);

/// @brief Stage 9 in TF32: C = A·B with FP32 A and B rounded to TF32 (`RoundTf32`) as they
///        reach the tensor cores, FP32 accumulation.
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream the stream
/// @throws staged::ArchitectureError where `Available` is false (and M, N, K > 0)
void MatmulTf32(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                cudaStream_t stream);

/// @brief Stage 9 in BF16: C = A·B with BF16 A and B, FP32 accumulation and C.
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream the stream
/// @throws staged::ArchitectureError where `Available` is false (and M, N, K > 0)
void MatmulBf16(const __nv_bfloat16* d_a, const __nv_bfloat16* d_b, float* d_c, int m, int n, int k,
                cudaStream_t stream);

/// @brief The rate of `mma.sync` itself on this GPU: a kernel of nothing but the instruction on
///        register operands (8 independent tiles per warp, 32 warps per SM), the ceiling of
///        stage 9 (not of cuBLAS, which on Hopper uses the warp-group instruction `wgmma`).
class MmaProbe {
 public:
  /// Allocates the probe's (never written) output. @param[in] p the precision
  /// @throws staged::ArchitectureError where `Available` is false
  explicit MmaProbe(Precision p);
  ~MmaProbe();
  MmaProbe(const MmaProbe&) = delete;
  MmaProbe& operator=(const MmaProbe&) = delete;
  /// Flops of one launch (2·16·8·k per mma.sync).
  double Flops() const;
  /// Queues one launch on @p stream. @param[in] stream the stream
  void Launch(cudaStream_t stream) const;

 private:
  Precision precision_;
  int blocks_ = 0;
  float* out_ = nullptr;
};

/// @brief Stage 9 in FP16: C = A·B with FP16 A and B, FP32 accumulation and C (sm_75 and newer).
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream the stream
/// @throws staged::ArchitectureError where `Available` is false (and M, N, K > 0)
void MatmulFp16(const __half* d_a, const __half* d_b, float* d_c, int m, int n, int k,
                cudaStream_t stream);

/// @brief Whether stage 10 (Hopper: `wgmma` fed by the Tensor Memory Accelerator, wgmma.cu and
///        wgmma_tf32.cu) runs here in @p p: a GPU (or the device profile in force) of compute
///        capability 9.0 (sm_90a's instructions exist there and nowhere else), and a build that
///        compiled the stage for sm_90a (one whose CUDA architectures include 90).
/// @param[in] p the precision
/// @param[out] why when false (and non-null): the reason, for a skip or an error message
bool HopperAvailable(Precision p, std::string* why = nullptr);

/// @brief Whether TMA can describe A and B: its rows must be 16-byte multiples apart and start
///        on a 16-byte boundary, so K and N multiples of 8 and @p d_a, @p d_b 16-byte aligned.
///        Stage 10 runs stage 9 for operands that do not fit.
/// @param[in] d_a device A @param[in] d_b device B
/// @param[in] n columns of B @param[in] k columns of A, rows of B
bool HopperFits(const void* d_a, const void* d_b, int n, int k);

/// @brief Stage 10 in TF32: C = A·B with FP32 A and B, FP32 accumulation, on `wgmma` (stage 9
///        where `HopperFits` is false). The kernel computes C^T = B^T·A^T (`wgmma` reads FP32
///        operands from shared memory K-major only): B passes through registers, rounded to TF32
///        as `RoundTf32` does; A goes from shared memory to the tensor cores, which truncate it
///        (`TruncateTf32`). The exact product of those inputs is what AccumulationScale bounds.
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream the stream
/// @throws staged::ArchitectureError where `HopperAvailable` is false (and M, N, K > 0)
void MatmulWgmmaTf32(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                     cudaStream_t stream);

/// @brief Stage 10 in BF16: C = A·B with BF16 A and B, FP32 accumulation and C, on `wgmma`
///        (stage 9 where `HopperFits` is false).
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream the stream
/// @throws staged::ArchitectureError where `HopperAvailable` is false (and M, N, K > 0)
void MatmulWgmmaBf16(const __nv_bfloat16* d_a, const __nv_bfloat16* d_b, float* d_c, int m, int n,
                     int k, cudaStream_t stream);

/// @brief Stage 10 in FP16: as MatmulWgmmaBf16 with FP16 A and B.
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream the stream
/// @throws staged::ArchitectureError where `HopperAvailable` is false (and M, N, K > 0)
void MatmulWgmmaFp16(const __half* d_a, const __half* d_b, float* d_c, int m, int n, int k,
                     cudaStream_t stream);

/// @brief cuBLAS at the same precision: `cublasGemmEx` with FP32 operands and
///        CUBLAS_COMPUTE_32F_FAST_TF32, or BF16 or FP16 operands and CUBLAS_COMPUTE_32F; C in FP32.
class CublasTensor {
 public:
  /// Creates the handle (default math mode: the compute type chooses the precision).
  CublasTensor();
  ~CublasTensor();
  CublasTensor(const CublasTensor&) = delete;
  CublasTensor& operator=(const CublasTensor&) = delete;

  /// @brief Row-major C = A·B in TF32 (the column-major product C^T = B^T·A^T, no copies).
  /// @param[in] d_a device A, M×K @param[in] d_b device B, K×N @param[out] d_c device C, M×N
  /// @param[in] m rows @param[in] n columns @param[in] k inner dimension @param[in] stream stream
  void MatmulTf32(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                  cudaStream_t stream);

  /// @brief Row-major C = A·B with BF16 A and B, FP32 C.
  /// @param[in] d_a device A, M×K @param[in] d_b device B, K×N @param[out] d_c device C, M×N
  /// @param[in] m rows @param[in] n columns @param[in] k inner dimension @param[in] stream stream
  void MatmulBf16(const __nv_bfloat16* d_a, const __nv_bfloat16* d_b, float* d_c, int m, int n,
                  int k, cudaStream_t stream);

  /// @brief Row-major C = A·B with FP16 A and B, FP32 C.
  /// @param[in] d_a device A, M×K @param[in] d_b device B, K×N @param[out] d_c device C, M×N
  /// @param[in] m rows @param[in] n columns @param[in] k inner dimension @param[in] stream stream
  void MatmulFp16(const __half* d_a, const __half* d_b, float* d_c, int m, int n, int k,
                  cudaStream_t stream);

 private:
  cublasContext* handle_ = nullptr;
};

}  // namespace ch04::tensor
