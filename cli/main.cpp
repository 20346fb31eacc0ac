// rnicsim: the command-line front end (cli/app.cpp; `rnicsim --help`).
#include <iostream>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  return rnicsim::cli::run_command_line(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
