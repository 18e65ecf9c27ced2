/**
 * @file stdin_reader.hpp
 * @brief The Russian lab's binary input format, parsed and validated on the host before any GPU work.
 *
 * Format: a 4-byte little-endian signed integer n, then exactly n bytes. Accepted: 0 <= n <=
 * `kMaxInputBytes` (537 000 000, the Russian lab's limit). Every other stream is rejected with
 * `staged::InputError` (exit code 2) and a message naming the problem:
 *
 * | stream | message starts with |
 * |---|---|
 * | nothing at all | `empty input` |
 * | 1 to 3 bytes | `short header` |
 * | n < 0 | `negative length` |
 * | n > 537 000 000 | `length ... exceeds` |
 * | fewer than n bytes after the header | `truncated payload` |
 * | more than n bytes after the header | `trailing data` |
 *
 * Trailing bytes are an error, not ignored: a stream whose length disagrees with its header is
 * usually a concatenation or a wrong header, and sorting a prefix of it would hide that.
 * The reader needs no GPU, so malformed input is refused (exit 2) even on a machine without one.
 */
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

/// Host-side input and output of the `--stdin` mode.
namespace ch02::io {

/// Largest n the format accepts (the Russian lab's limit, n <= 537 * 10^6).
inline constexpr std::uint64_t kMaxInputBytes = 537000000;
/// Bytes of the length header.
inline constexpr std::size_t kHeaderBytes = 4;

/// A byte source: copies up to `max_bytes` into `dst` and returns how many it copied; 0 means
/// the end of the stream. Throws `staged::InputError` on a read error.
using ReadFn = std::function<std::size_t(unsigned char* dst, std::size_t max_bytes)>;

/// A validated input: n and the n payload bytes.
struct SeedInput {
  std::uint64_t n = 0;                     ///< number of payload bytes
  std::unique_ptr<unsigned char[]> bytes;  ///< the payload (null when n == 0)
};

/// Decodes the 4-byte little-endian header and checks 0 <= n <= @p max_n.
/// @param[in] header the four header bytes
/// @param[in] max_n the largest accepted n
/// @return n
/// @throws staged::InputError for a negative n or one over @p max_n
std::uint64_t DecodeHeader(const unsigned char* header, std::uint64_t max_n = kMaxInputBytes);

/// Reads and validates a whole stream (header, n bytes, end of stream) from @p read.
/// @param[in] read the byte source
/// @param[in] max_n the largest accepted n (tests lower it)
/// @return the payload
/// @throws staged::InputError for each malformed case in the file's table
SeedInput ReadSeedStream(const ReadFn& read, std::uint64_t max_n = kMaxInputBytes);

/// `ReadSeedStream` over a C stream (stdin in the executables), with `std::fread`.
/// @param[in] file an open stream
/// @param[in] max_n the largest accepted n
/// @return the payload
SeedInput ReadSeedFile(std::FILE* file, std::uint64_t max_n = kMaxInputBytes);

/// `ReadSeedStream` over an in-memory buffer (tests and the fuzz target).
/// @param[in] data the stream's bytes
/// @param[in] size number of bytes in @p data
/// @param[in] max_n the largest accepted n
/// @return the payload
SeedInput ParseSeedBuffer(const unsigned char* data, std::size_t size,
                          std::uint64_t max_n = kMaxInputBytes);

/// Builds a stream in the Russian lab's format: header for @p n, then @p bytes.
/// @param[in] bytes payload
/// @param[in] n number of payload bytes (at most INT32_MAX)
/// @return header + payload
std::vector<unsigned char> EncodeSeedStream(const unsigned char* bytes, std::size_t n);

/// Writes @p n bytes to @p file, throwing `std::runtime_error` if the stream refuses them.
/// @param[in] file an open stream
/// @param[in] bytes data
/// @param[in] n number of bytes
void WriteAll(std::FILE* file, const unsigned char* bytes, std::size_t n);

}  // namespace ch02::io
