// The RNIC: its hardware blocks, the contexts they share, the control path that
// creates them (the verbs' slow path) and the attachment to a fabric port.
//
//   host posts WQE -> doorbell -> WQE fetcher -> requester -> port --fabric-->
//   port -> RX pipeline -> responder (requests) / completer (responses) -> CQE writer
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/frame.hpp"
#include "fabric/pfc.hpp"
#include "fabric/port.hpp"
#include "nic_model/completer.hpp"
#include "nic_model/cqe_writer.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/doorbell.hpp"
#include "nic_model/host_memory.hpp"
#include "nic_model/lru_cache.hpp"
#include "nic_model/memory_translation.hpp"
#include "nic_model/nic_params.hpp"
#include "nic_model/pcie_link.hpp"
#include "nic_model/qp_context.hpp"
#include "nic_model/qp_state.hpp"
#include "nic_model/requester.hpp"
#include "nic_model/responder.hpp"
#include "nic_model/rx_pipeline.hpp"
#include "nic_model/tx_pipeline.hpp"
#include "nic_model/wqe_fetcher.hpp"
#include "packet/packet.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nic {

struct NicConfig {
  std::string name = "nic";
  NicParams params;
  // RoCEv2 (IPv4/IPv6) or native IB: IbLocal (LRH only) or IbGlobal (LRH + GRH).
  packet::LinkKind link = packet::LinkKind::RoceV2Ipv4;
  packet::MacAddr mac{};  // RoCEv2 only
  packet::Ipv6Addr ip{};  // IPv4-mapped for IPv4; the port GID for IB (the GRH SGID)
  uint16_t lid = 0;       // IB: the port's LID (the LRH SLID)
  // Size-only: the NIC sends payload-carrying packets as size-only frames and
  // moves no payload bytes to or from host memory (see fabric::Frame); timing,
  // address checks and everything else are as with full bytes.
  bool elide_payload = false;
};

class AsyncEventListener {
public:
  virtual ~AsyncEventListener() = default;
  // `id` is a QPN, CQN or SRQ number, as the event says.
  virtual void on_async_event(AsyncEvent event, uint32_t id) = 0;
};

struct QpInit {
  QpType type = QpType::Rc;
  uint32_t pd = 0;
  uint32_t send_cq = 0;
  uint32_t recv_cq = 0;
  WorkRing sq;  // base and entries; the NIC keeps the indices
  WorkRing rq;
  bool sq_sig_all = false;
  uint32_t srq = 0;  // take receive WQEs from this shared receive queue
  // 0: the next free QPN. A special QP's own number (1: the GSI QP, a UD QP
  // that carries management datagrams; one per port).
  uint32_t special_qpn = 0;
};

struct NicCounters {
  uint64_t tx_packets = 0, tx_bytes = 0, rx_frames = 0, retransmitted_packets = 0, tx_drops = 0, loopback = 0;
  uint64_t cnps_sent = 0;  // by the notification point (CE-marked packets and CNPs received: RxPipeline)
  uint64_t dma_faults = 0;  // host memory accesses that failed after the checks passed (memory gone)
};

class Nic : public fabric::FrameSink, DmaFaultListener {
public:
  Nic(sim::Simulator& sim, fabric::FramePool& pool, HostMemory& memory, NicConfig config);
  Nic(const Nic&) = delete;
  Nic& operator=(const Nic&) = delete;
  ~Nic() override;

  void attach(fabric::Port& port);
  // PFC on the receive side (after attach): frames waiting in the receive
  // pipeline fill an RX buffer of `rx_buffer_bytes`; above its XOFF level (the
  // buffer less the link's headroom) the NIC pauses the priority, and resumes
  // it once two frames' worth below. Pauses the NIC receives stop its own
  // transmit queues (the port does that).
  void enable_pfc(const fabric::PfcParams& params, uint64_t rx_buffer_bytes);
  const fabric::PfcGenerator* pfc() const { return pfc_.get(); }
  // The receive pipeline took in (delta > 0) or let go of frame bytes.
  void rx_buffered(uint8_t priority, int64_t delta);
  uint64_t rx_buffer_peak() const { return rx_peak_; }
  const NicConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }

  // --- control path ---
  uint32_t alloc_pd() { return next_pd_++; }
  // A CQ whose ring of `entries` Cqe lives at `ring_base` in host memory.
  // A CQ whose ring of `entries` CQEs is at `ring_base`; it holds `capacity`
  // unconsumed CQEs (0: all of the ring) before it overruns.
  uint32_t create_cq(uint64_t ring_base, uint32_t entries, CompletionListener* listener, uint32_t capacity = 0);
  // ibv_resize_cq within the ring: false if the CQ is unknown or `capacity` is 0 or beyond the ring.
  bool resize_cq(uint32_t cqn, uint32_t capacity);
  // Qpn(0) if the special QPN asked for is taken or not a special QPN.
  Qpn create_qp(const QpInit& init);
  int modify_qp(Qpn qpn, const QpAttr& attr, uint32_t mask);
  bool destroy_qp(Qpn qpn);
  // Forget a CQ, an SRQ or an address handle. Nothing may refer to it any more
  // (no QP completes into the CQ or takes from the SRQ); work already in
  // flight towards it finds it gone and is dropped.
  bool destroy_cq(uint32_t cqn);
  bool destroy_srq(uint32_t srqn);
  bool destroy_ah(uint32_t index);
  // A shared receive queue whose ring of RecvWqe lives at `ring.base`.
  uint32_t create_srq(uint32_t pd, const WorkRing& ring);
  // Arms the SRQ limit: an SrqLimitReached event when fewer WQEs remain posted.
  bool arm_srq_limit(uint32_t srqn, uint32_t limit);
  // Address handles for UD: the index goes in SendWqe::ud_ah.
  uint32_t create_ah(const AddressVector& av);
  const AddressVector* address_handle(uint32_t index) const;
  void set_async_listener(AsyncEventListener* l) { async_listener_ = l; }
  void async_event(AsyncEvent event, uint32_t id);
  const MemoryRegion& reg_mr(uint32_t pd, uint64_t addr, uint64_t length, uint32_t access) {
    return translation_.add(pd, addr, length, addr, access);
  }

  // --- host MMIO ---
  void ring_doorbell(QueueKind kind, Qpn qpn, uint64_t producer) { doorbell_.ring(kind, qpn.value(), producer); }
  // ibv_req_notify_cq: the next completion (solicited only, if asked) raises an
  // event. `seen`: how many of the CQEs written the host had seen when it armed;
  // one it had not seen raises the event at once (the host could not poll it).
  bool arm_cq(uint32_t cqn, bool solicited_only, uint64_t seen);
  bool arm_cq(uint32_t cqn, bool solicited_only);  // every CQE written so far seen
  // A doorbell that carries the WQE itself (BlueFlame-style): the NIC need not
  // fetch it. The WQE must also be in the ring at `producer - 1`.
  void ring_doorbell_with_wqe(Qpn qpn, uint64_t producer, const SendWqe& wqe) {
    doorbell_.ring_with_wqe(qpn.value(), producer, wqe);
  }

  // --- fabric ---
  void receive(fabric::Frame&& frame) override { ++counters_.rx_frames; rx_.receive(std::move(frame)); }

  // --- shared by the blocks ---
  sim::Scheduler& scheduler() { return sim_.scheduler(); }
  sim::Time now() const { return sim_.now(); }
  sim::Duration cycles(uint32_t n) const { return clock_.to_duration(sim::Cycles(n)); }
  const NicParams& params() const { return config_.params; }
  // The IPv4 identification of the next packet this NIC sends.
  uint16_t next_ipv4_id() { return ipv4_id_++; }
  QpContext* qp(uint32_t qpn) {
    QpContext* hit = qp_slots_[qpn % kQpSlots];
    return hit != nullptr && hit->qpn.value() == qpn ? hit : qp_slow(qpn);
  }
  CqContext* cq(uint32_t cqn);
  SrqContext* srq(uint32_t srqn);
  // The ring a doorbell of `kind` for `id` (QPN or SRQ number) advances.
  WorkRing* work_ring(QueueKind kind, uint32_t id);
  fabric::FramePool& frame_pool() { return pool_; }
  PcieLink& pcie() { return pcie_; }
  DmaEngine& dma() { return dma_; }
  MemoryTranslation& translation() { return translation_; }
  WqeFetcher& wqe_fetcher() { return fetcher_; }
  Requester& requester() { return requester_; }
  Responder& responder() { return responder_; }
  Completer& completer() { return completer_; }
  CqeWriter& cqe_writer() { return cqe_writer_; }
  RxPipeline& rx_pipeline() { return rx_; }
  TxPipeline& tx_pipeline() { return tx_; }
  // The transmit pipeline or the port has room again: blocked producers go on.
  void tx_space_available();
  // When the context of `qpn` is on the NIC: now on a QP-context cache hit, else
  // when its DMA read from the context tables lands.
  sim::Time context_ready(uint32_t qpn);
  // How long the block that just made translation-cache misses waits for them.
  sim::Duration translation_stall();
  const LruCache& qpc_cache() const { return qpc_cache_; }
  packet::LinkType capture_link_type() const {
    return packet::is_roce(config_.link) ? packet::LinkType::Ethernet : packet::LinkType::Infiniband;
  }
  // Headers every packet of `qp` shares (addresses, ports, QPN); opcode and the
  // rest are the caller's.
  packet::PacketFields packet_template(const QpContext& qp);
  // The congestion control block, or nullptr when the NIC runs none (set when
  // the NIC is attached to its port, whose line rate it needs).
  CongestionControl* congestion() { return congestion_.get(); }
  // Notification point: a CNP to the sender of `qp`'s requests (RoCEv2 only).
  void send_cnp(QpContext& qp);
  bool tx_has_room(size_t bytes) const;
  void transmit(fabric::Frame&& frame);
  // A QP fails: the oldest outstanding WQE completes with `status`, every other
  // one with WR_FLUSH_ERR, and the QP enters ERR.
  void qp_fatal(QpContext& qp, WcStatus status);
  // A DMA access that failed although translation allowed it (the memory was
  // taken away under the registration): counted and logged; a write breaks
  // its QP as a protection error would (IBV_EVENT_QP_ACCESS_ERR, the QP in
  // ERR, its work flushed). A failed read's client breaks its QP itself.
  void dma_fault(uint32_t qpn, uint64_t addr, uint64_t length, bool write) override;
  // The QP entered RESET: its queues are empty and their indices start at 0.
  void reset_qp(QpContext& qp);
  // Completes a receive WQE of a QP in ERR with WR_FLUSH_ERR.
  void flush_recv(QpContext& qp, const RecvWqe& w);

  NicCounters& stats() { return counters_; }
  const NicCounters& stats() const { return counters_; }
  size_t qp_count() const { return qps_.size(); }
  // Calls `f(const QpContext&)` for every QP, in QPN order.
  template <class F>
  void for_each_qp(F&& f) const {
    std::vector<uint32_t> qpns;
    for (const auto& [qpn, qp] : qps_) qpns.push_back(qpn);
    std::sort(qpns.begin(), qpns.end());
    for (uint32_t q : qpns) f(*qps_.at(q));
  }

private:
  // The QP's outstanding WQEs complete (the oldest with `status`, the rest with
  // WR_FLUSH_ERR) and it is in ERR; `entering`: it was not before, which an SRQ's
  // consumer hears of (Last WQE Reached). qp_fatal and modify_qp to ERR end here.
  void enter_error(QpContext& qp, WcStatus status, bool entering);

  sim::Simulator& sim_;
  fabric::FramePool& pool_;
  NicConfig config_;
  sim::ClockDomain clock_;
  fabric::Port* port_ = nullptr;
  PcieLink pcie_;
  DmaEngine dma_;
  MemoryTranslation translation_;
  Doorbell doorbell_;
  WqeFetcher fetcher_;
  Requester requester_;
  Responder responder_;
  Completer completer_;
  CqeWriter cqe_writer_;
  RxPipeline rx_;
  TxPipeline tx_;
  LruCache qpc_cache_;
  std::unique_ptr<CongestionControl> congestion_;
  std::unordered_map<uint32_t, std::unique_ptr<QpContext>> qps_;
  // A direct-mapped table in front of qps_, so that most packets find their QP
  // without a hash look-up. QPNs are handed out in sequence: up to kQpSlots QPs
  // created one after the other never evict each other.
  static constexpr size_t kQpSlots = 1024;
  std::array<QpContext*, kQpSlots> qp_slots_{};
  QpContext* qp_slow(uint32_t qpn);
  std::unordered_map<uint32_t, CqContext> cqs_;
  std::unordered_map<uint32_t, std::unique_ptr<SrqContext>> srqs_;
  std::vector<AddressVector> address_handles_;
  std::vector<uint32_t> free_address_handles_;  // indices destroy_ah gave back
  AsyncEventListener* async_listener_ = nullptr;
  uint32_t next_srqn_ = 1;
  // QPNs below this are special QPs' (0 SMI, 1 GSI), never handed out.
  static constexpr uint32_t kFirstQpn = 0x11;
  uint32_t next_qpn_ = kFirstQpn;
  uint32_t next_cqn_ = 1;
  uint32_t next_pd_ = 1;
  uint16_t ipv4_id_ = 0;
  NicCounters counters_;
  std::unique_ptr<fabric::PfcGenerator> pfc_;
  uint64_t pfc_xoff_ = 0, pfc_xon_ = 0;
  std::array<uint64_t, 8> rx_bytes_{};
  uint64_t rx_total_ = 0, rx_peak_ = 0;
  // Frames addressed to this NIC itself (between two QPs of one host) turn
  // around inside the NIC, as hardware loopback does; they never reach the port.
  bool addressed_to_self(const fabric::Frame& frame) const;
  void deliver_loopback();
  sim::RingQueue<fabric::Frame> loopback_;
  sim::Event loopback_event_;
};

}  // namespace rnicsim::nic
