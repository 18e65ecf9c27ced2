/// @file geometry.cpp
/// @brief Host-only part of chapter 05: grid maths per arrangement, the variant table, input
///        generation and the sampled CPU check.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "common/errors.hpp"
#include "common/generate.hpp"

namespace ch05 {

namespace {
// gridDim.y is limited to 65535: a 2-D grid taller than that is launched in chunks of rows.
constexpr std::int64_t kMaxGridY = 65535;
}  // namespace

bool IsSupportedM(int m) {
  return std::find(std::begin(kSupportedM), std::end(kSupportedM), m) != std::end(kSupportedM);
}

int TileEdge(const Config& cfg) { return cfg.shape == Shape::kMxM ? cfg.m : 2 * cfg.m; }

int ThreadsPerBlock(const Config& cfg) {
  return cfg.shape == Shape::kMxM ? cfg.m * cfg.m : 2 * cfg.m * cfg.m;
}

dim3 BlockDim(const Config& cfg) {
  return cfg.shape == Shape::kMxM ? dim3(cfg.m, cfg.m) : dim3(2 * cfg.m, cfg.m);
}

std::int64_t TilesPerSide(std::int64_t n, const Config& cfg) {
  const std::int64_t edge = TileEdge(cfg);
  return (n + edge - 1) / edge;
}

std::int64_t LaunchesPerRun(std::int64_t n, const Config& cfg) {
  const std::int64_t tiles = TilesPerSide(n, cfg);
  switch (cfg.arrangement) {
    case Arrangement::kGrid2d:
      return (tiles + kMaxGridY - 1) / kMaxGridY;
    case Arrangement::kGrid1d:
      return tiles;
    case Arrangement::kSingle:
      return tiles * tiles;
  }
  return 0;
}

std::int64_t BlocksPerLaunch(std::int64_t n, const Config& cfg) {
  const std::int64_t tiles = TilesPerSide(n, cfg);
  switch (cfg.arrangement) {
    case Arrangement::kGrid2d:
      return tiles * std::min(tiles, kMaxGridY);
    case Arrangement::kGrid1d:
      return tiles;
    case Arrangement::kSingle:
      return 1;
  }
  return 0;
}

std::int64_t PersistentBlocks(std::int64_t n, const Config& cfg) {
  return cfg.arrangement == Arrangement::kSingle ? 1 : BlocksPerLaunch(n, cfg);
}

double MultiplyAdds(std::int64_t n) {
  return static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
}

std::string VariantName(const Config& cfg, bool block_study) {
  if (block_study) return "block_" + std::to_string(cfg.m) + "x" + std::to_string(2 * cfg.m);
  std::string name = "grid_";
  switch (cfg.arrangement) {
    case Arrangement::kGrid2d:
      name += "2d";
      break;
    case Arrangement::kGrid1d:
      name += "1d";
      break;
    case Arrangement::kSingle:
      name += "single";
      break;
  }
  name += cfg.shape == Shape::kMxM ? "_mxm" : "_mx2m";
  name += cfg.memory == Memory::kGlobal ? "_global" : "_shared";
  return name;
}

std::string LaunchSuffix(Launch launch) {
  switch (launch) {
    case Launch::kPlain:
      return "";
    case Launch::kGraph:
      return "+graph";
    case Launch::kGraphFork:
      return "+graph_fork";
    case Launch::kPersistent:
      return "+persistent";
  }
  return "";
}

const std::vector<VariantEntry>& VariantTable() {
  static const std::vector<VariantEntry> table = [] {
    std::vector<VariantEntry> t;
    t.push_back({"naive", {Arrangement::kSingle, Shape::kMxM, Memory::kGlobal, kDefaultM}});
    t.push_back({"optimized", {Arrangement::kGrid2d, Shape::kMx2M, Memory::kShared, kDefaultM}});
    for (Arrangement arr : {Arrangement::kGrid2d, Arrangement::kGrid1d, Arrangement::kSingle}) {
      for (Shape shape : {Shape::kMxM, Shape::kMx2M}) {
        for (Memory mem : {Memory::kGlobal, Memory::kShared}) {
          const Config cfg{arr, shape, mem, kDefaultM};
          t.push_back({VariantName(cfg), cfg});
        }
      }
    }
    for (int m : kSupportedM) {
      const Config cfg{Arrangement::kSingle, Shape::kMx2M, Memory::kShared, m};
      t.push_back({VariantName(cfg, true), cfg});
    }
    return t;
  }();
  return table;
}

Config ParseVariant(const std::string& name, int m) {
  for (const auto& entry : VariantTable()) {
    if (entry.name != name) continue;
    Config cfg = entry.config;
    if (m != 0 && name.rfind("block_", 0) != 0) {
      if (!IsSupportedM(m)) {
        throw staged::UsageError("--m " + std::to_string(m) + " is not one of 1, 2, 4, 8, 16");
      }
      cfg.m = m;
    }
    return cfg;
  }
  throw staged::UsageError("unknown chapter 05 variant '" + name + "'");
}

std::vector<std::int32_t> SmallIntMatrix(std::size_t count, std::uint64_t seed) {
  std::vector<std::int32_t> v =
      staged::Generate<std::int32_t>(count, staged::Distribution::kUniform, seed);
  // 17 values, -8..8: products are at most 64 in magnitude, sums at most 64·N.
  for (auto& x : v) x = static_cast<std::int32_t>(static_cast<std::uint32_t>(x) % 17u) - 8;
  return v;
}

staged::VerifyReport SampleCheck(const std::int32_t* a, const std::int32_t* b,
                                 const std::int32_t* c, std::int64_t n, int samples,
                                 std::uint64_t seed) {
  staged::VerifyReport report;
  if (n <= 0) return report;
  std::vector<std::int64_t> where = {0, n - 1, (n - 1) * n, n * n - 1};  // the four corners
  for (int s = 0; s < samples; ++s) {
    where.push_back(static_cast<std::int64_t>(staged::SplitMix64(seed + s) %
                                              static_cast<std::uint64_t>(n * n)));
  }
  for (std::int64_t idx : where) {
    const std::int64_t i = idx / n;
    const std::int64_t j = idx % n;
    std::int64_t sum = 0;
    for (std::int64_t k = 0; k < n; ++k) sum += std::int64_t{a[i * n + k]} * b[k * n + j];
    const auto expected = static_cast<std::int32_t>(sum);
    ++report.checked;
    if (c[idx] != expected) {
      report.ok = false;
      ++report.mismatches;
      if (report.first.size() < staged::kListedMismatches) {
        report.first.push_back(
            {static_cast<std::size_t>(idx), std::to_string(expected), std::to_string(c[idx])});
      }
    }
  }
  if (!report.ok) report.note = "sampled CPU dot products differ";
  return report;
}

}  // namespace ch05
