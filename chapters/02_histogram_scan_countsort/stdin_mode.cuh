/**
 * @file stdin_mode.cuh
 * @brief The `--stdin` mode of both executables: the Russian lab's binary format in, sorted bytes out,
 *        large inputs moved through pinned staging buffers, I/O timed apart from the sort.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <iosfwd>

/// Host-side input and output of the `--stdin` mode.
namespace ch02::io {

/// A counting-sort launcher (the signature of `ch02::<variant>::CountingSort`).
using SortFn = void (*)(const std::uint8_t*, std::uint8_t*, std::size_t, void*, std::size_t,
                        cudaStream_t);
/// Its scratch-size query (the signature of `ch02::<variant>::CountingSortTempBytes`).
using SortTempFn = std::size_t (*)(std::size_t);

/// Size of each of the two pinned staging buffers (32 MiB: large copies, little pinned memory).
inline constexpr std::size_t kStagingBytes = std::size_t{32} << 20;

/// Copies @p n host bytes to the device through two pinned staging buffers, so the memcpy
/// into one buffer overlaps the DMA out of the other. Returns when the copy has finished.
/// @param[in] host pageable source
/// @param[out] device destination
/// @param[in] n bytes
/// @param[in] stream stream of the copies
void UploadThroughPinned(const unsigned char* host, unsigned char* device, std::size_t n,
                         cudaStream_t stream);

/// Copies @p n device bytes to pageable host memory through two pinned staging buffers.
/// @param[in] device source
/// @param[out] host destination
/// @param[in] n bytes
/// @param[in] stream stream of the copies
void DownloadThroughPinned(const unsigned char* device, unsigned char* host, std::size_t n,
                           cudaStream_t stream);

/**
 * @brief Runs `--stdin`: read and validate @p in completely (exit 2 on malformed input, before
 *        any GPU call), then require a GPU (77 without one) and enough device memory (2
 *        otherwise, before allocating), upload, sort, download, verify against the CPU
 *        counting sort (unless @p verify is false), and only then write the n sorted bytes to
 *        @p out. Timings and the verdict go to @p log, never to @p out.
 * @param[in] in the input stream (stdin)
 * @param[in] out the output stream (stdout): receives exactly n bytes, or nothing on error
 * @param[in] log diagnostics (stderr)
 * @param[in] program executable name for the log line
 * @param[in] sort the variant's counting sort
 * @param[in] sort_temp its scratch-size query
 * @param[in] verify whether to check the result before writing it
 * @return 0; errors are thrown (`staged::InputError`, `staged::VerificationError`, ...)
 */
int RunStdinMode(std::FILE* in, std::FILE* out, std::ostream& log, const char* program, SortFn sort,
                 SortTempFn sort_temp, bool verify);

}  // namespace ch02::io
