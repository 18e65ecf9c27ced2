/**
 * @file partition.cuh
 * @brief Steps 1 and 3 on one GPU: the sample, and the partition of its keys into k runs by
 *        destination (per-block counts, their scan, the scatter).
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "chapters/06_multi_gpu_sort/splitters.hpp"

namespace ch06::partition {

/// Threads of the partition kernels.
inline constexpr int kThreads = 256;
/// Keys one block of the partition handles.
inline constexpr std::size_t kChunk = 16 * 1024;

/// Blocks of the partition of @p n keys (at least 1).
/// @param[in] n keys
inline std::size_t Blocks(std::size_t n) { return n == 0 ? 1 : (n + kChunk - 1) / kChunk; }

/// Bytes of scratch the scan of the per-block counts needs for @p n keys over @p k ranks.
/// @param[in] n keys
/// @param[in] k ranks
std::size_t ScanTempBytes(std::size_t n, int k);

/// Writes kSamplesPerGpu tagged keys of @p keys[0, n) to @p sample (nothing when n is 0).
/// @param[in] keys this rank's keys
/// @param[in] n keys
/// @param[in] first_position global position of keys[0]
/// @param[in] seed sample positions
/// @param[out] sample kSamplesPerGpu entries
/// @param[in] stream stream
void Sample(const std::uint32_t* keys, std::size_t n, std::uint64_t first_position,
            std::uint64_t seed, Tagged* sample, cudaStream_t stream);

/// Writes @p keys[0, n) to @p out as k runs, run g holding the keys whose bucket is g, and the
/// runs' lengths to @p counts[0, k). Within a run the order is unspecified.
/// @param[in] keys this rank's keys
/// @param[in] n keys
/// @param[in] first_position global position of keys[0]
/// @param[in] splitters k - 1 splitters (device)
/// @param[in] k ranks, 1 .. kMaxGpus
/// @param[out] out n keys
/// @param[out] block_counts 2 * k * Blocks(n) entries of scratch
/// @param[in] scan_temp scratch of ScanTempBytes(n, k) bytes
/// @param[in] scan_temp_bytes its size
/// @param[out] counts k entries
/// @param[in] stream stream
void Partition(const std::uint32_t* keys, std::size_t n, std::uint64_t first_position,
               const Tagged* splitters, int k, std::uint32_t* out, std::uint64_t* block_counts,
               void* scan_temp, std::size_t scan_temp_bytes, std::uint64_t* counts,
               cudaStream_t stream);

}  // namespace ch06::partition
