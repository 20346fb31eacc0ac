#include "cm/connection_manager.hpp"

#include <algorithm>
#include <cstring>

namespace rnicsim::cm {

struct ConnectionManager::Conn {
  CommId id = 0;
  uint32_t remote = 0;  // the peer's communication ID (its request ID for SIDR)
  CmUser* user = nullptr;
  State state = State::ReqSent;
  nic::AddressVector to;
  MadSource peer;
  uint64_t tid = 0;
  uint8_t packet_life_time = 18;
  uint8_t remote_timeout = 20;  // the peer's CM response timeout
  uint8_t max_retries = 15;
  uint8_t retries_left = 0;
  sim::Duration extra_wait = sim::Duration::zero();  // an MRA's service timeout
  std::optional<Message> last;  // what the timer resends, or what a duplicate asks for again
  std::unique_ptr<sim::Event> timer;
};

namespace {

// 4.096 us x 2^t, the unit of every CM timeout field.
sim::Duration cm_time(uint8_t t) { return sim::Duration::ns(int64_t{4096} << std::min<uint8_t>(t, 31)); }

template <size_t N>
std::array<uint8_t, N> private_bytes(std::span<const uint8_t> in) {
  std::array<uint8_t, N> out{};
  if (!in.empty()) std::memcpy(out.data(), in.data(), std::min(N, in.size()));
  return out;
}

}  // namespace

ConnectionManager::ConnectionManager(sim::Simulator& sim, nic::Nic& nic, AgentMemory mem, Resolver resolve)
    : sim_(sim), actor_(nic.config().actor), agent_(nic, mem, *this), resolve_(std::move(resolve)) {
  // Communication IDs start at a seeded value, as the kernel's are random.
  next_id_ = static_cast<CommId>(sim.random(nic.name() + ".cm").next_u64()) | 1;
}

ConnectionManager::~ConnectionManager() = default;

bool ConnectionManager::listen(uint64_t service_id, CmUser& user) {
  return listeners_.emplace(service_id, &user).second;
}

void ConnectionManager::stop_listening(uint64_t service_id) { listeners_.erase(service_id); }

ConnectionManager::Conn* ConnectionManager::find(CommId id) {
  auto it = conns_.find(id);
  return it == conns_.end() ? nullptr : it->second.get();
}

ConnectionManager::Conn* ConnectionManager::by_remote(uint32_t remote, const MadSource& from) {
  for (auto& [id, c] : conns_)
    if (c->remote == remote && c->peer.gid == from.gid && c->peer.lid == from.lid) return c.get();
  return nullptr;
}

ConnectionManager::Conn& ConnectionManager::add(CmUser* user, State state) {
  auto c = std::make_unique<Conn>();
  while (next_id_ == 0 || conns_.contains(next_id_)) ++next_id_;
  c->id = next_id_++;
  c->user = user;
  c->state = state;
  c->tid = next_tid_++;
  Conn* raw = c.get();
  c->timer = std::make_unique<sim::Event>([this, raw] { on_timer(*raw); }, "cm.timeout", actor_);
  return *conns_.emplace(raw->id, std::move(c)).first->second;
}

void ConnectionManager::release(CommId id) { conns_.erase(id); }

void ConnectionManager::hand_over(CommId id, CmUser& user) {
  if (Conn* c = find(id)) c->user = &user;
}

ConnectionManager::Conn* ConnectionManager::passive(CmUser* user, State state, uint32_t remote,
                                                    const MadSource& from, uint64_t tid) {
  auto av = resolve_(from);
  if (!av) {  // a port this agent cannot answer
    ++unmatched_;
    return nullptr;
  }
  Conn& c = add(user, state);
  c.remote = remote;
  c.peer = from;
  c.to = *av;
  c.tid = tid;  // its answers are in the request's transaction
  return &c;
}

sim::Duration ConnectionManager::wait_for(const Conn& c) const {
  return cm_time(c.packet_life_time) * 2 + cm_time(c.remote_timeout) + c.extra_wait;
}

void ConnectionManager::send(Conn& c, Message m, bool retry) {
  agent_.send(Mad{c.tid, 0, m}, c.to);
  c.last = std::move(m);
  sim_.scheduler().cancel(*c.timer);
  if (!retry) return;
  c.retries_left = c.max_retries;
  c.extra_wait = sim::Duration::zero();
  sim_.scheduler().schedule(*c.timer, sim_.now() + wait_for(c));
}

void ConnectionManager::reply(const MadSource& to, uint64_t tid, Message m) {
  if (auto av = resolve_(to)) agent_.send(Mad{tid, 0, std::move(m)}, *av);
}

void ConnectionManager::enter_timewait(Conn& c) {
  c.state = State::TimeWait;
  c.last.reset();
  sim_.scheduler().cancel(*c.timer);
  sim_.scheduler().schedule(*c.timer, sim_.now() + cm_time(static_cast<uint8_t>(c.packet_life_time + 1)));
}

void ConnectionManager::on_timer(Conn& c) {
  if (c.state == State::TimeWait) {
    CmUser* user = c.user;
    const CommId id = c.id;
    release(id);
    user->on_timewait_exit(id);
    return;
  }
  if (c.retries_left > 0 && c.last) {
    --c.retries_left;
    ++retransmissions_;
    c.extra_wait = sim::Duration::zero();
    agent_.send(Mad{c.tid, 0, *c.last}, c.to);
    sim_.scheduler().schedule(*c.timer, sim_.now() + wait_for(c));
    return;
  }
  CmUser* user = c.user;
  const CommId id = c.id;
  switch (c.state) {
    case State::DreqSent:
      enter_timewait(c);
      user->on_disconnected(id);
      return;
    case State::SidrReqSent:
      release(id);
      user->on_sidr_timeout(id);
      return;
    default:
      release(id);
      user->on_timeout(id);
  }
}

// --- the active side ---

CommId ConnectionManager::connect(Req req, const PathTo& path, CmUser& user) {
  Conn& c = add(&user, State::ReqSent);
  req.local_comm_id = c.id;
  req.primary.local_gid = path.local_gid;
  req.primary.remote_gid = path.remote_gid;
  req.primary.local_lid = path.local_lid;
  req.primary.remote_lid = path.remote_lid;
  req.primary.flow_label = path.flow_label;
  req.primary.traffic_class = path.traffic_class;
  // The passive end derives the path's packet lifetime from this (the
  // kernel's CM sends the lifetime plus one, the ACK delay being small).
  if (req.primary.local_ack_timeout == 0) req.primary.local_ack_timeout = std::min<uint8_t>(path.packet_life_time + 1, 31);
  c.to = path.av;
  c.peer.gid = path.remote_gid;
  c.peer.lid = path.remote_lid == 0xFFFF ? 0 : path.remote_lid;
  c.packet_life_time = path.packet_life_time;
  c.remote_timeout = req.remote_cm_response_timeout;
  c.max_retries = req.max_cm_retries;
  send(c, req, true);
  return c.id;
}

bool ConnectionManager::ready_to_use(CommId id, std::span<const uint8_t> private_data) {
  Conn* c = find(id);
  if (c == nullptr || c->state != State::RepRcvd) return false;
  c->state = State::Established;
  send(*c, Rtu{c->id, c->remote, private_bytes<kRtuPrivate>(private_data)}, false);
  return true;
}

void ConnectionManager::on_rep(const Rep& m) {
  Conn* c = find(m.remote_comm_id);
  if (c == nullptr) {
    ++unmatched_;
    return;
  }
  if (c->state == State::Established && c->last) {  // our RTU was lost: the peer resends its REP
    agent_.send(Mad{c->tid, 0, *c->last}, c->to);
    return;
  }
  if (c->state != State::ReqSent) return;
  sim_.scheduler().cancel(*c->timer);
  c->remote = m.local_comm_id;
  c->state = State::RepRcvd;
  c->user->on_reply(c->id, m);
}

// --- the passive side ---

void ConnectionManager::on_req(const Req& m, const MadSource& from, uint64_t tid) {
  if (Conn* dup = by_remote(m.local_comm_id, from)) {  // a retry: our REP (if any) was lost
    if (dup->state == State::RepSent && dup->last) agent_.send(Mad{dup->tid, 0, *dup->last}, dup->to);
    return;
  }
  auto l = listeners_.find(m.service_id);
  if (l == listeners_.end()) {
    Rej r;
    r.remote_comm_id = m.local_comm_id;
    r.message_rejected = 0;
    r.reason = kRejInvalidServiceId;
    reply(from, tid, r);
    return;
  }
  Conn* added = passive(l->second, State::ReqRcvd, m.local_comm_id, from, tid);
  if (added == nullptr) return;
  Conn& c = *added;
  c.remote_timeout = m.local_cm_response_timeout;
  c.max_retries = m.max_cm_retries;
  c.packet_life_time = m.primary.local_ack_timeout > 0 ? m.primary.local_ack_timeout - 1 : 0;
  c.user->on_request(c.id, m, from);
}

bool ConnectionManager::accept(CommId id, Rep rep) {
  Conn* c = find(id);
  if (c == nullptr || c->state != State::ReqRcvd) return false;
  rep.local_comm_id = c->id;
  rep.remote_comm_id = c->remote;
  c->state = State::RepSent;
  send(*c, rep, true);
  return true;
}

void ConnectionManager::on_rtu(const Rtu& m) {
  Conn* c = find(m.remote_comm_id);
  if (c == nullptr) {
    ++unmatched_;
    return;
  }
  if (c->state != State::RepSent) return;
  established(c->id);
}

bool ConnectionManager::established(CommId id) {
  Conn* c = find(id);
  if (c == nullptr || c->state != State::RepSent) return false;
  sim_.scheduler().cancel(*c->timer);
  c->state = State::Established;
  c->user->on_established(id);
  return true;
}

// --- rejection ---

bool ConnectionManager::reject(CommId id, uint16_t reason, std::span<const uint8_t> private_data) {
  Conn* c = find(id);
  if (c == nullptr || (c->state != State::ReqRcvd && c->state != State::RepRcvd)) return false;
  Rej r;
  r.local_comm_id = c->id;
  r.remote_comm_id = c->remote;
  r.message_rejected = c->state == State::ReqRcvd ? 0 : 1;
  r.reason = reason;
  r.private_data = private_bytes<kRejPrivate>(private_data);
  send(*c, r, false);
  release(id);
  return true;
}

void ConnectionManager::on_rej(const Rej& m) {
  Conn* c = find(m.remote_comm_id);
  if (c == nullptr || (c->state != State::ReqSent && c->state != State::RepSent && c->state != State::RepRcvd)) {
    ++unmatched_;
    return;
  }
  CmUser* user = c->user;
  const CommId id = c->id;
  release(id);
  user->on_rejected(id, m);
}

void ConnectionManager::on_mra(const Mra& m) {
  Conn* c = find(m.remote_comm_id);
  if (c == nullptr || !c->timer->scheduled()) return;
  // The peer needs longer: wait its service timeout as well before the next try.
  c->extra_wait = cm_time(m.service_timeout);
  sim_.scheduler().cancel(*c->timer);
  sim_.scheduler().schedule(*c->timer, sim_.now() + wait_for(*c));
}

// --- disconnection ---

bool ConnectionManager::disconnect(CommId id, std::span<const uint8_t> private_data) {
  Conn* c = find(id);
  if (c == nullptr) return false;
  if (c->state == State::TimeWait || c->state == State::DreqSent) return true;
  if (c->state != State::Established) return false;
  c->state = State::DreqSent;
  Dreq d;
  d.local_comm_id = c->id;
  d.remote_comm_id = c->remote;
  d.private_data = private_bytes<kDreqPrivate>(private_data);
  send(*c, d, true);
  return true;
}

void ConnectionManager::on_dreq(const Dreq& m, const MadSource& from, uint64_t tid) {
  Conn* c = find(m.remote_comm_id);
  Drep r;
  r.remote_comm_id = m.local_comm_id;
  if (c == nullptr) {  // long gone: answer anyway, so the peer stops asking
    reply(from, tid, r);
    return;
  }
  r.local_comm_id = c->id;
  agent_.send(Mad{tid, 0, r}, c->to);
  if (c->state == State::Established || c->state == State::DreqSent) {
    enter_timewait(*c);  // the DREP is sent
    c->user->on_disconnect_request(c->id, m);
  }
}

void ConnectionManager::on_drep(const Drep& m) {
  Conn* c = find(m.remote_comm_id);
  if (c == nullptr || c->state != State::DreqSent) {
    ++unmatched_;
    return;
  }
  enter_timewait(*c);
  c->user->on_disconnected(c->id);
}

// --- service ID resolution (UD) ---

CommId ConnectionManager::sidr_request(SidrReq req, const PathTo& path, CmUser& user) {
  Conn& c = add(&user, State::SidrReqSent);
  req.request_id = c.id;
  c.to = path.av;
  c.peer.gid = path.remote_gid;
  c.packet_life_time = path.packet_life_time;
  send(c, req, true);
  return c.id;
}

void ConnectionManager::on_sidr_req(const SidrReq& m, const MadSource& from, uint64_t tid) {
  auto l = listeners_.find(m.service_id);
  if (l == listeners_.end()) {
    SidrRep r;
    r.request_id = m.request_id;
    r.status = 1;  // service ID not supported
    r.service_id = m.service_id;
    reply(from, tid, r);
    return;
  }
  if (Conn* c = passive(l->second, State::SidrReqRcvd, m.request_id, from, tid))
    c->user->on_sidr_request(c->id, m, from);
}

bool ConnectionManager::sidr_reply(CommId id, SidrRep rep) {
  Conn* c = find(id);
  if (c == nullptr || c->state != State::SidrReqRcvd) return false;
  rep.request_id = c->remote;
  agent_.send(Mad{c->tid, 0, rep}, c->to);
  release(id);
  return true;
}

void ConnectionManager::on_sidr_rep(const SidrRep& m) {
  Conn* c = find(m.request_id);
  if (c == nullptr || c->state != State::SidrReqSent) {
    ++unmatched_;
    return;
  }
  CmUser* user = c->user;
  const CommId id = c->id;
  release(id);
  user->on_sidr_reply(id, m);
}

// --- dispatch: one handler per message type ---

void ConnectionManager::on_mad(const Mad& mad, const MadSource& from) {
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, Req>) on_req(m, from, mad.transaction_id);
        else if constexpr (std::is_same_v<T, Rep>) on_rep(m);
        else if constexpr (std::is_same_v<T, Rtu>) on_rtu(m);
        else if constexpr (std::is_same_v<T, Rej>) on_rej(m);
        else if constexpr (std::is_same_v<T, Mra>) on_mra(m);
        else if constexpr (std::is_same_v<T, Dreq>) on_dreq(m, from, mad.transaction_id);
        else if constexpr (std::is_same_v<T, Drep>) on_drep(m);
        else if constexpr (std::is_same_v<T, SidrReq>) on_sidr_req(m, from, mad.transaction_id);
        else if constexpr (std::is_same_v<T, SidrRep>) on_sidr_rep(m);
      },
      mad.message);
}

}  // namespace rnicsim::cm
