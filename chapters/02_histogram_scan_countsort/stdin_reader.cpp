/**
 * @file stdin_reader.cpp
 * @brief Parser of the Russian lab's binary format (see stdin_reader.hpp). Host only, no CUDA, so it
 *        is also the body of the fuzz target.
 */
#include "chapters/02_histogram_scan_countsort/stdin_reader.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/errors.hpp"

namespace ch02::io {

namespace {
// Reads until @p want bytes arrived or the source ends; returns the count read.
std::size_t ReadFully(const ReadFn& read, unsigned char* dst, std::size_t want) {
  std::size_t got = 0;
  while (got < want) {
    const std::size_t step = read(dst + got, want - got);
    if (step == 0) break;
    got += step;
  }
  return got;
}
}  // namespace

std::uint64_t DecodeHeader(const unsigned char* header, std::uint64_t max_n) {
  // Assemble little-endian explicitly, so the result does not depend on the host's byte order.
  const std::uint32_t raw =
      static_cast<std::uint32_t>(header[0]) | static_cast<std::uint32_t>(header[1]) << 8 |
      static_cast<std::uint32_t>(header[2]) << 16 | static_cast<std::uint32_t>(header[3]) << 24;
  if (raw & 0x80000000u) {
    const std::int64_t value = static_cast<std::int64_t>(raw) - (std::int64_t{1} << 32);
    throw staged::InputError("negative length " + std::to_string(value) +
                             " in the 4-byte header (n must be >= 0)");
  }
  if (raw > max_n) {
    throw staged::InputError("length " + std::to_string(raw) +
                             " in the header exceeds the limit of " + std::to_string(max_n) +
                             " bytes");
  }
  return raw;
}

SeedInput ReadSeedStream(const ReadFn& read, std::uint64_t max_n) {
  unsigned char header[kHeaderBytes];
  const std::size_t got = ReadFully(read, header, kHeaderBytes);
  if (got == 0) {
    throw staged::InputError("empty input: expected a 4-byte little-endian length, then n bytes");
  }
  if (got < kHeaderBytes) {
    throw staged::InputError("short header: " + std::to_string(got) +
                             " of the 4 length bytes before the end of input");
  }
  SeedInput input;
  input.n = DecodeHeader(header, max_n);
  if (input.n > 0) {
    // Not value-initialised: every byte is overwritten by the read or the input is rejected.
    input.bytes.reset(new unsigned char[input.n]);
    const std::size_t payload = ReadFully(read, input.bytes.get(), input.n);
    if (payload < input.n) {
      throw staged::InputError("truncated payload: the header says n = " + std::to_string(input.n) +
                               " but only " + std::to_string(payload) + " bytes follow it");
    }
  }
  unsigned char extra = 0;
  if (ReadFully(read, &extra, 1) != 0) {
    throw staged::InputError("trailing data after the " + std::to_string(input.n) +
                             " payload bytes the header announces");
  }
  return input;
}

SeedInput ReadSeedFile(std::FILE* file, std::uint64_t max_n) {
  return ReadSeedStream(
      [file](unsigned char* dst, std::size_t max_bytes) {
        const std::size_t got = std::fread(dst, 1, max_bytes, file);
        if (got == 0 && std::ferror(file)) throw staged::InputError("read error on the input");
        return got;
      },
      max_n);
}

SeedInput ParseSeedBuffer(const unsigned char* data, std::size_t size, std::uint64_t max_n) {
  std::size_t at = 0;
  return ReadSeedStream(
      [&](unsigned char* dst, std::size_t max_bytes) {
        const std::size_t step = std::min(max_bytes, size - at);
        if (step > 0) std::memcpy(dst, data + at, step);
        at += step;
        return step;
      },
      max_n);
}

std::vector<unsigned char> EncodeSeedStream(const unsigned char* bytes, std::size_t n) {
  if (n > 0x7FFFFFFFu) throw std::invalid_argument("EncodeSeedStream: n does not fit in int32");
  std::vector<unsigned char> out(kHeaderBytes + n);
  for (std::size_t k = 0; k < kHeaderBytes; ++k) out[k] = static_cast<unsigned char>(n >> (8 * k));
  if (n > 0) std::memcpy(out.data() + kHeaderBytes, bytes, n);
  return out;
}

void WriteAll(std::FILE* file, const unsigned char* bytes, std::size_t n) {
  if (n > 0 && std::fwrite(bytes, 1, n, file) != n) {
    throw std::runtime_error("could not write " + std::to_string(n) + " bytes to the output");
  }
}

}  // namespace ch02::io
