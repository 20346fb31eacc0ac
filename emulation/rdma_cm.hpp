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
#include "emulation/process_spaces.hpp"
#include "scenario/world.hpp"
#include "verbs_shim/cm_protocol.hpp"
#include "verbs_shim/wire.hpp"

namespace rnicsim::emulation {

class RdmaCm : cm::CmUser {
public:
  // The agent's rings and buffers, in the NIC's view of the host's memory: the
  // segment no context has (their numbers start at 1), in the kernel's half
  // of the address space.
  static constexpr uint64_t kAgentAddress = ProcessHostMemory::kSegmentBase;

  // `log` hears of listeners (tests and users wait for them there).
  RdmaCm(scenario::World& world, size_t host, ProcessSpaces& memory, std::ostream& log);
  ~RdmaCm() override;

  // Whether `op` is one of this layer's.
  static bool handles(verbs_proto::Op op);
  // Serves one request of the session on `session`; the reply body goes in
  // `body`/`length`. Returns 0 or an errno.
  int dispatch(int session, const verbs_proto::Received& r, unsigned char* body, size_t& length);
  // The session is gone: its ids and channels with it.
  void session_ended(int session);

  const cm::ConnectionManager& connection_manager() const { return *cm_; }

private:
  struct Id;
  enum class Want : uint8_t;  // what a connection's user asked for (connect, SIDR)

  // --- requests ---
  int open_channel(int session, const verbs_proto::Received& r, verbs_proto::CmChannelRep& rep);
  int create_id(int session, const verbs_proto::CmCreateIdReq& q, verbs_proto::ObjectRep& rep);
  int destroy_id(Id& id);
  int bind(Id& id, const verbs_proto::CmAddr& addr, verbs_proto::CmAddrRep& rep);
  int resolve_addr(Id& id, const verbs_proto::CmIdReq& q);
  int resolve_route(Id& id);
  int listen(Id& id);
  int connect(Id& id, const verbs_proto::CmConnReq& q);
  int accept(Id& id, const verbs_proto::CmConnReq& q);
  int reject(Id& id, const verbs_proto::CmConnReq& q);
  int establish(Id& id);
  int disconnect(Id& id);
  int init_qp_attr(const Id& id, uint32_t state, verbs_proto::CmQpAttrRep& rep);

  // --- what the IB CM tells ---
  void on_request(cm::CommId, const cm::Req&, const cm::MadSource&) override;
  void on_reply(cm::CommId, const cm::Rep&) override;
  void on_established(cm::CommId) override;
  void on_rejected(cm::CommId, const cm::Rej&) override;
  void on_timeout(cm::CommId) override;
  void on_disconnect_request(cm::CommId, const cm::Dreq&) override;
  void on_disconnected(cm::CommId) override;
  void on_timewait_exit(cm::CommId) override;
  void on_sidr_request(cm::CommId, const cm::SidrReq&, const cm::MadSource&) override;
  void on_sidr_reply(cm::CommId, const cm::SidrRep&) override;
  void on_sidr_timeout(cm::CommId) override;

  Id* find(int session, uint32_t id);
  Id* by_comm(cm::CommId c);
  Id& add(int session, uint32_t channel, uint32_t port_space, uint32_t qp_type);
  Id* listener_of(uint64_t service_id);
  Id& child_of(const Id& listener, cm::CommId comm, uint32_t qp_type, Want want,
               std::span<const uint8_t, cm::kIpHeaderBytes> ip_header, const cm::MadSource& from);
  // The id no longer has the connection: unmap() forgets which it had,
  // forget_comm() lets the CM forget it too, ended() is unmap() for the
  // connection the CM says is over (nullptr if no id has it).
  void unmap(Id& id);
  void forget_comm(Id& id);
  Id* ended(cm::CommId c);
  std::optional<size_t> host_of(const verbs_proto::CmAddr& a) const;
  packet::Ipv6Addr ip_address(size_t host) const;
  uint16_t ephemeral_port(uint32_t port_space);
  bool port_used(uint32_t port_space, uint16_t port) const;
  int port_conflict(const Id& id, const verbs_proto::CmAddr& addr, bool reuse) const;
  int set_option(Id& id, uint32_t option, uint32_t value);
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
  std::map<cm::CommId, uint32_t> by_comm_;
  std::map<uint64_t, uint32_t> listeners_;  // service ID -> listening id
  uint32_t next_channel_ = 1, next_id_ = 1;
  uint16_t next_port_;
  sim::RandomStream random_;
};

}  // namespace rnicsim::emulation
