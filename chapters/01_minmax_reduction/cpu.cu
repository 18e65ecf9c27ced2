/**
 * @file cpu.cu
 * @brief The CPU reference: `std::minmax_element` under the key order of minmax.cuh.
 *
 * Comparing keys instead of values makes the comparator a strict weak order even with NaN and
 * signed zeros present (`operator<` on floats is not one when NaNs are around, and then
 * `std::minmax_element`'s answer depends on positions). The GPU variants reduce the same keys,
 * so every variant agrees bit for bit.
 */
#include <algorithm>
#include <stdexcept>

#include "chapters/01_minmax_reduction/minmax.cuh"

namespace ch01::cpu {

template <typename T>
MinMaxPair<T> MinMax(const T* data, std::size_t n) {
  if (n == 0)
    throw std::invalid_argument("ch01::cpu::MinMax: the min/max of 0 elements is undefined");
  // snippet-begin: ch01-cpu-reference
  auto less = [](T a, T b) { return OrderedKey<T>::From(a) < OrderedKey<T>::From(b); };
  const auto [lo, hi] = std::minmax_element(data, data + n, less);
  return PairFromKeys<T>(OrderedKey<T>::From(*lo), OrderedKey<T>::From(*hi));
  // snippet-end: ch01-cpu-reference
}

// The same instantiation list in every variant file repeats on purpose: one signature per
// variant, so one test body and one driver run them all.
/// @cond INSTANTIATIONS
template MinMaxPair<float> MinMax<float>(const float*, std::size_t);
template MinMaxPair<double> MinMax<double>(const double*, std::size_t);
template MinMaxPair<std::int32_t> MinMax<std::int32_t>(const std::int32_t*, std::size_t);
template MinMaxPair<std::uint32_t> MinMax<std::uint32_t>(const std::uint32_t*, std::size_t);
/// @endcond

}  // namespace ch01::cpu
