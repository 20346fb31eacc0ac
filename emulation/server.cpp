#include "emulation/server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "emulation/payload_mover.hpp"
#include "emulation/process_memory.hpp"
#include "emulation/program_state.hpp"
#include "emulation/rdma_cm.hpp"
#include "emulation/ring_space.hpp"
#include "fabric/pcap_tap.hpp"
#include "scenario/workload.hpp"
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

constexpr uint32_t kMaxQueueEntries = 32768;
// An event due sooner than this is waited for by spinning.
constexpr std::chrono::microseconds kHotWindow{50};
constexpr std::chrono::milliseconds kLookEvery{1};
// ... and while it spins with nothing due soon (a request waits this long at most).
constexpr std::chrono::microseconds kIdleLookEvery{50};
// Virtual clock: doorbells wait at most this many settle times for a program
// thread that still runs (see take_doorbells).
constexpr int kSettleCap = 4;

// ibv_mtu (1..5) <-> bytes.
uint32_t mtu_bytes(uint32_t ibv_mtu) { return ibv_mtu >= 1 && ibv_mtu <= 5 ? 128u << ibv_mtu : 0; }

struct Context {
  uint32_t id = 0;
  size_t host = 0;
  int session_fd = -1;
  int memfd = -1;
  int async_fd = -1;
  std::byte* base = nullptr;
  RingSpace rings{proto::kRingsOffset, proto::kSegmentBytes};
  std::vector<bool> doorbell_used = std::vector<bool>(proto::kDoorbellRecords);
  uint64_t address() const { return ProcessHostMemory::segment_address(id); }
  proto::SegmentHeader& header() const { return *reinterpret_cast<proto::SegmentHeader*>(base); }
  proto::DoorbellRecord& doorbell(uint32_t i) const {
    return reinterpret_cast<proto::DoorbellRecord*>(base + proto::kDoorbellOffset)[i];
  }
  int take_doorbell() {
    for (uint32_t i = 0; i < doorbell_used.size(); ++i)
      if (!doorbell_used[i]) {
        doorbell_used[i] = true;
        // A record used before (by a queue since destroyed) starts again from 0:
        // every field value-initialised, whatever fields the record has.
        std::construct_at(&doorbell(i));
        return static_cast<int>(i);
      }
    return -1;
  }
};

// Each queue remembers where its rings are (offsets in the context's segment).
struct CqEntry {
  uint32_t ctx = 0, doorbell = 0, cookie = 0;
  int channel_fd = -1;
  uint32_t arm_seen = 0;
  uint32_t arm_noticed = 0;  // virtual clock: see Server::take_doorbells
  uint64_t ring = 0;
};
struct QpEntry {
  uint32_t ctx = 0, doorbell = 0;
  uint64_t sq_seen = 0, rq_seen = 0;
  uint64_t sq_noticed = 0, rq_noticed = 0;
  uint64_t sq = 0, rq = 0;
};
struct SrqEntry {
  uint32_t ctx = 0, doorbell = 0;
  uint64_t seen = 0, noticed = 0;
  uint64_t ring = 0;
};
struct MrEntry {
  uint32_t ctx = 0;
  uint64_t addr = 0, length = 0;
  uint32_t access = 0;
  std::vector<std::byte*> runs;  // shared pages the daemon mapped for it (ProcessHostMemory::map_run)
};
// The most runs of shared pages a session may have sent for a registration to come.
constexpr size_t kMaxPendingRuns = 4096;

// The context an object belongs to: the PD and AH maps hold it, the others an entry with it.
uint32_t owner(uint32_t ctx) { return ctx; }
template <class Entry>
uint32_t owner(const Entry& e) {
  return e.ctx;
}
// Whether object `id` of `objects` exists and belongs to context `ctx`: a request
// may name only objects of the context it names (as in the verbs, where another
// context's PD, CQ or SRQ is invalid).
template <class Map>
bool owned_by(const Map& objects, uint32_t id, uint32_t ctx) {
  auto it = objects.find(id);
  return it != objects.end() && owner(it->second) == ctx;
}

// One host of the scenario and what processes created on its NIC.
struct HostState : nic::CompletionListener, nic::AsyncEventListener {
  scenario::Host* host = nullptr;
  size_t index = 0;
  ProcessHostMemory memory;
  pid_t owner = 0;
  int sessions = 0;
  std::unordered_map<uint32_t, uint32_t> pds;  // PD -> context
  std::unordered_map<uint32_t, MrEntry> mrs;   // lkey
  std::unordered_map<uint32_t, CqEntry> cqs;
  std::unordered_map<uint32_t, QpEntry> qps;
  std::unordered_map<uint32_t, SrqEntry> srqs;
  std::unordered_map<uint32_t, uint32_t> ahs;  // AH index -> context
  std::map<uint32_t, Context*>* contexts = nullptr;

  void on_completion(uint32_t) override {}
  // What the program's ibv_poll_cq published in the CQ's doorbell record.
  std::optional<uint64_t> consumer_index(uint32_t cqn) const override {
    auto it = cqs.find(cqn);
    if (it == cqs.end()) return std::nullopt;
    auto c = contexts->find(it->second.ctx);
    if (c == contexts->end()) return std::nullopt;
    return c->second->doorbell(it->second.doorbell).cq_consumer.load(std::memory_order_acquire);
  }
  void on_event(uint32_t cqn) override {
    auto it = cqs.find(cqn);
    if (it == cqs.end() || it->second.channel_fd < 0) return;
    const uint32_t cookie = it->second.cookie;
    if (write(it->second.channel_fd, &cookie, sizeof cookie) < 0) { /* the program is gone or not reading */ }
  }
  void on_async_event(nic::AsyncEvent event, uint32_t id) override {
    uint32_t ctx = 0;
    using E = nic::AsyncEvent;
    if (event == E::CqErr) {
      if (auto it = cqs.find(id); it != cqs.end()) ctx = it->second.ctx;
    } else if (event == E::SrqErr || event == E::SrqLimitReached) {
      if (auto it = srqs.find(id); it != srqs.end()) ctx = it->second.ctx;
    } else if (auto it = qps.find(id); it != qps.end()) {
      ctx = it->second.ctx;
    }
    auto c = contexts->find(ctx);
    if (c == contexts->end() || c->second->async_fd < 0) return;
    const uint32_t record[2] = {static_cast<uint32_t>(event), id};
    if (write(c->second->async_fd, record, sizeof record) < 0) { /* the program is gone or not reading */ }
  }
};

struct Session {
  int fd = -1;
  pid_t pid = 0;
  size_t host = SIZE_MAX;
  // Runs of shared pages (ShareRuns) for the next RegMr or ReregMr.
  std::vector<std::byte*> pending_runs;
};

// A SettleCq request waiting for the work in flight towards its CQ.
struct Settling {
  int fd = -1;
  size_t host = 0;
  uint32_t cqn = 0;
  std::chrono::steady_clock::time_point deadline;
};
constexpr int kDeferred = -1;  // dispatch: the reply comes later

class Server {
public:
  Server(const scenario::Scenario& s, const ServeOptions& o, std::ostream& out);
  ~Server();
  // Creates the socket clients connect to (run() serves it).
  void listen_on_socket();
  int run();
  // A client connected on `fd` (its end of the socket) as process `pid`.
  void add_session(int fd, pid_t pid);
  // Reads and answers one request of the client on `fd`; false when the
  // session has ended (the daemon closed `fd`).
  bool serve_session(int fd);

private:
  void accept_client();
  // Handles one request; false when the session is over.
  bool handle(Session& s);
  int dispatch(Session& s, const proto::Received& r, unsigned char* body, size_t& length, std::vector<int>& fds);
  void end_session(int fd);
  void release_context(Context& c);
  bool scan_doorbells();
  // Reads every doorbell counter into its queue's `noticed` value; whether one
  // changed since the last look.
  bool notice_doorbells();
  // Scans the doorbells. On the virtual clock it takes the values noticed, once
  // they have not changed for the executor's settle time: a burst of doorbells
  // lands at one simulated time, in the scan's order, whatever order the
  // program's threads rang in.
  bool take_doorbells();
  // Whether every thread of every program sleeps (see program_state.hpp).
  bool programs_asleep() const;
  // Fires the events that are due; the DMA writes they made reach the programs.
  // Whether any fired.
  bool run_simulation() {
    const bool fired = executor_->run_due() > 0;
    for (auto& h : hosts_) h->memory.flush();
    if (mover_) mover_->end_round();
    return fired;
  }
  void set_sleeping(bool on);
  // Whether nothing is on its way to CQ `cqn` of host `h`: no WQE of a QP that
  // completes into it waits for its doorbell, fetch or answer, no CQE write is
  // in flight.
  bool settled(HostState& h, uint32_t cqn);
  void answer_settled();

  Context* context_of(const Session& s, uint32_t ctx);
  scenario::Host& host(const Context& c) { return *world_.hosts()[c.host]; }
  HostState& state(const Context& c) { return *hosts_[c.host]; }
  int to_address_vector(const Context& c, const proto::AhWire& ah, nic::AddressVector& av);

  int op_hello(Session& s, const proto::HelloReq& q, proto::DeviceInfo& info);
  // Whether process_vm_readv reads the probe word of the Hello (errno set if not).
  static bool can_read(pid_t pid, const proto::HelloReq& q);
  int op_share_runs(Session& s, HostState& h, const proto::Received& r);
  // Unmaps the runs of a registration.
  static void drop_runs(HostState& h, std::vector<std::byte*>& runs);
  int op_open_context(Session& s, const proto::Received& r, proto::OpenContextRep& rep, std::vector<int>& fds);
  int op_create_cq(Context& c, const proto::CreateCqReq& q, int channel, proto::RingRep& rep);
  int op_create_qp(Context& c, const proto::CreateQpReq& q, proto::CreateQpRep& rep);
  int op_modify_qp(Context& c, const proto::ModifyQpReq& q);
  int op_create_srq(Context& c, const proto::CreateSrqReq& q, proto::RingRep& rep);
  void destroy_qp(HostState& h, uint32_t qpn);
  // Space for a ring in the context's segment (0: none left), and giving it
  // back when its queue goes (see RingSpace).
  uint64_t take_ring(Context& c, uint64_t bytes);
  void give_back(Context& c, uint64_t ring);

  const scenario::Scenario& scenario_;
  ServeOptions options_;
  std::ostream& out_;
  // Before the hosts: their memories wait for it as they go.
  std::unique_ptr<PayloadMover> mover_;
  std::vector<std::unique_ptr<HostState>> hosts_;
  scenario::World world_;
  std::unique_ptr<sim::Executor> executor_;
  // The RDMA CM of each host (after the world: it goes first).
  std::vector<std::unique_ptr<RdmaCm>> rdma_cms_;
  std::unique_ptr<fabric::PcapTap> tap_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::string socket_path_;
  ino_t socket_inode_ = 0;  // the socket this daemon bound (removed when it exits)
  std::map<int, Session> sessions_;
  std::vector<Settling> settling_;
  std::map<uint32_t, Context*> contexts_;
  std::vector<std::unique_ptr<Context>> context_store_;
  uint32_t next_context_ = 1;
  bool idle_too_long() {
    if (!sessions_.empty()) {
      idle_since_ = std::chrono::steady_clock::now();
      return false;
    }
    return options_.idle_exit.count() > 0 && std::chrono::steady_clock::now() - idle_since_ > options_.idle_exit;
  }
  std::chrono::steady_clock::time_point idle_since_ = std::chrono::steady_clock::now();
  uint64_t doorbells_ = 0, requests_ = 0, sleeps_ = 0;
};

std::unique_ptr<sim::Executor> make_executor(sim::Scheduler& s, const ServeOptions& o) {
  if (o.clock == ClockMode::Virtual)
    return std::make_unique<sim::VirtualTimeExecutor>(s, sim::VirtualTimeExecutor::kHorizon,
                                                      sim::VirtualTimeExecutor::kGrace, o.settle);
  return std::make_unique<sim::RealTimeExecutor>(s, o.dilation);
}

scenario::World::MemoryFor memory_of(std::vector<std::unique_ptr<HostState>>& hosts, size_t n) {
  for (size_t i = 0; i < n; ++i) hosts.push_back(std::make_unique<HostState>());
  return [&hosts](size_t i) -> nic::HostMemory& { return hosts[i]->memory; };
}

Server::Server(const scenario::Scenario& s, const ServeOptions& o, std::ostream& out)
    : scenario_(s),
      options_(o),
      out_(out),
      world_(s, o.seed != 0 ? o.seed : s.seed, std::cerr, memory_of(hosts_, s.hosts.size())),
      executor_(make_executor(world_.sim().scheduler(), o)) {
  world_.sim().log().set_level(o.log_level);
  if (o.payload_mover && PayloadMover::worthwhile()) mover_ = std::make_unique<PayloadMover>();
  for (size_t i = 0; i < hosts_.size(); ++i) {
    HostState& h = *hosts_[i];
    h.memory.set_mover(mover_.get());
    h.host = world_.hosts()[i].get();
    h.index = i;
    h.contexts = &contexts_;
    h.host->nic->set_async_listener(&h);
    rdma_cms_.push_back(std::make_unique<RdmaCm>(world_, i, h.memory, out_));
  }
  if (!o.pcap_path.empty() && !world_.hosts().empty() && world_.hosts().front()->port) {
    tap_ = std::make_unique<fabric::PcapTap>(o.pcap_path, fabric::capture_link_type(world_.link_kind()));
    world_.hosts().front()->port->add_tap(tap_.get());
  }
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
}

// The directory of the socket: the components that are missing are created
// (0700), existing ones are left as they are. One that others may write into
// is refused unless it is sticky and owned by this user or root (as /tmp is):
// there, another user could replace the socket.
void prepare_socket_dir(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (mkdir(part.c_str(), 0700) != 0 && errno != EEXIST)
      throw std::runtime_error("cannot create " + part + ": " + std::strerror(errno));
  }
  struct stat st{};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) throw std::runtime_error(dir + " is not a directory");
  if (st.st_uid != getuid() && st.st_uid != 0)
    throw std::runtime_error(dir + " belongs to another user: choose another --socket");
  // Owned by this user or root from here on: sticky is what protects the socket.
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)
    throw std::runtime_error(dir + " can be written by other users and is not sticky: choose another --socket");
}

void Server::listen_on_socket() {
  socket_path_ = options_.socket_path.empty() ? default_socket_path() : options_.socket_path;
  const size_t slash = socket_path_.rfind('/');
  if (slash != std::string::npos && slash > 0) prepare_socket_dir(socket_path_.substr(0, slash));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof addr.sun_path) throw std::runtime_error("socket path too long: " + socket_path_);
  std::strcpy(addr.sun_path, socket_path_.c_str());
  listen_fd_ = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw std::runtime_error("socket failed");
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    // Only a socket that nobody answers on (left by a daemon that died) is
    // removed; anything else at the path stays.
    struct stat st{};
    if (lstat(socket_path_.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
      throw std::runtime_error("cannot bind " + socket_path_ + ": " + std::strerror(errno) +
                               (errno == EADDRINUSE ? " (it is not a socket; not removing it)" : ""));
    const int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const bool alive = connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    close(probe);
    if (alive) throw std::runtime_error("a daemon already serves " + socket_path_);
    unlink(socket_path_.c_str());
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
      throw std::runtime_error("cannot bind " + socket_path_ + ": " + std::strerror(errno));
  }
  struct stat st{};
  if (lstat(socket_path_.c_str(), &st) == 0) socket_inode_ = st.st_ino;
  if (listen(listen_fd_, 64) != 0) throw std::runtime_error("listen failed");
}

Server::~Server() {
  // The frames of moves in flight go back to the world's pools while they exist.
  if (mover_) mover_->drain();
  for (auto& [fd, s] : sessions_) close(fd);
  // release_context() takes the context out of context_store_ (a loop over the
  // vector would skip every other one, leaking its memfd and mapping).
  while (!context_store_.empty()) {
    Context& c = *context_store_.back();
    if (c.base == nullptr) {
      context_store_.pop_back();
      continue;
    }
    release_context(c);
  }
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    // Only if the path is still this daemon's socket.
    struct stat st{};
    if (lstat(socket_path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == socket_inode_)
      unlink(socket_path_.c_str());
  }
  if (wake_fd_ >= 0) close(wake_fd_);
}

void Server::accept_client() {
  const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != getuid()) {
    out_ << "rnicsim serve: refused a connection from uid " << cred.uid << '\n';
    close(fd);
    return;
  }
  add_session(fd, cred.pid);
}

void Server::add_session(int fd, pid_t pid) { sessions_[fd] = Session{fd, pid, SIZE_MAX, {}}; }

bool Server::serve_session(int fd) {
  auto it = sessions_.find(fd);
  if (it == sessions_.end()) return false;
  if (handle(it->second)) return true;
  end_session(fd);
  return false;
}

Context* Server::context_of(const Session& s, uint32_t ctx) {
  auto it = contexts_.find(ctx);
  if (it == contexts_.end() || it->second->session_fd != s.fd) return nullptr;
  return it->second;
}

int Server::op_hello(Session& s, const proto::HelloReq& q, proto::DeviceInfo& info) {
  const bool readable = can_read(s.pid, q);
  const int read_error = errno;
  if (s.host == SIZE_MAX) {
    const std::string want(q.host, strnlen(q.host, sizeof q.host));
    size_t pick = SIZE_MAX;
    for (size_t i = 0; i < hosts_.size(); ++i) {
      HostState& h = *hosts_[i];
      const bool free = h.owner == 0 || h.owner == s.pid;
      if (!want.empty() ? h.host->name == want : free) {
        if (!free) return EBUSY;
        pick = i;
        break;
      }
    }
    if (pick == SIZE_MAX) return want.empty() ? EBUSY : ENODEV;
    HostState& h = *hosts_[pick];
    if (h.owner != s.pid) out_ << "rnicsim serve: host " << h.host->name << " is process " << s.pid << '\n';
    h.owner = s.pid;
    h.memory.set_process(s.pid);
    if (!readable)
      out_ << "rnicsim serve: process " << s.pid << " cannot be read with process_vm_readv ("
           << std::strerror(read_error) << "): it has to share its registered memory\n";
    ++h.sessions;
    s.host = pick;
  }
  const scenario::Host& host = *hosts_[s.host]->host;
  const nic::NicConfig& cfg = host.nic->config();
  std::snprintf(info.host, sizeof info.host, "%s", host.name.c_str());
  const std::string device = s.host < scenario_.hosts.size() ? scenario_.hosts[s.host].device : "";
  std::snprintf(info.device, sizeof info.device, "%s",
                !options_.device_name.empty() ? options_.device_name.c_str() : device.empty() ? "rnicsim0" : device.c_str());
  const uint64_t guid = scenario::port_guid(s.host);
  for (int b = 0; b < 8; ++b) reinterpret_cast<uint8_t*>(&info.node_guid)[b] = static_cast<uint8_t>(guid >> (56 - 8 * b));
  info.rate_bps = scenario_.links.empty() ? 0 : scenario_.links.front().rate_bps;
  for (const auto& l : scenario_.links)
    if (l.a == host.name || l.b == host.name) info.rate_bps = l.rate_bps;
  info.mtu = cfg.params.mtu;
  info.lid = cfg.lid;
  info.link_layer = packet::is_ib(cfg.link) ? proto::kLinkLayerIb : proto::kLinkLayerEthernet;
  std::memcpy(info.gid, cfg.ip.data(), 16);
  std::memcpy(info.mac, cfg.mac.data(), 6);
  info.daemon_pid = getpid();
  info.process_memory = readable ? 1 : 0;
  return 0;
}

bool Server::can_read(pid_t pid, const proto::HelloReq& q) {
  uint64_t value = 0;
  iovec local{&value, sizeof value};
  iovec remote{reinterpret_cast<void*>(q.probe_addr), sizeof value};
  if (q.probe_addr == 0) return errno = EFAULT, false;
  if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof value)) return false;
  if (value != q.probe_value) return errno = EIO, false;
  return true;
}

int Server::op_open_context(Session& s, const proto::Received& r, proto::OpenContextRep& rep, std::vector<int>& fds) {
  if (s.host == SIZE_MAX) return EPROTO;  // Hello first
  if (next_context_ > 0xFFFF) return ENOMEM;
  auto c = std::make_unique<Context>();
  c->id = next_context_++;
  c->host = s.host;
  c->session_fd = s.fd;
  c->async_fd = r.nfds > 0 ? r.fds[0] : -1;
  c->memfd = memfd_create("rnicsim-context", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (c->memfd < 0) return errno;
  // Sealed at its size: a program that truncates the segment it was handed
  // would otherwise make the daemon's next access to it a SIGBUS.
  void* p = ftruncate(c->memfd, static_cast<off_t>(proto::kSegmentBytes)) == 0 &&
                    fcntl(c->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0
                ? mmap(nullptr, proto::kSegmentBytes, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd, 0)
                : MAP_FAILED;
  if (p == MAP_FAILED) {
    const int error = errno;
    close(c->memfd);
    return error;
  }
  c->base = static_cast<std::byte*>(p);
  proto::SegmentHeader& h = c->header();
  h.magic = proto::kMagic;
  h.version = proto::kVersion;
  h.daemon_sleeping.store(0);
  state(*c).memory.add_segment(c->address(), c->base, proto::kSegmentBytes);
  rep.ctx = c->id;
  rep.segment_bytes = proto::kSegmentBytes;
  fds = {c->memfd, wake_fd_};
  contexts_[c->id] = c.get();
  context_store_.push_back(std::move(c));
  return 0;
}

int Server::op_share_runs(Session& s, HostState& h, const proto::Received& r) {
  // A failure dooms the registration these runs are for: its earlier runs go too.
  auto refuse = [&](int error) {
    drop_runs(h, s.pending_runs);
    return error;
  };
  proto::ShareRunsReq q;
  if (!proto::body_as(r, q)) return refuse(EPROTO);
  if (q.count == 0 || q.count > proto::kRunsPerMessage || r.nfds != q.count) return refuse(EINVAL);
  if (s.pending_runs.size() + q.count > kMaxPendingRuns) return refuse(ENOMEM);
  std::vector<std::byte*> mapped;
  for (uint32_t i = 0; i < q.count; ++i) {
    const proto::MemoryRun& run = q.runs[i];
    std::byte* p = h.memory.map_run(run.addr, run.length, r.fds[i], run.offset);
    if (p == nullptr) {
      drop_runs(h, mapped);
      return refuse(EINVAL);
    }
    mapped.push_back(p);
  }
  // The mappings keep the pages; the descriptors are not needed any more.
  for (uint32_t i = 0; i < q.count; ++i) close(r.fds[i]);
  s.pending_runs.insert(s.pending_runs.end(), mapped.begin(), mapped.end());
  return 0;
}

void Server::drop_runs(HostState& h, std::vector<std::byte*>& runs) {
  for (std::byte* p : runs) h.memory.remove_run(p);
  runs.clear();
}

int Server::op_create_cq(Context& c, const proto::CreateCqReq& q, int channel, proto::RingRep& rep) {
  if (q.entries == 0 || q.entries > kMaxQueueEntries) return EINVAL;
  // Every CQ ring has the largest size, so that ibv_resize_cq never has to move
  // it; only the pages the NIC writes cost memory.
  const uint32_t entries = kMaxQueueEntries;
  const uint64_t off = take_ring(c, uint64_t{entries} * sizeof(nic::Cqe));
  const int db = off == 0 ? -1 : c.take_doorbell();
  if (db < 0) {
    give_back(c, off);
    return ENOMEM;
  }
  HostState& h = state(c);
  // It holds what the program was told and one more, as hardware rings do;
  // more unconsumed CQEs overrun it.
  const uint32_t cqn = host(c).nic->create_cq(c.address() + off, entries, &h, proto::cq_slots(q.entries, entries));
  h.cqs[cqn] = CqEntry{.ctx = c.id, .doorbell = static_cast<uint32_t>(db), .cookie = q.cookie, .channel_fd = channel, .ring = off};
  rep = {cqn, entries, off, static_cast<uint32_t>(db), 0};
  return 0;
}

int Server::op_create_qp(Context& c, const proto::CreateQpReq& q, proto::CreateQpRep& rep) {
  HostState& h = state(c);
  if (!nic::is_qp_type(q.qp_type)) return EOPNOTSUPP;
  if (!owned_by(h.pds, q.pd, c.id) || !owned_by(h.cqs, q.send_cq, c.id) || !owned_by(h.cqs, q.recv_cq, c.id))
    return EINVAL;
  if (q.srq != 0 && !owned_by(h.srqs, q.srq, c.id)) return EINVAL;
  if (q.max_send_wr > kMaxQueueEntries || q.max_recv_wr > kMaxQueueEntries || q.max_send_sge > nic::kMaxSge ||
      q.max_recv_sge > nic::kMaxSge || q.max_inline > nic::kMaxInline)
    return EINVAL;
  const uint32_t sq_entries = scenario::ring_entries(std::max(q.max_send_wr, 1u));
  const uint32_t rq_entries = q.srq != 0 ? 1 : scenario::ring_entries(std::max(q.max_recv_wr, 1u));
  const uint64_t sq = take_ring(c, uint64_t{sq_entries} * sizeof(nic::SendWqe));
  const uint64_t rq = take_ring(c, uint64_t{rq_entries} * sizeof(nic::RecvWqe));
  const int db = sq == 0 || rq == 0 ? -1 : c.take_doorbell();
  if (db < 0) {
    give_back(c, sq);
    give_back(c, rq);
    return ENOMEM;
  }
  nic::QpInit init;
  init.type = static_cast<nic::QpType>(q.qp_type);
  init.pd = q.pd;
  init.send_cq = q.send_cq;
  init.recv_cq = q.recv_cq;
  init.sq = nic::WorkRing{c.address() + sq, sq_entries};
  init.rq = nic::WorkRing{c.address() + rq, rq_entries};
  init.sq_sig_all = q.sq_sig_all != 0;
  init.srq = q.srq;
  const nic::Qpn qpn = host(c).nic->create_qp(init);
  h.qps[qpn.value()] = QpEntry{.ctx = c.id, .doorbell = static_cast<uint32_t>(db), .sq = sq, .rq = rq};
  rep = {qpn.value(), sq_entries, rq_entries, static_cast<uint32_t>(db), sq, rq};
  return 0;
}

int Server::to_address_vector(const Context& c, const proto::AhWire& ah, nic::AddressVector& av) {
  const nic::NicConfig& cfg = world_.hosts()[c.host]->nic->config();
  av = nic::AddressVector{};
  av.sl = ah.sl;
  av.traffic_class = ah.traffic_class;
  av.hop_limit = ah.hop_limit == 0 ? 64 : ah.hop_limit;
  if (ah.is_global) std::memcpy(av.ip.data(), ah.dgid, 16);
  if (packet::is_ib(cfg.link)) {
    av.lid = ah.dlid;
    return ah.dlid == 0 ? EINVAL : 0;
  }
  // RoCEv2: the GRH is mandatory; the destination MAC is what neighbour
  // resolution of the GID's address gives, here the scenario host that has it.
  if (!ah.is_global) return EINVAL;
  for (const auto& other : world_.hosts())
    if (other->address.ip == av.ip || proto::link_local_gid(other->address.mac) == av.ip) {
      av.ip = other->address.ip;  // the wire carries the host's own address
      av.mac = other->address.mac;
      return 0;
    }
  out_ << "rnicsim serve: no host has GID " << [&] {
    char text[INET6_ADDRSTRLEN] = {};
    inet_ntop(AF_INET6, ah.dgid, text, sizeof text);
    return std::string(text);
  }() << '\n';
  return EHOSTUNREACH;
}

int Server::op_modify_qp(Context& c, const proto::ModifyQpReq& q) {
  HostState& h = state(c);
  auto it = h.qps.find(q.qpn);
  if (it == h.qps.end() || it->second.ctx != c.id) return EINVAL;
  nic::QpAttr a;
  a.state = static_cast<nic::QpState>(q.state);
  if (q.mask & nic::kQpPathMtu) {
    a.path_mtu = mtu_bytes(q.path_mtu);
    if (a.path_mtu == 0) return EINVAL;
  }
  if ((q.mask & nic::kQpPort) && q.port_num != 1) return EINVAL;
  if ((q.mask & nic::kQpPkeyIndex) && q.pkey_index != 0) return EINVAL;
  a.dest_qpn = q.dest_qpn;
  a.rq_psn = q.rq_psn;
  a.sq_psn = q.sq_psn;
  a.qkey = q.qkey;
  a.access_flags = q.access;
  a.timeout = q.timeout;
  a.retry_cnt = q.retry_cnt;
  a.rnr_retry = q.rnr_retry;
  a.min_rnr_timer = q.min_rnr_timer;
  a.max_rd_atomic = q.max_rd_atomic;
  a.max_dest_rd_atomic = q.max_dest_rd_atomic;
  if (q.mask & nic::kQpAv)
    if (int rc = to_address_vector(c, q.ah, a.av); rc != 0) return rc;
  const int rc = host(c).nic->modify_qp(nic::Qpn(q.qpn), a, q.mask & ~uint32_t{nic::kQpCurState});
  if (rc == 0 && (q.mask & nic::kQpState) && a.state == nic::QpState::Reset) {
    // The rings start again at index 0, on both sides.
    QpEntry& e = it->second;
    proto::DoorbellRecord& d = c.doorbell(e.doorbell);
    d.sq_producer.store(0, std::memory_order_relaxed);
    d.rq_producer.store(0, std::memory_order_relaxed);
    e.sq_seen = e.rq_seen = 0;
  }
  return rc;
}

int Server::op_create_srq(Context& c, const proto::CreateSrqReq& q, proto::RingRep& rep) {
  HostState& h = state(c);
  if (!owned_by(h.pds, q.pd, c.id)) return EINVAL;
  if (q.max_wr == 0 || q.max_wr > kMaxQueueEntries || q.max_sge > nic::kMaxSge) return EINVAL;
  const uint32_t entries = scenario::ring_entries(q.max_wr);
  const uint64_t off = take_ring(c, uint64_t{entries} * sizeof(nic::RecvWqe));
  const int db = off == 0 ? -1 : c.take_doorbell();
  if (db < 0) {
    give_back(c, off);
    return ENOMEM;
  }
  const uint32_t srqn = host(c).nic->create_srq(q.pd, nic::WorkRing{c.address() + off, entries});
  if (q.limit != 0) host(c).nic->arm_srq_limit(srqn, q.limit);
  h.srqs[srqn] = SrqEntry{.ctx = c.id, .doorbell = static_cast<uint32_t>(db), .ring = off};
  rep = {srqn, entries, off, static_cast<uint32_t>(db), 0};
  return 0;
}

uint64_t Server::take_ring(Context& c, uint64_t bytes) {
  c.rings.reclaim(host(c).nic->dma().writes_done(), [&](uint64_t at, uint64_t n) {
    // Its pages go back to the system, and the next ring there starts zeroed
    // (no stale CQE the program could take for a new one).
    if (fallocate(c.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at),
                  static_cast<off_t>(n)) != 0)
      std::memset(c.base + at, 0, n);
  });
  return c.rings.allocate(bytes);
}

void Server::give_back(Context& c, uint64_t ring) { c.rings.release(ring, host(c).nic->dma().writes()); }

void Server::destroy_qp(HostState& h, uint32_t qpn) {
  auto it = h.qps.find(qpn);
  if (it == h.qps.end()) return;
  nic::Nic& n = *h.host->nic;
  // Into ERR first: outstanding work is flushed and timers stop.
  nic::QpAttr a;
  a.state = nic::QpState::Err;
  n.modify_qp(nic::Qpn(qpn), a, nic::kQpState);
  n.destroy_qp(nic::Qpn(qpn));
  Context& c = *contexts_[it->second.ctx];
  c.doorbell_used[it->second.doorbell] = false;
  give_back(c, it->second.sq);
  give_back(c, it->second.rq);
  h.qps.erase(it);
}

int Server::dispatch(Session& s, const proto::Received& r, unsigned char* body, size_t& length,
                     std::vector<int>& fds) {
  using proto::Op;
  auto reply_with = [&](const auto& v) {
    std::memcpy(body, &v, sizeof v);
    length = sizeof v;
  };
  const auto op = static_cast<Op>(r.header.op);
  if (op == Op::Hello) {
    proto::HelloReq q;
    proto::DeviceInfo info;
    if (!proto::body_as(r, q)) return EPROTO;
    const int rc = op_hello(s, q, info);
    if (rc == 0) reply_with(info);
    return rc;
  }
  if (op == Op::OpenContext) {
    proto::OpenContextRep rep;
    const int rc = op_open_context(s, r, rep, fds);
    if (rc == 0) reply_with(rep);
    return rc;
  }
  if (RdmaCm::handles(op)) {
    if (s.host == SIZE_MAX) return EPROTO;  // Hello first
    return rdma_cms_[s.host]->dispatch(s.fd, r, body, length);
  }
  // Every other request names a context of this session first.
  uint32_t ctx_id = 0;
  if (r.header.length < sizeof ctx_id) return EPROTO;
  std::memcpy(&ctx_id, r.body, sizeof ctx_id);
  Context* c = context_of(s, ctx_id);
  if (c == nullptr) return EBADF;
  HostState& h = state(*c);
  nic::Nic& n = *host(*c).nic;
  switch (op) {
    case Op::CloseContext: {
      release_context(*c);
      return 0;
    }
    case Op::AllocPd: {
      const uint32_t pd = n.alloc_pd();
      h.pds[pd] = c->id;
      reply_with(proto::ObjectRep{pd, 0});
      return 0;
    }
    case Op::DeallocPd: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      auto it = h.pds.find(q.id);
      if (it == h.pds.end() || it->second != c->id) return EINVAL;
      for (const auto& [lkey, mr] : h.mrs)
        if (n.translation().by_lkey(lkey) != nullptr && n.translation().by_lkey(lkey)->pd == q.id) return EBUSY;
      h.pds.erase(it);
      return 0;
    }
    case Op::ShareRuns:
      return op_share_runs(s, h, r);
    case Op::RegMr:
    case Op::ReregMr: {
      // The runs the ShareRuns requests before this one sent: this region's,
      // or unmapped if the registration fails.
      std::vector<std::byte*> runs = std::exchange(s.pending_runs, {});
      auto refuse = [&](int error) {
        drop_runs(h, runs);
        return error;
      };
      proto::RegMrReq q;
      if (!proto::body_as(r, q)) return refuse(EPROTO);
      if (q.shared_runs != runs.size()) return refuse(EINVAL);
      auto pd = h.pds.find(q.pd);
      if (pd == h.pds.end() || pd->second != c->id) return refuse(EINVAL);
      if (q.length == 0 || q.addr + q.length < q.addr) return refuse(EINVAL);
      // Remote write or atomic without local write is invalid (IBTA 10.6.3.1).
      if ((q.access & (nic::kAccessRemoteWrite | nic::kAccessRemoteAtomic)) && !(q.access & nic::kAccessLocalWrite))
        return refuse(EINVAL);
      const uint32_t access = q.access & 0xF;
      if (op == Op::ReregMr) {
        auto it = h.mrs.find(q.lkey);
        if (it == h.mrs.end() || it->second.ctx != c->id) return refuse(EINVAL);
        h.memory.remove_region(it->second.addr, it->second.length, it->second.access);
        n.translation().modify(q.lkey, q.pd, q.addr, q.length, q.iova, access);
        // New shared pages replace the region's; without any it keeps its own.
        if (runs.empty())
          runs = std::move(it->second.runs);
        else
          drop_runs(h, it->second.runs);
        it->second = MrEntry{c->id, q.addr, q.length, access, std::move(runs)};
        h.memory.add_region(q.addr, q.length, access);
        const nic::MemoryRegion* mr = n.translation().by_lkey(q.lkey);
        reply_with(proto::RegMrRep{mr->lkey, mr->rkey});
        return 0;
      }
      const nic::MemoryRegion& mr = n.translation().add(q.pd, q.addr, q.length, q.iova, access);
      h.mrs[mr.lkey] = MrEntry{c->id, q.addr, q.length, access, std::move(runs)};
      h.memory.add_region(q.addr, q.length, access);
      reply_with(proto::RegMrRep{mr.lkey, mr.rkey});
      return 0;
    }
    case Op::DeregMr: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      auto it = h.mrs.find(q.id);
      if (it == h.mrs.end() || it->second.ctx != c->id) return EINVAL;
      n.translation().remove(q.id);
      h.memory.remove_region(it->second.addr, it->second.length, it->second.access);
      drop_runs(h, it->second.runs);
      h.mrs.erase(it);
      return 0;
    }
    case Op::CreateCq: {
      proto::CreateCqReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      const int channel = q.has_channel && r.nfds > 0 ? r.fds[0] : -1;
      proto::RingRep rep;
      const int rc = op_create_cq(*c, q, channel, rep);
      if (rc != 0) {
        if (channel >= 0) close(channel);
        return rc;
      }
      reply_with(rep);
      return 0;
    }
    case Op::DestroyCq: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      auto it = h.cqs.find(q.id);
      if (it == h.cqs.end() || it->second.ctx != c->id) return EINVAL;
      for (const auto& [qpn, qp] : h.qps) {
        const nic::QpContext* ctx = n.qp(qpn);
        if (ctx != nullptr && (ctx->send_cq == q.id || ctx->recv_cq == q.id)) return EBUSY;
      }
      if (it->second.channel_fd >= 0) close(it->second.channel_fd);
      c->doorbell_used[it->second.doorbell] = false;
      give_back(*c, it->second.ring);
      n.destroy_cq(q.id);
      h.cqs.erase(it);
      return 0;
    }
    case Op::CreateQp: {
      proto::CreateQpReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      proto::CreateQpRep rep;
      const int rc = op_create_qp(*c, q, rep);
      if (rc == 0) reply_with(rep);
      return rc;
    }
    case Op::ModifyQp: {
      proto::ModifyQpReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      return op_modify_qp(*c, q);
    }
    case Op::QueryQp: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      const nic::QpContext* qp = owned_by(h.qps, q.id, c->id) ? n.qp(q.id) : nullptr;
      if (qp == nullptr) return EINVAL;
      reply_with(proto::ObjectRep{q.id, static_cast<uint32_t>(qp->state)});
      return 0;
    }
    case Op::DestroyQp: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      auto it = h.qps.find(q.id);
      if (it == h.qps.end() || it->second.ctx != c->id) return EINVAL;
      destroy_qp(h, q.id);
      return 0;
    }
    case Op::CreateSrq: {
      proto::CreateSrqReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      proto::RingRep rep;
      const int rc = op_create_srq(*c, q, rep);
      if (rc == 0) reply_with(rep);
      return rc;
    }
    case Op::ModifySrq: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      if (!owned_by(h.srqs, q.id, c->id)) return EINVAL;
      return n.arm_srq_limit(q.id, static_cast<uint32_t>(q.value)) ? 0 : EINVAL;
    }
    case Op::DestroySrq: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      auto it = h.srqs.find(q.id);
      if (it == h.srqs.end() || it->second.ctx != c->id) return EINVAL;
      for (const auto& [qpn, qp] : h.qps) {
        const nic::QpContext* ctx = n.qp(qpn);
        if (ctx != nullptr && ctx->srq == q.id) return EBUSY;
      }
      c->doorbell_used[it->second.doorbell] = false;
      give_back(*c, it->second.ring);
      n.destroy_srq(q.id);
      h.srqs.erase(it);
      return 0;
    }
    case Op::SettleCq: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      auto it = h.cqs.find(q.id);
      if (it == h.cqs.end() || it->second.ctx != c->id) return EINVAL;
      settling_.push_back(Settling{s.fd, c->host, q.id, std::chrono::steady_clock::now() + std::chrono::seconds(1)});
      return kDeferred;
    }
    case Op::ResizeCq: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      if (!owned_by(h.cqs, q.id, c->id) || q.value == 0 || q.value >= kMaxQueueEntries) return EINVAL;
      return n.resize_cq(q.id, proto::cq_slots(q.value, kMaxQueueEntries)) ? 0 : EINVAL;
    }
    case Op::CreateAh: {
      proto::CreateAhReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      if (!owned_by(h.pds, q.pd, c->id)) return EINVAL;
      nic::AddressVector av;
      if (int rc = to_address_vector(*c, q.ah, av); rc != 0) return rc;
      const uint32_t index = n.create_ah(av);
      h.ahs[index] = c->id;
      reply_with(proto::ObjectRep{index, 0});
      return 0;
    }
    case Op::DestroyAh: {
      proto::ObjectReq q;
      if (!proto::body_as(r, q)) return EPROTO;
      if (!owned_by(h.ahs, q.id, c->id)) return EINVAL;
      n.destroy_ah(q.id);
      h.ahs.erase(q.id);
      return 0;
    }
    default: return EOPNOTSUPP;
  }
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
  reply.status = dispatch(s, r, body, length, fds);
  if (reply.status == kDeferred) return true;
  // Descriptors that came with a failed request are not kept.
  if (reply.status != 0)
    for (size_t i = 0; i < r.nfds; ++i) close(r.fds[i]);
  return proto::send_message(s.fd, reply, body, length, fds) == 0;
}

void Server::release_context(Context& c) {
  if (c.base == nullptr) return;
  HostState& h = *hosts_[c.host];
  nic::Nic& n = *h.host->nic;
  std::vector<uint32_t> qps;
  for (const auto& [qpn, qp] : h.qps)
    if (qp.ctx == c.id) qps.push_back(qpn);
  for (uint32_t qpn : qps) destroy_qp(h, qpn);
  std::erase_if(h.srqs, [&](const auto& e) {
    if (e.second.ctx != c.id) return false;
    n.destroy_srq(e.first);
    return true;
  });
  std::erase_if(h.cqs, [&](const auto& e) {
    if (e.second.ctx != c.id) return false;
    if (e.second.channel_fd >= 0) close(e.second.channel_fd);
    n.destroy_cq(e.first);
    return true;
  });
  for (auto it = h.mrs.begin(); it != h.mrs.end();) {
    if (it->second.ctx != c.id) {
      ++it;
      continue;
    }
    n.translation().remove(it->first);
    h.memory.remove_region(it->second.addr, it->second.length, it->second.access);
    drop_runs(h, it->second.runs);
    it = h.mrs.erase(it);
  }
  std::erase_if(h.pds, [&](const auto& e) { return e.second == c.id; });
  std::erase_if(h.ahs, [&](const auto& e) {
    if (e.second != c.id) return false;
    n.destroy_ah(e.first);
    return true;
  });
  h.memory.remove_segment(c.address());
  munmap(c.base, proto::kSegmentBytes);
  c.base = nullptr;
  close(c.memfd);
  if (c.async_fd >= 0) close(c.async_fd);
  contexts_.erase(c.id);
  std::erase_if(context_store_, [&](const auto& p) { return p.get() == &c; });
}

void Server::end_session(int fd) {
  auto it = sessions_.find(fd);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  if (s.host != SIZE_MAX) drop_runs(*hosts_[s.host], s.pending_runs);
  std::vector<Context*> mine;
  for (auto& [id, c] : contexts_)
    if (c->session_fd == fd) mine.push_back(c);
  for (Context* c : mine) release_context(*c);
  if (s.host != SIZE_MAX) rdma_cms_[s.host]->session_ended(fd);
  if (s.host != SIZE_MAX) {
    HostState& h = *hosts_[s.host];
    if (--h.sessions == 0) {
      out_ << "rnicsim serve: process " << s.pid << " left host " << h.host->name << '\n';
      h.owner = 0;
      h.memory.set_process(0);
    }
  }
  close(fd);
  sessions_.erase(fd);
}

bool Server::scan_doorbells() {
  const bool noticed = options_.clock == ClockMode::Virtual;
  auto value = [noticed](const auto& live, auto seen) { return noticed ? seen : live.load(std::memory_order_acquire); };
  bool any = false;
  for (auto& hp : hosts_) {
    HostState& h = *hp;
    nic::Nic& n = *h.host->nic;
    for (auto& [qpn, q] : h.qps) {
      const proto::DoorbellRecord& d = contexts_[q.ctx]->doorbell(q.doorbell);
      const uint64_t sq = value(d.sq_producer, q.sq_noticed);
      if (sq != q.sq_seen) {
        q.sq_seen = sq;
        h.memory.forget_reads();  // the program may have filled what it posts
        n.ring_doorbell(nic::QueueKind::Send, nic::Qpn(qpn), sq);
        any = true;
      }
      const uint64_t rq = value(d.rq_producer, q.rq_noticed);
      if (rq != q.rq_seen) {
        q.rq_seen = rq;
        n.ring_doorbell(nic::QueueKind::Recv, nic::Qpn(qpn), rq);
        any = true;
      }
    }
    for (auto& [srqn, q] : h.srqs) {
      const uint64_t p = value(contexts_[q.ctx]->doorbell(q.doorbell).sq_producer, q.noticed);
      if (p != q.seen) {
        q.seen = p;
        n.ring_doorbell(nic::QueueKind::Srq, nic::Qpn(srqn), p);
        any = true;
      }
    }
    for (auto& [cqn, q] : h.cqs) {
      const proto::DoorbellRecord& d = contexts_[q.ctx]->doorbell(q.doorbell);
      const uint32_t seq = value(d.arm_seq, q.arm_noticed);
      if (seq == q.arm_seen) continue;
      q.arm_seen = seq;
      any = true;
      // A CQE written after the program looked raises the event at once; one
      // it saw before it armed does not (it polls that one itself).
      n.arm_cq(cqn, d.arm_solicited.load(std::memory_order_relaxed) != 0,
               d.arm_seen.load(std::memory_order_relaxed));
    }
  }
  if (any) ++doorbells_;
  return any;
}

bool Server::notice_doorbells() {
  bool changed = false;
  auto notice = [&changed](const auto& live, auto& noticed) {
    const auto v = live.load(std::memory_order_acquire);
    changed |= v != noticed;
    noticed = v;
  };
  for (auto& h : hosts_) {
    for (auto& [qpn, q] : h->qps) {
      const proto::DoorbellRecord& d = contexts_[q.ctx]->doorbell(q.doorbell);
      notice(d.sq_producer, q.sq_noticed);
      notice(d.rq_producer, q.rq_noticed);
    }
    for (auto& [srqn, q] : h->srqs) notice(contexts_[q.ctx]->doorbell(q.doorbell).sq_producer, q.noticed);
    for (auto& [cqn, q] : h->cqs) notice(contexts_[q.ctx]->doorbell(q.doorbell).arm_seq, q.arm_noticed);
  }
  return changed;
}

bool Server::take_doorbells() {
  if (options_.clock == ClockMode::Real) return scan_doorbells();
  if (notice_doorbells()) executor_->touch();
  if (executor_->settling()) return false;
  // A thread that still runs (or waits for a CPU) may be about to ring.
  if (executor_->since_acted() < kSettleCap * options_.settle && !programs_asleep()) return false;
  return scan_doorbells();
}

bool Server::programs_asleep() const {
  for (const auto& [fd, s] : sessions_)
    if (!asleep(s.pid)) return false;
  return true;
}

bool Server::settled(HostState& h, uint32_t cqn) {
  nic::Nic& n = *h.host->nic;
  const nic::CqContext* cq = n.cq(cqn);
  if (cq == nullptr) return true;
  if (cq->written != cq->producer) return false;
  for (const auto& [qpn, e] : h.qps) {
    const nic::QpContext* qp = n.qp(qpn);
    if (qp == nullptr || (qp->send_cq != cqn && qp->recv_cq != cqn)) continue;
    if (qp->state == nic::QpState::Reset || qp->state == nic::QpState::Err) continue;
    if (qp->send_cq == cqn && (qp->sq.producer < e.sq_seen || qp->sq.fetched < qp->sq.producer ||
                               !qp->send_entries.empty()))
      return false;
  }
  return true;
}

void Server::answer_settled() {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(settling_, [&](const Settling& w) {
    if (!sessions_.contains(w.fd)) return true;
    if (!settled(*hosts_[w.host], w.cqn) && now < w.deadline) return false;
    proto::MsgHeader reply;
    reply.op = static_cast<uint16_t>(proto::Op::SettleCq);
    if (proto::send_message(w.fd, reply, nullptr, 0) != 0) { /* the session ends at its next read */ }
    return true;
  });
}

void Server::set_sleeping(bool on) {
  for (auto& [id, c] : contexts_) c->header().daemon_sleeping.store(on ? 1 : 0, std::memory_order_seq_cst);
}

int Server::run() {
  struct sigaction sa{};
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  out_ << "rnicsim serve: " << scenario_.hosts.size() << " hosts, socket " << socket_path_ << std::endl;

  using Clock = std::chrono::steady_clock;
  auto last_activity = Clock::now();
  std::vector<pollfd> pfds;
  uint64_t spins = 0;
  auto last_look = Clock::now();
  while (!g_stop) {
    const bool fired = run_simulation();
    const bool rang = take_doorbells();
    if (!settling_.empty()) answer_settled();
    // Busy: an event is due within a few microseconds. Spin without a system
    // call, looking at the sockets only now and then: every 1024 rounds, and at
    // least every kLookEvery of wall time (a round that catches up with the
    // wall clock can take long; a program that died must not wait for 1024).
    const auto round_end = Clock::now();
    if (fired || rang) last_activity = round_end;
    if (++spins % 1024 != 0 && round_end - last_look < kLookEvery) {
      if (executor_->until_next() < kHotWindow) continue;
      // Spinning with nothing due soon: let the programs (which spin too)
      // have the CPU; on a machine with fewer CPUs than spinners that is what
      // moves work. The sockets wait for the next look, a short while.
      if (round_end - last_look < kIdleLookEvery && round_end - last_activity <= options_.spin) {
        if (!fired && !rang) sched_yield();
        continue;
      }
    }
    last_look = round_end;
    // Sockets: a zero-timeout look while busy.
    pfds.clear();
    pfds.push_back({listen_fd_, POLLIN, 0});
    pfds.push_back({wake_fd_, POLLIN, 0});
    pfds.push_back({executor_->inbox_fd(), POLLIN, 0});
    for (const auto& [fd, s] : sessions_) pfds.push_back({fd, POLLIN, 0});
    const auto now = Clock::now();
    const auto next = executor_->until_next();
    int timeout_ms = 0;
    bool sleeping = false;
    if (now - last_activity > options_.spin && next > std::chrono::microseconds(200)) {
      // Idle: arm the wake-up doorbell, look once more, then sleep until a
      // doorbell, a request or the next event.
      set_sleeping(true);
      if (take_doorbells() || executor_->settling()) {
        set_sleeping(false);
        last_activity = Clock::now();
        continue;
      }
      sleeping = true;
      ++sleeps_;
      const auto wait = std::min<Clock::duration>(next, std::chrono::milliseconds(200));
      timeout_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(wait).count());
    }
    const int n = poll(pfds.data(), pfds.size(), timeout_ms);
    // Spinning with nothing to do: let the programs (which spin too) have the
    // CPU; on a machine with fewer CPUs than spinners that is what moves work.
    if (n == 0 && !sleeping && !fired && !rang) sched_yield();
    if (sleeping) set_sleeping(false);
    if (n <= 0) {
      if (idle_too_long()) break;
      continue;
    }
    last_activity = Clock::now();
    if (pfds[1].revents & POLLIN) {
      uint64_t v;
      if (read(wake_fd_, &v, sizeof v) < 0) { /* drained by another read */ }
    }
    if (pfds[0].revents & POLLIN) accept_client();
    std::vector<int> gone;
    for (size_t i = 3; i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      auto it = sessions_.find(pfds[i].fd);
      if (it == sessions_.end()) continue;
      // Requests are served at the simulated present, after the doorbells
      // the program rang before it asked.
      run_simulation();
      executor_->touch();
      if (options_.clock == ClockMode::Virtual) notice_doorbells();
      scan_doorbells();
      if (!handle(it->second)) gone.push_back(pfds[i].fd);
    }
    for (int fd : gone) end_session(fd);
    if (idle_too_long()) break;
  }
  if (tap_) tap_->flush();
  if (mover_) mover_->drain();  // its system calls are counted below
  uint64_t tx = 0, rx = 0, retx = 0, memory_calls = 0, failed_calls = 0, shared = 0;
  if (mover_) {
    memory_calls += mover_->system_calls();
    failed_calls += mover_->failed_calls();
  }
  for (const auto& h : hosts_) {
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
       << " requests, " << doorbells_ << " doorbell scans with work, " << sleeps_ << " sleeps; ";
  executor_->summarize(out_);
  out_ << std::endl;
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
  return 0;
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
