/**
 * @file wgmma_tf32.cu
 * @brief Stage 10 in TF32 (Hopper, sm_90a only): `wgmma` on FP32 inputs, which it reads from
 *        shared memory only K-major. A is (a row of A is a run of k); B, stored row-major, is
 *        not, and `wgmma` transposes 16-bit operands only. So the kernel computes C^T = B^T·A^T.
 *
 * What differs from the 16-bit kernel (wgmma.cu), whose producer and barriers it keeps:
 *
 * 1. **The product transposed.** `wgmma`'s A operand is a 64×8 slice of B^T, which the consumer
 *    threads load from shared memory into registers themselves (`wgmma` takes its A operand
 *    from registers as well, in any layout the threads can gather); its B operand is A^T, read
 *    from shared memory through a descriptor, K-major as TMA stores A. The accumulators hold a
 *    64×256 tile of C^T: 64 columns of C by 256 rows.
 * 2. **Rounding.** From registers, the kernel rounds B to TF32 (`cvt.rna`) as it loads it. From
 *    shared memory the tensor cores read A's top 19 bits and drop the other 13: A is truncated
 *    (`TruncateTf32`). Rounding A as well would take a pass that reads and writes every A tile
 *    in shared memory once more, 64 KiB per k-tile on top of the 80 KiB that `wgmma` and the
 *    fragment loads read, and shared memory, not the tensor cores, would set the pace.
 * 3. **Tiles.** A block computes 256 rows by 128 columns of C in k-tiles 32 values deep (one
 *    128-byte swizzled row): A's tile 32 KiB, B's 16 KiB (four boxes of 32 columns), four
 *    stages. `m64n256k8`: four instructions per k-tile for each consumer group, which then
 *    waits for all four (`wait_group 0`): `wgmma` reads its register operand while it runs, so
 *    the next tile's fragments may not be loaded before. The other group keeps the tensor cores
 *    busy meanwhile. Bands of 8 tile rows (2048 rows of A) order the blocks.
 * 4. **The epilogue.** Lane l of warp w holds C^T at rows 16w + l / 4 (+ 8) and column pairs
 *    8i + 2(l % 4): in C, 8 consecutive columns of 4 rows per store instruction, 32-byte
 *    segments, stored one float at a time.
 */
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "chapters/04_matmul_global_vs_shared/wgmma.cuh"
#include "chapters/04_matmul_global_vs_shared/wgmma_device.cuh"
#include "common/cuda_check.hpp"
#include "common/launch_support.hpp"

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "wgmma_tf32.cu compiles for sm_90a only (chapters/04_matmul_global_vs_shared/CMakeLists.txt)"
#endif

namespace ch04::tensor::wgmma {
namespace {

constexpr int kBm = 256, kBn = 128, kBk = 32;  // rows, columns of C per block; k per tile
constexpr int kStages = 4;
constexpr int kTileA = kBm * kBk * 4;         // 32 KiB: 256 rows of 128 bytes
constexpr int kBoxB = kBk * 32 * 4;           // one box of B: 32 k × 32 columns, 4 KiB
constexpr int kTileB = kBk * kBn * 4;         // 16 KiB: four boxes
constexpr int kStageBytes = kTileA + kTileB;  // 48 KiB
constexpr int kThreads = 384;                 // warp group 0 produces, 1 and 2 consume
constexpr int kBand = 8;                      // tile rows in a band of the block order
constexpr int kSmem = Ring<kStages, kStageBytes>::kBytes;

/// FP32 bits rounded to TF32, to nearest, ties away from zero (stage 9's rounding).
__device__ __forceinline__ unsigned RoundToTf32(float x) {
  unsigned y;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(y) : "f"(x));
  return y;
}

/// d += A·B for the warp group, m64n256k8 in TF32: A (64×8, a slice of B^T) from the registers
/// @p a, B (8×256, a slice of A^T) from shared memory through the descriptor @p b, K-major.
__device__ __forceinline__ void WgmmaTf32(float (&d)[128], const unsigned (&a)[4],
                                          std::uint64_t b) {
  asm volatile(
      "{\n.reg .pred acc;\nsetp.ne.b32 acc, 1, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " CH04_ACC_LIST
      ", {%128, %129, %130, %131}, %132, acc, 1, 1;\n}\n"
      : CH04_ACC32(0), CH04_ACC32(32), CH04_ACC32(64), CH04_ACC32(96)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

/// This thread's A fragments of one k-tile (four k8 slices of B^T), rounded to TF32: in slice
/// s, rows (columns of B) @p col and @p col + 8 of the thread's box, k = 8s + q and 8s + q + 4,
/// where a box row r (one k) holds its 16-byte chunk j at j ^ (r % 8).
__device__ __forceinline__ void LoadFragments(unsigned (&f)[4][4], const char* box, int col,
                                              int q) {
#pragma unroll
  for (int s = 0; s < kBk / 8; ++s) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = 8 * s + q + 4 * (i / 2), cn = col + 8 * (i % 2);
      const float v = *reinterpret_cast<const float*>(box + r * 128 +
                                                      (((cn >> 2) ^ (r & 7)) << 4) + (cn & 3) * 4);
      f[s][i] = RoundToTf32(v);
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    WgmmaTf32Kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, float* __restrict__ c, int m,
                    int n, int k) {
  extern __shared__ char raw[];
  const Ring<kStages, kStageBytes> ring(raw, 256);  // freed by every consumer thread
  const int2 origin = BandedTile<kBm, kBn, kBand>(m, n);
  const int m0 = origin.x, n0 = origin.y, tiles = (k + kBk - 1) / kBk;
  __syncthreads();
  if (Produce<kBn / 32, 32, kBk, kTileA>(ring, &map_a, &map_b, tiles, m0, n0)) return;
  const int group = threadIdx.x / 128, tid = threadIdx.x % 128;
  const int half = group - 1;  // consumer 0: columns 0-63 of the tile, consumer 1: 64-127
  const int warp = tid / 32, lane = tid % 32;
  // This thread's columns of B (rows of B^T): 64·half + 16·warp + lane / 4, and 8 on, in box
  // (64·half + 16·warp) / 32 at column 16·(warp % 2) + lane / 4.
  const int box = 2 * half + warp / 2, col = 16 * (warp % 2) + lane / 4, q = lane % 4;
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.0f;
  // snippet-begin: ch04-wgmma-tf32-consumer
  for (int t = 0; t < tiles; ++t) {
    ring.WaitFull(t);  // k-tile t has landed
    const char* stage = ring.Stage(t);
    unsigned f[kBk / 8][4];
    LoadFragments(f, stage + kTileA + box * kBoxB, col, q);
    const unsigned a = SmemAddress(stage);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kBk / 8; ++kk) WgmmaTf32(d, f[kk], Descriptor(a + kk * 32, 16, 1024));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    // All of them done before the next tile's loads write f (wgmma reads its register operand
    // while it runs): this group waits, the other consumer group keeps the tensor cores busy.
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    ring.Release(t);
  }
  // snippet-end: ch04-wgmma-tf32-consumer
  // d[4i + 2h + j] is C^T at row 16·warp + lane / 4 + 8h, column 8i + 2·(lane % 4) + j: C at
  // row m0 + 8i + 2·(lane % 4) + j, column n0 + 64·half + 16·warp + lane / 4 + 8h.
  const int col0 = n0 + 64 * half + 16 * warp + lane / 4;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int row = m0 + 8 * i + 2 * (lane % 4) + j;
      if (row >= m) continue;
      float* out = c + static_cast<std::size_t>(row) * n;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        if (col0 + 8 * h < n) out[col0 + 8 * h] = d[4 * i + 2 * h + j];
      }
    }
  }
}

}  // namespace

const void* KernelTf32() { return reinterpret_cast<const void*>(WgmmaTf32Kernel); }

void LaunchTf32(const float* a, const float* b, float* c, int m, int n, int k,
                cudaStream_t stream) {
  const CUtensorMap map_a = TensorMap(a, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, m, k, kBk, kBm);
  const CUtensorMap map_b = TensorMap(b, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, k, n, 32, kBk);
  staged::OptInSharedMemory(KernelTf32(), kSmem);
  const unsigned blocks = static_cast<unsigned>((m + kBm - 1) / kBm) * ((n + kBn - 1) / kBn);
  WgmmaTf32Kernel<<<blocks, kThreads, kSmem, stream>>>(map_a, map_b, c, m, n, k);
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch04::tensor::wgmma
