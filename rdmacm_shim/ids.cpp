// The CM core (rdma_cma.h): event channels, ids, address and route
// resolution, listening, connecting, accepting, rejecting and disconnecting,
// each a request to the daemon's RDMA CM, whose events come back through the
// channel's pipe. As upstream librdmacm does, the library itself brings an
// id's QP up when the connection is accepted (rdma_accept) or answered
// (CONNECT_RESPONSE, reported as ESTABLISHED once the RTU is sent), takes it
// to ERR on rejection and disconnection, and makes an id created without a
// channel synchronous: each call then waits for its own event.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "rdmacm_shim/cm.hpp"
#include "rdmacm_shim/devices.hpp"

namespace rnicsim::rdmacm {
namespace {

int fail(int e) {
  errno = e;
  return -1;
}

proto::CmAddr to_wire(const sockaddr* a) {
  proto::CmAddr w;
  if (a == nullptr) return w;
  w.family = a->sa_family;
  if (a->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(a);
    w.port = in->sin_port;
    std::memcpy(w.addr, &in->sin_addr, 4);
  } else if (a->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a);
    w.port = in6->sin6_port;
    std::memcpy(w.addr, &in6->sin6_addr, 16);
  }
  return w;
}

void from_wire(const proto::CmAddr& w, sockaddr_storage& out) {
  if (w.family == AF_INET) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = w.port;
    std::memcpy(&in.sin_addr, w.addr, 4);
    std::memcpy(&out, &in, sizeof in);
  } else if (w.family == AF_INET6) {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = w.port;
    std::memcpy(&in6.sin6_addr, w.addr, 16);
    std::memcpy(&out, &in6, sizeof in6);
  }
}

ibv_context* device() {
  const auto contexts = device_contexts();
  return contexts.empty() ? nullptr : contexts.front();
}

// The id is on the device now: its verbs and, as librdmacm's ucma_get_device
// gives it, the device's default PD (what rdma_create_qp uses when given none).
void set_device(rdma_cm_id& id, ibv_context* verbs) {
  id.verbs = verbs;
  id.pd = verbs != nullptr ? default_pd(verbs) : nullptr;
}

// The id's route as the daemon knows it.
void take_route(Id& id, const proto::CmEventWire& w) {
  rdma_route& r = id.id.route;
  if (w.src.family != 0) from_wire(w.src, r.addr.src_storage);
  if (w.dst.family != 0) from_wire(w.dst, r.addr.dst_storage);
  std::memcpy(r.addr.addr.ibaddr.sgid.raw, w.sgid, 16);
  std::memcpy(r.addr.addr.ibaddr.dgid.raw, w.dgid, 16);
  r.addr.addr.ibaddr.pkey = htons(w.pkey);
  ibv_sa_path_rec& p = id.path;
  std::memcpy(p.sgid.raw, w.sgid, 16);
  std::memcpy(p.dgid.raw, w.dgid, 16);
  p.slid = htons(w.slid);
  p.dlid = htons(w.dlid);
  p.pkey = htons(w.pkey);
  p.mtu = w.path_mtu;
  p.mtu_selector = 2;  // exactly
  p.hop_limit = w.link_ib ? 0 : 64;
  p.reversible = 1;
  p.numb_path = 1;
}

void take_conn(Event& e, const proto::CmEventWire& w) {
  rdma_conn_param& c = e.event.param.conn;
  std::memcpy(e.private_data, w.private_data, sizeof e.private_data);
  c.private_data = w.private_data_len > 0 ? e.private_data : nullptr;
  c.private_data_len = w.private_data_len;
  c.responder_resources = w.responder_resources;
  c.initiator_depth = w.initiator_depth;
  c.flow_control = w.flow_control;
  c.retry_count = w.retry_count;
  c.rnr_retry_count = w.rnr_retry_count;
  c.srq = w.srq;
  c.qp_num = w.qp_num;
}

void take_ud(Event& e, const proto::CmEventWire& w) {
  rdma_ud_param& u = e.event.param.ud;
  std::memcpy(e.private_data, w.private_data, sizeof e.private_data);
  u.private_data = w.private_data_len > 0 ? e.private_data : nullptr;
  u.private_data_len = w.private_data_len;
  u.qp_num = w.qp_num;
  u.qkey = w.qkey;
  ibv_ah_attr& a = u.ah_attr;
  a.is_global = w.ah.is_global;
  std::memcpy(a.grh.dgid.raw, w.ah.dgid, 16);
  a.grh.hop_limit = w.ah.hop_limit;
  a.grh.traffic_class = w.ah.traffic_class;
  a.grh.sgid_index = 0;
  a.dlid = w.ah.dlid;
  a.sl = w.ah.sl;
  a.port_num = 1;
}

// The ids the program holds, by the daemon's numbers: an event the daemon
// wrote before the program destroyed its id is dropped unread, as the kernel
// drops an id's queued events when it goes.
std::mutex g_live_mutex;
std::map<uint32_t, Id*> g_live;

void set_live(Id* id, bool live) {
  std::lock_guard lock(g_live_mutex);
  if (live) g_live[id->number] = id;
  else g_live.erase(id->number);
}

// An event read from the channel is the id's, counted as handed out, or
// dropped, in one step under the registry's lock: rdma_destroy_id takes the
// id out of the registry first and then waits for the count, so an event is
// either one it waits for or one nobody sees (the kernel's ucma reports and
// counts an event in one step too). Counting after the lookup let a destroy
// pass between them and free the id under the event.
Id* claim_event(uint32_t number) {
  std::lock_guard lock(g_live_mutex);
  auto it = g_live.find(number);
  if (it == g_live.end()) return nullptr;
  std::lock_guard count(it->second->mutex);
  ++it->second->unacked;
  return it->second;
}

bool is_ud(const Id& id) { return id.id.qp_type == IBV_QPT_UD || id.id.ps == RDMA_PS_UDP || id.id.ps == RDMA_PS_IPOIB; }

Id* new_id(Channel* channel, void* context, rdma_port_space ps, ibv_qp_type qp_type) {
  auto* id = new Id{};
  id->id.channel = &channel->channel;
  id->id.context = context;
  id->id.ps = ps;
  id->id.qp_type = qp_type;
  id->id.route.path_rec = &id->path;
  id->channel = channel;
  return id;
}

// A CONNECT_REQUEST's new id: the listener's channel, device and context.
Id* child_of(Id& listener, const proto::CmEventWire& w) {
  Id* c = new_id(listener.channel, listener.id.context, listener.id.ps,
                 is_ud(listener) ? IBV_QPT_UD : listener.id.qp_type);
  c->number = w.id;
  set_live(c, true);
  set_device(c->id, listener.id.verbs);
  c->id.port_num = 1;
  c->id.route.num_paths = 1;
  c->responder_resources = w.responder_resources;
  c->initiator_depth = w.initiator_depth;
  take_route(*c, w);
  if (listener.sync) {
    // A synchronous listener's requests are synchronous too, on a channel of their own.
    c->sync = true;
    if (Channel* own = open_channel(true)) {
      proto::CmIdReq q;
      q.id = c->number;
      q.value = own->number;
      if (cm_call(proto::Op::CmMigrateId, &q, sizeof q) == 0) {
        c->channel = own;
        c->id.channel = &own->channel;
      } else {
        close_channel(own);
      }
    }
  }
  return c;
}

// The active side's CONNECT_RESPONSE with a QP in the id: the QP goes to RTS,
// the RTU goes, and the program is told ESTABLISHED (CONNECT_ERROR if not).
void complete_connection(Id& id, Event& e) {
  const int rr = e.event.param.conn.initiator_depth, id_depth = e.event.param.conn.responder_resources;
  int rc = modify_qp_to(id, IBV_QPS_RTR, rr);
  if (rc == 0) rc = modify_qp_to(id, IBV_QPS_RTS, -1, std::min<int>(id_depth, id.initiator_depth));
  proto::CmIdReq q;
  q.id = id.number;
  if (rc == 0) rc = cm_call(proto::Op::CmEstablish, &q, sizeof q);
  if (rc == 0) {
    e.event.event = RDMA_CM_EVENT_ESTABLISHED;
    return;
  }
  proto::CmConnReq rej;
  rej.id = id.number;
  cm_call(proto::Op::CmReject, &rej, sizeof rej);
  e.event.event = RDMA_CM_EVENT_CONNECT_ERROR;
  e.event.status = -rc;
}

// The next event for an id the program still has, claimed for it (see
// claim_event); null with errno set when the read fails.
Id* next_event(int fd, proto::CmEventWire& w) {
  bool dropped = false;
  for (;;) {
    ssize_t n;
    do n = read(fd, &w, sizeof w);
    while (n < 0 && errno == EINTR);
    // The program destroyed the channel under this call (its fd closed, or
    // the daemon's end gone with it) while the only events were for ids it
    // had destroyed: on the kernel's channel the read would never return
    // (rping's event thread waits so until the process exits), and so it
    // does not here.
    if ((n == 0 && daemon_alive()) || (n < 0 && errno == EBADF && dropped))
      for (;;) pause();
    if (n < 0) return nullptr;  // EAGAIN on a non-blocking channel
    if (n != static_cast<ssize_t>(sizeof w)) {
      errno = n == 0 ? ENODEV : EPROTO;
      return nullptr;
    }
    Id* id = claim_event(w.event == RDMA_CM_EVENT_CONNECT_REQUEST ? w.listen_id : w.id);
    if (id != nullptr) return id;
    dropped = true;
    if (w.event == RDMA_CM_EVENT_CONNECT_REQUEST) {  // nobody listens any more: the new id goes
      proto::CmIdReq q;
      q.id = w.id;
      cm_call(proto::Op::CmDestroyId, &q, sizeof q);
    }
  }
}

// What the event tells the id, as librdmacm's ucma_process_* steps do.
void take_event(Id& id, Event& e, const proto::CmEventWire& w) {
  switch (w.event) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      set_device(id.id, device());
      id.id.port_num = 1;
      take_route(id, w);
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      take_route(id, w);
      id.id.route.num_paths = 1;
      break;
    case RDMA_CM_EVENT_CONNECT_REQUEST: {
      Id* child = child_of(id, w);
      e.event.listen_id = &id.id;
      e.event.id = &child->id;
      if (is_ud(*child)) take_ud(e, w);
      else take_conn(e, w);
      break;
    }
    case RDMA_CM_EVENT_CONNECT_RESPONSE:
      take_conn(e, w);
      if (id.id.qp != nullptr) complete_connection(id, e);
      break;
    case RDMA_CM_EVENT_ESTABLISHED:
      if (is_ud(id)) take_ud(e, w);
      else take_conn(e, w);
      break;
    case RDMA_CM_EVENT_REJECTED:
      take_conn(e, w);
      modify_qp_err(id);
      break;
    default:  // DISCONNECTED leaves the QP alone, as upstream: rdma_disconnect moves it
      break;
  }
}

}  // namespace

Channel* open_channel(bool own) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return nullptr;
  auto* c = new Channel{};
  c->channel.fd = p[0];
  c->own = own;
  proto::CmChannelRep rep;
  const int rc = cm_call(proto::Op::CmOpenChannel, nullptr, 0, &rep, sizeof rep, &p[1], 1);
  close(p[1]);  // the daemon holds its own copy
  if (rc != 0) {
    close(p[0]);
    delete c;
    errno = rc == ENODEV ? ENODEV : rc;
    return nullptr;
  }
  c->number = rep.channel;
  return c;
}

void close_channel(Channel* c) {
  proto::CmIdReq q;
  q.id = c->number;
  cm_call(proto::Op::CmCloseChannel, &q, sizeof q);
  close(c->channel.fd);
  delete c;
}

int wait_event(Id& id, rdma_cm_event_type expected, rdma_cm_event** kept) {
  rdma_cm_event* e = nullptr;
  if (rdma_get_cm_event(&id.channel->channel, &e) != 0) return -1;
  const rdma_cm_event_type got = e->event;
  const int status = e->status;
  if (kept != nullptr && got == expected) {
    *kept = e;
    return 0;
  }
  rdma_ack_cm_event(e);
  if (got == expected) return 0;
  // What upstream's synchronous calls report for the other outcomes.
  if (got == RDMA_CM_EVENT_REJECTED) return fail(ECONNREFUSED);
  return fail(status < 0 ? -status : status != 0 ? status : ECONNABORTED);
}

}  // namespace rnicsim::rdmacm

using namespace rnicsim::rdmacm;

extern "C" {

// --- event channels ---

struct rdma_event_channel* rdma_create_event_channel(void) {
  if (device() == nullptr) {  // as upstream: no RDMA device, no channel
    errno = ENODEV;
    return nullptr;
  }
  Channel* c = open_channel(false);
  return c != nullptr ? &c->channel : nullptr;
}

void rdma_destroy_event_channel(struct rdma_event_channel* channel) {
  if (channel != nullptr) close_channel(of(channel));
}

int rdma_get_cm_event(struct rdma_event_channel* channel, struct rdma_cm_event** event) {
  if (channel == nullptr || event == nullptr) return fail(EINVAL);
  proto::CmEventWire w;
  Id* id = next_event(channel->fd, w);  // the fd: the channel may go while this call waits
  if (id == nullptr) return -1;
  auto* e = new Event{};
  e->event.id = &id->id;
  e->event.event = static_cast<rdma_cm_event_type>(w.event);
  e->event.status = w.status;
  take_event(*id, *e, w);
  *event = &e->event;
  return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event* event) {
  if (event == nullptr) return fail(EINVAL);
  auto* e = reinterpret_cast<Event*>(event);
  Id* counted = of(event->listen_id != nullptr ? event->listen_id : event->id);
  {
    std::lock_guard lock(counted->mutex);
    --counted->unacked;
  }
  counted->acked.notify_all();
  delete e;
  return 0;
}

// --- ids ---

int rdma_create_id(struct rdma_event_channel* channel, struct rdma_cm_id** id, void* context,
                   enum rdma_port_space ps) {
  if (id == nullptr) return fail(EINVAL);
  const bool sync = channel == nullptr;
  Channel* c = sync ? open_channel(true) : of(channel);
  if (c == nullptr) return -1;
  const ibv_qp_type qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
  Id* i = new_id(c, context, ps, qp_type);
  i->sync = sync;
  proto::CmCreateIdReq q;
  q.channel = c->number;
  q.port_space = ps;
  q.qp_type = qp_type;
  proto::ObjectRep rep;
  if (cm_call(proto::Op::CmCreateId, &q, sizeof q, &rep, sizeof rep) != 0) {
    const int err = errno;
    if (sync) close_channel(c);
    delete i;
    return fail(err);
  }
  i->number = rep.id;
  set_live(i, true);
  *id = &i->id;
  return 0;
}

int rdma_destroy_id(struct rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  Id& i = *of(id);
  set_live(&i, false);  // first: its events not yet handed out are dropped (claim_event)
  {
    // As upstream: every event reported for the id must have been acknowledged.
    std::unique_lock lock(i.mutex);
    i.acked.wait(lock, [&] { return i.unacked == 0; });
  }
  proto::CmIdReq q;
  q.id = i.number;
  cm_call(proto::Op::CmDestroyId, &q, sizeof q);
  if (i.channel != nullptr && i.channel->own) close_channel(i.channel);
  delete i.listen_qp_attr;
  delete &i;
  return 0;
}

int rdma_migrate_id(struct rdma_cm_id* id, struct rdma_event_channel* channel) {
  if (id == nullptr) return fail(EINVAL);
  Id& i = *of(id);
  Channel* to = channel != nullptr ? of(channel) : open_channel(true);
  if (to == nullptr) return -1;
  proto::CmIdReq q;
  q.id = i.number;
  q.value = to->number;
  if (cm_call(proto::Op::CmMigrateId, &q, sizeof q) != 0) {
    const int err = errno;
    if (channel == nullptr) close_channel(to);
    return fail(err);
  }
  if (i.channel->own) close_channel(i.channel);
  i.channel = to;
  i.sync = channel == nullptr;
  id->channel = &to->channel;
  return 0;
}

int rdma_bind_addr(struct rdma_cm_id* id, struct sockaddr* addr) {
  if (id == nullptr || addr == nullptr) return fail(EINVAL);
  proto::CmIdReq q;
  q.id = of(id)->number;
  q.src = to_wire(addr);
  proto::CmAddrRep rep;
  if (cm_call(proto::Op::CmBind, &q, sizeof q, &rep, sizeof rep) != 0) return -1;
  from_wire(rep.addr, id->route.addr.src_storage);
  set_device(*id, device());
  id->port_num = 1;
  return 0;
}

int rdma_resolve_addr(struct rdma_cm_id* id, struct sockaddr* src_addr, struct sockaddr* dst_addr, int timeout_ms) {
  if (id == nullptr || dst_addr == nullptr) return fail(EINVAL);
  proto::CmIdReq q;
  q.id = of(id)->number;
  q.src = to_wire(src_addr);
  q.dst = to_wire(dst_addr);
  q.value = static_cast<uint32_t>(std::max(timeout_ms, 1));
  if (cm_call(proto::Op::CmResolveAddr, &q, sizeof q) != 0) return -1;
  from_wire(q.dst, id->route.addr.dst_storage);
  return of(id)->sync ? wait_event(*of(id), RDMA_CM_EVENT_ADDR_RESOLVED) : 0;
}

int rdma_resolve_route(struct rdma_cm_id* id, int timeout_ms) {
  if (id == nullptr) return fail(EINVAL);
  proto::CmIdReq q;
  q.id = of(id)->number;
  q.value = static_cast<uint32_t>(std::max(timeout_ms, 1));
  if (cm_call(proto::Op::CmResolveRoute, &q, sizeof q) != 0) return -1;
  return of(id)->sync ? wait_event(*of(id), RDMA_CM_EVENT_ROUTE_RESOLVED) : 0;
}

int rdma_listen(struct rdma_cm_id* id, int backlog) {
  if (id == nullptr) return fail(EINVAL);
  proto::CmIdReq q;
  q.id = of(id)->number;
  q.value = static_cast<uint32_t>(std::max(backlog, 0));
  if (cm_call(proto::Op::CmListen, &q, sizeof q) != 0) return -1;
  if (id->verbs == nullptr) set_device(*id, device());
  return 0;
}

// --- connections ---

namespace {

// The device's limits stand for RDMA_MAX_RESP_RES / RDMA_MAX_INIT_DEPTH.
uint8_t resolve_depth(ibv_context* verbs, uint8_t asked, bool responder) {
  if (asked != RDMA_MAX_RESP_RES) return asked;
  ibv_device_attr a{};
  if (verbs == nullptr || ibv_query_device(verbs, &a) != 0) return 1;
  return static_cast<uint8_t>(std::min(responder ? a.max_qp_rd_atom : a.max_qp_init_rd_atom, 255));
}

proto::CmConnReq conn_request(const Id& i, const rdma_conn_param* p) {
  proto::CmConnReq q;
  q.id = i.number;
  q.qp_type = i.id.qp_type;
  q.qpn = i.id.qp != nullptr ? i.id.qp->qp_num : p != nullptr ? p->qp_num : 0;
  q.srq = i.id.srq != nullptr || (p != nullptr && p->srq);
  if (p == nullptr) {
    q.retry_count = q.rnr_retry_count = 7;
    return q;
  }
  q.responder_resources = resolve_depth(i.id.verbs, p->responder_resources, true);
  q.initiator_depth = resolve_depth(i.id.verbs, p->initiator_depth, false);
  q.flow_control = p->flow_control;
  q.retry_count = p->retry_count;
  q.rnr_retry_count = p->rnr_retry_count;
  q.private_data_len = static_cast<uint8_t>(std::min<size_t>(p->private_data_len, proto::kCmPrivateMax));
  if (p->private_data != nullptr) std::memcpy(q.private_data, p->private_data, q.private_data_len);
  return q;
}

}  // namespace

int rdma_connect(struct rdma_cm_id* id, struct rdma_conn_param* conn_param) {
  if (id == nullptr) return fail(EINVAL);
  Id& i = *of(id);
  const proto::CmConnReq q = conn_request(i, conn_param);
  i.initiator_depth = q.initiator_depth;
  if (cm_call(proto::Op::CmConnect, &q, sizeof q) != 0) return -1;
  return i.sync ? wait_event(i, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int rdma_establish(struct rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  proto::CmIdReq q;
  q.id = of(id)->number;
  return cm_call(proto::Op::CmEstablish, &q, sizeof q) == 0 ? 0 : -1;
}

int rdma_accept(struct rdma_cm_id* id, struct rdma_conn_param* conn_param) {
  if (id == nullptr) return fail(EINVAL);
  Id& i = *of(id);
  rdma_conn_param defaults{};
  if (conn_param == nullptr) {
    // Upstream's defaults: answer the request's depths.
    defaults.responder_resources = i.responder_resources;
    defaults.initiator_depth = i.initiator_depth;
    defaults.rnr_retry_count = 7;
    conn_param = &defaults;
  }
  proto::CmConnReq q = conn_request(i, conn_param);
  if (id->qp != nullptr && !is_ud(i)) {
    if (modify_qp_to(i, IBV_QPS_RTR, q.responder_resources) != 0 ||
        modify_qp_to(i, IBV_QPS_RTS, -1, q.initiator_depth) != 0) {
      const int err = errno;
      proto::CmConnReq rej;
      rej.id = i.number;
      cm_call(proto::Op::CmReject, &rej, sizeof rej);
      return fail(err);
    }
  }
  if (cm_call(proto::Op::CmAccept, &q, sizeof q) != 0) return -1;
  return i.sync && !is_ud(i) ? wait_event(i, RDMA_CM_EVENT_ESTABLISHED) : 0;
}

int rdma_reject(struct rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  if (id == nullptr) return fail(EINVAL);
  proto::CmConnReq q;
  q.id = of(id)->number;
  q.private_data_len = static_cast<uint8_t>(std::min<size_t>(private_data_len, proto::kCmPrivateMax));
  if (private_data != nullptr) std::memcpy(q.private_data, private_data, q.private_data_len);
  return cm_call(proto::Op::CmReject, &q, sizeof q) == 0 ? 0 : -1;
}

int rdma_reject_ece(struct rdma_cm_id* id, const void* private_data, uint8_t private_data_len) {
  return rdma_reject(id, private_data, private_data_len);
}

int rdma_notify(struct rdma_cm_id* id, enum ibv_event_type event) {
  if (id == nullptr) return fail(EINVAL);
  if (event != IBV_EVENT_COMM_EST) return 0;
  proto::CmIdReq q;
  q.id = of(id)->number;
  cm_call(proto::Op::CmEstablish, &q, sizeof q);
  return 0;
}

int rdma_disconnect(struct rdma_cm_id* id) {
  if (id == nullptr) return fail(EINVAL);
  modify_qp_err(*of(id));
  proto::CmIdReq q;
  q.id = of(id)->number;
  return cm_call(proto::Op::CmDisconnect, &q, sizeof q) == 0 ? 0 : -1;
}

int rdma_get_request(struct rdma_cm_id* listen, struct rdma_cm_id** id) {
  if (listen == nullptr || id == nullptr) return fail(EINVAL);
  Id& l = *of(listen);
  if (!l.sync) return fail(EINVAL);
  rdma_cm_event* e = nullptr;
  if (wait_event(l, RDMA_CM_EVENT_CONNECT_REQUEST, &e) != 0) return -1;
  rdma_cm_id* child = e->id;
  rdma_ack_cm_event(e);
  if (l.listen_qp_attr != nullptr) {
    ibv_qp_init_attr attr = *l.listen_qp_attr;
    if (rdma_create_qp(child, listen->pd, &attr) != 0) {
      const int err = errno;
      rdma_reject(child, nullptr, 0);
      rdma_destroy_id(child);
      return fail(err);
    }
  }
  *id = child;
  return 0;
}

// --- options, ECE, multicast ---

int rdma_set_option(struct rdma_cm_id* id, int level, int optname, void* optval, size_t optlen) {
  if (id == nullptr || optval == nullptr) return fail(EINVAL);
  if (level == RDMA_OPTION_ID) {
    proto::CmOptionReq q;
    q.id = of(id)->number;
    q.option = static_cast<uint32_t>(optname);
    switch (optname) {
      case RDMA_OPTION_ID_TOS: case RDMA_OPTION_ID_ACK_TIMEOUT:
        if (optlen != sizeof(uint8_t)) return fail(EINVAL);
        q.value = *static_cast<const uint8_t*>(optval);
        break;
      case RDMA_OPTION_ID_REUSEADDR: case RDMA_OPTION_ID_AFONLY:
        if (optlen != sizeof(int)) return fail(EINVAL);
        q.value = *static_cast<const int*>(optval) != 0;
        break;
      default: return fail(ENOSYS);
    }
    return cm_call(proto::Op::CmSetOption, &q, sizeof q) == 0 ? 0 : -1;
  }
  if (level == RDMA_OPTION_IB && optname == RDMA_OPTION_IB_PATH) return 0;
  return fail(ENOSYS);
}

// No ECE options are negotiated: the remote's are all zero, ours are kept.
int rdma_set_local_ece(struct rdma_cm_id* id, struct ibv_ece* ece) {
  return id == nullptr || ece == nullptr ? fail(EINVAL) : 0;
}

int rdma_get_remote_ece(struct rdma_cm_id* id, struct ibv_ece* ece) {
  if (id == nullptr || ece == nullptr) return fail(EINVAL);
  *ece = ibv_ece{};
  return 0;
}

// The emulated port has no multicast support: the kernel's CM answers ENOSYS then.
int rdma_join_multicast(struct rdma_cm_id*, struct sockaddr*, void*) { return fail(ENOSYS); }
int rdma_join_multicast_ex(struct rdma_cm_id*, struct rdma_cm_join_mc_attr_ex*, void*) { return fail(ENOSYS); }
int rdma_leave_multicast(struct rdma_cm_id*, struct sockaddr*) { return fail(EADDRNOTAVAIL); }

}  // extern "C"
