// The files of `rnicsim run --out DIR` (docs/OUTPUTS.md): summary.json,
// stats.json, qps.csv, the time series (timeseries.hpp) and flows_NAME.csv,
// each with every number as computed (sim/output.hpp).
#pragma once

#include <memory>
#include <vector>

#include "scenario/runner.hpp"
#include "sim/output.hpp"

namespace rnicsim::scenario {

class Sampler;
class World;

// summary.json: the run's Summary.
sim::Json summary_json(const Summary& s);
// The flows of a flows workload: flow,from,to,op,size,start_us,end_us,fct_us,ideal_us,slowdown
// (an unfinished flow's times, FCT and slowdown empty).
void write_flows_csv(const WorkloadSummary& w, sim::CsvWriter& out);
// Writes every file into opts.out_dir (and exact twins with opts.exact_twins).
void write_outputs(World& world, const std::vector<std::unique_ptr<Workload>>& workloads, const Sampler& sampler,
                   const Summary& sum, const RunOptions& opts);

}  // namespace rnicsim::scenario
