/**
 * @file library.cu
 * @brief The baseline: CUB `DeviceReduce::TransformReduce` over (min, max) key pairs, one call.
 *
 * Changes relative to naive.cu:
 * 1. The whole reduction is CUB's (its tuned tiles, vector loads and two-kernel scheme).
 * 2. CUB reads the raw input pointer and turns each element into the pair (key, key) after the
 *    load (`TransformReduce`'s transform), so its vector loads stay on: behind a transform
 *    iterator CUB would see an iterator, not a pointer, and load one element at a time. A
 *    custom operator folds pairs; a transform output iterator applies the NaN policy while CUB
 *    stores the result. One pass over the data, as for the other variants.
 *
 * CUB at its best: CUB picks its offset type, and with it its tuning, from the type of the item
 * count, and neither width is the faster at every size (64-bit offsets cost registers and index
 * arithmetic, yet the 64-bit instantiation is tuned differently). So there are two calls, the
 * count as 32 bits where n fits (`MinMax`, row `library:cub`) and as 64 bits (`MinMaxCount64`,
 * row `library:cub-count64`); the driver times both and compares with the faster. The scratch
 * is allocated once by the caller, outside any timed region.
 */
#include <thrust/iterator/transform_output_iterator.h>

#include <algorithm>
#include <cstdint>
#include <cub/device/device_reduce.cuh>
#include <stdexcept>
#include <string>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/aligned_split.hpp"
#include "common/cuda_check.hpp"

namespace ch01::library {

/// Maps an element to the key pair (key, key): the transform CUB applies after each load.
/// @tparam T element type
template <typename T>
struct ToKeyPair {
  /// @param[in] x element
  __host__ __device__ MinMaxPair<KeyOf<T>> operator()(T x) const {
    const KeyOf<T> k = OrderedKey<T>::From(x);
    return {k, k};
  }
};

/// The custom reduction operator: min of the mins, max of the maxes (associative, commutative).
/// @tparam K key type
template <typename K>
struct MinMaxOp {
  /// @param[in] a,b partial pairs
  __host__ __device__ MinMaxPair<K> operator()(const MinMaxPair<K>& a,
                                               const MinMaxPair<K>& b) const {
    return {KeyMin(a.min, b.min), KeyMax(a.max, b.max)};
  }
};

/// Turns the reduced key pair into the result (applies the NaN policy).
/// @tparam T element type
template <typename T>
struct FromKeyPair {
  /// @param[in] k the reduced keys
  __host__ __device__ MinMaxPair<T> operator()(const MinMaxPair<KeyOf<T>>& k) const {
    return PairFromKeys<T>(k.min, k.max);
  }
};

namespace {

/// Calls CUB: with @p d_temp null it only stores the scratch size in @p temp_bytes. The count's
/// type (`std::uint32_t` or `std::uint64_t`) is the offset type CUB uses.
template <typename T, typename Count>
cudaError_t Reduce(void* d_temp, std::size_t& temp_bytes, const T* d_in, Count n,
                   MinMaxPair<T>* d_result, cudaStream_t stream) {
  using Key = KeyOf<T>;
  // snippet-begin: ch01-cub-call
  auto out = thrust::make_transform_output_iterator(d_result, FromKeyPair<T>{});
  const MinMaxPair<Key> init{OrderedKey<T>::kHighest, OrderedKey<T>::kLowest};
  return cub::DeviceReduce::TransformReduce(d_temp, temp_bytes, d_in, out, n, MinMaxOp<Key>{},
                                            ToKeyPair<T>{}, init, stream);
  // snippet-end: ch01-cub-call
}

/// Checks the arguments, then reduces with the count as @p Count.
template <typename T, typename Count>
void Run(const char* who, const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
         std::size_t temp_bytes, cudaStream_t stream) {
  if (n == 0) {
    throw std::invalid_argument(std::string(who) + ": the min/max of 0 elements is undefined");
  }
  staged::RequireAlignedScratch(d_temp, who);
  CUDA_CHECK(Reduce<T>(d_temp, temp_bytes, d_in, static_cast<Count>(n), d_result, stream));
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace

template <typename T>
std::size_t MinMaxTempBytes(std::size_t n) {
  const std::size_t count = n > 0 ? n : 1;
  std::size_t narrow = 0;
  std::size_t wide = 0;
  if (NarrowCountHolds(count)) {
    CUDA_CHECK(Reduce<T>(nullptr, narrow, static_cast<const T*>(nullptr),
                         static_cast<std::uint32_t>(count), nullptr, nullptr));
  }
  CUDA_CHECK(Reduce<T>(nullptr, wide, static_cast<const T*>(nullptr),
                       static_cast<std::uint64_t>(count), nullptr, nullptr));
  return std::max(narrow, wide);
}

template <typename T>
void MinMax(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream) {
  if (NarrowCountHolds(n)) {
    Run<T, std::uint32_t>("ch01::library::MinMax", d_in, n, d_result, d_temp, temp_bytes, stream);
  } else {
    Run<T, std::uint64_t>("ch01::library::MinMax", d_in, n, d_result, d_temp, temp_bytes, stream);
  }
}

template <typename T>
void MinMaxCount64(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
                   std::size_t temp_bytes, cudaStream_t stream) {
  Run<T, std::uint64_t>("ch01::library::MinMaxCount64", d_in, n, d_result, d_temp, temp_bytes,
                        stream);
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
#define CH01_LIBRARY_INSTANTIATE(T)                                                         \
  template std::size_t MinMaxTempBytes<T>(std::size_t);                                     \
  template void MinMax<T>(const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t,        \
                          cudaStream_t);                                                    \
  template void MinMaxCount64<T>(const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t, \
                                 cudaStream_t);
CH01_LIBRARY_INSTANTIATE(float)
CH01_LIBRARY_INSTANTIATE(double)
CH01_LIBRARY_INSTANTIATE(std::int32_t)
CH01_LIBRARY_INSTANTIATE(std::uint32_t)
#undef CH01_LIBRARY_INSTANTIATE
/// @endcond

}  // namespace ch01::library
