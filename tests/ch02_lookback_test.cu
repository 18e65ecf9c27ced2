/// @file ch02_lookback_test.cu
/// @brief Chapter 02 look-back scan, host side (no GPU needed): the swizzled shared-memory
///        layout (conflict-free for 4 and 8 vectors per thread), the status words, the look-back
///        window's lane mask, the two contrasting shapes (one change each), tile counts and
///        scratch sizes of the chapter's scan and its contrasts (scan_lookback_variants.hpp).
///        The blocks per SM each reaches on a GPU and the scans themselves are checked in
///        ch02_scan_test.cu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback.cuh"
#include "chapters/02_histogram_scan_countsort/scan_lookback_variants.hpp"
#include "common/device_limits.hpp"
#include "gpu_test.hpp"

namespace ch02 {
namespace {

// ---------------------------------------------------------------------------------------------
// Host tests: the look-back scan's shared-memory layout and status words.

// Largest number of lanes of one phase that share a bank group, over every phase of an access
// in which lane l touches slot slot_of(l). A 16-byte access is served 8 lanes at a time over 8
// groups of 16 bytes; a 4-byte access 32 lanes at a time over 32 banks.
template <typename SlotOf>
int WorstConflict(SlotOf slot_of, int lanes_per_phase, int groups) {
  int worst = 1;
  for (int phase = 0; phase < 32 / lanes_per_phase; ++phase) {
    std::vector<int> hits(groups, 0);
    for (int m = 0; m < lanes_per_phase; ++m) {
      worst = std::max(worst, ++hits[slot_of(phase * lanes_per_phase + m) % groups]);
    }
  }
  return worst;
}

// The swizzle of a warp buffer of 32 kV vectors: a permutation, and every access pattern of the
// kernel conflict-free (kV = 8: 32 elements per thread, as every shape of the chapter uses;
// kV = 4: 16, which TileShape also allows).
template <int kV>
void CheckSwizzle() {
  using lookback::SwizzledVector;
  using lookback::SwizzledWord;
  std::vector<int> seen(32 * kV, 0);
  for (int v = 0; v < 32 * kV; ++v) {
    const int slot = SwizzledVector<kV>(v);
    ASSERT_GE(slot, 0);
    ASSERT_LT(slot, 32 * kV);
    ++seen[slot];
  }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 32 * kV) << "kV = " << kV;
  for (int j = 0; j < kV; ++j) {  // striped: lane l touches vector 32 j + l
    EXPECT_EQ(WorstConflict([&](int l) { return SwizzledVector<kV>(32 * j + l); }, 8, 8), 1)
        << "kV = " << kV << " j = " << j;
  }
  for (int k = 0; k < kV; ++k) {  // blocked: lane l touches vector kV l + k
    EXPECT_EQ(WorstConflict([&](int l) { return SwizzledVector<kV>(kV * l + k); }, 8, 8), 1)
        << "kV = " << kV << " k = " << k;
    // Without the swizzle the blocked pattern conflicts: the swizzle is needed.
    EXPECT_GT(WorstConflict([&](int l) { return kV * l + k; }, 8, 8), 1) << k;
  }
  // The 4-byte path: element e = 32 j + l lives in word 4 SwizzledVector(e / 4) + e % 4.
  for (int j = 0; j < 4 * kV; ++j) {
    EXPECT_EQ(WorstConflict([&](int l) { return SwizzledWord<kV>(32 * j + l); }, 32, 32), 1)
        << "kV = " << kV << " j = " << j;
  }
}

TEST(LookbackLayout, SwizzlePermutesAndAvoidsBankConflicts) {
  CheckSwizzle<4>();
  CheckSwizzle<8>();
  EXPECT_EQ(lookback::Shape::kVectors, 8);
}

// Blocks x (tile + 1 KiB the SM reserves per block) within the H100/H200's 228 KiB per SM.
template <class S>
void CheckFitsInSharedMemory() {
  EXPECT_EQ(S::kTile, S::kThreads * S::kItems);
  EXPECT_EQ(S::kWarpVectors * 4 * S::kWarps, S::kTile);
  EXPECT_LE(S::kMinBlocksPerSm * (4 * S::kTile + 1024), 228 * 1024) << S::kTile;
}

TEST(LookbackLayout, ShapesFitTheirBlocksPerSmInSharedMemory) {
  CheckFitsInSharedMemory<lookback::Shape>();
  CheckFitsInSharedMemory<lookback::RegisterShape>();
  CheckFitsInSharedMemory<lookback::Tile4096Shape>();
  EXPECT_EQ(lookback::Shape::kTile, 8192);
}

// Each contrast changes one thing of the chapter's shape (its blocks per SM follow from it), so
// its row measures that one idea.
TEST(LookbackLayout, ContrastsChangeOneThingEach) {
  using lookback::RegisterShape;
  using lookback::Shape;
  using lookback::Tile4096Shape;
  // Where the tile waits: registers instead of shared memory; the same tile and window.
  EXPECT_TRUE(Shape::kInShared);
  EXPECT_FALSE(RegisterShape::kInShared);
  EXPECT_EQ(RegisterShape::kThreads, Shape::kThreads);
  EXPECT_EQ(RegisterShape::kItems, Shape::kItems);
  EXPECT_EQ(RegisterShape::kWindowGroups, Shape::kWindowGroups);
  // 32 elements held through the look-back need more than 64 registers: fewer blocks per SM.
  EXPECT_LT(RegisterShape::kMinBlocksPerSm * RegisterShape::kTile,
            Shape::kMinBlocksPerSm * Shape::kTile);
  // Tile size: half the threads, the same elements per thread, bytes per SM and window.
  EXPECT_TRUE(Tile4096Shape::kInShared);
  EXPECT_EQ(Tile4096Shape::kThreads, Shape::kThreads / 2);
  EXPECT_EQ(Tile4096Shape::kItems, Shape::kItems);
  EXPECT_EQ(Tile4096Shape::kWindowGroups, Shape::kWindowGroups);
  EXPECT_EQ(Tile4096Shape::kTile, 4096);
  EXPECT_EQ(Tile4096Shape::kMinBlocksPerSm * Tile4096Shape::kTile,
            Shape::kMinBlocksPerSm * Shape::kTile);
}

// ---------------------------------------------------------------- architecture limits

/// Blocks per SM of shape @p S's kernel under @p limits: its static shared memory and the
/// registers its launch bound allows (the most it may use).
template <class S>
int ModelBlocks(const staged::DeviceLimits& limits) {
  const int regs = staged::LaunchBoundRegisters(
      limits.regs_per_sm, S::kThreads,
      std::min(S::kMinBlocksPerSm, limits.max_threads_per_sm / S::kThreads));
  return staged::BlocksPerSmUnder(limits, S::kThreads, lookback::SharedBytes<S>(), regs);
}

TEST(ArchitectureLimits, EveryProfileGetsAScanShapeThatFits) {
  using lookback::ScanShape;
  for (const staged::DeviceLimits& limits : staged::DeviceProfiles()) {
    const int shared = ModelBlocks<lookback::Shape>(limits);
    const int registers = ModelBlocks<lookback::RegisterShape>(limits);
    const int small = ModelBlocks<lookback::Tile4096Shape>(limits);
    EXPECT_GE(std::min({shared, registers, small}), 1) << limits.name;
    const ScanShape chosen = lookback::ChooseShape(shared, registers, small);
    const int blocks = chosen == ScanShape::kShared      ? shared
                       : chosen == ScanShape::kRegisters ? registers
                                                         : small;
    EXPECT_GE(blocks, 1) << limits.name;
  }
  // An H200 SM holds six 32 KiB tiles (192 KiB): the chapter's shape. A T4 SM holds one (64 KiB
  // in all) but three 16 KiB ones: the small tiles keep more bytes in flight. A 100 KiB SM (RTX
  // 30/40) holds three of either 32 KiB shape: the chapter's (a tie goes to shared memory).
  const auto choice = [](const char* name) {
    const staged::DeviceLimits& l = staged::DeviceProfile(name);
    return lookback::ChooseShape(ModelBlocks<lookback::Shape>(l),
                                 ModelBlocks<lookback::RegisterShape>(l),
                                 ModelBlocks<lookback::Tile4096Shape>(l));
  };
  EXPECT_EQ(choice("h200"), ScanShape::kShared);
  EXPECT_EQ(ModelBlocks<lookback::Shape>(staged::DeviceProfile("h200")), 6);
  EXPECT_EQ(choice("t4"), ScanShape::kSmallTiles);
  EXPECT_EQ(choice("rtx3060"), ScanShape::kShared);
  EXPECT_EQ(choice("rtx4090"), ScanShape::kShared);
}

TEST(ArchitectureLimits, ShapeChoiceWeighsTileBytesPerSm) {
  using lookback::ScanShape;
  EXPECT_EQ(lookback::ChooseShape(6, 3, 12), ScanShape::kShared);     // 192 = 96 = 192 KiB: tie
  EXPECT_EQ(lookback::ChooseShape(1, 1, 3), ScanShape::kSmallTiles);  // 32, 32, 48 KiB
  EXPECT_EQ(lookback::ChooseShape(1, 3, 3), ScanShape::kRegisters);   // 32, 96, 48 KiB
  EXPECT_EQ(lookback::ChooseShape(4, 3, 9), ScanShape::kSmallTiles);  // 128, 96, 144 KiB
  // Whichever the GPU gets, the scratch is sized for the smallest tile's status words.
  EXPECT_EQ(optimized::ExclusiveScanTempBytes<std::uint32_t>(1ul << 28),
            lookback::ScratchBytes(1ul << 28, lookback::Tile4096Shape::kTile));
}

TEST(LookbackLayout, StatusWordsCarryFlagAndValueTogether) {
  using namespace lookback;  // NOLINT
  const std::uint64_t word = PackStatus(kStatusPrefix, 0xDEADBEEFu);
  EXPECT_EQ(StatusFlag(word), kStatusPrefix);
  EXPECT_EQ(StatusValue(word), 0xDEADBEEFu);
  EXPECT_EQ(StatusFlag(PackStatus(kStatusAggregate, 0xFFFFFFFFu)), kStatusAggregate);
  // A zeroed word (the launcher's memset) reads as "not published".
  EXPECT_EQ(StatusFlag(0), kStatusInvalid);
  EXPECT_NE(kStatusAggregate, kStatusInvalid);
  EXPECT_NE(kStatusPrefix, kStatusAggregate);
}

TEST(LookbackLayout, WindowNeedsTheLanesUpToTheNearestPrefix) {
  using lookback::LanesThroughFirstPrefix;
  EXPECT_EQ(LanesThroughFirstPrefix(0), 0xFFFFFFFFu);  // no prefix: all 32 aggregates
  EXPECT_EQ(LanesThroughFirstPrefix(1u), 1u);          // the nearest predecessor has one
  EXPECT_EQ(LanesThroughFirstPrefix(0b1000u), 0b1111u);
  EXPECT_EQ(LanesThroughFirstPrefix(0b0110u), 0b0011u);  // only the nearest prefix counts
  EXPECT_EQ(LanesThroughFirstPrefix(0x80000000u), 0xFFFFFFFFu);
}

TEST(LookbackLayout, TilesCoverLeadAndTail) {
  using lookback::Tiles;
  for (std::size_t tile : {4096ul, 8192ul}) {
    EXPECT_EQ(Tiles(0, 0, tile), 0u);
    EXPECT_EQ(Tiles(1, 0, tile), 1u);
    EXPECT_EQ(Tiles(tile, 0, tile), 1u);
    EXPECT_EQ(Tiles(tile, 1, tile), 2u);
    EXPECT_EQ(Tiles(tile - 3, 3, tile), 1u);
    EXPECT_EQ(Tiles(tile - 2, 3, tile), 2u);
    EXPECT_EQ(Tiles(3 * tile + 1, 0, tile), 4u);
  }
}

TEST(ScanScratch, SizesCoverEveryTileAndLead) {
  EXPECT_EQ(optimized::ExclusiveScanTempBytes<std::uint32_t>(0), 0u);
  std::size_t previous = 0;
  for (std::size_t n : {1ul, 8189ul, 8190ul, 8192ul, 100000ul, 1ul << 28, 0xFFFFFFFFul}) {
    const std::size_t bytes = optimized::ExclusiveScanTempBytes<std::int32_t>(n);
    const std::size_t tiles = lookback::Tiles(n, lookback::kMaxLead, lookback::Shape::kTile);
    EXPECT_GE(bytes, lookback::kCounterBytes + 8 * tiles) << n;
    EXPECT_GE(bytes, previous) << n;
    EXPECT_EQ(bytes % kTempAlignment, 0u) << n;
    previous = bytes;
  }
  // Every variant: a status word per tile of its own size, whatever the lead.
  const std::vector<lookback::Variant>& variants = lookback::Variants();
  for (const lookback::Variant& v : variants) {
    EXPECT_EQ(v.temp_bytes(0), 0u) << v.row;
    for (std::size_t n : {1ul, 4093ul, 4094ul, 8189ul, 8190ul, 12289ul, 1ul << 28}) {
      EXPECT_GE(v.temp_bytes(n), lookback::kCounterBytes + 8 * lookback::Tiles(n, 3, v.tile))
          << v.row << " n = " << n;
    }
  }
  // Rows are unique, and the contrasts' say what they change; the chapter's scan comes last.
  ASSERT_EQ(variants.size(), 3u);
  for (std::size_t i = 0; i < variants.size(); ++i) {
    EXPECT_EQ(variants[i].row.rfind("optimized:scan", 0), 0u) << variants[i].row;
    EXPECT_EQ(variants[i].change.empty(), i + 1 == variants.size()) << variants[i].row;
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(variants[j].row, variants[i].row);
  }
  EXPECT_EQ(variants.back().row, "optimized:scan");
  EXPECT_EQ(variants.back().tile, static_cast<std::size_t>(lookback::Shape::kTile));
  EXPECT_EQ(variants.back().temp_bytes(1ul << 28),
            optimized::ExclusiveScanTempBytes<std::uint32_t>(1ul << 28));
  EXPECT_EQ(optimized::ExclusiveScanBlellochTempBytes<std::uint32_t>(1024), 0u);
  EXPECT_GT(optimized::ExclusiveScanBlellochTempBytes<std::uint32_t>(1025), 0u);
}

}  // namespace
}  // namespace ch02
