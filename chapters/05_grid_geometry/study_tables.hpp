/**
 * @file study_tables.hpp
 * @brief The paper's side of `ch05_study`: the columns of Widuch's Tables 1-4 and the printing
 *        of each table beside the paper's figures, with the ratios the paper discusses.
 */
#pragma once

#include <cstdio>
#include <vector>

#include "chapters/05_grid_geometry/grid_geometry.cuh"
#include "chapters/05_grid_geometry/study_results.hpp"

namespace ch05::study {

/// Table 4 (block sizes) stops at this N in the paper.
inline constexpr int kTable4MaxN = 1600;

/// Which of the paper's tables a run makes: `want[1]` ... `want[4]` (`want[0]` unused).
struct TableSelection {
  bool want[5] = {false, true, true, true, true};  ///< indexed by table number
};

/// The six columns of Tables 1 (global) and 3 (shared) for @p memory, in the paper's order:
/// 2-D M×M, 2-D M×2M, 1-D M×M, 1-D M×2M, single M×M, single M×2M (M = 16).
/// @param[in] memory the table's memory kind
std::vector<Config> TableColumns(Memory memory);

/// Prints the selected tables (this GPU beside the paper's 9600M GT), then the ratios the paper
/// discusses: global/shared, each arrangement against the 2-D grid, M×M against M×2M, the
/// speed-up over the CPU (Fig. 5) and over the next smaller block (Fig. 6).
/// @param[in] out where to print
/// @param[in] res the medians measured by the sweep (row names as `VariantName`, and `cpu`)
/// @param[in] ns the sweep's N, ascending
/// @param[in] tables which tables were run
void PrintPaperTables(std::FILE* out, const Results& res, const std::vector<int>& ns,
                      const TableSelection& tables);

}  // namespace ch05::study
