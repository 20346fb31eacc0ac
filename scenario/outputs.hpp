// The files of `rnicsim run --out DIR` (docs/OUTPUTS.md): summary.json,
// stats.json, qps.csv, the time series (timeseries.hpp) and flows_NAME.csv,
// each with every number as computed (sim/output.hpp).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "scenario/summary.hpp"
#include "sim/output.hpp"

namespace rnicsim::scenario {

class Sampler;
class Workload;
struct UnitReports;

// summary.json: the run's Summary.
sim::Json summary_json(const Summary& s);
// The flows of a flows workload: flow,from,to,op,size,start_us,end_us,fct_us,ideal_us,slowdown
// (an unfinished flow's times, FCT and slowdown empty).
void write_flows_csv(const WorkloadSummary& w, sim::CsvWriter& out);
// perftest's title of a perftest workload: "RDMA_Write BW Test", "Atomic FETCH_AND_ADD Latency Test".
std::string perftest_title(const WorkloadSummary& w);
// A perftest workload's report as perftest's --out_json writes it: test_info
// (the client's lines of its header) and results (its last size), the same
// keys in the same units (BW in perftest's MB/sec, 2^20 bytes a second;
// latency in usec; MsgRate in Mpps). Flows workloads have none (null).
sim::Json perftest_out_json(const WorkloadSummary& w);
// DIR/NAME.json for each perftest workload of `sum`.
void write_perftest_json(const Summary& sum, const std::filesystem::path& dir, bool exact_twins);
// Writes every file into `dir` (and exact twins with `exact_twins`), on up to
// `threads` threads; the units' counters from `units` (unit_reports.hpp).
void write_outputs(const UnitReports& units, const std::vector<std::unique_ptr<Workload>>& workloads, const Sampler& sampler,
                   const Summary& sum, const std::filesystem::path& dir, bool exact_twins, unsigned threads = 1);

}  // namespace rnicsim::scenario
