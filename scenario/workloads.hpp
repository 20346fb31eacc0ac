// The workloads a scenario's specs make: a flows workload (flows.hpp) for
// pattern flows, a perftest workload (perftest.hpp) for bw and lat. Above
// both kinds, so that workload.hpp, their base, knows neither.
#pragma once

#include <cstdint>
#include <memory>

#include "scenario/spec.hpp"
#include "scenario/workload.hpp"
#include "scenario/world.hpp"

namespace rnicsim::scenario {

std::unique_ptr<Workload> make_workload(World& world, const Scenario& s, const WorkloadSpec& spec, uint64_t seed);

}  // namespace rnicsim::scenario
