// The RNIC: builds its blocks and the context they share, wires their ports
// once, and is the control path (the verbs' slow path) and the fabric attachment.
//
//   host posts WQE -> doorbell -> WQE fetcher -> requester -> port --fabric-->
//   port -> RX pipeline -> responder (requests) / completer (responses) -> CQE writer
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "fabric/frame.hpp"
#include "fabric/pfc.hpp"
#include "fabric/port.hpp"
#include "nic_model/completer.hpp"
#include "nic_model/context_cache.hpp"
#include "nic_model/context_tables.hpp"
#include "nic_model/cqe_writer.hpp"
#include "nic_model/dma_engine.hpp"
#include "nic_model/doorbell.hpp"
#include "nic_model/egress.hpp"
#include "nic_model/host_memory.hpp"
#include "nic_model/memory_translation.hpp"
#include "nic_model/nic_context.hpp"
#include "nic_model/nic_params.hpp"
#include "nic_model/notification_point.hpp"
#include "nic_model/pcie_link.hpp"
#include "nic_model/qp_context.hpp"
#include "nic_model/qp_errors.hpp"
#include "nic_model/qp_state.hpp"
#include "nic_model/requester.hpp"
#include "nic_model/responder.hpp"
#include "nic_model/rx_buffer.hpp"
#include "nic_model/rx_pipeline.hpp"
#include "nic_model/tx_pipeline.hpp"
#include "nic_model/wqe_events.hpp"
#include "nic_model/wqe_fetcher.hpp"
#include "packet/packet.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::nic {

struct QpInit {
  QpType type = QpType::Rc;
  Pdn pd;
  Cqn send_cq;
  Cqn recv_cq;
  WorkRing sq;  // base and entries; the NIC keeps the indices
  WorkRing rq;
  bool sq_sig_all = false;
  Srqn srq;  // take receive WQEs from this shared receive queue (Srqn(): the QP's own RQ)
  // 0: the next free QPN. A special QP's own number (1: the GSI QP, a UD QP
  // that carries management datagrams; one per port).
  std::optional<Qpn> special_qpn;
  // Nic::open_tally's number of the tally that counts this QP's payload; 0: none.
  uint32_t tally = 0;
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
  const fabric::PfcGenerator* pfc() const { return rx_buffer_.pfc(); }
  uint64_t rx_buffer_peak() const { return rx_buffer_.peak(); }
  uint64_t pfc_headroom() const { return rx_buffer_.headroom(); }
  const NicConfig& config() const { return config_; }
  const std::string& name() const { return config_.name; }

  // --- control path ---
  Pdn alloc_pd() { return Pdn(next_pd_++); }
  // A CQ whose ring of `entries` Cqe lives at `ring_base` in host memory.
  // A CQ whose ring of `entries` CQEs is at `ring_base`; it holds `capacity`
  // unconsumed CQEs (0: all of the ring) before it overruns.
  Cqn create_cq(uint64_t ring_base, uint32_t entries, CompletionListener* listener, uint32_t capacity = 0);
  // ibv_resize_cq within the ring: false if the CQ is unknown or `capacity` is 0 or beyond the ring.
  bool resize_cq(Cqn cqn, uint32_t capacity);
  // Qpn(0) if the special QPN asked for is taken or not a special QPN.
  Qpn create_qp(const QpInit& init);
  int modify_qp(Qpn qpn, const QpAttr& attr, uint32_t mask);
  bool destroy_qp(Qpn qpn);
  // Forget a CQ, an SRQ or an address handle. Nothing may refer to it any more
  // (no QP completes into the CQ or takes from the SRQ); work already in
  // flight towards it finds it gone and is dropped.
  bool destroy_cq(Cqn cqn);
  bool destroy_srq(Srqn srqn);
  bool destroy_ah(uint32_t index);
  // A shared receive queue whose ring of RecvWqe lives at `ring.base`.
  Srqn create_srq(Pdn pd, const WorkRing& ring);
  // Arms the SRQ limit: an SrqLimitReached event when fewer WQEs remain posted.
  bool arm_srq_limit(Srqn srqn, uint32_t limit);
  // Address handles for UD: the index goes in SendWqe::ud_ah.
  uint32_t create_ah(const AddressVector& av);
  void set_async_listener(AsyncEventListener* l) { errors_.set_listener(l); }
  void set_doorbell_records(RecvDoorbellRecords* r) { responder_.set_doorbell_records(r); }
  const MemoryRegion& reg_mr(Pdn pd, uint64_t addr, uint64_t length, uint32_t access) {
    return translation_.add(pd, addr, length, addr, access);
  }

  // --- host MMIO ---
  void ring_doorbell(WorkQueue queue, uint64_t producer) { doorbell_.ring(queue, producer); }
  // ibv_req_notify_cq: the next completion (solicited only, if asked) raises an
  // event. `seen`: how many of the CQEs written the host had seen when it armed;
  // one it had not seen raises the event at once (the host could not poll it).
  bool arm_cq(Cqn cqn, bool solicited_only, uint64_t seen);
  bool arm_cq(Cqn cqn, bool solicited_only);  // every CQE written so far seen
  // A doorbell that carries the WQE itself (BlueFlame-style) in `bytes` of MMIO
  // writes: the NIC need not fetch it. The WQE must also be in the ring at
  // `producer - 1`.
  void ring_doorbell_with_wqe(Qpn qpn, uint64_t producer, const SendWqe& wqe, uint32_t bytes) {
    doorbell_.ring_with_wqe(qpn, producer, wqe, bytes);
  }

  // --- fabric ---
  void receive(fabric::Frame&& frame) override { ++counters_.rx_frames; rx_.receive(std::move(frame)); }

  // --- the blocks and what they share (for outputs and tests) ---
  sim::Scheduler& scheduler() { return ctx_.scheduler(); }
  sim::Time now() const { return ctx_.now(); }
  const NicParams& params() const { return config_.params; }
  QpContext* qp(Qpn qpn) { return tables_.qp(qpn); }
  CqContext* cq(Cqn cqn) { return tables_.cq(cqn); }
  SrqContext* srq(Srqn srqn) { return tables_.srq(srqn); }
  PcieLink& pcie() { return pcie_; }
  DmaEngine& dma() { return dma_; }
  // A tally of QPs (those created with its number). payload_placed_in: the
  // payload bytes they have in host memory, those they took in less their DMA
  // writes still on their way over PCIe (what a throughput series samples;
  // counted when taken in, a backlog the receive pipeline drains would show
  // faster than PCIe can write it). The sum is kept as the QPs take payload
  // in, so that asking costs the writes in flight, not the QPs (a sampler of
  // a workload with thousands of QPs asks every few us); a destroyed QP's
  // bytes leave it.
  uint32_t open_tally();
  uint64_t payload_placed_in(uint32_t tally);
  MemoryTranslation& translation() { return translation_; }
  WqeFetcher& wqe_fetcher() { return fetcher_; }
  Requester& requester() { return requester_; }
  Responder& responder() { return responder_; }
  Completer& completer() { return completer_; }
  CqeWriter& cqe_writer() { return cqe_writer_; }
  RxPipeline& rx_pipeline() { return rx_; }
  TxPipeline& tx_pipeline() { return tx_; }
  const SetCache& qpc_cache() const { return cache_.qpc(); }
  packet::LinkType capture_link_type() const { return ctx_.capture_link_type(); }
  // The congestion control block, or nullptr when the NIC runs none (set when
  // the NIC is attached to its port, whose line rate it needs).
  CongestionControl* congestion() { return congestion_.get(); }
  const CongestionControl* congestion() const { return congestion_.get(); }
  // Another block than the parameters' (before any QP is created): an
  // algorithm of the caller's own.
  void set_congestion(std::unique_ptr<CongestionControl> cc) {
    congestion_ = std::move(cc);
    if (congestion_ != nullptr) congestion_->attach(scheduler());
    ctx_.congestion = congestion_.get();
  }
  // A DMA access that failed although translation allowed it (the memory was
  // taken away under the registration): counted and logged; a write breaks
  // its QP as a protection error would (IBV_EVENT_QP_ACCESS_ERR, the QP in
  // ERR, its work flushed). A failed read's client breaks its QP itself.
  void dma_fault(std::optional<Qpn> qpn, uint64_t addr, uint64_t length, bool write) override;

  // The WQE timeline's observer, null when off (then every call site costs one branch).
  TimelineSink* timeline() const { return ctx_.timeline; }
  void set_timeline(TimelineSink* sink) { ctx_.timeline = sink; }

  NicCounters& stats() { return counters_; }
  const NicCounters& stats() const { return counters_; }
  size_t qp_count() const { return tables_.qp_count(); }
  // Calls `f(const QpContext&)` for every QP, in QPN order.
  template <class F>
  void for_each_qp(F&& f) const {
    tables_.for_each_qp(std::forward<F>(f));
  }

private:
  // The QP entered RESET: its queues are empty and their indices start at 0.
  void reset_qp(QpContext& qp);
  void connect_blocks();
  // The blocks that produce frames, told in this order when the transmit
  // pipeline or the port has room again.
  std::array<RoomPort*, 2> producers() { return {&requester_, &responder_}; }

  // Declared in construction order: the context's parts, the context, the blocks.
  NicConfig config_;
  fabric::Port* port_ = nullptr;
  PcieLink pcie_;
  DmaEngine dma_;
  MemoryTranslation translation_;
  ContextTables tables_;
  ContextCache cache_;
  NicCounters counters_;
  Jitter jitter_;
  std::unique_ptr<CongestionControl> congestion_;
  NicContext ctx_;
  Doorbell doorbell_;
  WqeFetcher fetcher_;
  Requester requester_;
  Responder responder_;
  Completer completer_;
  CqeWriter cqe_writer_;
  RxPipeline rx_;
  TxPipeline tx_;
  Egress egress_;
  RxBuffer rx_buffer_;
  NotificationPoint notification_point_;
  QpErrors errors_;
  uint32_t next_srqn_ = 1;
  // QPNs below this are special QPs' (0 SMI, 1 GSI), never handed out.
  static constexpr uint32_t kFirstQpn = 0x11;
  uint32_t next_qpn_ = kFirstQpn;
  std::deque<uint64_t> tallies_;  // [tally - 1]: payload accepted (a deque: QPs point into it)
  uint32_t next_cqn_ = 1;
  uint32_t next_pd_ = 1;
};

}  // namespace rnicsim::nic
