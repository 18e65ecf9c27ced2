/// @file cli_test.cpp
/// @brief Host tests of the shared command line.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/cli.hpp"
#include "common/errors.hpp"

namespace staged {
namespace {

CommonOptions ParseArgs(Cli& cli, std::vector<std::string> args, std::ostream* help = nullptr) {
  std::vector<const char*> argv = {"prog"};
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream sink;
  return cli.Parse(static_cast<int>(argv.size()), argv.data(), help ? *help : sink);
}

CliDefaults Defaults() {
  CliDefaults d;
  d.n = 1000;
  d.min_n = 1;
  d.max_n = std::uint64_t{1} << 32;
  return d;
}

TEST(ParseSize, AcceptsSuffixesPowersAndExponents) {
  EXPECT_EQ(ParseSize("0"), 0u);
  EXPECT_EQ(ParseSize("1234"), 1234u);
  EXPECT_EQ(ParseSize("4K"), 4096u);
  EXPECT_EQ(ParseSize("4k"), 4096u);
  EXPECT_EQ(ParseSize("16M"), 16u << 20);
  EXPECT_EQ(ParseSize("2G"), 2ull << 30);
  EXPECT_EQ(ParseSize("2^24"), 1u << 24);
  EXPECT_EQ(ParseSize("537e6"), 537000000u);
}

TEST(ParseSize, RejectsMalformedAndOutOfRange) {
  for (const char* bad : {"", "-1", "1.5", "abc", "12Q", "K", "3^4", "2^63", "1e19", "1e", "^2",
                          "99999999999999999999", "4294967297G"}) {
    EXPECT_THROW(ParseSize(bad), UsageError) << bad;
  }
}

TEST(ParseInteger, ChecksRange) {
  EXPECT_EQ(ParseInteger("-5", -10, 10), -5);
  EXPECT_THROW(ParseInteger("11", -10, 10), UsageError);
  EXPECT_THROW(ParseInteger("1x", 0, 10), UsageError);
  EXPECT_THROW(ParseInteger("", 0, 10), UsageError);
}

TEST(Cli, DefaultsWhenNoArguments) {
  Cli cli("prog", "test", Defaults());
  CommonOptions o = ParseArgs(cli, {});
  EXPECT_EQ(o.n, 1000u);
  EXPECT_EQ(o.dist, Distribution::kUniform);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.format, OutputFormat::kTable);
  EXPECT_TRUE(o.verify);
  EXPECT_FALSE(o.help);
}

TEST(Cli, SpaceAndEqualsFormsAgree) {
  Cli a("prog", "test", Defaults());
  Cli b("prog", "test", Defaults());
  CommonOptions x = ParseArgs(a, {"--n", "64K", "--dist", "few", "--seed", "7", "--reps", "5",
                                  "--warmup", "0", "--format", "csv", "--no-verify"});
  CommonOptions y = ParseArgs(b, {"--n=64K", "--dist=few", "--seed=7", "--reps=5", "--warmup=0",
                                  "--format=csv", "--no-verify"});
  for (const CommonOptions& o : {x, y}) {
    EXPECT_EQ(o.n, 65536u);
    EXPECT_EQ(o.dist, Distribution::kFew);
    EXPECT_EQ(o.seed, 7u);
    EXPECT_EQ(o.reps, 5);
    EXPECT_EQ(o.warmup, 0);
    EXPECT_EQ(o.format, OutputFormat::kCsv);
    EXPECT_FALSE(o.verify);
  }
}

TEST(Cli, UsageErrors) {
  const std::vector<std::vector<std::string>> bad = {{"--bogus"},
                                                     {"--n"},
                                                     {"--n", "abc"},
                                                     {"--n", "0"},
                                                     {"--n=8G"},
                                                     {"--dist", "zipf"},
                                                     {"--format", "xml"},
                                                     {"--reps", "0"},
                                                     {"--no-verify=1"},
                                                     {"positional"},
                                                     {"--"},
                                                     {"--seed", "-3"},
                                                     {"--n="},
                                                     {"-n", "5"}};
  for (const auto& args : bad) {
    Cli cli("prog", "test", Defaults());
    EXPECT_THROW(ParseArgs(cli, args), UsageError) << args[0];
  }
}

TEST(Cli, EveryUsageErrorNamesItsFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
      {{"--reps", "0"}, "--reps"},
      {{"--reps", "x"}, "--reps"},
      {{"--seed", "-3"}, "--seed"},
      {{"--seed", "1.5"}, "--seed"},
      {{"--warmup", "-1"}, "--warmup"},
      {{"--cpu-reps", "many"}, "--cpu-reps"},
      {{"--n", "abc"}, "--n"},
      {{"--n=8G"}, "--n"},
      {{"--format", "xml"}, "--format"},
      {{"--dist", "zipf"}, "--dist"},
      {{"--buckets", "1"}, "--buckets"},
      {{"--buckets=ten"}, "--buckets"},
      {{"--k", "0"}, "--k"}};
  for (const auto& [args, flag] : bad) {
    Cli cli("prog", "test", Defaults());
    std::int64_t buckets = 1024;
    std::uint64_t k = 16;
    cli.AddInt("buckets", &buckets, 2, 65536, "bucket count");
    cli.AddSize("k", &k, 1, 1 << 20, "inner dimension");
    try {
      ParseArgs(cli, args);
      ADD_FAILURE() << args[0] << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(flag, 0), 0u)
          << "the message does not start with " << flag << ": " << e.what();
    }
  }
}

TEST(Cli, SizeRangeStartsAtTheSmallestAcceptedSizeAndSaysWhy) {
  CliDefaults d = Defaults();
  d.min_n = 1;
  d.min_n_reason = "0 is refused: the minimum of nothing is undefined";
  Cli cli("prog", "test", d);
  std::ostringstream help;
  ParseArgs(cli, {"--help"}, &help);
  EXPECT_NE(help.str().find("range 1..4G; 0 is refused: the minimum of nothing is undefined"),
            std::string::npos)
      << help.str();
  Cli again("prog", "test", d);
  try {
    ParseArgs(again, {"--n", "0"});
    ADD_FAILURE() << "--n 0 was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the minimum of nothing is undefined"), std::string::npos)
        << e.what();
  }
  // Above the range, the reason for the lower bound is not given.
  Cli big("prog", "test", d);
  try {
    ParseArgs(big, {"--n", "8G"});
    ADD_FAILURE() << "--n 8G was accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).find("nothing"), std::string::npos) << e.what();
    // The range as the help writes it.
    EXPECT_NE(std::string(e.what()).find("[1, 4G]"), std::string::npos) << e.what();
  }
  // A chapter's size flag: its range in the help and in the error, in the same form.
  std::uint64_t w = 0;
  Cli sized("prog", "test", d);
  sized.AddSize("workspace", &w, 0, 64ull << 30, "a size");
  std::ostringstream sized_help;
  ParseArgs(sized, {"--help"}, &sized_help);
  EXPECT_NE(sized_help.str().find("range 0..64G"), std::string::npos) << sized_help.str();
  Cli sized_again("prog", "test", d);
  sized_again.AddSize("workspace", &w, 0, 64ull << 30, "a size");
  try {
    ParseArgs(sized_again, {"--workspace", "128G"});
    ADD_FAILURE() << "--workspace 128G was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("[0, 64G]"), std::string::npos) << e.what();
  }
}

TEST(Cli, HelpPrintsEveryFlagAndExitCodes) {
  CliDefaults d = Defaults();
  Cli cli("prog", "does things", d);
  std::string kernel = "tiled";
  cli.AddChoice("kernel", &kernel, {"tiled", "register"}, "kernel stage");
  std::ostringstream help;
  CommonOptions o = ParseArgs(cli, {"--help"}, &help);
  EXPECT_TRUE(o.help);
  for (const char* word : {"--n", "--dist", "--seed", "--reps", "--warmup", "--format",
                           "--no-verify", "--kernel", "tiled|register", "77"}) {
    EXPECT_NE(help.str().find(word), std::string::npos) << word;
  }
}

TEST(Cli, ChapterFlags) {
  Cli cli("prog", "test", Defaults());
  bool from_stdin = false;
  std::int64_t buckets = 1024;
  std::uint64_t k = 16;
  std::string type = "float";
  cli.AddFlag("stdin", &from_stdin, "read stdin");
  cli.AddInt("buckets", &buckets, 2, 65536, "bucket count");
  cli.AddSize("k", &k, 1, 1 << 20, "inner dimension");
  cli.AddChoice("type", &type, {"float", "double"}, "element type");
  ParseArgs(cli, {"--stdin", "--buckets", "256", "--k=1K", "--type", "double"});
  EXPECT_TRUE(from_stdin);
  EXPECT_EQ(buckets, 256);
  EXPECT_EQ(k, 1024u);
  EXPECT_EQ(type, "double");
  Cli again("prog", "test", Defaults());
  again.AddInt("buckets", &buckets, 2, 65536, "bucket count");
  EXPECT_THROW(ParseArgs(again, {"--buckets", "1"}), UsageError);
  EXPECT_THROW(again.AddInt("buckets", &buckets, 0, 1, "twice"), std::logic_error);
}

TEST(Cli, DistFlagOnlyWhereItApplies) {
  CliDefaults d = Defaults();
  d.has_dist = false;
  Cli cli("prog", "matrices", d);
  EXPECT_THROW(ParseArgs(cli, {"--dist", "uniform"}), UsageError);
}

}  // namespace
}  // namespace staged
