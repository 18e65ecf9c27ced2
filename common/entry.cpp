/// @file entry.cpp
/// @brief Exception-to-exit-code mapping for every executable.
#include "entry.hpp"

#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "timing_caveats.hpp"

namespace staged {

int RunMain(int argc, char** argv, const std::function<int(int, char**)>& body, std::ostream& err) {
  std::string program = argc > 0 && argv[0] != nullptr ? argv[0] : "program";
  const auto slash = program.find_last_of('/');
  if (slash != std::string::npos) program = program.substr(slash + 1);
  try {
    return body(argc, argv);
  } catch (const MemoryNeedReported&) {
    return kExitOk;
  } catch (const UsageError& e) {
    err << program << ": usage error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const InputError& e) {
    err << program << ": input error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const VerificationError& e) {
    err << program << ": verification failed: " << e.what() << "\n";
    return kExitVerifyFailed;
  } catch (const NoGpuError& e) {
    err << program << ": skipped: " << e.what() << "\n";
    return kExitNoGpu;
  } catch (const ArchitectureError& e) {
    err << program << ": CUDA error: " << e.what() << "\n";
    return kExitCudaError;
  } catch (const CudaError& e) {
    if (IsNoGpuError(e.code())) {
      err << program << ": skipped: no NVIDIA GPU found\n  " << e.what() << "\n";
      return kExitNoGpu;
    }
    err << program << ": CUDA error: " << e.what() << "\n";
    return kExitCudaError;
  } catch (const std::bad_alloc&) {
    err << program << ": input error: not enough host memory for this problem size\n";
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    // Launchers check their arguments (sizes, scratch) with std::invalid_argument.
    err << program << ": usage error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    err << program << ": error: " << e.what() << "\n";
    return kExitCudaError;
  }
}

int RunMain(int argc, char** argv, const std::function<int(int, char**)>& body) {
  return RunMain(argc, argv, body, std::cerr);
}

std::optional<RunContext> StartRun(Cli& cli, int argc, char** argv,
                                   const std::function<void(const CommonOptions&)>& validate) {
  RunContext ctx;
  ctx.options = cli.Parse(argc, argv);
  if (ctx.options.help) return std::nullopt;
  if (validate) validate(ctx.options);
  ctx.device = RequireGpu();
  MeasurePeaks(ctx.device);
  return ctx;
}

int FinishRun(const Report& report, const CommonOptions& options) {
  report.Print(std::cout, options.format);
  // Times that are not comparable with a normal run say so: under the table, or on stderr
  // where stdout is CSV or JSON.
  std::ostream& notes = options.format == OutputFormat::kTable ? std::cout : std::cerr;
  PrintTimingCaveats(notes);
  const std::vector<std::string> ungated = report.UngatedRows();
  if (!ungated.empty()) {
    notes << "note: rows timed without the stream gate:";
    for (std::size_t i = 0; i < ungated.size(); ++i) notes << (i ? ", " : " ") << ungated[i];
    notes << "\n";
  }
  std::cout.flush();
  if (!report.AllVerified()) {
    throw VerificationError("at least one variant differs from its reference (rerun with --seed " +
                            std::to_string(options.seed) + " to reproduce)");
  }
  return kExitOk;
}

}  // namespace staged
