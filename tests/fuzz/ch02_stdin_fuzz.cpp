/// @file ch02_stdin_fuzz.cpp
/// @brief libFuzzer target of chapter 02's stdin parser: any byte string must either parse into
///        exactly its payload or be refused with `staged::InputError`; nothing else may escape.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "chapters/02_histogram_scan_countsort/stdin_reader.hpp"
#include "common/errors.hpp"

/// Fuzzer entry point: parses @p data and checks the result against the format's definition.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // A low limit keeps each input's allocation small; the limit check itself is what is fuzzed.
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 20;
  try {
    const ch02::io::SeedInput in = ch02::io::ParseSeedBuffer(data, size, kLimit);
    const bool consistent = size == ch02::io::kHeaderBytes + in.n && in.n <= kLimit &&
                            (in.n == 0 || std::memcmp(in.bytes.get(), data + 4, in.n) == 0);
    if (!consistent) __builtin_trap();
  } catch (const staged::InputError&) {
    // Malformed input is expected; the executables turn it into exit code 2.
  }
  return 0;
}
