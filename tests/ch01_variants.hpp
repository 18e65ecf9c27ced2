/// @file ch01_variants.hpp
/// @brief The chapter 01 launchers under test, as one table shared by the GPU tests and the
///        host tests (argument checks), and the element types every typed suite runs over.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "chapters/01_minmax_reduction/minmax.cuh"

namespace ch01 {

/// Every element type of the chapter.
using AllTypes = ::testing::Types<float, double, std::int32_t, std::uint32_t>;
/// The floating-point types (signed zeros, infinities, NaN).
using FloatTypes = ::testing::Types<float, double>;

template <typename T>
using Launcher = void (*)(const T*, std::size_t, MinMaxPair<T>*, void*, std::size_t, cudaStream_t);

/// A GPU variant under test: its report name, scratch size and launcher.
template <typename T>
struct VariantEntry {
  const char* name;
  std::size_t (*temp_bytes)(std::size_t);
  Launcher<T> run;
};

template <typename T>
std::vector<VariantEntry<T>> AllVariants() {
  using optimized::Stage;
  return {
      {"naive", naive::MinMaxTempBytes<T>, naive::MinMax<T>},
      {"optimized:scalar-loads", optimized::MinMaxTempBytes<T>,
       [](const T* in, std::size_t n, MinMaxPair<T>* out, void* tmp, std::size_t b,
          cudaStream_t s) {
         optimized::MinMaxStage<T>(Stage::kScalarLoads, in, n, out, tmp, b, s);
       }},
      {"optimized:vector-loads", optimized::MinMaxTempBytes<T>,
       [](const T* in, std::size_t n, MinMaxPair<T>* out, void* tmp, std::size_t b,
          cudaStream_t s) {
         optimized::MinMaxStage<T>(Stage::kVectorLoads, in, n, out, tmp, b, s);
       }},
      {"optimized", optimized::MinMaxTempBytes<T>, optimized::MinMax<T>},
      {"library:cub", library::MinMaxTempBytes<T>, library::MinMax<T>},
      {"library:cub-count64", library::MinMaxTempBytes<T>, library::MinMaxCount64<T>},
  };
}

}  // namespace ch01
