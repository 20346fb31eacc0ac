// The RDMA CM of one emulated host, as the kernel's rdma_cm and ucma do it for
// librdmacm: ids bound to the host's IP address and a port of a port space,
// address and route resolution against the scenario's hosts, listening, and
// connection set-up and tear-down through the port's IB CM (cm/), whose MADs
// cross the simulated fabric on QP1. Events go to the program's event
// channels (pipes) as CmEventWire records, in the order the kernel delivers
// them. The QP itself stays the program's: the library brings it through
// INIT/RTR/RTS with the attributes init_qp_attr() answers from what the CM
// negotiated, as librdmacm does with the kernel's rdma_init_qp_attr.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "cm/connection_manager.hpp"
#include "emulation/call.hpp"
#include "emulation/process_spaces.hpp"
#include "scenario/world.hpp"
#include "verbs_shim/cm_protocol.hpp"
#include "verbs_shim/wire.hpp"

namespace rnicsim::emulation {

class RdmaCm {
public:
  // The agent's rings and buffers, in the NIC's view of the host's memory: the
  // segment no context has (their numbers start at 1), in the kernel's half
  // of the address space.
  static constexpr uint64_t kAgentAddress = ProcessHostMemory::kSegmentBase;

  // An rdma_cm id. It is the user of its connection's record in the IB CM,
  // which tells it what happens to the connection (as the kernel's ib_cm_id
  // carries its rdma_cm id as context).
  struct Id;

  // `log` hears of listeners (tests and users wait for them there).
  RdmaCm(scenario::World& world, size_t host, ProcessSpaces& memory, std::ostream& log);
  ~RdmaCm();

  // The session's id `number`, or null.
  Id* id_of(int session, uint32_t number);
  // The session is gone: its ids and channels with it.
  void session_ended(int session);

  // --- requests: the op table's rows (op_table.cpp); 0 or an errno ---
  int open_channel(int session, const verbs_proto::Received& r, verbs_proto::CmChannelRep& rep);
  int close_channel(int session, const verbs_proto::CmIdReq& q, NoReply&);
  int create_id(int session, const verbs_proto::CmCreateIdReq& q, verbs_proto::ObjectRep& rep);
  int destroy_id(Id& id, const verbs_proto::CmIdReq&, NoReply&);
  int migrate_id(Id& id, const verbs_proto::CmIdReq& q, NoReply&);
  int bind(Id& id, const verbs_proto::CmIdReq& q, verbs_proto::CmAddrRep& rep);
  int resolve_addr(Id& id, const verbs_proto::CmIdReq& q, NoReply&);
  int resolve_route(Id& id, const verbs_proto::CmIdReq&, NoReply&);
  int listen(Id& id, const verbs_proto::CmIdReq&, NoReply&);
  int connect(Id& id, const verbs_proto::CmConnReq& q, NoReply&);
  int accept(Id& id, const verbs_proto::CmConnReq& q, NoReply&);
  int reject(Id& id, const verbs_proto::CmConnReq& q, NoReply&);
  int establish(Id& id, const verbs_proto::CmIdReq&, NoReply&);
  int disconnect(Id& id, const verbs_proto::CmIdReq&, NoReply&);
  int init_qp_attr(Id& id, const verbs_proto::CmIdReq& q, verbs_proto::CmQpAttrRep& rep);
  int set_option(Id& id, const verbs_proto::CmOptionReq& q, NoReply&);

  const cm::ConnectionManager& connection_manager() const { return *cm_; }

private:
  enum class Want : uint8_t;  // what a connection's user asked for (connect, SIDR)

  void remove(Id& id);
  int bind_to(Id& id, const verbs_proto::CmAddr& addr);
  void connect_sidr(Id& id, const verbs_proto::CmConnReq& q, const cm::IpHeader& ip, uint64_t service);
  void connect_rc(Id& id, const verbs_proto::CmConnReq& q, const cm::IpHeader& ip, uint64_t service);

  // --- what the IB CM tells an id ---
  void on_request(const Id& listener, cm::CommId, const cm::Req&, const cm::MadSource&);
  void on_reply(Id& id, const cm::Rep&);
  void on_rejected(Id& id, const cm::Rej&);
  void on_sidr_request(const Id& listener, cm::CommId, const cm::SidrReq&, const cm::MadSource&);
  void on_sidr_reply(Id& id, const cm::SidrRep&);

  Id& add(int session, uint32_t channel, uint32_t port_space, uint32_t qp_type);
  Id& child_of(const Id& listener, cm::CommId comm, uint32_t qp_type, Want want,
               std::span<const uint8_t, cm::kIpHeaderBytes> ip_header, const cm::MadSource& from);
  // The id no longer has its connection: forget_comm() lets the CM forget it too.
  void forget_comm(Id& id);
  std::optional<size_t> host_of(const verbs_proto::CmAddr& a) const;
  packet::Ipv6Addr ip_address(size_t host) const;
  uint16_t ephemeral_port(uint32_t port_space);
  bool port_used(uint32_t port_space, uint16_t port) const;
  int port_conflict(const Id& id, const verbs_proto::CmAddr& addr, bool reuse) const;
  cm::PathTo path_of(const Id& id) const;
  std::optional<nic::AddressVector> resolve(const cm::MadSource& from) const;
  bool ib() const;  // the host's port is InfiniBand
  verbs_proto::AhWire ah_to(const packet::Ipv6Addr& gid, uint16_t lid, uint8_t traffic_class = 0) const;
  verbs_proto::CmEventWire event_for(const Id& id, int event, int status) const;
  void emit(const Id& id, const verbs_proto::CmEventWire& e);
  packet::Psn next_psn();

  scenario::World& world_;
  size_t host_;
  std::ostream& log_;
  std::vector<std::byte> agent_memory_;
  std::unique_ptr<cm::ConnectionManager> cm_;
  std::map<uint32_t, int> channels_;  // channel -> write end of its pipe
  std::map<uint32_t, int> channel_session_;
  std::map<uint32_t, std::unique_ptr<Id>> ids_;
  uint32_t next_channel_ = 1, next_id_ = 1;
  uint16_t next_port_;
  sim::RandomStream random_;
};

}  // namespace rnicsim::emulation
