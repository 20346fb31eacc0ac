// The rnicsim command line: CLI11 over the subcommands of cli/commands.hpp.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"

namespace rnicsim::cli {

// Takes the program out of `args`, which no parser reads: the first `--` and
// all after it (exec, the completion), or all after rsh's host.
Program split_program(std::vector<std::string>& args);

// Parses `args` (argv without the program name) and runs the subcommand. Help
// and --version go to `out` and exit 0; a refused command line exits 2 with a
// message naming the option on `err`.
int run_command_line(std::vector<std::string> args, std::ostream& out, std::ostream& err);

}  // namespace rnicsim::cli
