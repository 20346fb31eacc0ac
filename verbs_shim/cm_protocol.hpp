// The RDMA CM part of the emulation protocol: what librdmacm.so.1 (in the
// program) asks the daemon's RDMA CM, and the events the daemon writes into
// the program's event channels. The library opens a session of its own
// (Hello, then these requests; see protocol.hpp for the framing); an event
// channel is a pipe whose write end the daemon holds, one CmEventWire per
// write (smaller than PIPE_BUF, so never torn).
#pragma once

#include <cstdint>

#include "verbs_shim/protocol.hpp"

namespace rnicsim::verbs_proto {

// An IPv4 or IPv6 address and port as sockaddr_in/in6 give them (network order).
struct CmAddr {
  uint16_t family = 0;  // AF_INET, AF_INET6 or 0 (none)
  uint16_t port = 0;    // network order
  uint8_t addr[16] = {};  // IPv4 in the first 4 bytes
};

struct CmChannelRep {
  uint32_t channel = 0;
  uint32_t reserved = 0;
};

struct CmCreateIdReq {
  uint32_t channel = 0;
  uint32_t port_space = 0;  // enum rdma_port_space
  uint32_t qp_type = 0;     // ibv_qp_type
  uint32_t reserved = 0;
};

// Requests about one id; `value` and `addr`s as the op says.
struct CmIdReq {
  uint32_t id = 0;
  uint32_t value = 0;  // ResolveAddr/Route: timeout ms; Listen: backlog; InitQpAttr: state; Migrate: channel
  CmAddr src, dst;     // Bind: src; ResolveAddr: src (family 0: any) and dst
};
// rdma_set_option(RDMA_OPTION_ID, option, value): TOS, REUSEADDR, AFONLY or ACK_TIMEOUT.
struct CmOptionReq {
  uint32_t id = 0;
  uint32_t option = 0;  // RDMA_OPTION_ID_*
  uint32_t value = 0;
  uint32_t reserved = 0;
};
struct CmAddrRep {
  CmAddr addr;  // Bind: the address bound (with the port chosen)
};

// Connect, Accept, Reject: the connection parameters (rdma_conn_param) and,
// for Connect and Accept, the QP the library brings up.
inline constexpr uint32_t kCmPrivateMax = 196;
struct CmConnReq {
  uint32_t id = 0;
  uint32_t qpn = 0;  // 0: no QP in the id (the program brings its own up)
  uint32_t qp_type = 0;
  uint32_t reserved = 0;
  uint8_t responder_resources = 0, initiator_depth = 0, flow_control = 0, retry_count = 0, rnr_retry_count = 0,
          srq = 0, private_data_len = 0, reserved1 = 0;
  uint8_t private_data[kCmPrivateMax] = {};
};

// rdma_init_qp_attr's answer: the attributes ibv_modify_qp takes (as
// ModifyQpReq carries them) and their mask.
struct CmQpAttrRep {
  uint32_t mask = 0;
  uint32_t state = 0;
  uint32_t path_mtu = 0, qkey = 0, rq_psn = 0, sq_psn = 0, dest_qpn = 0, access = 0;
  uint16_t pkey_index = 0;
  uint8_t port_num = 0, max_rd_atomic = 0, max_dest_rd_atomic = 0, min_rnr_timer = 0, timeout = 0, retry_cnt = 0,
          rnr_retry = 0, reserved[3] = {};
  AhWire ah;
  uint8_t dmac[6] = {};
  uint16_t reserved2 = 0;
};

// One event, as rdma_get_cm_event reports it (event numbers are enum
// rdma_cm_event_type; status negative errnos or the REJ reason).
struct CmEventWire {
  uint32_t id = 0;             // the id the event is for (for CONNECT_REQUEST: the new id)
  uint32_t listen_id = 0;      // CONNECT_REQUEST: the listening id
  int32_t event = 0;
  int32_t status = 0;
  uint32_t qp_num = 0;         // the peer's QPN (conn: REQ/REP; UD: SIDR REP)
  uint32_t qkey = 0;           // UD
  uint8_t responder_resources = 0, initiator_depth = 0, flow_control = 0, retry_count = 0, rnr_retry_count = 0,
          srq = 0, reserved = 0;
  uint8_t private_data_len = 0;
  uint8_t private_data[kCmPrivateMax] = {};
  AhWire ah;                   // UD: how to reach the peer
  // The id's route as it stands (new ids and resolved ones).
  CmAddr src, dst;
  uint8_t sgid[16] = {}, dgid[16] = {};
  uint16_t pkey = 0xFFFF;
  uint8_t path_mtu = 0;        // enum ibv_mtu
  uint8_t link_ib = 0;         // 1: InfiniBand port (LIDs), 0: RoCE
  uint16_t slid = 0, dlid = 0;
};
static_assert(sizeof(CmEventWire) < 512);

}  // namespace rnicsim::verbs_proto
