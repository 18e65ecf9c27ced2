/**
 * @file minmax.cuh
 * @brief Chapter 01 contract: the (min, max) pair, the order every variant agrees on, the CPU
 *        reference, and the launchers of the naive, optimized and library variants.
 *
 * One signature for every GPU variant, so one process can time them side by side and one test
 * body can run against all of them:
 * @code
 * std::size_t bytes = ch01::optimized::MinMaxTempBytes<float>(n);
 * staged::DeviceBuffer<unsigned char> d_temp(bytes);
 * ch01::optimized::MinMax(d_in, n, d_result, d_temp.data(), bytes, stream);
 * @endcode
 *
 * @par Order, NaN and signed zero (the policy of every variant, GPU and CPU)
 * Values are compared through their *order-preserving integer image* (`OrderedKey`): for
 * floating point, `-inf < ... < -0.0 < +0.0 < ... < +inf`, so the minimum of {-0.0, +0.0} is
 * -0.0 and the maximum is +0.0, whatever their positions. NaN *propagates*: if any element is a
 * NaN (of either sign, any payload), both `min` and `max` of the result are the canonical quiet
 * NaN (`std::numeric_limits<T>::quiet_NaN()`). Integers compare as integers.
 * `n == 0` is a usage error: the minimum of nothing is undefined (launchers throw
 * `std::invalid_argument`).
 *
 * @par Scratch
 * Every launcher takes its device scratch `d_temp` from the caller, 16-byte aligned
 * (`staged::kScratchAlignment`: the scratch holds 8-byte keys of double and the finishing
 * counter). `cudaMalloc`'s pointers are; a piece of a larger buffer must start at a multiple of
 * 16 bytes. A misaligned `d_temp` is refused with `staged::UsageError` before anything is queued.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ch01 {

/// The result of every variant: the smallest and the largest element.
/// @tparam T element type (float, double, int32_t or uint32_t)
template <typename T>
struct MinMaxPair {
  T min;  ///< smallest element (NaN when any element is NaN)
  T max;  ///< largest element (NaN when any element is NaN)
};

/// Reinterprets the bits of @p from as a `To` of the same size (host and device).
/// @tparam To destination type
/// @tparam From source type
/// @param[in] from the value whose bits are copied
template <typename To, typename From>
__host__ __device__ __forceinline__ To BitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "BitCast needs types of one size");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}

/// The order-preserving integer image of a value ("key"): `a < b` in the order of the policy
/// above exactly when `OrderedKey<T>::From(a) < OrderedKey<T>::From(b)` as integers.
///
/// For IEEE floats the non-negative values already order like their bit patterns; negative
/// values order backwards, so their 31 (63) magnitude bits are flipped and the sign bit keeps
/// them below every non-negative key. -0.0 maps to -1 and +0.0 to 0. Positive NaNs land above
/// +inf and negative NaNs below -inf, which is how a reduction over keys notices a NaN.
/// @tparam T element type
template <typename T>
struct OrderedKey;

/// Keys of float: signed 32-bit.
template <>
struct OrderedKey<float> {
  using Key = std::int32_t;                        ///< the integer image
  static constexpr Key kLowest = INT32_MIN;        ///< identity of max (a NaN's key)
  static constexpr Key kHighest = INT32_MAX;       ///< identity of min
  static constexpr Key kNegInf = -1 - 0x7F800000;  ///< key of -inf
  static constexpr Key kPosInf = 0x7F800000;       ///< key of +inf
  /// The key of @p x.
  // snippet-begin: ch01-ordered-key
  static __host__ __device__ __forceinline__ Key From(float x) {
    const Key b = BitCast<Key>(x);
    // b >> 31 is 0 or -1 (arithmetic shift): flips the magnitude bits of negatives only.
    return b ^ ((b >> 31) & 0x7FFFFFFF);
  }
  // snippet-end: ch01-ordered-key
  /// The value whose key is @p k (the mapping is its own inverse).
  static __host__ __device__ __forceinline__ float To(Key k) {
    return BitCast<float>(k ^ ((k >> 31) & 0x7FFFFFFF));
  }
  /// The canonical quiet NaN.
  static __host__ __device__ __forceinline__ float QuietNaN() {
    return BitCast<float>(std::uint32_t{0x7FC00000u});
  }
};

/// Keys of double: signed 64-bit.
template <>
struct OrderedKey<double> {
  using Key = std::int64_t;                                  ///< the integer image
  static constexpr Key kLowest = INT64_MIN;                  ///< identity of max
  static constexpr Key kHighest = INT64_MAX;                 ///< identity of min
  static constexpr Key kNegInf = -1 - 0x7FF0000000000000LL;  ///< key of -inf
  static constexpr Key kPosInf = 0x7FF0000000000000LL;       ///< key of +inf
  /// The key of @p x.
  static __host__ __device__ __forceinline__ Key From(double x) {
    const Key b = BitCast<Key>(x);
    return b ^ ((b >> 63) & 0x7FFFFFFFFFFFFFFFLL);
  }
  /// The value whose key is @p k.
  static __host__ __device__ __forceinline__ double To(Key k) {
    return BitCast<double>(k ^ ((k >> 63) & 0x7FFFFFFFFFFFFFFFLL));
  }
  /// The canonical quiet NaN.
  static __host__ __device__ __forceinline__ double QuietNaN() {
    return BitCast<double>(std::uint64_t{0x7FF8000000000000ull});
  }
};

/// Keys of an integer type: the value itself (no NaN, so the infinities are the extremes).
/// @tparam I int32_t or uint32_t
template <typename I>
struct IntegerKey {
  using Key = I;                                                        ///< the integer image
  static constexpr Key kLowest = I(0) < I(-1) ? I(0) : I(INT32_MIN);    ///< identity of max
  static constexpr Key kHighest = I(0) < I(-1) ? I(-1) : I(INT32_MAX);  ///< identity of min
  static constexpr Key kNegInf = kLowest;                               ///< no key lies below it
  static constexpr Key kPosInf = kHighest;                              ///< no key lies above it
  /// The key of @p x (itself).
  static __host__ __device__ __forceinline__ Key From(I x) { return x; }
  /// The value of @p k (itself).
  static __host__ __device__ __forceinline__ I To(Key k) { return k; }
  /// Integers have no NaN; never called for them.
  static __host__ __device__ __forceinline__ I QuietNaN() { return I(0); }
};

/// Keys of int32_t.
template <>
struct OrderedKey<std::int32_t> : IntegerKey<std::int32_t> {};
/// Keys of uint32_t.
template <>
struct OrderedKey<std::uint32_t> : IntegerKey<std::uint32_t> {};

/// The key type of @p T.
/// @tparam T element type
template <typename T>
using KeyOf = typename OrderedKey<T>::Key;

/// Smaller of two keys.
/// @tparam K key type
/// @param[in] a,b keys
template <typename K>
__host__ __device__ __forceinline__ K KeyMin(K a, K b) {
  return b < a ? b : a;
}
/// Larger of two keys.
/// @tparam K key type
/// @param[in] a,b keys
template <typename K>
__host__ __device__ __forceinline__ K KeyMax(K a, K b) {
  return a < b ? b : a;
}

/// Turns the reduced keys into the result, applying the NaN policy: a key below -inf or above
/// +inf can only come from a NaN, and then both halves are NaN.
/// @tparam T element type
/// @param[in] kmin smallest key over the input (n >= 1)
/// @param[in] kmax largest key over the input
template <typename T>
__host__ __device__ __forceinline__ MinMaxPair<T> PairFromKeys(KeyOf<T> kmin, KeyOf<T> kmax) {
  // snippet-begin: ch01-pair-from-keys
  using K = OrderedKey<T>;
  if constexpr (std::is_floating_point_v<T>) {
    if (kmin < K::kNegInf || kmax > K::kPosInf) return {K::QuietNaN(), K::QuietNaN()};
  }
  return {K::To(kmin), K::To(kmax)};
  // snippet-end: ch01-pair-from-keys
}

/// CPU reference.
namespace cpu {
/// `std::minmax_element` under the key order, then the NaN policy. Throws
/// `std::invalid_argument` for @p n == 0.
/// @tparam T element type
/// @param[in] data host array of @p n elements
/// @param[in] n number of elements, >= 1
template <typename T>
MinMaxPair<T> MinMax(const T* data, std::size_t n);
}  // namespace cpu

// The naive, optimized and library namespaces below declare the same launchers on purpose: one
// signature per variant, so one test body and one driver run them all.
/// The Polish report's algorithm, corrected: a shared-memory tree with sequential addressing, one
/// element per thread, then as many passes over the block results as needed.
namespace naive {
/// Threads per block of every pass.
inline constexpr int kBlockSize = 256;
/// Number of passes for @p n elements (1 when n <= kBlockSize).
/// @param[in] n elements, >= 1
std::size_t PassCount(std::size_t n);
/// Bytes of device scratch `MinMax` needs for @p n elements (0 when one pass suffices).
/// @tparam T element type
/// @param[in] n elements
template <typename T>
std::size_t MinMaxTempBytes(std::size_t n);
/// Writes the min and max of @p d_in[0, n) to @p d_result (device memory), asynchronously.
/// @tparam T element type
/// @param[in] d_in device input, aligned to sizeof(T)
/// @param[in] n elements, >= 1 (throws `std::invalid_argument` otherwise)
/// @param[out] d_result device pointer to one pair
/// @param[in] d_temp device scratch of at least `MinMaxTempBytes<T>(n)` bytes, 16-byte aligned
///            (any contents; checked: `staged::UsageError` otherwise)
/// @param[in] temp_bytes size of @p d_temp (checked)
/// @param[in] stream stream to queue on
template <typename T>
void MinMax(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream);
}  // namespace naive

/// One pass, one kernel: 16-byte loads, min and max in registers, warp shuffles, last block done.
namespace optimized {
/// Threads per block.
inline constexpr int kBlockSize = 256;
/// 16-byte loads each thread keeps in flight per loop iteration.
inline constexpr int kUnroll = 4;
/// Upper bound of the grid (so the scratch is a small constant; `staged::ResidentGrid` asks for
/// fewer on any GPU with at most kMaxGridBlocks / kMaxBlocksPerSm SMs).
inline constexpr int kMaxGridBlocks = 2048;
/// Upper bound of resident blocks per SM the launcher asks for.
inline constexpr int kMaxBlocksPerSm = 8;

/// Bytes of device scratch `MinMax` needs (a constant: kMaxGridBlocks partial key pairs and the
/// finishing counter).
/// @tparam T element type
/// @param[in] n elements (unused: the scratch does not grow with n)
template <typename T>
std::size_t MinMaxTempBytes(std::size_t n);
/// One kernel: writes the min and max of @p d_in[0, n) to @p d_result, asynchronously.
///
/// Queues two kernels on @p stream: a one-thread kernel that zeroes the finishing counter inside
/// @p d_temp, then the single-pass kernel. On sm_90 and newer, when the kernel's code was
/// compiled for sm_90 or newer (`staged::ProgrammaticLaunchAvailable`), it is launched so that it
/// may start while the first one finishes (programmatic dependent launch; it waits for the reset
/// before it takes a ticket); otherwise the two run in plain stream order. Everything a call
/// changes lives in its own @p d_temp and @p d_result: the launcher keeps no state between calls
/// (besides the occupancy and attribute caches, which never change a result), so any number of
/// host threads, streams (`cudaStreamPerThread` included) and CUDA Graph replays may call it
/// at once, as long as calls that may overlap use different scratch. The scratch's contents
/// before the call do not matter, and nothing in it is needed after the call.
/// Stream capture records the two kernels as two graph nodes, joined by a programmatic edge where
/// the launch is programmatic.
/// @tparam T element type
/// @param[in] d_in device input, aligned to sizeof(T) (any offset from 16 bytes)
/// @param[in] n elements, >= 1 (throws `std::invalid_argument` otherwise)
/// @param[out] d_result device pointer to one pair
/// @param[in] d_temp device scratch of at least `MinMaxTempBytes<T>(n)` bytes, 16-byte aligned
///            (any contents; not shared with a call that may run at the same time; checked:
///            `staged::UsageError` when misaligned)
/// @param[in] temp_bytes size of @p d_temp (checked)
/// @param[in] stream stream to queue on
template <typename T>
void MinMax(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream);

/// The intermediate stages of the lesson, timed by `ch01_optimized` as `optimized:<stage>`.
enum class Stage {
  kScalarLoads,  ///< one 4/8-byte load per thread per iteration (grid-stride, shuffles, last block)
  kVectorLoads,  ///< one 16-byte load per thread per iteration
  kFinal,        ///< kUnroll 16-byte loads per thread per iteration (what `MinMax` runs)
};
/// Same as `MinMax`, running the kernel of @p stage.
/// @tparam T element type
/// @param[in] stage which kernel
/// @param[in] d_in,n,d_result,d_temp,temp_bytes,stream as for `MinMax`
template <typename T>
void MinMaxStage(Stage stage, const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
                 std::size_t temp_bytes, cudaStream_t stream);
}  // namespace optimized

/// The baseline: CUB `DeviceReduce::TransformReduce` over (min, max) key pairs in one call
/// (the raw input pointer, each element turned into its key pair after the load).
namespace library {
/// Bytes of device scratch CUB asks for, for either count width (queries CUB; needs a current
/// device).
/// @tparam T element type
/// @param[in] n elements
template <typename T>
std::size_t MinMaxTempBytes(std::size_t n);
/// Writes the min and max of @p d_in[0, n) to @p d_result, asynchronously; the count goes to CUB
/// as 32 bits where n fits (row `library:cub`), else as 64 bits.
/// @tparam T element type
/// @param[in] d_in device input
/// @param[in] n elements, >= 1 (throws `std::invalid_argument` otherwise)
/// @param[out] d_result device pointer to one pair
/// @param[in] d_temp device scratch of at least `MinMaxTempBytes<T>(n)` bytes, 16-byte aligned
///            (checked: `staged::UsageError` otherwise; CUB itself would accept any address)
/// @param[in] temp_bytes size of @p d_temp
/// @param[in] stream stream to queue on
template <typename T>
void MinMax(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
            std::size_t temp_bytes, cudaStream_t stream);
/// As `MinMax`, with the count always given to CUB as 64 bits (row `library:cub-count64`): CUB
/// picks its offset type and tuning from the count's type, and which width is faster depends on
/// the size and the GPU, so the driver times both and compares with the faster.
/// @tparam T element type
template <typename T>
void MinMaxCount64(const T* d_in, std::size_t n, MinMaxPair<T>* d_result, void* d_temp,
                   std::size_t temp_bytes, cudaStream_t stream);
/// True when @p n fits the 32-bit count of `MinMax` (so `MinMaxCount64` is a different call).
/// @param[in] n elements
inline bool NarrowCountHolds(std::size_t n) { return n <= 0xFFFFFFFFull; }
}  // namespace library

}  // namespace ch01
