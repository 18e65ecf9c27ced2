/**
 * @file stage3_registers.cu
 * @brief Stage 3: the report's bitonic network with each thread's keys in registers, and a
 *        bucket count that follows n so that uniform buckets fit the tile.
 *
 * Changes relative to stage 2 (stage2_ranked.cu):
 * 5. The bucket count follows n: h = ceil(n / target), where the target leaves a uniform
 *    bucket (Poisson spread, about sqrt(target) keys) 6.5 standard deviations below the tile,
 *    with the smallest tile that holds n in kMaxBuckets buckets (`optimized::PlanFirstLevel`).
 *    With the report's fixed h = 1024, every bucket of an 8M-key sort holds 8192 keys on
 *    average, and half of them overflow the shared tile.
 * 6. The bitonic sort keeps 16 keys per thread in registers: the short distances are register
 *    swaps and warp shuffles, and only distances of 512 and more go through shared memory
 *    (`optimized::BitonicTile`, bitonic_tile.cuh), where the report's network waits at a barrier
 *    for every one of its 78 (4096 keys) to 91 (8192 keys) layers.
 */
#include <stdexcept>

#include "chapters/03_mppsort/bitonic_tile.cuh"
#include "chapters/03_mppsort/stages.cuh"
#include "common/cuda_check.hpp"
#include "common/launch_support.hpp"

namespace ch03::stage3 {

/**
 * @brief Step 5: block b sorts bucket b with the register bitonic tile, unless it is empty or
 *        over the tile (those go to global memory after this kernel).
 * @par Launch configuration
 * h blocks of Tile::kThreads threads; dynamic shared memory sizeof(Tile::Shared).
 * @tparam Tile `optimized::BitonicTile<4096>` or `<8192>`
 * @param[in] part partitioned keys
 * @param[out] out sorted keys
 * @param[in] starts the scanned totals
 * @param[in] h buckets
 * @param[in] n keys
 * Reads and writes 4 bytes per key of the buckets within the tile.
 */
template <class Tile>
__global__ void __launch_bounds__(Tile::kThreads)
    SortBucketsRegistersKernel(const std::uint32_t* part, std::uint32_t* out,
                               const std::uint32_t* starts, std::uint32_t h, std::size_t n) {
  extern __shared__ uint4 smem_registers[];
  auto& sh = *reinterpret_cast<typename Tile::Shared*>(smem_registers);
  // snippet-begin: ch03-stage3-sort
  const std::uint32_t b = blockIdx.x;
  const std::uint64_t begin = starts[b];
  const std::uint64_t end = b + 1 < h ? starts[b + 1] : n;
  const auto len = static_cast<std::uint32_t>(end - begin);
  if (len == 0 || len > Tile::kKeys) return;  // uniform per block
  Tile::SortBucket(part + begin, out + begin, len, sh);
  // snippet-end: ch03-stage3-sort
}

namespace {
template <class Tile>
void Launch(const one_level::Args& a, cudaStream_t stream) {
  const auto kernel = SortBucketsRegistersKernel<Tile>;
  constexpr std::size_t kSmem = sizeof(typename Tile::Shared);
  staged::OptInSharedMemory(reinterpret_cast<const void*>(kernel), kSmem);
  kernel<<<a.buckets, Tile::kThreads, kSmem, stream>>>(a.part, a.out, a.starts, a.buckets, a.n);
  CUDA_CHECK_LAST_LAUNCH();
}
}  // namespace

void SortBuckets4096(const one_level::Args& a, cudaStream_t stream) {
  Launch<optimized::BitonicTile<4096>>(a, stream);
}

void SortBuckets8192(const one_level::Args& a, cudaStream_t stream) {
  Launch<optimized::BitonicTile<8192>>(a, stream);
}

one_level::Steps Steps(std::uint64_t n, const staged::DeviceLimits& limits) {
  // snippet-begin: ch03-stage3-plan
  const optimized::FirstLevelPlan plan =
      optimized::PlanFirstLevel(n < 1 ? 1 : n, optimized::BucketSorter::kBitonic, limits);
  // snippet-end: ch03-stage3-plan
  if (plan.tile.keys == 4096) return {plan.buckets, 4096, &stage2::Partition, &SortBuckets4096};
  if (plan.tile.keys == 8192) return {plan.buckets, 8192, &stage2::Partition, &SortBuckets8192};
  throw std::logic_error("stage3: no bitonic tile of " + std::to_string(plan.tile.keys) + " keys");
}

}  // namespace ch03::stage3
