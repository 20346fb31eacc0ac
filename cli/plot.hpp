// rnicsim plot DIR: renders the PNG figures of a run's --out directory with
// python3 and matplotlib (the script, cli/plot.py, is built into the program).
#pragma once

#include <string>

namespace rnicsim::cli {

int plot(const std::string& dir);

}  // namespace rnicsim::cli
