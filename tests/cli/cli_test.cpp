// The command line: every subcommand's help, the checks of option values, and
// `--` before exec's program.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/app.hpp"
#include "cli/complete.hpp"

namespace rnicsim::cli {
namespace {

struct Result {
  int rc;
  std::string out, err;
};

Result run(std::vector<std::string> args) {
  std::ostringstream out, err;
  const int rc = run_command_line(std::move(args), out, err);
  return {rc, out.str(), err.str()};
}

TEST(Cli, EverySubcommandHelpExitsZeroAndListsEveryOptionWithItsDefault) {
  CLI::App app;
  std::vector<Action> actions;
  build_app(app, actions, {});
  for (const Command& c : kCommands) {
    const Result r = run({c.name, "--help"});
    EXPECT_EQ(r.rc, 0) << c.name;
    EXPECT_EQ(r.err, "") << c.name;
    for (const CLI::Option* o : app.get_subcommand(c.name)->get_options()) {
      const std::string name = o->nonpositional() ? o->get_lnames().front() : o->get_name();
      EXPECT_NE(r.out.find(name), std::string::npos) << c.name << " --help lacks " << name << ":\n" << r.out;
      // Every option that takes a value and may be left out says its default.
      if (o->get_expected_max() > 0 && !o->get_required()) {
        EXPECT_FALSE(o->get_default_str().empty()) << c.name << ' ' << name;
      }
    }
  }
}

TEST(Cli, HelpListsTypeRangeAndDefault) {
  const Result r = run({"serve", "--help"});
  EXPECT_NE(r.out.find("--idle-exit SECONDS"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<= 4294967295; default 0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--payload-mover on|off"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--log-level trace|debug|info|warn|error|off"), std::string::npos) << r.out;
}

TEST(Cli, LintHelpDoesNotOpenAFile) {
  const Result r = run({"lint", "--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("FILE.pcap"), std::string::npos);
  EXPECT_EQ(r.err, "");
}

// A wrong value exits 2 with a message that names the option and the value.
TEST(Cli, WrongValuesExitTwoNamingTheOption) {
  const std::vector<std::vector<std::string>> bad = {
      {"serve", "--idle-exit", "abc"},     {"serve", "--idle-exit", "-1"},  {"serve", "--idle-exit", "1.5"},
      {"serve", "--idle-exit", "99999999999"}, {"serve", "--dilation", "0"}, {"serve", "--dilation", "nan"},
      {"serve", "--dilation", "1x"},       {"serve", "--payload-mover", "maybe"}, {"serve", "--device-name", ""},
      {"serve", "--log-level", "loud"},    {"run", "f.yaml", "--seed", "x"}, {"run", "f.yaml", "--seed", "18446744073709551616"},
      {"run", "f.yaml", "--sample", "0us"}, {"run", "f.yaml", "--sample", "10"}, {"exec", "--log-level", "x", "--", "true"},
      {"serve", "--clock", "wall"},        {"serve", "--settle", "1001"},   {"serve", "--settle", "-1"},
      {"exec", "--clock", "wall", "--", "true"},
  };
  for (const auto& args : bad) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 2) << args[1] << ' ' << args[2];
    EXPECT_NE(r.err.find(args[0] == "run" ? args[2] + ":" : args[1] + ":"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("got '"), std::string::npos) << r.err;
  }
}

TEST(Cli, UsageErrorsExitTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {}, {"bogus"}, {"run"}, {"run", "a.yaml", "b.yaml"}, {"run", "--bogus", "a.yaml"}, {"run", "a.yaml", "--", "x"},
           {"lint"}, {"plot"}, {"exec", "prog"}, {"exec", "--host", "a"}, {"exec", "--"}}) {
    const Result r = run(args);
    EXPECT_EQ(r.rc, 2) << (args.empty() ? "" : args.front());
    EXPECT_FALSE(r.err.empty());
  }
  EXPECT_NE(run({"bogus"}).err.find("unknown command 'bogus'"), std::string::npos);
}

TEST(Cli, VersionAndTopLevelHelp) {
  EXPECT_EQ(run({"--version"}).out, std::string("rnicsim ") + RNICSIM_VERSION + "\n");
  const Result sub = run({"help", "serve"});
  EXPECT_EQ(sub.rc, 0);
  EXPECT_NE(sub.out.find("--idle-exit"), std::string::npos);
  for (const char* h : {"--help", "-h", "help"}) {
    const Result r = run({h});
    EXPECT_EQ(r.rc, 0);
    for (const Command& c : kCommands)
      EXPECT_EQ(r.out.find(std::string("  ") + c.name + " ") != std::string::npos, !c.hidden) << c.name;
  }
}

// What follows the first `--` is the program: kept word for word, never parsed.
TEST(Cli, ProgramAfterDashDashIsNotParsed) {
  std::vector<std::string> args = {"exec", "--host", "a", "--", "ib_write_bw", "--help", "-d", "x", "--", "--host"};
  const Program p = split_program(args);
  EXPECT_EQ(args, (std::vector<std::string>{"exec", "--host", "a"}));
  EXPECT_EQ(p, (std::vector<std::string>{"ib_write_bw", "--help", "-d", "x", "--", "--host"}));
  std::vector<std::string> none = {"run", "a.yaml"};
  EXPECT_TRUE(split_program(none).empty());
  EXPECT_EQ(none.size(), 2u);
}

// rsh's command is everything after its host, as rsh and ssh take it (mpirun
// passes options of its own daemon there): none of it is parsed.
TEST(Cli, RshCommandFollowsTheHostUnparsed) {
  std::vector<std::string> args = {"rsh", "node1", "orted", "--help", "-mca", "x", "--", "y"};
  const Program p = split_program(args);
  EXPECT_EQ(args, (std::vector<std::string>{"rsh", "node1"}));
  EXPECT_EQ(p, (std::vector<std::string>{"orted", "--help", "-mca", "x", "--", "y"}));
  std::vector<std::string> bare = {"rsh", "node1"};
  EXPECT_TRUE(split_program(bare).empty());
  const Result r = run({"rsh", "node1"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("the command goes after the host"), std::string::npos) << r.err;
}

TEST(Cli, SetIsRepeatableAndTakesOneValueEach) {
  // A second word after --set is the scenario file, not another setting: the
  // file does not exist, so the loader (not the parser) refuses it.
  testing::internal::CaptureStderr();
  const Result r = run({"validate", "--set", "nic.mtu=1024", "missing.yaml", "--set", "seed=3"});
  const std::string loader = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(loader.find("missing.yaml:0:0: cannot open the file"), std::string::npos) << loader;
}

// The completion reads the declarations: options, choices, and --set's paths.
TEST(Completion, OffersWhatTheCommandLineDeclares) {
  CLI::App app;
  std::vector<Action> actions;
  build_app(app, actions, {});
  using V = std::vector<std::string>;
  EXPECT_EQ(completions(app, {"rnicsim", "va"}), V{"validate"});
  EXPECT_EQ(completions(app, {"rnicsim", "lint", "--"}), (V{"--help", "--json"}));
  EXPECT_EQ(completions(app, {"rnicsim", "serve", "--log-level", "e"}), V{"error"});
  EXPECT_EQ(completions(app, {"rnicsim", "run", "--set", "nic.mtu"}), V{"nic.mtu="});
  EXPECT_EQ(completions(app, {"rnicsim", "run", "--set", "=", "nic.mtu"}), V{"nic.mtu="});  // --set=nic.mtu
  EXPECT_EQ(completions(app, {"rnicsim", "run", "--set", "nic.pcie.la"}), (V{"nic.pcie.lanes=", "nic.pcie.latency="}));
  EXPECT_TRUE(completions(app, {"rnicsim", "run", "--set", "nic.bogus"}).empty());
  EXPECT_TRUE(completions(app, {"rnicsim", "exec", "--", "prog", "--"}).empty());
}

}  // namespace
}  // namespace rnicsim::cli
