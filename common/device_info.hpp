/**
 * @file device_info.hpp
 * @brief The GPU in use and its *measured* peaks: device-to-device copy bandwidth (bytes read +
 *        written), read-only streaming bandwidth and the FP32 FMA rate, so every report can print
 *        "% of measured peak" against the ceiling that fits the kernel.
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

namespace staged {

/// Properties of the current device plus the peaks measured on it.
struct DeviceInfo {
  int ordinal = 0;              ///< CUDA device ordinal
  std::string name;             ///< e.g. "NVIDIA H200"
  int cc_major = 0;             ///< compute capability, major
  int cc_minor = 0;             ///< compute capability, minor
  int sm_count = 0;             ///< streaming multiprocessors
  int clock_khz = 0;            ///< peak SM clock reported by the driver
  std::size_t total_bytes = 0;  ///< global memory
  std::size_t free_bytes = 0;   ///< free global memory when queried
  std::size_t l2_bytes = 0;     ///< L2 cache size
  double copy_gbps = 0.0;       ///< measured device copy bandwidth, (read + write) / time
  double read_gbps = 0.0;       ///< measured read-only streaming bandwidth, bytes read / time
  double fp32_gflops = 0.0;     ///< FP32 rate, FMA = 2 flops
  std::string fp32_source;      ///< "measured" or "attributes" (SMs x lanes x 2 x clock)
  std::string profile;          ///< the device profile launchers plan for ("" for this GPU's own)

  /// One line: name, compute capability, SMs, memory, and the peaks with their sources.
  std::string Describe() const;
};

/// True when at least one CUDA device can be used. Never throws.
bool GpuAvailable() noexcept;

/// Queries the current device. Throws `NoGpuError` (exit 77) when there is no usable GPU or it
/// is older than sm_75 (kMinComputeCapability, the oldest the CUDA toolkits the project supports
/// compile for), `ArchitectureError` (exit 3) when this executable holds no code for it (built
/// for other architectures), and `UsageError` (exit 2) when `STAGED_DEVICE_PROFILE` names no
/// profile. Peaks are left at zero: call `MeasurePeaks` to fill them.
DeviceInfo RequireGpu();

/// The oldest compute capability (x 10) the project runs on: Turing, sm_75.
inline constexpr int kMinComputeCapability = 75;

/// The message of the `NoGpuError` for a GPU older than sm_75, e.g. "Tesla P100 is sm_60:
/// staged-kernels needs sm_75 (Turing) or newer".
/// @param[in] name the GPU's name
/// @param[in] cc_major,cc_minor its compute capability
std::string TooOldMessage(const std::string& name, int cc_major, int cc_minor);

/// The message of `NoGpuError`: "no NVIDIA GPU found", plus a second line with the driver's
/// own words only when a driver is installed (@p driver_version > 0).
/// @param[in] driver_version `cudaDriverGetVersion`'s answer (0: no driver)
/// @param[in] error what `cudaGetDeviceCount` returned (`cudaSuccess` with zero devices)
std::string NoGpuMessage(int driver_version, cudaError_t error);

/// The message of `ArchitectureError`, e.g. "built for sm_80, sm_90; this GPU is sm_120:
/// rebuild with -DCMAKE_CUDA_ARCHITECTURES=120".
/// @param[in] built the architectures the build was configured with (CMAKE_CUDA_ARCHITECTURES,
///            separated by commas or semicolons)
/// @param[in] cc_major,cc_minor the GPU's compute capability
std::string ArchitectureMessage(const std::string& built, int cc_major, int cc_minor);

/// The architectures this build was configured with (CMAKE_CUDA_ARCHITECTURES, e.g. "80-real,90").
std::string BuiltArchitectures();

/// Fills `copy_gbps` (median of timed `cudaMemcpy` device-to-device copies of a buffer far
/// larger than L2), `read_gbps` (the best of six read-only kernels: 16-byte loads, 4 or 8 in
/// flight per thread or 32 bytes per thread, read-only or streaming loads, one or two waves of
/// resident blocks, each reading at least 4 GiB in one launch, a buffer of up to 1 GiB read
/// several times) and
/// `fp32_gflops` (an FFMA loop running about 1 ms). With the environment variable
/// `STAGED_SKIP_PEAKS=1` (used under compute-sanitizer), or where CUDA calls wait for the stream
/// (`StreamGate::HoldsQueuedWork()` false: a tool such as compute-sanitizer; noted as a timing
/// caveat), nothing is measured: both bandwidths stay 0 and the FP32 rate comes from attributes.
void MeasurePeaks(DeviceInfo& info);

/// Median GPU time, in microseconds, of an empty kernel <<<1, 32>>> under `TimeGpu` (gated):
/// what the timer charges a launch that does nothing.
/// @param[in] reps timed repetitions
double MeasureEmptyLaunchUs(int reps = 200);

/// Theoretical FP32 GFLOP/s from attributes: SMs x FP32 lanes per SM x 2 x clock.
double Fp32GflopsFromAttributes(const DeviceInfo& info);

/// FP32 lanes per SM for a compute capability (64 or 128; 0 when unknown).
int Fp32LanesPerSm(int cc_major, int cc_minor);

/// Throws `InputError` (exit 2) naming @p what when @p bytes exceed the device's free memory;
/// under `STAGED_DEVICE_PROFILE`, no more is free than the profiled GPU's memory. Call before
/// allocating, so an oversized problem is refused before any work. With
/// `STAGED_MEMORY_NEED_ONLY=1` it prints `memory need: <bytes> bytes (<what>)` to stdout and ends
/// the run with exit 0 (`MemoryNeedReported`): what `scripts/memory_table.py` asks each program.
void RequireDeviceMemory(std::size_t bytes, const std::string& what);

/// Formats a byte count as "1.50 GiB" and the like.
std::string FormatBytes(double bytes);

}  // namespace staged
