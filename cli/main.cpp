// rnicsim: the command-line front end (cli/app.cpp; `rnicsim --help`).
#include <iostream>

#include "cli/app.hpp"
#include "cli/huge_pages.hpp"

int main(int argc, char** argv) {
  rnicsim::cli::restart_with_huge_pages(argc, argv);  // returns unless it restarts
  return rnicsim::cli::run_command_line(std::vector<std::string>(argv + 1, argv + argc), std::cout, std::cerr);
}
