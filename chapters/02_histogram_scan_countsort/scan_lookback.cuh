/**
 * @file scan_lookback.cuh
 * @brief Tile shape, shared-memory layout and status-word protocol of the single-pass scan with
 *        decoupled look-back (`scan_lookback.cu`), as pure functions the host tests can check.
 *
 * The scan cuts the input into tiles of `kLookbackTile` elements. Each tile owns one 64-bit
 * status word in the caller's scratch:
 *
 * | bits 32..63 (flag) | bits 0..31 (value) | meaning |
 * |---|---|---|
 * | `kStatusInvalid` (0) | - | the tile has not published anything yet |
 * | `kStatusAggregate` (1) | sum of the tile's own elements | its predecessors are still unknown |
 * | `kStatusPrefix` (2) | sum of all elements up to and including the tile | final |
 *
 * Flag and value travel in one aligned 64-bit store, so a reader sees either the old word or
 * the new one, never a flag with a stale value: no fence is needed between them.
 */
#pragma once

#include <cstddef>
#include <cstdint>

namespace ch02::lookback {

/// Threads per block; one block scans one tile.
inline constexpr int kThreads = 256;
/// Consecutive elements each thread scans in registers.
inline constexpr int kItems = 16;
/// 16-byte vectors (`uint4`) per thread.
inline constexpr int kVectors = kItems / 4;
/// Warps per block.
inline constexpr int kWarps = kThreads / 32;
/// Elements of one warp's segment of a tile.
inline constexpr int kWarpItems = 32 * kItems;
/// 16-byte vectors of one warp's segment.
inline constexpr int kWarpVectors = kWarpItems / 4;
/// Elements per tile.
inline constexpr int kTile = kThreads * kItems;
/// Scratch bytes in front of the status words that hold the tile counter (one aligned block).
inline constexpr std::size_t kCounterBytes = 256;
/// The largest number of virtual elements put in front of the input to align it to 16 bytes.
inline constexpr unsigned kMaxLead = 3;

static_assert(kVectors == 1 || kVectors == 2 || kVectors == 4 || kVectors == 8,
              "SwizzledVector permutes within groups of 8 vectors");

/// Status flag (the high 32 bits of a status word): nothing published yet (the memset's zero).
inline constexpr std::uint32_t kStatusInvalid = 0;
/// Status flag: the value is the tile's own sum.
inline constexpr std::uint32_t kStatusAggregate = 1;
/// Status flag: the value is the inclusive prefix of the tile (everything up to its end).
inline constexpr std::uint32_t kStatusPrefix = 2;

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
 * kVectors m + k (m = 0..7): for kVectors = 4 those fall into only two groups (4-way conflict).
 * XOR-ing bits 0..2 with bits 3..5 of the index spreads them over all eight groups while leaving
 * the striped pattern (eight consecutive vectors with equal bits 3..5) a permutation of the
 * eight groups, and costs no extra memory, unlike padding.
 * @param[in] v vector index in the warp's segment, 0 <= v < kWarpVectors
 * @return the slot of vector @p v in the warp's buffer
 */
__host__ __device__ constexpr int SwizzledVector(int v) { return v ^ ((v >> 3) & (kVectors - 1)); }

/// Tiles that cover @p n elements placed after @p lead virtual elements.
/// @param[in] n number of elements
/// @param[in] lead virtual elements in front of the first (0..kMaxLead)
/// @return ceil((n + lead) / kTile)
constexpr std::size_t Tiles(std::size_t n, unsigned lead) { return (n + lead + kTile - 1) / kTile; }

}  // namespace ch02::lookback
