// The CM's helpers that need no connection manager: event names and the ports
// of an id's addresses.
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>

#include <cstdint>

namespace {

struct EventName {
  rdma_cm_event_type event;
  const char* name;
};
constexpr EventName kEventNames[] = {
    {RDMA_CM_EVENT_ADDR_RESOLVED, "RDMA_CM_EVENT_ADDR_RESOLVED"},
    {RDMA_CM_EVENT_ADDR_ERROR, "RDMA_CM_EVENT_ADDR_ERROR"},
    {RDMA_CM_EVENT_ROUTE_RESOLVED, "RDMA_CM_EVENT_ROUTE_RESOLVED"},
    {RDMA_CM_EVENT_ROUTE_ERROR, "RDMA_CM_EVENT_ROUTE_ERROR"},
    {RDMA_CM_EVENT_CONNECT_REQUEST, "RDMA_CM_EVENT_CONNECT_REQUEST"},
    {RDMA_CM_EVENT_CONNECT_RESPONSE, "RDMA_CM_EVENT_CONNECT_RESPONSE"},
    {RDMA_CM_EVENT_CONNECT_ERROR, "RDMA_CM_EVENT_CONNECT_ERROR"},
    {RDMA_CM_EVENT_UNREACHABLE, "RDMA_CM_EVENT_UNREACHABLE"},
    {RDMA_CM_EVENT_REJECTED, "RDMA_CM_EVENT_REJECTED"},
    {RDMA_CM_EVENT_ESTABLISHED, "RDMA_CM_EVENT_ESTABLISHED"},
    {RDMA_CM_EVENT_DISCONNECTED, "RDMA_CM_EVENT_DISCONNECTED"},
    {RDMA_CM_EVENT_DEVICE_REMOVAL, "RDMA_CM_EVENT_DEVICE_REMOVAL"},
    {RDMA_CM_EVENT_MULTICAST_JOIN, "RDMA_CM_EVENT_MULTICAST_JOIN"},
    {RDMA_CM_EVENT_MULTICAST_ERROR, "RDMA_CM_EVENT_MULTICAST_ERROR"},
    {RDMA_CM_EVENT_ADDR_CHANGE, "RDMA_CM_EVENT_ADDR_CHANGE"},
    {RDMA_CM_EVENT_TIMEWAIT_EXIT, "RDMA_CM_EVENT_TIMEWAIT_EXIT"},
};

// The port of an address in network order; for AF_IB the low 16 bits of the
// service ID, whose low bits are the port of the IP port spaces.
__be16 port_of(const sockaddr* addr) {
  switch (addr->sa_family) {
    case AF_INET: return reinterpret_cast<const sockaddr_in*>(addr)->sin_port;
    case AF_INET6: return reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port;
    case AF_IB:
      return htobe16(static_cast<uint16_t>(be64toh(reinterpret_cast<const sockaddr_ib*>(addr)->sib_sid)));
    default: return 0;
  }
}

}  // namespace

extern "C" {

const char* rdma_event_str(enum rdma_cm_event_type event) {
  for (const EventName& e : kEventNames)
    if (e.event == event) return e.name;
  return "UNKNOWN EVENT";
}

__be16 rdma_get_src_port(struct rdma_cm_id* id) { return port_of(&id->route.addr.src_addr); }

__be16 rdma_get_dst_port(struct rdma_cm_id* id) { return port_of(&id->route.addr.dst_addr); }

}  // extern "C"
