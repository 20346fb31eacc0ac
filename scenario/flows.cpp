#include "scenario/flows.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <tuple>

namespace rnicsim::scenario {
namespace {
// The receiving host keeps receive WQEs posted for a QP's SEND and
// WRITE_WITH_IMM flows (up to kRecvAhead, another after each receive
// completion), as a verbs program does: a flow never meets an empty receive queue.
constexpr uint64_t kRecvAhead = 512;

// Every host sends the same pattern (seeded by the workload), so flows into one
// receive region all leave it holding that pattern; `bytes` 0 when unchecked.
std::vector<std::byte> data_pattern(uint64_t seed, const std::string& workload, uint64_t bytes) {
  std::vector<std::byte> pattern(bytes);
  sim::RandomStream r(seed, "workload." + workload + ".data");
  for (size_t i = 0; i < pattern.size(); i += 8) {
    const uint64_t v = r.next_u64();
    std::memcpy(pattern.data() + i, &v, std::min<size_t>(8, pattern.size() - i));
  }
  return pattern;
}

// A count kept by key; 0 for a key never counted.
template <class Map>
uint64_t count_at(const Map& m, const typename Map::key_type& key) {
  const auto it = m.find(key);
  return it == m.end() ? 0 : it->second;
}

// Ideal FCT: the sender's access link rate and the path's round trip.
double ideal_us(const Scenario& s, const WorkloadSpec& spec, const FlowSpec& f) {
  const fabric::Topology& t = s.fabric.topology;
  const auto from = static_cast<uint32_t>(t.find(f.from));
  const auto to = static_cast<uint32_t>(t.find(f.to));
  const uint64_t rate = t.access_rate(from);
  const sim::Duration base = spec.base_rtt ? *spec.base_rtt : t.path_delay(from, to) * 2;
  return static_cast<double>(f.size) * 8.0 / static_cast<double>(rate) * 1e6 + base.microseconds();
}

}  // namespace

// Channels: one per (from, to, priority), or one per flow; what each channel
// and each host's CQs need.
struct FlowsWorkload::ChannelPlan {
  struct Ends {
    std::string from, to;
    uint8_t priority;
  };
  std::vector<Ends> channels;
  std::vector<uint32_t> channel_of;                  // per flow
  std::map<std::string, uint64_t> send_cq, recv_cq;  // entries per host
  std::map<uint32_t, uint64_t> recv_need;            // receives per channel
};

FlowsWorkload::ChannelPlan FlowsWorkload::plan_channels(const WorkloadSpec& spec) {
  ChannelPlan plan;
  std::map<std::tuple<std::string, std::string, uint8_t>, uint32_t> by_pair;
  plan.channel_of.resize(spec.flows.size());
  for (size_t i = 0; i < spec.flows.size(); ++i) {
    const FlowSpec& f = spec.flows[i];
    const uint8_t priority = f.priority.value_or(spec.priority);
    const auto key = std::make_tuple(f.from, f.to, priority);
    auto it = by_pair.find(key);
    if (spec.qp_per_flow || it == by_pair.end()) {
      const uint32_t c = static_cast<uint32_t>(plan.channels.size());
      plan.channels.push_back({f.from, f.to, priority});
      plan.send_cq[f.from] += spec.tx_depth;
      plan.recv_cq[f.to] += kRecvAhead;
      if (!spec.qp_per_flow) by_pair[key] = c;
      plan.channel_of[i] = c;
    } else {
      plan.channel_of[i] = it->second;
    }
    if (needs_recv(f.op)) ++plan.recv_need[plan.channel_of[i]];
  }
  return plan;
}

FlowsWorkload::FlowsWorkload(World& world, const Scenario& s, const WorkloadSpec& spec)
    : Workload(world, spec), path_mtu_(s.path_mtu) {
  const ChannelPlan plan = plan_channels(spec);
  channel_of_ = plan.channel_of;
  // One side per host: CQs sized for its channels, a buffer with a send region and
  // a receive region of the largest flow each.
  const uint64_t region = (spec.size + 63) / 64 * 64;
  data_checked_ = !world.size_only();  // size-only: no payload bytes to check
  open_channels(s, plan, region, data_pattern(s.seed, spec.name, data_checked_ ? region : 0));
  flows_.resize(spec.flows.size());
  for (size_t i = 0; i < spec.flows.size(); ++i) {
    flows_[i].spec = spec.flows[i];
    flows_[i].ideal_us = ideal_us(s, spec, flows_[i].spec);
  }
  plan_parts();
  listener_ = world.listen([this](const fabric::CrossingWord& w) {
    if (w.part >= parts_in_order_.size()) throw std::logic_error("word for a part the flows workload does not have");
    tell_stop(*parts_in_order_[w.part], w.arrival, w.key);
  });
}

// Each host's flows by start time, the completions it waits for, and how far
// its receive region must come to match its send region (every host sends the
// same pattern; a read flow's data lands at `from`, a message's at `to`).
void FlowsWorkload::plan_parts() {
  for (size_t i = 0; i < flows_.size(); ++i) {
    const FlowSpec& f = flows_[i].spec;
    Part& from = parts_.at(f.from);
    from.order.push_back(i);
    ++from.sends;
    if (needs_recv(f.op)) ++parts_.at(f.to).receives;
    Part& dst = op_row(f.op).shape == OpShape::Read ? from : parts_.at(f.to);
    dst.reach = std::max(dst.reach, f.size);
  }
  for (auto& [host, part] : parts_)
    std::stable_sort(part.order.begin(), part.order.end(),
                     [&](size_t a, size_t b) { return flows_[a].spec.start < flows_[b].spec.start; });
  for (const FlowSpec& f : spec_.flows)  // the parts in the order of their hosts' first flows
    for (const std::string* host : {&f.from, &f.to}) {
      Part& p = parts_.at(*host);
      if (p.index != Part::kUnplaced) continue;
      p.index = parts_in_order_.size();
      parts_in_order_.push_back(&p);
    }
}

FlowsWorkload::Part& FlowsWorkload::part_of(const Scenario& s, const ChannelPlan& plan, const std::string& host,
                                            uint64_t region, const std::vector<std::byte>& pattern) {
  Part& p = parts_[host];
  if (p.side) return p;
  Host& h = world_.host(host);
  p.side = std::make_unique<HostSide>(h, s.host, ring_entries(std::max<uint64_t>(1, count_at(plan.send_cq, host))),
                                      ring_entries(std::max<uint64_t>(1, count_at(plan.recv_cq, host))), 2 * region);
  if (data_checked_) std::memcpy(p.side->memory(p.side->buffer(), region).data(), pattern.data(), region);
  p.side->set_handler([this, &p](const nic::Cqe& c, bool recv) { on_cqe(p, c, recv); });
  p.start = std::make_unique<sim::Event>([this, &p] { start_due(p); }, "flows.start", h.actor());
  p.stop = std::make_unique<sim::Event>(
      [this, &p] {
        if (!p.finished) finish_part(p);
      },
      "flows.stop", h.actor());
  return p;
}

void FlowsWorkload::open_channels(const Scenario& s, const ChannelPlan& plan, uint64_t region,
                                  const std::vector<std::byte>& pattern) {
  const uint32_t sq = ring_entries(spec_.tx_depth);
  for (uint32_t i = 0; i < plan.channels.size(); ++i) {
    const ChannelPlan::Ends& e = plan.channels[i];
    Channel c;
    c.from = part_of(s, plan, e.from, region, pattern).side.get();
    c.to = part_of(s, plan, e.to, region, pattern).side.get();
    c.recv_total = count_at(plan.recv_need, i);
    const uint32_t rq = ring_entries(std::clamp<uint64_t>(c.recv_total, 1, kRecvAhead));
    c.from_qp = c.from->add_qp(sq, 1);
    c.to_qp = c.to->add_qp(1, rq);
    HostSide::Connection conn = HostSide::connection_of(spec_, path_mtu_, 16);
    conn.priority = e.priority;
    c.from->connect(c.from_qp, *c.to, c.to_qp, conn);
    c.to->connect(c.to_qp, *c.from, c.from_qp, conn);
    channels_.push_back(std::move(c));
  }
}

FlowsWorkload::~FlowsWorkload() = default;

void FlowsWorkload::start(PartDone on_part_done) {
  begin(std::move(on_part_done));
  for (uint32_t c = 0; c < channels_.size(); ++c)
    while (channels_[c].recv_posted < std::min(channels_[c].recv_total, kRecvAhead)) post_recv(c);
  for (Part* p : parts_in_order_) start_due(*p);
  for (Part* p : parts_in_order_) check_done(*p);  // a host with nothing to wait for is done
}

// Posts the host's flows that are due (or queues them behind its channel's
// full send queue), and wakes the host for the next.
void FlowsWorkload::start_due(Part& part) {
  sim::Scheduler& host_clock = clock(part);
  while (part.next < part.order.size() && start_ + flows_[part.order[part.next]].spec.start <= host_clock.now()) {
    const size_t f = part.order[part.next++];
    flows_[f].start = host_clock.now();
    Channel& c = channels_[channel_of_[f]];
    if (c.outstanding < spec_.tx_depth)
      post_flow(f);
    else
      c.waiting.push_back(f);
  }
  if (part.next < part.order.size()) host_clock.schedule(*part.start, start_ + flows_[part.order[part.next]].spec.start);
}

void FlowsWorkload::post_flow(size_t f) {
  Channel& c = channels_[channel_of_[f]];
  const FlowSpec& spec = spec_.flows[f];
  const uint32_t len = static_cast<uint32_t>(spec.size);
  const uint64_t region = c.from->buffer_bytes() / 2;
  nic::SendWqe w{};
  w.wr_id = f;
  w.send_flags = nic::kSendSignaled;
  w.num_sge = 1;
  w.rkey = c.to->rkey();
  w.opcode = op_row(spec.op).opcode;
  switch (op_row(spec.op).shape) {
    case OpShape::Read:
      w.remote_addr = c.to->buffer();
      w.sge[0] = nic::Sge{c.from->buffer() + region, len, c.from->lkey()};
      break;
    default:  // a flow's ops are READ and messages (kWorkloadOps' flows column)
      w.imm_data = __builtin_bswap32(static_cast<uint32_t>(f));
      w.remote_addr = c.to->buffer() + region;
      w.sge[0] = nic::Sge{c.from->buffer(), len, c.from->lkey()};
      break;
  }
  ++c.outstanding;
  c.from->post_send(c.from_qp, w);
}

void FlowsWorkload::post_recv(uint32_t channel) {
  Channel& c = channels_[channel];
  // Room for the largest flow: the receive region.
  nic::RecvWqe r{};
  r.wr_id = channel;
  r.num_sge = 1;
  r.sge[0] = nic::Sge{c.to->buffer() + c.to->buffer_bytes() / 2, static_cast<uint32_t>(c.to->buffer_bytes() / 2),
                      c.to->lkey()};
  c.to->post_recv(c.to_qp, r);
  ++c.recv_posted;
}

uint64_t FlowsWorkload::delivered_bytes() const {
  uint64_t bytes = 0;
  for (const auto& [host, part] : parts_) bytes += part.shipped ? part.shipped->delivered : part.side->payload_placed();
  return bytes;
}

void FlowsWorkload::write_parts(std::span<const size_t> parts, sim::ByteWriter& out) const {
  out.put(uint64_t{parts.size()});
  for (size_t i : parts) {
    const Part& p = *parts_in_order_.at(i);
    out.put(uint64_t{i}), out.put(p.messages), out.put(p.bytes);
    p.latency.write(out);
    out.put(static_cast<uint8_t>(p.finished)), out.put(static_cast<uint8_t>(p.failed)), out.put(p.end);
    out.put_string(p.failure);
    out.put(static_cast<uint8_t>(region_ok(p)));
    out.put(p.side->payload_placed());
    for (size_t f : p.order) out.put(Outcome{flows_[f].start, flows_[f].end, flows_[f].done, flows_[f].fct_us, flows_[f].slowdown});
  }
}

void FlowsWorkload::read_parts(sim::ByteReader& in) {
  const size_t n = in.count(1);
  for (size_t k = 0; k < n; ++k) {
    const auto i = in.take<uint64_t>();
    if (i >= parts_in_order_.size()) throw std::runtime_error("a flows workload's part is out of range");
    Part& p = *parts_in_order_[i];
    p.messages = in.take<uint64_t>(), p.bytes = in.take<uint64_t>();
    p.latency.read(in);
    p.finished = in.take<uint8_t>() != 0, p.failed = in.take<uint8_t>() != 0;
    p.end = in.take<sim::Time>();
    p.failure = in.take_string();
    const bool data_ok = in.take<uint8_t>() != 0;
    p.shipped = Part::Shipped{data_ok, in.take<uint64_t>()};
    for (size_t f : p.order) {
      const auto o = in.take<Outcome>();
      FlowResult& r = flows_[f];
      r.start = o.start, r.end = o.end, r.done = o.done, r.fct_us = o.fct_us, r.slowdown = o.slowdown;
    }
  }
}

uint64_t FlowsWorkload::expected_bytes() const {
  uint64_t bytes = 0;
  for (const FlowSpec& f : spec_.flows) bytes += f.size;
  return bytes;
}

void FlowsWorkload::on_cqe(Part& part, const nic::Cqe& c, bool recv) {
  if (part.finished) return;
  if (c.status != nic::WcStatus::Success) {
    fail_part(part, "completion error on " + part.side->host().name + " (flow " + std::to_string(c.wr_id) +
                        "): " + nic::to_string(c.status));
    return;
  }
  if (recv) {
    ++part.received;
    const uint32_t channel = static_cast<uint32_t>(c.wr_id);
    if (channels_[channel].recv_posted < channels_[channel].recv_total) post_recv(channel);
    check_done(part);
    return;
  }
  FlowResult& r = flows_[c.wr_id];
  r.end = clock(part).now();
  r.done = true;
  r.fct_us = (r.end - r.start).microseconds();
  r.slowdown = r.ideal_us > 0 ? r.fct_us / r.ideal_us : 0;
  part.latency.record(static_cast<uint64_t>((r.end - r.start).picoseconds()));
  ++part.sent;
  ++part.messages;
  part.bytes += r.spec.size;
  Channel& ch = channels_[channel_of_[c.wr_id]];
  --ch.outstanding;
  if (ch.next_waiting < ch.waiting.size()) post_flow(ch.waiting[ch.next_waiting++]);
  check_done(part);
}

// A host is done once it has reaped every completion it waits for.
void FlowsWorkload::check_done(Part& part) {
  if (part.finished || part.sent < part.sends || part.received < part.receives) return;
  finish_part(part);
}

void FlowsWorkload::finish_part(Part& part) {
  part.finished = true;
  part.end = clock(part).now();
  if (on_part_done_) on_part_done_(part.index);
}

// The other hosts stop a control delay later, as they would once told over
// the network: word that crosses to their partitions (World::tell).
void FlowsWorkload::fail_part(Part& part, const std::string& why) {
  part.failed = true;
  part.failure = why;
  finish_part(part);
  const sim::Time when = clock(part).now() + world_.control_delay();
  const uint32_t from = world_.partition_of(part.side->host());
  for (Part* other : parts_in_order_) {
    if (other == &part) continue;
    const fabric::CrossingWord stop{listener_, when, clock(part).next_key(), static_cast<uint32_t>(other->index)};
    world_.tell(from, world_.partition_of(other->side->host()), stop);
  }
}

// Of several failed hosts' words, the earliest stands, in whatever order they came.
void FlowsWorkload::tell_stop(Part& part, sim::Time when, uint64_t key) {
  if (part.finished || (part.stop->scheduled() && std::pair(part.stop->when(), part.stop_key) < std::pair(when, key)))
    return;
  clock(part).cancel(*part.stop);
  clock(part).schedule_keyed(*part.stop, when, key);
  part.stop_key = key;
}

// Once every host is done, each receive region holds the pattern every sender
// sent, as far as the largest flow into it reached: a WRITE's target learns
// nothing of it, so the regions are read here, with no event running. The
// workload's failure is its first part's to fail.
void FlowsWorkload::settle() {
  messages_ = bytes_ = 0;
  latency_ = sim::Histogram();
  bool all = true;
  sim::Time end = start_;
  const Part* first_failure = nullptr;
  for (const Part* p : parts_in_order_) {
    messages_ += p->messages;
    bytes_ += p->bytes;
    latency_.add(p->latency);
    all = all && p->finished;
    if (p->finished) end = std::max(end, p->end);
    if (p->failed && (first_failure == nullptr || p->end < first_failure->end)) first_failure = p;
  }
  if (first_failure != nullptr) {
    failed_ = true;
    failure_ = first_failure->failure;
    data_verified_ = false;
  }
  if (!all || finished_) return;
  finished_ = true;
  end_ = end;
  for (Part* p : parts_in_order_)
    if (!failed_ && !(p->shipped ? p->shipped->data_ok : region_ok(*p))) data_verified_ = false;
}

bool FlowsWorkload::region_ok(const Part& p) const {
  if (!data_checked_ || p.reach == 0) return true;  // nothing to compare
  HostSide& side = *p.side;
  const uint64_t region = side.buffer_bytes() / 2;
  auto sent = side.memory(side.buffer(), p.reach);
  auto got = side.memory(side.buffer() + region, p.reach);
  return std::equal(sent.begin(), sent.end(), got.begin());
}

}  // namespace rnicsim::scenario
