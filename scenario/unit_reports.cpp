#include "scenario/unit_reports.hpp"

#include <algorithm>
#include <stdexcept>

#include "nic_model/nic.hpp"
#include "sim/byte_record.hpp"
#include "scenario/world.hpp"

namespace rnicsim::scenario {
namespace {

PortReport report(const fabric::Port& port, const fabric::PfcGenerator* pfc, uint64_t headroom) {
  PortReport r;
  r.counters = port.counters();
  for (uint8_t p = 0; p < 8; ++p) r.counters.paused_time[p] = port.paused_time(p);
  r.has_pfc = pfc != nullptr;
  if (pfc != nullptr) r.pfc = pfc->counters();
  r.headroom = headroom;
  return r;
}

// Unit kinds in the bytes.
constexpr uint8_t kHost = 1, kSwitch = 2;

void put_host(sim::ByteWriter& out, uint64_t index, const HostReport& h) {
  out.put(kHost), out.put(index), out.put(h.counters), out.put_vector(h.qps);
}

void put_switch(sim::ByteWriter& out, uint64_t index, const SwitchReport& s) {
  out.put(kSwitch), out.put(index), out.put(s.counters), out.put(s.buffer_peak), out.put_vector(s.ports);
}

}  // namespace

HostReport report(const Host& h) {
  HostReport r;
  HostReport::Counters& c = r.counters;
  nic::Nic& n = *h.nic;
  c.nic = n.stats();
  c.rx = n.rx_pipeline().counters();
  c.responder = n.responder().counters();
  c.completer_naks = n.completer().naks();
  c.completer_timeouts = n.completer().timeouts();
  c.dma_reads = n.dma().reads();
  c.dma_writes = n.dma().writes();
  c.pcie_upstream_bytes = n.pcie().upstream_bytes();
  c.pcie_downstream_bytes = n.pcie().downstream_bytes();
  c.cq_overruns = n.cqe_writer().overruns();
  c.rx_buffer_peak = n.rx_buffer_peak();
  c.packets_sent = n.requester().packets_sent();
  c.payload_writes_dropped = h.memory.writes_dropped();
  c.completions = h.completions;
  c.has_port = h.port != nullptr;
  if (h.port) c.port = report(*h.port, n.pfc(), n.pfc_headroom());
  c.port.has_pfc = n.pfc() != nullptr;  // counted with or without a port, as the NIC keeps it
  if (n.pfc() != nullptr) c.port.pfc = n.pfc()->counters();
  const nic::CongestionControl* cc = n.congestion();
  n.for_each_qp([&](const nic::QpContext& qp) {
    QpReport q{qp.qpn, qp.type, qp.state, qp.tx_packets, qp.rx_packets, qp.retransmitted_packets,
               qp.ecn_ce_received, qp.cnps_received, cc != nullptr && qp.cc ? cc->summary(*qp.cc) : nic::CcSummary{}};
    r.qps.push_back(q);
  });
  return r;
}

SwitchReport report(const fabric::Switch& sw) {
  SwitchReport r;
  r.counters = sw.counters();
  r.buffer_peak = sw.buffer().peak_used();
  for (size_t i = 0; i < sw.port_count(); ++i) r.ports.push_back(report(sw.port(i), sw.pfc(i), sw.buffer().headroom_of(i)));
  return r;
}

UnitReports reports(World& world) {
  UnitReports r;
  for (const auto& h : world.hosts()) {
    r.host_names.push_back(h->name);
    r.hosts.push_back(report(*h));
  }
  for (const auto& sw : world.switches()) {
    r.switch_names.push_back(sw->name());
    r.switches.push_back(report(*sw));
  }
  return r;
}

std::vector<std::byte> write_reports(const UnitReports& from, std::span<const size_t> hosts, std::span<const size_t> switches) {
  sim::ByteWriter out;
  for (size_t i : hosts) put_host(out, i, from.hosts.at(i));
  for (size_t i : switches) put_switch(out, i, from.switches.at(i));
  return std::move(out.bytes());
}

void read_reports(std::span<const std::byte> bytes, UnitReports& into) {
  sim::ByteReader in(bytes);
  while (!in.empty()) {
    const auto kind = in.take<uint8_t>();
    const auto index = in.take<uint64_t>();
    if (kind == kHost && index < into.hosts.size()) {
      HostReport& h = into.hosts[index];
      h.counters = in.take<HostReport::Counters>();
      h.qps = in.take_vector<QpReport>();
    } else if (kind == kSwitch && index < into.switches.size()) {
      SwitchReport& s = into.switches[index];
      s.counters = in.take<fabric::SwitchCounters>();
      s.buffer_peak = in.take<uint64_t>();
      s.ports = in.take_vector<PortReport>();
    } else {
      throw std::runtime_error("a unit report names no unit of this world");
    }
  }
}

namespace {

// A port's PFC and credit counters, received.
void add_port_pfc(const PortReport& port, FabricSummary& f) {
  const auto& c = port.counters;
  for (uint8_t p = 0; p < 8; ++p) {
    f.pause_received[p] += c.pause_rx[p];
    f.xon_received[p] += c.xon_rx[p];
    f.paused_us[p] += c.paused_time[p].microseconds();
  }
  f.watchdog_trips += c.watchdog_trips;
  for (size_t p = 0; p < 8; ++p) {
    f.credit_stalls += c.credit_stalls[p];
    f.credit_stall_us += c.credit_stall_time[p].microseconds();
  }
}

// A port's PFC frames sent.
void add_pfc_sent(const PortReport& port, FabricSummary& f) {
  if (!port.has_pfc) return;
  f.pfc_frames_sent += port.pfc.frames;
  for (size_t p = 0; p < 8; ++p) {
    f.xoff_sent[p] += port.pfc.xoff[p];
    f.refresh_sent[p] += port.pfc.refresh[p];
    f.xon_sent[p] += port.pfc.xon[p];
  }
}

}  // namespace

void summarise_hosts(const UnitReports& r, Summary& sum) {
  for (const HostReport& h : r.hosts) {
    const HostReport::Counters& c = h.counters;
    if (c.has_port) {
      const auto& p = c.port.counters;
      sum.packets += p.tx_frames;
      sum.drops += p.drops_loss + p.drops_queue_full + p.drops_link_down + p.drops_fault;
    }
    sum.data_packets += c.packets_sent;
    sum.retransmissions += c.nic.retransmitted_packets;
    sum.rx_errors += c.rx.malformed + c.rx.bad_icrc;
    sum.payload_writes_dropped += c.payload_writes_dropped;
    for (size_t i = 0; i < kCompletionStatuses; ++i) sum.completions[i] += c.completions[i];
  }
}

void summarise_fabric(const UnitReports& r, Summary& sum) {
  FabricSummary& f = sum.fabric;
  for (const SwitchReport& sw : r.switches) {
    ++f.switches;
    f.forwarded += sw.counters.forwarded;
    f.ecn_marked += sw.counters.ecn_marked;
    for (size_t d = 0; d < f.switch_drops.size(); ++d) f.switch_drops[d] += sw.counters.drops[d];
    sum.drops += sw.counters.drops_total();
    f.peak_buffer_bytes = std::max(f.peak_buffer_bytes, sw.buffer_peak);
    for (const PortReport& port : sw.ports) {
      add_port_pfc(port, f);
      add_pfc_sent(port, f);
      sum.drops += port.counters.drops_loss + port.counters.drops_link_down + port.counters.drops_fault;
    }
  }
  for (const HostReport& h : r.hosts) {
    const HostReport::Counters& c = h.counters;
    if (c.has_port) add_port_pfc(c.port, f);
    add_pfc_sent(c.port, f);
    f.ecn_ce_received += c.rx.ecn_ce;
    f.cnps_received += c.rx.cnps;
    f.cnps_sent += c.nic.cnps_sent;
  }
}

}  // namespace rnicsim::scenario
