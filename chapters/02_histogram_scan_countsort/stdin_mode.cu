/**
 * @file stdin_mode.cu
 * @brief `--stdin` mode: validated host input, pinned staging copies, timed sort, verified
 *        output (see stdin_mode.cuh).
 */
#include "chapters/02_histogram_scan_countsort/stdin_mode.cuh"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ostream>
#include <string>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/stdin_reader.hpp"
#include "common/device_buffer.hpp"
#include "common/device_info.hpp"
#include "common/errors.hpp"
#include "common/report.hpp"
#include "common/stream.hpp"
#include "common/timer.hpp"

namespace ch02::io {

namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// True when @p out is the counting sort of the input whose histogram is @p hist.
bool IsSortedRuns(const unsigned char* out, std::size_t n, const std::uint32_t* hist) {
  std::size_t at = 0;
  for (int b = 0; b < kNumBins; ++b) {
    for (std::uint32_t k = 0; k < hist[b]; ++k, ++at) {
      if (at >= n || out[at] != b) return false;
    }
  }
  return at == n;
}

}  // namespace

void UploadThroughPinned(const unsigned char* host, unsigned char* device, std::size_t n,
                         cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t chunk = std::min(n, kStagingBytes);
  staged::PinnedBuffer<unsigned char> stage[2] = {staged::PinnedBuffer<unsigned char>(chunk),
                                                  staged::PinnedBuffer<unsigned char>(chunk)};
  staged::Event copied[2];
  bool in_use[2] = {false, false};
  for (std::size_t off = 0, i = 0; off < n; off += chunk, ++i) {
    const int k = static_cast<int>(i % 2);
    // The buffer is refilled only once the DMA that read it two chunks ago has finished.
    if (in_use[k]) copied[k].Synchronize();
    const std::size_t len = std::min(chunk, n - off);
    std::memcpy(stage[k].data(), host + off, len);
    CUDA_CHECK(cudaMemcpyAsync(device + off, stage[k].data(), len, cudaMemcpyHostToDevice, stream));
    copied[k].Record(stream);
    in_use[k] = true;
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

void DownloadThroughPinned(const unsigned char* device, unsigned char* host, std::size_t n,
                           cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t chunk = std::min(n, kStagingBytes);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  staged::PinnedBuffer<unsigned char> stage[2] = {staged::PinnedBuffer<unsigned char>(chunk),
                                                  staged::PinnedBuffer<unsigned char>(chunk)};
  staged::Event copied[2];
  auto issue = [&](std::size_t i) {
    const std::size_t off = i * chunk;
    const int k = static_cast<int>(i % 2);
    CUDA_CHECK(cudaMemcpyAsync(stage[k].data(), device + off, std::min(chunk, n - off),
                               cudaMemcpyDeviceToHost, stream));
    copied[k].Record(stream);
  };
  issue(0);
  for (std::size_t i = 0; i < chunks; ++i) {
    // Chunk i + 1 goes into the other buffer, whose bytes were consumed last iteration.
    if (i + 1 < chunks) issue(i + 1);
    const int k = static_cast<int>(i % 2);
    copied[k].Synchronize();
    const std::size_t off = i * chunk;
    std::memcpy(host + off, stage[k].data(), std::min(chunk, n - off));
  }
}

int RunStdinMode(std::FILE* in, std::FILE* out, std::ostream& log, const char* program, SortFn sort,
                 SortTempFn sort_temp, bool verify) {
  // 1. Host only: the whole stream is validated before the GPU is touched.
  auto t0 = std::chrono::steady_clock::now();
  SeedInput input = ReadSeedFile(in);
  const double read_ms = MsSince(t0);
  const std::size_t n = static_cast<std::size_t>(input.n);

  // 2. The GPU, and room for input, output and scratch on it, before any allocation.
  const staged::DeviceInfo device = staged::RequireGpu();
  const std::size_t temp_bytes = sort_temp(n);
  staged::RequireDeviceMemory(
      2 * n + temp_bytes,
      "--stdin: " + std::to_string(n) + " input bytes, their sorted copy and scratch");
  staged::Stream stream;
  staged::DeviceBuffer<std::uint8_t> d_in(n);
  staged::DeviceBuffer<std::uint8_t> d_out(n);
  staged::DeviceBuffer<unsigned char> d_temp(temp_bytes);

  t0 = std::chrono::steady_clock::now();
  UploadThroughPinned(input.bytes.get(), d_in.data(), n, stream.get());
  const double upload_ms = MsSince(t0);

  staged::GpuTimer timer(stream.get());
  timer.Start();
  sort(d_in.data(), d_out.data(), n, d_temp.data(), temp_bytes, stream.get());
  timer.Stop();
  const double sort_ms = timer.ElapsedMs();

  // The histogram is all the verification needs, so the input buffer can take the output.
  std::uint32_t hist[kNumBins] = {};
  if (verify) cpu::Histogram(input.bytes.get(), n, hist);
  t0 = std::chrono::steady_clock::now();
  DownloadThroughPinned(d_out.data(), input.bytes.get(), n, stream.get());
  const double download_ms = MsSince(t0);
  if (verify && !IsSortedRuns(input.bytes.get(), n, hist)) {
    throw staged::VerificationError(
        "--stdin: the device output is not the sorted input; "
        "nothing was written");
  }

  t0 = std::chrono::steady_clock::now();
  WriteAll(out, input.bytes.get(), n);
  if (std::fflush(out) != 0) throw staged::InputError("could not flush the output stream");
  const double write_ms = MsSince(t0);

  log << program << " --stdin: n = " << n << " bytes on " << device.name << "; read " << read_ms
      << " ms, upload " << upload_ms << " ms, sort " << sort_ms << " ms device ("
      << staged::GigabytesPerSecond(2.0 * n, sort_ms) << " GB/s over 2n), download " << download_ms
      << " ms, write " << write_ms << " ms; verified: " << (verify ? "yes" : "skipped") << "\n";
  return staged::kExitOk;
}

}  // namespace ch02::io
