/**
 * @file main.cu
 * @brief Driver of ch04_naive and ch04_optimized: C = A·B for an M×K A and a K×N B.
 *
 * Flags: `--n N` columns of B and C (the side of a square problem), `--m M` rows of A and C
 * (0: same as N), `--k K` the inner dimension (0: same as N),
 * `--type float|int32|tf32|bf16|fp16`, and for ch04_optimized `--kernel <stage>|best` (what the
 * `optimized` row runs; default `best`, the stage ChooseStage picks for the shape).
 * ch04_optimized also times every stage as its own `optimized:<stage>` row (the skinny stage
 * only where min(M, N) <= 64). `--type tf32|bf16|fp16` (ch04_optimized only; sm_80 and newer,
 * fp16 from sm_75) times the tensor-core stage, `optimized:mma`, and on a Hopper GPU stage 10,
 * `optimized:wgmma`, against cuBLAS at the same precision (RunTensor).
 *
 * Inputs: float uniform in [-1, 1); int32 uniform in [-8, 8], so |C_ij| <= 64·K never overflows
 * for K <= kMaxDimension. Reference: the CPU (double accumulation, exact for int32) up to
 * M·N·K = kCpuReferenceVolume, cuBLAS above that for float (with the bound of CompareProduct,
 * |A|·|B| from a second SGEMM). The CPU row is timed only where the CPU reference runs and
 * `--cpu-reps` > 0. L2 is flushed before every rep of every variant when A, B and C together
 * are smaller than 4x the L2 cache. The GPU variants are timed in turn (staged::TimeGpuInTurn):
 * each rep is a round of one run of every variant.
 *
 * CSV shape convention: every row of every run names its shape the same way, `dist` =
 * `<type>:<M>x<N>x<K>` (for example `float:4096x4096x4096`, `float:1000x8x1000`,
 * `int32:1024x1024x1024`) and `n` = N, so a shape is found by M, N and K alone.
 *
 * Sections: inputs → reference → run every variant once and verify → time → report.
 */
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"
#include "common/cli.hpp"
#include "common/device_buffer.hpp"
#include "common/entry.hpp"
#include "common/errors.hpp"
#include "common/generate.hpp"
#include "common/stream.hpp"
#include "common/timer.hpp"

namespace {

/// Whether this executable is ch04_optimized (which times every stage).
constexpr bool kOptimizedExe = std::string_view(STAGED_VARIANT) == "optimized";

/// Problem shape.
struct Shape {
  int m;  ///< rows of A and C
  int n;  ///< columns of B and C
  int k;  ///< inner dimension
};

/// @brief Seeded input: float uniform in [-1, 1); int32 uniform in [-8, 8].
template <typename T>
std::vector<T> MakeInput(std::size_t count, std::uint64_t seed) {
  if constexpr (std::is_same_v<T, float>) {
    return staged::Generate<float>(count, staged::Distribution::kUniform, seed);
  } else {
    // Small values keep every sum exact in int32: |C_ij| <= 8·8·K = 2^25 for K = 2^19.
    std::vector<std::uint32_t> raw =
        staged::Generate<std::uint32_t>(count, staged::Distribution::kUniform, seed);
    std::vector<T> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<T>(raw[i] % 17) - 8;
    return out;
  }
}

/// A variant to run: its report name and its launch on a stream.
struct Variant {
  std::string name;                          ///< `naive`, `optimized:<stage>`, `library:cublas`
  std::function<void(cudaStream_t)> launch;  ///< queues one product
};

/// `<type>:<M>x<N>x<K>`, the `dist` of every row (see the file comment).
std::string ShapeLabel(bool is_float, const Shape& s) {
  return std::string(is_float ? "float" : "int32") + ":" + std::to_string(s.m) + "x" +
         std::to_string(s.n) + "x" + std::to_string(s.k);
}

/// One line on stderr saying which stage `best` runs on this shape, and why (for the notes).
void NoteChoice(const Shape& s) {
  namespace opt = ch04::optimized;
  const opt::Residency r = opt::DeviceResidency();
  const opt::Stage stage = opt::ChooseStage(s.m, s.n, s.k, r);
  std::cerr << "note: best = " << opt::Info(stage).name;
  if (stage == opt::Stage::kSplitK) {
    const opt::SplitPlan plan = opt::PlanSplitK(s.m, s.n, s.k, r);
    std::cerr << " (" << plan.tile_m << "x" << plan.tile_n << " tiles, " << plan.splits
              << " splits of K = " << plan.k_chunk << ")";
  } else if (stage == opt::Stage::kStreamK) {
    const opt::StreamKPlan plan = opt::PlanStreamK(s.m, s.n, s.k, r);
    std::cerr << " (" << plan.dp_tiles << " tiles by stage 4, " << plan.sk_tiles << " shared by "
              << plan.blocks << " blocks of " << plan.steps_per_block << " k-steps of "
              << opt::kStreamKDepth << ")";
  }
  std::cerr << " for " << ShapeLabel(true, s) << "\n";
}

template <typename T>
int Run(const staged::RunContext& ctx, const Shape& s, ch04::optimized::Stage chosen) {
  const staged::CommonOptions& opt = ctx.options;
  constexpr bool kFloat = std::is_same_v<T, float>;
  const std::size_t size_a = static_cast<std::size_t>(s.m) * s.k;
  const std::size_t size_b = static_cast<std::size_t>(s.k) * s.n;
  const std::size_t size_c = static_cast<std::size_t>(s.m) * s.n;
  const std::uint64_t volume = static_cast<std::uint64_t>(size_a) * s.n;
  const bool cpu_reference = !kFloat || volume <= ch04::kCpuReferenceVolume;
  // Scratch for the splitk and streamk stages, the only ones that take any (the default is one
  // of the stages): allocated once, outside timing.
  std::size_t workspace_bytes = 0;
  if (kFloat && kOptimizedExe) {
    workspace_bytes =
        std::max(ch04::optimized::WorkspaceBytes(s.m, s.n, s.k, ch04::optimized::Stage::kSplitK),
                 ch04::optimized::WorkspaceBytes(s.m, s.n, s.k, ch04::optimized::Stage::kStreamK));
  }
  // cuBLAS as reference needs a C, |A|, |B| of its own.
  const std::size_t ref_bytes = cpu_reference ? 0 : (size_a + size_b + size_c) * sizeof(float);
  staged::RequireDeviceMemory((size_a + size_b + size_c) * sizeof(T) + ref_bytes + workspace_bytes,
                              "A, B and C of a " + ShapeLabel(kFloat, s) + " product");

  // Inputs.
  const std::vector<T> h_a = MakeInput<T>(size_a, opt.seed);
  const std::vector<T> h_b = MakeInput<T>(size_b, opt.seed ^ 0x9E3779B97F4A7C15ull);
  staged::DeviceBuffer<T> d_a(h_a);
  staged::DeviceBuffer<T> d_b(h_b);
  staged::DeviceBuffer<T> d_c(size_c);
  staged::DeviceBuffer<float> d_workspace(workspace_bytes / sizeof(float));
  const ch04::optimized::Workspace workspace{d_workspace.data(), d_workspace.bytes()};
  staged::Stream stream;

  std::vector<Variant> variants;
  variants.push_back({"naive", [&](cudaStream_t st) {
                        ch04::naive::Matmul(d_a.data(), d_b.data(), d_c.data(), s.m, s.n, s.k, st);
                      }});
  if (kOptimizedExe) {
    for (const auto& info : ch04::optimized::AllStages()) {
      if (!kFloat && !info.supports_int) continue;
      if (!ch04::optimized::TimedOnShape(info.stage, s.m, s.n)) continue;
      const ch04::optimized::Stage stage = info.stage;
      variants.push_back({std::string("optimized:") + info.name, [&, stage](cudaStream_t st) {
                            ch04::optimized::Matmul(d_a.data(), d_b.data(), d_c.data(), s.m, s.n,
                                                    s.k, stage, st, workspace);
                          }});
    }
    // The `optimized` row: what --kernel names (by default the shape rule's pick).
    variants.push_back({"optimized", [&](cudaStream_t st) {
                          ch04::optimized::Matmul(d_a.data(), d_b.data(), d_c.data(), s.m, s.n, s.k,
                                                  chosen, st, workspace);
                        }});
    if (kFloat) NoteChoice(s);
  }
  std::optional<ch04::library::Cublas> cublas;
  if constexpr (kFloat) {
    cublas.emplace();
    variants.push_back({"library:cublas", [&](cudaStream_t st) {
                          cublas->Matmul(d_a.data(), d_b.data(), d_c.data(), s.m, s.n, s.k, st);
                        }});
  }

  // Reference.
  std::vector<T> ref_c;
  std::vector<float> ref_abs;
  const bool time_cpu = cpu_reference && opt.cpu_reps > 0;
  if (opt.verify || time_cpu) {
    if (cpu_reference) {
      ref_c.resize(size_c);
      ch04::cpu::Matmul(h_a.data(), h_b.data(), ref_c.data(), s.m, s.n, s.k);
      if constexpr (kFloat) {
        ref_abs.resize(size_c);
        ch04::cpu::AbsMatmul(h_a.data(), h_b.data(), ref_abs.data(), s.m, s.n, s.k);
      }
    } else if constexpr (kFloat) {
      cublas->Reference(d_a.data(), d_b.data(), s.m, s.n, s.k, &ref_c, &ref_abs);
    }
  }

  // Run every variant once and verify, before any timing.
  std::vector<staged::Verified> verified;
  for (const auto& v : variants) {
    if (!opt.verify) {
      verified.push_back(staged::Verified::kSkipped);
      continue;
    }
    if (v.name == "library:cublas" && !cpu_reference) {
      verified.push_back(staged::Verified::kReference);  // it is the reference here
      continue;
    }
    d_c.FillBytes(0xFF, stream.get());  // poison: a skipped element cannot pass by luck
    v.launch(stream.get());
    std::vector<T> out(size_c);
    d_c.CopyToHost(out.data(), size_c, stream.get());
    staged::VerifyReport r;
    if constexpr (kFloat) {
      r = ch04::CompareProduct(ref_c.data(), out.data(), ref_abs.data(), size_c, s.k);
    } else {
      r = staged::CompareExact(ref_c.data(), out.data(), size_c);
    }
    if (!r.ok) std::cerr << v.name << ": " << r.Summary() << "\n";
    verified.push_back(r.ok ? staged::Verified::kYes : staged::Verified::kNo);
  }

  // Time. Every variant gets the same L2 treatment: flushed before each rep when the operands
  // would otherwise stay in L2 from one rep to the next. The variants are timed in turn, one
  // rep each per round, so the clock's drift over a long run (heat, the power limit) falls on
  // every variant alike, cuBLAS included.
  const std::string label = ShapeLabel(kFloat, s);
  const double flops = 2.0 * static_cast<double>(volume);
  auto row = [&](const std::string& name, const staged::TimingStats& t, staged::Verified ok) {
    staged::ReportRow r;
    r.variant = name;
    r.n = static_cast<std::uint64_t>(s.n);
    r.dist = label;
    r.time = t;
    r.throughput = t.median_ms > 0 ? flops / (t.median_ms * 1e6) : 0.0;
    r.unit = "GFLOP/s";  // pct_peak then comes from the measured FP32 rate
    r.verified = ok;
    return r;
  };
  staged::Report report("04_matmul_global_vs_shared", opt.seed, ctx.device, "library:cublas");
  const bool flush =
      staged::ShouldFlushL2((size_a + size_b + size_c) * sizeof(T), ctx.device.l2_bytes);
  const staged::TimingOptions timing{opt.warmup, opt.reps, flush};
  std::vector<std::function<void(cudaStream_t)>> launches;
  for (const auto& v : variants) launches.push_back(v.launch);
  const std::vector<staged::TimingStats> times =
      staged::TimeGpuInTurn(timing, launches, stream.get());
  for (std::size_t i = 0; i < variants.size(); ++i) {
    report.Add(row(variants[i].name, times[i], verified[i]));
  }
  if (time_cpu) {
    std::vector<T> scratch(size_c);
    const staged::TimingStats t = staged::TimeCpu({0, opt.cpu_reps, false}, [&] {
      ch04::cpu::Matmul(h_a.data(), h_b.data(), scratch.data(), s.m, s.n, s.k);
    });
    report.Add(row("cpu", t, staged::Verified::kReference));
  }
  if (opt.format == staged::OutputFormat::kTable) {
    std::cerr << "reference: "
              << (cpu_reference ? "CPU (double accumulation)" : "cuBLAS SGEMM, FP32") << "; L2 "
              << (flush ? "flushed before every rep" : "not flushed (operands > 4x L2)") << "\n";
    for (const auto& info : ch04::optimized::AllStages()) {
      std::cerr << "note: " << info.name << ": " << info.block_m << "x" << info.block_n << "x"
                << info.block_k << " tile, " << info.global_intensity
                << " flop/B from global memory, " << info.shared_intensity
                << " flop/B from shared memory; " << info.change << "\n";
    }
  }
  return staged::FinishRun(report, opt);
}

/// The tensor-core run: stage 9 (`optimized:mma`), stage 10 (`optimized:wgmma`, Hopper) and cuBLAS
/// at the same precision, all checked against the exact product of the rounded inputs (tensor.cuh's
/// bounds).
int RunTensor(const staged::RunContext& ctx, const Shape& s, ch04::tensor::Precision p) {
  namespace tc = ch04::tensor;
  const staged::CommonOptions& opt = ctx.options;
  std::string why;
  if (!tc::Available(p, &why)) throw staged::ArchitectureError(why);
  const bool tf32 = p == tc::Precision::kTf32;
  const std::size_t size_a = static_cast<std::size_t>(s.m) * s.k;
  const std::size_t size_b = static_cast<std::size_t>(s.k) * s.n;
  const std::size_t size_c = static_cast<std::size_t>(s.m) * s.n;
  const std::uint64_t volume = static_cast<std::uint64_t>(size_a) * s.n;
  const bool cpu_reference = volume <= ch04::kCpuReferenceVolume;
  const std::size_t elem = tf32 ? sizeof(float) : 2;
  const std::size_t ref_bytes = cpu_reference ? 0 : (2 * (size_a + size_b) + size_c) * 4;
  const std::string label = std::string(tc::Name(p)) + ":" + std::to_string(s.m) + "x" +
                            std::to_string(s.n) + "x" + std::to_string(s.k);
  staged::RequireDeviceMemory((size_a + size_b) * elem + size_c * 4 + ref_bytes,
                              "A, B and C of a " + label + " product");

  // Inputs: float for TF32 (the kernel rounds them), rounded to BF16 or FP16 on the host.
  const std::vector<float> h_a = MakeInput<float>(size_a, opt.seed);
  const std::vector<float> h_b = MakeInput<float>(size_b, opt.seed ^ 0x9E3779B97F4A7C15ull);
  staged::DeviceBuffer<float> d_a32, d_b32;
  staged::DeviceBuffer<__nv_bfloat16> d_abf, d_bbf;
  staged::DeviceBuffer<__half> d_ah, d_bh;
  if (p == tc::Precision::kBf16) {
    d_abf = staged::DeviceBuffer<__nv_bfloat16>(tc::ToBf16(h_a));
    d_bbf = staged::DeviceBuffer<__nv_bfloat16>(tc::ToBf16(h_b));
  } else if (p == tc::Precision::kFp16) {
    d_ah = staged::DeviceBuffer<__half>(tc::ToFp16(h_a));
    d_bh = staged::DeviceBuffer<__half>(tc::ToFp16(h_b));
  } else {
    d_a32 = staged::DeviceBuffer<float>(h_a);
    d_b32 = staged::DeviceBuffer<float>(h_b);
  }
  staged::DeviceBuffer<float> d_c(size_c);
  staged::Stream stream;
  tc::CublasTensor cublas;
  std::vector<Variant> variants;
  variants.push_back({"optimized:mma", [&](cudaStream_t st) {
                        if (p == tc::Precision::kBf16) {
                          tc::MatmulBf16(d_abf.data(), d_bbf.data(), d_c.data(), s.m, s.n, s.k, st);
                        } else if (p == tc::Precision::kFp16) {
                          tc::MatmulFp16(d_ah.data(), d_bh.data(), d_c.data(), s.m, s.n, s.k, st);
                        } else {
                          tc::MatmulTf32(d_a32.data(), d_b32.data(), d_c.data(), s.m, s.n, s.k, st);
                        }
                      }});
  // Stage 10 (Hopper's wgmma) where this GPU and build have it and TMA can describe the operands
  // (K and N multiples of 8).
  const void* hopper_a = p == tc::Precision::kBf16   ? static_cast<const void*>(d_abf.data())
                         : p == tc::Precision::kFp16 ? static_cast<const void*>(d_ah.data())
                                                     : static_cast<const void*>(d_a32.data());
  const void* hopper_b = p == tc::Precision::kBf16   ? static_cast<const void*>(d_bbf.data())
                         : p == tc::Precision::kFp16 ? static_cast<const void*>(d_bh.data())
                                                     : static_cast<const void*>(d_b32.data());
  std::string hopper_why;
  const bool hopper =
      tc::HopperAvailable(p, &hopper_why) && tc::HopperFits(hopper_a, hopper_b, s.n, s.k);
  const std::size_t wgmma_row = variants.size();
  if (hopper) {
    variants.push_back(
        {"optimized:wgmma", [&](cudaStream_t st) {
           if (p == tc::Precision::kBf16) {
             tc::MatmulWgmmaBf16(d_abf.data(), d_bbf.data(), d_c.data(), s.m, s.n, s.k, st);
           } else if (p == tc::Precision::kFp16) {
             tc::MatmulWgmmaFp16(d_ah.data(), d_bh.data(), d_c.data(), s.m, s.n, s.k, st);
           } else {
             tc::MatmulWgmmaTf32(d_a32.data(), d_b32.data(), d_c.data(), s.m, s.n, s.k, st);
           }
         }});
  } else if (opt.format == staged::OutputFormat::kTable) {
    std::cerr << "optimized:wgmma left out: "
              << (hopper_why.empty() ? "TMA needs K and N to be multiples of 8" : hopper_why)
              << "\n";
  }
  const std::size_t library_row = variants.size();
  variants.push_back(
      {"library:cublas", [&](cudaStream_t st) {
         if (p == tc::Precision::kBf16) {
           cublas.MatmulBf16(d_abf.data(), d_bbf.data(), d_c.data(), s.m, s.n, s.k, st);
         } else if (p == tc::Precision::kFp16) {
           cublas.MatmulFp16(d_ah.data(), d_bh.data(), d_c.data(), s.m, s.n, s.k, st);
         } else {
           cublas.MatmulTf32(d_a32.data(), d_b32.data(), d_c.data(), s.m, s.n, s.k, st);
         }
       }});

  // Reference: the exact product of the inputs as the kernels multiply them (the CPU in double,
  // else FP32 SGEMM): rounded, and for stage 10 in TF32 with A truncated (tensor.cuh).
  struct Reference {
    std::vector<float> c, abs;
  };
  auto reference = [&](const std::vector<float>& ra, const std::vector<float>& rb) {
    Reference r;
    if (cpu_reference) {
      r.c.resize(size_c);
      r.abs.resize(size_c);
      ch04::cpu::Matmul(ra.data(), rb.data(), r.c.data(), s.m, s.n, s.k);
      ch04::cpu::AbsMatmul(ra.data(), rb.data(), r.abs.data(), s.m, s.n, s.k);
    } else {
      const staged::DeviceBuffer<float> d_ra(ra), d_rb(rb);
      ch04::library::Cublas sgemm;
      sgemm.Reference(d_ra.data(), d_rb.data(), s.m, s.n, s.k, &r.c, &r.abs);
    }
    return r;
  };
  const bool truncated_row = hopper && tf32;  // optimized:wgmma multiplies a truncated A
  Reference rounded, truncated;
  if (opt.verify) {
    const std::vector<float> rb = tc::Rounded(p, h_b);
    rounded = reference(tc::Rounded(p, h_a), rb);
    if (truncated_row) truncated = reference(tc::Truncated(h_a), rb);
  }
  // cuBLAS's TF32 rounding is not documented, so its row also gets the inputs' rounding
  // (InputRoundingScale; 0 for BF16 and FP16).
  auto scale = [&](std::size_t i) {
    return tc::AccumulationScale(s.k) + (i == library_row ? tc::InputRoundingScale(p) : 0.0);
  };
  std::vector<staged::Verified> verified;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (!opt.verify) {
      verified.push_back(staged::Verified::kSkipped);
      continue;
    }
    d_c.FillBytes(0xFF, stream.get());
    variants[i].launch(stream.get());
    std::vector<float> out(size_c);
    d_c.CopyToHost(out.data(), size_c, stream.get());
    const Reference& ref = truncated_row && i == wgmma_row ? truncated : rounded;
    const staged::VerifyReport r =
        ch04::CompareProductWithin(ref.c.data(), out.data(), ref.abs.data(), size_c, s.k, scale(i));
    if (!r.ok) std::cerr << variants[i].name << ": " << r.Summary() << "\n";
    verified.push_back(r.ok ? staged::Verified::kYes : staged::Verified::kNo);
  }

  // Time: the same L2 rule and the same rounds as the FP32 run.
  staged::Report report("04_matmul_global_vs_shared", opt.seed, ctx.device, "library:cublas");
  const bool flush =
      staged::ShouldFlushL2((size_a + size_b) * elem + size_c * 4, ctx.device.l2_bytes);
  // The stage's ceiling, timed in the same rounds: mma.sync alone (MmaProbe).
  const tc::MmaProbe probe(p);
  variants.push_back({"probe:mma.sync", [&](cudaStream_t st) { probe.Launch(st); }});
  verified.push_back(staged::Verified::kReference);  // nothing to check: it is the ceiling
  std::vector<std::function<void(cudaStream_t)>> launches;
  for (const auto& v : variants) launches.push_back(v.launch);
  const std::vector<staged::TimingStats> times =
      staged::TimeGpuInTurn({opt.warmup, opt.reps, flush}, launches, stream.get());
  auto rate = [](double flops, double ms) { return ms > 0 ? flops / (ms * 1e6) : 0.0; };
  const double probe_rate = rate(probe.Flops(), times.back().median_ms);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    staged::ReportRow r;
    r.variant = variants[i].name;
    r.n = static_cast<std::uint64_t>(s.n);
    r.dist = label;
    r.time = times[i];
    const bool is_probe = i + 1 == variants.size();
    r.throughput =
        rate(is_probe ? probe.Flops() : 2.0 * static_cast<double>(volume), times[i].median_ms);
    r.unit = "GFLOP/s";
    // The FP32 rate is not a tensor core's ceiling; mma.sync's own rate is the stage's (cuBLAS
    // may use other instructions, so its row has none).
    r.ceiling = staged::Ceiling::kNone;
    if (i == 0 && probe_rate > 0) r.pct_peak = 100.0 * r.throughput / probe_rate;
    if (is_probe) r.library_ref = "-";  // no such row: the probe is not compared with cuBLAS
    r.verified = verified[i];
    report.Add(r);
  }
  if (opt.format == staged::OutputFormat::kTable) {
    std::cerr << "reference: exact product of the " << tc::Name(p) << "-rounded inputs ("
              << (cpu_reference ? "CPU, double" : "cuBLAS SGEMM, FP32") << "); L2 "
              << (flush ? "flushed before every rep" : "not flushed (operands > 4x L2)") << "\n";
  }
  return staged::FinishRun(report, opt);
}

std::string KernelHelp() {
  std::string help = "stage reported as the 'optimized' row (flop/byte from global memory)";
  for (const auto& info : ch04::optimized::AllStages()) {
    help += std::string("; ") + info.name + " (" +
            std::to_string(static_cast<int>(info.global_intensity)) + ")";
  }
  return help + "; best = the stage the shape rule picks (ChooseStage)";
}

}  // namespace

/// Entry point: parses the flags, runs the float or int32 product, prints the report.
int main(int argc, char** argv) {
  return staged::RunMain(argc, argv, [](int argc, char** argv) -> int {
    staged::CliDefaults defaults;
    defaults.n = 1024;
    defaults.min_n = 1;
    defaults.max_n = ch04::kMaxDimension;
    defaults.has_dist = false;
    defaults.cpu_reps = 1;
    staged::Cli cli("ch04_" STAGED_VARIANT,
                    "C = A·B (row-major, M×K times K×N): naive global-memory kernel, "
                    "shared-memory tiles and register-blocked stages, against cuBLAS SGEMM (FP32)",
                    defaults);
    std::uint64_t m = 0;
    std::uint64_t k = 0;
    std::string type = "float";
    std::string kernel = "best";
    cli.AddSize("m", &m, 0, ch04::kMaxDimension, "rows of A and C; 0 = same as --n");
    cli.AddSize("k", &k, 0, ch04::kMaxDimension, "columns of A and rows of B; 0 = same as --n");
    cli.AddChoice("type", &type, {"float", "int32", "tf32", "bf16", "fp16"},
                  "element type (int32: inputs in [-8, 8]; naive and tiled16 only; tf32, bf16, "
                  "fp16: the tensor-core stage against cuBLAS at that precision, ch04_optimized, "
                  "sm_80 and newer, fp16 from sm_75)");
    if (kOptimizedExe) {
      std::vector<std::string> words;
      for (const auto& info : ch04::optimized::AllStages()) words.push_back(info.name);
      words.push_back("best");
      cli.AddChoice("kernel", &kernel, words, KernelHelp());
    }
    // The flags' combinations are checked before the GPU is looked for.
    auto ctx = staged::StartRun(cli, argc, argv, [&](const staged::CommonOptions&) {
      const ch04::optimized::Stage chosen = ch04::optimized::ParseStage(kernel);
      if (type == "tf32" || type == "bf16" || type == "fp16") {
        if (!kOptimizedExe) throw staged::UsageError("--type " + type + " runs in ch04_optimized");
        if (kernel != "best") {
          throw staged::UsageError("--kernel picks an FP32 stage; --type " + type +
                                   " times the tensor-core stage (mma)");
        }
      }
      if (type == "int32" && !ch04::optimized::Info(chosen).supports_int) {
        // `best` runs tiled16 for int32
        throw staged::UsageError("--kernel " + kernel + " is float only (int32: tiled16)");
      }
    });
    if (!ctx) return 0;
    const int n = static_cast<int>(ctx->options.n);
    const Shape shape{m == 0 ? n : static_cast<int>(m), n, k == 0 ? n : static_cast<int>(k)};
    const ch04::optimized::Stage stage = ch04::optimized::ParseStage(kernel);
    if (type == "int32") return Run<std::int32_t>(*ctx, shape, stage);
    if (type == "tf32") return RunTensor(*ctx, shape, ch04::tensor::Precision::kTf32);
    if (type == "bf16") return RunTensor(*ctx, shape, ch04::tensor::Precision::kBf16);
    if (type == "fp16") return RunTensor(*ctx, shape, ch04::tensor::Precision::kFp16);
    return Run<float>(*ctx, shape, stage);
  });
}
