/**
 * @file library.cuh
 * @brief Chapter 03's baselines: CUB's radix sort in each of its forms and count widths, and
 *        thrust::sort, each with preallocated scratch.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/device_buffer.hpp"

namespace ch03 {

/// The baselines, each at its best: preallocated scratch, no host synchronisation, raw pointers,
/// and each of CUB's entry points for 32-bit keys, so that the fastest at each size is known.
namespace library {
/// CUB's radix sort of 32-bit keys, one row per entry point and count width.
enum class CubForm {
  kKeys32,          ///< SortKeys(in, out), 32-bit count: the input is kept
  kKeys64,          ///< SortKeys(in, out), 64-bit count: the input is kept
  kDoubleBuffer32,  ///< SortKeys(DoubleBuffer), 32-bit count: the input is overwritten
  kDoubleBuffer64,  ///< SortKeys(DoubleBuffer), 64-bit count: the input is overwritten
};
/// A CUB form's row and contract.
struct CubEntry {
  CubForm form;      ///< the form
  const char* row;   ///< its row: `library:cub-keys32`, ...
  bool keeps_input;  ///< SortKeys(in, out) keeps `in`; the DoubleBuffer form overwrites it
  bool wide_count;   ///< a 64-bit item count
};
/// Every form, in the order above.
const std::vector<CubEntry>& CubEntries();
/// A thrust allocator that hands out one preallocated device block (thrust::sort of 32-bit keys
/// asks for exactly one temporary block per call), so no cudaMalloc/cudaFree runs inside a sort.
class PreallocatedAllocator {
 public:
  using value_type = char;  ///< thrust allocates bytes
  /// @param[in] bytes size of the block
  explicit PreallocatedAllocator(std::size_t bytes);
  /// Returns the block; throws `std::logic_error` when it is in use or too small.
  /// @param[in] bytes bytes thrust asks for
  char* allocate(std::ptrdiff_t bytes);
  /// Marks the block free again.
  /// @param[in] p the block
  /// @param[in] bytes ignored
  void deallocate(char* p, std::size_t bytes);

 private:
  staged::DeviceBuffer<char> block_;
  bool in_use_ = false;
};
/// Scratch of the library sorts for up to `capacity` keys.
struct Workspace {
  /// @param[in] capacity largest n
  explicit Workspace(std::size_t capacity);
  staged::DeviceBuffer<unsigned char> cub_temp;  ///< DeviceRadixSort scratch, any form
  PreallocatedAllocator thrust_alloc;            ///< thrust::sort's temporary block
};
/// Copies @p d_in to @p d_out and sorts it with thrust::sort (CUB's radix sort underneath, with
/// a 64-bit count), on @p stream, with the workspace's allocator and no synchronisation.
/// @param[in] d_in keys
/// @param[out] d_out sorted keys
/// @param[in] n keys, <= the workspace's capacity
/// @param[in] ws scratch
/// @param[in] stream stream
void ThrustSort(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, Workspace& ws,
                cudaStream_t stream);
/// cub::DeviceRadixSort::SortKeys(in, out) of @p d_in into @p d_out.
/// @param[in] d_in keys
/// @param[out] d_out sorted keys
/// @param[in] n keys, <= the workspace's capacity (a 32-bit count: at most INT_MAX)
/// @param[in] wide_count a 64-bit item count
/// @param[in] ws scratch
/// @param[in] stream stream
void CubSortKeys(const std::uint32_t* d_in, std::uint32_t* d_out, std::size_t n, bool wide_count,
                 Workspace& ws, cudaStream_t stream);
/// cub::DeviceRadixSort::SortKeys on a DoubleBuffer of @p d_keys and @p d_alt: sorts the keys
/// with both buffers, overwriting the input.
/// @param[in,out] d_keys the keys
/// @param[in,out] d_alt n keys of scratch
/// @param[in] n keys, <= the workspace's capacity (a 32-bit count: at most INT_MAX)
/// @param[in] wide_count a 64-bit item count
/// @param[in] ws scratch
/// @param[in] stream stream
/// @return the buffer that holds the sorted keys (@p d_keys or @p d_alt: CUB's choice)
std::uint32_t* CubSortDoubleBuffer(std::uint32_t* d_keys, std::uint32_t* d_alt, std::size_t n,
                                   bool wide_count, Workspace& ws, cudaStream_t stream);
/// Whether a @p wide_count form can sort @p n keys (a 32-bit count holds at most INT_MAX).
/// @param[in] n keys
/// @param[in] wide_count a 64-bit item count
constexpr bool CountHolds(std::size_t n, bool wide_count) { return wide_count || n <= 0x7FFFFFFFu; }
}  // namespace library

}  // namespace ch03
