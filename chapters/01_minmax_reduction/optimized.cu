/**
 * @file optimized.cu
 * @brief Min and max in one pass and one launch, at the memory bandwidth limit.
 *
 * Changes relative to naive.cu:
 * 1. A grid-stride loop sized from the SM count (about as many blocks as fit on the GPU at
 *    once) instead of one thread per element: each thread folds many elements in registers,
 *    and the tree runs once per block instead of once per 256 elements.
 * 2. 16-byte vector loads (`float4`-sized: 4 floats or 2 doubles per load), with a scalar head
 *    up to the first 16-byte boundary and a scalar tail, so any pointer offset works.
 * 3. kUnroll = 4 independent 16-byte loads issued before any is used: 64 bytes in flight per
 *    thread, enough for the HBM latency-bandwidth product with a few blocks per SM.
 * 4. Min and max in registers, then warp shuffles (`__shfl_xor_sync`) instead of the shared
 *    memory tree; shared memory only carries one key pair per warp.
 * 5. One kernel instead of one per pass: the *last block done* pattern (the Czech slides):
 *    each block writes its partial, `__threadfence()`, takes a ticket with `atomicAdd`; the
 *    block that draws the last ticket folds the partials and writes the result. The ticket
 *    counter lives in the caller's scratch and is zeroed just before the kernel on the same
 *    stream, so every call starts from a known counter whatever the scratch held, and calls on
 *    other streams, from other host threads or from graph replays each count in their own
 *    scratch (nothing is shared between calls).
 * 6. The counter's reset costs no time on the critical path: a one-thread kernel zeroes it and,
 *    as its first instruction, lets the main kernel launch (programmatic dependent launch,
 *    Hopper and later); the main kernel waits for the reset only where it takes its ticket,
 *    after it has read and reduced its share of the input. Before sm_90 (or in code compiled
 *    for an older GPU) the two kernels run in plain stream order.
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "chapters/01_minmax_reduction/block_minmax.cuh"
#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/aligned_split.hpp"
#include "common/cuda_check.hpp"
#include "common/launch_support.hpp"
#include "common/resident_grid.hpp"

namespace ch01::optimized {

/// Warps per block.
inline constexpr int kWarps = kBlockSize / 32;

/// Loads @p kElems consecutive elements starting at element `index * kElems` of @p base in one
/// instruction: a 16-byte `ld.global.nc` when kElems * sizeof(T) == 16, a scalar one otherwise.
/// @tparam T element type
/// @tparam kElems elements per load (1, or 16 / sizeof(T))
/// @param[in] base 16-byte aligned when the load is a vector
/// @param[in] index in units of kElems elements
/// @param[out] out the loaded elements
template <typename T, int kElems>
__device__ __forceinline__ void LoadUnit(const T* base, std::size_t index, T (&out)[kElems]) {
  // snippet-begin: ch01-vector-load
  if constexpr (kElems * sizeof(T) == 16) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4*>(base) + index);
    memcpy(out, &raw, 16);  // a register reinterpretation, no memory traffic
  } else {
    static_assert(kElems == 1, "loads are 16 bytes or one element");
    out[0] = __ldg(base + index);
  }
  // snippet-end: ch01-vector-load
}

/// Folds @p x into the running key pair.
/// @tparam T element type
/// @param[in] x element
/// @param[in,out] kmin,kmax running keys
template <typename T>
__device__ __forceinline__ void Fold(T x, KeyOf<T>& kmin, KeyOf<T>& kmax) {
  const KeyOf<T> k = OrderedKey<T>::From(x);
  kmin = KeyMin(kmin, k);
  kmax = KeyMax(kmax, k);
}

/// The single-pass kernel: every thread folds a grid-stride share of the 16-byte vectors in
/// registers, the block combines with shuffles, and the last block to finish combines the
/// blocks' partials and writes the result.
/// @tparam T element type
/// @tparam kElems elements per load: 16 / sizeof(T) (vector loads) or 1 (the scalar stage)
/// @tparam kLoads independent loads per thread per iteration (kUnroll, or 1 for the stages)
/// @param[in] in device input
/// @param[in] head elements before @p in + @p head is 16-byte aligned (< kElems)
/// @param[in] units whole loads of kElems elements after the head
/// @param[in] tail elements after the last whole load (< kElems)
/// @param[out] partial_min,partial_max one key per block (gridDim.x entries each)
/// @param[in,out] tickets the finishing counter (in the caller's scratch): 0 on entry
/// @param[out] result the pair, written by the last block
/// @par Launch configuration
/// `staged::ResidentGrid` blocks (as many as fit on the GPU at once, at most kMaxBlocksPerSm
/// per SM and kMaxGridBlocks in all, never more than there are chunks) of kBlockSize threads.
/// @pre blockDim.x == kBlockSize; gridDim.x <= kMaxGridBlocks; *tickets == 0 once the previous
/// grid of the stream (`ResetTicketKernel`) has finished; head, units, tail from
/// `staged::SplitAt16` (with kElems == 1: head = tail = 0, units = n)
/// @par Traffic
/// n * sizeof(T) bytes read once; 2 keys per block written and read back by the last block.
template <typename T, int kElems, int kLoads>
__global__ void __launch_bounds__(kBlockSize)
    MinMaxSinglePassKernel(const T* __restrict__ in, std::size_t head, std::size_t units,
                           std::size_t tail, KeyOf<T>* partial_min, KeyOf<T>* partial_max,
                           unsigned int* tickets, MinMaxPair<T>* result) {
  using K = OrderedKey<T>;
  using Key = KeyOf<T>;
  __shared__ Key s_min[kWarps];
  __shared__ Key s_max[kWarps];
  __shared__ bool s_is_last;

  // snippet-begin: ch01-grid-stride
  Key kmin = K::kHighest;
  Key kmax = K::kLowest;
  const T* body = in + head;  // 16-byte aligned for vector loads
  // Chunk = the kBlockSize * kLoads units one block reads per iteration; load k of thread t
  // reads unit chunk_start + k * kBlockSize + t, so each of the kLoads loads is coalesced.
  constexpr std::size_t kChunk = static_cast<std::size_t>(kBlockSize) * kLoads;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kChunk;
  std::size_t c = static_cast<std::size_t>(blockIdx.x) * kChunk;
  for (; c + kChunk <= units; c += stride) {  // block-uniform condition: whole chunks only
    T v[kLoads][kElems];
    // Issue every load before using any: kLoads independent requests in flight per thread.
#pragma unroll
    for (int k = 0; k < kLoads; ++k)
      LoadUnit<T, kElems>(body, c + k * kBlockSize + threadIdx.x, v[k]);
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
#pragma unroll
      for (int e = 0; e < kElems; ++e) Fold(v[k][e], kmin, kmax);
    }
  }
  // snippet-end: ch01-grid-stride
  // snippet-begin: ch01-head-tail
  if (c < units) {  // this block's last chunk is partial: guard each load
#pragma unroll
    for (int k = 0; k < kLoads; ++k) {
      const std::size_t u = c + k * kBlockSize + threadIdx.x;
      if (u < units) {
        T v[kElems];
        LoadUnit<T, kElems>(body, u, v);
#pragma unroll
        for (int e = 0; e < kElems; ++e) Fold(v[e], kmin, kmax);
      }
    }
  }
  // Misaligned head and the tail: fewer than kElems elements each, folded by the first threads.
  const std::size_t g = static_cast<std::size_t>(blockIdx.x) * kBlockSize + threadIdx.x;
  if (g < head) Fold(in[g], kmin, kmax);
  if (g < tail) Fold(body[units * kElems + g], kmin, kmax);
  // snippet-end: ch01-head-tail

  // snippet-begin: ch01-ticket
  BlockMinMax<T, kBlockSize>(kmin, kmax, s_min, s_max);
  if (threadIdx.x == 0) {
    partial_min[blockIdx.x] = kmin;
    partial_max[blockIdx.x] = kmax;
    // Make the partial visible device-wide before the ticket says it is there.
    __threadfence();
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Change 6: this grid may have started before the reset grid finished; wait for it (and
    // for its write of 0 to be visible) here, the first use of the counter.
    cudaGridDependencySynchronize();
#endif
    // Tickets 0 .. gridDim.x - 1, one per block: whoever draws the last one knows that every
    // other block has fenced its partial. The counter started at 0 (ResetTicketKernel).
    const unsigned int ticket = atomicAdd(tickets, 1u);
    s_is_last = ticket == gridDim.x - 1;
  }
  // Every thread needs s_is_last; also orders warp 0's reads of s_min/s_max above before the
  // second BlockMinMax below rewrites them.
  __syncthreads();
  if (!s_is_last) return;
  // snippet-end: ch01-ticket

  // snippet-begin: ch01-last-block
  // Last block: every other block's partial is written and fenced. __ldcg reads through L2, where
  // the other SMs' writes are, never a stale L1 line.
  __threadfence();
  kmin = K::kHighest;
  kmax = K::kLowest;
  for (unsigned int b = threadIdx.x; b < gridDim.x; b += kBlockSize) {
    kmin = KeyMin(kmin, __ldcg(partial_min + b));
    kmax = KeyMax(kmax, __ldcg(partial_max + b));
  }
  BlockMinMax<T, kBlockSize>(kmin, kmax, s_min, s_max);
  if (threadIdx.x == 0) *result = PairFromKeys<T>(kmin, kmax);
  // snippet-end: ch01-last-block
}

/// @brief Zeroes the finishing counter of one call (change 6). Its first instruction allows the
///        next grid of the stream, the main kernel, to launch at once; that grid waits for this
///        one to complete only where it takes its ticket.
/// @par Launch configuration
/// <<<1, 1>>> on the call's stream, immediately before `MinMaxSinglePassKernel` (launched with
/// programmatic stream serialization).
/// @param[out] tickets the counter
// snippet-begin: ch01-reset-kernel
__global__ void ResetTicketKernel(unsigned int* tickets) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
  *tickets = 0;
}
// snippet-end: ch01-reset-kernel

namespace {

/// The caller's scratch as the kernel uses it: kMaxGridBlocks min keys, kMaxGridBlocks max keys,
/// then the ticket counter (see `MinMaxTempBytes`).
template <typename T>
struct Scratch {
  KeyOf<T>* partial_min;  ///< one key per block
  KeyOf<T>* partial_max;  ///< one key per block
  unsigned int* tickets;  ///< the finishing counter
};

/// Points the three parts of @p d_temp (at least `MinMaxTempBytes` bytes) at their places.
template <typename T>
Scratch<T> CarveScratch(void* d_temp) {
  auto* partial_min = static_cast<KeyOf<T>*>(d_temp);
  KeyOf<T>* partial_max = partial_min + kMaxGridBlocks;
  return {partial_min, partial_max, reinterpret_cast<unsigned int*>(partial_max + kMaxGridBlocks)};
}

template <typename T, int kElems, int kLoads>
void Launch(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream) {
  if (n == 0) {
    throw std::invalid_argument("ch01::optimized::MinMax: the min/max of 0 elements is undefined");
  }
  staged::RequireAlignedScratch(d_temp, "ch01::optimized::MinMax");
  if (d_temp == nullptr || temp_bytes < MinMaxTempBytes<T>(n)) {
    throw std::invalid_argument("ch01::optimized::MinMax: scratch of " +
                                std::to_string(temp_bytes) + " bytes, needs " +
                                std::to_string(MinMaxTempBytes<T>(n)));
  }
  // The grid maths: head/body/tail around the first 16-byte boundary, then enough blocks to
  // fill the GPU, never more than there are chunks of work (one chunk = what a block reads per
  // loop iteration) and never more than the scratch has partial slots for.
  // snippet-begin: ch01-grid-size
  staged::AlignedSplit split{0, n, 0};
  if (kElems > 1) split = staged::SplitAt16(d_in, n, sizeof(T));
  auto kernel = MinMaxSinglePassKernel<T, kElems, kLoads>;
  const unsigned blocks = std::min<unsigned>(
      staged::ResidentGrid(reinterpret_cast<const void*>(kernel), kBlockSize, 0, split.vectors,
                           static_cast<std::size_t>(kBlockSize) * kLoads, kMaxBlocksPerSm),
      kMaxGridBlocks);
  // snippet-end: ch01-grid-size
  const Scratch<T> scratch = CarveScratch<T>(d_temp);
  // snippet-begin: ch01-pdl-launch
  // The counter starts at 0 for this call whatever the scratch held: the reset grid runs before
  // the kernel takes a ticket (stream order plus cudaGridDependencySynchronize), and a captured
  // graph replays both with the same dependency.
  ResetTicketKernel<<<1, 1, 0, stream>>>(scratch.tickets);
  CUDA_CHECK_LAST_LAUNCH();
  if (!staged::ProgrammaticLaunchAvailable(reinterpret_cast<const void*>(kernel))) {
    // Before sm_90, or code compiled without the wait: plain stream order, the reset finishes
    // before the kernel starts.
    kernel<<<blocks, kBlockSize, 0, stream>>>(d_in, split.head, split.vectors, split.tail,
                                              scratch.partial_min, scratch.partial_max,
                                              scratch.tickets, d_result);
    CUDA_CHECK_LAST_LAUNCH();
    return;
  }
  // Programmatic stream serialization: the kernel may launch as soon as the reset grid signals,
  // so its loads overlap the reset instead of waiting behind a separate launch.
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(kBlockSize);
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, static_cast<const T*>(d_in), split.head,
                                split.vectors, split.tail, scratch.partial_min, scratch.partial_max,
                                scratch.tickets, d_result));
  // snippet-end: ch01-pdl-launch
}

}  // namespace

template <typename T>
std::size_t MinMaxTempBytes(std::size_t /*n*/) {
  // Two keys per block slot, then the 4-byte counter (rounded up to 16 bytes).
  return 2 * static_cast<std::size_t>(kMaxGridBlocks) * sizeof(KeyOf<T>) + 16;
}

template <typename T>
void MinMax(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream) {
  Launch<T, 16 / sizeof(T), kUnroll>(d_in, n, d_result, d_temp, temp_bytes, stream);
}

template <typename T>
void MinMaxStage(Stage stage, const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
                 std::size_t temp_bytes, cudaStream_t stream) {
  // snippet-begin: ch01-stages
  switch (stage) {
    case Stage::kScalarLoads:
      Launch<T, 1, 1>(d_in, n, d_result, d_temp, temp_bytes, stream);
      return;
    case Stage::kVectorLoads:
      Launch<T, 16 / sizeof(T), 1>(d_in, n, d_result, d_temp, temp_bytes, stream);
      return;
    case Stage::kFinal:
      MinMax(d_in, n, d_result, d_temp, temp_bytes, stream);
      return;
  }
  // snippet-end: ch01-stages
  throw std::invalid_argument("ch01::optimized::MinMaxStage: unknown stage");
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
#define CH01_OPTIMIZED_INSTANTIATE(T)                                                            \
  template std::size_t MinMaxTempBytes<T>(std::size_t);                                          \
  template void MinMax<T>(const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t,             \
                          cudaStream_t);                                                         \
  template void MinMaxStage<T>(Stage, const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t, \
                               cudaStream_t);
CH01_OPTIMIZED_INSTANTIATE(float)
CH01_OPTIMIZED_INSTANTIATE(double)
CH01_OPTIMIZED_INSTANTIATE(std::int32_t)
CH01_OPTIMIZED_INSTANTIATE(std::uint32_t)
#undef CH01_OPTIMIZED_INSTANTIATE
/// @endcond

}  // namespace ch01::optimized
