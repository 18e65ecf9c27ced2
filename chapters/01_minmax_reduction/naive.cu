/**
 * @file naive.cu
 * @brief The Polish report's two-kernel min/max reduction, corrected.
 *
 * The Polish report (Rynkiewicz & Daszuta, 2018) finds min and max together with a shared-memory tree
 * that uses *sequential addressing* (the stride halves each step, active threads stay
 * contiguous): `seq_minmaxKernel` reduces one element per thread per block, then
 * `seq_finalminmaxKernel`, launched with one block, reduces the block results. Corrections:
 * 1. Any n >= 1: threads past the end load the identity (the Polish report read out of bounds unless n
 *    was a power of two and the block count equalled the block size).
 * 2. As many passes over the block results as needed (the Polish report's second kernel could only
 *    fold as many block results as it had threads).
 * 3. `if (tid == 0)` where the Polish report wrote `if (tid = 0)` (an assignment: thread 0's write became
 *    "never", and every other thread's tid was overwritten).
 * 4. Comparisons through the order-preserving key (minmax.cuh), so -0.0/+0.0 and NaN follow
 *    the chapter's policy like every other variant.
 */
#include <stdexcept>
#include <string>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/aligned_split.hpp"
#include "common/cuda_check.hpp"

namespace ch01::naive {

/// The Polish report's tree over one block's keys in shared memory, sequential addressing: at each step
/// thread `tid < s` folds element `tid + s` into element `tid`; afterwards element 0 holds the
/// block's min (in @p s_min) and max (in @p s_max).
/// @tparam K key type
/// @param[in,out] s_min,s_max kBlockSize keys each, filled and synchronised by the caller
template <typename K>
__device__ void SequentialTree(K* s_min, K* s_max) {
  // snippet-begin: ch01-naive-tree
  const unsigned tid = threadIdx.x;
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    // Threads 0..s-1 are contiguous, so whole warps retire together and the reads of
    // tid and tid + s hit consecutive words: no divergence inside a warp, no bank conflicts.
    if (tid < s) {
      s_min[tid] = KeyMin(s_min[tid], s_min[tid + s]);
      s_max[tid] = KeyMax(s_max[tid], s_max[tid + s]);
    }
    // The next step reads what this step wrote in other threads' slots.
    __syncthreads();
  }
  // snippet-end: ch01-naive-tree
}

/// Writes the block's result: the final pair when this is the last pass (@p result not null),
/// else the block's partial keys (thread 0 only).
/// @tparam T element type
/// @param[in] s_min,s_max the block's reduced keys (element 0)
/// @param[out] out_min,out_max partial keys, indexed by block
/// @param[out] result the final pair, or null
template <typename T>
__device__ void WriteBlockResult(const KeyOf<T>* s_min, const KeyOf<T>* s_max, KeyOf<T>* out_min,
                                 KeyOf<T>* out_max, MinMaxPair<T>* result) {
  if (threadIdx.x == 0) {  // the Polish report's `if (tid = 0)`, corrected
    if (result != nullptr) {
      *result = PairFromKeys<T>(s_min[0], s_max[0]);
    } else {
      out_min[blockIdx.x] = s_min[0];
      out_max[blockIdx.x] = s_max[0];
    }
  }
}

/// First pass (the Polish report's `seq_minmaxKernel`): block b reduces elements
/// [b * kBlockSize, (b + 1) * kBlockSize) of the input, one element per thread.
/// @tparam T element type
/// @param[in] in device input
/// @param[in] n elements
/// @param[out] out_min,out_max one key per block (unused when @p result is set)
/// @param[out] result the final pair, written when the grid has one block, else null
/// @par Launch configuration
/// `ceil(n / kBlockSize)` blocks of kBlockSize threads.
/// @pre blockDim.x == kBlockSize (a power of two)
/// @par Traffic
/// n * sizeof(T) bytes read, 2 keys per block written.
template <typename T>
__global__ void MinMaxSequentialKernel(const T* in, std::size_t n, KeyOf<T>* out_min,
                                       KeyOf<T>* out_max, MinMaxPair<T>* result) {
  using K = OrderedKey<T>;
  __shared__ KeyOf<T> s_min[kBlockSize];
  __shared__ KeyOf<T> s_max[kBlockSize];
  // snippet-begin: ch01-naive-load
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Threads past the end hold the identities, so n need not be a multiple of the block.
  const KeyOf<T> k = K::From(i < n ? in[i] : T{});
  s_min[threadIdx.x] = i < n ? k : K::kHighest;
  s_max[threadIdx.x] = i < n ? k : K::kLowest;
  // The tree reads other threads' slots.
  __syncthreads();
  SequentialTree(s_min, s_max);
  WriteBlockResult<T>(s_min, s_max, out_min, out_max, result);
  // snippet-end: ch01-naive-load
}

/// Later passes (the Polish report's `seq_finalminmaxKernel`, generalised): block b folds block results
/// [b * kBlockSize, (b + 1) * kBlockSize) of the previous pass.
/// @tparam T element type
/// @param[in] in_min,in_max the previous pass's keys
/// @param[in] n number of keys in each
/// @param[out] out_min,out_max one key per block (unused when @p result is set)
/// @param[out] result the final pair, written when the grid has one block, else null
/// @par Launch configuration
/// `ceil(n / kBlockSize)` blocks of kBlockSize threads.
/// @pre blockDim.x == kBlockSize
template <typename T>
__global__ void MinMaxSequentialPartialsKernel(const KeyOf<T>* in_min, const KeyOf<T>* in_max,
                                               std::size_t n, KeyOf<T>* out_min, KeyOf<T>* out_max,
                                               MinMaxPair<T>* result) {
  using K = OrderedKey<T>;
  __shared__ KeyOf<T> s_min[kBlockSize];
  __shared__ KeyOf<T> s_max[kBlockSize];
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  s_min[threadIdx.x] = i < n ? in_min[i] : K::kHighest;
  s_max[threadIdx.x] = i < n ? in_max[i] : K::kLowest;
  __syncthreads();
  SequentialTree(s_min, s_max);
  WriteBlockResult<T>(s_min, s_max, out_min, out_max, result);
}

namespace {

std::size_t Blocks(std::size_t n) { return (n + kBlockSize - 1) / kBlockSize; }

/// Byte offset of the second ping-pong buffer (256-byte aligned).
template <typename T>
std::size_t SecondBufferOffset(std::size_t n) {
  return (2 * Blocks(n) * sizeof(KeyOf<T>) + 255) / 256 * 256;
}

}  // namespace

std::size_t PassCount(std::size_t n) {
  std::size_t passes = 1;
  for (std::size_t m = Blocks(n); m > 1; m = Blocks(m)) ++passes;
  return passes;
}

template <typename T>
std::size_t MinMaxTempBytes(std::size_t n) {
  if (n <= static_cast<std::size_t>(kBlockSize)) return 0;
  // Pass 1 writes buffer A (Blocks(n) keys per half); pass 2 writes buffer B
  // (Blocks(Blocks(n))); later passes alternate and only need less.
  return SecondBufferOffset<T>(n) + 2 * Blocks(Blocks(n)) * sizeof(KeyOf<T>);
}

template <typename T>
void MinMax(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream) {
  using Key = KeyOf<T>;
  if (n == 0)
    throw std::invalid_argument("ch01::naive::MinMax: the min/max of 0 elements is undefined");
  staged::RequireAlignedScratch(d_temp, "ch01::naive::MinMax");
  if (temp_bytes < MinMaxTempBytes<T>(n)) {
    throw std::invalid_argument("ch01::naive::MinMax: scratch of " + std::to_string(temp_bytes) +
                                " bytes, needs " + std::to_string(MinMaxTempBytes<T>(n)));
  }
  auto* bytes = static_cast<unsigned char*>(d_temp);
  Key* buf[2] = {reinterpret_cast<Key*>(bytes),
                 reinterpret_cast<Key*>(bytes + (n > kBlockSize ? SecondBufferOffset<T>(n) : 0))};
  // snippet-begin: ch01-naive-passes
  std::size_t blocks = Blocks(n);
  // Pass 1 over the input; a single block writes the answer directly.
  MinMaxSequentialKernel<T><<<static_cast<unsigned>(blocks), kBlockSize, 0, stream>>>(
      d_in, n, buf[0], blocks == 1 ? nullptr : buf[0] + blocks, blocks == 1 ? d_result : nullptr);
  CUDA_CHECK_LAST_LAUNCH();
  // Further passes until one block remains, alternating the two buffers.
  for (int src = 0; blocks > 1; src ^= 1) {
    const std::size_t m = blocks;
    blocks = Blocks(m);
    Key* in = buf[src];
    Key* out = buf[src ^ 1];
    MinMaxSequentialPartialsKernel<T><<<static_cast<unsigned>(blocks), kBlockSize, 0, stream>>>(
        in, in + m, m, out, out + blocks, blocks == 1 ? d_result : nullptr);
    CUDA_CHECK_LAST_LAUNCH();
  }
  // snippet-end: ch01-naive-passes
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
#define CH01_NAIVE_INSTANTIATE(T)                       \
  template std::size_t MinMaxTempBytes<T>(std::size_t); \
  template void MinMax<T>(const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t, cudaStream_t);
CH01_NAIVE_INSTANTIATE(float)
CH01_NAIVE_INSTANTIATE(double)
CH01_NAIVE_INSTANTIATE(std::int32_t)
CH01_NAIVE_INSTANTIATE(std::uint32_t)
#undef CH01_NAIVE_INSTANTIATE
/// @endcond

}  // namespace ch01::naive
