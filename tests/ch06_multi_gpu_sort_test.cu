/// @file ch06_multi_gpu_sort_test.cu
/// @brief GPU tests of chapter 06: the distributed sort and the gather to one GPU on 1, 2, 4
///        and 8 GPUs (skipped, with the reason, where the machine has fewer), against std::sort
///        and against the CPU model's run lengths, for every input of chapter 03 and every
///        split (unequal shares, empty GPUs, every key on one GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ch06_inputs.hpp"
#include "chapters/03_mppsort/workspace.hpp"
#include "chapters/06_multi_gpu_sort/cpu.hpp"
#include "chapters/06_multi_gpu_sort/msort.cuh"
#include "chapters/06_multi_gpu_sort/partition.cuh"
#include "common/cuda_check.hpp"
#include "common/device_buffer.hpp"
#include "gpu_test.hpp"

namespace ch06 {
namespace {

class Ch06Sort : public staged::testing::GpuTestWithParam<int> {
 protected:
  void SetUp() override {
    staged::testing::GpuTestWithParam<int>::SetUp();
    if (IsSkipped()) return;
    int available = 0;
    CUDA_CHECK(cudaGetDeviceCount(&available));
    if (available < GetParam()) {
      GTEST_SKIP() << "needs " << GetParam() << " GPUs; this machine has " << available;
    }
    cluster_ = std::make_unique<Cluster>(Cluster::FirstGpus(GetParam()));
  }

  // Copies each piece to its rank, sorts (distributed, or gathered when @p gather), and returns
  // the runs in rank order with each rank's count.
  std::vector<std::uint32_t> Run(const std::vector<std::vector<std::uint32_t>>& pieces, bool gather,
                                 std::vector<std::size_t>* counts, std::uint64_t seed = 11) {
    const int k = cluster_->size();
    std::vector<staged::DeviceBuffer<std::uint32_t>> d;
    std::vector<Shard> shards;
    std::size_t largest = 1;
    for (int g = 0; g < k; ++g) {
      CUDA_CHECK(cudaSetDevice(cluster_->device(g)));
      const auto& p = pieces[static_cast<std::size_t>(g)];
      d.emplace_back(p);
      shards.push_back({d.back().data(), p.size()});
      largest = std::max(largest, p.size());
    }
    if (!ws_) ws_ = std::make_unique<Workspace>(*cluster_, largest / 2 + 1);  // grows as needed
    const Result r =
        gather ? GatherSort(*cluster_, shards, *ws_) : Sort(*cluster_, shards, *ws_, seed);
    cluster_->Synchronize();
    std::vector<std::uint32_t> all;
    for (int g = 0; g < k; ++g) {
      const auto G = static_cast<std::size_t>(g);
      CUDA_CHECK(cudaSetDevice(cluster_->device(g)));
      EXPECT_EQ(ws_->rank(g).sort->Errors(cluster_->stream(g)), 0u) << "rank " << g;
      EXPECT_EQ(r.offsets[G], all.size()) << "rank " << g;
      std::vector<std::uint32_t> run(r.counts[G]);
      if (!run.empty()) {
        CUDA_CHECK(cudaMemcpy(run.data(), r.keys[G], run.size() * 4, cudaMemcpyDeviceToHost));
      }
      all.insert(all.end(), run.begin(), run.end());
    }
    CUDA_CHECK(cudaSetDevice(cluster_->device(0)));
    if (counts) *counts = r.counts;
    return all;
  }

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<Workspace> ws_;
};

TEST_P(Ch06Sort, EveryInputAndSplitSortsAcrossTheGpus) {
  const int k = GetParam();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{12289}, std::size_t{300007}}) {
    for (const testing::Input& in : testing::AllInputs(n, 20261206)) {
      std::vector<std::uint32_t> expected = in.keys;
      std::sort(expected.begin(), expected.end());
      for (const std::string& how : testing::SplitNames()) {
        const auto pieces = testing::Cut(in.keys, testing::Split(n, k, how));
        std::vector<std::size_t> counts;
        const std::vector<std::uint32_t> got = Run(pieces, false, &counts);
        ASSERT_EQ(got, expected) << in.name << ", n = " << n << ", " << how;
        // The GPUs' buckets are the model's: same sample, same splitters.
        const cpu::Model m = cpu::DistributedSort(pieces, 11);
        for (int g = 0; g < k; ++g) {
          EXPECT_EQ(counts[static_cast<std::size_t>(g)], m.runs[static_cast<std::size_t>(g)].size())
              << in.name << ", n = " << n << ", " << how << ", rank " << g;
        }
      }
    }
  }
}

TEST_P(Ch06Sort, GatherToOneGpuSortsEveryInput) {
  const int k = GetParam();
  for (const testing::Input& in : testing::AllInputs(100003, 5)) {
    std::vector<std::uint32_t> expected = in.keys;
    std::sort(expected.begin(), expected.end());
    for (const char* how : {"even", "last", "gaps"}) {
      std::vector<std::size_t> counts;
      ASSERT_EQ(Run(testing::Cut(in.keys, testing::Split(in.keys.size(), k, how)), true, &counts),
                expected)
          << in.name << ", " << how;
      EXPECT_EQ(counts[0], in.keys.size());
    }
  }
}

// A workspace reused across sizes, larger and smaller, and after a shard grew past it.
TEST_P(Ch06Sort, OneWorkspaceServesChangingSizes) {
  const int k = GetParam();
  for (std::size_t n :
       {std::size_t{50000}, std::size_t{400009}, std::size_t{3}, std::size_t{65537}}) {
    const std::vector<std::uint32_t> keys =
        staged::Generate<std::uint32_t>(n, staged::Distribution::kFew, n);
    std::vector<std::uint32_t> expected = keys;
    std::sort(expected.begin(), expected.end());
    ASSERT_EQ(Run(testing::Cut(keys, testing::Split(n, k, "uneven")), false, nullptr), expected)
        << "n = " << n;
  }
}

TEST_P(Ch06Sort, ABadShardListIsRefused) {
  std::vector<Shard> shards(static_cast<std::size_t>(GetParam() + 1));
  Workspace ws(*cluster_, 16);
  EXPECT_THROW(Sort(*cluster_, shards, ws), std::invalid_argument);
  shards.pop_back();
  shards[0].n = 5;  // keys missing
  EXPECT_THROW(Sort(*cluster_, shards, ws), std::invalid_argument);
}

// The all-to-all ceiling exchanges keys the caller wrote into `part`: a workspace too small for
// them is refused, not grown (growing would drop those keys), and its buffers stay as they were.
TEST_P(Ch06Sort, AnAllToAllLargerThanTheWorkspaceIsRefused) {
  Workspace ws(*cluster_, 16);
  const std::uint32_t* part = ws.rank(0).part.data();
  EXPECT_THROW(AllToAll(*cluster_, ws, 17), std::invalid_argument);
  EXPECT_EQ(ws.rank(0).part.data(), part);
  EXPECT_EQ(ws.rank(0).input_capacity, std::size_t{16});
}

INSTANTIATE_TEST_SUITE_P(Gpus, Ch06Sort, ::testing::Values(1, 2, 4, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "K" + std::to_string(info.param);
                         });

// Steps 1 and 3 on one GPU for 2 to 8 destinations (on a machine with one GPU the sort itself
// never partitions): the sample at the modelled positions, and each destination's run holding
// exactly the keys the splitters give it, across block boundaries (16384 keys a block).
class Ch06Partition : public staged::testing::GpuTest {};

TEST_F(Ch06Partition, SampleAndRunsMatchTheModel) {
  const std::uint64_t first = 12345;  // this GPU's keys start at that global position
  const std::uint64_t seed = 77;
  for (std::size_t n :
       {std::size_t{1}, std::size_t{16383}, std::size_t{16385}, std::size_t{300007}}) {
    for (const testing::Input& in : testing::AllInputs(n, 9)) {
      staged::DeviceBuffer<std::uint32_t> keys(in.keys);
      staged::DeviceBuffer<Tagged> sample(kSamplesPerGpu);
      partition::Sample(keys.data(), n, first, seed, sample.data(), nullptr);
      const std::vector<Tagged> got = sample.ToHost();
      for (std::uint64_t j = 0; j < got.size(); ++j) {
        const std::uint64_t i = SamplePosition(j, kSamplesPerGpu, n, seed);
        ASSERT_EQ(got[j].position, first + i) << in.name << ", n = " << n << ", sample " << j;
        ASSERT_EQ(got[j].key, in.keys[i]) << in.name << ", n = " << n << ", sample " << j;
      }
      for (int k : {2, 3, 8}) {
        const std::vector<Tagged> splitters = ChooseSplitters(got, k);
        staged::DeviceBuffer<Tagged> d_splitters(splitters);
        staged::DeviceBuffer<std::uint32_t> out(n);
        staged::DeviceBuffer<std::uint64_t> block_counts(2 * partition::Blocks(n) * k);
        staged::DeviceBuffer<unsigned char> temp(partition::ScanTempBytes(n, k));
        staged::DeviceBuffer<std::uint64_t> counts(k);
        out.FillBytes(0xAB);
        partition::Partition(keys.data(), n, first, d_splitters.data(), k, out.data(),
                             block_counts.data(), temp.data(), temp.size(), counts.data(), nullptr);
        std::vector<std::vector<std::uint32_t>> runs(static_cast<std::size_t>(k));
        for (std::size_t i = 0; i < n; ++i) {
          runs[static_cast<std::size_t>(Bucket(in.keys[i], first + i, splitters.data(), k - 1))]
              .push_back(in.keys[i]);
        }
        const std::vector<std::uint64_t> c = counts.ToHost();
        const std::vector<std::uint32_t> o = out.ToHost();
        std::size_t at = 0;
        for (int d = 0; d < k; ++d) {
          auto& want = runs[static_cast<std::size_t>(d)];
          ASSERT_EQ(c[static_cast<std::size_t>(d)], want.size())
              << in.name << ", n = " << n << ", k = " << k << ", run " << d;
          std::vector<std::uint32_t> run(o.begin() + static_cast<std::ptrdiff_t>(at),
                                         o.begin() + static_cast<std::ptrdiff_t>(at + want.size()));
          std::sort(run.begin(), run.end());
          std::sort(want.begin(), want.end());
          ASSERT_EQ(run, want) << in.name << ", n = " << n << ", k = " << k << ", run " << d;
          at += want.size();
        }
      }
    }
  }
}

class Ch06Cluster : public staged::testing::GpuTest {};

TEST_F(Ch06Cluster, ABadDeviceListIsRefused) {
  int available = 0;
  CUDA_CHECK(cudaGetDeviceCount(&available));
  EXPECT_THROW(Cluster({}), staged::UsageError);
  EXPECT_THROW(Cluster({available}), staged::UsageError);
  EXPECT_THROW(Cluster::FirstGpus(available + 1), staged::UsageError);
  EXPECT_EQ(Cluster::NcclVersion().rfind("NCCL ", 0), 0u);
}

}  // namespace
}  // namespace ch06
