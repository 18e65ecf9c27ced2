/**
 * @file scan_lookback.cuh
 * @brief Tile shapes, shared-memory layout and status-word protocol of the single-pass scan with
 *        decoupled look-back (`scan_lookback_kernel.cuh`), as pure functions the host tests can
 *        check.
 *
 * The scan cuts the input into tiles of `kTile` elements, one per block. Each tile owns one
 * 64-bit status word in the caller's scratch:
 *
 * | bits 32..63 (flag) | bits 0..31 (value) | meaning |
 * |---|---|---|
 * | `kStatusInvalid` (0) | - | the tile has not published anything yet |
 * | `kStatusAggregate` (1) | sum of the tile's own elements | its predecessors are still unknown |
 * | `kStatusPrefix` (2) | sum of all elements up to and including the tile | final |
 *
 * Flag and value travel in one aligned 64-bit store, so a reader sees either the old word or
 * the new one, never a flag with a stale value: no fence is needed between them.
 *
 * How fast the scan runs is set by how many bytes each SM holds while its tiles wait: a tile
 * waits about two L2 round trips (its tile index, its look-back) on top of its DRAM load, and
 * by Little's law the bytes resident per SM divided by a tile's lifetime is the bandwidth. A
 * tile that waits in registers costs registers (`kInShared` false: 32 elements per thread on
 * top of the look-back's own, about 80 in all, so 3 blocks of 256 threads per SM); a tile copied
 * by `cp.async` straight into shared memory waits there, so 6 blocks of 32 KiB fit in an SM of
 * 228 KiB (sm_90) with 40 registers per thread. At the same bytes per SM, larger tiles mean
 * fewer tiles per byte: fewer tile-counter atomics, status words and look-backs, each an L2
 * round trip. An SM with less shared memory holds fewer such tiles (one on a 64 KiB sm_75 SM),
 * so `ChooseShape` picks, from the running GPU's occupancy, the shape that keeps the most bytes
 * resident there.
 */
#pragma once

#include <cstddef>
#include <cstdint>

#include "chapters/02_histogram_scan_countsort/countsort.cuh"

namespace ch02::lookback {

/**
 * @brief One configuration of the single-pass scan kernel.
 * @tparam kThreadsT threads per block (one block scans one tile)
 * @tparam kItemsT consecutive elements each thread scans (a multiple of 4, at most 32)
 * @tparam kInSharedT the tile waits for its prefix in shared memory, copied there by `cp.async`
 *         (true), or in registers (false)
 * @tparam kMinBlocksPerSmT blocks per SM the kernel is compiled for (caps registers per thread)
 * @tparam kWindowGroupsT groups of 32 predecessors one look-back step reads at once
 */
template <int kThreadsT, int kItemsT, bool kInSharedT, int kMinBlocksPerSmT, int kWindowGroupsT>
struct TileShape {
  static constexpr int kThreads = kThreadsT;                ///< threads per block
  static constexpr int kItems = kItemsT;                    ///< elements per thread
  static constexpr bool kInShared = kInSharedT;             ///< tile waits in shared memory
  static constexpr int kMinBlocksPerSm = kMinBlocksPerSmT;  ///< occupancy it is compiled for
  static constexpr int kWindowGroups = kWindowGroupsT;      ///< look-back groups per step
  static constexpr int kVectors = kItems / 4;               ///< 16-byte vectors per thread
  static constexpr int kWarps = kThreads / 32;              ///< warps per block
  static constexpr int kWarpItems = 32 * kItems;            ///< elements of a warp's segment
  static constexpr int kWarpVectors = kWarpItems / 4;       ///< 16-byte vectors of a segment
  static constexpr int kTile = kThreads * kItems;           ///< elements per tile
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps, one block");
  static_assert(kItems % 4 == 0, "threads own whole 16-byte vectors");
  static_assert(kVectors == 1 || kVectors == 2 || kVectors == 4 || kVectors == 8,
                "SwizzledVector permutes within groups of 8 vectors");
  static_assert(kWindowGroups >= 1 && kWindowGroups <= 8, "look-back window of 32..256 tiles");
};

// snippet-begin: ch02-shapes
/// The shape `ch02::optimized::ExclusiveScan` uses: 256 threads x 32 elements (32 KiB tiles)
/// waiting in shared memory, 6 blocks per SM (192 KiB of tiles per SM, 40 registers per
/// thread), a look-back window of 256 predecessors per round trip.
using Shape = TileShape<256, 32, true, 6, 8>;

/// Contrast 1 (the `optimized:scan-registers` row): `Shape` with the tile waiting in registers.
/// 32 elements per thread held through the look-back need about 80 registers, so 3 blocks fit
/// per SM: 96 KiB of tiles instead of 192.
using RegisterShape = TileShape<256, 32, false, 3, 8>;

/// Contrast 2 (the `optimized:scan-tile4096` row): `Shape` with 128 threads, so tiles of 4096
/// elements, 12 blocks per SM: the same 192 KiB of tiles per SM in twice as many tiles (twice
/// the tile-counter atomics, status words and look-backs per byte).
using Tile4096Shape = TileShape<128, 32, true, 12, 8>;
// snippet-end: ch02-shapes

/// Static shared memory of `DecoupledLookbackScanKernel` with shape @p S, at most: the tile, the
/// warp totals (16-byte blocks) and two words (a GPU test checks the compiled kernels).
/// @tparam S the `TileShape`
template <class S>
constexpr std::size_t SharedBytes() {
  return 4 * static_cast<std::size_t>(S::kTile) + 16 * ((4 * S::kWarps + 15) / 16) + 16;
}

/// The shapes `ch02::optimized::ExclusiveScan` can run: the chapter's `Shape` wherever it keeps
/// the most tile bytes resident per SM, else the one of the contrasts that keeps more.
enum class ScanShape {
  kShared,      ///< `Shape`: 8192-element tiles waiting in shared memory
  kRegisters,   ///< `RegisterShape`: the same tiles waiting in registers
  kSmallTiles,  ///< `Tile4096Shape`: 4096-element tiles waiting in shared memory
};

/// @brief The shape with the most tile bytes resident per SM (blocks per SM x tile), which sets
///        the scan's bandwidth (Little's law, above); on a tie the larger tile (fewer look-backs
///        per byte), then the tile in shared memory.
/// @param[in] shared_blocks blocks per SM of `Shape`'s kernel
/// @param[in] register_blocks blocks per SM of `RegisterShape`'s kernel
/// @param[in] small_tile_blocks blocks per SM of `Tile4096Shape`'s kernel
constexpr ScanShape ChooseShape(int shared_blocks, int register_blocks, int small_tile_blocks) {
  const long long shared = static_cast<long long>(shared_blocks) * Shape::kTile;
  const long long registers = static_cast<long long>(register_blocks) * RegisterShape::kTile;
  const long long small = static_cast<long long>(small_tile_blocks) * Tile4096Shape::kTile;
  if (shared >= registers && shared >= small) return ScanShape::kShared;
  return registers >= small ? ScanShape::kRegisters : ScanShape::kSmallTiles;
}

/// `ChooseShape` on the current device, with each shape's blocks per SM as the launchers plan
/// them (`staged::ResidentBlocks`: the occupancy API, capped by a device profile). Defined in
/// scan_lookback.cu.
ScanShape ChosenShape();

/// Scratch bytes in front of the status words that hold the tile counter (one aligned block).
inline constexpr std::size_t kCounterBytes = 256;
/// The largest number of virtual elements put in front of the input to align it to 16 bytes.
inline constexpr unsigned kMaxLead = 3;

/// Status flag (the high 32 bits of a status word): nothing published yet (the memset's zero).
inline constexpr std::uint32_t kStatusInvalid = 0;
/// Status flag: the value is the tile's own sum.
inline constexpr std::uint32_t kStatusAggregate = 1;
/// Status flag: the value is the inclusive prefix of the tile (everything up to its end).
inline constexpr std::uint32_t kStatusPrefix = 2;

/// How a look-back warp waits for predecessors that have not published yet: a pause before its
/// first read of their status words, then a pause after every read that found one missing,
/// doubling from @ref first_pause_ns up to @ref max_pause_ns (0: poll again at once).
struct Backoff {
  unsigned first_poll_delay_ns;  ///< pause between publishing the aggregate and the first read
  unsigned first_pause_ns;       ///< pause after the first read that found a predecessor missing
  unsigned max_pause_ns;         ///< longest pause between two reads
};

/// The backoff `ch02::optimized::ExclusiveScan` uses: read at once (the predecessors started
/// earlier and have usually published), then short pauses: a read is an L2 round trip already,
/// so a long pause only delays the tile after its predecessor has published. Tuned on the H200;
/// other GPUs may prefer other pauses.
inline constexpr Backoff kBackoff{0, 32, 256};

/// Packs a flag and a 32-bit value into one status word.
/// @param[in] flag `kStatusAggregate` or `kStatusPrefix`
/// @param[in] value the sum the flag describes
/// @return flag << 32 | value
__host__ __device__ constexpr std::uint64_t PackStatus(std::uint32_t flag, std::uint32_t value) {
  return static_cast<std::uint64_t>(flag) << 32 | value;
}
/// The flag of a status word.
/// @param[in] word a status word
__host__ __device__ constexpr std::uint32_t StatusFlag(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> 32);
}
/// The value of a status word.
/// @param[in] word a status word
__host__ __device__ constexpr std::uint32_t StatusValue(std::uint64_t word) {
  return static_cast<std::uint32_t>(word);
}

/**
 * @brief The lanes of a look-back window whose values the tile needs: lane 0 (the nearest
 *        predecessor) up to and including the nearest lane holding an inclusive prefix, or all
 *        32 lanes when none does.
 * @param[in] prefix_lanes ballot of the lanes whose status is `kStatusPrefix`
 * @return a mask of lanes 0..p, p = the lowest set bit of @p prefix_lanes (all lanes if 0)
 */
__host__ __device__ constexpr std::uint32_t LanesThroughFirstPrefix(std::uint32_t prefix_lanes) {
  // x ^ (x - 1) sets every bit up to and including the lowest set bit of x.
  return prefix_lanes != 0 ? prefix_lanes ^ (prefix_lanes - 1) : 0xFFFFFFFFu;
}

/**
 * @brief Where 16-byte vector @p v of a warp's segment lives in that warp's shared buffer.
 *
 * A warp moves its segment between two orders: *striped* (lane l holds vectors l, l + 32, ...,
 * so every global access covers 512 contiguous bytes) and *blocked* (lane l holds vectors
 * kVectors l ... kVectors l + kVectors - 1, its consecutive elements). A 16-byte shared access
 * is served eight lanes at a time, and eight lanes are conflict-free when they touch eight
 * different 16-byte bank groups (address / 16 mod 8). Blocked, eight lanes touch vectors
 * kVectors m + k (m = 0..7): for kVectors = 4 those fall into only two groups (4-way conflict),
 * for kVectors = 8 into one (8-way). XOR-ing bits 0..2 with bits 3..5 of the index (as many as
 * kVectors - 1 covers) spreads them over all eight groups while leaving the striped pattern
 * (eight consecutive vectors with equal bits 3..5) a permutation of the eight groups, and costs
 * no extra memory, unlike padding.
 * @tparam kVectors 16-byte vectors per thread (1, 2, 4 or 8)
 * @param[in] v vector index in the warp's segment, 0 <= v < 32 kVectors
 * @return the slot of vector @p v in the warp's buffer
 */
template <int kVectors>
__host__ __device__ constexpr int SwizzledVector(int v) {
  return v ^ ((v >> 3) & (kVectors - 1));
}

/// Shared-memory word (4-byte slot) that holds element @p e of a warp's segment: word e mod 4 of
/// vector e / 4, the layout of the 16-byte path, so that the 4-byte path (32 lanes touching 32
/// consecutive elements) still hits 32 different banks.
/// @tparam kVectors 16-byte vectors per thread (1, 2, 4 or 8)
/// @param[in] e element index in the warp's segment
template <int kVectors>
__host__ __device__ constexpr int SwizzledWord(int e) {
  return 4 * SwizzledVector<kVectors>(e / 4) + e % 4;
}

/// Tiles of @p tile elements that cover @p n elements placed after @p lead virtual elements.
/// @param[in] n number of elements
/// @param[in] lead virtual elements in front of the first (0..kMaxLead)
/// @param[in] tile elements per tile (`TileShape::kTile`)
/// @return ceil((n + lead) / tile)
constexpr std::size_t Tiles(std::size_t n, unsigned lead, std::size_t tile) {
  return (n + lead + tile - 1) / tile;
}

/// Scratch bytes of one scan of @p n elements in tiles of @p tile elements: the tile counter and
/// one 8-byte status word per tile (whatever the lead), rounded by `AlignTemp`; 0 for n = 0.
/// @param[in] n number of elements
/// @param[in] tile elements per tile (`TileShape::kTile`)
constexpr std::size_t ScratchBytes(std::size_t n, std::size_t tile) {
  return n == 0 ? 0 : kCounterBytes + AlignTemp(Tiles(n, kMaxLead, tile) * sizeof(std::uint64_t));
}

}  // namespace ch02::lookback
