// rnicsim serve | exec: the emulation daemon and the launcher of programs on the shim.
#pragma once

#include <string>
#include <vector>

namespace rnicsim::cli {

int cmd_serve(const std::vector<std::string>& args);
int cmd_exec(const std::vector<std::string>& args);

}  // namespace rnicsim::cli
