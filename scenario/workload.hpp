// Workload drivers: the host software of a scenario. A workload owns QPs on its
// hosts, posts work requests through the rings and doorbells like a verbs program,
// and reaps completions by polling its CQ rings (or, for perftest's write latency
// test, a byte of its buffer).
// The kinds (perftest.hpp, flows.hpp) are made by make_workload (workloads.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nic_model/host_queues.hpp"
#include "scenario/host_cores.hpp"
#include "scenario/spec.hpp"
#include "scenario/summary.hpp"
#include "scenario/workload_counts.hpp"
#include "scenario/world.hpp"
#include "sim/byte_record.hpp"
#include "sim/stats.hpp"

namespace rnicsim::scenario {

class Workload {
public:
  Workload(World& world, const WorkloadSpec& spec) : world_(world), spec_(spec) {}
  virtual ~Workload() = default;
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // Called in the event that finished part `part` (see parts()).
  using PartDone = std::function<void(size_t part)>;
  // Starts at the current simulated time.
  virtual void start(PartDone on_part_done) = 0;

  // A workload runs in parts, each as one host (sim::Actor): a flows
  // workload a part per host; a perftest run one part, its client's, whose
  // server runs in the same partition. A part touches no other's state;
  // what one tells another crosses as an event.
  virtual size_t parts() const { return 1; }
  // The hosts part `part` runs on: the first is its own, the others must
  // share its partition.
  virtual std::vector<const Host*> part_hosts(size_t part) const = 0;
  // Whether part `part` is done (it stays so).
  virtual bool part_done(size_t part) const {
    (void)part;
    return finished_;
  }

  bool finished() const { return finished_; }
  bool failed() const { return failed_; }
  const std::string& failure() const { return failure_; }
  const WorkloadSpec& spec() const { return spec_; }
  uint64_t messages() const { return messages_; }
  uint64_t bytes() const { return bytes_; }
  // Bytes delivered so far, as the receivers placed them (for the time series and
  // a run cut short); equal to bytes() once the workload has finished.
  virtual uint64_t delivered_bytes() const { return bytes_; }
  // What delivered_bytes() comes to when the workload has finished.
  virtual uint64_t expected_bytes() const = 0;
  // The time its busiest posting core spent posting (HostCores); zero where posting is free.
  virtual sim::Duration posting_busy() const { return sim::Duration::zero(); }
  // Brings what its parts did into the workload's own state (finished once
  // every part is, and its counts); called while no event runs: at a
  // stage's end and after the run.
  virtual void settle() {}
  // A run across ranks, once it is over: what parts `parts` did (each ran on
  // one rank; the others hold it as it was built), as one record, and back
  // into another rank's copy of this workload; settle() then gives there
  // what one process gives.
  virtual void write_parts(std::span<const size_t> parts, sim::ByteWriter& out) const = 0;
  virtual void read_parts(sim::ByteReader& in) = 0;
  sim::Duration elapsed() const { return end_ - start_; }
  bool started() const { return started_; }
  // From its start to its end, or to `until` if it has not finished (zero before it starts).
  sim::Duration ran_for(sim::Time until) const {
    return started_ ? (finished_ ? end_ : until) - start_ : sim::Duration::zero();
  }
  // bw: each signaled WQE, posted to completion; lat: each iteration (half the round
  // trip for write/send, the whole for read/atomic); flows: each flow's FCT.
  const sim::Histogram& latency_ps() const { return latency_; }
  // Whether the target memory holds exactly what the workload put there.
  bool data_verified() const { return data_verified_; }
  // Whether the workload could check its data (not when payload bytes are not
  // materialised: scenario payload: size_only).
  bool data_checked() const { return data_checked_; }
  // Its counts (workload_counts.hpp), and its send completions reaped by
  // status (to the end of the run).
  const WorkloadCounts& counts() const { return counts_; }
  const std::array<uint64_t, kCompletionStatuses>& send_completions() const { return send_completions_; }
  // Per QP: SUCCESS, then at most one error, then only WR_FLUSH_ERR (IBTA 10.3.1:
  // a QP in the Error state flushes every outstanding WQE).
  bool completion_order_ok() const { return completion_order_ok_; }
  const std::vector<PerftestRow>& rows() const { return rows_; }
  const std::vector<FlowResult>& flows() const { return flows_; }

protected:
  // The results every workload keeps (below), as bytes and back.
  void write_results(sim::ByteWriter& out) const;
  void read_results(sim::ByteReader& in);
  void begin(PartDone on_part_done);
  void finish();
  void fail(const std::string& why);
  // Its clock: its first part's host's partition's (set at its start).
  sim::Time now() const { return clock_ != nullptr ? clock_->now() : world_.now(); }

  World& world_;
  WorkloadSpec spec_;
  PartDone on_part_done_;
  const sim::Scheduler* clock_ = nullptr;
  sim::Time start_, end_;
  uint64_t messages_ = 0, bytes_ = 0;
  WorkloadCounts counts_;
  std::array<uint64_t, kCompletionStatuses> send_completions_{};
  bool completion_order_ok_ = true;
  sim::Histogram latency_;
  bool started_ = false, finished_ = false, failed_ = false, data_verified_ = true, data_checked_ = true;
  std::string failure_;
  std::vector<PerftestRow> rows_;
  std::vector<FlowResult> flows_;
};

// One host's side of a workload, set up the way a verbs program (perftest) sets
// itself up: a PD, one send CQ and one receive CQ shared by all of the side's QPs,
// the QPs with their rings, and one registered buffer.
class HostSide : public nic::CompletionListener {
public:
  // Called for every CQE the host reaps; `recv` says from which CQ.
  using CqeHandler = std::function<void(const nic::Cqe&, bool recv)>;

  // `cores`: the cores that post, QP i on core i mod cores (one per perftest process).
  HostSide(Host& host, const HostTiming& timing, uint32_t send_cq_entries, uint32_t recv_cq_entries,
           uint64_t buffer_bytes, uint32_t cores = 1);
  ~HostSide() override;
  HostSide(const HostSide&) = delete;
  HostSide& operator=(const HostSide&) = delete;

  void set_handler(CqeHandler h) { handler_ = std::move(h); }
  // A new QP (RC unless said); returns its index on this side.
  uint32_t add_qp(uint32_t sq_entries, uint32_t rq_entries, nic::QpType type = nic::QpType::Rc);
  // What a QP is connected with, besides its peer: the attributes a verbs
  // program sets at RTR and RTS. `priority`: SL = priority, DSCP 8 x priority.
  struct Connection {
    uint32_t path_mtu = 1024;
    uint8_t rd_atomic = 1;
    uint8_t priority = 0;
    uint8_t timeout = 14, retry_cnt = 7, rnr_retry = 7;
    sim::Duration ack_timeout{};  // zero: 4.096 us x 2^timeout
    nic::QpType type = nic::QpType::Rc;
  };
  // The Q_Key of UD QPs (perftest's DEF_QKEY).
  static constexpr nic::Qkey kQkey{0x11111111};
  // The connection a workload's QPs have (its priority and retransmission attributes).
  static Connection connection_of(const WorkloadSpec& spec, uint32_t path_mtu, uint8_t rd_atomic);
  // RESET -> INIT -> RTR -> RTS towards `peer`'s QP `peer_qp`, as a verbs program does it.
  void connect(uint32_t qp, const HostSide& peer, uint32_t peer_qp, const Connection& c);
  // The same, given the peer's address, QPN and the PSNs (what the RDMA CM negotiated).
  void connect_to(uint32_t qp, const nic::AddressVector& peer, nic::Qpn peer_qpn, nic::Psn rq_psn, nic::Psn sq_psn,
                  const Connection& c);
  // A UD QP's SEND: to its peer's QP, through the address handle made when it connected.
  void address_datagram(uint32_t qp, nic::SendWqe& w) const;
  // Writes the WQE into the send ring; rings the doorbell if `ring` (a post list
  // rings once, after its last WQE). A WQE posted on its own (`alone`) goes with
  // the doorbell (BlueFlame) when the host's settings say so. Returns when the
  // QP's core started on it (later than now while it is busy: HostCores).
  sim::Time post_send(uint32_t qp, const nic::SendWqe& w, bool ring = true, bool alone = true);
  void post_recv(uint32_t qp, const nic::RecvWqe& w);
  const HostCores& cores() const { return cores_; }

  // Calls `fn` once the byte at `addr` reads `value`: the host reads it every
  // mem_poll_interval and acts poll_delay after the read that sees it.
  void watch_byte(uint64_t addr, uint8_t value, std::function<void()> fn);

  Host& host() { return host_; }
  uint64_t buffer() const { return buffer_; }
  uint64_t buffer_bytes() const { return buffer_bytes_; }
  // The host's bytes as they are now, for a look or a change; not to be kept
  // while the simulation runs (the NIC may write them late: SimulatedHostMemory).
  std::span<std::byte> memory(uint64_t addr, size_t len) { return host_.memory.access(addr, len); }
  const nic::MemoryRegion& mr() const { return mr_; }
  // The buffer's keys, as the WQEs in host memory carry them.
  nic::Lkey lkey() const { return mr_.lkey; }
  nic::Rkey rkey() const { return mr_.rkey; }
  nic::Qpn qpn(uint32_t qp) const { return qps_[qp].qpn; }
  size_t qp_count() const { return qps_.size(); }
  // Payload bytes the NIC placed in order into this side's QPs' host memory (Nic::payload_placed_in).
  uint64_t payload_placed() const;

  void on_completion(nic::Cqn cqn) override;
  std::optional<uint64_t> consumer_index(nic::Cqn cqn) const override;

private:
  struct Qp {
    nic::Qpn qpn;
    nic::QpType type;
    nic::WqeRingWriter<nic::SendWqe> sq;
    nic::WqeRingWriter<nic::RecvWqe> rq;
    uint32_t ud_ah = 0;  // UD: the address handle of its peer, and the peer's QPN
    nic::Qpn ud_peer{};
  };
  void poll();
  void mem_poll();

  Host& host_;
  HostTiming timing_;
  CqeHandler handler_;
  sim::Event poll_, mem_poll_, mem_act_;
  HostCores cores_;
  nic::Pdn pd_;
  nic::Cqn send_cqn_, recv_cqn_;
  std::optional<nic::CqRingReader> send_cq_, recv_cq_;
  uint64_t buffer_ = 0, buffer_bytes_ = 0;
  nic::MemoryRegion mr_;
  std::vector<Qp> qps_;
  uint32_t tally_ = 0;  // the NIC's tally of these QPs' payload (payload_placed)
  // The byte being watched.
  uint64_t watch_addr_ = 0;
  uint8_t watch_value_ = 0;
  std::function<void()> watch_fn_;
};

// Ring sizes: powers of two.
uint32_t ring_entries(uint64_t n);

}  // namespace rnicsim::scenario
