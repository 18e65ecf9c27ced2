/// @file ch04_tensor_test.cu
/// @brief Chapter 04's tensor-core stage on the GPU, in TF32 and BF16, with cuBLAS at the same
///        precision: against the exact product of the rounded inputs (tensor.cuh's bounds) over
///        the edge shapes (non-multiples of every tile, K = 8192, offset pointers, empty
///        shapes), NaN and infinity, and the mutation check at every shape the benchmark runs.
///        Where the GPU, the device profile or the build lacks sm_80 code each test skips with
///        the reason, and the stage refuses to launch.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ch04_shapes.hpp"
#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "common/errors.hpp"
#include "gpu_test.hpp"

namespace ch04 {
namespace {

using namespace ch04::testing;  // NOLINT: the shared shapes and faults
using tensor::Precision;

/// Skips the test, with the reason, where the tensor-core stage cannot run in precision @p p.
#define SKIP_WITHOUT_TENSOR_CORES(p)                          \
  do {                                                        \
    std::string why_;                                         \
    if (!tensor::Available((p), &why_)) GTEST_SKIP() << why_; \
  } while (0)

tensor::CublasTensor& SharedCublas() {
  static tensor::CublasTensor handle;
  return handle;
}

/// The inputs of one precision on the device: FP32 for TF32 (the kernels round them), BF16 or
/// FP16.
struct DeviceInputs {
  staged::DeviceBuffer<float> a32, b32;
  staged::DeviceBuffer<__nv_bfloat16> abf, bbf;
  staged::DeviceBuffer<__half> ah, bh;
  DeviceInputs(Precision p, const std::vector<float>& a, const std::vector<float>& b) {
    if (p == Precision::kTf32) {
      a32 = staged::DeviceBuffer<float>(a);
      b32 = staged::DeviceBuffer<float>(b);
    } else if (p == Precision::kBf16) {
      abf = staged::DeviceBuffer<__nv_bfloat16>(tensor::ToBf16(a));
      bbf = staged::DeviceBuffer<__nv_bfloat16>(tensor::ToBf16(b));
    } else {
      ah = staged::DeviceBuffer<__half>(tensor::ToFp16(a));
      bh = staged::DeviceBuffer<__half>(tensor::ToFp16(b));
    }
  }
};

/// What computes the product: stage 9 (`mma.sync`), stage 10 (Hopper's `wgmma`) or cuBLAS.
enum class Engine { kMma, kWgmma, kCublas };

const char* EngineName(Engine e) {
  return e == Engine::kMma ? "mma" : (e == Engine::kWgmma ? "wgmma" : "cuBLAS");
}

/// Runs @p e with A and B starting @p offset elements into their buffers.
void Launch(Precision p, Engine e, const DeviceInputs& in, float* c, const Shape& s,
            std::size_t offset = 0) {
  if (p == Precision::kTf32) {
    const float* a = in.a32.data() + offset;
    const float* b = in.b32.data() + offset;
    if (e == Engine::kCublas) {
      SharedCublas().MatmulTf32(a, b, c, s.m, s.n, s.k, nullptr);
    } else if (e == Engine::kWgmma) {
      tensor::MatmulWgmmaTf32(a, b, c, s.m, s.n, s.k, nullptr);
    } else {
      tensor::MatmulTf32(a, b, c, s.m, s.n, s.k, nullptr);
    }
  } else if (p == Precision::kBf16) {
    const __nv_bfloat16* a = in.abf.data() + offset;
    const __nv_bfloat16* b = in.bbf.data() + offset;
    if (e == Engine::kCublas) {
      SharedCublas().MatmulBf16(a, b, c, s.m, s.n, s.k, nullptr);
    } else if (e == Engine::kWgmma) {
      tensor::MatmulWgmmaBf16(a, b, c, s.m, s.n, s.k, nullptr);
    } else {
      tensor::MatmulBf16(a, b, c, s.m, s.n, s.k, nullptr);
    }
  } else {
    const __half* a = in.ah.data() + offset;
    const __half* b = in.bh.data() + offset;
    if (e == Engine::kCublas) {
      SharedCublas().MatmulFp16(a, b, c, s.m, s.n, s.k, nullptr);
    } else if (e == Engine::kWgmma) {
      tensor::MatmulWgmmaFp16(a, b, c, s.m, s.n, s.k, nullptr);
    } else {
      tensor::MatmulFp16(a, b, c, s.m, s.n, s.k, nullptr);
    }
  }
  CUDA_CHECK(cudaDeviceSynchronize());
}

/// Whether @p e in @p p hands A to the tensor cores truncated rather than rounded: stage 10 in
/// TF32 reads A from shared memory (`TruncateTf32`), where TMA takes the operands (`HopperFits`;
/// elsewhere it runs stage 9, which rounds).
bool TruncatesA(Precision p, Engine e, const DeviceInputs& in, const Shape& s,
                std::size_t offset) {
  return p == Precision::kTf32 && e == Engine::kWgmma &&
         tensor::HopperFits(in.a32.data() + offset, in.b32.data() + offset, s.n, s.k);
}

/// A as the kernel multiplies it: rounded to @p p, or truncated to TF32 (@p truncate_a).
std::vector<float> KernelA(Precision p, bool truncate_a, const std::vector<float>& a) {
  return truncate_a ? tensor::Truncated(a) : tensor::Rounded(p, a);
}

/// Rounded inputs and their exact product (CPU, double), cached per precision, shape, offset
/// and A's rounding.
struct TensorReference {
  std::vector<float> a, b;            ///< the unrounded inputs
  std::vector<float> c, abs_product;  ///< of the rounded inputs
};

const TensorReference& Reference(Precision p, const Shape& s, std::size_t offset = 0,
                                 bool truncate_a = false) {
  static std::map<std::tuple<int, Shape, std::size_t, bool>, TensorReference> cache;
  const auto key = std::make_tuple(static_cast<int>(p), s, offset, truncate_a);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  TensorReference r;
  r.a = FloatInput(Elements(s.m, s.k) + offset, kTestSeed);
  r.b = FloatInput(Elements(s.k, s.n) + offset, kTestSeed + 1);
  const std::vector<float> ra = KernelA(p, truncate_a, r.a), rb = tensor::Rounded(p, r.b);
  r.c.resize(Elements(s.m, s.n));
  r.abs_product.resize(r.c.size());
  cpu::Matmul(ra.data() + offset, rb.data() + offset, r.c.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(ra.data() + offset, rb.data() + offset, r.abs_product.data(), s.m, s.n, s.k);
  return cache.emplace(key, std::move(r)).first->second;
}

/// Runs @p e on poisoned C and checks it against the reference of the inputs as it multiplies
/// them: our stages within AccumulationScale, cuBLAS (whose TF32 rounding is undocumented) with
/// InputRoundingScale added.
void ExpectMatches(Precision p, Engine e, const Shape& s, std::size_t offset = 0) {
  const TensorReference& inputs = Reference(p, s, offset);
  const DeviceInputs in(p, inputs.a, inputs.b);
  const TensorReference& r = Reference(p, s, offset, TruncatesA(p, e, in, s, offset));
  staged::DeviceBuffer<float> c(Elements(s.m, s.n));
  c.FillBytes(0xFF);
  Launch(p, e, in, c.data(), s, offset);
  const std::vector<float> out = c.ToHost();
  const double scale =
      tensor::AccumulationScale(s.k) + (e == Engine::kCublas ? tensor::InputRoundingScale(p) : 0.0);
  const staged::VerifyReport rep =
      CompareProductWithin(r.c.data(), out.data(), r.abs_product.data(), out.size(), s.k, scale);
  EXPECT_TRUE(rep.ok) << EngineName(e) << " " << tensor::Name(p) << " " << ShapeName(s)
                      << " offset " << offset << ": " << rep.Summary();
}

/// Edges of the 256×128 and 128×128 blocks, the 64×64 and 64×32 warp tiles, the 16×8 mma tile,
/// the 32- or 64-deep k-tile and the 16-byte chunk (K, N not multiples of 4 or 8: the
/// element-wise copies), one row or column, and K = 8192.
const std::vector<Shape> kTensorShapes = {
    {1, 1, 1},        {7, 9, 8},       {17, 33, 9},      {16, 8, 16},
    {63, 65, 127},    {128, 128, 128}, {129, 129, 129},  {96, 100, 36},
    {256, 384, 24},   {1000, 8, 1000}, {8, 1000, 1000},  {513, 257, 1025},
    {127, 129, 4099}, {64, 128, 8192}, {256, 256, 1024}, {255, 136, 40},
};

using Case = std::tuple<Precision, Shape>;

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return std::string(tensor::Name(std::get<0>(info.param))) + "_" +
         ShapeName(std::get<1>(info.param));
}

class Ch04Tensor : public staged::testing::GpuTestWithParam<Case> {};

TEST_P(Ch04Tensor, StageMatchesRoundedProduct) {
  const auto [p, s] = GetParam();
  SKIP_WITHOUT_TENSOR_CORES(p);
  ExpectMatches(p, Engine::kMma, s);
}

TEST_P(Ch04Tensor, CublasMatchesRoundedProduct) {
  const auto [p, s] = GetParam();
  SKIP_WITHOUT_TENSOR_CORES(p);
  ExpectMatches(p, Engine::kCublas, s);
}

INSTANTIATE_TEST_SUITE_P(All, Ch04Tensor,
                         ::testing::Combine(::testing::Values(Precision::kTf32, Precision::kBf16,
                                                              Precision::kFp16),
                                            ::testing::ValuesIn(kTensorShapes)),
                         CaseName);

class Ch04TensorEdges : public staged::testing::GpuTestWithParam<Precision> {};

TEST_P(Ch04TensorEdges, OffsetPointersTakeTheElementPath) {
  SKIP_WITHOUT_TENSOR_CORES(GetParam());
  // A and B one element past a 16-byte boundary: whole chunks are not aligned, so the kernel
  // copies element by element, whatever the shape.
  for (const Shape s : {Shape{128, 128, 128}, Shape{130, 136, 72}})
    ExpectMatches(GetParam(), Engine::kMma, s, 1);
}

/// M or N = 0 writes nothing, K = 0 writes zeros.
void ExpectEmptyShapesHandled(Precision p, Engine e) {
  const DeviceInputs in(p, FloatInput(64, kTestSeed), FloatInput(64, kTestSeed + 1));
  staged::DeviceBuffer<float> c(64);
  c.FillBytes(0xFF);
  Launch(p, e, in, c.data(), {0, 8, 8});
  Launch(p, e, in, c.data(), {8, 0, 8});
  for (float v : c.ToHost()) EXPECT_TRUE(std::isnan(v)) << "M or N = 0 wrote C";
  Launch(p, e, in, c.data(), {8, 8, 0});
  for (float v : c.ToHost()) EXPECT_EQ(v, 0.0f) << "K = 0 is an empty sum";
}

/// A NaN in A makes its row of C NaN; an infinity in B its column ±inf (NaN where it meets 0).
void ExpectNaNAndInfinityPropagate(Precision p, Engine e) {
  const Shape s{40, 24, 40};
  std::vector<float> a = FloatInput(Elements(s.m, s.k), kTestSeed);
  std::vector<float> b = FloatInput(Elements(s.k, s.n), kTestSeed + 1);
  a[Elements(3, s.k) + 17] = kNaN;  // row 3 of C: NaN
  for (int p2 = 0; p2 < s.k; ++p2) b[Elements(p2, s.n) + 5] = 0.0f;
  b[Elements(30, s.n) + 5] = kInf;  // column 5: +inf·a_i,30 (a row with a_i,30 = 0 gives NaN)
  const DeviceInputs in(p, a, b);
  staged::DeviceBuffer<float> c(Elements(s.m, s.n));
  Launch(p, e, in, c.data(), s);
  const std::vector<float> out = c.ToHost();
  for (int j = 0; j < s.n; ++j) EXPECT_TRUE(std::isnan(out[Elements(3, s.n) + j])) << j;
  for (int i = 0; i < s.m; ++i) {
    if (i == 3) continue;
    const float a30 = tensor::Rounded(p, {a[Elements(i, s.k) + 30]})[0];
    const float want = a30 > 0 ? kInf : (a30 < 0 ? -kInf : kNaN);
    const float got = out[Elements(i, s.n) + 5];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << i;
    } else {
      EXPECT_EQ(got, want) << i;
    }
  }
}

TEST_P(Ch04TensorEdges, EmptyShapesWriteNothingOrZeros) {
  SKIP_WITHOUT_TENSOR_CORES(GetParam());
  ExpectEmptyShapesHandled(GetParam(), Engine::kMma);
}

TEST_P(Ch04TensorEdges, NaNAndInfinityPropagate) {
  SKIP_WITHOUT_TENSOR_CORES(GetParam());
  ExpectNaNAndInfinityPropagate(GetParam(), Engine::kMma);
}

INSTANTIATE_TEST_SUITE_P(All, Ch04TensorEdges,
                         ::testing::Values(Precision::kTf32, Precision::kBf16, Precision::kFp16),
                         [](const auto& info) { return std::string(tensor::Name(info.param)); });

class Ch04TensorArch : public staged::testing::GpuTest {};

TEST_F(Ch04TensorArch, RefusedWhereUnavailableRunsWhereAvailable) {
  // Under a profile of sm_75 (or a compute_75 PTX-only build) TF32 and BF16 must refuse with the
  // reason, not launch code that is not there, and FP16 must run; elsewhere all three run.
  const Shape s{32, 32, 32};
  staged::DeviceBuffer<float> c(1024);
  const int cc = staged::PlanningLimits().cc;
  for (const Precision p : {Precision::kTf32, Precision::kBf16, Precision::kFp16}) {
    SCOPED_TRACE(tensor::Name(p));
    const DeviceInputs in(p, FloatInput(1024, kTestSeed), FloatInput(1024, kTestSeed + 1));
    std::string why;
    if (tensor::Available(p, &why)) {
      EXPECT_TRUE(why.empty());
      EXPECT_GE(cc, p == Precision::kFp16 ? 75 : 80);
      EXPECT_NO_THROW(Launch(p, Engine::kMma, in, c.data(), s));
    } else {
      EXPECT_NE(why.find(p == Precision::kFp16 ? "sm_75" : "sm_80"), std::string::npos) << why;
      EXPECT_THROW(Launch(p, Engine::kMma, in, c.data(), s), staged::ArchitectureError);
    }
  }
}

// -------------------------------------------------------------------------------------------
// The mutation check at the tensor benchmark's shapes (kTensorBenchShapes; a host test keeps it
// equal to bench.args): the reference as the executable builds it (the CPU up to 512^3, FP32
// SGEMM of the rounded inputs above), the candidate from the stage; the clean candidate passes,
// every fault fails.

class Ch04TensorMutation : public staged::testing::GpuTestWithParam<Case> {};

/// The clean product of @p e passes the checker at @p s, and each fault injected into it fails.
void ExpectEachFaultRejected(Precision p, Engine e, const Shape& s) {
  const std::vector<float> a = FloatInput(Elements(s.m, s.k), kTestSeed);
  const std::vector<float> b = FloatInput(Elements(s.k, s.n), kTestSeed + 1);
  const DeviceInputs in(p, a, b);
  const std::vector<float> ra = KernelA(p, TruncatesA(p, e, in, s, 0), a);
  const std::vector<float> rb = tensor::Rounded(p, b);
  std::vector<float> ref, abs_product;
  if (Volume(s) <= kCpuReferenceLimit) {
    ref.resize(Elements(s.m, s.n));
    abs_product.resize(ref.size());
    cpu::Matmul(ra.data(), rb.data(), ref.data(), s.m, s.n, s.k);
    cpu::AbsMatmul(ra.data(), rb.data(), abs_product.data(), s.m, s.n, s.k);
  } else {
    const staged::DeviceBuffer<float> d_ra(ra), d_rb(rb);
    library::Cublas sgemm;
    sgemm.Reference(d_ra.data(), d_rb.data(), s.m, s.n, s.k, &ref, &abs_product);
  }
  std::vector<float> out;
  {
    staged::DeviceBuffer<float> c(Elements(s.m, s.n));
    c.FillBytes(0xFF);
    Launch(p, e, in, c.data(), s);
    out = c.ToHost();
  }
  const double scale = tensor::AccumulationScale(s.k);
  const staged::VerifyReport clean =
      CompareProductWithin(ref.data(), out.data(), abs_product.data(), out.size(), s.k, scale);
  ASSERT_TRUE(clean.ok) << EngineName(e) << " " << tensor::Name(p) << " " << ShapeName(s) << ": "
                        << clean.Summary();
  for (Fault f : kAllFaults) {
    if (!Applies(f, s)) continue;
    const std::vector<float> bad = Inject(f, out, ra, rb, s);
    EXPECT_FALSE(
        CompareProductWithin(ref.data(), bad.data(), abs_product.data(), bad.size(), s.k, scale).ok)
        << tensor::Name(p) << " " << ShapeName(s) << ": " << FaultName(f) << " was not caught";
  }
}

TEST_P(Ch04TensorMutation, CheckerRejectsEachFault) {
  const auto [p, s] = GetParam();
  SKIP_WITHOUT_TENSOR_CORES(p);
  ExpectEachFaultRejected(p, Engine::kMma, s);
}

INSTANTIATE_TEST_SUITE_P(Bench, Ch04TensorMutation,
                         ::testing::Combine(::testing::Values(Precision::kTf32, Precision::kBf16,
                                                              Precision::kFp16),
                                            ::testing::ValuesIn(kTensorBenchShapes)),
                         CaseName);

// -------------------------------------------------------------------------------------------
// Stage 10 (Hopper's wgmma, TF32, BF16 and FP16): the same checks, where a GPU of compute
// capability 9.0 and a build for it have the stage; elsewhere each test skips with the reason.

/// Skips the test, with the reason, where stage 10 cannot run in precision @p p.
#define SKIP_WITHOUT_HOPPER(p)                                      \
  do {                                                              \
    std::string why_;                                               \
    if (!tensor::HopperAvailable((p), &why_)) GTEST_SKIP() << why_; \
  } while (0)

/// The tensor shapes and the edges of stage 10's tiles that TMA takes (K and N multiples of 8):
/// the 128×256 block (TF32: 256×128) and 64-deep (TF32: 32-deep) k-tile exactly, one short and
/// one over, M past a band of the block order (16 tile rows of 128; TF32: 8 of 256), so that the
/// last band is short, and K over four stages of the ring.
std::vector<Shape> HopperShapes() {
  std::vector<Shape> shapes = kTensorShapes;
  for (const Shape s : {Shape{128, 256, 64}, Shape{127, 248, 56}, Shape{136, 264, 72},
                        Shape{256, 128, 32}, Shape{255, 120, 40}, Shape{264, 136, 24},
                        Shape{2181, 760, 128}, Shape{4200, 392, 136}, Shape{300, 520, 1000},
                        Shape{1, 8, 8}})
    shapes.push_back(s);
  return shapes;
}

class Ch04Hopper : public staged::testing::GpuTestWithParam<Case> {};

TEST_P(Ch04Hopper, StageMatchesRoundedProduct) {
  const auto [p, s] = GetParam();
  SKIP_WITHOUT_HOPPER(p);
  ExpectMatches(p, Engine::kWgmma, s);
}

INSTANTIATE_TEST_SUITE_P(All, Ch04Hopper,
                         ::testing::Combine(::testing::Values(Precision::kTf32, Precision::kBf16,
                                                              Precision::kFp16),
                                            ::testing::ValuesIn(HopperShapes())),
                         CaseName);

class Ch04HopperEdges : public staged::testing::GpuTestWithParam<Precision> {};

TEST_P(Ch04HopperEdges, OffsetPointers) {
  SKIP_WITHOUT_HOPPER(GetParam());
  // 8 elements in (16 or 32 bytes): still TMA's; 1 element in: not on a 16-byte boundary,
  // stage 9's.
  for (const std::size_t offset : {std::size_t{8}, std::size_t{1}}) {
    for (const Shape s : {Shape{128, 256, 128}, Shape{130, 136, 72}})
      ExpectMatches(GetParam(), Engine::kWgmma, s, offset);
  }
}

TEST_P(Ch04HopperEdges, CAtAnOddAddressTakesSingleStores) {
  const Precision p = GetParam();
  SKIP_WITHOUT_HOPPER(p);
  // C one float past an 8-byte boundary: the epilogue cannot store column pairs as float2.
  const Shape s{136, 264, 72};
  const TensorReference& inputs = Reference(p, s);
  const DeviceInputs in(p, inputs.a, inputs.b);
  const TensorReference& r = Reference(p, s, 0, TruncatesA(p, Engine::kWgmma, in, s, 0));
  staged::DeviceBuffer<float> c(Elements(s.m, s.n) + 2);
  c.FillBytes(0xFF);
  Launch(p, Engine::kWgmma, in, c.data() + 1, s);
  const std::vector<float> all = c.ToHost();
  EXPECT_TRUE(std::isnan(all.front()) && std::isnan(all.back())) << "wrote outside C";
  const std::vector<float> out(all.begin() + 1, all.end() - 1);
  const staged::VerifyReport rep =
      CompareProductWithin(r.c.data(), out.data(), r.abs_product.data(), out.size(), s.k,
                           tensor::AccumulationScale(s.k));
  EXPECT_TRUE(rep.ok) << rep.Summary();
}

TEST_P(Ch04HopperEdges, EmptyShapesWriteNothingOrZeros) {
  SKIP_WITHOUT_HOPPER(GetParam());
  ExpectEmptyShapesHandled(GetParam(), Engine::kWgmma);
}

TEST_P(Ch04HopperEdges, NaNAndInfinityPropagate) {
  SKIP_WITHOUT_HOPPER(GetParam());
  ExpectNaNAndInfinityPropagate(GetParam(), Engine::kWgmma);
}

TEST_P(Ch04HopperEdges, ReusedAcrossShapesOnOneStream) {
  SKIP_WITHOUT_HOPPER(GetParam());
  // A large product, a small one and the large one again: nothing of one call's tiles, maps or
  // barriers may leak into the next.
  for (const Shape s : {Shape{512, 512, 512}, Shape{16, 8, 24}, Shape{512, 512, 512}})
    ExpectMatches(GetParam(), Engine::kWgmma, s);
}

INSTANTIATE_TEST_SUITE_P(All, Ch04HopperEdges,
                         ::testing::Values(Precision::kTf32, Precision::kBf16, Precision::kFp16),
                         [](const auto& info) { return std::string(tensor::Name(info.param)); });

class Ch04HopperArch : public staged::testing::GpuTest {};

TEST_F(Ch04HopperArch, RefusedWhereUnavailableRunsWhereAvailable) {
  // Each precision runs where the GPU (or the profile) is 9.0 and the build compiled the stage,
  // and refuses with the reason elsewhere (a profile of a smaller GPU on a Hopper, a compute_75
  // PTX-only build).
  std::string why;
  const Shape s{32, 32, 32};
  staged::DeviceBuffer<float> c(1024);
  for (const Precision p : {Precision::kTf32, Precision::kBf16, Precision::kFp16}) {
    SCOPED_TRACE(tensor::Name(p));
    const DeviceInputs in(p, FloatInput(1024, kTestSeed), FloatInput(1024, kTestSeed + 1));
    if (tensor::HopperAvailable(p, &why)) {
      EXPECT_TRUE(why.empty());
      EXPECT_EQ(staged::PlanningLimits().cc, 90);
      EXPECT_NO_THROW(Launch(p, Engine::kWgmma, in, c.data(), s));
    } else {
      EXPECT_FALSE(why.empty());
      EXPECT_THROW(Launch(p, Engine::kWgmma, in, c.data(), s), staged::ArchitectureError);
    }
  }
}

class Ch04HopperMutation : public staged::testing::GpuTestWithParam<Case> {};

TEST_P(Ch04HopperMutation, CheckerRejectsEachFault) {
  const auto [p, s] = GetParam();
  SKIP_WITHOUT_HOPPER(p);
  ExpectEachFaultRejected(p, Engine::kWgmma, s);
}

INSTANTIATE_TEST_SUITE_P(Bench, Ch04HopperMutation,
                         ::testing::Combine(::testing::Values(Precision::kTf32, Precision::kBf16,
                                                              Precision::kFp16),
                                            ::testing::ValuesIn(kTensorBenchShapes)),
                         CaseName);

}  // namespace
}  // namespace ch04
