// The CM core's shared pieces: the session with the daemon's RDMA CM, and the
// library's own id, channel and event objects, each of which begins with the
// public struct the program sees (rdma_cm_id, rdma_event_channel,
// rdma_cm_event), as upstream's do.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "verbs_shim/cm_protocol.hpp"

namespace rnicsim::rdmacm {

namespace proto = verbs_proto;

// One request to the daemon's RDMA CM and its reply. Returns 0 or an errno
// (errno is set too); ENODEV when no daemon answers.
int cm_call(proto::Op op, const void* req, size_t req_len, void* rep = nullptr, size_t rep_len = 0,
            const int* fds = nullptr, size_t nfds = 0);

// Whether the session with the daemon is still up.
bool daemon_alive();

struct Channel {
  rdma_event_channel channel;  // fd: the read end of the pipe the daemon writes events into
  uint32_t number = 0;
  bool own = false;  // a synchronous id's private channel
};

struct Id {
  rdma_cm_id id;
  uint32_t number = 0;
  bool sync = false;  // created with no channel: every call waits for its event
  Channel* channel = nullptr;
  // Events handed out and not yet acknowledged (rdma_destroy_id waits for them).
  std::mutex mutex;
  std::condition_variable acked;
  int unacked = 0;
  // The route as the daemon gave it.
  ibv_sa_path_rec path{};
  bool own_cqs = false;  // rdma_create_qp made the CQs and channels: rdma_destroy_qp destroys them
  ibv_qp_init_attr* listen_qp_attr = nullptr;  // rdma_create_ep on a passive id: QPs for its requests
  uint8_t responder_resources = 0, initiator_depth = 0;  // of the CONNECT_REQUEST (rdma_accept's defaults)
};

struct Event {
  rdma_cm_event event;
  uint8_t private_data[proto::kCmPrivateMax] = {};
};

inline Id* of(rdma_cm_id* id) { return reinterpret_cast<Id*>(id); }
inline Channel* of(rdma_event_channel* c) { return reinterpret_cast<Channel*>(c); }

// Creates a channel (a pipe registered with the daemon); nullptr and errno if not.
Channel* open_channel(bool own);
void close_channel(Channel* c);
// Waits for the next event on a synchronous id's channel and checks it is
// `expected`: 0, or -1 with errno from its status. The event is acknowledged
// unless `keep` (then *kept gets it).
int wait_event(Id& id, rdma_cm_event_type expected, rdma_cm_event** kept = nullptr);
// The QP steps librdmacm makes itself (with the daemon's rdma_init_qp_attr).
int modify_qp_to(Id& id, ibv_qp_state state, int responder_resources = -1, int initiator_depth = -1);
int modify_qp_err(Id& id);

}  // namespace rnicsim::rdmacm
