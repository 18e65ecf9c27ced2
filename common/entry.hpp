/**
 * @file entry.hpp
 * @brief `RunMain`: the one place where exceptions become exit codes.
 *
 * | exception | exit code | meaning |
 * |---|---|---|
 * | none, body returned 0 | 0 | ran and verified |
 * | `VerificationError` | 1 | a result did not match its reference |
 * | `UsageError`, `InputError`, `std::invalid_argument` | 2 | bad usage or input (a launcher's argument check included) |
 * | `std::bad_alloc` | 2 | the problem does not fit in host memory |
 * | `CudaError` | 3 | a CUDA call failed (77 when the code means "no GPU": no device, no driver) |
 * | `ArchitectureError` | 3 | the executable has no code for this GPU (the message gives the rebuild command) |
 * | `NoGpuError` | 77 | no NVIDIA GPU found (CTest's skip code) |
 * | any other `std::exception` | 3 | unexpected runtime failure |
 *
 * @code
 * int main(int argc, char** argv) {
 *   return staged::RunMain(argc, argv, [](int argc, char** argv) { return Run(argc, argv); });
 * }
 * @endcode
 */
#pragma once

#include <functional>
#include <iosfwd>
#include <optional>

#include "cli.hpp"
#include "device_info.hpp"
#include "errors.hpp"
#include "report.hpp"

namespace staged {

/// Runs @p body, printing any error as one line on @p err and mapping it to an exit code.
/// @param[in] argc, argv the process arguments, passed on to @p body (argv[0] names the program
///            in messages)
/// @param[in] body the program; returns its exit code or throws
/// @param[out] err where the one-line error message goes
int RunMain(int argc, char** argv, const std::function<int(int, char**)>& body, std::ostream& err);
/// Same as above, printing errors to stderr.
/// @param[in] argc, argv the process arguments
/// @param[in] body the program; returns its exit code or throws
int RunMain(int argc, char** argv, const std::function<int(int, char**)>& body);

/// What a driver knows once it has started: its options and the device with measured peaks.
struct RunContext {
  CommonOptions options;  ///< the parsed common flags
  DeviceInfo device;      ///< the GPU, with `copy_gbps` and `fp32_gflops` measured
};

/// Parses the command line (`--help` prints and returns `std::nullopt`), runs @p validate on
/// the parsed options (it throws `UsageError` for a combination of flags the executable refuses),
/// then requires a GPU (`NoGpuError` otherwise) and measures its peaks: a usage error is reported
/// as one on any machine, with or without a GPU.
/// @param[in,out] cli the executable's flags
/// @param[in] argc, argv the process arguments
/// @param[in] validate checks of the chapter's own flags (may be empty)
std::optional<RunContext> StartRun(Cli& cli, int argc, char** argv,
                                   const std::function<void(const CommonOptions&)>& validate = {});

/// Prints @p report in the requested format, then the timing caveats of this process
/// (`staged::PrintTimingCaveats`) and the rows they touched (under the table; on stderr for CSV
/// and JSON), and returns `kExitOk`; throws `VerificationError` when any row failed
/// verification (after printing, so the numbers are still shown).
/// @param[in] report every measured row
/// @param[in] options the parsed flags (format, seed)
int FinishRun(const Report& report, const CommonOptions& options);

}  // namespace staged
