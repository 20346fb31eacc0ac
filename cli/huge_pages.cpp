#include "cli/huge_pages.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace rnicsim::cli {
namespace {
constexpr std::string_view kTunable = "glibc.malloc.hugetlb";

// Sanitizers bring allocators of their own, which read no glibc tunable.
constexpr bool kGlibcMalloc =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    false;
#else
    true;
#endif
}  // namespace

std::optional<std::string> tunables_for_huge_pages(std::string_view thp_mode, const char* tunables) {
  if (thp_mode.find("[madvise]") == std::string_view::npos) return std::nullopt;
  const std::string_view now = tunables == nullptr ? std::string_view() : std::string_view(tunables);
  if (now.find(kTunable) != std::string_view::npos) return std::nullopt;
  std::string next(now);
  if (!next.empty()) next += ':';
  next += kTunable;
  next += "=1";
  return next;
}

void restart_with_huge_pages(int argc, char** argv) {
  if (!kGlibcMalloc || argc < 2 || std::strcmp(argv[1], "run") != 0) return;
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string mode((std::istreambuf_iterator<char>(mode_file)), std::istreambuf_iterator<char>());
  const char* before = std::getenv("GLIBC_TUNABLES");
  const std::optional<std::string> tunables = tunables_for_huge_pages(mode, before);
  if (!tunables) return;
  const std::optional<std::string> saved = before == nullptr ? std::nullopt : std::optional<std::string>(before);
  // The program's own path, not /proc/self/exe: the process's name is the
  // file's name, which ps and top show.
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  execv(self.c_str(), argv);
  // Not restarted: on as before, without huge pages.
  if (saved) setenv("GLIBC_TUNABLES", saved->c_str(), 1); else unsetenv("GLIBC_TUNABLES");
}

}  // namespace rnicsim::cli
