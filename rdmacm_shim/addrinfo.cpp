// rdma_getaddrinfo and rdma_freeaddrinfo: getaddrinfo underneath, its first
// answer turned into one rdma_addrinfo (QP type and port space from the socket
// type and protocol unless the hints give them; the address copied to
// ai_src_addr when passive, ai_dst_addr otherwise). A getaddrinfo failure is
// returned as its EAI_* code, with errno as getaddrinfo left it; other
// failures are -1 with errno, as upstream librdmacm does.
//
// Two differences from upstream: no device is needed (upstream opens the
// kernel's CM first and fails with no device), and there is no route query to
// ibacm for active-side answers (ai_route stays empty).
#include <netdb.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <infiniband/ib.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

addrinfo to_addrinfo_hints(const rdma_addrinfo& h) {
  addrinfo ai{};
  if (h.ai_flags & RAI_PASSIVE) ai.ai_flags |= AI_PASSIVE;
  if (h.ai_flags & RAI_NUMERICHOST) ai.ai_flags |= AI_NUMERICHOST;
  if (h.ai_family != AF_IB) ai.ai_family = h.ai_family;
  switch (h.ai_qp_type) {
    case IBV_QPT_RC:
    case IBV_QPT_UC:
    case IBV_QPT_XRC_SEND:
    case IBV_QPT_XRC_RECV: ai.ai_socktype = SOCK_STREAM; break;
    case IBV_QPT_UD: ai.ai_socktype = SOCK_DGRAM; break;
    default: break;
  }
  switch (h.ai_port_space) {
    case RDMA_PS_TCP: ai.ai_protocol = IPPROTO_TCP; break;
    case RDMA_PS_UDP:
    case RDMA_PS_IPOIB: ai.ai_protocol = IPPROTO_UDP; break;
    case RDMA_PS_IB:
      if (ai.ai_socktype == SOCK_STREAM) ai.ai_protocol = IPPROTO_TCP;
      if (ai.ai_socktype == SOCK_DGRAM) ai.ai_protocol = IPPROTO_UDP;
      break;
    default: break;
  }
  return ai;
}

// A malloc'ed copy of len bytes of addr; false (errno ENOMEM) if out of memory.
bool copy_address(sockaddr** dst, socklen_t* dst_len, const void* addr, socklen_t len) {
  *dst = static_cast<sockaddr*>(std::malloc(len));
  if (*dst == nullptr) {
    errno = ENOMEM;
    return false;
  }
  std::memcpy(*dst, addr, len);
  *dst_len = len;
  return true;
}

// An IP address as AF_IB (the RAI_FAMILY/AF_IB hint): its 16 bytes as the GID
// (an IPv4 address as ::ffff:a.b.c.d), the port space and port in the service ID.
bool copy_as_ib(sockaddr** dst, socklen_t* dst_len, const addrinfo& ai, int port_space) {
  auto* sib = static_cast<sockaddr_ib*>(std::calloc(1, sizeof(sockaddr_ib)));
  if (sib == nullptr) {
    errno = ENOMEM;
    return false;
  }
  sib->sib_family = AF_IB;
  sib->sib_pkey = htobe16(0xFFFF);
  uint16_t port = 0;  // host order
  if (ai.ai_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(ai.ai_addr);
    std::memcpy(&sib->sib_addr, &in6->sin6_addr, sizeof in6->sin6_addr);
    sib->sib_flowinfo = in6->sin6_flowinfo;
    sib->sib_scope_id = in6->sin6_scope_id;
    port = be16toh(in6->sin6_port);
  } else if (ai.ai_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(ai.ai_addr);
    uint8_t* gid = reinterpret_cast<uint8_t*>(&sib->sib_addr);
    gid[10] = gid[11] = 0xFF;
    std::memcpy(gid + 12, &in->sin_addr, sizeof in->sin_addr);
    port = be16toh(in->sin_port);
  }
  sib->sib_sid = htobe64((static_cast<uint64_t>(port_space) << 16) + port);
  uint64_t mask = 0;
  if (port_space != 0) mask |= RDMA_IB_IP_PS_MASK;
  if (port != 0) mask |= RDMA_IB_IP_PORT_MASK;
  sib->sib_sid_mask = htobe64(mask);
  *dst = reinterpret_cast<sockaddr*>(sib);
  *dst_len = sizeof(sockaddr_ib);
  return true;
}

// Fills rai from getaddrinfo's first answer; 0, an EAI_* code, or -1 with errno.
int resolve(const char* node, const char* service, const rdma_addrinfo* hints, rdma_addrinfo* rai) {
  addrinfo* answers = nullptr;
  int rc = 0;
  if (hints != nullptr) {
    const addrinfo ai_hints = to_addrinfo_hints(*hints);
    rc = getaddrinfo(node, service, &ai_hints, &answers);
  } else {
    rc = getaddrinfo(node, service, nullptr, &answers);
  }
  if (rc != 0) return rc;
  const addrinfo& ai = *answers;
  static const rdma_addrinfo kNoHints{};
  const rdma_addrinfo& h = hints != nullptr ? *hints : kNoHints;

  rai->ai_qp_type = h.ai_qp_type;
  if (rai->ai_qp_type == 0) {
    if (ai.ai_socktype == SOCK_STREAM) rai->ai_qp_type = IBV_QPT_RC;
    if (ai.ai_socktype == SOCK_DGRAM) rai->ai_qp_type = IBV_QPT_UD;
  }
  rai->ai_port_space = h.ai_port_space;
  if (rai->ai_port_space == 0) {
    if (ai.ai_protocol == IPPROTO_TCP) rai->ai_port_space = RDMA_PS_TCP;
    if (ai.ai_protocol == IPPROTO_UDP) rai->ai_port_space = RDMA_PS_UDP;
  }
  const bool passive = (ai.ai_flags & AI_PASSIVE) != 0;
  if (passive) rai->ai_flags = RAI_PASSIVE;
  char** canonname = passive ? &rai->ai_src_canonname : &rai->ai_dst_canonname;
  if (ai.ai_canonname != nullptr) *canonname = strdup(ai.ai_canonname);
  sockaddr** addr = passive ? &rai->ai_src_addr : &rai->ai_dst_addr;
  socklen_t* len = passive ? &rai->ai_src_len : &rai->ai_dst_len;
  bool ok = false;
  if ((h.ai_flags & RAI_FAMILY) && h.ai_family == AF_IB && (h.ai_flags & RAI_NUMERICHOST)) {
    rai->ai_family = AF_IB;
    ok = copy_as_ib(addr, len, ai, rai->ai_port_space);
  } else {
    rai->ai_family = ai.ai_family;
    ok = copy_address(addr, len, ai.ai_addr, ai.ai_addrlen);
  }
  freeaddrinfo(answers);
  return ok ? 0 : -1;
}

}  // namespace

extern "C" {

int rdma_getaddrinfo(const char* node, const char* service, const struct rdma_addrinfo* hints,
                     struct rdma_addrinfo** res) {
  if (node == nullptr && service == nullptr && hints == nullptr) {
    errno = EINVAL;
    return -1;
  }
  auto* rai = static_cast<rdma_addrinfo*>(std::calloc(1, sizeof(rdma_addrinfo)));
  if (rai == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  int rc = 0;
  if (node != nullptr || service != nullptr) {
    rc = resolve(node, service, hints, rai);
  } else {
    // Nothing to look up: the hints are the answer.
    rai->ai_flags = hints->ai_flags;
    rai->ai_family = hints->ai_family;
    rai->ai_qp_type = hints->ai_qp_type;
    rai->ai_port_space = hints->ai_port_space;
    if (hints->ai_dst_len != 0 &&
        !copy_address(&rai->ai_dst_addr, &rai->ai_dst_len, hints->ai_dst_addr, hints->ai_dst_len))
      rc = -1;
  }
  if (rc == 0 && rai->ai_src_len == 0 && hints != nullptr && hints->ai_src_len != 0 &&
      !copy_address(&rai->ai_src_addr, &rai->ai_src_len, hints->ai_src_addr, hints->ai_src_len))
    rc = -1;
  if (rc != 0) {
    rdma_freeaddrinfo(rai);
    return rc;
  }
  *res = rai;
  return 0;
}

void rdma_freeaddrinfo(struct rdma_addrinfo* res) {
  while (res != nullptr) {
    rdma_addrinfo* next = res->ai_next;
    std::free(res->ai_connect);
    std::free(res->ai_route);
    std::free(res->ai_src_canonname);
    std::free(res->ai_dst_canonname);
    std::free(res->ai_src_addr);
    std::free(res->ai_dst_addr);
    std::free(res);
    res = next;
  }
}

}  // extern "C"
