// Queue pair and completion queue contexts: the state the NIC keeps per QP/CQ.
#pragma once

#include <array>
#include <map>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "fabric/frame.hpp"
#include "nic_model/congestion_control.hpp"
#include "nic_model/queue_format.hpp"
#include "nic_model/types.hpp"
#include "packet/headers.hpp"
#include "packet/packet.hpp"
#include "sim/ring_queue.hpp"
#include "sim/scheduler.hpp"

namespace rnicsim::nic {

enum class QpState : uint8_t { Reset = 0, Init = 1, Rtr = 2, Rts = 3, Sqd = 4, Sqe = 5, Err = 6 };  // ibv_qp_state
std::string_view to_string(QpState s);
std::string_view to_string(QpType t);

// Where a peer is: Ethernet/IP for RoCEv2, LID (and GID) for InfiniBand.
struct AddressVector {
  packet::MacAddr mac{};
  packet::Ipv6Addr ip{};  // IPv4-mapped for IPv4 peers; the RoCEv2 GID
  uint16_t lid = 0;
  uint8_t traffic_class = 0;
  uint8_t hop_limit = 64;
  uint8_t sl = 0;
};

// A ring of WQEs in host memory: the host advances `producer` (by doorbell), the
// NIC's fetcher advances `fetched`.
struct WorkRing {
  uint64_t base = 0;
  uint32_t entries = 0;
  uint32_t stride = kMinWqeStride;  // bytes per slot (wqe_stride)
  uint64_t producer = 0;
  uint64_t fetched = 0;
  uint64_t slot_addr(uint64_t index) const { return base + (index % entries) * stride; }
};

// A send WQE the NIC has fetched, with its place in the PSN space.
struct SendEntry {
  SendWqe wqe{};
  uint32_t length = 0;   // message bytes
  uint32_t packets = 0;  // PSNs the message takes (READ: its response packets)
  Psn first_psn{};
  bool signaled = false;
  bool reads_remote = false;       // RDMA READ or atomic: completes on its responses
  uint32_t responses_placed = 0;   // response packets placed so far
  Psn last_psn() const { return first_psn + (packets - 1); }
  bool responses_complete() const { return !reads_remote || responses_placed == packets; }
};

// An RDMA READ or atomic the responder is answering, or an ACK or NAK queued
// behind such answers of its QP.
struct ResponseJob {
  Qpn qpn{};
  bool atomic = false;
  uint64_t host_addr = 0;      // READ: where the data comes from
  uint32_t length = 0;         // READ: bytes
  Psn first_psn{};
  uint32_t packets = 1;
  uint32_t next_packet = 0;
  uint64_t atomic_original = 0;
  bool pending = false;        // atomic: its target not read yet (the answer waits for it)
  Msn msn{};                   // the MSN the answer's AETH carries
  bool cancelled = false;      // a duplicate request asked for it again: not sent
  bool replay = false;         // a READ executed again for a duplicate request
  bool ack = false;            // an ACK or NAK behind the QP's READ or atomic answers
  Syndrome syndrome{};         // ack: its AETH syndrome
};

// Answers of executed atomics, replayed when a request is retransmitted.
struct AtomicReplay {
  Psn psn;
  uint64_t original = 0;
  bool valid = false;
};

// A shared receive queue.
struct SrqContext {
  Srqn srqn;
  Pdn pd;
  WorkRing ring;
  sim::RingQueue<RecvWqe> wqes{16};
  uint64_t consumed = 0;
  uint32_t limit = 0;  // armed when non-zero: event when fewer WQEs than this remain
};

// A QP's last data packet headers, kept by the requester as a template for the
// next packets of the same opcode and payload length (a long message's MIDDLE
// packets): copied and patched (packet::patch_headers) instead of written field
// by field. Only opcodes with no header after the BTH; any modify drops it.
struct HeaderTemplate {
  static constexpr size_t kBytes = 96;  // Ethernet + VLAN + IPv6 + UDP + BTH = 78
  std::array<std::byte, kBytes> bytes{};
  packet::FrameLayout layout{};
  packet::Opcode opcode{};
  bool valid = false;
};

// The local ACK timeout an attribute's 5-bit value stands for: 4.096 us x
// 2^timeout, 0 none (Duration::max()).
constexpr sim::Duration local_ack_timeout(uint8_t timeout) {
  if (timeout == 0) return sim::Duration::max();
  return sim::Duration::ns(4096) * (int64_t{1} << (timeout < 31 ? timeout : 31));
}

struct QpContext {
  Qpn qpn{};
  QpType type = QpType::Rc;
  QpState state = QpState::Reset;
  Pdn pd;
  Cqn send_cq;
  Cqn recv_cq;
  bool sq_sig_all = false;
  Srqn srq;                   // shared receive queue, Srqn() = the QP's own RQ
  uint32_t access_flags = 0;  // remote access the responder allows (AccessFlags)
  WorkRing sq, rq;
  bool uses_srq() const { return srq != Srqn(); }

  // Connection (set by INIT->RTR->RTS).
  uint32_t path_mtu = 1024;
  Qpn dest_qpn;
  AddressVector remote;
  Qkey qkey{};
  uint8_t timeout = 14;     // local ACK timeout 4.096 us * 2^timeout (0 = infinite)
  sim::Duration ack_timeout = local_ack_timeout(14);  // what the timer waits
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;    // 7 = infinite
  uint8_t min_rnr_timer = 12;
  uint8_t max_rd_atomic = 1;       // ORD: READ/atomic requests in flight as requester
  uint8_t max_dest_rd_atomic = 1;  // IRD: READ/atomic requests answered at once as responder
  uint16_t udp_src_port = 0xC000;
  HeaderTemplate header_template;

  // Requester: fetched WQEs from the oldest unacknowledged on; `next_entry` and
  // `next_packet` say what goes on the wire next (moved back by go-back-N).
  sim::RingQueue<SendEntry> send_entries{16};
  size_t next_entry = 0;
  uint32_t next_packet = 0;
  Psn next_psn;         // PSN of the next new packet
  Psn assign_psn;       // PSN the next fetched WQE starts at
  Psn una;              // oldest unacknowledged PSN
  // The packets whose payload a chunk read ahead (NicParams::tx_read_chunk_bytes)
  // brought: the next `read_ahead_left` new packets from `read_ahead_next` on.
  Psn read_ahead_next;
  uint32_t read_ahead_left = 0;
  uint32_t retries_left = 7;
  uint32_t rnr_retries_left = 7;
  bool in_requester_list = false;
  bool rnr_waiting = false;  // after an RNR NAK, until the RNR timer fires
  uint32_t rd_atomic_inflight = 0;  // READ/atomic requests sent and not answered
  bool response_gap_rewound = false;  // go-back-N already started for a gap in responses
  sim::RingQueue<Psn> resend{4};      // selective repeat: single PSNs to send again
  std::unique_ptr<sim::Event> retransmit_timer;
  bool cc_paced = false;  // waiting for the congestion control's send time
  // Congestion control: the algorithm's state for this QP (null without one),
  // and the RTT probe: the packet being timed (see CcAck).
  std::unique_ptr<CcQpState> cc;
  bool sent_any = false;  // sent_up_to: the first PSN never sent (what is below it is resent)
  Psn sent_up_to;
  bool rtt_probe = false;
  Psn rtt_probe_psn;
  sim::Time rtt_probe_sent;

  // Responder.
  Psn epsn;             // expected PSN
  Psn message_start;    // the first PSN of the message in progress (go-back-0 goes back to it)
  uint64_t message_bytes_placed = 0;  // of the message in progress (go-back-0 takes them back)
  Msn msn;
  bool nak_outstanding = false;
  bool gap_nak = false;     // the NAK outstanding is a PSN-sequence NAK (not an RNR NAK)
  uint8_t nak_repeats = 0;  // repeats by the NAK timer since the gap opened (each waits twice as long)
  Psn nak_highest;          // the highest PSN seen since the last NAK
  std::unique_ptr<sim::Event> nak_timer;  // the gap is NAKed again if still open when it fires
  uint32_t unacked_packets = 0;
  uint64_t write_addr = 0;       // host address of the next byte of the current RDMA WRITE
  uint32_t write_remaining = 0;
  uint32_t write_length = 0;     // DMA length of the current RDMA WRITE (RETH)
  sim::RingQueue<RecvWqe> recv_wqes{16};
  uint32_t recv_offset = 0;      // bytes of the current SEND placed so far
  uint32_t responses_queued = 0; // READ/atomic answers waiting to go out
  uint32_t acks_queued = 0;      // ACKs/NAKs queued behind them (ResponseJob::ack)
  // Selective repeat: packets after a gap, in PSN order modulo 2^24. Every key
  // lies within reorder_window_packets (at most 2^16) after epsn, so Psn's
  // modular order is a strict order over them, across the wrap too.
  std::map<packet::Psn, fabric::Frame> reorder;
  std::array<AtomicReplay, 16> atomic_replay{};
  // Its atomics whose read-modify-write is under way: its later requests but
  // atomics wait for them (an atomic's write must land before what follows).
  uint32_t atomics_executing = 0;
  uint32_t atomic_replay_next = 0;

  uint64_t tx_packets = 0, rx_packets = 0, retransmitted_packets = 0;
  // Payload bytes this QP took in, each once and in order, counted when the
  // block takes them (responder WRITE and SEND data, requester READ responses
  // and atomic results); go-back-0 takes back a message's when it asks for all
  // of it again. Their DMA writes land later: Nic::payload_placed_in.
  uint64_t payload_bytes_accepted = 0;
  // The tally that counts them too (Nic::open_tally); null: none.
  uint64_t* tally = nullptr;
  void accept_payload(uint64_t n) {
    payload_bytes_accepted += n;
    if (tally != nullptr) *tally += n;
  }
  void take_back_payload(uint64_t n) {
    payload_bytes_accepted -= n;
    if (tally != nullptr) *tally -= n;
  }
  // Congestion signals, for congestion control (DCQCN): packets that arrived
  // marked CE (IP ECN, or BTH FECN) at this QP as receiver (notification
  // point), and CNPs that arrived for it as sender (reaction point).
  uint64_t ecn_ce_received = 0, cnps_received = 0;
};

class CompletionListener {
public:
  virtual ~CompletionListener() = default;
  // A CQE is visible in the CQ ring in host memory.
  virtual void on_completion(Cqn cqn) = 0;
  // A completion event (interrupt) of an armed CQ: what a completion channel delivers.
  virtual void on_event(Cqn /*cqn*/) {}
  // The CQ's consumer index as the driver last published it (the CQ's doorbell
  // record, which the NIC reads when the ring looks full). nullopt: the host
  // publishes none, and the NIC never finds the ring full.
  virtual std::optional<uint64_t> consumer_index(Cqn /*cqn*/) const { return std::nullopt; }
};

// The receive queues' doorbell records in host memory, which the NIC reads
// when a message finds a receive queue empty, as mlx5 hardware reads the RQ
// doorbell record on demand: a receive the host posted before the message
// arrived is found even if its doorbell has not reached the NIC yet.
class RecvDoorbellRecords {
public:
  virtual ~RecvDoorbellRecords() = default;
  // The producer index the host published for `queue` (a QP's receive queue or
  // an SRQ); nullopt when the host keeps none and rings every doorbell.
  virtual std::optional<uint64_t> recv_producer(WorkQueue queue) = 0;
};

struct CqContext {
  Cqn cqn;
  uint64_t base = 0;       // ring of Cqe in host memory
  uint32_t entries = 0;     // slots in the ring
  uint32_t capacity = 0;    // CQEs it holds unconsumed before it overruns (<= entries; ibv_resize_cq changes it)
  uint64_t producer = 0;   // next slot the NIC writes
  uint64_t consumer_seen = 0;  // the consumer index as last read from the host
  bool overrun = false;        // a CQE found the ring full: the CQ is in error, writes nothing more
  CompletionListener* listener = nullptr;
  uint64_t written = 0;
  // `written` when the last CQE that wakes a solicited-only arm (a solicited
  // message or an error) was written.
  uint64_t written_notify = 0;
  // Completion events (ibv_req_notify_cq): armed once, fire once, for a CQE
  // the host had not seen when it armed (IBTA 11.4.2.2: the next CQE added).
  bool armed = false;
  bool solicited_only = false;
  uint32_t pending_events = 0;
  uint64_t events = 0;
  std::unique_ptr<sim::Event> event_timer;
};

}  // namespace rnicsim::nic
