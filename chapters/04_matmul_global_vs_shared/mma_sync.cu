/**
 * @file mma_sync.cu
 * @brief Stage 9: the tensor cores through warp-level `mma.sync`, in TF32, BF16 and FP16.
 *
 * 256 threads and the `cp.async` copies of stage 6 (common/async_copy.cuh), but the multiply-adds
 * leave the FP32 units: one `mma.sync` multiplies a 16×k A fragment by a k×8 B fragment into a
 * 16×8 tile of accumulators (k = 8 in TF32, 16 in BF16 and FP16), 2·16·8·k flops per instruction
 * instead of an FFMA's 2. Each warp owns 64×64 of C (4×8 tiles) in a 256×128 block tile where
 * a block holds three 48 KiB k-tiles (sm_80, sm_90), else 64×32 (4×4 tiles) in a 128×128 one:
 * per 16 of k a warp's `ldmatrix` brings 128 bytes per `mma` instead of 192, which keeps the
 * SM's 128 bytes of shared memory per clock ahead of the tensor cores. The layout arithmetic is
 * in mma_layout.cuh.
 *
 * 1. Each k-tile is 128 bytes of every row of A (32 floats or 64 16-bit values) and as many rows
 *    of B: 32 KiB of A (16 KiB in the narrow block) and 16 KiB of B, three buffers in flight
 *    (144 or 96 KiB of dynamic shared memory), two where a block holds 64 KiB (a T4).
 * 2. A's fragments come from shared memory by `ldmatrix.x4`: one instruction, four 8×8 matrices
 *    of 16-bit values, each lane getting the 32-bit word its fragment needs. Eight lanes read
 *    one 16-byte chunk of eight consecutive rows; with 128-byte rows those eight chunks would sit
 *    in the same four banks (an 8-way conflict), so chunk c of row r is stored at c ^ (r % 8):
 *    the XOR swizzle puts the eight rows' chunks in eight different bank groups.
 * 3. The B fragment is a column of B: in BF16 and FP16 `ldmatrix.x4.trans` transposes 16-bit
 *    values as it loads, from B's rows swizzled the same way. TF32's cannot be: `.trans` moves 16-bit halves,
 *    and a TF32 value is 32 bits. Each lane reads its two words of B with plain 32-bit loads;
 *    the four lanes that read one column at k, k+1, k+2, k+3 would hit one bank, so chunk c of
 *    row k is stored at c ^ 2·(k % 4).
 * 4. TF32: the kernel rounds each FP32 value to TF32 (`cvt.rna.tf32.f32`) between the shared
 *    load and the `mma`; the tensor core would otherwise drop the 13 low bits (truncation).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/mma_layout.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"
#include "common/aligned_split.hpp"
#include "common/async_copy.cuh"
#include "common/cuda_check.hpp"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#include "common/launch_support.hpp"

namespace ch04::tensor {
namespace {

using namespace layout;  // NOLINT: the geometry and the index arithmetic of mma_layout.cuh

/// Shared memory of a kernel that keeps @p stages k-tiles of A and B: 144 KiB for three of `Wide`,
/// 96 KiB for three of `Narrow`, 64 KiB for two (the most a T4's block holds).
template <class G>
constexpr int SharedBytes(int stages) {
  return stages * G::kStageBytes;
}

/// What differs between the two precisions.
template <Precision P>
struct Traits;
template <>
struct Traits<Precision::kTf32> {
  using Elem = float;
  using Bits = std::uint32_t;
  static constexpr int kStep = 8;  // k of one mma.sync (m16n8k8)
};
template <>
struct Traits<Precision::kBf16> {
  using Elem = __nv_bfloat16;
  using Bits = std::uint16_t;
  static constexpr int kStep = 16;  // k of one mma.sync (m16n8k16)
};
template <>
struct Traits<Precision::kFp16> {
  using Elem = __half;
  using Bits = std::uint16_t;
  static constexpr int kStep = 16;  // m16n8k16 (sm_75: two m16n8k8)
};
template <Precision P>
constexpr int kElemsPerChunk = 16 / static_cast<int>(sizeof(typename Traits<P>::Elem));
template <Precision P>
constexpr int kDepth = kRowBytes / static_cast<int>(sizeof(typename Traits<P>::Elem));
template <Precision P>
constexpr int kElemBytes = static_cast<int>(sizeof(typename Traits<P>::Elem));

/// One 16-byte chunk: copied by `cp.async` when @p kVec (its elements wholly inside or wholly
/// outside the matrix; outside: zeros), else element by element through registers.
template <Precision P, bool kVec>
__device__ __forceinline__ void CopyChunk(char* dst, const typename Traits<P>::Elem* matrix,
                                          int row, int col, int rows, int cols) {
  using Bits = typename Traits<P>::Bits;
  constexpr int kE = kElemsPerChunk<P>;
  if constexpr (kVec) {
    const bool in = row < rows && col < cols;
    const auto* src = in ? matrix + static_cast<std::size_t>(row) * cols + col : matrix;
    staged::CopyToSharedOrZero<16>(dst, src, in);
  } else {
    const auto* bits = reinterpret_cast<const Bits*>(matrix);
    union {
      uint4 v;
      Bits e[kE];
    } chunk;
    for (int e = 0; e < kE; ++e) {
      chunk.e[e] = (row < rows && col + e < cols)
                       ? bits[static_cast<std::size_t>(row) * cols + col + e]
                       : Bits{0};
    }
    *reinterpret_cast<uint4*>(dst) = chunk.v;
  }
}

/// Copies k-tile @p k0 of the block's rows of A and columns of B into one buffer.
template <Precision P, class G, bool kVec>
__device__ __forceinline__ void LoadTile(const typename Traits<P>::Elem* a,
                                         const typename Traits<P>::Elem* b, int m, int n, int k,
                                         int m0, int n0, int k0, char* sa, char* sb) {
  constexpr int kE = kElemsPerChunk<P>;
#pragma unroll
  for (int i = 0; i < G::kCopiesA; ++i) {
    const RowChunk t = CopyChunkA(threadIdx.x + i * kThreads);
    CopyChunk<P, kVec>(sa + OffsetA(t.row, t.chunk), a, m0 + t.row, k0 + t.chunk * kE, m, k);
  }
#pragma unroll
  for (int i = 0; i < kCopiesB; ++i) {
    const RowChunk t = CopyChunkB<kElemBytes<P>>(threadIdx.x + i * kThreads);
    CopyChunk<P, kVec>(sb + OffsetB<kElemBytes<P>>(t.row, t.chunk), b, k0 + t.row,
                       n0 + t.chunk * kE, k, n);
  }
}

// ldmatrix and FP16 mma.sync exist on every GPU the project builds for (sm_75 and newer), TF32 and
// BF16 mma.sync from sm_80. Compiled for sm_75 those two trap: the host never launches them there
// (`Available`), and the rest of the kernel compiles for every architecture.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
/// Stops the kernel: compiled for sm_75, an instruction of sm_80 was reached.
#define CH04_MMA_UNAVAILABLE() __trap()
#else
/// Nothing: the instruction exists.
#define CH04_MMA_UNAVAILABLE()
#endif

// snippet-begin: ch04-mma-fragments
/// Four 8×8 matrices of 16-bit values from shared memory; lane l gives row l % 8 of matrix l / 8
/// and receives word l % 4 of row l / 4 of each (with @p kTrans, of each matrix transposed:
/// elements 2·(l % 4) and 2·(l % 4) + 1 of column l / 4). sm_75 and newer, like every build.
template <bool kTrans>
__device__ __forceinline__ void LoadMatrixX4(unsigned (&r)[4], unsigned address) {
  if constexpr (kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
}

/// FP32 bits rounded to TF32, to nearest, ties away from zero.
__device__ __forceinline__ unsigned ToTf32(unsigned x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  CH04_MMA_UNAVAILABLE();
  return x;
#else
  unsigned y;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(y) : "f"(__uint_as_float(x)));
  return y;
#endif
}

/// d += a·b for one 16×8 tile, FP32 accumulators: m16n8k8 in TF32, m16n8k16 in BF16 and FP16
/// (on sm_75, FP16 as two m16n8k8: a0-a1 with b0, then a2-a3 with b1).
template <Precision P>
__device__ __forceinline__ void Mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
  if constexpr (P == Precision::kTf32) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (P == Precision::kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#else  // sm_75: FP16 only
  if constexpr (P == Precision::kFp16) {
    // snippet-begin: ch04-mma-sm75
    for (int half = 0; half < 2; ++half) {  // k 0-7, then k 8-15
      asm volatile(
          "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
          "{%0, %1, %2, %3};"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a[2 * half]), "r"(a[2 * half + 1]), "r"(b[half]));
    }
    // snippet-end: ch04-mma-sm75
  } else {
    d[0] += __uint_as_float(a[0] ^ b[0]);
    CH04_MMA_UNAVAILABLE();
  }
#endif
}

/// The warp's products over one buffered k-tile: per mma step, A's fragments by ldmatrix, B's by
/// ldmatrix.trans (BF16) or 32-bit loads (TF32), then 4 × G::kNTiles mma.sync.
template <Precision P, class G>
__device__ __forceinline__ void MultiplyTile(const char* sa, const char* sb, int warp_m, int warp_n,
                                             int lane, float (&acc)[kMTiles][G::kNTiles][4]) {
  constexpr int kNTiles = G::kNTiles;
  const int col0 = warp_n * G::kWarpN;  // the warp's first column of the block's 128
  const auto a_base = static_cast<unsigned>(__cvta_generic_to_shared(sa));
  const auto b_base = static_cast<unsigned>(__cvta_generic_to_shared(sb));
#pragma unroll
  for (int ks = 0; ks < kDepth<P> / Traits<P>::kStep; ++ks) {
    unsigned af[kMTiles][4];
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
      const RowChunk t = LoadRowA(warp_m, mt, ks, lane);
      LoadMatrixX4<false>(af[mt], a_base + OffsetA(t.row, t.chunk));
    }
    unsigned bf[kNTiles][2];
    if constexpr (P != Precision::kTf32) {
#pragma unroll
      for (int np = 0; np < kNTiles / 2; ++np) {  // two 8-column tiles per ldmatrix.x4.trans
        const RowChunk t = LoadRowBTrans(col0, np, ks, lane);
        unsigned r[4];
        LoadMatrixX4<true>(r, b_base + OffsetB<2>(t.row, t.chunk));
        bf[2 * np][0] = r[0];
        bf[2 * np][1] = r[1];
        bf[2 * np + 1][0] = r[2];
        bf[2 * np + 1][1] = r[3];
      }
    } else {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) {  // b0 = B[k + i][n], b1 = B[k + i + 4][n]
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          unsigned v;
          asm volatile("ld.shared.b32 %0, [%1];"
                       : "=r"(v)
                       : "r"(b_base + LoadWordBTf32(col0, nt, ks, h, lane)));
          bf[nt][h] = ToTf32(v);
        }
      }
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
        for (int i = 0; i < 4; ++i) af[mt][i] = ToTf32(af[mt][i]);
      }
    }
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
      for (int nt = 0; nt < kNTiles; ++nt) Mma<P>(acc[mt][nt], af[mt], bf[nt]);
    }
  }
}
// snippet-end: ch04-mma-fragments

/**
 * @brief C = A·B on the tensor cores: one G::kBm×128 tile of C per block, k-tiles through a
 *        `cp.async` pipeline, `mma.sync` per warp (see the file comment).
 * @tparam P the precision
 * @tparam G the block's geometry, `Wide` or `Narrow`
 * @tparam kVec rows of A and B are whole 16-byte chunks and 16-byte aligned (K and N multiples
 *         of the chunk's elements): `cp.async`; else element-by-element copies
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[out] c M×N row-major, FP32
 * @param[in] m rows of A
 * @param[in] n columns of B
 * @param[in] k inner dimension (>= 1)
 * @par Launch configuration
 * grid (ceil(N/128), ceil(M/G::kBm)), 256 threads, SharedBytes<G>(kStages) of dynamic shared
 * memory; runs where `Available(P)` (sm_80 and newer, FP16 from sm_75).
 * @tparam kStages k-tiles in shared memory at once: 3, or 2 where a block holds 64 KiB
 */
template <Precision P, class G, bool kVec, int kStages>
__global__ void __launch_bounds__(kThreads, G::kBlocksPerSm)
    MmaKernel(const typename Traits<P>::Elem* __restrict__ a,
              const typename Traits<P>::Elem* __restrict__ b, float* __restrict__ c, int m, int n,
              int k) {
  extern __shared__ __align__(128) char smem[];
  constexpr int kNTiles = G::kNTiles;
  const int m0 = blockIdx.y * G::kBm, n0 = blockIdx.x * kBn;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int warp_m = warp / G::kWarpsN, warp_n = warp % G::kWarpsN;
  float acc[kMTiles][kNTiles][4] = {};
  const int tiles = (k + kDepth<P> - 1) / kDepth<P>;
  auto buffer_a = [&](int s) { return smem + s * G::kStageBytes; };
  auto buffer_b = [&](int s) { return smem + s * G::kStageBytes + G::kTileBytesA; };
  // snippet-begin: ch04-mma-loop
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < tiles)
      LoadTile<P, G, kVec>(a, b, m, n, k, m0, n0, s * kDepth<P>, buffer_a(s), buffer_b(s));
    staged::CommitCopies();
  }
  for (int t = 0; t < tiles; ++t) {
    staged::WaitCopies<kStages - 2>();  // k-tile t has landed (for this thread's copies)
    __syncthreads();                    // ... for every thread's; buffer t - 1 is free
    const int next = t + kStages - 1;
    if (next < tiles) {
      LoadTile<P, G, kVec>(a, b, m, n, k, m0, n0, next * kDepth<P>, buffer_a(next % kStages),
                           buffer_b(next % kStages));
    }
    staged::CommitCopies();
    MultiplyTile<P, G>(buffer_a(t % kStages), buffer_b(t % kStages), warp_m, warp_n, lane, acc);
  }
  // snippet-end: ch04-mma-loop
  staged::WaitAllCopies();
  // Accumulator i of a 16×8 tile: row group + 8·(i / 2), column 2·in_group + i % 2.
  const int group = lane >> 2, in_group = lane & 3;
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt) {
#pragma unroll
    for (int nt = 0; nt < kNTiles; ++nt) {
      const int col = n0 + warp_n * G::kWarpN + nt * 8 + 2 * in_group;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + warp_m * kWarpM + mt * 16 + group + 8 * h;
        if (row >= m) continue;
        float* out = c + static_cast<std::size_t>(row) * n + col;
        if (kVec && col + 1 < n) {
          *reinterpret_cast<float2*>(out) = make_float2(acc[mt][nt][2 * h], acc[mt][nt][2 * h + 1]);
        } else {
          if (col < n) out[0] = acc[mt][nt][2 * h];
          if (col + 1 < n) out[1] = acc[mt][nt][2 * h + 1];
        }
      }
    }
  }
}

/// Independent accumulator tiles per warp in the probe: enough mma.sync in flight to cover the
/// instruction's latency.
constexpr int kProbeChains = 8;
/// Iterations of the probe's loop, and its blocks per SM (8 warps each).
constexpr int kProbeIterations = 2048;
constexpr int kProbeBlocksPerSm = 4;

/**
 * @brief The instruction's own rate: each warp issues kProbeIterations × kProbeChains mma.sync on
 *        register operands, no memory traffic; a result is written only if it is never reached,
 *        so the compiler keeps every instruction.
 * @param[out] out one float per thread, written only when the accumulators sum to -1
 * @par Launch configuration
 * kProbeBlocksPerSm blocks per SM of 256 threads; sm_80 and newer.
 */
template <Precision P>
__global__ void __launch_bounds__(kThreads) MmaProbeKernel(float* out) {
  // Small operands: 2^-10 in TF32, (2^-10, 2^-10) in BF16 pairs; the sums stay finite.
  const unsigned one = P == Precision::kTf32   ? 0x3A800000u   // TF32 2^-10
                       : P == Precision::kBf16 ? 0x3A803A80u   // BF16 pairs of 2^-10
                                               : 0x14001400u;  // FP16 pairs of 2^-10
  const unsigned a[4] = {one, one ^ (threadIdx.x & 1u), one, one};
  const unsigned b[2] = {one, one};
  float acc[kProbeChains][4] = {};
  for (int i = 0; i < kProbeIterations; ++i) {
#pragma unroll
    for (int j = 0; j < kProbeChains; ++j) Mma<P>(acc[j], a, b);
  }
  float sum = 0.0f;
#pragma unroll
  for (int j = 0; j < kProbeChains; ++j) sum += acc[j][0] + acc[j][1] + acc[j][2] + acc[j][3];
  if (sum == -1.0f) out[blockIdx.x * kThreads + threadIdx.x] = sum;
}

template <Precision P>
void Launch(const typename Traits<P>::Elem* a, const typename Traits<P>::Elem* b, float* c, int m,
            int n, int k, cudaStream_t stream) {
  CheckDimensions(m, n, k);
  if (EmptyProduct(c, m, n, k, stream)) return;
  std::string why;
  if (!Available(P, &why)) throw staged::ArchitectureError(why);
  constexpr int kE = kElemsPerChunk<P>;
  const bool vec = k % kE == 0 && n % kE == 0 && staged::IsAligned16(a) && staged::IsAligned16(b) &&
                   staged::IsAligned16(c);
  // snippet-begin: ch04-mma-plan
  // Three k-tiles of the wide block where a block holds 144 KiB (sm_80, sm_90), three of the
  // narrow one where it holds 96 KiB (sm_86, sm_89, sm_120), two on a T4's 64 KiB.
  const int smem = staged::PlanningLimits().smem_per_block;
  const bool wide = smem >= SharedBytes<Wide>(3), three = smem >= SharedBytes<Narrow>(3);
  const auto kernel = wide ? (vec ? MmaKernel<P, Wide, true, 3> : MmaKernel<P, Wide, false, 3>)
                      : three
                          ? (vec ? MmaKernel<P, Narrow, true, 3> : MmaKernel<P, Narrow, false, 3>)
                          : (vec ? MmaKernel<P, Narrow, true, 2> : MmaKernel<P, Narrow, false, 2>);
  const int bytes = wide ? SharedBytes<Wide>(3) : SharedBytes<Narrow>(three ? 3 : 2);
  const int rows = wide ? Wide::kBm : Narrow::kBm;
  // snippet-end: ch04-mma-plan
  staged::OptInSharedMemory(reinterpret_cast<const void*>(kernel), bytes);
  const dim3 grid((n + kBn - 1) / kBn, (m + rows - 1) / rows);
  kernel<<<grid, kThreads, bytes, stream>>>(a, b, c, m, n, k);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace

namespace {

/// The TF32, BF16 or FP16 kernel (its loaded code says which PTX it came from).
const void* KernelOf(Precision p) {
  if (p == Precision::kTf32)
    return reinterpret_cast<const void*>(MmaKernel<Precision::kTf32, Narrow, true, 3>);
  if (p == Precision::kBf16)
    return reinterpret_cast<const void*>(MmaKernel<Precision::kBf16, Narrow, true, 3>);
  return reinterpret_cast<const void*>(MmaKernel<Precision::kFp16, Narrow, true, 3>);
}

}  // namespace

bool Available(Precision p, std::string* why) {
  const staged::DeviceLimits limits = staged::PlanningLimits();
  const int needs = p == Precision::kFp16 ? 75 : 80;  // FP16 mma.sync from Turing on
  std::string reason;
  if (limits.cc < needs) {
    reason = std::string("the tensor-core stage in ") + Name(p) + " needs sm_" +
             std::to_string(needs) + " or newer (" + (needs == 80 ? "TF32 and BF16" : "FP16") +
             " mma.sync); this GPU" +
             (staged::ActiveProfileName().empty() ? "" : " (device profile)") + " is sm_" +
             std::to_string(limits.cc);
  } else {
    cudaFuncAttributes attr{};
    CUDA_CHECK(cudaFuncGetAttributes(&attr, KernelOf(p)));
    if (attr.ptxVersion < needs) {  // the loaded code came from PTX for an older architecture
      reason = std::string("this build carries no ") + Name(p) +
               " tensor-core code for this GPU (its kernels come from compute_" +
               std::to_string(attr.ptxVersion) + " PTX); build for sm_" + std::to_string(needs) +
               " or newer (CUDAARCHS=native)";
    }
  }
  if (why != nullptr) *why = reason;
  return reason.empty();
}

MmaProbe::MmaProbe(Precision p) : precision_(p) {
  std::string why;
  if (!Available(p, &why)) throw staged::ArchitectureError(why);
  blocks_ = staged::PlanningLimits().sm_count * kProbeBlocksPerSm;
  CUDA_CHECK(cudaMalloc(&out_, static_cast<std::size_t>(blocks_) * kThreads * sizeof(float)));
}

MmaProbe::~MmaProbe() { cudaFree(out_); }

double MmaProbe::Flops() const {
  const double per_mma = 2.0 * 16 * 8 * (precision_ == Precision::kTf32 ? 8 : 16);
  return per_mma * kProbeChains * kProbeIterations * (kThreads / 32) * blocks_;
}

void MmaProbe::Launch(cudaStream_t stream) const {
  const auto kernel = precision_ == Precision::kTf32   ? MmaProbeKernel<Precision::kTf32>
                      : precision_ == Precision::kBf16 ? MmaProbeKernel<Precision::kBf16>
                                                       : MmaProbeKernel<Precision::kFp16>;
  kernel<<<blocks_, kThreads, 0, stream>>>(out_);
  CUDA_CHECK_LAST_LAUNCH();
}

void MatmulTf32(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
                cudaStream_t stream) {
  Launch<Precision::kTf32>(d_a, d_b, d_c, m, n, k, stream);
}

void MatmulBf16(const __nv_bfloat16* d_a, const __nv_bfloat16* d_b, float* d_c, int m, int n, int k,
                cudaStream_t stream) {
  Launch<Precision::kBf16>(d_a, d_b, d_c, m, n, k, stream);
}

void MatmulFp16(const __half* d_a, const __half* d_b, float* d_c, int m, int n, int k,
                cudaStream_t stream) {
  Launch<Precision::kFp16>(d_a, d_b, d_c, m, n, k, stream);
}

}  // namespace ch04::tensor
