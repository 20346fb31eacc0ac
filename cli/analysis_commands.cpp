// rnicsim lint | plot: what reads a capture or a run's outputs.
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/plot.hpp"
#include "lint/lint.hpp"

namespace rnicsim::cli {

Action add_lint(CLI::App& sub, const Program&) {
  struct Args {
    std::string file;
    bool json = false;
  };
  auto a = std::make_shared<Args>();
  sub.add_option("FILE.pcap", a->file, "the capture (pcap or pcapng; Ethernet or InfiniBand link type)")
      ->required()
      ->type_name("");
  sub.add_flag("--json", a->json, "write the report as one JSON object, every finding in it (docs/OUTPUTS.md)");
  sub.footer("Exit 0 when no error was found, 1 when one was, 2 when the file cannot be read.");
  return [a] {
    return lint::run_lint(a->file, std::cout, std::cerr, a->json ? lint::ReportFormat::Json : lint::ReportFormat::Text);
  };
}

Action add_plot(CLI::App& sub, const Program&) {
  auto dir = std::make_shared<std::string>();
  sub.add_option("DIR", *dir, "a run's --out directory; the figures are written into it")->required()->type_name("");
  return [dir] { return plot(*dir); };
}

}  // namespace rnicsim::cli
