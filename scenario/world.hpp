// The simulated world a scenario describes: hosts (simulated memory + an RNIC with
// one port) and switches joined by links, all on one simulator.
#pragma once

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cm/connection_manager.hpp"
#include "fabric/frame.hpp"
#include "fabric/port.hpp"
#include "fabric/switch.hpp"
#include "nic_model/host_memory.hpp"
#include "nic_model/nic.hpp"
#include "fabric/crossing.hpp"
#include "scenario/partition_map.hpp"
#include "sim/partitions.hpp"
#include "sim/rank_link.hpp"
#include "scenario/spec.hpp"
#include "scenario/workload_counts.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::scenario {

// The port GUID of host `index`: an EUI-64 with the locally administered bit
// set, 02:00:00:ff:fe + the host number (24 bits).
uint64_t port_guid(size_t index);
// The MAC of host `index`: locally administered, 02:00:00 then the host number
// (i >> 16, i >> 8, i + 1), distinct for 2^24 hosts.
std::array<uint8_t, 6> host_mac(size_t index);
// The IP address of host `index` when the scenario gives none (RoCEv2; as an
// IPv4-mapped address for IPv4). IPv4: 10.0.0.0/8, 254 hosts per /24, never a .0
// or .255 host byte: host i is 10.B.C.D with D = i % 254 + 1 and B.C = i / 254
// (10.0.0.1 .. 10.0.0.254, then 10.0.1.1, ...). IPv6: fd00::N with N the digits of
// i + 1 up to 9999 (as always), then fd00::1:X:Y with X:Y = i.
// Throws std::invalid_argument past 10.255.255.254.
packet::Ipv6Addr default_host_ip(size_t index, LinkLayer layer);

struct Host {
  std::string name;
  nic::SimulatedHostMemory memory;
  std::unique_ptr<fabric::Port> port;
  std::unique_ptr<nic::Nic> nic;
  nic::AddressVector address;  // how peers reach this host
  std::array<uint64_t, kCompletionStatuses> completions{};  // CQEs reaped, by ibv_wc_status
  // The unit of the model the host is, with its NIC, its port and its
  // programs: 1, 2, ... in scenario order (switches follow); its NIC's.
  sim::Actor actor() const { return nic->config().actor; }
};

// The address host `index` (`h`) has where its programs' sockets and the RDMA
// CM know it: on RoCE its IP address; on InfiniBand that of its IPoIB
// interface, the IPv4 address it would have on RoCE (10.0.0.1, 10.0.0.2, ...).
packet::Ipv6Addr network_address(const Host& h, size_t index);

// Where the outside's events (actor 0: workload starts, link faults, the time
// series' samples) go: the model's own scheduler (emulation, and tests that
// step it), or a scheduler apart for sim::Partitions to fire between windows.
enum class Outside : uint8_t { InModel, Apart };

class World {
public:
  // Host memory of host i: `memory(i)` if given (emulation: a real process), else
  // the host's simulated memory.
  using MemoryFor = std::function<nic::HostMemory&(size_t host_index)>;
  // `partitions` > 1 cuts the world (scenario/partition_map.hpp), its
  // outside apart: each partition has its own simulator and frame pool, and
  // what crosses a cut link waits in the sender's outbox until the engine
  // lands it (land, clear).
  World(const Scenario& s, uint64_t seed, std::ostream& log_sink, const MemoryFor& memory = {},
        Outside outside = Outside::InModel, uint32_t partitions = 1);
  ~World();
  // Partition 0's simulator (the only one of an uncut world): its log, its
  // stats registry for the outputs, and its seed.
  sim::Simulator& sim() { return parts_.front()->sim; }
  sim::Simulator& sim(size_t partition) { return parts_.at(partition)->sim; }
  size_t partitions() const { return parts_.size(); }
  uint32_t partition_of(const Host& h) const { return host_partition_.at(h.actor().id() - 1); }
  // The partition of switch `i` (in switches()), and of the host or switch named `node`.
  uint32_t switch_partition(size_t i) const { return switch_partition_.at(i); }
  uint32_t node_partition(const std::string& node) const;
  sim::Scheduler& outside() { return outside_apart_ ? outside_ : sim().scheduler(); }
  // The time the run has reached, whether any event is pending (outside or
  // in), and how many have fired.
  sim::Time now() const;
  bool pending() const;
  uint64_t events_fired() const;
  // A world whose partitions are shared among ranks (sim::Partitions::set_ranks):
  // the latest time and whether anything is pending on any rank, and whether
  // `b` holds on any. Every rank calls them at the same point; without ranks
  // they are now(), pending() and `b`.
  void set_ranks(sim::RankLink* ranks) { ranks_ = ranks; }
  sim::Time now_anywhere() const;
  bool pending_anywhere() const { return any_rank(pending()); }
  bool any_rank(bool b) const;
  // The engine's hooks for partition `p`: land what the others sent it in the
  // window just run, and empty its outboxes (sim::Partitions::Partition); and
  // across ranks, its outbox to another rank's partition and the bytes that
  // came from one (sim::Partitions::Mail), landed with the rest.
  void land(uint32_t p);
  void clear(uint32_t p);
  // What partition `from` sent partition `to` over the run (counted as
  // clear() empties the outboxes): in how many windows, and how many bytes.
  struct Crossed {
    uint64_t windows = 0;
    uint64_t bytes = 0;
  };
  const Crossed& crossed(uint32_t from, uint32_t to) const { return parts_.at(from)->crossed.at(to); }
  sim::Partitions::Mail mail(uint32_t p);
  // Word between the parts of a program: `listen` gives a listener its number
  // (made in the same order wherever the world is built), `tell` hands it
  // `word` in partition `to`: now if `to` is `from`, else when the window's
  // crossings land there. A listener may only schedule keyed events of `to`'s
  // units at least the control delay ahead, so when it hears changes nothing.
  using Listener = std::function<void(const fabric::CrossingWord&)>;
  uint32_t listen(Listener listener);
  void tell(uint32_t from, uint32_t to, const fabric::CrossingWord& word);
  Host& host(const std::string& name);
  std::vector<std::unique_ptr<Host>>& hosts() { return hosts_; }
  fabric::FramePool& pool() { return parts_.front()->pool; }
  std::vector<std::unique_ptr<fabric::Switch>>& switches() { return switches_; }
  // A host's port (port 0) or a switch's port `port`.
  fabric::Port& capture_port(const std::string& node, uint32_t port);
  packet::LinkKind link_kind() const { return link_kind_; }
  // How long word between two hosts' programs takes outside the model (a
  // failed host telling the others): the smallest link delay, no less than
  // the lookahead of any cut of the world into partitions.
  sim::Duration control_delay() const { return control_delay_; }
  // The smallest delay of a link cut between partitions (none: max()).
  sim::Duration cut_delay() const { return cut_delay_; }
  // The NICs move no payload bytes (scenario payload: size_only).
  bool size_only() const { return size_only_; }
  // The IB CM of a host's port, made when a workload first connects through it
  // (connect: rdma_cm), its rings and buffers in the host's simulated memory;
  // and a port of the RDMA CM's TCP space for the next workload that listens.
  cm::ConnectionManager& connection_manager(const Host& host);
  // The address of the host whose port has GID `gid` (or, `gid` zero, LID `lid`):
  // how a CM answers the port a MAD came from.
  std::optional<nic::AddressVector> address_of(const packet::Ipv6Addr& gid, uint16_t lid) const;
  uint16_t next_cm_port() { return next_cm_port_++; }

private:
  // The steps of building it, in order: hosts with their NICs, switches (by
  // topology node), the links' ports (pairs to connect), the switches' routes.
  void add_hosts(const Scenario& s, const MemoryFor& memory);
  std::vector<fabric::Switch*> add_switches(const Scenario& s);
  void add_links(const Scenario& s, const std::vector<fabric::Switch*>& switch_of);
  void add_routes(const fabric::Topology& t, const std::vector<fabric::Switch*>& switch_of);

  struct Partition {
    Partition(uint64_t seed, std::ostream& log, size_t frame_bytes, size_t partitions)
        : sim(seed, log), pool(frame_bytes), to(partitions), inbox(partitions), crossed(partitions) {}
    sim::Simulator sim;
    fabric::FramePool pool;
    std::vector<fabric::CrossingWriter> to;                  // frames and credit, per partition
    std::vector<std::span<const std::byte>> inbox;           // per partition: from another rank's
    std::vector<Crossed> crossed;                            // per partition: what went there
  };
  Partition& part_of_node(uint32_t node) { return *parts_[map_.of_node[node]]; }
  void land_from(uint32_t p, std::span<const std::byte> bytes);
  // Joins the two ends of a link: directly, or across partitions.
  void wire(fabric::Port& a, uint32_t node_a, fabric::Port& b, uint32_t node_b, sim::Duration delay);

  sim::Scheduler outside_;  // when apart
  bool outside_apart_ = false;
  PartitionMap map_;
  std::vector<std::unique_ptr<Partition>> parts_;
  std::vector<uint32_t> host_partition_;   // per host
  std::vector<uint32_t> switch_partition_;  // per switch
  std::vector<fabric::Port*> ports_;       // the world's numbering of ports, for crossings
  std::vector<std::pair<fabric::Port*, fabric::Port*>> wires_;  // every link's two ends
  std::shared_ptr<fabric::Destinations> destinations_;
  packet::LinkKind link_kind_;
  bool size_only_ = false;
  sim::Duration control_delay_ = sim::Duration::us(1);
  sim::Duration cut_delay_ = sim::Duration::max();
  std::vector<std::unique_ptr<Host>> hosts_;
  // Each host by name: a world is built by name (links, routes, faults),
  // thousands of hosts times their routes.
  std::unordered_map<std::string, Host*> host_named_;
  std::vector<std::unique_ptr<fabric::Switch>> switches_;
  std::vector<std::unique_ptr<sim::Event>> link_events_;  // links going down and up
  std::vector<Listener> listeners_;
  sim::RankLink* ranks_ = nullptr;
  uint16_t next_cm_port_ = 18515;
  // Last: they go before the NICs and the scheduler they use.
  std::vector<std::unique_ptr<cm::ConnectionManager>> cms_;
};

}  // namespace rnicsim::scenario
