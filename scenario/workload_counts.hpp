// What a workload counts as it runs to check itself, and each count's name in
// the outputs: one member and one row per counter (kWorkloadCounts), which
// the workloads, the summary and summary.json all read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

namespace rnicsim::scenario {

// ibv_wc_status values: SUCCESS (0) to GENERAL_ERR (21); completions are
// counted by status.
inline constexpr size_t kCompletionStatuses = 22;

struct WorkloadCounts {
  // Bytes of target memory (and atomic targets) compared with what was sent.
  uint64_t bytes_verified = 0;
  // Messages posted that consume a receive (SEND, WRITE_WITH_IMM), and the
  // successful receive completions reaped, counted to the end of the run: RC
  // delivers each message exactly once, so the two are equal.
  uint64_t receives_expected = 0;
  uint64_t receives_completed = 0;
  // Send WQEs posted (each signaled WQE completes exactly once).
  uint64_t sends_posted = 0;
};

inline constexpr std::pair<std::string_view, uint64_t WorkloadCounts::*> kWorkloadCounts[] = {
    {"bytes_verified", &WorkloadCounts::bytes_verified},
    {"receives_expected", &WorkloadCounts::receives_expected},
    {"receives_completed", &WorkloadCounts::receives_completed},
    {"sends_posted", &WorkloadCounts::sends_posted},
};

}  // namespace rnicsim::scenario
