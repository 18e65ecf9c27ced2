/**
 * @file main.cu
 * @brief Driver of `ch01_naive` and `ch01_optimized`: min and max of n elements, verified
 *        against `std::minmax_element`, timed against CUB and the CPU.
 *
 * Rows of `ch01_naive`: cpu, naive, library:cub, library:cub-count64. Rows of `ch01_optimized`:
 * cpu, naive, optimized:scalar-loads, optimized:vector-loads, optimized, library:cub,
 * library:cub-count64. The two library rows are CUB's reduction with the item count as 32 and as
 * 64 bits (the faster width depends on the size); `vs_library` is taken against the faster of the
 * two in this run, named on stderr. With `--crossover`
 * (either executable): cpu:crossover, optimized:crossover (kernel only, CUDA events) and
 * optimized+h2d:crossover (input copied from pinned memory, kernel, result copied back; host
 * wall clock) for n = 16, 32, ... up to `--n`, then the two crossover sizes.
 *
 * Throughput is n * sizeof(T) bytes (every element read once) over the median time; `% peak`
 * of every GPU row is taken against the device's measured *read* bandwidth (the kernels only
 * read), not the copy bandwidth (a copy's reads and writes share the bus). CPU rows have no
 * `% peak`. Below 4x the L2 size the L2 is flushed before every timed rep (`--flush-l2 auto`,
 * `staged::ShouldFlushL2`), so small inputs are read from HBM like large ones instead of from
 * a warm cache. GPU rows are timed behind the stream gate (GPU time only, see common/timer.hpp).
 *
 * @code
 * ch01_optimized --n 2^28 --type float
 * ch01_optimized --n 4M --type double --offset 3 --dist reverse
 * ch01_optimized --crossover --n 2^24 --cpu-reps 5
 * @endcode
 */
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "chapters/01_minmax_reduction/minmax.cuh"
#include "common/cli.hpp"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/entry.hpp"
#include "common/generate.hpp"
#include "common/report.hpp"
#include "common/stream.hpp"
#include "common/timer.hpp"
#include "common/verify.hpp"

namespace {

/// Chapter flags beyond the common ones.
struct ChapterOptions {
  std::string type = "float";  // element type
  std::int64_t offset = 0;     // input pointer offset in elements (0..3)
  std::string flush = "auto";  // L2 flush policy
  bool crossover = false;      // run the CPU-vs-GPU crossover sweep instead
};

/// One GPU variant: its row name and its launcher (all share one signature).
template <typename T>
struct Variant {
  std::string name;
  std::function<std::size_t(std::size_t)> temp_bytes;
  std::function<void(const T*, std::size_t, ch01::MinMaxPair<T>*, void*, std::size_t, cudaStream_t)>
      run;
};

/// The library row with a 64-bit count; `library:cub` has a 32-bit count where n fits.
constexpr const char* kLibraryCount64 = "library:cub-count64";

template <typename T>
std::vector<Variant<T>> VariantsOfThisExecutable() {
  using ch01::optimized::Stage;
  std::vector<Variant<T>> v;
  v.push_back({"naive", ch01::naive::MinMaxTempBytes<T>, ch01::naive::MinMax<T>});
  if (std::string(STAGED_VARIANT) == "optimized") {
    auto stage = [](Stage s) {
      return [s](const T* in, std::size_t n, ch01::MinMaxPair<T>* out, void* temp,
                 std::size_t bytes, cudaStream_t stream) {
        ch01::optimized::MinMaxStage<T>(s, in, n, out, temp, bytes, stream);
      };
    };
    v.push_back({"optimized:scalar-loads", ch01::optimized::MinMaxTempBytes<T>,
                 stage(Stage::kScalarLoads)});
    v.push_back({"optimized:vector-loads", ch01::optimized::MinMaxTempBytes<T>,
                 stage(Stage::kVectorLoads)});
    v.push_back({"optimized", ch01::optimized::MinMaxTempBytes<T>, ch01::optimized::MinMax<T>});
  }
  v.push_back({"library:cub", ch01::library::MinMaxTempBytes<T>, ch01::library::MinMax<T>});
  v.push_back(
      {kLibraryCount64, ch01::library::MinMaxTempBytes<T>, ch01::library::MinMaxCount64<T>});
  return v;
}

/// A report row in GB/s: n * sizeof(T) bytes read once in the median time. Kernel rows read
/// only, so their `% peak` is against the measured read bandwidth (`Ceiling::kRead`, the
/// default here); CPU rows and rows that include PCIe copies get `Ceiling::kNone` (the GPU's
/// memory bandwidth is not their ceiling).
staged::ReportRow Row(const std::string& variant, std::size_t n, const std::string& dist,
                      const staged::TimingStats& t, std::size_t elem_bytes,
                      staged::Verified verified, staged::Ceiling ceiling = staged::Ceiling::kRead) {
  staged::ReportRow row;
  row.variant = variant;
  row.n = n;
  row.dist = dist;
  row.time = t;
  row.throughput = staged::GigabytesPerSecond(double(n) * double(elem_bytes), t.median_ms);
  row.unit = "GB/s";
  row.ceiling = ceiling;
  row.verified = verified;
  return row;
}

/// The `--flush-l2` rule: on, off, or (auto) when the input would stay in L2 across reps.
bool FlushL2(const std::string& policy, std::size_t input_bytes, const staged::DeviceInfo& d) {
  return policy == "on" || (policy == "auto" && staged::ShouldFlushL2(input_bytes, d.l2_bytes));
}

/// Exact comparison of a result pair with the reference pair.
template <typename T>
staged::VerifyReport ComparePair(const ch01::MinMaxPair<T>& expected,
                                 const ch01::MinMaxPair<T>& actual) {
  const T e[2] = {expected.min, expected.max};
  const T a[2] = {actual.min, actual.max};
  return staged::CompareExact(e, a, 2);
}

/// Runs @p variant once into a poisoned result, returns whether it matches @p ref.
template <typename T>
staged::Verified RunOnceAndVerify(const Variant<T>& variant, const T* d_in, std::size_t n,
                                  staged::DeviceBuffer<ch01::MinMaxPair<T>>& d_result,
                                  staged::DeviceBuffer<unsigned char>& d_temp,
                                  const ch01::MinMaxPair<T>* ref) {
  d_result.FillBytes(0xFF);
  variant.run(d_in, n, d_result.data(), d_temp.data(), d_temp.bytes(), nullptr);
  CUDA_CHECK(cudaDeviceSynchronize());
  if (ref == nullptr) return staged::Verified::kSkipped;
  const ch01::MinMaxPair<T> got = d_result.ToHost()[0];
  const staged::VerifyReport r = ComparePair(*ref, got);
  if (!r.ok) std::cerr << variant.name << " (n = " << n << "): " << r.Summary() << "\n";
  return r.ok ? staged::Verified::kYes : staged::Verified::kNo;
}

/// Device bytes a run needs: input (with offset), scratch, result, L2 flush buffer.
template <typename T>
std::size_t DeviceBytesNeeded(std::size_t n, std::size_t offset, std::size_t temp,
                              const staged::DeviceInfo& device) {
  return (n + offset) * sizeof(T) + temp + 256 + 2 * device.l2_bytes;
}

template <typename T>
int RunBenchmark(const staged::RunContext& ctx, const ChapterOptions& copt) {
  const staged::CommonOptions& opt = ctx.options;
  const std::size_t n = opt.n;
  const std::size_t offset = static_cast<std::size_t>(copt.offset);
  const auto variants = VariantsOfThisExecutable<T>();
  // The naive scratch grows with n; the others are small. One buffer serves every variant.
  std::size_t temp = 0;
  for (const auto& v : variants) temp = std::max(temp, v.temp_bytes(n));
  staged::RequireDeviceMemory(DeviceBytesNeeded<T>(n, offset, temp, ctx.device),
                              "--n " + std::to_string(n) + " " + copt.type + " elements");

  staged::Report report("01_minmax_reduction", opt.seed, ctx.device, "library:cub");
  // The element type goes into the dist column ("float:uniform") so that rows of different
  // types never look alike in one CSV (the report has no type column).
  const std::string dist = copt.type + ":" + staged::DistributionName(opt.dist);
  const std::vector<T> h_in = staged::Generate<T>(n, opt.dist, opt.seed);

  // CPU reference: computed once for verification, timed when --cpu-reps > 0.
  ch01::MinMaxPair<T> ref{};
  const bool need_ref = opt.verify || opt.cpu_reps > 0;
  if (need_ref) {
    staged::TimingStats t = staged::TimeCpu(staged::TimingOptions{0, std::max(opt.cpu_reps, 1)},
                                            [&] { ref = ch01::cpu::MinMax(h_in.data(), n); });
    if (opt.cpu_reps > 0) {
      report.Add(
          Row("cpu", n, dist, t, sizeof(T), staged::Verified::kReference, staged::Ceiling::kNone));
    }
  }

  staged::DeviceBuffer<T> d_buf(n + offset);
  // The offset elements are never read; zero them anyway so the whole buffer is defined.
  if (offset > 0) CUDA_CHECK(cudaMemset(d_buf.data(), 0, offset * sizeof(T)));
  staged::CopyToDeviceAndWait(d_buf.data() + offset, h_in.data(), n);
  const T* d_in = d_buf.data() + offset;
  staged::DeviceBuffer<unsigned char> d_temp(std::max<std::size_t>(temp, 1));
  staged::DeviceBuffer<ch01::MinMaxPair<T>> d_result(1);

  // Every variant of the run gets the same L2 treatment; each rep is gated (the launchers only
  // queue work: no host synchronisation inside).
  const staged::TimingOptions timing{opt.warmup, opt.reps,
                                     FlushL2(copt.flush, n * sizeof(T), ctx.device)};
  for (const auto& v : variants) {
    // Past 2^32 - 1 elements `library:cub` has a 64-bit count too: one row says it.
    if (v.name == kLibraryCount64 && !ch01::library::NarrowCountHolds(n)) continue;
    // Run once and verify, then time.
    const staged::Verified verified =
        RunOnceAndVerify(v, d_in, n, d_result, d_temp, opt.verify ? &ref : nullptr);
    const staged::TimingStats t = staged::TimeGpu(timing, [&](cudaStream_t s) {
      v.run(d_in, n, d_result.data(), d_temp.data(), d_temp.bytes(), s);
    });
    report.Add(Row(v.name, n, dist, t, sizeof(T), verified));
  }
  // CUB at its best: the faster count width at this size is the reference.
  const std::string library = report.FastestOf({"library:cub", kLibraryCount64});
  report.SetLibraryVariant(library);
  std::cerr << "ch01: vs_library against " << library
            << (library == kLibraryCount64 ? " (CUB with a 64-bit count)"
                                           : " (CUB with a 32-bit count where n fits)")
            << ", the faster here\n";
  return staged::FinishRun(report, opt);
}

/// The Polish report's figure: CPU against the GPU for n = 16, 32, ... up to --n, kernel only and with
/// the host-to-device copy of the input (pinned) and the copy of the result back.
template <typename T>
int RunCrossover(const staged::RunContext& ctx, const ChapterOptions& copt) {
  const staged::CommonOptions& opt = ctx.options;
  const std::size_t max_n = opt.n;
  const std::size_t temp = ch01::optimized::MinMaxTempBytes<T>(max_n);
  staged::RequireDeviceMemory(DeviceBytesNeeded<T>(max_n, 0, temp, ctx.device),
                              "--crossover up to --n " + std::to_string(max_n));
  staged::Report report("01_minmax_reduction", opt.seed, ctx.device, "library:cub");
  // The element type goes into the dist column ("float:uniform") so that rows of different
  // types never look alike in one CSV (the report has no type column).
  const std::string dist = copt.type + ":" + staged::DistributionName(opt.dist);
  staged::DeviceBuffer<T> d_in(max_n);
  staged::DeviceBuffer<unsigned char> d_temp(temp);
  staged::DeviceBuffer<ch01::MinMaxPair<T>> d_result(1);
  staged::PinnedBuffer<T> h_pinned(max_n);
  staged::PinnedBuffer<ch01::MinMaxPair<T>> h_result(1);
  staged::Stream stream;
  const int cpu_reps = std::max(opt.cpu_reps, 1);

  std::size_t cross_kernel = 0;    // smallest n from which the kernel always beats the CPU
  std::size_t cross_transfer = 0;  // same, counting the transfers
  for (std::size_t n = 16; n <= max_n; n *= 2) {
    const std::vector<T> h_in = staged::Generate<T>(n, opt.dist, opt.seed);
    std::copy(h_in.begin(), h_in.end(), h_pinned.data());
    ch01::MinMaxPair<T> ref{};
    const staged::TimingStats t_cpu = staged::TimeCpu(
        staged::TimingOptions{1, cpu_reps}, [&] { ref = ch01::cpu::MinMax(h_pinned.data(), n); });
    auto with_transfer = [&] {
      CUDA_CHECK(cudaMemcpyAsync(d_in.data(), h_pinned.data(), n * sizeof(T),
                                 cudaMemcpyHostToDevice, stream.get()));
      ch01::optimized::MinMax(d_in.data(), n, d_result.data(), d_temp.data(), temp, stream.get());
      CUDA_CHECK(cudaMemcpyAsync(h_result.data(), d_result.data(), sizeof(ch01::MinMaxPair<T>),
                                 cudaMemcpyDeviceToHost, stream.get()));
      stream.Synchronize();
    };
    // Verify the whole path once (input copied, kernel, result copied), then time.
    d_result.FillBytes(0xFF, stream.get());  // same stream as the run: the poison lands first
    with_transfer();
    const staged::VerifyReport check = ComparePair(ref, h_result[0]);
    if (!check.ok) std::cerr << "optimized (n = " << n << "): " << check.Summary() << "\n";
    const staged::Verified verified = check.ok ? staged::Verified::kYes : staged::Verified::kNo;
    // Kernel only: the counter reset and the kernel queued behind the gate, GPU time.
    const staged::TimingStats t_kernel = staged::TimeGpu(
        staged::TimingOptions{opt.warmup, opt.reps, FlushL2(copt.flush, n * sizeof(T), ctx.device)},
        [&](cudaStream_t s) {
          ch01::optimized::MinMax(d_in.data(), n, d_result.data(), d_temp.data(), temp, s);
        },
        stream.get());
    // Wall clock, as a caller sees it: launch overheads and the copies included. This work ends
    // in a stream synchronisation (the host needs the result), so it is timed on the host with
    // TimeCpu and never behind a stream gate (it would wait for the gate and the gate for it).
    const staged::TimingStats t_transfer =
        staged::TimeCpu(staged::TimingOptions{opt.warmup, opt.reps}, with_transfer);
    // Own row names, so a sweep's CSV can hold both modes without two "optimized" rows per n.
    report.Add(Row("cpu:crossover", n, dist, t_cpu, sizeof(T), staged::Verified::kReference,
                   staged::Ceiling::kNone));
    report.Add(Row("optimized:crossover", n, dist, t_kernel, sizeof(T), verified)).cpu_ref =
        "cpu:crossover";
    report
        .Add(Row("optimized+h2d:crossover", n, dist, t_transfer, sizeof(T), verified,
                 staged::Ceiling::kNone))
        .cpu_ref = "cpu:crossover";
    // A crossover is the start of the run of sizes where the GPU wins up to the largest n.
    if (t_kernel.median_ms < t_cpu.median_ms) {
      if (cross_kernel == 0) cross_kernel = n;
    } else {
      cross_kernel = 0;
    }
    if (t_transfer.median_ms < t_cpu.median_ms) {
      if (cross_transfer == 0) cross_transfer = n;
    } else {
      cross_transfer = 0;
    }
    if (n > max_n / 2) break;  // n *= 2 would pass max_n (and could overflow near 2^63)
  }
  // Tables get the summary on stdout; CSV/JSON keep stdout machine-readable.
  std::ostream& out = opt.format == staged::OutputFormat::kTable ? std::cout : std::cerr;
  auto describe = [&](std::size_t n) {
    return n == 0 ? "GPU never faster up to n = " + std::to_string(max_n)
                  : "GPU faster from n = " + std::to_string(n);
  };
  const int status = staged::FinishRun(report, opt);
  out << "crossover (kernel only, " << copt.type << "): " << describe(cross_kernel) << "\n"
      << "crossover (with host->device copy, " << copt.type << "): " << describe(cross_transfer)
      << "\n";
  return status;
}

template <typename T>
int Dispatch(const staged::RunContext& ctx, const ChapterOptions& copt) {
  return copt.crossover ? RunCrossover<T>(ctx, copt) : RunBenchmark<T>(ctx, copt);
}

}  // namespace

/// Entry point: chapter flags, then the benchmark or the crossover sweep for `--type`.
int main(int argc, char** argv) {
  return staged::RunMain(argc, argv, [](int argc, char** argv) -> int {
    staged::CliDefaults defaults;
    defaults.n = 1 << 24;
    // The flags are parsed before the GPU is looked for: --n 0 is exit 2 on any machine.
    defaults.min_n = 1;
    defaults.min_n_reason = "0 is refused: the minimum and maximum of nothing are undefined";
    staged::Cli cli(
        "ch01_" STAGED_VARIANT,
        "Min and max of n elements: the Polish report's tree, one-pass kernel, CUB, CPU", defaults);
    ChapterOptions copt;
    cli.AddChoice("type", &copt.type, {"float", "double", "int32", "uint32"}, "element type");
    cli.AddInt("offset", &copt.offset, 0, 3,
               "start the input this many elements past a 256-byte boundary");
    cli.AddChoice("flush-l2", &copt.flush, {"auto", "on", "off"},
                  "flush L2 before each timed rep; auto: when the input is under 4x L2");
    cli.AddFlag("crossover", &copt.crossover,
                "CPU vs GPU for n = 16, 32, ... up to --n, kernel only and with transfers");
    auto ctx = staged::StartRun(cli, argc, argv);
    if (!ctx) return 0;
    if (copt.type == "double") return Dispatch<double>(*ctx, copt);
    if (copt.type == "int32") return Dispatch<std::int32_t>(*ctx, copt);
    if (copt.type == "uint32") return Dispatch<std::uint32_t>(*ctx, copt);
    return Dispatch<float>(*ctx, copt);
  });
}
