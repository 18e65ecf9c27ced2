/**
 * @file wgmma_device.cuh
 * @brief What stage 10's two kernels (wgmma.cu for BF16 and FP16, wgmma_tf32.cu for TF32) share:
 *        the mbarrier and TMA instructions, the ring of k-tiles with its barriers, the order of
 *        the blocks' tiles and the producer's loop, the `wgmma` shared-memory descriptor, the
 *        accumulator operand lists of an m64n256 instruction, and the host's TMA map. sm_90a code
 *        only: included by those two files, which compile for nothing else.
 */
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace ch04::tensor::wgmma {

/// The shared-memory address (a 32-bit offset in the shared window) of the generic pointer @p p.
__device__ __forceinline__ unsigned SmemAddress(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Initialises the mbarrier @p bar to complete a phase after @p count arrivals.
__device__ __forceinline__ void BarrierInit(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(SmemAddress(bar)), "r"(count));
}

/// The producer's arrival, announcing @p bytes the TMA copies will count in.
__device__ __forceinline__ void BarrierExpectBytes(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(SmemAddress(bar)),
               "r"(bytes)
               : "memory");
}

/// One arrival on @p bar.
__device__ __forceinline__ void BarrierArrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(SmemAddress(bar)) : "memory");
}

/// Waits until the barrier's phase of parity @p parity has completed.
__device__ __forceinline__ void BarrierWait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(SmemAddress(bar)),
      "r"(parity)
      : "memory");
}

/// TMA: the box of @p map at (@p c0 innermost, @p c1) into @p dst, its bytes counted on @p bar.
__device__ __forceinline__ void TmaLoad(void* dst, const CUtensorMap* map, int c0, int c1,
                                        std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(SmemAddress(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(SmemAddress(bar))
      : "memory");
}

/// A wgmma shared-memory descriptor: start address, leading and stride byte offsets (each in
/// units of 16 bytes, 14 bits), 128-byte swizzle (bits 62-63 = 1).
__device__ __forceinline__ std::uint64_t Descriptor(unsigned address, unsigned leading,
                                                    unsigned stride) {
  return static_cast<std::uint64_t>((address & 0x3FFFF) >> 4) |
         static_cast<std::uint64_t>((leading & 0x3FFFF) >> 4) << 16 |
         static_cast<std::uint64_t>((stride & 0x3FFFF) >> 4) << 32 | std::uint64_t{1} << 62;
}

/// Eight of the accumulator operands of an m64n256 `wgmma`, from d[i] on (read and written).
#define CH04_ACC8(i)                                                                    \
  "+f"(d[(i)]), "+f"(d[(i) + 1]), "+f"(d[(i) + 2]), "+f"(d[(i) + 3]), "+f"(d[(i) + 4]), \
      "+f"(d[(i) + 5]), "+f"(d[(i) + 6]), "+f"(d[(i) + 7])
/// Thirty-two of them, from d[i] on.
#define CH04_ACC32(i) CH04_ACC8(i), CH04_ACC8((i) + 8), CH04_ACC8((i) + 16), CH04_ACC8((i) + 24)
/// The instruction's accumulator list, %0 to %127 (d[0] to d[127]).
#define CH04_ACC_LIST                                                                          \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "           \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "           \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "           \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "           \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "           \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "     \
  "%111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, " \
  "%126, %127}"

/// The k-tile ring of a block in dynamic shared memory: @p kStages stages of @p kStageBytes from
/// a 1024-byte boundary (128-byte swizzling repeats every 1024 bytes), then a *full* and an
/// *empty* mbarrier per stage.
template <int kStages, int kStageBytes>
struct Ring {
  /// The bytes to ask for at launch: the stages, 1 KiB to align them, the barriers.
  static constexpr int kBytes = kStages * kStageBytes + 1024 + 2 * kStages * 8;
  char* base;            ///< stage s at base + s * kStageBytes
  std::uint64_t* full;   ///< the producer's arrival plus the copies' bytes: the stage has landed
  std::uint64_t* empty;  ///< every consumer thread's arrival: the stage may be refilled

  /// Lays the ring out in @p raw; thread 0 initialises the barriers (@p consumers threads free a
  /// stage). Every thread constructs it, then the block synchronises before using it.
  __device__ Ring(char* raw, unsigned consumers)
      : base(reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(raw) + 1023) &
                                     ~std::uintptr_t{1023})),
        full(reinterpret_cast<std::uint64_t*>(base + kStages * kStageBytes)),
        empty(full + kStages) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) {
        BarrierInit(&full[s], 1);
        BarrierInit(&empty[s], consumers);
      }
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
  }
  /// The stage of k-tile @p t.
  __device__ char* Stage(int t) const { return base + (t % kStages) * kStageBytes; }
  /// Waits until k-tile @p t has landed in its stage.
  __device__ void WaitFull(int t) const { BarrierWait(&full[t % kStages], (t / kStages) & 1); }
  /// This thread is done with k-tile @p t's stage.
  __device__ void Release(int t) const { BarrierArrive(&empty[t % kStages]); }
};

/// The origin (m0, n0) of the block's tile of @p kBm × @p kBn: the tile rows are taken in bands of
/// @p kBand, and a band column by column (kBand blocks down one column of B, then the next), so
/// the blocks resident at once read few tile rows of A and few tile columns of B.
template <int kBm, int kBn, int kBand>
__device__ __forceinline__ int2 BandedTile(int m, int n) {
  const int tiles_m = (m + kBm - 1) / kBm, band_blocks = kBand * ((n + kBn - 1) / kBn);
  const int band = blockIdx.x / band_blocks, in_band = blockIdx.x % band_blocks;
  const int band_rows = min(kBand, tiles_m - band * kBand);
  return make_int2((band * kBand + in_band % band_rows) * kBm, in_band / band_rows * kBn);
}

/// The producer: warp group 0 (threads 0-127) hands registers to the consumers (`setmaxnreg`, 40
/// each) and its thread 0 loads k-tile t (of @p tiles, @p kBk deep) into stage t % kStages once
/// the consumers have freed it: A's box (kBk × kBm at column t·kBk, row @p m0) at the start of
/// the stage, then @p kBoxes boxes of B (@p kBoxCols columns × kBk rows at column
/// @p n0 + j·kBoxCols, row t·kBk) after @p kTileA bytes, the copies counting their bytes into the
/// stage's full barrier. Returns whether the calling thread is a producer (it then has nothing
/// more to do); the consumers take the registers (`setmaxnreg.inc`, 232 each).
template <int kBoxes, int kBoxCols, int kBk, int kTileA, int kStages, int kStageBytes>
__device__ __forceinline__ bool Produce(const Ring<kStages, kStageBytes>& ring,
                                        const CUtensorMap* map_a, const CUtensorMap* map_b,
                                        int tiles, int m0, int n0) {
  constexpr int kBoxBytes = (kStageBytes - kTileA) / kBoxes;
  if (threadIdx.x >= 128) {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
    return false;
  }
  asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
  if (threadIdx.x != 0) return true;
  // snippet-begin: ch04-wgmma-producer
  for (int t = 0; t < tiles; ++t) {
    const int s = t % kStages;
    if (t >= kStages) BarrierWait(&ring.empty[s], (t / kStages - 1) & 1);  // stage s is free
    char* a = ring.Stage(t);
    BarrierExpectBytes(&ring.full[s], kStageBytes);
    TmaLoad(a, map_a, t * kBk, m0, &ring.full[s]);
    for (int j = 0; j < kBoxes; ++j)
      TmaLoad(a + kTileA + j * kBoxBytes, map_b, n0 + kBoxCols * j, t * kBk, &ring.full[s]);
  }
  // snippet-end: ch04-wgmma-producer
  return true;
}

/// @brief A TMA map of a row-major @p rows × @p cols matrix of @p type (elements of
///        @p elem_bytes bytes), boxes of @p box_cols × @p box_rows, 128-byte swizzle, zeros
///        past the edges. @throws staged::CudaError where the driver refuses it
CUtensorMap TensorMap(const void* base, CUtensorMapDataType type, int elem_bytes, int rows,
                      int cols, int box_cols, int box_rows);

}  // namespace ch04::tensor::wgmma
