/**
 * @file wgmma.cu
 * @brief Stage 10 (Hopper, sm_90a only): the tensor cores through the warp-group instruction
 *        `wgmma`, its operands brought into shared memory by the Tensor Memory Accelerator (TMA),
 *        a producer warp group and two consumer warp groups handing k-tiles over on mbarriers.
 *
 * Stage 9 asks every warp to fetch its fragments from shared memory into registers (`ldmatrix`)
 * before each `mma.sync`; on Hopper that traffic, not the tensor cores, sets its pace. Here:
 *
 * 1. **TMA.** One thread of the producer warp group describes a box of A (64 k × 128 rows) and
 *    four boxes of B (64 columns × 64 k each) to the TMA unit, which copies them from global to
 *    shared memory on its own, 128-byte swizzled (16-byte chunk c of a 128-byte row r lands at
 *    c ^ (r % 8), the swizzle stage 9 computes by hand), filling with zeros what lies past M, N
 *    or K. The copies count their bytes into the stage's *full* mbarrier.
 * 2. **wgmma.** The 128 threads of a consumer warp group issue `wgmma.mma_async.m64n256k16`
 *    together: 64 rows of A by 256 columns of B, 16 deep, both read by the tensor cores straight
 *    from shared memory through 64-bit *descriptors* (start address, the byte distance between
 *    8-row groups, the swizzle), the 64×256 FP32 accumulator in the group's registers (128 per
 *    thread). Nothing passes through the threads' registers on the way in.
 * 3. **The pipeline.** Four stages of 48 KiB (A 16 KiB, B 32 KiB). A consumer waits on a stage's
 *    full barrier, issues its four wgmma, commits them as a group and waits until only that group
 *    is in flight, so the previous k-tile's products are done and its stage goes back to the
 *    producer (every consumer thread arrives on the stage's *empty* barrier). The producer
 *    waits on empty before refilling. `setmaxnreg` moves registers from the producer group (40
 *    each) to the consumers (232 each).
 * 4. **The order of tiles.** The rows of tiles are taken in bands of 16, and a band column by
 *    column (16 blocks down one column of B, then the next): the blocks resident at once read
 *    16 tile rows of A and about a dozen tile columns of B, where row-by-row order would have
 *    them all sweep the whole of B, which at 8192^3 (128 MiB of BF16) does not stay in L2.
 *
 * Layouts (the canonical ones of the PTX ISA's "Shared memory matrix layout" for 128-byte
 * swizzling): A is K-major (a row of a k-tile is 64 values, 128 bytes; 8-row groups 1024 bytes
 * apart); a k16 step moves A's start address by 32 bytes. B is MN-major (wgmma transposes it as
 * it reads, which it does for 16-bit types only: TF32 is wgmma_tf32.cu's): in a box a k row is
 * 128 bytes of 64 columns, 8-k groups 1024 bytes apart, the next 64 columns 8192 bytes on; a
 * k16 step moves B's start by 2048 bytes.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "chapters/04_matmul_global_vs_shared/wgmma.cuh"
#include "chapters/04_matmul_global_vs_shared/wgmma_device.cuh"
#include "common/cuda_check.hpp"
#include "common/launch_support.hpp"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "wgmma.cu compiles for sm_90a only (chapters/04_matmul_global_vs_shared/CMakeLists.txt)"
#endif

namespace ch04::tensor::wgmma {
namespace {

constexpr int kBm = 128, kBn = 256, kBk = 64;  // block tile; a k-tile is 64 16-bit values deep
constexpr int kStages = 4;
constexpr int kTileA = kBm * kBk * 2;         // 16 KiB
constexpr int kTileB = kBk * kBn * 2;         // 32 KiB
constexpr int kStageBytes = kTileA + kTileB;  // 48 KiB
constexpr int kBoxB = 64 * kBk * 2;           // one B box: 64 columns × 64 k, 8 KiB
constexpr int kThreads = 384;                 // warp group 0 produces, 1 and 2 consume
constexpr int kBand = 16;                     // tile rows in a band of the block order
constexpr int kSmem = Ring<kStages, kStageBytes>::kBytes;

/// d += A·B in @p TYPE ("bf16" or "f16"): A and B from shared memory (descriptors), scale-d
/// true (a predicate: accumulate), A and B unscaled, A as stored (K-major), B transposed.
#define CH04_WGMMA(TYPE)                                                             \
  asm volatile(                                                                      \
      "{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"                                 \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " " CH04_ACC_LIST \
      ", %128, %129, acc, 1, 1, 0, 1;\n}\n"                                          \
      : CH04_ACC32(0), CH04_ACC32(32), CH04_ACC32(64), CH04_ACC32(96)                \
      : "l"(a), "l"(b))

/// One m64n256k16 for the warp group: its 64×256 FP32 accumulators @p d (128 per thread) plus
/// the 64×16 A and 16×256 B the descriptors @p a and @p b point at.
template <bool kFp16>
__device__ __forceinline__ void Wgmma(float (&d)[128], std::uint64_t a, std::uint64_t b) {
  if constexpr (kFp16) {
    CH04_WGMMA("f16");
  } else {
    CH04_WGMMA("bf16");
  }
}

template <bool kFp16>
__global__ void __launch_bounds__(kThreads, 1)
    WgmmaKernel(const __grid_constant__ CUtensorMap map_a,
                const __grid_constant__ CUtensorMap map_b, float* __restrict__ c, int m, int n,
                int k, bool pairs) {
  extern __shared__ char raw[];
  const Ring<kStages, kStageBytes> ring(raw, 256);  // freed by every consumer thread
  const int2 origin = BandedTile<kBm, kBn, kBand>(m, n);
  const int m0 = origin.x, n0 = origin.y, tiles = (k + kBk - 1) / kBk;
  __syncthreads();
  if (Produce<kBn / 64, 64, kBk, kTileA>(ring, &map_a, &map_b, tiles, m0, n0)) return;
  const int group = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int half = group - 1;  // consumer 0: rows 0-63 of the tile, consumer 1: rows 64-127
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;
  // snippet-begin: ch04-wgmma-consumer
  for (int t = 0; t < tiles; ++t) {
    ring.WaitFull(t);  // k-tile t has landed
    const unsigned a = SmemAddress(ring.Stage(t)) + half * 64 * 128;
    const unsigned b = SmemAddress(ring.Stage(t) + kTileA);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kBk / 16; ++kk)
      Wgmma<kFp16>(d, Descriptor(a + kk * 32, 16, 1024), Descriptor(b + kk * 2048, kBoxB, 1024));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    // Tile t's products run on while this retires tile t - 1's, whose stage goes back.
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    if (t > 0) ring.Release(t - 1);
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  // snippet-end: ch04-wgmma-consumer
  // The accumulators of m64nN: warp w of the group holds rows 16w to 16w + 15; lane l, per
  // 8-column block i, row l / 4 at columns 8i + 2(l % 4) + {0, 1}, and the row 8 below. With
  // @p pairs (N even, C on an 8-byte boundary) each pair of columns is one float2 store.
  const int warp = tid / 32, lane = tid % 32;
  const int row0 = m0 + half * 64 + warp * 16 + lane / 4;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int col = n0 + 8 * i + 2 * (lane % 4);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + 8 * h;
      if (row >= m) continue;
      float* out = c + static_cast<std::size_t>(row) * n + col;
      if (pairs && col + 1 < n) {  // both columns, one 8-byte store
        *reinterpret_cast<float2*>(out) = make_float2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
      } else {
        if (col < n) out[0] = d[4 * i + 2 * h];
        if (col + 1 < n) out[1] = d[4 * i + 2 * h + 1];
      }
    }
  }
}

#undef CH04_WGMMA

/// The driver's cuTensorMapEncodeTiled, found once (the runtime links no driver symbols).
PFN_cuTensorMapEncodeTiled_v12000 Encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                                cudaEnableDefault, &found));
#else
    CUDA_CHECK(cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &found));
#endif
    if (fn == nullptr || found != cudaDriverEntryPointSuccess)
      throw staged::CudaError(cudaErrorSymbolNotFound,
                              "cuTensorMapEncodeTiled: not found in the CUDA driver");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

}  // namespace

CUtensorMap TensorMap(const void* base, CUtensorMapDataType type, int elem_bytes, int rows,
                      int cols, int box_cols, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * elem_bytes};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t steps[2] = {1, 1};
  const CUresult r =
      Encoder()(&map, type, 2,
                const_cast<void*>(base), dims, strides, box, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw staged::CudaError(cudaErrorInvalidValue, "cuTensorMapEncodeTiled: CUresult " +
                                                       std::to_string(static_cast<int>(r)) +
                                                       " for a " + std::to_string(rows) + "x" +
                                                       std::to_string(cols) + " matrix");
  }
  return map;
}

const void* Kernel(Precision p) {
  if (p == Precision::kTf32) return KernelTf32();
  return p == Precision::kFp16 ? reinterpret_cast<const void*>(WgmmaKernel<true>)
                               : reinterpret_cast<const void*>(WgmmaKernel<false>);
}

void Launch(Precision p, const void* a, const void* b, float* c, int m, int n, int k,
            cudaStream_t stream) {
  const bool fp16 = p == Precision::kFp16;
  const CUtensorMapDataType type =
      fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  const CUtensorMap map_a = TensorMap(a, type, 2, m, k, kBk, kBm);
  const CUtensorMap map_b = TensorMap(b, type, 2, k, n, 64, kBk);
  staged::OptInSharedMemory(Kernel(p), kSmem);
  const unsigned blocks = static_cast<unsigned>((m + kBm - 1) / kBm) * ((n + kBn - 1) / kBn);
  const bool pairs = n % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % 8 == 0;
  if (fp16) {
    WgmmaKernel<true><<<blocks, kThreads, kSmem, stream>>>(map_a, map_b, c, m, n, k, pairs);
  } else {
    WgmmaKernel<false><<<blocks, kThreads, kSmem, stream>>>(map_a, map_b, c, m, n, k, pairs);
  }
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch04::tensor::wgmma
