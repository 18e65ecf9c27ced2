/**
 * @file library.cu
 * @brief The baselines: thrust::sort (a radix sort for 32-bit keys) and
 *        cub::DeviceRadixSort::SortKeys, on the caller's stream.
 */
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "chapters/03_mppsort/mppsort.cuh"
#include "common/cuda_check.hpp"

namespace ch03::library {

Workspace::Workspace(std::size_t capacity) {
  std::size_t bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(
      nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
      static_cast<std::uint32_t*>(nullptr), static_cast<std::int64_t>(capacity)));
  cub_temp = staged::DeviceBuffer<unsigned char>(bytes > 0 ? bytes : 1);
}

void ThrustSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n,
                cudaStream_t stream) {
  if (n == 0) return;
  // thrust::sort works in place: the copy keeps the input intact (8n bytes, counted in).
  CUDA_CHECK(
      cudaMemcpyAsync(d_out, d_in, n * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice, stream));
  thrust::device_ptr<std::uint32_t> p(d_out);
  thrust::sort(thrust::cuda::par.on(stream), p, p + n);
  CUDA_CHECK_LAST_LAUNCH();
}

void CubRadixSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
                  cudaStream_t stream) {
  if (n == 0) return;
  std::size_t bytes = ws.cub_temp.size();
  CUDA_CHECK(cub::DeviceRadixSort::SortKeys(ws.cub_temp.data(), bytes, d_in, d_out,
                                            static_cast<std::int64_t>(n), 0, 32, stream));
  CUDA_CHECK_LAST_LAUNCH();
}

}  // namespace ch03::library
