// The CM core (rdma_cma.h, and the SRQ calls of rdma_verbs.h): ids, event
// channels, resolution, connections, multicast. Until the daemon's CM agent
// exists each call fails with ENOSYS and the failure value of its man page.
// The helpers that need no CM (rdma_event_str, rdma_get_src_port, ...) are in
// misc.cpp, rdma_getaddrinfo in addrinfo.cpp, rdma_get_devices in devices.cpp.
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace {

int fail() {
  errno = ENOSYS;
  return -1;
}

std::nullptr_t fail_null() {
  errno = ENOSYS;
  return nullptr;
}

}  // namespace

extern "C" {

// Event channels

// not yet implemented: needs the daemon's CM agent
struct rdma_event_channel* rdma_create_event_channel(void) { return fail_null(); }

// not yet implemented: needs the daemon's CM agent
void rdma_destroy_event_channel(struct rdma_event_channel*) { fail(); }

// Ids and endpoints

// not yet implemented: needs the daemon's CM agent
int rdma_create_id(struct rdma_event_channel*, struct rdma_cm_id**, void*, enum rdma_port_space) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_create_ep(struct rdma_cm_id**, struct rdma_addrinfo*, struct ibv_pd*, struct ibv_qp_init_attr*) {
  return fail();
}

// not yet implemented: needs the daemon's CM agent
void rdma_destroy_ep(struct rdma_cm_id*) { fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_destroy_id(struct rdma_cm_id*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_bind_addr(struct rdma_cm_id*, struct sockaddr*) { return fail(); }

// Address and route resolution

// not yet implemented: needs the daemon's CM agent
int rdma_resolve_addr(struct rdma_cm_id*, struct sockaddr*, struct sockaddr*, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_resolve_route(struct rdma_cm_id*, int) { return fail(); }

// Queue pairs

// not yet implemented: needs the daemon's CM agent
int rdma_create_qp(struct rdma_cm_id*, struct ibv_pd*, struct ibv_qp_init_attr*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_create_qp_ex(struct rdma_cm_id*, struct ibv_qp_init_attr_ex*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
void rdma_destroy_qp(struct rdma_cm_id*) { fail(); }

// Connections

// not yet implemented: needs the daemon's CM agent
int rdma_connect(struct rdma_cm_id*, struct rdma_conn_param*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_establish(struct rdma_cm_id*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_listen(struct rdma_cm_id*, int) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_get_request(struct rdma_cm_id*, struct rdma_cm_id**) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_accept(struct rdma_cm_id*, struct rdma_conn_param*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_reject(struct rdma_cm_id*, const void*, uint8_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_reject_ece(struct rdma_cm_id*, const void*, uint8_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_notify(struct rdma_cm_id*, enum ibv_event_type) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_disconnect(struct rdma_cm_id*) { return fail(); }

// Multicast

// not yet implemented: needs the daemon's CM agent
int rdma_join_multicast(struct rdma_cm_id*, struct sockaddr*, void*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_leave_multicast(struct rdma_cm_id*, struct sockaddr*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_join_multicast_ex(struct rdma_cm_id*, struct rdma_cm_join_mc_attr_ex*, void*) { return fail(); }

// Events

// not yet implemented: needs the daemon's CM agent
int rdma_get_cm_event(struct rdma_event_channel*, struct rdma_cm_event**) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_ack_cm_event(struct rdma_cm_event*) { return fail(); }

// Options, migration, QP attributes and ECE

// not yet implemented: needs the daemon's CM agent
int rdma_set_option(struct rdma_cm_id*, int, int, void*, size_t) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_migrate_id(struct rdma_cm_id*, struct rdma_event_channel*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_init_qp_attr(struct rdma_cm_id*, struct ibv_qp_attr*, int*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_set_local_ece(struct rdma_cm_id*, struct ibv_ece*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_get_remote_ece(struct rdma_cm_id*, struct ibv_ece*) { return fail(); }

// Shared receive queues (rdma_verbs.h)

// not yet implemented: needs the daemon's CM agent
int rdma_create_srq(struct rdma_cm_id*, struct ibv_pd*, struct ibv_srq_init_attr*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
int rdma_create_srq_ex(struct rdma_cm_id*, struct ibv_srq_init_attr_ex*) { return fail(); }

// not yet implemented: needs the daemon's CM agent
void rdma_destroy_srq(struct rdma_cm_id*) { fail(); }

}  // extern "C"
