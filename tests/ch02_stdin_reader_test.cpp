/// @file ch02_stdin_reader_test.cpp
/// @brief Host tests of chapter 02's `--stdin` parser: the valid format and every malformed case.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "chapters/02_histogram_scan_countsort/stdin_reader.hpp"
#include "common/errors.hpp"

namespace ch02::io {
namespace {

using Bytes = std::vector<unsigned char>;

Bytes Header(std::int32_t n) {
  const auto u = static_cast<std::uint32_t>(n);
  return {static_cast<unsigned char>(u), static_cast<unsigned char>(u >> 8),
          static_cast<unsigned char>(u >> 16), static_cast<unsigned char>(u >> 24)};
}

Bytes Concat(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Expects ParseSeedBuffer to throw InputError whose message contains @p words.
void ExpectRejected(const Bytes& stream, const std::string& words,
                    std::uint64_t max_n = kMaxInputBytes) {
  try {
    ParseSeedBuffer(stream.data(), stream.size(), max_n);
    ADD_FAILURE() << "accepted a malformed stream of " << stream.size() << " bytes";
  } catch (const staged::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(StdinReader, ParsesPayload) {
  const Bytes stream = Concat(Header(5), {9, 8, 7, 0, 255});
  const SeedInput in = ParseSeedBuffer(stream.data(), stream.size());
  ASSERT_EQ(in.n, 5u);
  EXPECT_EQ(Bytes(in.bytes.get(), in.bytes.get() + 5), Bytes({9, 8, 7, 0, 255}));
}

TEST(StdinReader, ZeroLengthIsValidAndEmpty) {
  const Bytes stream = Header(0);
  const SeedInput in = ParseSeedBuffer(stream.data(), stream.size());
  EXPECT_EQ(in.n, 0u);
  EXPECT_EQ(in.bytes, nullptr);
}

TEST(StdinReader, HeaderIsLittleEndian) {
  const unsigned char header[4] = {0x01, 0x02, 0x03, 0x00};
  EXPECT_EQ(DecodeHeader(header, 1u << 30), 0x030201u);
}

TEST(StdinReader, RejectsEmptyInput) { ExpectRejected({}, "empty input"); }

TEST(StdinReader, RejectsShortHeader) {
  ExpectRejected({1}, "short header: 1 of the 4");
  ExpectRejected({1, 0}, "short header: 2 of the 4");
  ExpectRejected({1, 0, 0}, "short header: 3 of the 4");
}

TEST(StdinReader, RejectsNegativeLength) {
  ExpectRejected(Concat(Header(-1), {1, 2, 3}), "negative length -1");
  ExpectRejected(Header(INT32_MIN), "negative length -2147483648");
}

TEST(StdinReader, RejectsLengthOverTheLimit) {
  ExpectRejected(Concat(Header(537000001), {1}), "exceeds the limit of 537000000");
  ExpectRejected(Header(INT32_MAX), "exceeds the limit");
  // The limit itself is accepted (checked with a lowered limit to keep the test small).
  const Bytes at_limit = Concat(Header(3), {1, 2, 3});
  EXPECT_EQ(ParseSeedBuffer(at_limit.data(), at_limit.size(), 3).n, 3u);
  ExpectRejected(at_limit, "exceeds the limit of 2", 2);
}

TEST(StdinReader, LimitIsTheSeeds) { EXPECT_EQ(kMaxInputBytes, 537000000u); }

TEST(StdinReader, RejectsTruncatedPayload) {
  ExpectRejected(Concat(Header(10), {1, 2, 3}),
                 "truncated payload: the header says n = 10 but only 3");
  ExpectRejected(Header(1), "only 0 bytes");
}

TEST(StdinReader, RejectsTrailingData) {
  ExpectRejected(Concat(Header(2), {1, 2, 3}), "trailing data after the 2 payload bytes");
  ExpectRejected(Concat(Header(0), {0}), "trailing data");
}

TEST(StdinReader, ReassemblesShortReads) {
  // A pipe may hand over one byte at a time; the reader must not mistake that for the end.
  const Bytes stream = Concat(Header(4), {4, 3, 2, 1});
  std::size_t at = 0;
  const SeedInput in = ReadSeedStream([&](unsigned char* dst, std::size_t max_bytes) {
    if (at == stream.size() || max_bytes == 0) return std::size_t{0};
    *dst = stream[at++];
    return std::size_t{1};
  });
  ASSERT_EQ(in.n, 4u);
  EXPECT_EQ(Bytes(in.bytes.get(), in.bytes.get() + 4), Bytes({4, 3, 2, 1}));
}

TEST(StdinReader, ReadsFromAFile) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  const Bytes stream = Concat(Header(3), {30, 20, 10});
  WriteAll(f, stream.data(), stream.size());
  std::rewind(f);
  const SeedInput in = ReadSeedFile(f);
  std::fclose(f);
  ASSERT_EQ(in.n, 3u);
  EXPECT_EQ(in.bytes[2], 10);
}

TEST(StdinReader, ReadErrorIsAnInputError) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  std::FILE* write_only = std::freopen(nullptr, "w", f);  // reading a write-only stream fails
  ASSERT_NE(write_only, nullptr);
  EXPECT_THROW(ReadSeedFile(write_only), staged::InputError);
  std::fclose(write_only);
}

TEST(StdinReader, EncodeRoundTrips) {
  const Bytes payload = {5, 4, 3};
  const Bytes stream = EncodeSeedStream(payload.data(), payload.size());
  EXPECT_EQ(stream, Concat(Header(3), payload));
  const SeedInput in = ParseSeedBuffer(stream.data(), stream.size());
  EXPECT_EQ(Bytes(in.bytes.get(), in.bytes.get() + in.n), payload);
}

}  // namespace
}  // namespace ch02::io
