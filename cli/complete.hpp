// The shell completion's candidates (cli/rnicsim.bash asks `rnicsim complete --
// WORDS`): subcommands, their options, an option's choices and the paths of
// --set, all read from the command line's own declarations and the scenario key
// tables, so no list is kept twice.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace rnicsim::cli {

// `words` are the command line up to the word being completed (the last, maybe
// empty), the program's name first. Nothing: the shell completes file names.
std::vector<std::string> completions(const CLI::App& app, const std::vector<std::string>& words);

}  // namespace rnicsim::cli
