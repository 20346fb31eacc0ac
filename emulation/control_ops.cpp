#include "emulation/control_ops.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <utility>

#include "emulation/host_network.hpp"
#include "emulation/program_state.hpp"
#include "scenario/workload.hpp"

namespace rnicsim::emulation {
namespace proto = verbs_proto;

namespace {

// The most runs of shared pages a session may have sent for a registration to come.
constexpr size_t kMaxPendingRuns = 4096;

// ibv_mtu (1..5) <-> bytes.
uint32_t mtu_bytes(uint32_t ibv_mtu) { return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128u << ibv_mtu : 0; }

// Whether process_vm_readv reads the probe word of the Hello (errno set if not).
bool can_read(pid_t pid, const proto::HelloReq& q) {
  uint64_t value = 0;
  iovec local{&value, sizeof value};
  iovec remote{reinterpret_cast<void*>(q.probe_addr), sizeof value};
  if (q.probe_addr == 0) return errno = EFAULT, false;
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof value)) return false;
  if (value != q.probe_value) return errno = EIO, false;
  return true;
}

// Whether a QP of the host still uses an object (`uses` says which): it cannot go yet.
template <class Uses>
bool any_qp_uses(const HostState& h, nic::Nic& n, Uses uses) {
  for (const auto& [qpn, qp] : h.qps)
    if (const nic::QpContext* ctx = n.qp(nic::Qpn(qpn)); ctx != nullptr && uses(*ctx)) return true;
  return false;
}

// A CQ or SRQ of the context goes, unless a QP still uses it (EBUSY, as the
// verbs answer); its doorbell record and ring go back to the context.
template <class Entry, class Uses, class Destroy>
int destroy_ring_object(Registry& registry, Context& c, std::unordered_map<uint32_t, Entry>& objects, uint32_t id,
                        Uses uses, Destroy destroy) {
  Entry* e = owned(objects, id, c.id);
  if (e == nullptr) return EINVAL;
  nic::Nic& n = registry.nic(c);
  if (any_qp_uses(registry.state(c), n, uses)) return EBUSY;
  c.doorbell_used[e->doorbell] = false;
  registry.give_back(c, e->ring);
  destroy(n, *e);
  objects.erase(id);
  return 0;
}

std::string gid_text(const uint8_t (&gid)[16]) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, gid, text, sizeof text);
  return text;
}

}  // namespace

// --- session-scoped ---

int ControlOps::hello(Call& c, const proto::HelloReq& q, proto::DeviceInfo& info) {
  Session& s = c.session;
  const bool readable = can_read(s.pid, q);
  const int read_error = errno;
  if (!s.said_hello()) {
    const size_t pick = host_for(s.pid, std::string(q.host, strnlen(q.host, sizeof q.host)));
    auto& hosts = registry_.hosts();
    if (pick >= hosts.size()) return static_cast<int>(pick - hosts.size());
    HostState& h = *hosts[pick];
    const bool alone = h.memory.empty(), known = h.memory.has(s.pid);
    const size_t slot = h.memory.attach(s.pid);
    if (slot == ProcessSpaces::kDaemon) return EBUSY;
    if (!known)
      out_ << "rnicsim serve: " << (alone ? "host " + h.host->name + " is process " : "host " + h.host->name + " also has process ")
           << s.pid << '\n';
    if (!readable && !known)
      out_ << "rnicsim serve: process " << s.pid << " cannot be read with process_vm_readv ("
           << std::strerror(read_error) << "): it has to share its registered memory\n";
    s.host = pick;
    s.slot = slot;
  }
  describe_host(s, info);
  info.process_memory = readable ? 1 : 0;
  return 0;
}

void ControlOps::describe_host(const Session& s, proto::DeviceInfo& info) const {
  const scenario::Host& host = *registry_.hosts()[s.host]->host;
  const nic::NicConfig& cfg = host.nic->config();
  std::snprintf(info.host, sizeof info.host, "%s", host.name.c_str());
  std::string device = s.host < scenario_.hosts.size() ? scenario_.hosts[s.host].device : "";
  if (!options_.device_name.empty()) device = options_.device_name;
  if (device.empty()) device = scenario::kDefaultDeviceName;
  std::snprintf(info.device, sizeof info.device, "%s", device.c_str());
  const uint64_t guid = scenario::port_guid(s.host);
  for (int b = 0; b < 8; ++b) reinterpret_cast<uint8_t*>(&info.node_guid)[b] = static_cast<uint8_t>(guid >> (56 - 8 * b));
  info.rate_bps = scenario_.links.empty() ? 0 : scenario_.links.front().rate_bps;
  for (const auto& l : scenario_.links)
    if (l.a == host.name || l.b == host.name) info.rate_bps = l.rate_bps;
  info.mtu = cfg.params.mtu;
  info.lid = cfg.lid;
  info.link_layer = packet::is_ib(cfg.link) ? proto::kLinkLayerIb : proto::kLinkLayerEthernet;
  std::memcpy(info.gid, cfg.ip.data(), 16);
  std::memcpy(info.mac, cfg.mac.data(), 6);
  info.daemon_pid = getpid();
  if (network_ != nullptr) {
    info.user_ns_pid = network_->user_ns_pid();
    info.net_ns_pid = network_->net_ns_pid(s.host);
    std::snprintf(info.netdev, sizeof info.netdev, "%s", HostNetwork::kInterface);
  }
}

// A process is on the host it asks for by name, if no other process is on it
// but its own family; else on the host it or a process it descends from is on
// (a forked child shares its parent's machine); else on one no process is on.
size_t ControlOps::host_for(pid_t pid, const std::string& want) const {
  const auto& hosts = registry_.hosts();
  size_t mine = SIZE_MAX;
  for (pid_t p = pid; p > 1 && mine == SIZE_MAX; p = parent_of(p))
    for (size_t i = 0; i < hosts.size() && mine == SIZE_MAX; ++i)
      if (hosts[i]->memory.has(p)) mine = i;
  if (want.empty()) {
    if (mine != SIZE_MAX) return mine;
    for (size_t i = 0; i < hosts.size(); ++i)
      if (hosts[i]->memory.empty()) return i;
    return hosts.size() + EBUSY;
  }
  for (size_t i = 0; i < hosts.size(); ++i)
    if (hosts[i]->host->name == want) return i == mine || hosts[i]->memory.empty() ? i : hosts.size() + EBUSY;
  return hosts.size() + ENODEV;
}

int ControlOps::open_context(Call& c, const proto::Received& r, proto::OpenContextRep& rep) {
  const Session& s = c.session;
  if (!s.said_hello()) return EPROTO;
  Context* ctx = nullptr;
  if (int rc = registry_.open_context(s.fd, s.host, s.slot, r.nfds > 0 ? r.fds[0] : -1, ctx); rc != 0) return rc;
  rep.ctx = ctx->id;
  rep.segment_bytes = proto::kSegmentBytes;
  c.fds = {ctx->memfd, wake_fd_};
  return 0;
}

// --- contexts and PDs ---

int ControlOps::close_context(Call& c, const ContextOnly&, NoReply&) {
  registry_.release_context(*c.ctx);
  return 0;
}

int ControlOps::alloc_pd(Call& c, const ContextOnly&, proto::ObjectRep& rep) {
  const uint32_t pd = registry_.nic(*c.ctx).alloc_pd().value();
  registry_.state(*c.ctx).pds[pd] = c.ctx->id;
  rep = proto::ObjectRep{pd, 0};
  return 0;
}

int ControlOps::dealloc_pd(Call& c, const proto::ObjectReq& q, NoReply&) {
  HostState& h = registry_.state(*c.ctx);
  nic::Nic& n = registry_.nic(*c.ctx);
  if (!owned_by(h.pds, q.id, c.ctx->id)) return EINVAL;
  for (const auto& [lkey, mr] : h.mrs)
    if (const nic::MemoryRegion* region = n.translation().by_lkey(nic::Lkey(lkey));
        region != nullptr && region->pd == nic::Pdn(q.id))
      return EBUSY;
  h.pds.erase(q.id);
  return 0;
}

// --- memory regions ---

int ControlOps::share_runs(Call& c, const proto::Received& r, NoReply&) {
  Session& s = c.session;
  ProcessHostMemory& space = registry_.state(*c.ctx).memory.space(s.slot);
  // A failure dooms the registration these runs are for: its earlier runs go too.
  auto refuse = [&](int error) {
    Registry::drop_runs(space, s.pending_runs);
    return error;
  };
  proto::ShareRunsReq q;
  if (!proto::body_as(r, q)) return refuse(EPROTO);
  if (q.count == 0 || q.count > proto::kRunsPerMessage || r.nfds != q.count) return refuse(EINVAL);
  if (s.pending_runs.size() + q.count > kMaxPendingRuns) return refuse(ENOMEM);
  std::vector<std::byte*> mapped;
  for (uint32_t i = 0; i < q.count; ++i) {
    const proto::MemoryRun& run = q.runs[i];
    std::byte* p = space.map_run(run.addr, run.length, r.fds[i], run.offset);
    if (p == nullptr) {
      Registry::drop_runs(space, mapped);
      return refuse(EINVAL);
    }
    mapped.push_back(p);
  }
  // The mappings keep the pages; the descriptors are not needed any more.
  for (uint32_t i = 0; i < q.count; ++i) close(r.fds[i]);
  s.pending_runs.insert(s.pending_runs.end(), mapped.begin(), mapped.end());
  return 0;
}

int ControlOps::reg_mr(Call& c, const proto::Received& r, proto::RegMrRep& rep) { return register_mr(c, r, false, rep); }
int ControlOps::rereg_mr(Call& c, const proto::Received& r, proto::RegMrRep& rep) { return register_mr(c, r, true, rep); }

int ControlOps::register_mr(Call& call, const proto::Received& r, bool again, proto::RegMrRep& rep) {
  Context& c = *call.ctx;
  HostState& h = registry_.state(c);
  nic::Nic& n = registry_.nic(c);
  // The runs the ShareRuns requests before this one sent: this region's,
  // or unmapped if the registration fails.
  std::vector<std::byte*> runs = std::exchange(call.session.pending_runs, {});
  ProcessHostMemory& space = h.memory.space(c.slot);
  auto refuse = [&](int error) {
    Registry::drop_runs(space, runs);
    return error;
  };
  proto::RegMrReq q;
  if (!proto::body_as(r, q)) return refuse(EPROTO);
  if (q.shared_runs != runs.size()) return refuse(EINVAL);
  if (!owned_by(h.pds, q.pd, c.id)) return refuse(EINVAL);
  if (q.length == 0 || q.addr + q.length < q.addr || q.addr + q.length > ProcessSpaces::kAddressLimit)
    return refuse(EINVAL);
  const uint64_t host_addr = ProcessSpaces::nic_address(c.slot, q.addr);
  // Remote write or atomic without local write is invalid (IBTA 10.6.3.1).
  if ((q.access & (nic::kAccessRemoteWrite | nic::kAccessRemoteAtomic)) && !(q.access & nic::kAccessLocalWrite))
    return refuse(EINVAL);
  const uint32_t access = q.access & 0xF;
  if (!again) {
    const nic::MemoryRegion& mr = n.translation().add(nic::Pdn(q.pd), host_addr, q.length, q.iova, access);
    h.mrs[mr.lkey.value()] = MrEntry{c.id, q.addr, q.length, access, std::move(runs)};
    space.add_region(q.addr, q.length, access);
    rep = proto::RegMrRep{mr.lkey.value(), mr.rkey.value()};
    return 0;
  }
  MrEntry* old = owned(h.mrs, q.lkey, c.id);
  if (old == nullptr) return refuse(EINVAL);
  space.remove_region(old->addr, old->length, old->access);
  n.translation().modify(nic::Lkey(q.lkey), nic::Pdn(q.pd), host_addr, q.length, q.iova, access);
  // New shared pages replace the region's; without any it keeps its own.
  if (runs.empty())
    runs = std::move(old->runs);
  else
    Registry::drop_runs(space, old->runs);
  *old = MrEntry{c.id, q.addr, q.length, access, std::move(runs)};
  space.add_region(q.addr, q.length, access);
  const nic::MemoryRegion* mr = n.translation().by_lkey(nic::Lkey(q.lkey));
  rep = proto::RegMrRep{mr->lkey.value(), mr->rkey.value()};
  return 0;
}

int ControlOps::dereg_mr(Call& c, const proto::ObjectReq& q, NoReply&) {
  HostState& h = registry_.state(*c.ctx);
  MrEntry* mr = owned(h.mrs, q.id, c.ctx->id);
  if (mr == nullptr) return EINVAL;
  registry_.nic(*c.ctx).translation().remove(nic::Lkey(q.id));
  h.memory.space(c.ctx->slot).remove_region(mr->addr, mr->length, mr->access);
  Registry::drop_runs(h.memory.space(c.ctx->slot), mr->runs);
  h.mrs.erase(q.id);
  return 0;
}

// --- CQs ---

int ControlOps::create_cq(Call& c, const proto::CreateCqReq& q, proto::RingRep& rep) {
  const int channel = q.has_channel && c.request.nfds > 0 ? c.request.fds[0] : -1;
  const int rc = create_cq_ring(*c.ctx, q, channel, rep);
  if (rc != 0 && channel >= 0) close(channel);
  return rc;
}

int ControlOps::create_cq_ring(Context& c, const proto::CreateCqReq& q, int channel, proto::RingRep& rep) {
  if (q.entries == 0 || q.entries > kMaxQueueEntries) return EINVAL;
  // Every CQ ring has the largest size, so that ibv_resize_cq never has to move
  // it; only the pages the NIC writes cost memory.
  const uint32_t entries = kMaxQueueEntries;
  const uint64_t off = registry_.take_ring(c, uint64_t{entries} * sizeof(nic::Cqe));
  const int db = off == 0 ? -1 : c.take_doorbell();
  if (db < 0) {
    registry_.give_back(c, off);
    return ENOMEM;
  }
  HostState& h = registry_.state(c);
  // It holds what the program was told and one more, as hardware rings do;
  // more unconsumed CQEs overrun it.
  const uint32_t cqn =
      registry_.nic(c).create_cq(c.address() + off, entries, &h, proto::cq_slots(q.entries, entries)).value();
  h.cqs[cqn] = CqEntry{.ctx = c.id, .doorbell = static_cast<uint32_t>(db), .cookie = q.cookie, .channel_fd = channel, .ring = off};
  rep = {cqn, entries, off, static_cast<uint32_t>(db), 0};
  return 0;
}

int ControlOps::destroy_cq(Call& call, const proto::ObjectReq& q, NoReply&) {
  const nic::Cqn cqn(q.id);
  return destroy_ring_object(
      registry_, *call.ctx, registry_.state(*call.ctx).cqs, q.id,
      [&](const nic::QpContext& qp) { return qp.send_cq == cqn || qp.recv_cq == cqn; },
      [&](nic::Nic& n, const CqEntry& cq) {
        if (cq.channel_fd >= 0) close(cq.channel_fd);
        n.destroy_cq(cqn);
      });
}

int ControlOps::resize_cq(Call& c, const proto::ObjectReq& q, NoReply&) {
  if (!owned_by(registry_.state(*c.ctx).cqs, q.id, c.ctx->id) || q.value == 0 || q.value >= kMaxQueueEntries)
    return EINVAL;
  return registry_.nic(*c.ctx).resize_cq(nic::Cqn(q.id), proto::cq_slots(q.value, kMaxQueueEntries)) ? 0 : EINVAL;
}

int ControlOps::settle_cq(Call& c, const proto::ObjectReq& q, NoReply&) {
  if (!owned_by(registry_.state(*c.ctx).cqs, q.id, c.ctx->id)) return EINVAL;
  settling_.push_back(Settling{c.session.fd, c.ctx->host, q.id, std::chrono::steady_clock::now() + std::chrono::seconds(1)});
  return kDeferred;
}

// --- QPs ---

int ControlOps::create_qp(Call& call, const proto::CreateQpReq& q, proto::CreateQpRep& rep) {
  Context& c = *call.ctx;
  HostState& h = registry_.state(c);
  if (!nic::is_qp_type(q.qp_type)) return EOPNOTSUPP;
  if (!owned_by(h.pds, q.pd, c.id) || !owned_by(h.cqs, q.send_cq, c.id) || !owned_by(h.cqs, q.recv_cq, c.id))
    return EINVAL;
  if (q.srq != 0 && !owned_by(h.srqs, q.srq, c.id)) return EINVAL;
  if (q.max_send_wr > kMaxQueueEntries || q.max_recv_wr > kMaxQueueEntries || q.max_send_sge > nic::kMaxSge ||
      q.max_recv_sge > nic::kMaxSge || q.max_inline > nic::kMaxInline)
    return EINVAL;
  const uint32_t sq_entries = scenario::ring_entries(std::max(q.max_send_wr, 1u));
  const uint32_t rq_entries = q.srq != 0 ? 1 : scenario::ring_entries(std::max(q.max_recv_wr, 1u));
  const uint32_t sq_stride = nic::wqe_stride(q.max_send_sge, q.max_inline);
  const uint32_t rq_stride = nic::wqe_stride(q.max_recv_sge, 0);
  const uint64_t sq = registry_.take_ring(c, uint64_t{sq_entries} * sq_stride);
  const uint64_t rq = registry_.take_ring(c, uint64_t{rq_entries} * rq_stride);
  const int db = sq == 0 || rq == 0 ? -1 : c.take_doorbell();
  if (db < 0) {
    registry_.give_back(c, sq);
    registry_.give_back(c, rq);
    return ENOMEM;
  }
  nic::QpInit init;
  init.type = static_cast<nic::QpType>(q.qp_type);
  init.pd = nic::Pdn(q.pd);
  init.send_cq = nic::Cqn(q.send_cq);
  init.recv_cq = nic::Cqn(q.recv_cq);
  init.sq = nic::WorkRing{c.address() + sq, sq_entries, sq_stride};
  init.rq = nic::WorkRing{c.address() + rq, rq_entries, rq_stride};
  init.sq_sig_all = q.sq_sig_all != 0;
  init.srq = nic::Srqn(q.srq);
  const nic::Qpn qpn = registry_.nic(c).create_qp(init);
  h.qps[qpn.value()] = QpEntry{.ctx = c.id, .doorbell = static_cast<uint32_t>(db), .sq = sq, .rq = rq};
  rep = {qpn.value(), sq_entries, rq_entries, static_cast<uint32_t>(db), sq, rq, sq_stride, rq_stride};
  return 0;
}

int ControlOps::modify_qp(Call& call, const proto::ModifyQpReq& q, NoReply&) {
  Context& c = *call.ctx;
  HostState& h = registry_.state(c);
  QpEntry* qp = owned(h.qps, q.qpn, c.id);
  if (qp == nullptr) return EINVAL;
  nic::QpAttr a;
  a.state = static_cast<nic::QpState>(q.state);
  if (q.mask & nic::kQpPathMtu) {
    a.path_mtu = mtu_bytes(q.path_mtu);
    if (a.path_mtu == 0) return EINVAL;
  }
  if ((q.mask & nic::kQpPort) && q.port_num != 1) return EINVAL;
  if ((q.mask & nic::kQpPkeyIndex) && q.pkey_index != 0) return EINVAL;
  a.dest_qpn = nic::Qpn(q.dest_qpn);
  a.rq_psn = nic::Psn(q.rq_psn);
  a.sq_psn = nic::Psn(q.sq_psn);
  a.qkey = nic::Qkey(q.qkey);
  a.access_flags = q.access;
  a.timeout = q.timeout;
  a.retry_cnt = q.retry_cnt;
  a.rnr_retry = q.rnr_retry;
  a.min_rnr_timer = q.min_rnr_timer;
  a.max_rd_atomic = q.max_rd_atomic;
  a.max_dest_rd_atomic = q.max_dest_rd_atomic;
  if (q.mask & nic::kQpAv)
    if (int rc = to_address_vector(c, q.ah, a.av); rc != 0) return rc;
  const int rc = registry_.nic(c).modify_qp(nic::Qpn(q.qpn), a, q.mask & ~uint32_t{nic::kQpCurState});
  if (rc == 0 && (q.mask & nic::kQpState) && a.state == nic::QpState::Reset) {
    // The rings start again at index 0, on both sides.
    proto::DoorbellRecord& d = c.doorbell(qp->doorbell);
    d.sq_producer.store(0, std::memory_order_relaxed);
    d.rq_producer.store(0, std::memory_order_relaxed);
    qp->sq_seen = qp->rq_seen = 0;
  }
  return rc;
}

int ControlOps::query_qp(Call& c, const proto::ObjectReq& q, proto::ObjectRep& rep) {
  const nic::QpContext* qp = owned_by(registry_.state(*c.ctx).qps, q.id, c.ctx->id) ? registry_.nic(*c.ctx).qp(nic::Qpn(q.id)) : nullptr;
  if (qp == nullptr) return EINVAL;
  rep = proto::ObjectRep{q.id, static_cast<uint32_t>(qp->state)};
  return 0;
}

int ControlOps::destroy_qp(Call& c, const proto::ObjectReq& q, NoReply&) {
  HostState& h = registry_.state(*c.ctx);
  if (!owned_by(h.qps, q.id, c.ctx->id)) return EINVAL;
  registry_.destroy_qp(h, q.id);
  return 0;
}

// --- SRQs ---

int ControlOps::create_srq(Call& call, const proto::CreateSrqReq& q, proto::RingRep& rep) {
  Context& c = *call.ctx;
  HostState& h = registry_.state(c);
  nic::Nic& n = registry_.nic(c);
  if (!owned_by(h.pds, q.pd, c.id)) return EINVAL;
  if (q.max_wr == 0 || q.max_wr > kMaxQueueEntries || q.max_sge > nic::kMaxSge) return EINVAL;
  const uint32_t entries = scenario::ring_entries(q.max_wr);
  const uint32_t stride = nic::wqe_stride(q.max_sge, 0);
  const uint64_t off = registry_.take_ring(c, uint64_t{entries} * stride);
  const int db = off == 0 ? -1 : c.take_doorbell();
  if (db < 0) {
    registry_.give_back(c, off);
    return ENOMEM;
  }
  const nic::Srqn srqn = n.create_srq(nic::Pdn(q.pd), nic::WorkRing{c.address() + off, entries, stride});
  if (q.limit != 0) n.arm_srq_limit(srqn, q.limit);
  h.srqs[srqn.value()] = SrqEntry{.ctx = c.id, .doorbell = static_cast<uint32_t>(db), .ring = off};
  rep = {srqn.value(), entries, off, static_cast<uint32_t>(db), stride};
  return 0;
}

int ControlOps::modify_srq(Call& c, const proto::ObjectReq& q, NoReply&) {
  if (!owned_by(registry_.state(*c.ctx).srqs, q.id, c.ctx->id)) return EINVAL;
  return registry_.nic(*c.ctx).arm_srq_limit(nic::Srqn(q.id), static_cast<uint32_t>(q.value)) ? 0 : EINVAL;
}

int ControlOps::destroy_srq(Call& call, const proto::ObjectReq& q, NoReply&) {
  const nic::Srqn srqn(q.id);
  return destroy_ring_object(
      registry_, *call.ctx, registry_.state(*call.ctx).srqs, q.id,
      [&](const nic::QpContext& qp) { return qp.srq == srqn; },
      [&](nic::Nic& n, const SrqEntry&) { n.destroy_srq(srqn); });
}

// --- AHs ---

int ControlOps::to_address_vector(const Context& c, const proto::AhWire& ah, nic::AddressVector& av) {
  const nic::NicConfig& cfg = registry_.hosts()[c.host]->host->nic->config();
  av = nic::AddressVector{};
  av.sl = ah.sl;
  av.traffic_class = ah.traffic_class;
  av.hop_limit = ah.hop_limit == 0 ? 64 : ah.hop_limit;
  if (ah.is_global) std::memcpy(av.ip.data(), ah.dgid, 16);
  if (packet::is_ib(cfg.link)) {
    av.lid = ah.dlid;
    return ah.dlid == 0 ? EINVAL : 0;
  }
  // RoCEv2: the GRH is mandatory; the destination MAC is what neighbour
  // resolution of the GID's address gives, here the scenario host that has it.
  if (!ah.is_global) return EINVAL;
  for (const auto& h : registry_.hosts()) {
    const scenario::Host& other = *h->host;
    if (other.address.ip == av.ip || proto::link_local_gid(other.address.mac) == av.ip) {
      av.ip = other.address.ip;  // the wire carries the host's own address
      av.mac = other.address.mac;
      return 0;
    }
  }
  out_ << "rnicsim serve: no host has GID " << gid_text(ah.dgid) << '\n';
  return EHOSTUNREACH;
}

int ControlOps::create_ah(Call& c, const proto::CreateAhReq& q, proto::ObjectRep& rep) {
  HostState& h = registry_.state(*c.ctx);
  if (!owned_by(h.pds, q.pd, c.ctx->id)) return EINVAL;
  nic::AddressVector av;
  if (int rc = to_address_vector(*c.ctx, q.ah, av); rc != 0) return rc;
  const uint32_t index = registry_.nic(*c.ctx).create_ah(av);
  h.ahs[index] = c.ctx->id;
  rep = proto::ObjectRep{index, 0};
  return 0;
}

int ControlOps::destroy_ah(Call& c, const proto::ObjectReq& q, NoReply&) {
  HostState& h = registry_.state(*c.ctx);
  if (!owned_by(h.ahs, q.id, c.ctx->id)) return EINVAL;
  registry_.nic(*c.ctx).destroy_ah(q.id);
  h.ahs.erase(q.id);
  return 0;
}

}  // namespace rnicsim::emulation
