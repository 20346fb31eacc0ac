// The WQE events the NIC emits: what its blocks tell of each work request as it
// passes them. The blocks' NicContext holds a TimelineSink pointer, null when nobody
// listens (one branch per call site); the writer that turns these events into
// a trace, the WQE timeline, lives above the model (scenario/timeline.hpp).
#pragma once

#include <cstdint>

#include "nic_model/types.hpp"
#include "sim/time.hpp"

namespace rnicsim::nic {

enum class TimelineKind : uint8_t {
  Doorbell,     // index: the producer written; start: the MMIO write, end: its arrival
  WqeFetch,     // index: first ring slot, count: WQEs; start..end: the DMA read
  WqeAccepted,  // the requester took a send WQE: psn its first, count its packets, wr_id
  PayloadRead,  // a request packet's payload DMA: psn, start (submitted)..end (read)
  PacketOut,    // a request packet left the transmit pipeline for the port: psn
  Retransmit,   // go-back-N (or selective repeat) from psn, count packets
  AckTimeout,   // the local ACK timer fired: psn the oldest unacknowledged
  Ack,          // an ACK through psn
  Nak,          // a NAK at psn, code its AETH syndrome
  WrDone,       // a send WQE is finished (psn its first, wr_id, code its status)
  CqeWritten,   // a CQE landed in host memory: start (posted)..end; flag: send CQE
  CnpSent,      // the notification point sent a CNP for qpn
  CnpReceived,  // a CNP arrived for qpn
  Poll,         // the host took a CQE of qpn (wr_id) from its CQ; flag: send CQE
  Count
};

struct TimelineEvent {
  TimelineKind kind;
  Qpn qpn{};
  Psn psn{};
  uint32_t count = 0;
  uint64_t index = 0;
  uint64_t wr_id = 0;
  uint8_t code = 0;
  bool flag = false;
  QueueKind queue = QueueKind::Send;
  sim::Time start{}, end{};  // an instant gives start (now) only; a span both
};

class TimelineSink {
public:
  virtual ~TimelineSink() = default;
  virtual void record(const TimelineEvent& e) = 0;
};

}  // namespace rnicsim::nic
