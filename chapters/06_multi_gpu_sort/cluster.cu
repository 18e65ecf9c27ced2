/**
 * @file cluster.cu
 * @brief `Cluster` (NCCL communicators and streams of k GPUs in one process) and `Workspace`.
 */
#include <nccl.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "chapters/03_mppsort/workspace.hpp"
#include "chapters/06_multi_gpu_sort/msort.cuh"
#include "chapters/06_multi_gpu_sort/nccl_check.hpp"
#include "chapters/06_multi_gpu_sort/partition.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"

namespace ch06 {

void CheckNccl(int result, const char* what) {
  if (result != ncclSuccess) {
    throw std::runtime_error(std::string(what) + ": NCCL error: " +
                             ncclGetErrorString(static_cast<ncclResult_t>(result)));
  }
}

Cluster::Cluster(std::vector<int> devices) : devices_(std::move(devices)) {
  int available = 0;
  CUDA_CHECK(cudaGetDeviceCount(&available));
  if (devices_.empty() || size() > kMaxGpus) {
    throw staged::UsageError("a cluster holds 1 to " + std::to_string(kMaxGpus) + " GPUs");
  }
  for (std::size_t i = 0; i < devices_.size(); ++i) {
    if (devices_[i] < 0 || devices_[i] >= available ||
        std::count(devices_.begin(), devices_.end(), devices_[i]) > 1) {
      throw staged::UsageError("GPU " + std::to_string(devices_[i]) + " is not one of this " +
                               "machine's " + std::to_string(available) + ", or is listed twice");
    }
  }
  // NVLink multicast (NVLS) stays off: the exchange is point-to-point and needs none of it.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  std::vector<ncclComm_t> comms(devices_.size());
  CheckNccl(ncclCommInitAll(comms.data(), size(), devices_.data()), "ncclCommInitAll");
  for (std::size_t g = 0; g < devices_.size(); ++g) {
    comms_.push_back(comms[g]);
    CUDA_CHECK(cudaSetDevice(devices_[g]));
    cudaStream_t s = nullptr;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    streams_.push_back(s);
  }
  CUDA_CHECK(cudaSetDevice(devices_[0]));
}

Cluster::~Cluster() {
  for (std::size_t g = 0; g < devices_.size(); ++g) {
    cudaSetDevice(devices_[g]);
    if (g < streams_.size()) cudaStreamDestroy(streams_[g]);
    if (g < comms_.size()) ncclCommDestroy(static_cast<ncclComm_t>(comms_[g]));
  }
  if (!devices_.empty()) cudaSetDevice(devices_[0]);
}

std::vector<int> Cluster::FirstGpus(int k) {
  int available = 0;
  CUDA_CHECK(cudaGetDeviceCount(&available));
  const int want = k == 0 ? std::min(available, kMaxGpus) : k;
  if (want < 1 || want > kMaxGpus || want > available) {
    throw staged::UsageError("--gpus " + std::to_string(k) + ": this machine has " +
                             std::to_string(available) + " GPU(s); a sort spans 1 to " +
                             std::to_string(kMaxGpus));
  }
  std::vector<int> devices(static_cast<std::size_t>(want));
  for (int g = 0; g < want; ++g) devices[static_cast<std::size_t>(g)] = g;
  return devices;
}

void Cluster::Synchronize() const {
  for (int g = 0; g < size(); ++g) {
    CUDA_CHECK(cudaSetDevice(device(g)));
    CUDA_CHECK(cudaStreamSynchronize(stream(g)));
  }
  CUDA_CHECK(cudaSetDevice(device(0)));
}

std::string Cluster::NcclVersion() {
  int v = 0;
  CheckNccl(ncclGetVersion(&v), "ncclGetVersion");
  return "NCCL " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
         std::to_string(v % 100);
}

Workspace::Workspace(const Cluster& cluster, std::size_t capacity) {
  const int k = cluster.size();
  ranks_.resize(static_cast<std::size_t>(k));
  for (int g = 0; g < k; ++g) devices_.push_back(cluster.device(g));
  for (int g = 0; g < k; ++g) {
    CUDA_CHECK(cudaSetDevice(cluster.device(g)));
    Rank& r = rank(g);
    r.sample = staged::DeviceBuffer<Tagged>(kSamplesPerGpu);
    r.splitters = staged::DeviceBuffer<Tagged>(kMaxGpus);
    r.counts = staged::DeviceBuffer<std::uint64_t>(kMaxGpus);
    r.all_counts = staged::DeviceBuffer<std::uint64_t>(kMaxGpus * kMaxGpus);
    r.sort = std::make_unique<ch03::optimized::Workspace>(std::max<std::size_t>(capacity, 1));
    ReserveInput(cluster, g, capacity);
    ReserveOutput(cluster, g, capacity);
  }
  CUDA_CHECK(cudaSetDevice(cluster.device(0)));
}

Workspace::~Workspace() {
  for (std::size_t g = 0; g < ranks_.size(); ++g) {
    cudaSetDevice(devices_[g]);
    ranks_[g] = Rank{};
  }
  if (!devices_.empty()) cudaSetDevice(devices_[0]);
}

void Workspace::ReserveInput(const Cluster& cluster, int g, std::size_t n) {
  Rank& r = rank(g);
  if (n <= r.input_capacity && r.part.size() > 0) return;
  const std::size_t cap = std::max<std::size_t>({n, r.input_capacity, 1});
  CUDA_CHECK(cudaSetDevice(cluster.device(g)));
  CUDA_CHECK(cudaStreamSynchronize(cluster.stream(g)));
  r.part = staged::DeviceBuffer<std::uint32_t>(cap);
  r.block_counts = staged::DeviceBuffer<std::uint64_t>(2 * partition::Blocks(cap) * cluster.size());
  r.scan_temp = staged::DeviceBuffer<unsigned char>(partition::ScanTempBytes(cap, cluster.size()));
  r.input_capacity = cap;
}

void Workspace::ReserveOutput(const Cluster& cluster, int g, std::size_t n) {
  Rank& r = rank(g);
  if (n <= r.output_capacity && r.received.size() > 0) return;
  const std::size_t cap = std::max<std::size_t>({n, r.output_capacity, 1});
  CUDA_CHECK(cudaSetDevice(cluster.device(g)));
  CUDA_CHECK(cudaStreamSynchronize(cluster.stream(g)));
  r.received = staged::DeviceBuffer<std::uint32_t>(cap);
  r.sorted = staged::DeviceBuffer<std::uint32_t>(cap);
  r.output_capacity = cap;
}

}  // namespace ch06
