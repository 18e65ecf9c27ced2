/**
 * @file errors.hpp
 * @brief The exception types every executable maps to an exit code, and those codes.
 *
 * Helpers in `common/` and in the chapters throw; only `staged::RunMain` (entry.hpp) turns an
 * exception into a process exit code. This keeps every error path testable with `EXPECT_THROW`.
 */
#pragma once

#include <stdexcept>
#include <string>

namespace staged {

/// Process exit codes shared by every executable (see the "Contract" section of the README).
enum ExitCode : int {
  kExitOk = 0,            ///< ran, and every verified result matched
  kExitVerifyFailed = 1,  ///< a result did not match its reference
  kExitUsage = 2,         ///< bad command line or bad input data
  kExitCudaError = 3,     ///< a CUDA runtime or library call failed
  kExitNoGpu = 77,        ///< no usable GPU; 77 is CTest's conventional skip code
};

/// Bad command line: unknown flag, malformed or out-of-range value. Exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Bad input data (malformed stream, size that does not fit in memory). Exit code 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Not an error: under `STAGED_MEMORY_NEED_ONLY=1` a run stops once it has said the device memory
/// it needs (`RequireDeviceMemory`). Exit code 0.
class MemoryNeedReported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A computed result differs from its reference. Exit code 1.
class VerificationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// No CUDA device can be used (none present, or no driver). Exit code 77.
class NoGpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The executable holds no code this GPU can run (built for other architectures). Exit code 3:
/// the GPU is usable, the build is not.
class ArchitectureError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace staged
