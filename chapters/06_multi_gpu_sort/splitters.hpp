/**
 * @file splitters.hpp
 * @brief The host and device arithmetic of chapter 06's distributed sort: keys tagged with
 *        their global position, the sample positions, the k - 1 splitters chosen from the
 *        gathered sample, and the bucket (owning GPU) of a key.
 *
 * A key alone cannot split equal keys: with every key equal, any splitter value sends all of
 * them to one GPU. So every key carries its global position (GPU g's key i is at
 * offset_g + i), and keys are ordered by (key, position): a total order in which no two keys tie,
 * so splitters chosen from a sample divide any input, all-equal ones included, in the sample's
 * proportions. The position is never stored: a GPU knows its offset and each key's index.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

/// @cond
#ifdef __CUDACC__
#define CH06_HD __host__ __device__
#else
#define CH06_HD
#endif
/// @endcond

namespace ch06 {

/// The largest number of GPUs a sort spans (one process drives them all).
inline constexpr int kMaxGpus = 8;
/// Keys each GPU contributes to the sample. The bucket of GPU g then holds n/k keys within a few
/// per cent for any input (the sample's quantiles are within about 1/sqrt(k * kSamplesPerGpu)
/// of the true ones).
inline constexpr int kSamplesPerGpu = 4096;

/// A key and its global position: the total order the splitters cut. The 4 bytes between the
/// two are a member, written as 0, so that a copy of a sample reads no uninitialised byte.
struct Tagged {
  Tagged() = default;
  /// @param[in] k the key
  /// @param[in] p its global position
  CH06_HD Tagged(std::uint32_t k, std::uint64_t p) : key(k), unused(0), position(p) {}
  std::uint32_t key;       ///< the key
  std::uint32_t unused;    ///< always 0
  std::uint64_t position;  ///< offset of its GPU's keys + its index there
};

// snippet-begin: ch06-bucket
/// (key, position) order: true when @p a comes before @p b.
CH06_HD inline bool Before(std::uint32_t a_key, std::uint64_t a_pos, const Tagged& b) {
  return a_key < b.key || (a_key == b.key && a_pos < b.position);
}

/// The GPU that owns a key: the number of splitters at or before it in (key, position) order,
/// so bucket g holds the keys from splitter g - 1 (included) to splitter g (excluded).
/// @param[in] key the key
/// @param[in] position its global position
/// @param[in] splitters k - 1 splitters in (key, position) order
/// @param[in] count k - 1
CH06_HD inline int Bucket(std::uint32_t key, std::uint64_t position, const Tagged* splitters,
                          int count) {
  int b = 0;
  for (int s = 0; s < count; ++s) b += Before(key, position, splitters[s]) ? 0 : 1;
  return b;
}
// snippet-end: ch06-bucket

/// Index of sample j (0 <= j < samples) among a GPU's @p n keys: j's stratum of n / samples
/// keys, at a hashed offset within it, so that no periodic pattern of the input lines up with the
/// sample. Every index is below n; for n < samples the strata repeat keys.
/// @param[in] j the sample
/// @param[in] samples samples of this GPU
/// @param[in] n keys of this GPU, >= 1
/// @param[in] seed the sort's seed
CH06_HD inline std::uint64_t SamplePosition(std::uint64_t j, std::uint64_t samples, std::uint64_t n,
                                            std::uint64_t seed) {
  const std::uint64_t begin = j * n / samples;
  const std::uint64_t end = (j + 1) * n / samples;
  const std::uint64_t width = end > begin ? end - begin : 1;
  std::uint64_t h = (j + 1) * 0x9E3779B97F4A7C15ull ^ seed;
  h ^= h >> 31;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 29;
  const std::uint64_t i = begin + h % width;
  return i < n ? i : n - 1;
}

/// The k - 1 splitters from the gathered sample: sorted in (key, position) order, the
/// sample's elements at ranks size * g / k for g = 1 .. k - 1. An empty sample (no keys
/// anywhere) gives k - 1 copies of the largest tag, so every key goes to GPU 0.
/// @param[in] sample every GPU's sample, in any order
/// @param[in] k GPUs, 1 .. kMaxGpus
std::vector<Tagged> ChooseSplitters(std::vector<Tagged> sample, int k);

}  // namespace ch06
