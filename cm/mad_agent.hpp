// The MAD agent of one port: the host software that owns the port's GSI QP
// (QP1, a UD QP with the well-known Q_Key) and moves CM MADs through it, as the
// kernel's MAD layer does. MADs go out as UD SENDs through the NIC's own rings
// and doorbells, so they cross the fabric like any packet (delayed, lost,
// captured); received ones are decoded and handed to the sink with the
// sender's address. A MAD that does not decode is counted and dropped.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <span>

#include "cm/mad.hpp"
#include "nic_model/host_queues.hpp"
#include "nic_model/nic.hpp"

namespace rnicsim::cm {

// Host memory the agent's rings and buffers live in: `bytes` are the host's
// view of the kMemoryBytes at bus address `addr` (what the NIC DMAs).
struct AgentMemory {
  uint64_t addr = 0;
  std::span<std::byte> bytes;
};

// Where a MAD came from: its source GID (IPv4-mapped on RoCEv2 over IPv4) and
// LID, as the GRH and the CQE give them.
struct MadSource {
  std::array<uint8_t, 16> gid{};
  uint16_t lid = 0;
};

class MadSink {
public:
  virtual ~MadSink() = default;
  virtual void on_mad(const Mad& mad, const MadSource& from) = 0;
};

class MadAgent : nic::CompletionListener {
public:
  static constexpr uint32_t kSendSlots = 64, kRecvSlots = 64;
  static constexpr uint32_t kRecvSlotBytes = 40 + kMadBytes;  // the GRH area, then the MAD
  static constexpr size_t kMemoryBytes = kSendSlots * nic::kMinWqeStride + kRecvSlots * nic::kMinWqeStride +
                                         (kSendSlots + kRecvSlots) * sizeof(nic::Cqe) + kSendSlots * kMadBytes +
                                         kRecvSlots * kRecvSlotBytes;

  // Creates QP1 on `nic` in memory `mem` (kMemoryBytes) and brings it to RTS.
  MadAgent(nic::Nic& nic, AgentMemory mem, MadSink& sink);
  MadAgent(const MadAgent&) = delete;
  MadAgent& operator=(const MadAgent&) = delete;

  // Sends `mad` to the GSI QP of the port at `to`; queued while every send
  // slot is in flight.
  void send(const Mad& mad, const nic::AddressVector& to);

  uint64_t sent() const { return sent_; }
  uint64_t received() const { return received_; }
  uint64_t malformed() const { return malformed_; }  // did not decode: dropped
  uint64_t send_errors() const { return send_errors_; }
  nic::Qpn qpn() const { return qpn_; }

private:
  void on_completion(nic::Cqn cqn) override;
  std::optional<uint64_t> consumer_index(nic::Cqn) const override { return cq_.consumer(); }
  void post_recv(uint32_t slot);
  void post_send(uint32_t slot, const std::array<std::byte, kMadBytes>& bytes, const nic::AddressVector& to);
  void received(const nic::Cqe& c);
  uint32_t address_handle(const nic::AddressVector& to);
  std::span<std::byte> at(uint64_t offset, size_t len) { return mem_.bytes.subspan(offset, len); }

  nic::Nic& nic_;
  AgentMemory mem_;
  MadSink& sink_;
  uint64_t sq_off_, rq_off_, cq_off_, send_buf_off_, recv_buf_off_;
  nic::WqeRingWriter<nic::SendWqe> sq_;
  nic::WqeRingWriter<nic::RecvWqe> rq_;
  nic::CqRingReader cq_;
  nic::Pdn pd_;
  nic::Cqn cqn_;
  nic::Lkey lkey_;
  nic::Qpn qpn_;
  uint32_t in_flight_ = 0;
  std::deque<std::pair<std::array<std::byte, kMadBytes>, nic::AddressVector>> backlog_;
  std::map<std::array<uint8_t, 16>, uint32_t> ahs_;  // by destination IP/GID
  uint64_t sent_ = 0, received_ = 0, malformed_ = 0, send_errors_ = 0;
};

}  // namespace rnicsim::cm
