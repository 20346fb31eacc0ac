// The fabric keys of a scenario file: switches and links listed one by one, or a
// generated topology (single switch, leaf-spine, fat-tree); the settings of
// every switch (buffer, scheduling, priority trust) and PFC.
#pragma once

#include <yaml-cpp/yaml.h>

#include "scenario/spec.hpp"
#include "scenario/yaml_reader.hpp"

namespace rnicsim::scenario {

// `switch:` settings of every switch.
void read_switch_settings(const Reader& r, const YAML::Node& n, FabricSpec& f, uint32_t mtu);
// `pfc:` in switches and NICs.
void read_pfc_settings(const Reader& r, const YAML::Node& n, FabricSpec& f);
// `ib_credits:` (native IB): credit flow control per VL on every link.
void read_ib_credits(const Reader& r, const YAML::Node& n, FabricSpec& f, uint32_t mtu);
// `topology:`: generates switches, links and (unless `hosts:` names them) hosts.
void read_topology(const Reader& r, const YAML::Node& n, Scenario& s);
// `switches:` and `links:` (hosts and switches), into s.links and s.fabric.topology.
void read_links(const Reader& r, const YAML::Node& root, Scenario& s);
// `captures:` (after the network is read).
void read_captures(const Reader& r, const YAML::Node& n, Scenario& s);
// Whether a path joins two hosts.
bool reachable(const Scenario& s, const std::string& from, const std::string& to);

}  // namespace rnicsim::scenario
