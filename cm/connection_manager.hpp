// The IB communication manager of one port (IBTA vol. 1, 12.9): the
// connection state machines both ends run over the MAD agent. The active end
// sends a REQ and retries it until a REP, REJ or MRA comes or its retries run
// out; the passive end answers with a REP (retried until the RTU) or a REJ; a
// DREQ is answered with a DREP. Timeouts follow the kernel's CM: a message
// waits 2 x the path's packet lifetime plus the peer's CM response timeout
// (4.096 us x 2^t each) and is sent at most 1 + max_cm_retries times. A REQ for
// a service nobody listens on is rejected with reason 8 (invalid service ID).
// Users (the RDMA CM's ids) get what happens to their connections through
// CmUser; a connection is named by its local communication ID.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "cm/mad.hpp"
#include "cm/mad_agent.hpp"
#include "sim/scheduler.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::cm {

using CommId = uint32_t;

// The peer's port as the agent reaches it, and the GIDs/LIDs the REQ names.
struct PathTo {
  nic::AddressVector av;
  std::array<uint8_t, 16> local_gid{}, remote_gid{};
  uint16_t local_lid = 0xFFFF, remote_lid = 0xFFFF;  // permissive on RoCE
  uint32_t flow_label = 0;
  uint8_t traffic_class = 0;
  uint8_t packet_life_time = 18;  // 4.096 us x 2^t (the RDMA CM's value on RoCE)
};

class CmUser {
public:
  virtual ~CmUser() = default;
  // Passive: a REQ for a service this user listens on; answer with accept() or reject().
  virtual void on_request(CommId, const Req&, const MadSource&) {}
  // Active: the peer accepted; ready_to_use() sends the RTU.
  virtual void on_reply(CommId, const Rep&) {}
  // Passive: the RTU came (or work arrived first: established()).
  virtual void on_established(CommId) {}
  virtual void on_rejected(CommId, const Rej&) {}
  // Retries ran out waiting for a REP (active) or an RTU (passive).
  virtual void on_timeout(CommId) {}
  // The peer asked to disconnect; the DREP has been sent.
  virtual void on_disconnect_request(CommId, const Dreq&) {}
  // Our DREQ was answered (or its retries ran out).
  virtual void on_disconnected(CommId) {}
  // Either side, a while after the disconnection (the peer's stray packets
  // have died out): the connection is forgotten.
  virtual void on_timewait_exit(CommId) {}
  // UD service ID resolution.
  virtual void on_sidr_request(CommId, const SidrReq&, const MadSource&) {}
  virtual void on_sidr_reply(CommId, const SidrRep&) {}
  virtual void on_sidr_timeout(CommId) {}
};

class ConnectionManager : MadSink {
public:
  // `resolve` gives the address of the port a MAD came from (its GID/LID), to answer it.
  using Resolver = std::function<std::optional<nic::AddressVector>(const MadSource&)>;
  ConnectionManager(sim::Simulator& sim, nic::Nic& nic, AgentMemory mem, Resolver resolve);
  ~ConnectionManager() override;

  // Passive side: REQs (and SIDR REQs) for `service_id` go to `user`.
  bool listen(uint64_t service_id, CmUser& user);
  void stop_listening(uint64_t service_id);

  // Active side: sends `req` (its local_comm_id is set here) along `path`.
  CommId connect(Req req, const PathTo& path, CmUser& user);
  // Passive side: answers the REQ of `id` (its comm IDs are set here).
  bool accept(CommId id, Rep rep);
  // Either side, before the connection is up: a REJ (`message_rejected` 0 REQ, 1 REP).
  bool reject(CommId id, uint16_t reason, std::span<const uint8_t> private_data = {});
  // Active side, after on_reply: the RTU.
  bool ready_to_use(CommId id, std::span<const uint8_t> private_data = {});
  // Passive side: traffic arrived before the RTU (IB_CM_USER_ESTABLISHED).
  bool established(CommId id);
  bool disconnect(CommId id, std::span<const uint8_t> private_data = {});
  // UD: a SIDR REQ (answered by the peer's listener with sidr_reply()).
  CommId sidr_request(SidrReq req, const PathTo& path, CmUser& user);
  bool sidr_reply(CommId id, SidrRep rep);
  // Passive side: the connection's callbacks go to `user` from now on (the
  // listener's user made one for it, as the kernel's CM gives a REQ its own
  // cm_id). Called from on_request or on_sidr_request.
  void hand_over(CommId id, CmUser& user);
  // Forgets the connection (its user is going away); no further callbacks.
  void release(CommId id);

  const MadAgent& agent() const { return agent_; }
  uint64_t retransmissions() const { return retransmissions_; }
  uint64_t unmatched() const { return unmatched_; }  // MADs for no connection we know: dropped

private:
  enum class State : uint8_t {
    ReqSent, ReqRcvd, RepSent, RepRcvd, Established, DreqSent, TimeWait, SidrReqSent, SidrReqRcvd,
  };
  struct Conn;
  void on_mad(const Mad& mad, const MadSource& from) override;
  void on_req(const Req& m, const MadSource& from, uint64_t tid);
  void on_rep(const Rep& m);
  void on_rtu(const Rtu& m);
  void on_rej(const Rej& m);
  void on_mra(const Mra& m);
  void on_dreq(const Dreq& m, const MadSource& from, uint64_t tid);
  void on_drep(const Drep& m);
  void on_sidr_req(const SidrReq& m, const MadSource& from, uint64_t tid);
  void on_sidr_rep(const SidrRep& m);
  Conn* find(CommId id);
  Conn* by_remote(uint32_t remote_comm_id, const MadSource& from);
  Conn& add(CmUser* user, State state);
  // A connection for a request from `from` (its ID `remote`), answered in
  // transaction `tid`; nullptr if the sender's port cannot be resolved.
  Conn* passive(CmUser* user, State state, uint32_t remote, const MadSource& from, uint64_t tid);
  // Sends `m` to the connection's peer and, with `retry`, keeps resending it
  // at each timeout until answered or out of retries.
  void send(Conn& c, Message m, bool retry);
  void reply(const MadSource& to, uint64_t tid, Message m);
  void on_timer(Conn& c);
  // IBTA 12.9.8: after a disconnection the comm ID is kept for the packet
  // lifetime (the kernel's: 4.096 us x 2^(packet life time + 1)).
  void enter_timewait(Conn& c);
  sim::Duration wait_for(const Conn& c) const;

  sim::Simulator& sim_;
  sim::Actor actor_;  // the NIC's unit: the timers run as it
  MadAgent agent_;
  Resolver resolve_;
  std::map<uint64_t, CmUser*> listeners_;
  std::map<CommId, std::unique_ptr<Conn>> conns_;
  CommId next_id_;
  uint64_t next_tid_ = 1;
  uint64_t retransmissions_ = 0, unmatched_ = 0;
};

}  // namespace rnicsim::cm
