/**
 * @file matmul.cuh
 * @brief Chapter 04 contract: C = A·B for row-major matrices (A is M×K, B is K×N, C is M×N),
 *        the CPU reference, the naive kernel, the optimized stages and the rule that picks one
 *        per shape, the cuBLAS baseline and the error bound every float result is checked
 *        against.
 *
 * Every launcher accepts any M, N, K >= 0 (non-multiples of the tiles, rectangular, empty):
 * M == 0 or N == 0 does nothing, K == 0 writes zeros. Device pointers must not alias. Each of
 * M, N and K must be at most kMaxDimension.
 *
 * @code
 * ch04::naive::Matmul(d_a, d_b, d_c, m, n, k, stream);
 * ch04::optimized::Matmul(d_a, d_b, d_c, m, n, k, ch04::optimized::Stage::kTiled16, stream);
 * // The default: the stage ChooseStage picks for this shape. Split-K needs scratch; without it
 * // the launcher runs the best plan that needs none.
 * staged::DeviceBuffer<float> ws(ch04::optimized::WorkspaceBytes(m, n, k) / sizeof(float));
 * ch04::optimized::Matmul(d_a, d_b, d_c, m, n, k, ch04::optimized::Stage::kBest, stream,
 *                         {ws.data(), ws.bytes()});
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/device_limits.hpp"

#include "common/verify.hpp"

/// @cond
struct cublasContext;
/// @endcond

/// Chapter 04: matrix multiplication, global memory versus shared memory, up to cuBLAS.
namespace ch04 {

/// Largest accepted M, N or K (2^19): keeps ceil(M/16) within the 65535 limit of grid.y.
inline constexpr int kMaxDimension = 1 << 19;

/// Largest M·N·K whose float reference ch04_naive and ch04_optimized compute on the CPU (double
/// accumulation, 2^27 multiply-adds); above it cuBLAS SGEMM is the reference, checked with
/// the same per-element bound (which allows for the reference's own error).
inline constexpr std::uint64_t kCpuReferenceVolume = std::uint64_t{512} * 512 * 512;

/// Throws `staged::UsageError` when a dimension is negative or larger than kMaxDimension.
void CheckDimensions(int m, int n, int k);

/// @brief The empty products every float launcher handles alike: M or N zero writes nothing, K
///        zero writes zeros (an empty sum), queued on @p stream.
/// @param[out] d_c device C, M×N
/// @param[in] m rows of C @param[in] n columns of C @param[in] k inner dimension
/// @param[in] stream the stream
/// @return true when the call is handled (M, N or K zero): the launcher returns
bool EmptyProduct(float* d_c, int m, int n, int k, cudaStream_t stream);

/// @brief min(gamma_K(u), λ·sqrt(K)·u): one FP32 sum's error factor for unit roundoff @p u, worst
///        case or probabilistic, whichever is tighter (see ToleranceScale).
/// @param[in] k the sum's length (>= 1)
/// @param[in] u the unit roundoff of its additions
double SumErrorScale(int k, double u);

/// @brief gamma_K = K·u / (1 − K·u), u = 2^-24: the worst-case bound on the relative error of a
///        float dot product of length K, whatever the summation order (Higham, Thm 3.1).
double GammaK(int k);

/// @brief λ of the probabilistic bound used by ToleranceScale (see there).
inline constexpr double kToleranceLambda = 10.0;

/// @brief The per-element tolerance factor: an element passes when
///        |C − C_ref| <= ToleranceScale(K) · (|A|·|B|)_ij + AbsoluteFloor(K).
///
/// Derivation. A float dot product of length K, summed in any order with or without FMA, has
/// |fl(c) − c| <= e_K · Σ_p |a_ip||b_pj| where e_K = gamma_K in the worst case and, when the
/// rounding errors are independent and of mean zero (the model that fits random data),
/// e_K = λ·sqrt(K)·u with probability at least 1 − 2K·exp(−λ²/2) (Higham & Mary, "A new
/// approach to probabilistic rounding error analysis", SIAM J. Sci. Comput. 41(5), 2019,
/// Thm 3.1; we drop their second-order term). With λ = 10 that probability misses 1 by
/// 2K·e^-50 < 4·10^-18 per dot product at K = 8192. The tested kernel gets one such term; the
/// reference gets another (cuBLAS, the reference above the CPU's size limit, is itself a float
/// product; the double CPU reference errs by at most u·|c|): over the 67 million elements of an
/// 8192² product a false failure has probability below 5·10^-10, and far less in practice,
/// because the partial sums of random signed data are much smaller than |A|·|B|. So the factor
/// is 2·min(gamma_K, λ·sqrt(K)·u), times
/// (1 + gamma_K) because |A|·|B| is itself summed in float on the GPU path (all its terms are
/// positive, so its relative error is at most gamma_K). Taking the minimum keeps the certain
/// bound where it is the tighter one (K < λ² = 100).
///
/// Why it can fail: with uniform [-1, 1) inputs (|A|·|B|)_ij ≈ K/4 while a dropped block of 8
/// products changes an element by a value of standard deviation sqrt(8/9) ≈ 0.94; at K = 8192
/// the tolerance is 20·90.5·2^-24·2048 ≈ 0.22, so each element of a block that lost a k-tile
/// fails with probability about 0.8, and a whole row, column or transposed tile (errors of the
/// size of C itself, sqrt(K/9) ≈ 30) fails everywhere. The mutation tests check exactly this at
/// every size the benchmark runs. The worst-case factor 3·gamma_K (0.0015·(|A|·|B|) ≈ 3.0 at
/// K = 8192, three standard deviations of the damage) let 99.9 % of such elements pass.
double ToleranceScale(int k);

/// @brief Absolute slack for underflow: each of the K steps of kernel and reference may lose up
///        to the smallest normal float (2^-126, flush-to-zero) when products are subnormal.
double AbsoluteFloor(int k);

/// @brief Compares a float product with its reference using the per-element bound above.
///
/// Where the reference is NaN the result must be NaN; where it is ±inf the result must be the
/// same infinity; elsewhere the result must be finite and within
/// `ToleranceScale(k) * abs_product[i] + AbsoluteFloor(k)`.
/// @param[in] expected reference C (count elements)
/// @param[in] actual computed C (count elements)
/// @param[in] abs_product |A|·|B| (count elements)
/// @param[in] count number of elements of C
/// @param[in] k inner dimension (sets the tolerance)
staged::VerifyReport CompareProduct(const float* expected, const float* actual,
                                    const float* abs_product, std::size_t count, int k);

/// @brief CompareProduct with the tolerance factor @p scale in place of ToleranceScale(k) (the
///        tensor-core products' bounds, tensor.cuh): finite elements must be within
///        `scale · abs_product[i] + AbsoluteFloor(k)`; NaN and ±inf as in CompareProduct.
/// @param[in] expected reference C (count elements)
/// @param[in] actual computed C (count elements)
/// @param[in] abs_product |A|·|B| (count elements)
/// @param[in] count number of elements of C
/// @param[in] k inner dimension (sets the absolute floor)
/// @param[in] scale the tolerance factor
staged::VerifyReport CompareProductWithin(const float* expected, const float* actual,
                                          const float* abs_product, std::size_t count, int k,
                                          double scale);

/// The CPU reference.
namespace cpu {

/// @brief C = A·B on the CPU, row by row (i-k-j order, so the inner loop streams rows of B and
///        vectorises); float accumulates in double, int32_t in int64_t (exact when no sum
///        overflows int32).
/// @tparam T float or int32_t
/// @param[in] a M×K row-major
/// @param[in] b K×N row-major
/// @param[out] c M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
template <typename T>
void Matmul(const T* a, const T* b, T* c, int m, int n, int k);

/// @brief |A|·|B| accumulated in double, rounded to float: the scale of each element's error.
/// @param[in] a M×K row-major
/// @param[in] b K×N row-major
/// @param[out] s M×N row-major
/// @param[in] m rows of A
/// @param[in] n columns of B
/// @param[in] k inner dimension
void AbsMatmul(const float* a, const float* b, float* s, int m, int n, int k);

}  // namespace cpu

/// The lesson's starting point: one thread per element of C, operands from global memory.
namespace naive {

/// @brief C = A·B with one thread per element of C (16×16 blocks, x along the columns of C).
/// @tparam T float or int32_t
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stream stream the kernel is queued on
template <typename T>
void Matmul(const T* d_a, const T* d_b, T* d_c, int m, int n, int k, cudaStream_t stream);

}  // namespace naive

/// The stages that take the shared-memory tile to cuBLAS speed (plain FP32 FFMA throughout).
namespace optimized {

/// The optimisation stages, in lesson order (README: "The stages"), then the shape rule.
enum class Stage {
  kTiled16,       ///< 1. 16×16 shared-memory tiles, one output per thread (the slides' kernel 2)
  kRegBlock,      ///< 2. 128×128×8 block tile, 8×8 outputs per thread in registers
  kVectorized,    ///< 3. + 16-byte global loads, A stored transposed and padded, float4 LDS
  kDoubleBuffer,  ///< 4. + two shared buffers: the next tile is loaded while this one is used
  kWarpTile,      ///< 5. + warp tiling, two blocks per SM (__launch_bounds__), L2-friendly order
  kSplitK,        ///< 6. tile shape from the problem, K split across blocks, ordered reduction
  kSkinny,        ///< 7. one 8×8 tile of C per block, K split across all 256 threads
  kStreamK,       ///< 8. stage 4 on whole waves; the last wave's k-steps shared evenly (stream-K)
  kBest,          ///< the default: the stage ChooseStage picks for the shape
};

/// What the report and `--help` say about one stage.
struct StageInfo {
  Stage stage;              ///< the stage
  const char* name;         ///< `--kernel` word and report suffix (`optimized:<name>`)
  int block_m;              ///< rows of C per block (the largest tile the stage uses)
  int block_n;              ///< columns of C per block
  int block_k;              ///< depth of one shared-memory tile
  int threads;              ///< threads per block
  double global_intensity;  ///< flops per byte loaded from global memory (no cache reuse)
  double shared_intensity;  ///< flops per byte read from shared memory by one thread
  bool supports_int;        ///< whether the int32_t path exists
  const char* change;       ///< one line: what changed relative to the previous stage
};

/// Every stage, in lesson order (kBest, the rule, is not a stage and is not listed).
const std::vector<StageInfo>& AllStages();

/// The description of @p stage (kBest included, with name `best`).
const StageInfo& Info(Stage stage);

/// Parses a `--kernel` word (a stage name or `best`); throws `staged::UsageError` otherwise.
Stage ParseStage(const std::string& word);

/// @brief Whether the report times @p stage on this shape: every stage everywhere, except that
///        `skinny` (one 8×8 tile per block) is timed only where min(M, N) <= 64.
/// @param[in] stage the stage
/// @param[in] m rows of C
/// @param[in] n columns of C
bool TimedOnShape(Stage stage, int m, int n);

/// Largest min(M, N) that ChooseStage sends to the skinny stage (tuned on the H200).
inline constexpr int kSkinnyMaxSide = 16;
/// Largest K that ChooseStage treats as short (rule 4; tuned on the H200).
inline constexpr int kShortK = 64;
/// Least K for which ChooseStage takes stream-K (rule 5): below it the time the split wins (a
/// fraction of one tile's loop) is not clearly more than what it adds (a memset, a second
/// launch, the partial sums of the split tiles). Tuned on the H200; other GPUs may prefer
/// another threshold.
inline constexpr int kStreamKMinK = 1024;
/// The stage of rule 6, large shapes: the 128×128 whole-K kernel that measured fastest on the
/// H200 (the lesson's stage table, which also lists the candidates that lost to it); another
/// GPU may rank them otherwise.
inline constexpr Stage kLargeShapeStage = Stage::kDoubleBuffer;

/// Warps per SM each split-K tile's kernel is compiled for (its __launch_bounds__ caps the
/// registers so that 512 threads fit), and the unit of PlanSplitK's model: one k-tile of an SM
/// that holds this many warps.
inline constexpr int kSplitKWarpsPerSm = 16;

/// @brief What the shape rule plans with besides the shape: the SM count and how many blocks of
///        each kernel it may run one SM holds at once. `DeviceResidency` reads them off the GPU;
///        `ModelResidency` computes them for any limits (a host test's device profile).
struct Residency {
  int sms = 0;          ///< streaming multiprocessors
  int tile128x128 = 0;  ///< blocks per SM of the 128×128 kernel (stage 4, split-K's largest tile)
  int tile128x64 = 0;   ///< of split-K's 128×64 pipeline kernel
  int tile64x128 = 0;   ///< of split-K's 64×128 pipeline kernel
  int tile64x64 = 0;    ///< of split-K's 64×64 pipeline kernel
  int streamk = 0;      ///< of stage 8's stream-K kernel
  /// Blocks per SM of the split-K kernel of tile @p tile_m × @p tile_n (64 or 128 each).
  /// @param[in] tile_m rows per block
  /// @param[in] tile_n columns per block
  int Tile(int tile_m, int tile_n) const;
};

/// The current device's residency: `staged::SmCount()` and each kernel's blocks per SM from the
/// occupancy API (capped by a device profile's limits). Cached per device and profile.
Residency DeviceResidency();

/// @brief The residency @p limits allow, from each kernel's threads, static shared memory and
///        `__launch_bounds__` (`staged::BlocksPerSmUnder`): what a GPU with those limits would
///        report. A GPU test checks it against `DeviceResidency` on the GPU it runs on.
/// @param[in] limits the limits (a device profile, or a GPU's queried limits)
Residency ModelResidency(const staged::DeviceLimits& limits);

/// @brief The shape rule behind Stage::kBest: a pure function of the shape and the residency
///        (tested on the host for every shape class). Each rule names the stage that was
///        fastest on its class of shapes in the lesson's measurements on the H200; other GPUs
///        may draw the lines elsewhere.
///
/// 1. M, N or K zero: nothing to multiply, kDoubleBuffer (it writes zeros or nothing).
/// 2. min(M, N) <= kSkinnyMaxSide and at least sms/4 tiles of 8×8: kSkinny. A 64- or
///    128-wide tile would compute mostly padding; an 8×8 tile with K split over 256 threads
///    does not.
/// 3. Fewer 128×128 tiles than SMs: kSplitK. PlanSplitK picks a tile of 64 or 128 on each side
///    and the number of splits of K so that the blocks fill the SMs (64-wide rectangles such
///    as 64×4096×4096 and 1024³ alike).
/// 4. K <= kShortK: kWarpTile. A block's loop is at most 8 tiles, so its time goes to the
///    prologue and to writing its 128×128 outputs rather than to the FFMA loop where stage 4
///    is ahead; on such shapes the warp-tiled stage measured fastest.
/// 5. K >= kStreamKMinK and PlanStreamK shares out a partial last wave: kStreamK. Stage 4 runs
///    the whole waves, and one wave of blocks divides the last tiles' k-steps evenly.
/// 6. Otherwise kLargeShapeStage, the measured fastest 128×128 kernel: two 256-thread blocks
///    per SM, every tile whole or nearly so, enough tiles for several waves.
/// @param[in] m rows of C
/// @param[in] n columns of C
/// @param[in] k inner dimension
/// @param[in] r the GPU's SMs and blocks per SM (`DeviceResidency`)
Stage ChooseStage(int m, int n, int k, const Residency& r);

/// @brief Blocks of the split-K kernel with tile @p tile_m × @p tile_n that one SM of the current
///        device holds at once (the occupancy API on the whole-tile instance, capped by a device
///        profile). On an SM of 64 Ki registers and enough shared memory that is
///        kSplitKWarpsPerSm warps: 2 blocks of 128×128, 4 of 128×64 or 64×128, 8 of 64×64.
/// @param[in] tile_m rows per block: 64 or 128
/// @param[in] tile_n columns per block: 64 or 128
int ResidentTileBlocks(int tile_m, int tile_n);

/// How the split-K stage covers a shape.
struct SplitPlan {
  int tile_m = 128;   ///< rows of C per block: 64 or 128
  int tile_n = 128;   ///< columns of C per block: 64 or 128
  int splits = 1;     ///< blocks along K (1: no split, no workspace)
  int k_chunk = 0;    ///< K per split, a multiple of 8 (the last split may be shorter)
  double cost = 0.0;  ///< the model's estimate, in 8-deep k-tiles of a full SM
};

/// @brief The split-K rule: among tiles 128×128, 128×64, 64×128, 64×64 and 1..max_splits
///        splits, the plan with the lowest estimated time (a plan within 2 % of a larger tile's
///        or of one with fewer splits counts as a tie and loses to it).
///
/// The model counts in units of one 8-deep k-tile of an SM that holds kSplitKWarpsPerSm warps
/// (compute-bound: 16 warps × 512 FFMAs over 4 schedulers). Every tile keeps 8×8 outputs per
/// thread; a wave is the blocks resident at once (`Residency::Tile` per SM: on an SM of 64 Ki
/// registers and enough shared memory 2, 4 or 8 blocks, 16 warps, whatever the tile). In a wave
/// whose busiest SM holds w warps, each k-tile costs max(0.85, w/16) units: fewer warps do less
/// work per k-tile, but a k-tile never takes less than the latency of its global loads, which
/// one tile in flight per block cannot hide with fewer than about 14 warps. A wave adds 2 units
/// (prologue and epilogue); a split adds 1.5 units (the reduction's launch) plus one unit per
/// 2^20 partial sums read. So on 132 SMs 1024³ takes 4 splits (256 blocks, 2 per SM, 32 k-tiles
/// each) rather than 2 (one block per SM, 64 k-tiles), and 64×4096×4096 takes 64×128 tiles in
/// 16 splits (512 blocks, 4 per SM).
/// @param[in] m rows of C
/// @param[in] n columns of C
/// @param[in] k inner dimension (>= 1)
/// @param[in] r the GPU's SMs and blocks per SM (`DeviceResidency`)
/// @param[in] max_splits most splits allowed (the workspace may limit it; >= 1)
SplitPlan PlanSplitK(int m, int n, int k, const Residency& r, int max_splits = 256);

/// Depth of one stream-K k-step (stage 8): its blocks multiply 16-deep tiles.
inline constexpr int kStreamKDepth = 16;
/// Blocks per SM both of stage 8's kernels are compiled for (their __launch_bounds__); PlanStreamK
/// plans with what the GPU holds (`Residency`: 2 on an SM with 67 KiB of shared memory or more,
/// 1 on a T4's 64 KiB).
inline constexpr int kStreamKBlocksPerSm = 2;
/// Largest share of a wave's block slots the last wave may fill for PlanStreamK to split it,
/// in tenths: with 9 of 10 slots busy or more, too little is idle to pay for the split. Tuned on
/// the H200; other GPUs may prefer another threshold.
inline constexpr int kStreamKMaxFillTenths = 9;

/// How stage 8 covers a shape: stage 4 on the first tiles, stream-K blocks on the rest.
struct StreamKPlan {
  int dp_tiles = 0;         ///< tiles of 128×128 stage 4 computes whole, the first in row order
  int sk_tiles = 0;         ///< the tiles after them, shared by the stream-K blocks (0: none)
  int blocks = 0;           ///< stream-K blocks, at most one wave
  int steps_per_block = 0;  ///< k-steps (of kStreamKDepth) per block, at most K / 16
};

/// @brief The stream-K rule: when M and N are multiples of 128 and K of 16, and the 128×128
///        tiles leave a last wave (of sms·r.tile128x128 slots) of more than none and at most
///        kStreamKMaxFillTenths of the slots, stage 4 takes the full waves and one wave of
///        stream-K blocks (sms·r.streamk) shares the last wave's tiles' k-steps,
///        ceil(sk_tiles·K/16 / blocks) each; the split is made only where that is at most one
///        tile's K/16, so that no block spans more than two tiles. Otherwise no split
///        (sk_tiles == 0).
///
/// At 4096³ on 132 SMs of 2 blocks each: 1024 tiles, 264 slots, 792 tiles for stage 4 and 232
/// for 264 blocks of 225 k-steps each (a tile has 256). At 8192³: 3960 and 136, 264 blocks of
/// 264 k-steps (of 512).
/// @param[in] m rows of C
/// @param[in] n columns of C
/// @param[in] k inner dimension
/// @param[in] r the GPU's SMs and blocks per SM (`DeviceResidency`)
StreamKPlan PlanStreamK(int m, int n, int k, const Residency& r);

/// Blocks of stage 8's stream-K kernel that one SM of the current device holds at once.
int ResidentStreamKBlocks();

/// Caller-owned device scratch for the stages that split K (see WorkspaceBytes).
struct Workspace {
  float* data = nullptr;  ///< 16-byte aligned device memory, or null
  std::size_t bytes = 0;  ///< its size in bytes
};

/// @brief Scratch that @p stage needs on the current device for this shape to run its best plan
///        (0 for every stage but kSplitK and kStreamK, and for kBest when the rule picks
///        another stage).
/// @param[in] m rows of C
/// @param[in] n columns of C
/// @param[in] k inner dimension
/// @param[in] stage the stage (default: kBest)
std::size_t WorkspaceBytes(int m, int n, int k, Stage stage = Stage::kBest);

/// @brief C = A·B with the chosen optimisation stage.
///
/// kSplitK and kStreamK (and kBest when it picks one of them) use @p workspace for their
/// partial sums; with less than WorkspaceBytes split-K runs the best plan that fits and
/// stream-K runs stage 4 alone (no split at all without a workspace).
/// @tparam T float (every stage) or int32_t (kTiled16, and kBest which then runs kTiled16;
///         other stages throw UsageError)
/// @param[in] d_a device A, M×K row-major
/// @param[in] d_b device B, K×N row-major
/// @param[out] d_c device C, M×N row-major
/// @param[in] m rows of A and C
/// @param[in] n columns of B and C
/// @param[in] k columns of A, rows of B
/// @param[in] stage which kernel runs (kBest: the one ChooseStage picks)
/// @param[in] stream stream the kernels are queued on
/// @param[in] workspace scratch for split-K and stream-K (16-byte aligned, else
///            `staged::UsageError`; not used concurrently by another call)
template <typename T>
void Matmul(const T* d_a, const T* d_b, T* d_c, int m, int n, int k, Stage stage,
            cudaStream_t stream, Workspace workspace = {});

}  // namespace optimized

/// The baseline: cuBLAS SGEMM in plain FP32 (no TF32, no tensor cores).
namespace library {

/// @brief Owns a cuBLAS handle set to CUBLAS_DEFAULT_MATH: "compute and intermediate storage
///        with at least the precision requested", so SGEMM stays FP32 (TF32 would need
///        CUBLAS_TF32_TENSOR_OP_MATH, which this chapter never sets).
class Cublas {
 public:
  /// Creates the handle and sets its math mode.
  Cublas();
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  /// @brief Row-major C = A·B as the column-major product C^T = B^T·A^T (no copies).
  /// @param[in] d_a device A, M×K row-major
  /// @param[in] d_b device B, K×N row-major
  /// @param[out] d_c device C, M×N row-major
  /// @param[in] m rows of A and C
  /// @param[in] n columns of B and C
  /// @param[in] k columns of A, rows of B
  /// @param[in] stream stream the SGEMM is queued on
  void Matmul(const float* d_a, const float* d_b, float* d_c, int m, int n, int k,
              cudaStream_t stream);

  /// @brief The large-size reference: C from SGEMM and |A|·|B| from SGEMM on |A| and |B|.
  /// @param[in] d_a device A, M×K row-major
  /// @param[in] d_b device B, K×N row-major
  /// @param[in] m rows of A and C
  /// @param[in] n columns of B and C
  /// @param[in] k columns of A, rows of B
  /// @param[out] c host C (resized to M·N)
  /// @param[out] abs_product host |A|·|B| (resized to M·N)
  void Reference(const float* d_a, const float* d_b, int m, int n, int k, std::vector<float>* c,
                 std::vector<float>* abs_product);

 private:
  cublasContext* handle_ = nullptr;
};

}  // namespace library
}  // namespace ch04
