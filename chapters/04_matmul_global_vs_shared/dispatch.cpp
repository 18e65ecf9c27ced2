/**
 * @file dispatch.cpp
 * @brief The stage table, the shape rule behind Stage::kBest (ChooseStage, PlanSplitK), the
 *        workspace size, and `ch04::optimized::Matmul`, which routes a call to its stage's
 *        launcher. Host code only: the kernels live in one file per stage.
 */
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "chapters/04_matmul_global_vs_shared/matmul.cuh"
#include "chapters/04_matmul_global_vs_shared/stages.hpp"
#include "common/aligned_split.hpp"
#include "common/cuda_check.hpp"
#include "common/device_limits.hpp"
#include "common/errors.hpp"
#include "common/resident_grid.hpp"

namespace ch04::optimized {

namespace {

// global intensity = BM·BN / (2·(BM + BN)) flop/byte (a BM×BK and a BK×BN float tile feed
// 2·BM·BN·BK flops); shared intensity = 2·outputs per thread / (4·(rows + cols)) flop/byte.
const std::vector<StageInfo> kStages = {
    {Stage::kTiled16, "tiled16", 16, 16, 16, 256, 4.0, 0.25, true,
     "16x16 shared tiles, one output per thread (slides' kernel 2)"},
    {Stage::kRegBlock, "regblock", 128, 128, 8, 256, 32.0, 2.0, false,
     "128x128x8 block tile, 8x8 outputs per thread in registers"},
    {Stage::kVectorized, "vectorized", 128, 128, 8, 256, 32.0, 2.0, false,
     "16-byte loads, transposed+padded A tile, conflict-free float4 shared reads"},
    {Stage::kDoubleBuffer, "doublebuffer", 128, 128, 8, 256, 32.0, 2.0, false,
     "two shared buffers, next tile loaded during this one, one barrier per tile"},
    {Stage::kWarpTile, "warptile", 128, 128, 8, 256, 32.0, 2.0, false,
     "32x64 warp tiles, 2 blocks/SM (__launch_bounds__), grouped block order for L2"},
    {Stage::kSplitK, "splitk", 128, 128, 8, 256, 32.0, 2.0, false,
     "tile from the shape (64-wide via cp.async), K split across blocks, ordered reduction"},
    {Stage::kSkinny, "skinny", 8, 8, 256, 256, 2.0, 0.0, false,
     "one 8x8 tile of C per block, K split over 256 threads, shuffle reduction"},
    {Stage::kStreamK, "streamk", 128, 128, 16, 256, 32.0, 2.0, false,
     "stage 4 on whole waves, the last wave's k-steps split evenly over one wave (stream-K)"},
};

const StageInfo kBestInfo = {
    Stage::kBest, "best", 0, 0, 0, 0, 0.0, 0.0, true, "the stage ChooseStage picks for the shape"};

long long CeilDiv(long long a, long long b) { return (a + b - 1) / b; }

/// Floats of workspace one split needs: M rows of N rounded up to a multiple of 4.
std::size_t SliceFloats(int m, int n) { return static_cast<std::size_t>(m) * ((n + 3) / 4 * 4); }

// PlanSplitK's model (see its documentation in matmul.cuh), in units of one 8-deep k-tile of
// an SM holding kSplitKWarpsPerSm warps. Its constants were tuned on the H200; other GPUs may
// prefer other values.
/// Least cost of one k-tile: the latency of its global loads, when too few warps hide it.
constexpr double kLatencyFloor = 0.85;
/// Units a wave of blocks spends outside its loop: the first tile's loads, the stores.
constexpr double kWaveOverhead = 2.0;
/// Units the reduction launch costs before it reads anything.
constexpr double kReduceLaunch = 1.5;
/// Partial sums the reduction reads per unit.
constexpr double kReduceFloatsPerUnit = 1 << 20;
/// A plan replaces the best so far only when it is this much cheaper: the model is no finer,
/// and near-ties then go to the plan found first (larger tile, fewer splits).
constexpr double kTieBand = 0.02;
/// Most splits PlanSplitK considers.
constexpr int kMaxSplits = 256;

/// Cost of one wave whose busiest SM holds @p warps warps, each block running @p ktiles tiles.
// snippet-begin: ch04-wave-cost
double WaveCost(long long warps, long long ktiles) {
  const double per_ktile = std::max(kLatencyFloor, static_cast<double>(warps) / kSplitKWarpsPerSm);
  return static_cast<double>(ktiles) * per_ktile + kWaveOverhead;
}
// snippet-end: ch04-wave-cost

}  // namespace

const std::vector<StageInfo>& AllStages() { return kStages; }

const StageInfo& Info(Stage stage) {
  if (stage == Stage::kBest) return kBestInfo;
  for (const auto& s : kStages) {
    if (s.stage == stage) return s;
  }
  throw staged::UsageError("unknown stage");
}

Stage ParseStage(const std::string& word) {
  if (word == "best") return Stage::kBest;
  std::string names;
  for (const auto& s : kStages) {
    if (word == s.name) return s.stage;
    names += std::string(s.name) + "|";
  }
  throw staged::UsageError("unknown kernel '" + word + "' (expected " + names + "best)");
}

bool TimedOnShape(Stage stage, int m, int n) {
  return stage != Stage::kSkinny || std::min(m, n) <= 64;
}

int Residency::Tile(int tile_m, int tile_n) const {
  if (tile_m == 128 && tile_n == 128) return tile128x128;
  if (tile_m == 128 && tile_n == 64) return tile128x64;
  if (tile_m == 64 && tile_n == 128) return tile64x128;
  if (tile_m == 64 && tile_n == 64) return tile64x64;
  throw std::invalid_argument("split-K tiles are 64 or 128 on each side");
}

Residency DeviceResidency() {
  static std::mutex mutex;
  static std::map<std::pair<int, std::string>, Residency> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::pair<int, std::string> key{device, staged::ActiveProfileName()};
  {
    std::lock_guard<std::mutex> lock(mutex);
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  Residency r;
  r.sms = staged::SmCount();
  r.tile128x128 = ResidentTileBlocks(128, 128);
  r.tile128x64 = ResidentTileBlocks(128, 64);
  r.tile64x128 = ResidentTileBlocks(64, 128);
  r.tile64x64 = ResidentTileBlocks(64, 64);
  r.streamk = ResidentStreamKBlocks();
  std::lock_guard<std::mutex> lock(mutex);
  cache.emplace(key, r);
  return r;
}

Residency ModelResidency(const staged::DeviceLimits& limits) {
  const auto blocks = [&](const detail::KernelFootprint& f) {
    const int regs = staged::LaunchBoundRegisters(limits.regs_per_sm, f.threads, f.min_blocks);
    return staged::BlocksPerSmUnder(limits, f.threads, f.smem, regs);
  };
  Residency r;
  r.sms = limits.sm_count;
  r.tile128x128 = blocks(detail::DoubleBufferFootprint());
  r.tile128x64 = blocks(detail::PipelineFootprint(128, 64));
  r.tile64x128 = blocks(detail::PipelineFootprint(64, 128));
  r.tile64x64 = blocks(detail::PipelineFootprint(64, 64));
  r.streamk = blocks(detail::StreamKFootprint());
  return r;
}

// snippet-begin: ch04-choose-stage
Stage ChooseStage(int m, int n, int k, const Residency& r) {
  if (m == 0 || n == 0 || k == 0) return Stage::kDoubleBuffer;
  const long long skinny_tiles = CeilDiv(m, 8) * CeilDiv(n, 8);
  if (std::min(m, n) <= kSkinnyMaxSide && 4 * skinny_tiles >= r.sms) return Stage::kSkinny;
  if (CeilDiv(m, 128) * CeilDiv(n, 128) < r.sms) return Stage::kSplitK;
  if (k <= kShortK) return Stage::kWarpTile;
  if (k >= kStreamKMinK && PlanStreamK(m, n, k, r).sk_tiles > 0) return Stage::kStreamK;
  return kLargeShapeStage;
}
// snippet-end: ch04-choose-stage

SplitPlan PlanSplitK(int m, int n, int k, const Residency& r, int max_splits) {
  struct Tile {
    int m, n;
  };
  // Larger tiles first: on a near-tie they win (fewer, fuller blocks, fewer loads per flop).
  constexpr Tile kTiles[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}};
  SplitPlan best;
  best.cost = std::numeric_limits<double>::infinity();
  const int sms = std::max(r.sms, 1);
  const int top = static_cast<int>(
      std::min<long long>({std::max(max_splits, 1), kMaxSplits, CeilDiv(std::max(k, 1), 8)}));
  for (const Tile& t : kTiles) {
    // snippet-begin: ch04-plan-cost
    const long long tiles = CeilDiv(m, t.m) * CeilDiv(n, t.n);
    const int warps = t.m * t.n / 64 / 32;  // 8×8 outputs per thread
    const int per_sm = std::max(r.Tile(t.m, t.n), 1);
    const long long slots = static_cast<long long>(sms) * per_sm;
    for (int s = 1; s <= top; ++s) {
      const int chunk = static_cast<int>(CeilDiv(CeilDiv(std::max(k, 1), s), 8) * 8);
      const int splits = static_cast<int>(CeilDiv(std::max(k, 1), chunk));
      if (splits != s) continue;  // the same plan as a smaller s
      const long long blocks = tiles * splits;
      const long long ktiles = chunk / 8;
      // Full waves hold per_sm blocks on every SM; the last one may hold fewer.
      const long long full = blocks / slots, rest = blocks % slots;
      double cost = static_cast<double>(full) * WaveCost(per_sm * warps, ktiles);
      if (rest > 0) cost += WaveCost(CeilDiv(rest, sms) * warps, ktiles);
      if (splits > 1) {
        cost +=
            kReduceLaunch + static_cast<double>(splits) * SliceFloats(m, n) / kReduceFloatsPerUnit;
      }
      if (cost < best.cost * (1.0 - kTieBand)) best = {t.m, t.n, splits, chunk, cost};
    }
    // snippet-end: ch04-plan-cost
  }
  return best;
}

// snippet-begin: ch04-streamk-plan
StreamKPlan PlanStreamK(int m, int n, int k, const Residency& r) {
  StreamKPlan plan;
  if (m <= 0 || n <= 0 || k <= 0 || m % 128 != 0 || n % 128 != 0 || k % kStreamKDepth != 0) {
    return plan;  // stream-K blocks take whole 128×128 tiles and whole k-steps only
  }
  const long long sms = std::max(r.sms, 1);
  const long long tiles = static_cast<long long>(m / 128) * (n / 128);
  const long long slots = sms * std::max(r.tile128x128, 1);  // a wave of stage 4
  const long long last_wave = tiles % slots;                 // tiles of the partial last wave
  if (last_wave == 0 || 10 * last_wave > kStreamKMaxFillTenths * slots) return plan;
  const long long sk_slots = sms * std::max(r.streamk, 1);  // a wave of stream-K blocks
  const long long steps = last_wave * (k / kStreamKDepth);  // the last wave's k-steps
  const long long per_block = CeilDiv(steps, sk_slots);
  if (per_block > k / kStreamKDepth) return plan;  // a block would span three tiles
  plan.dp_tiles = static_cast<int>(tiles - last_wave);
  plan.sk_tiles = static_cast<int>(last_wave);
  plan.steps_per_block = static_cast<int>(per_block);
  plan.blocks = static_cast<int>(CeilDiv(steps, per_block));
  return plan;
}
// snippet-end: ch04-streamk-plan

std::size_t WorkspaceBytes(int m, int n, int k, Stage stage) {
  CheckDimensions(m, n, k);
  if (m == 0 || n == 0 || k == 0) return 0;
  const Residency r = DeviceResidency();
  if (stage == Stage::kBest) stage = ChooseStage(m, n, k, r);
  if (stage == Stage::kStreamK) return detail::StreamKWorkspaceBytes(PlanStreamK(m, n, k, r));
  if (stage != Stage::kSplitK) return 0;
  const SplitPlan plan = PlanSplitK(m, n, k, r);
  return plan.splits > 1 ? plan.splits * SliceFloats(m, n) * sizeof(float) : 0;
}

template <typename T>
void Matmul(const T* d_a, const T* d_b, T* d_c, int m, int n, int k, Stage stage,
            cudaStream_t stream, Workspace workspace) {
  CheckDimensions(m, n, k);
  if constexpr (!std::is_same_v<T, float>) {
    if (stage == Stage::kBest) stage = Stage::kTiled16;  // the only integer stage
    if (stage != Stage::kTiled16) {
      throw staged::UsageError(std::string("kernel '") + Info(stage).name +
                               "' is float only; int32 runs tiled16");
    }
  }
  staged::RequireAlignedScratch(workspace.data, "ch04::optimized::Matmul workspace");
  if (m == 0 || n == 0) return;
  if (stage == Stage::kTiled16) {
    detail::LaunchTiled16(d_a, d_b, d_c, m, n, k, stream);  // K == 0 writes zeros
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    if (EmptyProduct(d_c, m, n, k, stream)) return;  // K == 0: C = 0, and no tile to load
    const detail::Problem p{d_a, d_b, d_c, m, n, k};
    const Residency r = DeviceResidency();
    if (stage == Stage::kBest) stage = ChooseStage(m, n, k, r);
    switch (stage) {
      case Stage::kRegBlock:
        detail::LaunchRegBlock(p, stream);
        break;
      case Stage::kVectorized:
        detail::LaunchVectorized(p, stream);
        break;
      case Stage::kDoubleBuffer:
        detail::LaunchDoubleBuffer(p, stream);
        break;
      case Stage::kWarpTile:
        detail::LaunchWarpTile(p, stream);
        break;
      case Stage::kSplitK: {
        // As many splits as the workspace holds (none without one).
        const std::size_t fit =
            workspace.data == nullptr ? 1 : workspace.bytes / sizeof(float) / SliceFloats(m, n);
        const int max_splits = static_cast<int>(std::clamp<std::size_t>(fit, 1, kMaxSplits));
        detail::LaunchSplitK(p, PlanSplitK(m, n, k, r, max_splits), workspace.data, stream);
        break;
      }
      case Stage::kSkinny:
        detail::LaunchSkinny(p, stream);
        break;
      case Stage::kStreamK: {
        // Stage 4 alone when the plan splits nothing, the workspace is short, or the rows of B
        // and C are not 16-byte aligned (the stream-K blocks copy B and store C 16 bytes at a
        // time).
        const StreamKPlan plan = PlanStreamK(m, n, k, r);
        const bool fits = plan.sk_tiles > 0 && workspace.data != nullptr &&
                          workspace.bytes >= detail::StreamKWorkspaceBytes(plan);
        if (fits && detail::AlignmentOf(p).vec_n) {
          detail::LaunchStreamK(p, plan, workspace.data, stream);
        } else {
          detail::LaunchDoubleBuffer(p, stream);
        }
        break;
      }
      default:
        throw staged::UsageError("unknown stage");
    }
  }
}

/// @cond
template void Matmul<float>(const float*, const float*, float*, int, int, int, Stage, cudaStream_t,
                            Workspace);
template void Matmul<std::int32_t>(const std::int32_t*, const std::int32_t*, std::int32_t*, int,
                                   int, int, Stage, cudaStream_t, Workspace);
/// @endcond

}  // namespace ch04::optimized
