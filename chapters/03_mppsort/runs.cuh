/**
 * @file runs.cuh
 * @brief How a block finds where its keys of a bucket go without a column scan of the histogram
 *        matrix (stage 1's change 3, used by every later partition).
 */
#pragma once

#include <cstdint>

namespace ch03 {

// snippet-begin: ch03-take-run
/// Takes a block's @p count keys of a bucket out of the bucket's @p total (the keys of that
/// bucket no block has taken yet): the total before the subtraction, less the count, is where
/// the block's run starts within the bucket. The runs of a bucket fill it from its end down, in
/// the order the blocks take them; which order does not matter, since the sort step orders the
/// bucket anyway. A block without keys of the bucket takes nothing.
/// @param[in,out] total the bucket's keys not yet taken (the histogram's total at first)
/// @param[in] count the block's keys of the bucket (its entry of the histogram matrix)
/// @return the run's offset within the bucket
__device__ __forceinline__ std::uint32_t TakeRunOffset(std::uint32_t* total, std::uint32_t count) {
  return count == 0 ? 0 : atomicSub(total, count) - count;
}
// snippet-end: ch03-take-run

}  // namespace ch03
