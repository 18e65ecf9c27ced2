/**
 * @file grid_geometry.cuh
 * @brief Chapter 05's contract: integer C = A·B computed by one family of kernels under every
 *        block shape, grid arrangement and memory kind of Widuch (2010), plus the host-side grid
 *        maths, the CUDA Graph / persistent-grid launch modes and the checks.
 *
 * A variant is a `Config`: a block @ref ch05::Shape (M×M threads, one C element each, or M×2M
 * threads, two C elements each), a grid @ref ch05::Arrangement (2-D grid, 1-D grid launched once
 * per tile row, one block launched once per tile), a @ref ch05::Memory kind (operands read from
 * global memory, or staged through shared-memory tiles) and the block parameter M. All matrices
 * are N×N, row-major, `int32_t`, with any N >= 1.
 *
 * @code
 * ch05::Config cfg = ch05::ParseVariant("grid_1d_mx2m_shared");   // M = 16
 * ch05::Matmul(d_a, d_b, d_c, n, cfg, ch05::Launch::kPlain, stream);  // n/32 launches
 * @endcode
 */
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/verify.hpp"

/// Chapter 05: grid geometry and block size.
namespace ch05 {

// snippet-begin: ch05-axes
/// How many C elements a block computes and with how many threads.
enum class Shape {
  kMxM,   ///< M×M threads, one element c(i,j) each: an M×M tile of C
  kMx2M,  ///< 2M (x) × M (y) threads, two elements c(i,j) and c(i+M,j) each: a 2M×2M tile of C
};

/// How the blocks that cover C are launched.
enum class Arrangement {
  kGrid2d,  ///< one launch of a 2-D grid of tiles × tiles blocks
  kGrid1d,  ///< one launch per tile row, each a 1-D grid of `tiles` blocks
  kSingle,  ///< one launch per tile, each of a single block
};

/// Where the threads read A and B from during the dot products.
enum class Memory {
  kGlobal,  ///< every operand read straight from global memory (through L1/L2)
  kShared,  ///< tiles of A and B staged in shared memory, each element loaded once per block
};
// snippet-end: ch05-axes

// snippet-begin: ch05-launch-modes
/// How the launches of one arrangement reach the GPU (beyond the paper).
enum class Launch {
  kPlain,       ///< the paper's loop of `<<<>>>` launches on one stream
  kGraph,       ///< the same loop captured once into a CUDA Graph (serial chain), then replayed
  kGraphFork,   ///< the launches captured on kForkBranches parallel branches (they are independent)
  kPersistent,  ///< one launch whose blocks loop over the tiles the plain loop would launch
};

/// Branches of a `Launch::kGraphFork` capture: the launches are dealt round-robin over them.
inline constexpr int kForkBranches = 32;
// snippet-end: ch05-launch-modes

/// The block parameters M the kernels are instantiated for (the paper's Table 4 uses all five).
inline constexpr int kSupportedM[] = {1, 2, 4, 8, 16};

/// The default M (the paper's Tables 1 and 3).
inline constexpr int kDefaultM = 16;

// snippet-begin: ch05-config
/// One of the chapter's variants.
struct Config {
  Arrangement arrangement = Arrangement::kGrid2d;  ///< grid arrangement
  Shape shape = Shape::kMx2M;                      ///< block shape
  Memory memory = Memory::kShared;                 ///< memory kind
  int m = kDefaultM;                               ///< block parameter M (one of kSupportedM)
};
// snippet-end: ch05-config

/// True when @p m is one of kSupportedM.
bool IsSupportedM(int m);

/// Side of the C tile one block computes: M for M×M, 2M for M×2M.
int TileEdge(const Config& cfg);

/// Threads per block: M² (M×M) or 2M² (M×2M).
int ThreadsPerBlock(const Config& cfg);

/// Block dimensions as launched: (M, M) or (2M, M) (x is the column direction).
dim3 BlockDim(const Config& cfg);

/// Tiles along one side of C: ceil(N / TileEdge). The paper's K = N/M gives K (M×M) or K/2 (M×2M).
std::int64_t TilesPerSide(std::int64_t n, const Config& cfg);

/// Kernel launches a plain run makes: 1 (2-D, up to 65535 tile rows), tiles (1-D), tiles² (single).
std::int64_t LaunchesPerRun(std::int64_t n, const Config& cfg);

/// Blocks per launch: tiles² (2-D), tiles (1-D), 1 (single).
std::int64_t BlocksPerLaunch(std::int64_t n, const Config& cfg);

/// Blocks of a `Launch::kPersistent` run: tiles (1-D: one row of blocks walks down the tile rows),
/// 1 (single: one block walks every tile). The 2-D grid is one launch already and runs its plain
/// launch in every mode, so this returns BlocksPerLaunch for it.
std::int64_t PersistentBlocks(std::int64_t n, const Config& cfg);

/// Integer multiply-adds of one product: N³.
double MultiplyAdds(std::int64_t n);

/// The name of a variant's executable suffix: `grid_2d_mx2m_shared`, or `block_4x8` when
/// @p block_study (single block, shared, M×2M written as M×2M).
std::string VariantName(const Config& cfg, bool block_study = false);

/// The suffix a launch mode adds to a row name: "", "+graph", "+graph_fork", "+persistent".
std::string LaunchSuffix(Launch launch);

/// One entry of the variant table: an executable suffix and its configuration.
struct VariantEntry {
  std::string name;  ///< e.g. `naive`, `grid_1d_mxm_global`, `block_2x4`
  Config config;     ///< what it runs
};

/// Every executable variant of the chapter, in the order the README lists them (19 entries).
const std::vector<VariantEntry>& VariantTable();

/// Looks @p name up in VariantTable(); throws `staged::UsageError` for an unknown name.
/// @param[in] name a variant such as `grid_2d_mx2m_shared`
/// @param[in] m overrides M for the `grid_*`, `naive` and `optimized` variants (0: keep 16);
///              a `block_*` variant fixes its own M
Config ParseVariant(const std::string& name, int m = 0);

/// Elements of @p count values in [-8, 8] drawn from @p seed (small so no sum can overflow:
/// |c| <= 64 N < 2^31 for every N the chapter accepts).
std::vector<std::int32_t> SmallIntMatrix(std::size_t count, std::uint64_t seed);

/// Largest N the chapter accepts (|c| <= 64 N must fit in int32; memory is checked separately).
inline constexpr std::int64_t kMaxN = 1 << 17;

/// Checks @p samples elements of @p c (plus the four corners) against dot products computed on
/// the CPU in 64-bit integers. Deterministic for a given @p seed.
staged::VerifyReport SampleCheck(const std::int32_t* a, const std::int32_t* b,
                                 const std::int32_t* c, std::int64_t n, int samples,
                                 std::uint64_t seed);

/// Runs C = A·B on the device with configuration @p cfg and launch mode @p launch.
/// `Launch::kGraph` and `kGraphFork` capture, instantiate, replay once and destroy the graph
/// (use `GraphMatmul` to replay one graph many times).
/// @param[in] d_a device pointer to A (N×N, row-major)
/// @param[in] d_b device pointer to B
/// @param[out] d_c device pointer to C; every element is written
/// @param[in] n the side N (>= 1)
/// @param[in] cfg the variant
/// @param[in] launch how the launches are issued
/// @param[in] stream the stream the work is queued on
/// @pre `IsSupportedM(cfg.m)`; the three buffers hold N² elements.
void Matmul(const std::int32_t* d_a, const std::int32_t* d_b, std::int32_t* d_c, int n,
            const Config& cfg, Launch launch, cudaStream_t stream);

/// A captured and instantiated CUDA Graph of one arrangement's launch loop, for replay.
class GraphMatmul {
 public:
  /// Captures the launches of `Matmul(…, kPlain)` for these arguments on @p stream (one chain
  /// for `Launch::kGraph`, kForkBranches branches for `Launch::kGraphFork`) and instantiates it.
  /// @pre @p launch is `kGraph` or `kGraphFork`
  GraphMatmul(const std::int32_t* d_a, const std::int32_t* d_b, std::int32_t* d_c, int n,
              const Config& cfg, Launch launch, cudaStream_t stream);
  ~GraphMatmul();
  GraphMatmul(const GraphMatmul&) = delete;
  GraphMatmul& operator=(const GraphMatmul&) = delete;
  /// Queues one replay of the whole graph on @p stream.
  void Replay(cudaStream_t stream);
  /// Kernel nodes in the graph (= LaunchesPerRun).
  std::int64_t nodes() const noexcept { return nodes_; }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  std::int64_t nodes_ = 0;
};

/// Queues @p launches launches of an empty one-thread kernel on @p stream (plain `<<<>>>`).
void EmptyLaunches(int launches, cudaStream_t stream);

/// The same @p launches empty launches captured into a graph, for `Replay`.
class EmptyGraph {
 public:
  /// Captures @p launches empty launches on @p stream and instantiates the graph.
  EmptyGraph(int launches, cudaStream_t stream);
  ~EmptyGraph();
  EmptyGraph(const EmptyGraph&) = delete;
  EmptyGraph& operator=(const EmptyGraph&) = delete;
  /// Queues one replay on @p stream.
  void Replay(cudaStream_t stream);

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace ch05
