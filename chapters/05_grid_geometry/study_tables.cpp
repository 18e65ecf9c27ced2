/// @file study_tables.cpp
/// @brief Tables 1-4 of Widuch (2010) beside this GPU's medians, and the ratios the paper
///        discusses (host only: the sweep in study.cu measured everything).
#include "chapters/05_grid_geometry/study_tables.hpp"

#include <functional>
#include <optional>
#include <string>

#include "chapters/05_grid_geometry/paper_tables.hpp"

namespace ch05::study {

std::vector<Config> TableColumns(Memory memory) {
  std::vector<Config> cols;
  for (Arrangement arr : {Arrangement::kGrid2d, Arrangement::kGrid1d, Arrangement::kSingle}) {
    for (Shape shape : {Shape::kMxM, Shape::kMx2M}) cols.push_back({arr, shape, memory, 16});
  }
  return cols;
}

namespace {

/// One column of a side-by-side table: a heading and the paper's and our value at each N.
struct Column {
  std::string head;                                 ///< column heading
  std::function<std::optional<double>(int)> paper;  ///< paper's value at N (or none)
  std::function<std::optional<double>(int)> ours;   ///< our value at N (or none)
};

/// Prints one table: N, then the paper's value and ours for each column ("-" where none).
void PrintTable(std::FILE* out, const std::string& title, const std::vector<std::string>& notes,
                const std::vector<int>& ns, const std::vector<Column>& cols, int precision) {
  std::fprintf(out, "\n%s\n", title.c_str());
  for (const auto& note : notes) std::fprintf(out, "  %s\n", note.c_str());
  const int w = 11;
  std::fprintf(out, "%6s |", "N");
  for (const auto& c : cols) std::fprintf(out, "%*s", w, c.head.c_str());
  std::fprintf(out, " |");
  for (const auto& c : cols) std::fprintf(out, "%*s", w, c.head.c_str());
  std::fprintf(out, "\n%6s |%*s |%*s\n", "", static_cast<int>(w * cols.size()), "paper (9600M GT)",
               static_cast<int>(w * cols.size()), "this GPU");
  auto cell = [&](std::optional<double> v) {
    if (v) {
      std::fprintf(out, "%*.*f", w, precision, *v);
    } else {
      std::fprintf(out, "%*s", w, "-");
    }
  };
  for (int n : ns) {
    std::fprintf(out, "%6d |", n);
    for (const auto& c : cols) cell(c.paper ? c.paper(n) : std::nullopt);
    std::fprintf(out, " |");
    for (const auto& c : cols) cell(c.ours(n));
    std::fprintf(out, "\n");
  }
}

/// A cell of the paper's tables: negative entries are cells it left empty.
std::optional<double> PaperCell(double v) {
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

/// Row of the paper's tables for @p n, or -1.
int PaperRow(int n) {
  for (int i = 0; i < ch05::paper::kRows; ++i) {
    if (ch05::paper::kSizes[i] == n) return i;
  }
  return -1;
}

}  // namespace

void PrintPaperTables(std::FILE* out, const Results& res, const std::vector<int>& ns,
                      const TableSelection& tables) {
  namespace pp = ch05::paper;
  const std::vector<std::string> heads = {"2D 16x16", "2D 16x32", "1D 16x16",
                                          "1D 16x32", "1 16x16",  "1 16x32"};
  auto ours = [&res](const Config& cfg) {
    return [&res, name = ch05::VariantName(cfg)](int n) { return res.Get(name, n); };
  };
  auto paper_cell = [](const double(*table)[pp::kColumns], int c) {
    return [table, c](int n) -> std::optional<double> {
      const int r = PaperRow(n);
      return r < 0 ? std::nullopt : PaperCell(table[r][c]);
    };
  };
  auto paper_cpu = [](int n) -> std::optional<double> {
    const int r = PaperRow(n);
    return r < 0 ? std::nullopt : PaperCell(pp::kTable2[r]);
  };
  const std::vector<Config> global = TableColumns(Memory::kGlobal);
  const std::vector<Config> shared = TableColumns(Memory::kShared);
  auto time_columns = [&](const std::vector<Config>& cfgs, const double(*table)[pp::kColumns]) {
    std::vector<Column> cols;
    for (int c = 0; c < pp::kColumns; ++c) {
      cols.push_back({heads[c], paper_cell(table, c), ours(cfgs[c])});
    }
    return cols;
  };
  if (tables.want[1]) {
    PrintTable(out, "Table 1: global memory only, time (ms)",
               {"16x16 = M×M blocks, 16x32 = M×2M blocks (M = 16); 2D = one launch, 1D = one "
                "launch per tile row, 1 = one single-block launch per tile"},
               ns, time_columns(global, pp::kTable1), 2);
  }
  if (tables.want[2]) {
    PrintTable(out,
               "Table 2: CPU, time (ms) (paper: a dot-product triple loop on a Core 2 Duo P8400; "
               "here ch04::cpu::Matmul, i-k-j order, one thread)",
               {}, ns, {{"CPU", paper_cpu, [&res](int n) { return res.Get("cpu", n); }}}, 2);
  }
  if (tables.want[3]) {
    PrintTable(out, "Table 3: shared memory, time (ms)", {}, ns, time_columns(shared, pp::kTable3),
               2);
  }
  if (tables.want[1] && tables.want[3]) {
    std::vector<Column> cols;
    for (int c = 0; c < pp::kColumns; ++c) {
      cols.push_back({heads[c],
                      [=](int n) {
                        return Ratio(paper_cell(pp::kTable1, c)(n), paper_cell(pp::kTable3, c)(n));
                      },
                      [=](int n) { return Ratio(ours(global[c])(n), ours(shared[c])(n)); }});
    }
    PrintTable(out, "Ratio: global / shared time (Table 1 / Table 3; > 1: shared memory wins)",
               {"paper at its largest N: ~1.5 for the single block, ~5 for the 1-D and 2-D grids"},
               ns, cols, 2);
  }
  for (Memory memory : {Memory::kShared, Memory::kGlobal}) {
    if (!tables.want[memory == Memory::kShared ? 3 : 1]) continue;
    const auto& cfgs = memory == Memory::kShared ? shared : global;
    const auto* table = memory == Memory::kShared ? pp::kTable3 : pp::kTable1;
    std::vector<Column> cols;
    const int pairs[4][2] = {{2, 0}, {3, 1}, {4, 0}, {5, 1}};  // 1D/2D and 1/2D per shape
    const char* names[4] = {"1D/2D 16", "1D/2D 32", "1/2D 16", "1/2D 32"};
    for (int i = 0; i < 4; ++i) {
      const int num = pairs[i][0];
      const int den = pairs[i][1];
      cols.push_back(
          {names[i],
           [=](int n) { return Ratio(paper_cell(table, num)(n), paper_cell(table, den)(n)); },
           [=](int n) { return Ratio(ours(cfgs[num])(n), ours(cfgs[den])(n)); }});
    }
    PrintTable(out,
               std::string("Ratio: arrangement, time relative to the 2-D grid (") +
                   (memory == Memory::kShared ? "shared" : "global") + " memory)",
               {"16 = 16x16 blocks, 32 = 16x32 blocks; the paper's 2-D column stops at 960 "
                "(global) / 1760 (shared): its watchdog"},
               ns, cols, 2);
  }
  if (tables.want[1] || tables.want[3]) {
    std::vector<Column> cols;
    const char* names[6] = {"2D glob", "1D glob", "1 glob", "2D shr", "1D shr", "1 shr"};
    for (int i = 0; i < 6; ++i) {
      const bool is_shared = i >= 3;
      if (!tables.want[is_shared ? 3 : 1]) continue;
      const auto& cfgs = is_shared ? shared : global;
      const auto* table = is_shared ? pp::kTable3 : pp::kTable1;
      const int mxm = 2 * (i % 3);
      cols.push_back(
          {names[i],
           [=](int n) { return Ratio(paper_cell(table, mxm)(n), paper_cell(table, mxm + 1)(n)); },
           [=](int n) { return Ratio(ours(cfgs[mxm])(n), ours(cfgs[mxm + 1])(n)); }});
    }
    PrintTable(out, "Ratio: 16x16 time / 16x32 time (> 1: two outputs per thread win)", {}, ns,
               cols, 2);
  }
  if (tables.want[2] && (tables.want[1] || tables.want[3])) {
    for (Memory memory : {Memory::kShared, Memory::kGlobal}) {
      if (!tables.want[memory == Memory::kShared ? 3 : 1]) continue;
      const auto& cfgs = memory == Memory::kShared ? shared : global;
      const auto* table = memory == Memory::kShared ? pp::kTable3 : pp::kTable1;
      std::vector<Column> cols;
      for (int c = 0; c < pp::kColumns; ++c) {
        cols.push_back({heads[c],
                        [=](int n) { return Ratio(paper_cpu(n), paper_cell(table, c)(n)); },
                        [=, &res](int n) { return Ratio(res.Get("cpu", n), ours(cfgs[c])(n)); }});
      }
      PrintTable(out,
                 std::string("Fig. 5 data: speed-up over the CPU (CPU time / GPU time), ") +
                     (memory == Memory::kShared ? "shared" : "global") + " memory",
                 {"paper at N = 6240: 1D 16x32 shared ~19x, 1D 16x16 ~15x, single 16x32 ~5x"}, ns,
                 cols, 2);
    }
  }
  if (tables.want[4]) {
    std::vector<int> ns4;
    for (int n : ns) {
      if (n <= kTable4MaxN || ns.front() < pp::kSizes[0]) ns4.push_back(n);
    }
    auto paper4 = [](int c) {
      return [c](int n) -> std::optional<double> {
        const int r = PaperRow(n);
        return r < 0 || r >= pp::kTable4Rows ? std::nullopt : PaperCell(pp::kTable4[r][c]);
      };
    };
    auto ours4 = [&res](int c) {
      return [&res, c](int n) {
        const int m = ch05::kSupportedM[c];
        return res.Get(
            ch05::VariantName({Arrangement::kSingle, Shape::kMx2M, Memory::kShared, m}, true), n);
      };
    };
    std::vector<Column> times;
    std::vector<Column> steps;
    const char* names[5] = {"1x2", "2x4", "4x8", "8x16", "16x32"};
    const char* step_names[4] = {"1x2/2x4", "2x4/4x8", "4x8/8x16", "8x16/16x32"};
    for (int c = 0; c < pp::kTable4Columns; ++c) times.push_back({names[c], paper4(c), ours4(c)});
    for (int c = 0; c + 1 < pp::kTable4Columns; ++c) {
      steps.push_back({step_names[c], [=](int n) { return Ratio(paper4(c)(n), paper4(c + 1)(n)); },
                       [=](int n) { return Ratio(ours4(c)(n), ours4(c + 1)(n)); }});
    }
    PrintTable(out, "Table 4: single block, shared memory, M×2M blocks, time (ms)",
               {"1x2 = M 1 (2 threads) ... 16x32 = M 16 (512 threads); 16x32 is Table 3's "
                "'1 16x32' column"},
               ns4, times, 2);
    PrintTable(out,
               "Fig. 6 data: speed-up of each block-size step (time of the smaller block / time "
               "of the next one)",
               {"paper: ~6x for 1x2 -> 2x4, ~5x for 2x4 -> 4x8, ~1.1x for 8x16 -> 16x32 (its 32 "
                "cores were already busy)"},
               ns4, steps, 2);
  }
}

}  // namespace ch05::study
