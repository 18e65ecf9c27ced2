/**
 * @file one_level.cu
 * @brief The pipeline of stages 1 to 3: one level of the five steps, then the buckets over the
 *        tile in global memory; each stage supplies its partition and sort step (`Steps`).
 */
#include <algorithm>
#include <stdexcept>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/03_mppsort/stages.cuh"
#include "common/cuda_check.hpp"

namespace ch03::one_level {

namespace {
std::size_t ChunksOf(std::size_t n) { return (n + kChunk - 1) / kChunk; }
}  // namespace

Workspace::Workspace(std::size_t cap)
    : capacity(cap),
      part(cap),
      matrix(std::max<std::size_t>(ChunksOf(cap), 1) * kMaxBuckets),
      totals(kMaxBuckets),
      starts(kMaxBuckets),
      range(1),
      minmax_temp(std::max<std::size_t>(ch01::optimized::MinMaxTempBytes<std::uint32_t>(cap), 1)),
      scan_temp(std::max<std::size_t>(
          ch02::optimized::ExclusiveScanTempBytes<std::uint32_t>(kMaxBuckets), 1)) {}

void Sort(const Steps& steps, const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n,
          Workspace& ws, cudaStream_t stream) {
  if (n > ws.capacity) throw std::invalid_argument("one_level::Sort: n exceeds the workspace");
  if (steps.buckets < 1 || steps.buckets > kMaxBuckets) {
    throw std::invalid_argument("one_level::Sort: buckets must be 1 .. 8192");
  }
  if (n == 0) return;
  const Args a{d_in,
               n,
               ws.range.data(),
               steps.buckets,
               static_cast<std::uint32_t>(ChunksOf(n)),
               ws.matrix.data(),
               ws.totals.data(),
               ws.starts.data(),
               ws.part.data(),
               d_out};
  // snippet-begin: ch03-one-level-sort
  ch01::optimized::MinMax(d_in, n, ws.range.data(), ws.minmax_temp.data(), ws.minmax_temp.size(),
                          stream);
  CUDA_CHECK(cudaMemsetAsync(a.totals, 0, a.buckets * sizeof(std::uint32_t), stream));
  Histogram(a, stream);
  ch02::optimized::ExclusiveScan<std::uint32_t>(a.totals, ws.starts.data(), a.buckets,
                                                ws.scan_temp.data(), ws.scan_temp.size(), stream);
  steps.partition(a, stream);
  steps.sort_buckets(a, stream);
  naive::SortOversizedBuckets(a.part, d_out, a.starts, a.buckets, n, steps.tile, stream);
  // snippet-end: ch03-one-level-sort
}

}  // namespace ch03::one_level
