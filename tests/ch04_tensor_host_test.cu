/// @file ch04_tensor_host_test.cu
/// @brief Chapter 04's tensor-core checks that need no GPU: the TF32 and BF16 rounding the
///        reference emulates, the bound's size, and the checker against a host model of the
///        tensor cores' accumulation (truncated FP32 sums of exact products): the model passes,
///        every fault fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include "ch04_shapes.hpp"
#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/mma_layout.cuh"
#include "chapters/04_matmul_global_vs_shared/tensor.cuh"

namespace ch04 {
namespace {

using namespace ch04::testing;  // NOLINT: the shared shapes and faults
using tensor::Precision;

std::uint32_t Bits(float x) {
  std::uint32_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

TEST(Ch04Tf32, RoundsToNearestTiesAwayFromZero) {
  const float ulp = std::ldexp(1.0f, -10);  // TF32's spacing in [1, 2)
  EXPECT_EQ(tensor::RoundTf32(1.0f), 1.0f);
  EXPECT_EQ(tensor::RoundTf32(1.0f + ulp / 2), 1.0f + ulp);            // tie: away from zero
  EXPECT_EQ(tensor::RoundTf32(-(1.0f + ulp / 2)), -(1.0f + ulp));      // ... for negatives too
  EXPECT_EQ(tensor::RoundTf32(1.0f + ulp + ulp / 2), 1.0f + 2 * ulp);  // not to even
  EXPECT_EQ(tensor::RoundTf32(std::nextafter(1.0f + ulp / 2, 0.0f)), 1.0f);
  EXPECT_EQ(tensor::RoundTf32(std::nextafter(1.0f + ulp / 2, 2.0f)), 1.0f + ulp);
  EXPECT_EQ(tensor::RoundTf32(std::numeric_limits<float>::max()),
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(tensor::RoundTf32(-std::numeric_limits<float>::infinity()),
            -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(tensor::RoundTf32(kNaN)));
  // Every rounded value keeps 10 mantissa bits and is within half a TF32 ulp.
  for (float x : FloatInput(10000, kTestSeed)) {
    const float r = tensor::RoundTf32(x);
    EXPECT_EQ(Bits(r) & 0x1FFFu, 0u) << x;
    EXPECT_LE(std::fabs(r - x), std::ldexp(std::fabs(x), -11)) << x;
  }
}

TEST(Ch04Tf32, TruncatesTowardZero) {
  const float ulp = std::ldexp(1.0f, -10);
  EXPECT_EQ(tensor::TruncateTf32(1.0f + ulp / 2), 1.0f);  // where RoundTf32 goes up
  EXPECT_EQ(tensor::TruncateTf32(std::nextafter(1.0f + ulp, 0.0f)), 1.0f);
  EXPECT_EQ(tensor::TruncateTf32(-(1.0f + ulp + ulp / 2)), -(1.0f + ulp));  // toward zero
  EXPECT_EQ(tensor::TruncateTf32(std::numeric_limits<float>::max()),
            std::ldexp(2.0f - ulp, 127));  // no overflow: the largest TF32 value
  EXPECT_EQ(tensor::TruncateTf32(std::numeric_limits<float>::infinity()),
            std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(tensor::TruncateTf32(kNaN)));
  const std::vector<float> xs = FloatInput(10000, kTestSeed);
  const std::vector<float> ts = tensor::Truncated(xs);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const float x = xs[i], t = ts[i];
    EXPECT_EQ(Bits(t) & 0x1FFFu, 0u) << x;
    EXPECT_EQ(Bits(t) >> 13, Bits(x) >> 13) << x;  // the 19 bits kept as they are
    EXPECT_LE(std::fabs(t), std::fabs(x)) << x;
    EXPECT_LT(std::fabs(x - t), std::ldexp(std::fabs(x), -10)) << x;
  }
}

TEST(Ch04Bf16, RoundsToNearestEven) {
  const float ulp = std::ldexp(1.0f, -7);                              // BF16's spacing in [1, 2)
  EXPECT_EQ(tensor::RoundBf16(1.0f + ulp / 2), 1.0f);                  // tie: to even
  EXPECT_EQ(tensor::RoundBf16(1.0f + ulp + ulp / 2), 1.0f + 2 * ulp);  // tie: to even
  EXPECT_EQ(tensor::RoundBf16(std::nextafter(1.0f + ulp / 2, 2.0f)), 1.0f + ulp);
  for (float x : FloatInput(10000, kTestSeed)) {
    const float r = tensor::RoundBf16(x);
    EXPECT_EQ(Bits(r) & 0xFFFFu, 0u) << x;
    EXPECT_LE(std::fabs(r - x), std::ldexp(std::fabs(x), -8)) << x;
  }
}

TEST(Ch04Fp16, RoundsToNearestEvenAndOverflowsPast65504) {
  const float ulp = std::ldexp(1.0f, -10);                             // FP16's spacing in [1, 2)
  EXPECT_EQ(tensor::RoundFp16(1.0f + ulp / 2), 1.0f);                  // tie: to even
  EXPECT_EQ(tensor::RoundFp16(1.0f + ulp + ulp / 2), 1.0f + 2 * ulp);  // tie: to even
  EXPECT_EQ(tensor::RoundFp16(65504.0f), 65504.0f);
  EXPECT_EQ(tensor::RoundFp16(70000.0f), std::numeric_limits<float>::infinity());
  for (float x : FloatInput(10000, kTestSeed)) {
    const float r = tensor::RoundFp16(x);
    // Normal FP16 (|x| >= 2^-14) keeps 11 significant bits; below, a fixed spacing of 2^-24.
    const float bound = std::max(std::ldexp(std::fabs(x), -11), std::ldexp(1.0f, -25));
    EXPECT_LE(std::fabs(r - x), bound) << x;
  }
  EXPECT_EQ(tensor::InputRoundingScale(Precision::kFp16), 0.0);
}

TEST(Ch04TensorBound, AllowsTruncatedSumsAndStaysBelowADroppedKTile) {
  for (int k : {1, 8, 64, 1000, 4099, 8192}) {
    // The kernel's truncating accumulation gets twice the reference's allowance.
    EXPECT_GT(tensor::AccumulationScale(k), 1.4 * ToleranceScale(k)) << k;
    EXPECT_LT(tensor::AccumulationScale(k), 1.6 * ToleranceScale(k)) << k;
  }
  // Uniform [-1, 1) inputs: (|A|·|B|)_ij ≈ K/4; a dropped k-tile of 8 has standard deviation
  // 0.94. The tolerance must be well below it at the longest K the chapter runs.
  EXPECT_LT(tensor::AccumulationScale(8192) * 8192 / 4, 0.4);
  EXPECT_EQ(tensor::InputRoundingScale(Precision::kBf16), 0.0);
  EXPECT_GT(tensor::InputRoundingScale(Precision::kTf32), 4 * std::ldexp(1.0, -10));
  EXPECT_LT(tensor::InputRoundingScale(Precision::kTf32), 5 * std::ldexp(1.0, -10));
}

TEST(Ch04TensorBound, FiguresOfTheTensorCorePage) {
  // tensor_cores.md derives these by hand; they must stay what the code computes.
  EXPECT_NEAR(tensor::AccumulationScale(8192), 30 * std::sqrt(8192.0) * std::ldexp(1.0, -24), 1e-7);
  EXPECT_NEAR(tensor::AccumulationScale(8192), 1.6e-4, 0.05e-4);
  EXPECT_NEAR(tensor::AccumulationScale(8192) * 8192 / 4, 0.33, 0.005);
  EXPECT_NEAR(tensor::InputRoundingScale(Precision::kTf32), 4e-3, 0.1e-3);
}

/// @p x rounded toward zero to float.
float TowardZero(double x) {
  const float f = static_cast<float>(x);  // to nearest
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) {
    return std::nextafter(f, 0.0f);
  }
  return f;
}

/// A host model of the tensor cores on the rounded inputs: each instruction adds the exact
/// products of @p step consecutive k to the FP32 accumulator, the sum truncated (toward zero).
std::vector<float> TruncatedTensorProduct(const std::vector<float>& a, const std::vector<float>& b,
                                          const Shape& s, int step) {
  std::vector<float> c(Elements(s.m, s.n));
  for (int i = 0; i < s.m; ++i) {
    for (int j = 0; j < s.n; ++j) {
      float acc = 0.0f;
      for (int p0 = 0; p0 < s.k; p0 += step) {
        double sum = acc;
        for (int p = p0; p < std::min(p0 + step, s.k); ++p) {
          sum += static_cast<double>(a[Elements(i, s.k) + p]) * b[Elements(p, s.n) + j];
        }
        acc = TowardZero(sum);
      }
      c[Elements(i, s.n) + j] = acc;
    }
  }
  return c;
}

struct TensorCase {
  Precision p;
  Shape s;
};

class Ch04TensorChecker : public ::testing::TestWithParam<TensorCase> {};

TEST_P(Ch04TensorChecker, ModelPassesAndEveryFaultFails) {
  const auto [p, s] = GetParam();
  const std::vector<float> a = tensor::Rounded(p, FloatInput(Elements(s.m, s.k), kTestSeed));
  const std::vector<float> b = tensor::Rounded(p, FloatInput(Elements(s.k, s.n), kTestSeed + 1));
  std::vector<float> ref(Elements(s.m, s.n)), abs_product(ref.size());
  cpu::Matmul(a.data(), b.data(), ref.data(), s.m, s.n, s.k);
  cpu::AbsMatmul(a.data(), b.data(), abs_product.data(), s.m, s.n, s.k);
  const double scale = tensor::AccumulationScale(s.k);
  const std::vector<float> c = TruncatedTensorProduct(a, b, s, p == Precision::kTf32 ? 8 : 16);
  const staged::VerifyReport clean =
      CompareProductWithin(ref.data(), c.data(), abs_product.data(), c.size(), s.k, scale);
  EXPECT_TRUE(clean.ok) << ShapeName(s) << ": " << clean.Summary();
  for (Fault f : kAllFaults) {
    if (!Applies(f, s)) continue;
    const std::vector<float> bad = Inject(f, c, a, b, s);
    EXPECT_FALSE(
        CompareProductWithin(ref.data(), bad.data(), abs_product.data(), bad.size(), s.k, scale).ok)
        << tensor::Name(p) << " " << ShapeName(s) << ": " << FaultName(f) << " was not caught";
  }
}

INSTANTIATE_TEST_SUITE_P(Host, Ch04TensorChecker,
                         ::testing::Values(TensorCase{Precision::kTf32, {64, 64, 8192}},
                                           TensorCase{Precision::kBf16, {64, 64, 8192}},
                                           TensorCase{Precision::kTf32, {130, 129, 1000}},
                                           TensorCase{Precision::kBf16, {130, 129, 1000}},
                                           TensorCase{Precision::kTf32, {200, 200, 64}},
                                           TensorCase{Precision::kBf16, {17, 33, 9}},
                                           TensorCase{Precision::kFp16, {64, 64, 8192}},
                                           TensorCase{Precision::kFp16, {130, 129, 1000}}),
                         [](const auto& info) {
                           return std::string(tensor::Name(info.param.p)) + "_" +
                                  ShapeName(info.param.s);
                         });

// -------------------------------------------------------------------------------------------
// Stage 9's layout replayed on the host: the copies fill a k-tile with the ids of A's and B's
// elements at the offsets mma_layout.cuh gives; each lane's `ldmatrix` (PTX: lane l receives
// word l % 4 of row l / 4 of each 8×8 matrix; `.trans`: elements (2·(l % 4), l / 4) and
// (2·(l % 4) + 1, l / 4)) and 32-bit loads must then deliver exactly the elements PTX's mma
// fragments name (lane 4g + i), and no access may touch a bank twice.

namespace L = tensor::layout;

/// Element ids of a tile: A[row][k] and B[k][col], distinct and within 16 bits.
std::uint32_t IdA(int row, int k) { return static_cast<std::uint32_t>(row * 64 + k); }
std::uint32_t IdB(int k, int col) { return static_cast<std::uint32_t>(k * 128 + col); }

/// A k-tile of shared memory as bytes, filled by the copies of all 256 threads.
struct Tile {
  explicit Tile(int size) : bytes(size, 0), writes(size / 16, 0) {}
  std::vector<std::uint8_t> bytes;
  std::vector<int> writes;  // per 16-byte chunk
  template <typename E>
  void Put(int offset, E value) {
    std::memcpy(&bytes[offset], &value, sizeof value);
  }
  template <typename E>
  E Get(int offset) const {
    E v;
    std::memcpy(&v, &bytes[offset], sizeof v);
    return v;
  }
};

/// A tile of @p copies 16-byte copies per thread as the kernel's copies leave it: copy idx
/// brings chunk @p chunk_of(idx) to @p offset_of(row, chunk), its values ids @p id(row, column)
/// of @p elem_bytes bytes (4: TF32, 2: BF16). Also checks that every chunk is written once and
/// that no 8-lane phase of a copy hits a bank group twice.
template <typename ChunkOf, typename OffsetOf, typename Id>
Tile Fill(int copies, int elem_bytes, ChunkOf chunk_of, OffsetOf offset_of, Id id,
          const char* what) {
  Tile t(copies * L::kThreads * 16);
  const int per_chunk = 16 / elem_bytes;
  for (int i = 0; i < copies; ++i) {
    for (int warp = 0; warp < L::kThreads / 32; ++warp) {
      for (int phase = 0; phase < 4; ++phase) {
        std::set<int> groups;
        for (int lane = phase * 8; lane < phase * 8 + 8; ++lane) {
          const L::RowChunk rc = chunk_of(warp * 32 + lane + i * L::kThreads);
          const int off = offset_of(rc.row, rc.chunk);
          groups.insert(off / 16 % 8);
          ++t.writes[off / 16];
          for (int e = 0; e < per_chunk; ++e) {
            const std::uint32_t v = id(rc.row, rc.chunk * per_chunk + e);
            if (elem_bytes == 4) {
              t.Put<std::uint32_t>(off + 4 * e, v);
            } else {
              t.Put<std::uint16_t>(off + 2 * e, static_cast<std::uint16_t>(v));
            }
          }
        }
        EXPECT_EQ(groups.size(), 8u) << what << "'s copies: a bank conflict";
      }
    }
  }
  for (int w : t.writes) EXPECT_EQ(w, 1) << what << "'s copies: a chunk written " << w << " times";
  return t;
}

/// A's tile of geometry @p G in either precision.
template <class G>
Tile FillA(int elem_bytes) {
  return Fill(G::kCopiesA, elem_bytes, L::CopyChunkA, L::OffsetA, IdA, "A");
}

/// B's tile.
template <int kElemBytes>
Tile FillB() {
  return Fill(L::kCopiesB, kElemBytes, L::CopyChunkB<kElemBytes>, L::OffsetB<kElemBytes>, IdB, "B");
}

/// The byte address lane @p lane hands ldmatrix for A; checks each matrix's 8 rows for conflicts.
std::vector<int> AddressesA(int warp_m, int mt, int ks) {
  std::vector<int> addr(32);
  for (int lane = 0; lane < 32; ++lane) {
    const L::RowChunk rc = L::LoadRowA(warp_m, mt, ks, lane);
    addr[lane] = L::OffsetA(rc.row, rc.chunk);
  }
  for (int q = 0; q < 4; ++q) {
    std::set<int> groups;
    for (int r = 0; r < 8; ++r) groups.insert(addr[8 * q + r] / 16 % 8);
    EXPECT_EQ(groups.size(), 8u) << "ldmatrix of A, matrix " << q << ": a bank conflict";
  }
  return addr;
}

/// Lane 4g + i's registers a0..a3 of every m-tile of the warp at @p warp_m, step @p ks, as
/// ldmatrix.x4 delivers them from @p a: a_q holds row g (+8 for q odd) and, per 32-bit word,
/// 4 / elem_bytes consecutive k from (4 / elem_bytes)·i (+ half the step for q >= 2).
void ExpectFragmentsA(const Tile& a, int elem_bytes, int warp_m, int ks) {
  const int per_word = 4 / elem_bytes, step = 8 * per_word;
  for (int mt = 0; mt < L::kMTiles; ++mt) {
    const std::vector<int> addr = AddressesA(warp_m, mt, ks);
    for (int lane = 0; lane < 32; ++lane) {
      const int g = lane / 4, i = lane % 4, row0 = warp_m * L::kWarpM + mt * 16;
      for (int q = 0; q < 4; ++q) {
        for (int e = 0; e < per_word; ++e) {
          const int off = addr[8 * q + g] + 4 * i + elem_bytes * e;
          const std::uint32_t got =
              elem_bytes == 4 ? a.Get<std::uint32_t>(off) : a.Get<std::uint16_t>(off);
          EXPECT_EQ(got,
                    IdA(row0 + g + 8 * (q & 1), ks * step + per_word * i + e + step / 2 * (q >> 1)))
              << "ks " << ks << " mt " << mt << " lane " << lane << " a" << q;
        }
      }
    }
  }
}

/// TF32 fragments of every warp of geometry @p G.
template <class G>
void ExpectTf32Fragments() {
  const Tile a = FillA<G>(4);
  const Tile b = FillB<4>();
  for (int warp = 0; warp < L::kThreads / 32; ++warp) {
    const int warp_m = warp / G::kWarpsN, warp_n = warp % G::kWarpsN;
    for (int ks = 0; ks < 4; ++ks) {
      ExpectFragmentsA(a, 4, warp_m, ks);
      for (int nt = 0; nt < G::kNTiles; ++nt) {
        for (int h = 0; h < 2; ++h) {
          std::set<int> banks;
          for (int lane = 0; lane < 32; ++lane) {
            const int off = L::LoadWordBTf32(warp_n * G::kWarpN, nt, ks, h, lane);
            banks.insert(off / 4 % 32);
            const int g = lane / 4, i = lane % 4;
            EXPECT_EQ(b.Get<std::uint32_t>(off),
                      IdB(ks * 8 + i + 4 * h, warp_n * G::kWarpN + nt * 8 + g))
                << "warp " << warp << " ks " << ks << " nt " << nt << " lane " << lane << " b" << h;
          }
          EXPECT_EQ(banks.size(), 32u) << "TF32 B loads: a bank conflict";
        }
      }
    }
  }
}

/// BF16 (and FP16) fragments of every warp of geometry @p G.
template <class G>
void ExpectBf16Fragments() {
  const Tile a = FillA<G>(2);
  const Tile b = FillB<2>();
  for (int warp = 0; warp < L::kThreads / 32; ++warp) {
    const int warp_m = warp / G::kWarpsN, warp_n = warp % G::kWarpsN;
    for (int ks = 0; ks < 4; ++ks) {
      ExpectFragmentsA(a, 2, warp_m, ks);
      for (int np = 0; np < G::kNTiles / 2; ++np) {
        std::vector<int> addr(32);
        for (int lane = 0; lane < 32; ++lane) {
          const L::RowChunk rc = L::LoadRowBTrans(warp_n * G::kWarpN, np, ks, lane);
          addr[lane] = L::OffsetB<2>(rc.row, rc.chunk);
        }
        for (int q = 0; q < 4; ++q) {
          std::set<int> groups;
          for (int r = 0; r < 8; ++r) groups.insert(addr[8 * q + r] / 16 % 8);
          EXPECT_EQ(groups.size(), 8u) << "ldmatrix.trans of B, matrix " << q << ": a conflict";
        }
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane / 4, i = lane % 4;
          for (int q = 0; q < 4; ++q) {    // q 0, 1: n-tile 2np, k +0 / +8; q 2, 3: n-tile 2np+1
            for (int e = 0; e < 2; ++e) {  // .trans: element (2i + e, g) of matrix q
              const auto got = b.Get<std::uint16_t>(addr[8 * q + 2 * i + e] + 2 * g);
              const int col = warp_n * G::kWarpN + np * 16 + 8 * (q >> 1) + g;
              EXPECT_EQ(got, IdB(ks * 16 + 2 * i + e + 8 * (q & 1), col))
                  << "warp " << warp << " ks " << ks << " np " << np << " lane " << lane;
            }
          }
        }
      }
    }
  }
}

TEST(Ch04MmaLayout, Tf32FragmentsAreWhatMmaExpectsWithoutBankConflicts) {
  {
    SCOPED_TRACE("wide: 256x128 block, 64x64 warps");
    ExpectTf32Fragments<L::Wide>();
  }
  SCOPED_TRACE("narrow: 128x128 block, 64x32 warps");
  ExpectTf32Fragments<L::Narrow>();
}

TEST(Ch04MmaLayout, Bf16FragmentsAreWhatMmaExpectsWithoutBankConflicts) {
  {
    SCOPED_TRACE("wide: 256x128 block, 64x64 warps");
    ExpectBf16Fragments<L::Wide>();
  }
  SCOPED_TRACE("narrow: 128x128 block, 64x32 warps");
  ExpectBf16Fragments<L::Narrow>();
}

// Stage 10 takes the TMA path only where TMA can describe A and B (16-byte row strides and
// starts); the rest goes to stage 9.
TEST(Ch04Hopper, FitsOnlyWhereTmaCanDescribeTheOperands) {
  alignas(16) static const std::uint16_t buffer[64] = {};
  const void* aligned = buffer;
  const void* off_by_one = buffer + 1;  // 2 bytes past a 16-byte boundary
  EXPECT_TRUE(tensor::HopperFits(aligned, aligned, 8, 8));
  EXPECT_TRUE(tensor::HopperFits(aligned, buffer + 8, 256, 4096));
  EXPECT_FALSE(tensor::HopperFits(aligned, aligned, 9, 8)) << "N not a multiple of 8";
  EXPECT_FALSE(tensor::HopperFits(aligned, aligned, 8, 1027)) << "K not a multiple of 8";
  EXPECT_FALSE(tensor::HopperFits(off_by_one, aligned, 8, 8)) << "A off a 16-byte boundary";
  EXPECT_FALSE(tensor::HopperFits(aligned, off_by_one, 8, 8)) << "B off a 16-byte boundary";
}

}  // namespace
}  // namespace ch04
