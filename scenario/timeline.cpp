#include "scenario/timeline.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <deque>
#include <stdexcept>
#include <unordered_map>

#include "fabric/port.hpp"
#include "nic_model/nic.hpp"
#include "nic_model/wqe_events.hpp"
#include "packet/pfc.hpp"
#include "packet/syndrome.hpp"
#include "scenario/units.hpp"
#include "scenario/world.hpp"

namespace rnicsim::scenario {

using nic::Psn;
using nic::TimelineEvent;
using nic::TimelineKind;
using sim::Time;

bool TimelineFilter::keeps_qp(std::string_view host, nic::Qpn qpn) const {
  if (qps.empty()) return true;
  return std::any_of(qps.begin(), qps.end(),
                     [&](const TimelineQp& q) { return q.qpn == qpn && (q.host.empty() || q.host == host); });
}

namespace {

std::optional<uint32_t> parse_qpn(std::string_view s) {
  const bool hex = s.starts_with("0x") || s.starts_with("0X");
  if (hex) s.remove_prefix(2);
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, hex ? 16 : 10);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || v > 0xFFFFFF) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::vector<TimelineQp>> parse_timeline_qps(std::string_view text) {
  std::vector<TimelineQp> out;
  while (!text.empty() || out.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    TimelineQp q;
    if (const size_t colon = item.rfind(':'); colon != std::string_view::npos) {
      q.host = std::string(item.substr(0, colon));
      item.remove_prefix(colon + 1);
      if (q.host.empty()) return std::nullopt;
    }
    const auto qpn = parse_qpn(item);
    if (!qpn) return std::nullopt;
    q.qpn = nic::Qpn(*qpn);
    out.push_back(std::move(q));
    if (comma == std::string_view::npos) break;
    if (text.empty()) return std::nullopt;  // a trailing comma
  }
  return out;
}

std::optional<TimelineFilter> parse_timeline_window(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  TimelineFilter f;
  const std::string_view from = text.substr(0, colon), to = text.substr(colon + 1);
  if (!from.empty()) {
    const auto d = parse_duration(from);
    if (!d || d->picoseconds() < 0) return std::nullopt;
    f.start = Time::zero() + *d;
  }
  if (!to.empty()) {
    const auto d = parse_duration(to);
    if (!d || Time::zero() + *d <= f.start) return std::nullopt;
    f.end = Time::zero() + *d;
  }
  return f;
}

namespace {

constexpr std::string_view kWrNames[] = {"RDMA WRITE", "RDMA WRITE with imm", "SEND",          "SEND with imm",
                                         "RDMA READ",  "ATOMIC cmp&swap",     "ATOMIC fetch&add", "LOCAL INV",
                                         "BIND MW",    "SEND with inv"};

std::string_view wr_name(uint8_t opcode) {
  return opcode < std::size(kWrNames) ? kWrNames[opcode] : std::string_view("work request");
}

bool reads_remote(uint8_t opcode) {
  const auto op = static_cast<nic::WrOpcode>(opcode);
  return op == nic::WrOpcode::RdmaRead || op == nic::WrOpcode::AtomicCmpSwap || op == nic::WrOpcode::AtomicFetchAdd;
}

// A NAK's name from its AETH syndrome: RNR, or the NAK code.
std::string nak_name(packet::Syndrome syndrome) {
  if (syndrome.kind() == packet::AckKind::RnrNak) return "RNR NAK";
  return "NAK: " + std::string(syndrome.nak_name());
}

std::string qp_label(nic::Qpn qpn) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "QP 0x%06x", qpn.value());
  return buf;
}

// A send work request on its way through the NIC, from its doorbell on.
struct Wr {
  uint64_t index = 0;  // its slot number in the send ring
  size_t lane = 0;
  Time rung, arrived;
  bool fetched = false, accepted = false, read = false, sent_any = false, sent_all = false;
  bool acked = false, done = false, cqe_pending = false, cqe_written = false, closed = false;
  Time fetch_start, fetch_end, read_start, read_end, first_out, last_out, acked_at, done_at, cqe_start, cqe_end;
  uint64_t wr_id = 0;
  Psn first;
  uint32_t packets = 1, sent_packets = 0, resent = 0;
  uint8_t opcode = 0, status = 0;
  bool signaled = false;
  Psn last_psn() const { return first + (packets - 1); }
  // The last request packet: a READ or atomic sends one, its answer takes the rest of its PSNs.
  Psn last_request() const { return reads_remote(opcode) ? first : last_psn(); }
  bool covers(Psn psn) const {
    return accepted && !done && Psn::distance(first, psn) >= 0 && Psn::distance(psn, last_psn()) >= 0;
  }
};

struct QpTrack {
  bool kept = false;
  int tid = 0;                   // the QP's own track (instants), 0 until used
  std::vector<int> lane_tids;    // tracks of work requests: one per WR in flight at once
  std::vector<bool> lane_busy;
  std::deque<Wr> wrs;            // by ring index
  uint64_t posted = 0;           // the send ring's producer as last rung
};

}  // namespace

class NicTrack : public nic::TimelineSink, public fabric::FrameTap {
public:
  NicTrack(Timeline& owner, Host& host, int pid) : owner_(owner), host_(host), pid_(pid) {
    owner_.writer().process_name(pid_, host_.name + " NIC", pid_);
    host_.nic->set_timeline(this);
    if (host_.port) host_.port->add_tap(this);
  }

  void record(const TimelineEvent& e) override {
    QpTrack* q = track(e.qpn);
    if (q != nullptr) (this->*kHandlers[static_cast<size_t>(e.kind)])(*q, e);
  }

  // Only MAC control frames reach the tap (wants() refuses data): PFC.
  bool wants(uint8_t) const override { return false; }
  void capture(Time when, std::span<const std::byte> bytes, size_t) override;

  // Work requests still open at the end are drawn to now, marked unfinished;
  // the NIC and the port tell nothing more (the tap stays on the port, idle).
  void finish() {
    for (auto& entry : qps_) finish_qp(entry.second, host_.nic->now());
    host_.nic->set_timeline(nullptr);
    finished_ = true;
  }

private:
  using Handler = void (NicTrack::*)(QpTrack&, const TimelineEvent&);
  void doorbell(QpTrack& q, const TimelineEvent& e);
  void fetch(QpTrack& q, const TimelineEvent& e);
  void accepted(QpTrack& q, const TimelineEvent& e);
  void payload_read(QpTrack& q, const TimelineEvent& e);
  void packet_out(QpTrack& q, const TimelineEvent& e);
  void retransmit(QpTrack& q, const TimelineEvent& e);
  void ack(QpTrack& q, const TimelineEvent& e);
  void nak(QpTrack& q, const TimelineEvent& e) { mark(q, e, nak_name(packet::Syndrome(e.code)), psn_args(e)); }
  void timeout(QpTrack& q, const TimelineEvent& e) { mark(q, e, "ACK timeout", psn_args(e)); }
  static sim::TraceArgs psn_args(const TimelineEvent& e) { return sim::TraceArgs().add("psn", e.psn.value()); }
  void wr_done(QpTrack& q, const TimelineEvent& e);
  void cqe(QpTrack& q, const TimelineEvent& e);
  void cnp_sent(QpTrack& q, const TimelineEvent& e) { mark(q, e, "CNP sent", {}); }
  void cnp_received(QpTrack& q, const TimelineEvent& e) { mark(q, e, "CNP received", {}); }
  void poll(QpTrack& q, const TimelineEvent& e);
  static constexpr Handler kHandlers[] = {
      &NicTrack::doorbell, &NicTrack::fetch,   &NicTrack::accepted,  &NicTrack::payload_read,
      &NicTrack::packet_out, &NicTrack::retransmit, &NicTrack::timeout, &NicTrack::ack,
      &NicTrack::nak,      &NicTrack::wr_done, &NicTrack::cqe,       &NicTrack::cnp_sent,
      &NicTrack::cnp_received, &NicTrack::poll};
  static_assert(std::size(kHandlers) == static_cast<size_t>(TimelineKind::Count));

  QpTrack* track(nic::Qpn qpn);
  int qp_tid(nic::Qpn qpn, QpTrack& q);
  size_t take_lane(nic::Qpn qpn, QpTrack& q);
  // An instant on the QP's own track (or a WR lane's), inside the window only.
  void mark(QpTrack& q, const TimelineEvent& e, std::string_view name, const sim::TraceArgs& args);
  void lane_mark(int tid, std::string_view name, Time at, const Wr& w);
  void close(QpTrack& q, Wr& w, Time end, bool unfinished = false);
  void stages(int tid, const Wr& w, Time end);
  Wr* covering(QpTrack& q, Psn psn);
  void finish_qp(QpTrack& q, Time at);

  Timeline& owner_;
  Host& host_;
  int pid_;
  int port_tid_ = 0;
  bool finished_ = false;
  std::unordered_map<nic::Qpn, QpTrack> qps_;
};

QpTrack* NicTrack::track(nic::Qpn qpn) {
  auto [it, fresh] = qps_.try_emplace(qpn);
  if (fresh) it->second.kept = owner_.filter().keeps_qp(host_.name, qpn);
  return it->second.kept ? &it->second : nullptr;
}

int NicTrack::qp_tid(nic::Qpn qpn, QpTrack& q) {
  if (q.tid == 0) {
    q.tid = owner_.next_tid();
    owner_.writer().thread_name(pid_, q.tid, qp_label(qpn), static_cast<int>(qpn.value()) * 64);
  }
  return q.tid;
}

size_t NicTrack::take_lane(nic::Qpn qpn, QpTrack& q) {
  const auto free = std::find(q.lane_busy.begin(), q.lane_busy.end(), false);
  const auto lane = static_cast<size_t>(free - q.lane_busy.begin());
  if (lane == q.lane_busy.size()) {
    q.lane_busy.push_back(false);
    q.lane_tids.push_back(owner_.next_tid());
    const std::string name = qp_label(qpn) + " WRs" + (lane == 0 ? "" : " (" + std::to_string(lane + 1) + ")");
    owner_.writer().thread_name(pid_, q.lane_tids.back(), name,
                                static_cast<int>(qpn.value()) * 64 + static_cast<int>(std::min<size_t>(lane + 1, 63)));
  }
  q.lane_busy[lane] = true;
  return lane;
}

Wr* NicTrack::covering(QpTrack& q, Psn psn) {
  for (Wr& w : q.wrs)
    if (w.covers(psn)) return &w;
  return nullptr;
}

void NicTrack::mark(QpTrack& q, const TimelineEvent& e, std::string_view name, const sim::TraceArgs& args) {
  if (!owner_.filter().keeps(e.start, e.start)) return;
  owner_.writer().instant(pid_, qp_tid(e.qpn, q), name, "qp", e.start, args);
}

void NicTrack::lane_mark(int tid, std::string_view name, Time at, const Wr& w) {
  if (owner_.filter().keeps(at, at))
    owner_.writer().instant(pid_, tid, name, "packet", at, sim::TraceArgs().add("psn", w.first.value()));
}

void NicTrack::doorbell(QpTrack& q, const TimelineEvent& e) {
  if (e.queue != nic::QueueKind::Send) return;
  if (e.index < q.posted) {  // the QP went through RESET: its ring starts again at 0
    finish_qp(q, e.start);
    q.posted = 0;
  }
  for (uint64_t i = q.posted; i < e.index; ++i) {
    Wr& w = q.wrs.emplace_back();
    w.index = i;
    w.rung = e.start;
    w.arrived = e.end;
    w.lane = take_lane(e.qpn, q);
  }
  q.posted = e.index;
}

void NicTrack::fetch(QpTrack& q, const TimelineEvent& e) {
  if (e.queue != nic::QueueKind::Send) return;
  for (Wr& w : q.wrs)
    if (w.index >= e.index && w.index < e.index + e.count) {
      w.fetched = true;
      w.fetch_start = e.start;
      w.fetch_end = e.end;
    }
}

void NicTrack::accepted(QpTrack& q, const TimelineEvent& e) {
  // WQEs reach the requester in ring order: this is the oldest not yet there.
  const auto w = std::find_if(q.wrs.begin(), q.wrs.end(), [](const Wr& x) { return !x.accepted; });
  if (w == q.wrs.end()) return;
  w->accepted = true;
  w->first = e.psn;
  w->packets = std::max<uint32_t>(e.count, 1);
  w->wr_id = e.wr_id;
  w->signaled = e.flag;
  w->opcode = e.code;
}

void NicTrack::payload_read(QpTrack& q, const TimelineEvent& e) {
  Wr* w = covering(q, e.psn);
  if (w == nullptr || w->sent_all) return;  // a retransmission's read is not the WR's first pass
  if (!w->read) w->read_start = e.start;
  w->read = true;
  w->read_end = e.end;
}

void NicTrack::packet_out(QpTrack& q, const TimelineEvent& e) {
  Wr* w = covering(q, e.psn);
  if (w == nullptr) return;
  const auto offset = static_cast<uint32_t>(Psn::distance(w->first, e.psn));
  if (offset < w->sent_packets) {
    ++w->resent;
    return;
  }
  w->sent_packets = offset + 1;
  const int tid = q.lane_tids[w->lane];
  const bool last = e.psn == w->last_request();
  if (!w->sent_any) {
    w->sent_any = true;
    w->first_out = e.start;
    lane_mark(tid, last ? "first and last packet" : "first packet", e.start, *w);
  } else if (last) {
    lane_mark(tid, "last packet", e.start, *w);
  }
  if (last) {
    w->sent_all = true;
    w->last_out = e.start;
  }
}

void NicTrack::retransmit(QpTrack& q, const TimelineEvent& e) {
  mark(q, e, e.count == 1 ? "retransmit" : "retransmit (go-back-N)",
       sim::TraceArgs().add("psn", e.psn.value()).add("packets", e.count));
}

void NicTrack::ack(QpTrack& q, const TimelineEvent& e) {
  for (Wr& w : q.wrs)
    if (w.sent_all && !w.acked && !reads_remote(w.opcode) && Psn::distance(w.last_psn(), e.psn) >= 0) {
      w.acked = true;
      w.acked_at = e.start;
    }
}

void NicTrack::wr_done(QpTrack& q, const TimelineEvent& e) {
  const auto w = std::find_if(q.wrs.begin(), q.wrs.end(),
                              [&](const Wr& x) { return x.covers(e.psn) && x.first == e.psn && x.wr_id == e.wr_id; });
  if (w == q.wrs.end()) return;
  w->done = true;
  w->done_at = e.start;
  w->status = e.code;
  // A CQE follows for signaled work and for every error; else the WR ends here.
  w->cqe_pending = w->signaled || e.code != 0;
  if (!w->cqe_pending) close(q, *w, e.start);
}

void NicTrack::cqe(QpTrack& q, const TimelineEvent& e) {
  if (!e.flag) {
    mark(q, {.kind = e.kind, .qpn = e.qpn, .start = e.end}, "receive CQE",
         sim::TraceArgs().add_hex("wr_id", e.wr_id).add("status", nic::to_string(static_cast<nic::WcStatus>(e.code))));
    return;
  }
  const auto w = std::find_if(q.wrs.begin(), q.wrs.end(),
                              [&](const Wr& x) { return x.cqe_pending && !x.closed && x.wr_id == e.wr_id; });
  if (w == q.wrs.end()) return;
  w->cqe_written = true;
  w->cqe_start = e.start;
  w->cqe_end = e.end;
  close(q, *w, e.end);
}

void NicTrack::poll(QpTrack& q, const TimelineEvent& e) {
  mark(q, e, e.flag ? "poll: send CQE" : "poll: receive CQE", sim::TraceArgs().add_hex("wr_id", e.wr_id));
}

void NicTrack::finish_qp(QpTrack& q, Time at) {
  for (Wr& w : q.wrs)
    if (!w.closed) close(q, w, std::max(at, w.rung), true);
  q.wrs.clear();
}

// The WR's span on its lane, its stages nested in it, then the lane is free.
void NicTrack::close(QpTrack& q, Wr& w, Time end, bool unfinished) {
  w.closed = true;
  q.lane_busy[w.lane] = false;
  if (owner_.filter().keeps(w.rung, end)) {
    sim::TraceArgs args;
    args.add_hex("wr_id", w.wr_id).add("ring_index", w.index);
    if (w.accepted) args.add("psn", w.first.value()).add("packets", w.packets);
    if (w.resent > 0) args.add("packets_resent", w.resent);
    if (w.done) args.add("status", nic::to_string(static_cast<nic::WcStatus>(w.status)));
    if (unfinished) args.add("unfinished", "the run ended first");
    const int tid = q.lane_tids[w.lane];
    owner_.writer().complete(pid_, tid, w.accepted ? wr_name(w.opcode) : "work request", "wr", w.rung, end, args);
    stages(tid, w, end);
  }
  while (!q.wrs.empty() && q.wrs.front().closed) q.wrs.pop_front();
}

// Stages one after another, each clamped inside the WR's span and after the
// one before it, so the nesting holds whatever the NIC's order.
void NicTrack::stages(int tid, const Wr& w, Time end) {
  Time cursor = w.rung;
  auto stage = [&](bool happened, std::string_view name, Time a, Time b) {
    if (!happened) return;
    a = std::clamp(a, cursor, end);
    b = std::clamp(b, a, end);
    owner_.writer().complete(pid_, tid, name, "stage", a, b);
    cursor = b;
  };
  stage(true, "doorbell", w.rung, w.arrived);
  stage(w.fetched, "WQE fetch", w.fetch_start, w.fetch_end);
  if (w.sent_any) {
    const Time tx_start = std::clamp(w.read ? std::min(w.read_start, w.first_out) : w.first_out, cursor, end);
    const Time tx_end = std::clamp(w.sent_all ? w.last_out : end, tx_start, end);
    owner_.writer().complete(pid_, tid, "transmit", "stage", tx_start, tx_end);
    if (w.read) {
      const Time r_start = std::clamp(w.read_start, tx_start, tx_end);
      const Time r_end = std::clamp(w.read_end, r_start, tx_end);
      owner_.writer().complete(pid_, tid, "payload DMA read", "stage", r_start, r_end);
    }
    cursor = tx_end;
  }
  const bool answered = reads_remote(w.opcode) ? w.done : w.acked;
  stage(w.sent_all && answered, reads_remote(w.opcode) ? "response wait" : "ACK wait", w.last_out,
        reads_remote(w.opcode) ? w.done_at : w.acked_at);
  stage(w.cqe_written, "CQE write", w.cqe_start, w.cqe_end);
}

void NicTrack::capture(Time when, std::span<const std::byte> bytes, size_t) {
  const auto pfc = packet::parse_pfc(bytes);
  if (finished_ || !pfc || !owner_.filter().keeps(when, when) || !owner_.filter().qps.empty()) return;
  const bool sent = pfc->src == host_.nic->config().mac;
  sim::TraceArgs args;
  bool pause = false;
  for (size_t p = 0; p < 8; ++p)
    if ((pfc->enable >> p) & 1) {
      args.add("quanta_priority_" + std::to_string(p), pfc->quanta[p]);
      pause |= pfc->quanta[p] > 0;
    }
  if (port_tid_ == 0) {
    port_tid_ = owner_.next_tid();
    owner_.writer().thread_name(pid_, port_tid_, "port (PFC)", 0);
  }
  static constexpr std::string_view kNames[2][2] = {{"PFC XON received", "PFC pause received"},
                                                    {"PFC XON sent", "PFC pause sent"}};
  owner_.writer().instant(pid_, port_tid_, kNames[sent][pause], "pfc", when, args);
}

Timeline::Timeline(const std::string& path, TimelineFilter filter)
    : file_(std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc)), filter_(std::move(filter)) {
  if (!*file_) throw std::runtime_error("cannot write the timeline " + path);
  writer_ = std::make_unique<sim::TraceEventWriter>(*file_);
}

Timeline::Timeline(std::ostream& out, TimelineFilter filter)
    : writer_(std::make_unique<sim::TraceEventWriter>(out)), filter_(std::move(filter)) {}

Timeline::~Timeline() { finish(); }

void Timeline::attach(Host& host) {
  nics_.push_back(std::make_unique<NicTrack>(*this, host, static_cast<int>(nics_.size()) + 1));
}

void Timeline::finish() {
  if (finished_) return;
  finished_ = true;
  for (auto& n : nics_) n->finish();
  writer_->finish();
}

}  // namespace rnicsim::scenario
