#include "scenario/workloads.hpp"

#include "scenario/flows.hpp"
#include "scenario/perftest.hpp"

namespace rnicsim::scenario {

std::unique_ptr<Workload> make_workload(World& world, const Scenario& s, const WorkloadSpec& spec, uint64_t seed) {
  if (spec.pattern == WorkloadPattern::Flows) return std::make_unique<FlowsWorkload>(world, s, spec);
  return std::make_unique<PerftestWorkload>(world, s, spec, seed);
}

}  // namespace rnicsim::scenario
