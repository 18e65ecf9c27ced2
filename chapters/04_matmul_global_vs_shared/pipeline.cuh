/**
 * @file pipeline.cuh
 * @brief The `cp.async` pipeline that brings the k-tiles of one block tile from global to shared
 *        memory while an earlier tile is multiplied: stage 6's smaller tiles (pipeline.cu, 8-deep
 *        tiles in three buffers) and stage 8's stream-K blocks (streamk.cu, 16-deep tiles in
 *        two buffers).
 *
 * No register holds a tile in flight (the copy goes straight to shared memory), so ptxas has no
 * load to move among the FFMAs, whatever the register cap. A is stored transposed: each thread
 * copies single floats (4-byte `cp.async`), kDepth lanes per row of A, so a warp's copies land in
 * 32 different banks. B is copied as it is, 16 bytes at a time when its rows are aligned, else
 * float by float. Elements outside the matrix are zero-filled by the copy itself (source size 0).
 * Compiled for a GPU without `cp.async` (sm_75), the same copies run synchronously
 * (common/async_copy.cuh): the pipeline stays correct, and each tile's loads are not
 * hidden behind the previous tile's FFMAs.
 */
#pragma once

#include "chapters/04_matmul_global_vs_shared/tile_loads.cuh"
#include "common/async_copy.cuh"

namespace ch04::optimized::detail {

/**
 * @brief Sets @p acc to the product of rows m0.. of A and columns n0.. of B over k in
 *        [k_begin, k_end): a thread's 8×8 outputs (rows 4·(t / (kBn/8)) + {0, kBm/2} + 0..3, columns
 *        4·(t % (kBn/8)) + {0, kBn/2} + 0..3 of the kBm×kBn tile, stage 3's layout), the
 *        k-tiles coming through a kStages-deep `cp.async` pipeline.
 * @tparam kBm rows of the block tile (64 or 128)
 * @tparam kBn columns of the block tile (64 or 128)
 * @tparam kDepth k per tile (8 or 16)
 * @tparam kStages shared buffers: kStages - 1 tiles in flight while one is multiplied
 * @tparam kVecN rows of B are 16-byte aligned (N % 4 == 0): 16-byte copies of B
 * @tparam kChecked false when the block tile is whole and k_end - k_begin a multiple of kDepth
 * @param[in] a M×K row-major
 * @param[in] b K×N row-major
 * @param[in] m rows of A
 * @param[in] n columns of B
 * @param[in] k columns of A, rows of B
 * @param[in] m0 first row of the block tile
 * @param[in] n0 first column of the block tile
 * @param[in] k_begin first k of the range
 * @param[in] k_end one past the last k of the range
 * @param a_tile kStages shared buffers of the transposed A tile
 * @param b_tile kStages shared buffers of the B tile
 * @param[out] acc the thread's outputs
 * @pre blockDim.x == kBm·kBn/64; every thread of the block calls it; it returns with no copy
 *      outstanding, but without a barrier (a caller that reuses the buffers syncs first).
 */
template <int kBm, int kBn, int kDepth, int kStages, bool kVecN, bool kChecked>
__device__ __forceinline__ void PipelineProduct(const float* __restrict__ a,
                                                const float* __restrict__ b, int m, int n, int k,
                                                int m0, int n0, int k_begin, int k_end,
                                                float (*a_tile)[kDepth][kBm + kPadA],
                                                float (*b_tile)[kDepth][kBn], float (&acc)[8][8]) {
  constexpr int kThreads = kBm * kBn / 64;
  const int k_tiles = (k_end - k_begin + kDepth - 1) / kDepth;
  const int row0 = (threadIdx.x / (kBn / 8)) * 4;
  const int col0 = (threadIdx.x % (kBn / 8)) * 4;
  // snippet-begin: ch04-pipeline-issue
  // A thread's copies of A: column a_col of rows a_row, a_row + kARowStep, ...; of B: columns
  // b_col .. b_col + kWidth - 1 of rows b_row, b_row + kBRowStep, ... (each tile row is whole
  // lanes, so the column stays the same: only a pointer advances per copy).
  constexpr int kWidth = kVecN ? 4 : 1;  // floats per copy of B
  constexpr int kARowStep = kThreads / kDepth, kBRowStep = kThreads / (kBn / kWidth);
  static_assert(kThreads % kDepth == 0 && kThreads % (kBn / kWidth) == 0, "whole rows per step");
  // kDepth lanes read one row's k-tile (32 or 64 contiguous bytes).
  const int a_row = threadIdx.x / kDepth, a_col = threadIdx.x % kDepth;
  const int b_row = threadIdx.x / (kBn / kWidth), b_col = (threadIdx.x % (kBn / kWidth)) * kWidth;
  // The thread's first element of A and of B in k-tile 0; tile t is t·kDepth columns of A and
  // t·kDepth rows of B further on.
  const float* a_first = a + static_cast<std::size_t>(m0 + a_row) * k + k_begin + a_col;
  const float* b_first = b + static_cast<std::size_t>(k_begin + b_row) * n + n0 + b_col;
  // Starts the copies of k-tile t into buffer t % kStages (nothing past the last tile), then
  // closes a commit group: group t holds tile t, so waiting for all but the newest kStages - 2
  // groups leaves tile t complete.
  const auto issue = [&](int t) {
    if (t < k_tiles) {
      const int k0 = k_begin + t * kDepth, s = t % kStages;
      const float* src = a_first + t * kDepth;
#pragma unroll
      for (int i = 0; i < kBm / kARowStep; ++i) {  // A, float by float, transposed
        const int r = a_row + i * kARowStep;
        const bool in = !kChecked || (m0 + r < m && k0 + a_col < k);
        staged::CopyToSharedOrZero<4>(&a_tile[s][a_col][r], in ? src : a, in);
        src += static_cast<std::size_t>(kARowStep) * k;
      }
      src = b_first + static_cast<std::size_t>(t) * kDepth * n;
#pragma unroll
      for (int i = 0; i < kDepth / kBRowStep; ++i) {
        const int r = b_row + i * kBRowStep;
        // N % 4 == 0 when kVecN: a vector that starts inside a row ends inside it.
        const bool in = !kChecked || (k0 + r < k && n0 + b_col < n);
        staged::CopyToSharedOrZero<4 * kWidth>(&b_tile[s][r][b_col], in ? src : b, in);
        src += static_cast<std::size_t>(kBRowStep) * n;
      }
    }
    staged::CommitCopies();
  };
  // snippet-end: ch04-pipeline-issue

  // snippet-begin: ch04-pipeline-loop
#pragma unroll
  for (int i = 0; i < 8; ++i) {
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;
  }
#pragma unroll
  for (int t = 0; t < kStages - 1; ++t) issue(t);  // prologue: tiles 0 .. kStages-2 in flight
  for (int t = 0; t < k_tiles; ++t) {
    staged::WaitCopies<kStages - 2>();  // this thread's tile t is in
    __syncthreads();         // every thread's copies of tile t are in; tile t-1 is no longer read
    issue(t + kStages - 1);  // into the buffer of tile t-1
    const int s = t % kStages;
#pragma unroll
    for (int p = 0; p < kDepth; ++p) {
      float a_frag[8], b_frag[8];
      LoadFragment<2>(a_tile[s][p], row0, kBm / 2, a_frag);
      LoadFragment<2>(b_tile[s][p], col0, kBn / 2, b_frag);
      OuterProduct(a_frag, b_frag, acc);
    }
  }
  staged::WaitCopies<0>();  // no copy outlives the block (the last are empty)
  // snippet-end: ch04-pipeline-loop
}

}  // namespace ch04::optimized::detail
