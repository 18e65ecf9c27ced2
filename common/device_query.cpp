/**
 * @file device_query.cpp
 * @brief `staged_device_query`: prints the GPU and its measured peaks (copy and read bandwidth,
 *        FP32 rate) and what the timer charges an empty launch.
 *
 * The table form also says whether the GPU has a kernel run-time limit (a display watchdog,
 * `cudaDevAttrKernelExecTimeout`): the line `kernel time limit: yes|no`, which the GPU suite
 * reads to skip its long sweep lines.
 *
 * Exit codes as every executable: 0 printed, 2 bad usage, 3 CUDA error, 77 no usable GPU.
 * The tour and the GPU suite use it to tell whether kernels can run here.
 */
#include <cuda_runtime_api.h>

#include <iostream>

#include "common/cli.hpp"
#include "common/cuda_check.hpp"
#include "common/device_info.hpp"
#include "common/entry.hpp"
#include "common/timing_caveats.hpp"

/// Prints the device line (table) or one CSV row with the measured peaks.
int main(int argc, char** argv) {
  return staged::RunMain(argc, argv, [](int argc, char** argv) -> int {
    staged::CliDefaults defaults;
    defaults.has_dist = false;
    staged::Cli cli("staged_device_query", "the GPU and its measured peaks", defaults);
    auto ctx = staged::StartRun(cli, argc, argv);
    if (!ctx) return staged::kExitOk;
    const staged::DeviceInfo& d = ctx->device;
    const double empty_us = d.copy_gbps > 0 ? staged::MeasureEmptyLaunchUs() : 0.0;
    if (ctx->options.format == staged::OutputFormat::kCsv) {
      std::cout << "name,cc,sms,memory_bytes,l2_bytes,copy_gbps,read_gbps,fp32_gflops,fp32_source,"
                   "fp32_attributes_gflops,empty_launch_us\n"
                << d.name << ',' << d.cc_major << '.' << d.cc_minor << ',' << d.sm_count << ','
                << d.total_bytes << ',' << d.l2_bytes << ',' << d.copy_gbps << ',' << d.read_gbps
                << ',' << d.fp32_gflops << ',' << d.fp32_source << ','
                << staged::Fp32GflopsFromAttributes(d) << ',' << empty_us << "\n";
    } else {
      std::cout << "device: " << d.Describe() << "\n"
                << "L2: " << staged::FormatBytes(static_cast<double>(d.l2_bytes))
                << ", FP32 from attributes: " << staged::Fp32GflopsFromAttributes(d)
                << " GFLOP/s\n";
      if (empty_us > 0) {
        std::cout << "an empty kernel under the timer (StreamGate, CUDA events): " << empty_us
                  << " us\n";
      }
      int device = 0;
      int limited = 0;
      CUDA_CHECK(cudaGetDevice(&device));
      CUDA_CHECK(cudaDeviceGetAttribute(&limited, cudaDevAttrKernelExecTimeout, device));
      std::cout << "kernel time limit: " << (limited ? "yes" : "no")
                << (limited ? " (a display watchdog may stop a long kernel)" : "") << "\n";
    }
    staged::PrintTimingCaveats(std::cerr);
    return staged::kExitOk;
  });
}
