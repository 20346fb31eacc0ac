#include "fabric/topology.hpp"

#include <algorithm>
#include <deque>
#include <stdexcept>

namespace rnicsim::fabric {

uint32_t Topology::add_node(std::string name, bool is_switch) {
  nodes.push_back({std::move(name), is_switch});
  return static_cast<uint32_t>(nodes.size() - 1);
}

void Topology::add_link(uint32_t a, uint32_t b, uint64_t rate_bps, sim::Duration delay, double loss) {
  TopoLink& l = links.emplace_back();
  l.a = a;
  l.b = b;
  l.rate_bps = rate_bps;
  l.delay = delay;
  l.loss = loss;
}

int Topology::find(const std::string& name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

std::vector<uint32_t> Topology::hosts() const {
  std::vector<uint32_t> h;
  for (uint32_t i = 0; i < nodes.size(); ++i)
    if (!nodes[i].is_switch) h.push_back(i);
  return h;
}

std::vector<std::vector<uint32_t>> Topology::links_of_nodes() const {
  std::vector<std::vector<uint32_t>> at(nodes.size());
  for (uint32_t l = 0; l < links.size(); ++l) {
    at[links[l].a].push_back(l);
    at[links[l].b].push_back(l);
  }
  return at;
}

std::vector<int> Topology::distances_to(uint32_t to) const { return distances_to(to, links_of_nodes()); }

std::vector<int> Topology::distances_to(uint32_t to, const std::vector<std::vector<uint32_t>>& at) const {
  std::vector<int> dist(nodes.size(), -1);
  std::deque<uint32_t> q{to};
  dist[to] = 0;
  while (!q.empty()) {
    const uint32_t n = q.front();
    q.pop_front();
    if (n != to && !nodes[n].is_switch) continue;  // hosts do not forward
    for (uint32_t l : at[n]) {
      const uint32_t m = links[l].a == n ? links[l].b : links[l].a;
      if (dist[m] < 0) {
        dist[m] = dist[n] + 1;
        q.push_back(m);
      }
    }
  }
  return dist;
}

sim::Duration Topology::path_delay(uint32_t from, uint32_t to) const {
  const auto dist = distances_to(to);
  if (dist[from] < 0) return sim::Duration::max();
  const auto at = links_of_nodes();
  sim::Duration d = sim::Duration::zero();
  for (uint32_t n = from; n != to;) {
    for (uint32_t l : at[n]) {
      const uint32_t m = links[l].a == n ? links[l].b : links[l].a;
      if (dist[m] == dist[n] - 1 && (m == to || nodes[m].is_switch)) {
        d += links[l].delay;
        n = m;
        break;
      }
    }
  }
  return d;
}

uint64_t Topology::access_rate(uint32_t host) const {
  for (const TopoLink& l : links)
    if (l.a == host || l.b == host) return l.rate_bps;
  return 0;
}

std::vector<SwitchRoutes> shortest_path_routes(const Topology& t) {
  const auto at = t.links_of_nodes();
  std::vector<SwitchRoutes> out;
  std::vector<std::vector<int>> dist_to;  // per host, in hosts() order
  const std::vector<uint32_t> hosts = t.hosts();
  for (uint32_t h : hosts) dist_to.push_back(t.distances_to(h, at));
  for (uint32_t s = 0; s < t.nodes.size(); ++s) {
    if (!t.nodes[s].is_switch) continue;
    SwitchRoutes r;
    r.node = s;
    for (size_t hi = 0; hi < hosts.size(); ++hi) {
      const std::vector<int>& dist = dist_to[hi];
      if (dist[s] < 0) continue;
      std::vector<uint16_t> ports;
      for (size_t p = 0; p < at[s].size(); ++p) {
        const TopoLink& l = t.links[at[s][p]];
        const uint32_t m = l.a == s ? l.b : l.a;
        if (dist[m] == dist[s] - 1 && (m == hosts[hi] || t.nodes[m].is_switch)) ports.push_back(static_cast<uint16_t>(p));
      }
      r.to_host.emplace_back(hosts[hi], std::move(ports));
    }
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

std::string host_name(const std::vector<std::string>& names, uint32_t i) {
  return names.empty() ? "h" + std::to_string(i) : names[i];
}

void check_names(const std::vector<std::string>& names, uint32_t n, const char* what) {
  if (!names.empty() && names.size() != n)
    throw std::invalid_argument(std::string(what) + " has " + std::to_string(n) + " hosts but " +
                                std::to_string(names.size()) + " are named");
}

}  // namespace

Topology single_switch(const std::vector<std::string>& host_names, LinkShape link) {
  Topology t;
  const uint32_t sw = t.add_node("sw0", true);
  for (uint32_t i = 0; i < host_names.size(); ++i) t.add_link(t.add_node(host_names[i], false), sw, link.rate_bps, link.delay);
  return t;
}

Topology leaf_spine(uint32_t leaves, uint32_t spines, uint32_t hosts_per_leaf,
                    const std::vector<std::string>& host_names, LinkShape host_link, LinkShape fabric_link) {
  check_names(host_names, leaves * hosts_per_leaf, "the leaf-spine");
  Topology t;
  std::vector<uint32_t> leaf(leaves), spine(spines);
  for (uint32_t l = 0; l < leaves; ++l) leaf[l] = t.add_node("leaf" + std::to_string(l), true);
  for (uint32_t s = 0; s < spines; ++s) spine[s] = t.add_node("spine" + std::to_string(s), true);
  uint32_t h = 0;
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t i = 0; i < hosts_per_leaf; ++i, ++h)
      t.add_link(t.add_node(host_name(host_names, h), false), leaf[l], host_link.rate_bps, host_link.delay);
  for (uint32_t l = 0; l < leaves; ++l)
    for (uint32_t s = 0; s < spines; ++s) t.add_link(leaf[l], spine[s], fabric_link.rate_bps, fabric_link.delay);
  return t;
}

Topology fat_tree(uint32_t k, const std::vector<std::string>& host_names, LinkShape link) {
  if (k < 2 || k % 2 != 0) throw std::invalid_argument("fat-tree k must be even and at least 2");
  const uint32_t half = k / 2;
  check_names(host_names, k * k * k / 4, "the fat-tree");
  Topology t;
  std::vector<uint32_t> core(half * half);
  for (uint32_t c = 0; c < core.size(); ++c) core[c] = t.add_node("core" + std::to_string(c), true);
  uint32_t h = 0;
  for (uint32_t p = 0; p < k; ++p) {
    std::vector<uint32_t> edge(half), agg(half);
    for (uint32_t i = 0; i < half; ++i) {
      edge[i] = t.add_node("edge" + std::to_string(p) + "_" + std::to_string(i), true);
      agg[i] = t.add_node("agg" + std::to_string(p) + "_" + std::to_string(i), true);
    }
    for (uint32_t i = 0; i < half; ++i)
      for (uint32_t j = 0; j < half; ++j, ++h)
        t.add_link(t.add_node(host_name(host_names, h), false), edge[i], link.rate_bps, link.delay);
    for (uint32_t i = 0; i < half; ++i)
      for (uint32_t j = 0; j < half; ++j) t.add_link(edge[i], agg[j], link.rate_bps, link.delay);
    // Aggregation switch i of every pod reaches cores i*k/2 .. i*k/2 + k/2 - 1.
    for (uint32_t i = 0; i < half; ++i)
      for (uint32_t j = 0; j < half; ++j) t.add_link(agg[i], core[i * half + j], link.rate_bps, link.delay);
  }
  return t;
}

}  // namespace rnicsim::fabric
