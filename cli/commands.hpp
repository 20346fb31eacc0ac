// The subcommands of rnicsim. Each add_* declares its options and positionals on
// its own CLI::App (so `rnicsim SUB --help` lists them) and returns what it does
// once they are parsed. `program` is what followed `--` on the command line
// (exec, the completion) or the host (rsh, as rsh and ssh take a command), and
// nothing in it is parsed.
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
Action add_rsh(CLI::App& sub, const Program& program);
Action add_complete(CLI::App& sub, const Program& program);  // complete.cpp

// Where a subcommand's program starts on its command line.
enum class ProgramAt : unsigned char {
  None,
  AfterDash,   // `-- PROGRAM ARGS` after the options
  AfterFirst,  // after the first word that is no option: `rsh HOST COMMAND...`
};

struct Command {
  const char* name;
  const char* summary;
  Action (*add)(CLI::App& sub, const Program& program);
  ProgramAt program_at;
  bool hidden;  // not listed by `rnicsim --help`
};

// Every subcommand, in the order `rnicsim --help` lists them.
inline constexpr Command kCommands[] = {
    {"run", "run a scenario in simulated time", add_run, ProgramAt::None, false},
    {"validate", "check a scenario without running it", add_validate, ProgramAt::None, false},
    {"params", "list every scenario parameter with its unit, default and range", add_params, ProgramAt::None, false},
    {"lint", "check a RoCEv2 or InfiniBand capture", add_lint, ProgramAt::None, false},
    {"plot", "PNG figures of a run's --out directory", add_plot, ProgramAt::None, false},
    {"serve", "run the NICs in real time for programs on the shim", add_serve, ProgramAt::None, false},
    {"exec", "run an unmodified RDMA program on the shim: rnicsim exec [OPTIONS] -- PROGRAM ARGS", add_exec,
     ProgramAt::AfterDash, false},
    {"rsh", "run a shell command on an emulated host, as rsh does (mpirun's launch agent): rnicsim rsh HOST COMMAND",
     add_rsh, ProgramAt::AfterFirst, false},
    {"complete", "the shell completion's candidates for -- WORDS (cli/rnicsim.bash)", add_complete,
     ProgramAt::AfterDash, true},
};

// Builds the whole command line: every subcommand of kCommands on `app`, its
// actions in `actions` (by the subcommand's place in kCommands).
void build_app(CLI::App& app, std::vector<Action>& actions, const Program& program);

}  // namespace rnicsim::cli
