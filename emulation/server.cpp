#include "emulation/server.hpp"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include "emulation/control_ops.hpp"
#include "emulation/host_network.hpp"
#include "emulation/doorbell_scanner.hpp"
#include "emulation/op_table.hpp"
#include "emulation/payload_mover.hpp"
#include "emulation/rdma_cm.hpp"
#include "emulation/registry.hpp"
#include "emulation/session.hpp"
#include "fabric/pcap_tap.hpp"
#include "scenario/runner.hpp"
#include "scenario/world.hpp"
#include "sim/real_time.hpp"
#include "sim/virtual_time.hpp"
#include "verbs_shim/protocol.hpp"
#include "verbs_shim/wire.hpp"

namespace rnicsim::emulation {
namespace proto = verbs_proto;

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

// An event due sooner than this is waited for by spinning.
constexpr std::chrono::microseconds kHotWindow{50};
constexpr std::chrono::milliseconds kLookEvery{1};
// ... and while it spins with nothing due soon (a request waits this long at most).
constexpr std::chrono::microseconds kIdleLookEvery{50};
// A yield that took this long gave the CPU to a program that kept it for a
// scheduler slice. Two such within kContendedWithin: the programs spin on more
// CPUs than they leave free (one alone may be any other process's slice). For
// kContendedFor after, the daemon sleeps as soon as nothing is due soon
// instead of spinning on: a doorbell or a request wakes it, and the scheduler
// gives a woken sleeper the CPU far sooner than it gives a yielder back its
// turn (riostream's programs spin on their own memory: 2 ms a transfer
// against 50 us on 2 CPUs). Programs that spin in the shim's poll yield too,
// so the daemon's yields come back quickly and it keeps spinning for them.
constexpr std::chrono::microseconds kContendedYield{500};
constexpr std::chrono::milliseconds kContendedWithin{50};
constexpr std::chrono::milliseconds kContendedFor{100};

using Clock = std::chrono::steady_clock;

std::unique_ptr<sim::Executor> make_executor(sim::Scheduler& s, const ServeOptions& o) {
  if (o.clock == ClockMode::Virtual)
    return std::make_unique<sim::VirtualTimeExecutor>(s, sim::VirtualTimeExecutor::kHorizon,
                                                      sim::VirtualTimeExecutor::kGrace, o.settle);
  return std::make_unique<sim::RealTimeExecutor>(s, o.dilation);
}

int make_wake_fd() {
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error("eventfd failed");
  return fd;
}

// The daemon: builds the scenario's world and the pieces that serve programs on
// it (the registry of their objects, the sessions, the op table's handlers, the
// doorbell scanner) and runs the loop that drives them.
class Server {
public:
  Server(const scenario::Scenario& s, const ServeOptions& o, std::ostream& out);
  ~Server();
  // Creates the socket clients connect to (run() serves it).
  void listen_on_socket();
  int run();
  // A client connected on `fd` (its end of the socket) as process `pid`.
  void add_session(int fd, pid_t pid) { sessions_.add(fd, pid); }
  // Reads and answers one request of the client on `fd`; false when the
  // session has ended (the daemon closed `fd`).
  bool serve_session(int fd);

private:
  // What the loop remembers from round to round.
  struct Loop {
    Clock::time_point last_activity = Clock::now();
    Clock::time_point last_look = Clock::now();
    Clock::time_point long_yield{}, contended_until{};  // see kContendedYield
    bool contended = false;                             // in a spell: told and held (contend)
    uint64_t spins = 0;
  };
  // sched_yield, timed: a long one marks the CPUs contended.
  void yield(Loop& l);
  // Starts (or renews) and ends a spell of CPUs contended: the programs are
  // told and the payload mover is held.
  void contend(Loop& l, bool on);
  // How long the daemon spins after its last work before it sleeps.
  std::chrono::microseconds spin_after_work(const Loop& l, Clock::time_point now) const {
    return now < l.contended_until ? std::chrono::microseconds{0} : options_.spin;
  }
  // Handles one request; false when the session is over.
  bool handle(Session& s);
  void end_session(Session& s);
  void start_network();
  void write_hosts_file();
  // Fires the events that are due; the DMA writes they made reach the programs.
  // Whether any fired.
  bool run_simulation();
  bool keep_spinning(Loop& l, Clock::time_point round_end, bool worked);
  // One look at the sockets; false when the daemon has been idle too long.
  bool look(Loop& l, bool worked);
  void serve_ready(const std::vector<pollfd>& pfds);
  // Whether nothing is on its way to CQ `cqn` of host `h`: no WQE of a QP that
  // completes into it waits for its doorbell, fetch or answer, no CQE write is
  // in flight.
  bool settled(HostState& h, nic::Cqn cqn);
  void answer_settled();
  bool idle_too_long();
  void print_summary();
  void print_cm_summary();

  const scenario::Scenario& scenario_;
  ServeOptions options_;
  std::ostream& out_;
  // Before the hosts: their memories wait for it as they go.
  std::unique_ptr<PayloadMover> mover_;
  Registry registry_;
  scenario::World world_;
  std::unique_ptr<sim::Executor> executor_;
  // The RDMA CM of each host (after the world: it goes first).
  std::vector<std::unique_ptr<RdmaCm>> rdma_cms_;
  std::unique_ptr<fabric::PcapTap> tap_;
  std::unique_ptr<scenario::Timeline> timeline_;
  std::unique_ptr<ListeningSocket> listener_;
  int wake_fd_;
  Sessions sessions_;
  std::vector<Settling> settling_;
  std::unique_ptr<HostNetwork> network_;  // with host_network: each host's namespace
  std::string hosts_text_;                 // with network_: their /etc/hosts
  std::string hosts_path_;                 // where it is, once written
  ControlOps ops_;
  DoorbellScanner doorbells_;
  Clock::time_point idle_since_ = Clock::now();
  uint64_t requests_ = 0, sleeps_ = 0, contended_ = 0;
};

Server::Server(const scenario::Scenario& s, const ServeOptions& o, std::ostream& out)
    : scenario_(s),
      options_(o),
      out_(out),
      registry_(s.hosts.size()),
      world_(s, o.seed != 0 ? o.seed : s.seed, std::cerr, registry_.memory_for()),
      executor_(make_executor(world_.sim().scheduler(), o)),
      wake_fd_(make_wake_fd()),
      sessions_([this](Session& session) { end_session(session); }),
      ops_(scenario_, options_, out_, registry_, rdma_cms_, settling_, wake_fd_),
      doorbells_(registry_, *executor_, sessions_, o.clock, o.settle) {
  world_.sim().log().set_level(o.log_level);
  if (auto* virtual_clock = dynamic_cast<sim::VirtualTimeExecutor*>(executor_.get()))
    virtual_clock->set_waiting([this] { return doorbells_.programs_done(); });
  if (o.host_network) start_network();  // before the mover's thread: it forks
  if (o.payload_mover && PayloadMover::worthwhile()) mover_ = std::make_unique<PayloadMover>();
  for (size_t i = 0; i < registry_.hosts().size(); ++i) {
    HostState& h = *registry_.hosts()[i];
    h.memory.set_mover(mover_.get());
    h.host = world_.hosts()[i].get();
    h.host->nic->set_async_listener(&h);
    // The virtual clock takes doorbells only once the programs are done (DoorbellScanner::take).
    if (o.clock == ClockMode::Real) h.host->nic->set_doorbell_records(&h);
    rdma_cms_.push_back(std::make_unique<RdmaCm>(world_, i, h.memory, out_));
  }
  if (!o.pcap_path.empty() && !world_.hosts().empty() && world_.hosts().front()->port) {
    tap_ = std::make_unique<fabric::PcapTap>(o.pcap_path, fabric::capture_link_type(world_.link_kind(), s.ib_capture));
    world_.hosts().front()->port->add_tap(tap_.get());
  }
  if (!o.timeline.path.empty()) {
    timeline_ = std::make_unique<scenario::Timeline>(o.timeline.path, o.timeline.filter);
    for (const auto& h : world_.hosts()) timeline_->attach(*h);
  }
}

void Server::start_network() {
  std::vector<NetworkHost> hosts;
  for (size_t i = 0; i < world_.hosts().size(); ++i) {
    const scenario::Host& h = *world_.hosts()[i];
    hosts.push_back({scenario::network_address(h, i), h.address.mac, h.name});
  }
  std::string error;
  network_ = HostNetwork::create(hosts, error);
  if (!network_)
    out_ << "rnicsim serve: the hosts share this machine's network, none of their own (" << error << ")" << std::endl;
  else
    hosts_text_ = hosts_file(hosts);
  ops_.set_network(network_.get());
}

Server::~Server() {
  // The frames of moves in flight go back to the world's pools while they exist.
  if (mover_) mover_->drain();
  registry_.release_all();
  close(wake_fd_);
  if (!hosts_path_.empty()) std::remove(hosts_path_.c_str());
}

void Server::listen_on_socket() {
  const std::string path = options_.socket_path.empty() ? default_socket_path() : options_.socket_path;
  listener_ = std::make_unique<ListeningSocket>(path);
  if (network_) {
    hosts_path_ = hosts_file_path(path);
    write_hosts_file();
  }
}

// Beside the socket, where the launchers find it (written whole, then renamed,
// so that none reads half of it).
void Server::write_hosts_file() {
  const std::string tmp = hosts_path_ + ".new";
  FILE* f = std::fopen(tmp.c_str(), "w");
  const bool ok = f != nullptr && std::fputs(hosts_text_.c_str(), f) >= 0;
  if (f != nullptr && std::fclose(f) != 0) std::remove(tmp.c_str());
  if (!ok || std::rename(tmp.c_str(), hosts_path_.c_str()) != 0) {
    out_ << "rnicsim serve: the hosts cannot find each other by name (" << hosts_path_ << ": " << std::strerror(errno)
         << ")" << std::endl;
    hosts_path_.clear();
  }
}

bool Server::serve_session(int fd) {
  Session* s = sessions_.find(fd);
  if (s == nullptr) return false;
  if (handle(*s)) return true;
  sessions_.end(fd);
  return false;
}

bool Server::handle(Session& s) {
  proto::Received r;
  const int rc = proto::receive_message(s.fd, r);
  if (rc == EAGAIN) return true;
  if (rc != 0) {
    // End of stream, or a message of another protocol version: the session ends.
    for (size_t i = 0; i < r.nfds; ++i) close(r.fds[i]);
    return false;
  }
  ++requests_;
  proto::MsgHeader reply;
  reply.op = r.header.op;
  unsigned char body[proto::kMaxBody];
  size_t length = 0;
  std::vector<int> fds;
  Call call{s, r, body, length, fds};
  reply.status = dispatch(ops_, call);
  if (reply.status == kDeferred) return true;
  // Descriptors that came with a failed request are not kept.
  if (reply.status != 0)
    for (size_t i = 0; i < r.nfds; ++i) close(r.fds[i]);
  return proto::send_message(s.fd, reply, body, length, fds) == 0;
}

void Server::end_session(Session& s) {
  if (!s.said_hello()) {
    registry_.release_session(s.fd);
    return;
  }
  HostState& h = *registry_.hosts()[s.host];
  Registry::drop_runs(h.memory.space(s.slot), s.pending_runs);
  registry_.release_session(s.fd);
  rdma_cms_[s.host]->session_ended(s.fd);
  if (h.memory.detach(s.slot)) out_ << "rnicsim serve: process " << s.pid << " left host " << h.host->name << '\n';
}

bool Server::run_simulation() {
  const bool fired = executor_->run_due() > 0;
  for (auto& h : registry_.hosts()) h->memory.flush();
  if (mover_) mover_->end_round();
  return fired;
}

bool Server::settled(HostState& h, nic::Cqn cqn) {
  nic::Nic& n = *h.host->nic;
  const nic::CqContext* cq = n.cq(cqn);
  if (cq == nullptr) return true;
  if (cq->written != cq->producer) return false;
  for (const auto& [qpn, e] : h.qps) {
    const nic::QpContext* qp = n.qp(nic::Qpn(qpn));
    if (qp == nullptr || (qp->send_cq != cqn && qp->recv_cq != cqn)) continue;
    if (qp->state == nic::QpState::Reset || qp->state == nic::QpState::Err) continue;
    if (qp->send_cq == cqn && (qp->sq.producer < e.sq_seen || qp->sq.fetched < qp->sq.producer ||
                               !qp->send_entries.empty()))
      return false;
  }
  return true;
}

void Server::answer_settled() {
  const auto now = Clock::now();
  std::erase_if(settling_, [&](const Settling& w) {
    if (!sessions_.contains(w.fd)) return true;
    if (!settled(*registry_.hosts()[w.host], nic::Cqn(w.cqn)) && now < w.deadline) return false;
    proto::MsgHeader reply;
    reply.op = static_cast<uint16_t>(proto::Op::SettleCq);
    if (proto::send_message(w.fd, reply, nullptr, 0) != 0) { /* the session ends at its next read */ }
    return true;
  });
}

bool Server::idle_too_long() {
  if (!sessions_.empty()) {
    idle_since_ = Clock::now();
    return false;
  }
  return options_.idle_exit.count() > 0 && Clock::now() - idle_since_ > options_.idle_exit;
}

int Server::run() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  out_ << "rnicsim serve: " << scenario_.hosts.size() << " hosts, socket " << listener_->path() << std::endl;
  Loop l;
  while (!g_stop) {
    const bool fired = run_simulation();
    const bool rang = doorbells_.take();
    if (!settling_.empty()) answer_settled();
    const auto round_end = Clock::now();
    if (fired || rang) l.last_activity = round_end;
    if (keep_spinning(l, round_end, fired || rang)) continue;
    l.last_look = round_end;
    if (!look(l, fired || rang)) break;
  }
  if (tap_) tap_->flush();
  if (timeline_) timeline_->finish();
  if (mover_) mover_->drain();  // its system calls are counted below
  print_summary();
  print_cm_summary();
  return 0;
}

// Busy: an event is due within a few microseconds. Spin without a system
// call, looking at the sockets only now and then: every 1024 rounds, and at
// least every kLookEvery of wall time (a round that catches up with the
// wall clock can take long; a program that died must not wait for 1024).
bool Server::keep_spinning(Loop& l, Clock::time_point round_end, bool worked) {
  if (l.contended && round_end >= l.contended_until) contend(l, false);
  if (++l.spins % 1024 == 0 || round_end - l.last_look >= kLookEvery) return false;
  if (executor_->until_next() < kHotWindow) return true;
  // Spinning with nothing due soon: let the programs (which spin too)
  // have the CPU; on a machine with fewer CPUs than spinners that is what
  // moves work. The sockets wait for the next look, a short while.
  if (round_end - l.last_look < kIdleLookEvery && round_end - l.last_activity <= spin_after_work(l, round_end)) {
    if (!worked) yield(l);
    return true;
  }
  return false;
}

void Server::yield(Loop& l) {
  const auto before = Clock::now();
  sched_yield();
  const auto after = Clock::now();
  if (after - before < kContendedYield) return;
  if (after - l.long_yield < kContendedWithin) {
    if (after >= l.contended_until) ++contended_;
    l.contended_until = after + kContendedFor;
    contend(l, true);  // again when renewed: a context made since is told too
  }
  l.long_yield = after;
}

void Server::contend(Loop& l, bool on) {
  l.contended = on;
  doorbells_.set_contended(on);
  if (mover_) mover_->hold(on);
}

// A zero-timeout look while busy. Idle: arm the wake-up doorbell, look once
// more, then sleep until a doorbell, a request or the next event.
bool Server::look(Loop& l, bool worked) {
  const auto next = executor_->until_next();
  int timeout_ms = 0;
  bool sleeping = false;
  const auto now = Clock::now();
  if (now - l.last_activity > spin_after_work(l, now) && next > std::chrono::microseconds(200)) {
    doorbells_.set_sleeping(true);
    if (doorbells_.take() || executor_->settling()) {
      doorbells_.set_sleeping(false);
      l.last_activity = Clock::now();
      return true;
    }
    sleeping = true;
    ++sleeps_;
    const auto wait = std::min<Clock::duration>(next, std::chrono::milliseconds(200));
    timeout_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
  }
  std::vector<pollfd> pfds{{listener_->fd(), POLLIN, 0}, {wake_fd_, POLLIN, 0}, {executor_->inbox_fd(), POLLIN, 0}};
  sessions_.add_pollfds(pfds);
  const int n = poll(pfds.data(), pfds.size(), timeout_ms);
  // Spinning with nothing to do: let the programs (which spin too) have the
  // CPU; on a machine with fewer CPUs than spinners that is what moves work.
  if (n == 0 && !sleeping && !worked) yield(l);
  if (sleeping) doorbells_.set_sleeping(false);
  if (n > 0) {
    l.last_activity = Clock::now();
    serve_ready(pfds);
  }
  return !idle_too_long();
}

void Server::serve_ready(const std::vector<pollfd>& pfds) {
  if (pfds[1].revents & POLLIN) {
    uint64_t v;
    if (read(wake_fd_, &v, sizeof v) < 0) { /* drained by another read */ }
  }
  if (pfds[0].revents & POLLIN)
    if (auto client = listener_->accept(out_)) sessions_.add(client->first, client->second);
  std::vector<int> gone;
  for (size_t i = 3; i < pfds.size(); ++i) {
    if (pfds[i].revents == 0) continue;
    Session* s = sessions_.find(pfds[i].fd);
    if (s == nullptr) continue;
    // Requests are served at the simulated present, after the doorbells
    // the program rang before it asked.
    run_simulation();
    executor_->touch();
    if (options_.clock == ClockMode::Virtual) doorbells_.notice();
    doorbells_.scan();
    if (!handle(*s)) gone.push_back(pfds[i].fd);
  }
  for (int fd : gone) sessions_.end(fd);
}

void Server::print_summary() {
  uint64_t tx = 0, rx = 0, retx = 0, memory_calls = 0, failed_calls = 0, shared = 0;
  if (mover_) {
    memory_calls += mover_->system_calls();
    failed_calls += mover_->failed_calls();
  }
  for (const auto& h : registry_.hosts()) {
    memory_calls += h->memory.system_calls();
    failed_calls += h->memory.failed_calls();
    shared += h->memory.shared_accesses();
  }
  for (const auto& h : world_.hosts()) {
    tx += h->nic->stats().tx_packets;
    rx += h->nic->stats().rx_frames;
    retx += h->nic->stats().retransmitted_packets;
  }
  out_ << "rnicsim serve: done; simulated " << sim::to_string(world_.sim().now()) << ", " << world_.sim().scheduler().events_fired()
       << " events, " << tx << " packets sent, " << rx << " received, " << retx << " retransmitted; " << memory_calls << " process_vm_readv/writev calls (" << failed_calls
       << " failed), " << shared << " accesses through shared memory, "
       << (mover_ ? mover_->moves() : 0) << " payload moves by the mover thread; " << requests_
       << " requests, " << doorbells_.scans_with_work() << " doorbell scans with work, " << sleeps_ << " sleeps, " << contended_
       << " spells of CPUs contended; ";
  executor_->summarize(out_);
  out_ << std::endl;
  // Drops in the fabric, PFC and ECN: why a lossless scenario retransmitted.
  scenario::Summary fabric;
  scenario::summarise_fabric(world_, fabric);
  scenario::print_fabric(fabric.fabric, out_);
}

void Server::print_cm_summary() {
  uint64_t mads_sent = 0, mads_received = 0, mads_malformed = 0, mads_retried = 0;
  for (const auto& c : rdma_cms_) {
    const cm::ConnectionManager& m = c->connection_manager();
    mads_sent += m.agent().sent();
    mads_received += m.agent().received();
    mads_malformed += m.agent().malformed();
    mads_retried += m.retransmissions();
  }
  if (mads_sent + mads_received > 0)
    out_ << "rnicsim serve: connection management: " << mads_sent << " CM MADs sent (" << mads_retried
         << " of them retries), " << mads_received << " received, " << mads_malformed << " malformed" << std::endl;
}

}  // namespace

std::string default_socket_path() {
  if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0')
    return std::string(xdg) + "/rnicsim/daemon.sock";
  return "/tmp/rnicsim-" + std::to_string(getuid()) + "/daemon.sock";
}

scenario::Scenario default_scenario() {
  return scenario::parse_scenario(
      "name: emulation\n"
      "seed: 1\n"
      "link_layer: roce_v2\n"
      "hosts: [{name: host0, ip: 10.0.0.1}, {name: host1, ip: 10.0.0.2}]\n"
      "links: [{between: [host0, host1], rate: 100Gbps, delay: 1us, loss: 0}]\n"
      "nic: {mtu: 4096}\n"
      "workloads: []\n",
      "(built-in emulation scenario)");
}

class ControlHarness::Server : public emulation::Server {
public:
  using emulation::Server::Server;
};

ControlHarness::ControlHarness(const scenario::Scenario& s, std::ostream& log)
    : scenario_(s), server_(std::make_unique<Server>(scenario_, ServeOptions{}, log)) {}

ControlHarness::~ControlHarness() = default;

int ControlHarness::connect() {
  int ends[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, ends) != 0) return -1;
  server_->add_session(ends[0], getpid());
  daemon_end_[ends[1]] = ends[0];
  return ends[1];
}

bool ControlHarness::serve(int client_fd) {
  auto it = daemon_end_.find(client_fd);
  if (it == daemon_end_.end()) return false;
  if (server_->serve_session(it->second)) return true;
  daemon_end_.erase(it);
  return false;
}

int serve(const scenario::Scenario& s, const ServeOptions& options, std::ostream& out) {
  Server server(s, options, out);
  server.listen_on_socket();
  return server.run();
}

}  // namespace rnicsim::emulation
