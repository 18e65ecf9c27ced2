/// @file cli.cpp
/// @brief Command-line parsing shared by every executable.
#include "cli.hpp"

#include <cctype>
#include <iostream>
#include <limits>
#include <sstream>
#include <utility>

#include "errors.hpp"

namespace staged {

namespace {
constexpr std::uint64_t kMaxSize = std::uint64_t{1} << 62;

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::uint64_t DigitsOrThrow(const std::string& digits, const std::string& whole) {
  if (!AllDigits(digits) || digits.size() > 19) {
    throw UsageError("'" + whole + "' is not a size (try 1000, 64K, 16M, 1G, 2^24 or 537e6)");
  }
  return std::stoull(digits);
}

std::uint64_t CheckedMul(std::uint64_t a, std::uint64_t b, const std::string& whole) {
  if (a != 0 && b > kMaxSize / a) throw UsageError("size '" + whole + "' is out of range");
  return a * b;
}

std::string Join(const std::vector<std::string>& words, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) out += (i ? sep : "") + words[i];
  return out;
}

std::string ShowSize(std::uint64_t v) {
  const char* suffix[] = {"", "K", "M", "G"};
  int k = 0;
  while (k < 3 && v != 0 && v % 1024 == 0) {
    v /= 1024;
    ++k;
  }
  return std::to_string(v) + suffix[k];
}
}  // namespace

std::uint64_t ParseSize(const std::string& text) {
  if (text.empty()) throw UsageError("empty size");
  const auto caret = text.find('^');
  if (caret != std::string::npos) {
    const std::uint64_t base = DigitsOrThrow(text.substr(0, caret), text);
    const std::uint64_t exp = DigitsOrThrow(text.substr(caret + 1), text);
    if (base != 2 || exp > 62) throw UsageError("size '" + text + "': only 2^0 .. 2^62 accepted");
    return std::uint64_t{1} << exp;
  }
  const auto e = text.find_first_of("eE");
  if (e != std::string::npos) {
    std::uint64_t v = DigitsOrThrow(text.substr(0, e), text);
    const std::uint64_t exp = DigitsOrThrow(text.substr(e + 1), text);
    if (exp > 18) throw UsageError("size '" + text + "' is out of range");
    for (std::uint64_t i = 0; i < exp; ++i) v = CheckedMul(v, 10, text);
    return v;
  }
  std::uint64_t scale = 1;
  std::string digits = text;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K':
      scale = 1ull << 10;
      digits.pop_back();
      break;
    case 'M':
      scale = 1ull << 20;
      digits.pop_back();
      break;
    case 'G':
      scale = 1ull << 30;
      digits.pop_back();
      break;
    default:
      break;
  }
  const std::uint64_t v = CheckedMul(DigitsOrThrow(digits, text), scale, text);
  if (v > kMaxSize) throw UsageError("size '" + text + "' is out of range");
  return v;
}

std::int64_t ParseInteger(const std::string& text, std::int64_t min, std::int64_t max) {
  const bool negative = !text.empty() && text[0] == '-';
  const std::string digits = negative ? text.substr(1) : text;
  if (!AllDigits(digits) || digits.size() > 18) {
    throw UsageError("'" + text + "' is not an integer");
  }
  const std::int64_t v = negative ? -std::stoll(digits) : std::stoll(digits);
  if (v < min || v > max) {
    throw UsageError("value " + text + " is out of range [" + std::to_string(min) + ", " +
                     std::to_string(max) + "]");
  }
  return v;
}

Cli::Cli(std::string program, std::string description, CliDefaults defaults)
    : program_(std::move(program)), description_(std::move(description)), defaults_(defaults) {
  parsed_.n = defaults_.n;
  parsed_.dist = defaults_.dist;
  parsed_.reps = defaults_.reps;
  parsed_.warmup = defaults_.warmup;
  parsed_.cpu_reps = defaults_.cpu_reps;
  const std::string reason = defaults_.min_n_reason.empty() ? "" : "; " + defaults_.min_n_reason;
  auto size_help = "problem size (default " + ShowSize(defaults_.n) + ", range " +
                   ShowSize(defaults_.min_n) + ".." + ShowSize(defaults_.max_n) + reason +
                   "); K/M/G = 2^10/2^20/2^30, also 2^k and 537e6";
  common_.push_back({"n", "N", size_help, [this, reason](const std::string& v) {
                       const std::uint64_t n = ParseSize(v);
                       if (n < defaults_.min_n || n > defaults_.max_n) {
                         // The range as the help writes it (64G, not 68719476736).
                         throw UsageError(
                             "--n " + v + " is out of range [" + ShowSize(defaults_.min_n) + ", " +
                             ShowSize(defaults_.max_n) + "]" + (n < defaults_.min_n ? reason : ""));
                       }
                       parsed_.n = n;
                     }});
  if (defaults_.has_dist) {
    common_.push_back({"dist", "D",
                       "input distribution: uniform|sorted|reverse|equal|few|skewed (default " +
                           DistributionName(defaults_.dist) + ")",
                       [this](const std::string& v) { parsed_.dist = ParseDistribution(v); }});
  }
  common_.push_back({"seed", "S", "generator seed (default 42); the same seed gives the same data",
                     [this](const std::string& v) {
                       parsed_.seed = static_cast<std::uint64_t>(
                           ParseInteger(v, 0, std::numeric_limits<std::int64_t>::max()));
                     }});
  common_.push_back(
      {"reps", "R",
       "timed repetitions per GPU variant (default " + std::to_string(defaults_.reps) + ")",
       [this](const std::string& v) {
         parsed_.reps = static_cast<int>(ParseInteger(v, 1, 100000));
       }});
  common_.push_back({"warmup", "W",
                     "untimed warm-up runs (default " + std::to_string(defaults_.warmup) + ")",
                     [this](const std::string& v) {
                       parsed_.warmup = static_cast<int>(ParseInteger(v, 0, 100000));
                     }});
  common_.push_back({"cpu-reps", "R",
                     "timed repetitions of the CPU reference (default " +
                         std::to_string(defaults_.cpu_reps) + "; 0 = not timed)",
                     [this](const std::string& v) {
                       parsed_.cpu_reps = static_cast<int>(ParseInteger(v, 0, 100000));
                     }});
  common_.push_back({"format", "F", "report format: table|csv|json (default table)",
                     [this](const std::string& v) {
                       if (v == "table")
                         parsed_.format = OutputFormat::kTable;
                       else if (v == "csv")
                         parsed_.format = OutputFormat::kCsv;
                       else if (v == "json")
                         parsed_.format = OutputFormat::kJson;
                       else
                         throw UsageError("unknown format '" + v + "' (table, csv or json)");
                     }});
  common_.push_back({"no-verify", "", "skip verification (rows then say verified: skipped)",
                     [this](const std::string&) { parsed_.verify = false; }});
  common_.push_back({"help", "", "print this help and exit 0",
                     [this](const std::string&) { parsed_.help = true; }});
}

void Cli::Add(Option option) {
  if (Find(option.name) != nullptr) {
    throw std::logic_error("flag --" + option.name + " declared twice");
  }
  chapter_.push_back(std::move(option));
}

void Cli::AddFlag(const std::string& name, bool* value, const std::string& help) {
  Add({name, "", help, [value](const std::string&) { *value = true; }});
}

void Cli::AddInt(const std::string& name, std::int64_t* value, std::int64_t min, std::int64_t max,
                 const std::string& help) {
  Add({name, "I", help + " (default " + std::to_string(*value) + ")",
       [=](const std::string& v) { *value = ParseInteger(v, min, max); }});
}

void Cli::AddSize(const std::string& name, std::uint64_t* value, std::uint64_t min,
                  std::uint64_t max, const std::string& help) {
  Add({name, "N",
       help + " (default " + ShowSize(*value) + ", range " + ShowSize(min) + ".." + ShowSize(max) +
           ")",
       [=](const std::string& v) {
         const std::uint64_t s = ParseSize(v);
         if (s < min || s > max) {
           throw UsageError("--" + name + " " + v + " is out of range [" + ShowSize(min) + ", " +
                            ShowSize(max) + "]");
         }
         *value = s;
       }});
}

void Cli::AddChoice(const std::string& name, std::string* value, std::vector<std::string> choices,
                    const std::string& help) {
  const std::string list = Join(choices, "|");
  Add({name, "W", help + ": " + list + " (default " + *value + ")", [=](const std::string& v) {
         for (const auto& c : choices) {
           if (c == v) {
             *value = v;
             return;
           }
         }
         throw UsageError("--" + name + ": unknown value '" + v + "' (expected " + list + ")");
       }});
}

const Cli::Option* Cli::Find(const std::string& name) const {
  for (const auto* list : {&common_, &chapter_}) {
    for (const auto& o : *list) {
      if (o.name == name) return &o;
    }
  }
  return nullptr;
}

CommonOptions Cli::Parse(int argc, const char* const* argv) { return Parse(argc, argv, std::cout); }

CommonOptions Cli::Parse(int argc, const char* const* argv, std::ostream& help_out) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h") arg = "--help";
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      throw UsageError("unexpected argument '" + arg + "' (options start with --; see --help)");
    }
    std::string name = arg.substr(2);
    std::string value;
    bool has_value = false;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    const Option* opt = Find(name);
    if (opt == nullptr) throw UsageError("unknown option --" + name + " (see --help)");
    if (opt->metavar.empty()) {
      if (has_value) throw UsageError("option --" + name + " takes no value");
    } else if (!has_value) {
      if (i + 1 >= argc) throw UsageError("option --" + name + " needs a value");
      value = argv[++i];
    }
    if (!opt->metavar.empty() && value.empty()) {
      throw UsageError("option --" + name + " needs a non-empty value");
    }
    try {
      opt->set(value);
    } catch (const UsageError& e) {
      // Every message names its flag, whichever parser raised it.
      const std::string flag = "--" + name;
      const std::string what = e.what();
      if (what.rfind(flag, 0) == 0) throw;
      throw UsageError(flag + ": " + what);
    }
  }
  if (parsed_.help) help_out << Help();
  return parsed_;
}

std::string Cli::Help() const {
  std::ostringstream os;
  os << program_ << ": " << description_ << "\n\nUsage: " << program_ << " [options]\n";
  auto list = [&os](const char* title, const std::vector<Option>& options) {
    if (options.empty()) return;
    os << "\n" << title << ":\n";
    for (const auto& o : options) {
      std::string left = "  --" + o.name + (o.metavar.empty() ? "" : " " + o.metavar);
      if (left.size() < 24)
        left.resize(24, ' ');
      else
        left += "  ";
      os << left << o.help << "\n";
    }
  };
  list("Chapter options", chapter_);
  list("Common options", common_);
  os << "\nExit codes: 0 ran and verified, 1 verification failed, 2 bad usage or input,\n"
        "            3 CUDA error, 77 no usable GPU.\n";
  return os.str();
}

}  // namespace staged
