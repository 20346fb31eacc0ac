// The subcommands of rnicsim. Each add_* declares its options and positionals on
// its own CLI::App (so `rnicsim SUB --help` lists them) and returns what it does
// once they are parsed. `program` is what followed `--` on the command line:
// only exec (and the completion) take one, and nothing in it is parsed.
#pragma once

#include <string>
#include <vector>

#include "cli/options.hpp"

namespace rnicsim::cli {

using Program = std::vector<std::string>;

Action add_run(CLI::App& sub, const Program& program);       // scenario_commands.cpp
Action add_validate(CLI::App& sub, const Program& program);
Action add_params(CLI::App& sub, const Program& program);
Action add_lint(CLI::App& sub, const Program& program);      // analysis_commands.cpp
Action add_plot(CLI::App& sub, const Program& program);
Action add_serve(CLI::App& sub, const Program& program);     // emulation_commands.cpp
Action add_exec(CLI::App& sub, const Program& program);
Action add_complete(CLI::App& sub, const Program& program);  // complete.cpp

struct Command {
  const char* name;
  const char* summary;
  Action (*add)(CLI::App& sub, const Program& program);
  bool takes_program;  // `-- PROGRAM ARGS` after the options
  bool hidden;         // not listed by `rnicsim --help`
};

// Every subcommand, in the order `rnicsim --help` lists them.
inline constexpr Command kCommands[] = {
    {"run", "run a scenario in simulated time", add_run, false, false},
    {"validate", "check a scenario without running it", add_validate, false, false},
    {"params", "list every scenario parameter with its unit, default and range", add_params, false, false},
    {"lint", "check a RoCEv2 or InfiniBand capture", add_lint, false, false},
    {"plot", "PNG figures of a run's --out directory", add_plot, false, false},
    {"serve", "run the NICs in real time for programs on the shim", add_serve, false, false},
    {"exec", "run an unmodified RDMA program on the shim: rnicsim exec [OPTIONS] -- PROGRAM ARGS", add_exec, true,
     false},
    {"complete", "the shell completion's candidates for -- WORDS (cli/rnicsim.bash)", add_complete, true, true},
};

// Builds the whole command line: every subcommand of kCommands on `app`, its
// actions in `actions` (by the subcommand's place in kCommands).
void build_app(CLI::App& app, std::vector<Action>& actions, const Program& program);

}  // namespace rnicsim::cli
