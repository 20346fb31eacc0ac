// Fuzzes the scenario loader: the input is a scenario file's text. Loading it
// (sweeps expanded) must give a scenario or a ScenarioError naming
// file:line:column; any other exception, a crash or a sanitizer report is a bug.
//
// A scenario may name files (NIC presets, flow files, CDF files) relative to its
// own directory. The fuzzer loads the text as if it were a file in a private
// temporary directory holding a few such files, and skips inputs that could name
// a file elsewhere (any '/', or '\' with which YAML escapes could spell one), so
// it never reads outside that directory and the project's NIC presets.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>
#include <typeinfo>

#include "scenario/scenario.hpp"
#include "scenario/sweep.hpp"

#ifndef RNICSIM_FUZZ_FILES_DIR
#error "RNICSIM_FUZZ_FILES_DIR: the directory of the files the sandbox holds"
#endif

namespace {

namespace fs = std::filesystem;

struct Sandbox {
  fs::path dir;
  Sandbox() {
    std::string pattern = (fs::temp_directory_path() / "rnicsim-scenario-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("scenario fuzzer: mkdtemp");
      std::abort();
    }
    dir = pattern;
    for (const char* name : {"flow_sizes_cdf.txt", "ns3_flow.txt", "flows.csv"})
      fs::copy_file(fs::path(RNICSIM_FUZZ_FILES_DIR) / name, dir / name);
  }
  ~Sandbox() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

// "FILE:LINE:COLUMN: message" (the file is the scenario or a file it names).
bool names_a_place(std::string_view what) {
  const size_t end = what.find(": ");
  if (end == std::string_view::npos) return false;
  std::string_view place = what.substr(0, end);
  for (int field = 0; field < 2; ++field) {
    const size_t colon = place.rfind(':');
    if (colon == std::string_view::npos || colon + 1 == place.size()) return false;
    if (place.substr(colon + 1).find_first_not_of("0123456789") != std::string_view::npos) return false;
    place = place.substr(0, colon);
  }
  return !place.empty();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Sandbox sandbox;
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find_first_of("/\\") != std::string::npos) return 0;
  const std::string file = (sandbox.dir / "fuzz.yaml").string();
  try {
    const YAML::Node root = rnicsim::scenario::load_yaml(text, file);
    if (root.IsMap() && root["sweep"])
      (void)rnicsim::scenario::expand_sweep(root, [&] { return rnicsim::scenario::load_yaml(text, file); }, file);
    else
      (void)rnicsim::scenario::parse_scenario(root, file);
  } catch (const rnicsim::scenario::ScenarioError& e) {
    if (!names_a_place(e.what())) {
      std::fprintf(stderr, "scenario fuzzer: an error without file:line:column: %s\n", e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    // Named here, where an uncaught one would only say "terminate called".
    std::fprintf(stderr, "scenario fuzzer: an exception other than ScenarioError (%s): %s\n", typeid(e).name(), e.what());
    std::abort();
  }
  return 0;
}
