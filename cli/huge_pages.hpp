// Transparent huge pages for a scenario run. A run touches a world's state all
// over memory (events, ports, queues, frames, contexts), and in a virtual
// machine every TLB miss walks two levels of page tables: on a 320-host world
// huge pages save about a tenth of the run. Where the kernel gives them only
// on request (transparent_hugepage "madvise"), glibc's malloc asks for them
// when its tunable glibc.malloc.hugetlb=1 is set, which it reads only when the
// process starts: `rnicsim run` starts itself once more with it added.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rnicsim::cli {

// The GLIBC_TUNABLES to start again with, given the kernel's THP mode (the
// contents of /sys/kernel/mm/transparent_hugepage/enabled) and the current
// tunables (nullptr: none); nothing if a new start would change nothing: huge
// pages always or never given, or the tunable set already (by the user, or by
// the start before).
std::optional<std::string> tunables_for_huge_pages(std::string_view thp_mode, const char* tunables);

// For `rnicsim run` (argv[1]): replaces the process with the same program and
// arguments, the tunable added, when tunables_for_huge_pages says so. Returns
// if it did not (another command, a sanitizer's allocator, an exec that failed).
void restart_with_huge_pages(int argc, char** argv);

}  // namespace rnicsim::cli
