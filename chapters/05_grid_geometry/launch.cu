/**
 * @file launch.cu
 * @brief The grid arrangements as host loops (2-D grid, 1-D grid per tile row, single block per
 *        tile), the persistent alternative, and their capture into CUDA Graphs.
 */
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "chapters/05_grid_geometry/kernels.cuh"
#include "common/cuda_check.hpp"
#include "common/errors.hpp"
#include "common/stream.hpp"

namespace ch05 {
namespace {

constexpr int kMaxGridY = 65535;

detail::KernelSet RequireKernels(const Config& cfg) {
  const detail::KernelSet k = detail::PickKernels(cfg);
  if (k.tile == nullptr) {
    throw staged::UsageError("M = " + std::to_string(cfg.m) + " is not one of 1, 2, 4, 8, 16");
  }
  return k;
}

/// Calls @p launch(i, grid, tile_x0, tile_y0) for the i-th launch of a plain run: this loop is
/// the arrangement (the paper's three host loops in one place).
// snippet-begin: ch05-for-each-launch
template <typename LaunchFn>
void ForEachLaunch(int n, const Config& cfg, LaunchFn&& launch) {
  const int tiles = static_cast<int>(TilesPerSide(n, cfg));
  switch (cfg.arrangement) {
    case Arrangement::kGrid2d:
      // One launch; a grid taller than gridDim.y allows continues in a second launch.
      for (std::int64_t y0 = 0, i = 0; y0 < tiles; y0 += kMaxGridY, ++i) {
        launch(i, dim3(tiles, static_cast<unsigned>(std::min<std::int64_t>(kMaxGridY, tiles - y0))),
               0, static_cast<int>(y0));
      }
      break;
    case Arrangement::kGrid1d:
      // N/(2M) launches for M×2M: launch y computes tile row y.
      for (int y = 0; y < tiles; ++y) launch(y, dim3(tiles), 0, y);
      break;
    case Arrangement::kSingle:
      // (N/(2M))² launches for M×2M: one block per tile, rows outer as in the paper.
      for (std::int64_t y = 0, i = 0; y < tiles; ++y) {
        for (int x = 0; x < tiles; ++x, ++i) launch(i, dim3(1), x, static_cast<int>(y));
      }
      break;
  }
}
// snippet-end: ch05-for-each-launch

// snippet-begin: ch05-launch-plain
void LaunchPlain(const std::int32_t* d_a, const std::int32_t* d_b, std::int32_t* d_c, int n,
                 const Config& cfg, cudaStream_t stream) {
  const detail::KernelSet k = RequireKernels(cfg);
  const dim3 block = BlockDim(cfg);
  ForEachLaunch(n, cfg, [&](std::int64_t, dim3 grid, int x0, int y0) {
    k.tile<<<grid, block, 0, stream>>>(d_a, d_b, d_c, n, x0, y0);
    CUDA_CHECK_LAST_LAUNCH();
  });
}
// snippet-end: ch05-launch-plain

void LaunchPersistent(const std::int32_t* d_a, const std::int32_t* d_b, std::int32_t* d_c, int n,
                      const Config& cfg, cudaStream_t stream) {
  if (cfg.arrangement == Arrangement::kGrid2d) {
    LaunchPlain(d_a, d_b, d_c, n, cfg, stream);  // already one launch
    return;
  }
  const detail::KernelSet k = RequireKernels(cfg);
  const int tiles = static_cast<int>(TilesPerSide(n, cfg));
  const auto blocks = static_cast<unsigned>(PersistentBlocks(n, cfg));
  k.persistent<<<blocks, BlockDim(cfg), 0, stream>>>(d_a, d_b, d_c, n, tiles);
  CUDA_CHECK_LAST_LAUNCH();
}

void CheckArguments(int n, const Config& cfg) {
  if (n < 1 || n > kMaxN) {
    throw staged::UsageError("chapter 05 needs 1 <= N <= " + std::to_string(kMaxN) + ", got " +
                             std::to_string(n));
  }
  RequireKernels(cfg);
}

/// Ends a capture begun on @p stream and instantiates it; on failure nothing leaks.
void EndCapture(cudaStream_t stream, cudaGraph_t* graph, cudaGraphExec_t* exec) {
  CUDA_CHECK(cudaStreamEndCapture(stream, graph));
  CUDA_CHECK(cudaGraphInstantiate(exec, *graph, 0));
}

/// Ends a capture that failed half-way so the stream is usable again; never throws.
void AbandonCapture(cudaStream_t stream) noexcept {
  cudaGraph_t partial = nullptr;
  if (CUDA_CHECK_NOTHROW(cudaStreamEndCapture(stream, &partial)) && partial != nullptr) {
    CUDA_CHECK_NOTHROW(cudaGraphDestroy(partial));
  }
}

}  // namespace

void Matmul(const std::int32_t* d_a, const std::int32_t* d_b, std::int32_t* d_c, int n,
            const Config& cfg, Launch launch, cudaStream_t stream) {
  CheckArguments(n, cfg);
  switch (launch) {
    case Launch::kPlain:
      LaunchPlain(d_a, d_b, d_c, n, cfg, stream);
      return;
    case Launch::kPersistent:
      LaunchPersistent(d_a, d_b, d_c, n, cfg, stream);
      return;
    case Launch::kGraph:
    case Launch::kGraphFork: {
      GraphMatmul graph(d_a, d_b, d_c, n, cfg, launch, stream);
      graph.Replay(stream);
      // The executable graph is destroyed on return: wait until its replay is done.
      CUDA_CHECK(cudaStreamSynchronize(stream));
      return;
    }
  }
}

GraphMatmul::GraphMatmul(const std::int32_t* d_a, const std::int32_t* d_b, std::int32_t* d_c, int n,
                         const Config& cfg, Launch launch, cudaStream_t stream) {
  CheckArguments(n, cfg);
  if (launch != Launch::kGraph && launch != Launch::kGraphFork) {
    throw std::invalid_argument("GraphMatmul needs Launch::kGraph or Launch::kGraphFork");
  }
  const detail::KernelSet k = RequireKernels(cfg);
  const dim3 block = BlockDim(cfg);
  // snippet-begin: ch05-graph-capture
  const int branches = launch == Launch::kGraphFork ? kForkBranches : 1;
  // Side streams and events exist before the capture starts (creating them is not captured).
  std::vector<staged::Stream> side(branches > 1 ? branches : 0);
  std::vector<staged::Event> joins(side.size());
  staged::Event fork;
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    if (branches > 1) {
      // Every branch waits on the fork point, which pulls it into this capture.
      fork.Record(stream);
      for (auto& s : side) CUDA_CHECK(cudaStreamWaitEvent(s.get(), fork.get(), 0));
    }
    ForEachLaunch(n, cfg, [&](std::int64_t i, dim3 grid, int x0, int y0) {
      // The launches write disjoint tiles of C, so dealing them over branches is legal; with
      // one branch the graph keeps the plain loop's serial order.
      cudaStream_t s = branches > 1 ? side[i % branches].get() : stream;
      k.tile<<<grid, block, 0, s>>>(d_a, d_b, d_c, n, x0, y0);
      CUDA_CHECK_LAST_LAUNCH();
      ++nodes_;
    });
    for (std::size_t b = 0; b < side.size(); ++b) {
      joins[b].Record(side[b].get());
      CUDA_CHECK(cudaStreamWaitEvent(stream, joins[b].get(), 0));
    }
    EndCapture(stream, &graph_, &exec_);
  } catch (...) {
    if (graph_ == nullptr) AbandonCapture(stream);
    if (graph_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
    throw;
  }
  // snippet-end: ch05-graph-capture
}

GraphMatmul::~GraphMatmul() {
  if (exec_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
  if (graph_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
}

void GraphMatmul::Replay(cudaStream_t stream) { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

// snippet-begin: ch05-empty-launches
void EmptyLaunches(int launches, cudaStream_t stream) {
  for (int i = 0; i < launches; ++i) {
    detail::EmptyKernel<<<1, 1, 0, stream>>>();
    CUDA_CHECK_LAST_LAUNCH();
  }
}
// snippet-end: ch05-empty-launches

EmptyGraph::EmptyGraph(int launches, cudaStream_t stream) {
  CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    EmptyLaunches(launches, stream);
    EndCapture(stream, &graph_, &exec_);
  } catch (...) {
    if (graph_ == nullptr) AbandonCapture(stream);
    if (graph_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
    throw;
  }
}

EmptyGraph::~EmptyGraph() {
  if (exec_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
  if (graph_ != nullptr) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
}

void EmptyGraph::Replay(cudaStream_t stream) { CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

}  // namespace ch05
