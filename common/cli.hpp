/**
 * @file cli.hpp
 * @brief The command line shared by every executable, plus chapter-specific flags.
 *
 * Common flags: `--n N`, `--dist D`, `--seed S`, `--reps R`, `--warmup W`, `--cpu-reps R`,
 * `--format table|csv|json`, `--no-verify`, `--help`. Values may follow the flag (`--n 1M`) or be
 * joined with `=` (`--n=1M`). Sizes accept K/M/G (binary: 2^10, 2^20, 2^30), `2^k` and `1e6`.
 * Unknown flags, missing values, malformed or out-of-range numbers throw `UsageError` (exit 2);
 * the message starts with the flag it is about (`--reps: value 0 is out of range [1, 100000]`).
 *
 * @code
 * staged::CliDefaults defaults;
 * defaults.n = 1 << 24;
 * staged::Cli cli("ch01_naive", "Min and max by a shared-memory tree", defaults);
 * std::string type = "float";
 * cli.AddChoice("type", &type, {"float", "double", "int32"}, "element type");
 * staged::CommonOptions opt = cli.Parse(argc, argv);
 * if (opt.help) return 0;   // help was printed
 * @endcode
 */
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "generate.hpp"

namespace staged {

/// The output formats of `--format`.
enum class OutputFormat { kTable, kCsv, kJson };

/// Values of the common flags after parsing.
struct CommonOptions {
  std::uint64_t n = 0;                         ///< problem size (for matrices: the side)
  Distribution dist = Distribution::kUniform;  ///< input distribution
  std::uint64_t seed = 42;                     ///< generator seed
  int reps = 20;                               ///< timed reps per GPU variant
  int warmup = 3;                              ///< untimed warm-up runs
  int cpu_reps = 3;                            ///< timed reps of the CPU reference
  OutputFormat format = OutputFormat::kTable;  ///< report format
  bool verify = true;                          ///< false after `--no-verify`
  bool help = false;                           ///< true when `--help` was given (and printed)
};

/// Per-executable defaults and limits for the common flags.
struct CliDefaults {
  std::uint64_t n = 1 << 20;                     ///< default `--n`
  std::uint64_t min_n = 0;                       ///< smallest accepted `--n`
  std::uint64_t max_n = std::uint64_t{1} << 36;  ///< largest accepted `--n`
  bool has_dist = true;                          ///< whether `--dist` applies
  Distribution dist = Distribution::kUniform;    ///< default `--dist`
  int reps = 20;                                 ///< default `--reps`
  int warmup = 3;                                ///< default `--warmup`
  int cpu_reps = 3;                              ///< default `--cpu-reps`
  /// Why sizes below `min_n` are refused, e.g. "the min/max of 0 elements is undefined"; shown
  /// after the range in `--help` and in the error (empty: nothing to explain).
  std::string min_n_reason;
};

/// Parses a size: digits with an optional K/M/G suffix (powers of two), `2^k`, or `Ae B`
/// (`537e6`). Throws `UsageError` for anything else or for values over 2^62.
std::uint64_t ParseSize(const std::string& text);

/// Parses a signed decimal integer in [@p min, @p max]; throws `UsageError` otherwise.
std::int64_t ParseInteger(const std::string& text, std::int64_t min, std::int64_t max);

/// Declares the flags of one executable and parses its command line.
class Cli {
 public:
  /// @param[in] program executable name, for `--help`
  /// @param[in] description one line saying what it runs
  /// @param[in] defaults defaults and limits of the common flags
  Cli(std::string program, std::string description, CliDefaults defaults);

  /// A boolean switch, `--name` (no value).
  void AddFlag(const std::string& name, bool* value, const std::string& help);
  /// An integer flag in [@p min, @p max].
  void AddInt(const std::string& name, std::int64_t* value, std::int64_t min, std::int64_t max,
              const std::string& help);
  /// A size flag (suffixes as `--n`) in [@p min, @p max].
  void AddSize(const std::string& name, std::uint64_t* value, std::uint64_t min, std::uint64_t max,
               const std::string& help);
  /// A word from a fixed list.
  void AddChoice(const std::string& name, std::string* value, std::vector<std::string> choices,
                 const std::string& help);

  /// Parses @p argv. On `--help` prints the help to @p help_out and returns with `help` set.
  /// Throws `UsageError` for anything it cannot accept.
  CommonOptions Parse(int argc, const char* const* argv, std::ostream& help_out);
  /// Same, printing help to stdout.
  CommonOptions Parse(int argc, const char* const* argv);

  /// The full `--help` text.
  std::string Help() const;

 private:
  // Kept off the class's page (which would list it with no section to go to).
  /// @cond
  struct Option {
    std::string name;
    std::string metavar;  // empty for switches
    std::string help;
    std::function<void(const std::string&)> set;
  };
  /// @endcond
  void Add(Option option);
  const Option* Find(const std::string& name) const;

  std::string program_;
  std::string description_;
  CliDefaults defaults_;
  CommonOptions parsed_;
  std::vector<Option> common_;
  std::vector<Option> chapter_;
};

}  // namespace staged
