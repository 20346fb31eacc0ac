#include "emulation/rdma_cm.hpp"

#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ostream>

namespace rnicsim::emulation {

namespace proto = verbs_proto;
using proto::Op;

namespace {

constexpr uint8_t kCmResponseTimeout = 20;  // the RDMA CM's (4.096 us x 2^20, about 4.3 s)
constexpr uint8_t kMaxCmRetries = 15;
constexpr uint8_t kPacketLifeTime = 18;     // RoCE: no SA to ask, the RDMA CM's constant
constexpr packet::Qkey kUdpQkey{0x01234567};  // RDMA_UDP_QKEY
constexpr size_t kReqUserPrivate = cm::kReqPrivate - cm::kIpHeaderBytes;          // 56
constexpr size_t kSidrUserPrivate = cm::kSidrReqPrivate - cm::kIpHeaderBytes;     // 180

// The address of a host as the RDMA CM names it: IPv4 if IPv4-mapped.
proto::CmAddr cm_addr(const packet::Ipv6Addr& ip, uint16_t port) {
  proto::CmAddr a;
  a.port = port;
  const bool v4 = std::all_of(ip.begin(), ip.begin() + 10, [](uint8_t b) { return b == 0; }) && ip[10] == 0xFF &&
                  ip[11] == 0xFF;
  a.family = v4 ? AF_INET : AF_INET6;
  if (v4) std::memcpy(a.addr, ip.data() + 12, 4);
  else std::memcpy(a.addr, ip.data(), 16);
  return a;
}

packet::Ipv6Addr ip_of(const proto::CmAddr& a) {
  packet::Ipv6Addr ip{};
  if (a.family == AF_INET) {
    ip[10] = ip[11] = 0xFF;
    std::memcpy(ip.data() + 12, a.addr, 4);
  } else {
    std::memcpy(ip.data(), a.addr, 16);
  }
  return ip;
}

bool is_any(const proto::CmAddr& a) {
  return std::all_of(std::begin(a.addr), std::end(a.addr), [](uint8_t b) { return b == 0; });
}

bool is_loopback(const proto::CmAddr& a) { return a.family == AF_INET && a.addr[0] == 127; }

bool is_multicast(const proto::CmAddr& a) {
  return (a.family == AF_INET && (a.addr[0] >> 4) == 0xE) || (a.family == AF_INET6 && a.addr[0] == 0xFF);
}

// What a REQ or a REP tells the program of its peer (its rdma_conn_param).
template <class Message>
void take_conn_param(proto::CmEventWire& e, const Message& m) {
  e.qp_num = m.local_qpn.value();
  e.responder_resources = m.responder_resources;
  e.initiator_depth = m.initiator_depth;
  e.flow_control = m.end_to_end_flow_control;
  e.rnr_retry_count = m.rnr_retry_count;
  e.srq = m.srq;
}

const char* port_space_name(uint32_t ps) {
  switch (ps) {
    case RDMA_PS_TCP: return "TCP";
    case RDMA_PS_UDP: return "UDP";
    case RDMA_PS_IB: return "IB";
    default: return "IPoIB";
  }
}

}  // namespace

enum class RdmaCm::Want : uint8_t { None, Connection, Sidr };

struct RdmaCm::Id : cm::CmUser {
  explicit Id(RdmaCm& cm) : owner(cm) {}

  RdmaCm& owner;
  uint32_t number = 0;
  int session = -1;
  uint32_t channel = 0;
  uint32_t port_space = RDMA_PS_TCP;
  uint32_t qp_type = IBV_QPT_RC;
  proto::CmAddr src, dst;
  bool bound = false, addr_resolved = false, route_resolved = false, listening = false;
  bool accepted = false;  // made for a connection request: it has its listener's port, not a bind of its own
  std::optional<cm::CommId> comm;
  Want want = Want::None;
  // What the CM negotiated, for init_qp_attr.
  packet::Psn local_psn{}, remote_psn{};
  std::optional<packet::Qpn> remote_qpn;  // once connected
  uint8_t responder_resources = 0, initiator_depth = 0, retry_count = 7, rnr_retry_count = 7, path_mtu = IBV_MTU_1024;
  nic::AddressVector peer_av;
  packet::Ipv6Addr peer_gid{};
  uint16_t peer_lid = 0;
  // rdma_set_option: TOS (the traffic class of the path; a passive id takes
  // its REQ's), the bind rules' REUSEADDR and AFONLY, the QP's ACK timeout.
  uint8_t traffic_class = 0;
  bool reuse_addr = false, af_only = false, af_only_set = false;
  std::optional<uint8_t> ack_timeout;
  std::unique_ptr<sim::Event> addr_timer;  // ADDR_ERROR when no host has the address

  // --- cm::CmUser: what the IB CM tells of the connection `c` ---
  // A listener hears of requests; an id of its own connection only.
  void on_request(cm::CommId c, const cm::Req& r, const cm::MadSource& from) override {
    owner.on_request(*this, c, r, from);
  }
  void on_sidr_request(cm::CommId c, const cm::SidrReq& r, const cm::MadSource& from) override {
    owner.on_sidr_request(*this, c, r, from);
  }
  void on_reply(cm::CommId c, const cm::Rep& r) override {
    if (comm == c) owner.on_reply(*this, r);
  }
  void on_established(cm::CommId c) override { tell(c, RDMA_CM_EVENT_ESTABLISHED, 0, false); }
  void on_disconnect_request(cm::CommId c, const cm::Dreq&) override { tell(c, RDMA_CM_EVENT_DISCONNECTED, 0, false); }
  void on_disconnected(cm::CommId c) override { tell(c, RDMA_CM_EVENT_DISCONNECTED, 0, false); }
  // The connection is over: the CM has forgotten it.
  void on_rejected(cm::CommId c, const cm::Rej& r) override {
    if (ended(c)) owner.on_rejected(*this, r);
  }
  void on_timeout(cm::CommId c) override { tell(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, true); }
  void on_timewait_exit(cm::CommId c) override { tell(c, RDMA_CM_EVENT_TIMEWAIT_EXIT, 0, true); }
  void on_sidr_reply(cm::CommId c, const cm::SidrRep& r) override {
    if (ended(c)) owner.on_sidr_reply(*this, r);
  }
  void on_sidr_timeout(cm::CommId c) override { tell(c, RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, true); }

  bool ended(cm::CommId c) {
    if (comm != c) return false;
    comm.reset();
    return true;
  }
  // The event of the connection `c` if it is this id's (`over`: the CM forgot it).
  void tell(cm::CommId c, int event, int status, bool over) {
    if (comm != c) return;
    if (over) comm.reset();
    owner.emit(*this, owner.event_for(*this, event, status));
  }
};

RdmaCm::RdmaCm(scenario::World& world, size_t host, ProcessSpaces& memory, std::ostream& log)
    : world_(world),
      host_(host),
      log_(log),
      agent_memory_(cm::MadAgent::kMemoryBytes),
      random_(world.sim().random(world.hosts()[host]->name + ".rdma_cm")) {
  memory.add_segment(ProcessSpaces::kDaemon, kAgentAddress, agent_memory_.data(), agent_memory_.size());
  cm_ = std::make_unique<cm::ConnectionManager>(world.sim(), *world.hosts()[host]->nic,
                                                cm::AgentMemory{kAgentAddress, agent_memory_},
                                                [this](const cm::MadSource& s) { return resolve(s); });
  // Ephemeral ports from a seeded start, as the kernel's are random.
  next_port_ = static_cast<uint16_t>(32768 + random_.next_u64() % 28000);
}

RdmaCm::~RdmaCm() {
  for (auto& [n, fd] : channels_) close(fd);
}

std::optional<nic::AddressVector> RdmaCm::resolve(const cm::MadSource& from) const {
  return world_.address_of(from.gid, from.lid);
}

bool RdmaCm::ib() const { return packet::is_ib(world_.hosts()[host_]->nic->config().link); }

// How the program reaches a peer's UD QP (param.ud.ah_attr): GID and LID, a
// GRH on RoCE.
proto::AhWire RdmaCm::ah_to(const packet::Ipv6Addr& gid, uint16_t lid, uint8_t traffic_class) const {
  proto::AhWire a;
  a.traffic_class = traffic_class;
  std::memcpy(a.dgid, gid.data(), 16);
  a.dlid = lid;
  a.is_global = ib() ? 0 : 1;
  a.hop_limit = 64;
  a.port_num = 1;
  return a;
}

packet::Ipv6Addr RdmaCm::ip_address(size_t host) const {
  return scenario::network_address(*world_.hosts()[host], host);
}

std::optional<size_t> RdmaCm::host_of(const proto::CmAddr& a) const {
  if (is_loopback(a)) return host_;
  const packet::Ipv6Addr ip = ip_of(a);
  for (size_t i = 0; i < world_.hosts().size(); ++i)
    if (ip_address(i) == ip) return i;
  return std::nullopt;
}

packet::Psn RdmaCm::next_psn() { return packet::Psn(static_cast<uint32_t>(random_.next_u64())); }

RdmaCm::Id* RdmaCm::id_of(int session, uint32_t number) {
  auto it = ids_.find(number);
  return it == ids_.end() || it->second->session != session ? nullptr : it->second.get();
}

RdmaCm::Id& RdmaCm::add(int session, uint32_t channel, uint32_t port_space, uint32_t qp_type) {
  auto id = std::make_unique<Id>(*this);
  id->number = next_id_++;
  id->session = session;
  id->channel = channel;
  id->port_space = port_space;
  id->qp_type = qp_type;
  id->local_psn = next_psn();
  Id* raw = id.get();
  id->addr_timer = std::make_unique<sim::Event>(
      [this, raw] { emit(*raw, event_for(*raw, RDMA_CM_EVENT_ADDR_ERROR, -ETIMEDOUT)); }, "rdma_cm.addr_timeout");
  return *ids_.emplace(raw->number, std::move(id)).first->second;
}

void RdmaCm::forget_comm(Id& id) {
  if (!id.comm) return;
  cm_->release(*id.comm);
  id.comm.reset();
}

bool RdmaCm::port_used(uint32_t port_space, uint16_t port) const {
  for (const auto& [n, id] : ids_)
    if (id->bound && !id->accepted && id->port_space == port_space && id->src.port == port) return true;
  return false;
}

// The kernel's rule (cma_check_port) for `id` taking `addr` and its port:
// ids that both set REUSEADDR share it (`reuse`; not when one listens), two
// AFONLY ids of different families too; a wildcard meets every address
// (EADDRNOTAVAIL), an address itself (EADDRINUSE).
int RdmaCm::port_conflict(const Id& id, const proto::CmAddr& addr, bool reuse) const {
  for (const auto& [n, other] : ids_) {
    const Id& o = *other;
    if (&o == &id || !o.bound || o.accepted || o.port_space != id.port_space || o.src.port != addr.port) continue;
    if (reuse && id.reuse_addr && o.reuse_addr) continue;
    if (id.af_only && o.af_only && addr.family != o.src.family) continue;
    if (is_any(addr) || is_any(o.src)) return EADDRNOTAVAIL;
    if (addr.family == o.src.family && std::equal(std::begin(addr.addr), std::end(addr.addr), o.src.addr))
      return EADDRINUSE;
  }
  return 0;
}

uint16_t RdmaCm::ephemeral_port(uint32_t port_space) {
  for (int tries = 0; tries < 28000; ++tries) {
    const uint16_t p = htons(next_port_);
    next_port_ = static_cast<uint16_t>(next_port_ >= 60999 ? 32768 : next_port_ + 1);
    if (!port_used(port_space, p)) return p;
  }
  return 0;
}

// --- events ---

proto::CmEventWire RdmaCm::event_for(const Id& id, int event, int status) const {
  proto::CmEventWire e;
  e.id = id.number;
  e.event = event;
  e.status = status;
  e.src = id.src;
  e.dst = id.dst;
  const scenario::Host& me = *world_.hosts()[host_];
  std::memcpy(e.sgid, me.address.ip.data(), 16);
  std::memcpy(e.dgid, id.peer_gid.data(), 16);
  e.path_mtu = id.path_mtu;
  e.link_ib = ib() ? 1 : 0;
  e.slid = me.address.lid;
  e.dlid = id.peer_lid;
  return e;
}

void RdmaCm::emit(const Id& id, const proto::CmEventWire& e) {
  auto it = channels_.find(id.channel);
  if (it == channels_.end()) return;
  if (write(it->second, &e, sizeof e) < 0) { /* the program is gone or not reading */ }
}

// --- requests ---

int RdmaCm::open_channel(int session, const proto::Received& r, proto::CmChannelRep& rep) {
  if (r.nfds != 1) return EINVAL;
  rep.channel = next_channel_++;
  channels_[rep.channel] = r.fds[0];
  channel_session_[rep.channel] = session;
  return 0;
}

int RdmaCm::close_channel(int session, const proto::CmIdReq& q, NoReply&) {
  auto it = channels_.find(q.id);
  if (it == channels_.end() || channel_session_[q.id] != session) return EINVAL;
  close(it->second);
  channels_.erase(it);
  channel_session_.erase(q.id);
  return 0;
}

int RdmaCm::create_id(int session, const proto::CmCreateIdReq& q, proto::ObjectRep& rep) {
  if (!channels_.contains(q.channel) || channel_session_[q.channel] != session) return EINVAL;
  const bool ud = q.port_space == RDMA_PS_UDP || q.port_space == RDMA_PS_IPOIB;
  if (q.port_space != RDMA_PS_TCP && q.port_space != RDMA_PS_IB && !ud) return EINVAL;
  rep.id = add(session, q.channel, q.port_space, q.qp_type).number;
  return 0;
}

int RdmaCm::destroy_id(Id& id, const proto::CmIdReq&, NoReply&) {
  remove(id);
  return 0;
}

int RdmaCm::migrate_id(Id& id, const proto::CmIdReq& q, NoReply&) {
  if (!channels_.contains(q.value) || channel_session_[q.value] != id.session) return EINVAL;
  id.channel = q.value;
  return 0;
}

void RdmaCm::remove(Id& id) {
  if (id.comm) {
    // A connected id goes with a DREQ, as the kernel's rdma_destroy_id does.
    cm_->disconnect(*id.comm);
    forget_comm(id);
  }
  if (id.listening) {
    const uint64_t service = cm::service_id(static_cast<uint16_t>(id.port_space), ntohs(id.src.port));
    cm_->stop_listening(service);
  }
  ids_.erase(id.number);
}

void RdmaCm::session_ended(int session) {
  std::vector<uint32_t> mine;
  for (const auto& [n, id] : ids_)
    if (id->session == session) mine.push_back(n);
  for (uint32_t n : mine) remove(*ids_[n]);
  for (auto it = channel_session_.begin(); it != channel_session_.end();) {
    if (it->second != session) {
      ++it;
      continue;
    }
    close(channels_[it->first]);
    channels_.erase(it->first);
    it = channel_session_.erase(it);
  }
}

int RdmaCm::bind(Id& id, const proto::CmIdReq& q, proto::CmAddrRep& rep) {
  const int rc = bind_to(id, q.src);
  if (rc == 0) rep.addr = id.src;
  return rc;
}

int RdmaCm::bind_to(Id& id, const proto::CmAddr& addr) {
  if (id.bound) return EINVAL;
  if (addr.family != AF_INET && addr.family != AF_INET6) return EAFNOSUPPORT;
  if (!is_any(addr) && !is_loopback(addr) && host_of(addr) != host_) return EADDRNOTAVAIL;
  // IPv4 ids are AF_INET only; IPv6 ones see IPv4 too unless told (bindv6only 0).
  if (!id.af_only_set) id.af_only = addr.family == AF_INET;
  proto::CmAddr want = addr;
  if (want.port == 0) want.port = ephemeral_port(id.port_space);
  if (want.port == 0) return EADDRINUSE;
  if (const int rc = port_conflict(id, want, true); rc != 0) return rc;
  id.src = want;
  id.bound = true;
  return 0;
}

int RdmaCm::resolve_addr(Id& id, const proto::CmIdReq& q, NoReply&) {
  if (q.dst.family != AF_INET && q.dst.family != AF_INET6) return EAFNOSUPPORT;
  const scenario::Host& me = *world_.hosts()[host_];
  if (!id.bound) {
    const int rc = bind_to(id, q.src.family != 0 ? q.src : cm_addr(ip_address(host_), 0));
    if (rc != 0) return rc;
  }
  // The id takes the host's own address (a wildcard bind says which now).
  const uint16_t port = id.src.port;
  id.src = cm_addr(ip_address(host_), port);
  id.dst = q.dst;
  if (is_multicast(q.dst)) {
    // A multicast group resolves (its MAC follows from it); joining it is
    // what this port cannot do (rdma_join_multicast: ENOSYS).
    id.addr_resolved = true;
    emit(id, event_for(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0));
    return 0;
  }
  const auto peer = host_of(q.dst);
  if (!peer) {
    // No neighbour answers: the error comes when the program's timeout is up.
    world_.sim().scheduler().cancel(*id.addr_timer);
    world_.sim().scheduler().schedule(*id.addr_timer, world_.sim().now() + sim::Duration::ms(std::max<uint32_t>(q.value, 1)));
    return 0;
  }
  const scenario::Host& p = *world_.hosts()[*peer];
  id.peer_av = p.address;
  id.peer_gid = p.address.ip;
  id.peer_lid = p.address.lid;
  id.path_mtu = cm::mtu_code(std::min(me.nic->config().params.mtu, p.nic->config().params.mtu));
  id.addr_resolved = true;
  emit(id, event_for(id, RDMA_CM_EVENT_ADDR_RESOLVED, 0));
  return 0;
}

int RdmaCm::resolve_route(Id& id, const proto::CmIdReq&, NoReply&) {
  if (!id.addr_resolved) return EINVAL;
  // RoCE and the scenario's IB fabric: the path is known locally (no SA query).
  id.route_resolved = true;
  emit(id, event_for(id, RDMA_CM_EVENT_ROUTE_RESOLVED, 0));
  return 0;
}

// As the kernel's rdma_set_option: REUSEADDR before bind (or turned off
// later, not while listening), AFONLY before bind, ACK_TIMEOUT for RC.
int RdmaCm::set_option(Id& id, const proto::CmOptionReq& q, NoReply&) {
  const bool idle = !id.bound && !id.addr_resolved;
  const uint32_t value = q.value;
  switch (q.option) {
    case RDMA_OPTION_ID_TOS: id.traffic_class = static_cast<uint8_t>(value); return 0;
    case RDMA_OPTION_ID_REUSEADDR:
      if (!idle && (value == 0 || id.listening)) return EINVAL;
      id.reuse_addr = value != 0;
      return 0;
    case RDMA_OPTION_ID_AFONLY:
      if (!idle) return EINVAL;
      id.af_only = value != 0;
      id.af_only_set = true;
      return 0;
    case RDMA_OPTION_ID_ACK_TIMEOUT:
      if (id.qp_type != IBV_QPT_RC) return EINVAL;
      id.ack_timeout = static_cast<uint8_t>(value);
      return 0;
    default: return ENOSYS;
  }
}

int RdmaCm::listen(Id& id, const proto::CmIdReq&, NoReply&) {
  if (!id.bound) {
    proto::CmAddr any;
    any.family = AF_INET;
    const int rc = bind_to(id, any);
    if (rc != 0) return rc;
  }
  if (id.listening) return 0;
  if (const int rc = id.reuse_addr ? port_conflict(id, id.src, false) : 0; rc != 0) return rc;
  const uint64_t service = cm::service_id(static_cast<uint16_t>(id.port_space), ntohs(id.src.port));
  if (!cm_->listen(service, id)) return EADDRINUSE;
  id.listening = true;
  log_ << "rnicsim serve: host " << world_.hosts()[host_]->name << " listens on RDMA CM port " << ntohs(id.src.port)
       << " (" << port_space_name(id.port_space) << ")" << std::endl;
  return 0;
}

cm::PathTo RdmaCm::path_of(const Id& id) const {
  const scenario::Host& me = *world_.hosts()[host_];
  cm::PathTo p;
  p.av = id.peer_av;
  p.local_gid = me.address.ip;
  p.remote_gid = id.peer_gid;
  if (ib()) {
    p.local_lid = me.address.lid;
    p.remote_lid = id.peer_lid;
  }
  p.traffic_class = id.traffic_class;
  p.packet_life_time = kPacketLifeTime;
  return p;
}

int RdmaCm::connect(Id& id, const proto::CmConnReq& q, NoReply&) {
  if (!id.route_resolved || id.comm) return EINVAL;
  const bool ud = id.port_space == RDMA_PS_UDP || id.qp_type == IBV_QPT_UD;
  if (q.private_data_len > (ud ? kSidrUserPrivate : kReqUserPrivate)) return EINVAL;
  cm::IpHeader ip;
  ip.ip_version = id.src.family == AF_INET ? 4 : 6;
  ip.src_port = ntohs(id.src.port);
  ip.src_addr = ip_of(id.src);
  ip.dst_addr = ip_of(id.dst);
  const uint64_t service = cm::service_id(static_cast<uint16_t>(id.port_space), ntohs(id.dst.port));
  if (ud) connect_sidr(id, q, ip, service);
  else connect_rc(id, q, ip, service);
  return 0;
}

void RdmaCm::connect_sidr(Id& id, const proto::CmConnReq& q, const cm::IpHeader& ip, uint64_t service) {
  cm::SidrReq s;
  s.service_id = service;
  cm::encode_ip_header(ip, std::span<uint8_t, cm::kIpHeaderBytes>(s.private_data.data(), cm::kIpHeaderBytes));
  std::memcpy(s.private_data.data() + cm::kIpHeaderBytes, q.private_data, q.private_data_len);
  id.comm = cm_->sidr_request(s, path_of(id), id);
  id.want = Want::Sidr;
}

void RdmaCm::connect_rc(Id& id, const proto::CmConnReq& q, const cm::IpHeader& ip, uint64_t service) {
  cm::Req r;
  r.service_id = service;
  r.local_ca_guid = scenario::port_guid(host_);
  r.local_qpn = packet::Qpn(q.qpn);
  r.responder_resources = q.responder_resources;
  r.initiator_depth = q.initiator_depth;
  r.remote_cm_response_timeout = r.local_cm_response_timeout = kCmResponseTimeout;
  r.transport = id.qp_type == IBV_QPT_UC ? cm::Transport::Uc : cm::Transport::Rc;
  r.end_to_end_flow_control = q.flow_control != 0;
  r.starting_psn = id.local_psn;
  r.retry_count = std::min<uint8_t>(q.retry_count, 7);
  r.rnr_retry_count = std::min<uint8_t>(q.rnr_retry_count, 7);
  r.path_mtu = id.path_mtu;
  r.max_cm_retries = kMaxCmRetries;
  r.srq = q.srq != 0;
  r.primary.hop_limit = ib() ? 0 : 64;
  cm::encode_ip_header(ip, std::span<uint8_t, cm::kIpHeaderBytes>(r.private_data.data(), cm::kIpHeaderBytes));
  std::memcpy(r.private_data.data() + cm::kIpHeaderBytes, q.private_data, q.private_data_len);
  id.responder_resources = q.responder_resources;
  id.initiator_depth = q.initiator_depth;
  id.retry_count = r.retry_count;
  id.comm = cm_->connect(r, path_of(id), id);
  id.want = Want::Connection;
}

int RdmaCm::accept(Id& id, const proto::CmConnReq& q, NoReply&) {
  if (!id.comm) return EINVAL;
  if (id.want == Want::Sidr) {
    cm::SidrRep s;
    s.status = 0;
    s.qpn = packet::Qpn(q.qpn);
    s.qkey = kUdpQkey;
    s.service_id = cm::service_id(static_cast<uint16_t>(id.port_space), ntohs(id.src.port));
    std::memcpy(s.private_data.data(), q.private_data, std::min<size_t>(q.private_data_len, cm::kSidrRepPrivate));
    const bool ok = cm_->sidr_reply(*id.comm, s);
    id.comm.reset();
    return ok ? 0 : EINVAL;
  }
  cm::Rep r;
  r.local_qpn = packet::Qpn(q.qpn);
  r.starting_psn = id.local_psn;
  r.responder_resources = q.responder_resources;
  r.initiator_depth = q.initiator_depth;
  r.end_to_end_flow_control = q.flow_control != 0;
  r.rnr_retry_count = std::min<uint8_t>(q.rnr_retry_count, 7);
  r.srq = q.srq != 0;
  r.local_ca_guid = scenario::port_guid(host_);
  std::memcpy(r.private_data.data(), q.private_data, std::min<size_t>(q.private_data_len, cm::kRepPrivate));
  id.responder_resources = q.responder_resources;
  id.initiator_depth = q.initiator_depth;
  return cm_->accept(*id.comm, r) ? 0 : EINVAL;
}

int RdmaCm::reject(Id& id, const proto::CmConnReq& q, NoReply&) {
  if (!id.comm) return EINVAL;
  const std::span<const uint8_t> pd(q.private_data, std::min<size_t>(q.private_data_len, cm::kRejPrivate));
  if (id.want == Want::Sidr) {
    cm::SidrRep s;
    s.status = 2;  // rejected by the service
    std::memcpy(s.private_data.data(), pd.data(), std::min(pd.size(), cm::kSidrRepPrivate));
    cm_->sidr_reply(*id.comm, s);
    id.comm.reset();
    return 0;
  }
  // Only a request or a reply can be rejected; anything else keeps its connection.
  if (!cm_->reject(*id.comm, cm::kRejConsumerReject, pd)) return EINVAL;
  id.comm.reset();
  return 0;
}

int RdmaCm::establish(Id& id, const proto::CmIdReq&, NoReply&) {
  if (!id.comm) return EINVAL;
  // Active: the QP is up, the RTU goes; passive: work came before the RTU.
  if (cm_->ready_to_use(*id.comm)) return 0;
  return cm_->established(*id.comm) ? 0 : EINVAL;
}

int RdmaCm::disconnect(Id& id, const proto::CmIdReq&, NoReply&) {
  if (!id.comm) return EINVAL;
  return cm_->disconnect(*id.comm) ? 0 : EINVAL;
}

// What rdma_init_qp_attr answers, as the kernel's CM does (cm_init_qp_*_attr).
int RdmaCm::init_qp_attr(Id& id, const proto::CmIdReq& q, proto::CmQpAttrRep& rep) {
  const bool ud = id.qp_type == IBV_QPT_UD;
  const uint32_t state = q.value;
  rep.state = state;
  rep.port_num = 1;
  switch (state) {
    case IBV_QPS_INIT:
      rep.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
      if (ud) {
        rep.qkey = kUdpQkey.value();
        rep.mask |= IBV_QP_QKEY;
      } else {
        rep.access = IBV_ACCESS_REMOTE_WRITE;
        if (id.responder_resources > 0) rep.access |= IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
        rep.mask |= IBV_QP_ACCESS_FLAGS;
      }
      return 0;
    case IBV_QPS_RTR:
      rep.mask = IBV_QP_STATE;
      if (ud) return 0;
      if (!id.remote_qpn) return EINVAL;  // not connected yet
      rep.mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
      rep.path_mtu = id.path_mtu;
      rep.dest_qpn = id.remote_qpn->value();
      rep.rq_psn = id.remote_psn.value();
      rep.ah = ah_to(id.peer_gid, id.peer_lid, id.traffic_class);
      std::memcpy(rep.dmac, id.peer_av.mac.data(), 6);
      if (id.qp_type == IBV_QPT_RC) {
        rep.mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
        rep.max_dest_rd_atomic = id.responder_resources;
        rep.min_rnr_timer = 0;
      }
      return 0;
    case IBV_QPS_RTS:
      rep.mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
      rep.sq_psn = ud ? 0 : id.local_psn.value();
      if (id.qp_type == IBV_QPT_RC) {
        rep.mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
        rep.timeout = id.ack_timeout.value_or(kPacketLifeTime + 1);
        rep.retry_cnt = id.retry_count;
        rep.rnr_retry = id.rnr_retry_count;
        rep.max_rd_atomic = id.initiator_depth;
      }
      return 0;
    default: return EINVAL;
  }
}

// --- what the IB CM tells ---

// A connection request's new id: the listener's session, channel and port,
// the peer's address from the RDMA CM's IP header of the private data.
RdmaCm::Id& RdmaCm::child_of(const Id& listener, cm::CommId comm, uint32_t qp_type, Want want,
                             std::span<const uint8_t, cm::kIpHeaderBytes> ip_header, const cm::MadSource& from) {
  Id& child = add(listener.session, listener.channel, listener.port_space, qp_type);
  child.bound = child.accepted = true;
  child.src = cm_addr(ip_address(host_), listener.src.port);
  if (const auto ip = cm::decode_ip_header(ip_header)) child.dst = cm_addr(ip->src_addr, htons(ip->src_port));
  if (auto av = resolve(from)) child.peer_av = *av;
  child.peer_gid = from.gid;
  child.peer_lid = from.lid;
  child.comm = comm;
  child.want = want;
  cm_->hand_over(comm, child);
  return child;
}

void RdmaCm::on_request(const Id& listener, cm::CommId comm, const cm::Req& req, const cm::MadSource& from) {
  Id& child = child_of(listener, comm, req.transport == cm::Transport::Uc ? IBV_QPT_UC : IBV_QPT_RC,
                       Want::Connection, std::span<const uint8_t, cm::kIpHeaderBytes>(req.private_data.data(), cm::kIpHeaderBytes),
                       from);
  child.peer_lid = req.primary.local_lid == 0xFFFF ? 0 : req.primary.local_lid;
  child.remote_qpn = req.local_qpn;
  child.remote_psn = req.starting_psn;
  child.responder_resources = req.initiator_depth;  // what the peer will read from us
  child.initiator_depth = req.responder_resources;
  child.retry_count = req.retry_count;
  child.rnr_retry_count = req.rnr_retry_count;
  child.path_mtu = req.path_mtu;
  child.traffic_class = req.primary.traffic_class;
  proto::CmEventWire e = event_for(child, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
  e.listen_id = listener.number;
  take_conn_param(e, req);
  e.retry_count = req.retry_count;
  e.private_data_len = static_cast<uint8_t>(kReqUserPrivate);
  std::memcpy(e.private_data, req.private_data.data() + cm::kIpHeaderBytes, kReqUserPrivate);
  emit(child, e);
}

void RdmaCm::on_reply(Id& id, const cm::Rep& rep) {
  id.remote_qpn = rep.local_qpn;
  id.remote_psn = rep.starting_psn;
  id.responder_resources = rep.initiator_depth;
  id.initiator_depth = std::min(id.initiator_depth, rep.responder_resources);
  id.rnr_retry_count = rep.rnr_retry_count;
  proto::CmEventWire e = event_for(id, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
  take_conn_param(e, rep);
  e.private_data_len = static_cast<uint8_t>(cm::kRepPrivate);
  std::memcpy(e.private_data, rep.private_data.data(), cm::kRepPrivate);
  emit(id, e);
}

void RdmaCm::on_rejected(Id& id, const cm::Rej& rej) {
  proto::CmEventWire e = event_for(id, RDMA_CM_EVENT_REJECTED, rej.reason);
  e.private_data_len = static_cast<uint8_t>(cm::kRejPrivate);
  std::memcpy(e.private_data, rej.private_data.data(), cm::kRejPrivate);
  emit(id, e);
}

void RdmaCm::on_sidr_request(const Id& listener, cm::CommId comm, const cm::SidrReq& req,
                             const cm::MadSource& from) {
  Id& child = child_of(listener, comm, IBV_QPT_UD, Want::Sidr,
                       std::span<const uint8_t, cm::kIpHeaderBytes>(req.private_data.data(), cm::kIpHeaderBytes), from);
  proto::CmEventWire e = event_for(child, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
  e.listen_id = listener.number;
  e.private_data_len = static_cast<uint8_t>(kSidrUserPrivate);
  std::memcpy(e.private_data, req.private_data.data() + cm::kIpHeaderBytes, kSidrUserPrivate);
  e.ah = ah_to(from.gid, from.lid);
  emit(child, e);
}

void RdmaCm::on_sidr_reply(Id& id, const cm::SidrRep& rep) {
  if (rep.status != 0) {
    emit(id, event_for(id, RDMA_CM_EVENT_UNREACHABLE, rep.status));
    return;
  }
  id.remote_qpn = rep.qpn;
  proto::CmEventWire e = event_for(id, RDMA_CM_EVENT_ESTABLISHED, 0);
  e.qp_num = rep.qpn.value();
  e.qkey = rep.qkey.value();
  e.private_data_len = static_cast<uint8_t>(cm::kSidrRepPrivate);
  std::memcpy(e.private_data, rep.private_data.data(), cm::kSidrRepPrivate);
  e.ah = ah_to(id.peer_gid, id.peer_lid);
  emit(id, e);
}

}  // namespace rnicsim::emulation
