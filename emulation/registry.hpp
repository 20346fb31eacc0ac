// The daemon's objects: the contexts programs opened and, per host, the PDs,
// MRs, CQs, QPs, SRQs and AHs made on the host's NIC, each owned by one context.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "emulation/process_spaces.hpp"
#include "emulation/ring_space.hpp"
#include "scenario/world.hpp"
#include "verbs_shim/protocol.hpp"

namespace rnicsim::emulation {

inline constexpr uint32_t kMaxQueueEntries = 32768;

// One context: its segment (rings and doorbell records) shared with the program.
struct Context {
  uint32_t id = 0;
  size_t host = 0;
  size_t slot = 0;  // its process's address space on the host (ProcessSpaces)
  int session_fd = -1;
  int memfd = -1;
  int async_fd = -1;
  std::byte* base = nullptr;
  RingSpace rings{verbs_proto::kRingsOffset, verbs_proto::kSegmentBytes};
  std::vector<bool> doorbell_used = std::vector<bool>(verbs_proto::kDoorbellRecords);
  uint64_t address() const { return ProcessHostMemory::segment_address(id); }
  verbs_proto::SegmentHeader& header() const { return *reinterpret_cast<verbs_proto::SegmentHeader*>(base); }
  verbs_proto::DoorbellRecord& doorbell(uint32_t i) const {
    return reinterpret_cast<verbs_proto::DoorbellRecord*>(base + verbs_proto::kDoorbellOffset)[i];
  }
  // A free doorbell record, zeroed (-1: none left).
  int take_doorbell();
};

// Each queue remembers where its rings are (offsets in the context's segment).
struct CqEntry {
  uint32_t ctx = 0, doorbell = 0, cookie = 0;
  int channel_fd = -1;
  uint32_t arm_seen = 0;
  uint32_t arm_noticed = 0;  // virtual clock: see DoorbellScanner::take
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

// The context an object belongs to: the PD and AH maps hold it, the others an entry with it.
inline uint32_t owner(uint32_t ctx) { return ctx; }
template <class Entry>
uint32_t owner(const Entry& e) {
  return e.ctx;
}
// Object `id` of `objects` if it exists and belongs to context `ctx`, else
// null: a request may name only objects of the context it names (as in the
// verbs, where another context's PD, CQ or SRQ is invalid).
template <class Map>
auto* owned(Map& objects, uint32_t id, uint32_t ctx) {
  auto it = objects.find(id);
  return it != objects.end() && owner(it->second) == ctx ? &it->second : nullptr;
}
template <class Map>
bool owned_by(const Map& objects, uint32_t id, uint32_t ctx) {
  return owned(objects, id, ctx) != nullptr;
}

using Contexts = std::map<uint32_t, Context*>;

// One host of the scenario and what processes created on its NIC.
struct HostState : nic::CompletionListener, nic::AsyncEventListener, nic::RecvDoorbellRecords {
  scenario::Host* host = nullptr;
  size_t index = 0;
  ProcessSpaces memory;
  std::unordered_map<uint32_t, uint32_t> pds;  // PD -> context
  std::unordered_map<uint32_t, MrEntry> mrs;   // lkey
  std::unordered_map<uint32_t, CqEntry> cqs;
  std::unordered_map<uint32_t, QpEntry> qps;
  std::unordered_map<uint32_t, SrqEntry> srqs;
  std::unordered_map<uint32_t, uint32_t> ahs;  // AH index -> context
  const Contexts* contexts = nullptr;

  void on_completion(nic::Cqn) override {}
  // What the program's ibv_poll_cq published in the CQ's doorbell record.
  std::optional<uint64_t> consumer_index(nic::Cqn cqn) const override;
  void on_event(nic::Cqn cqn) override;
  void on_async_event(nic::AsyncEvent event, nic::AsyncObject about) override;
  // What the program's ibv_post_recv / ibv_post_srq_recv published, taken as
  // rung (the doorbell scanner rings each value once).
  std::optional<uint64_t> recv_producer(nic::WorkQueue queue) override;
  // Doorbell record `doorbell` of context `ctx`; nullptr once the context is gone.
  const verbs_proto::DoorbellRecord* record(uint32_t ctx, uint32_t doorbell) const;
};

class Registry {
public:
  explicit Registry(size_t hosts);
  // The hosts' memories, for the world that is built after the registry.
  scenario::World::MemoryFor memory_for();
  std::vector<std::unique_ptr<HostState>>& hosts() { return hosts_; }
  const std::vector<std::unique_ptr<HostState>>& hosts() const { return hosts_; }
  HostState& state(const Context& c) { return *hosts_[c.host]; }
  nic::Nic& nic(const Context& c) { return *hosts_[c.host]->host->nic; }
  const Contexts& contexts() const { return contexts_; }
  Context& context(uint32_t id) const { return *contexts_.at(id); }

  // Context `ctx` if session `session_fd` opened it, else null.
  Context* context_of(int session_fd, uint32_t ctx) const;
  // A new context of a session on `host` (its segment mapped and added to the
  // process's space); 0 or an errno.
  int open_context(int session_fd, size_t host, size_t slot, int async_fd, Context*& out);
  // Destroys everything the context owns, then the context.
  void release_context(Context& c);
  void release_session(int session_fd);
  void release_all();
  void destroy_qp(HostState& h, uint32_t qpn);
  // Space for a ring in the context's segment (0: none left), and giving it
  // back when its queue goes (see RingSpace).
  uint64_t take_ring(Context& c, uint64_t bytes);
  void give_back(Context& c, uint64_t ring);
  // Unmaps the runs of a registration.
  static void drop_runs(ProcessHostMemory& space, std::vector<std::byte*>& runs);

private:
  void release_mrs(HostState& h, const Context& c);
  std::vector<std::unique_ptr<HostState>> hosts_;
  Contexts contexts_;
  std::vector<std::unique_ptr<Context>> store_;
  uint32_t next_context_ = 1;
};

}  // namespace rnicsim::emulation
