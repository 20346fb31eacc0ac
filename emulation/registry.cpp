#include "emulation/registry.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace rnicsim::emulation {
namespace proto = verbs_proto;

int Context::take_doorbell() {
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

const proto::DoorbellRecord* HostState::record(uint32_t ctx, uint32_t doorbell) const {
  auto c = contexts->find(ctx);
  return c == contexts->end() ? nullptr : &c->second->doorbell(doorbell);
}

std::optional<uint64_t> HostState::consumer_index(nic::Cqn cqn) const {
  auto it = cqs.find(cqn.value());
  const proto::DoorbellRecord* d = it == cqs.end() ? nullptr : record(it->second.ctx, it->second.doorbell);
  if (d == nullptr) return std::nullopt;
  return d->cq_consumer.load(std::memory_order_acquire);
}

std::optional<uint64_t> HostState::recv_producer(nic::WorkQueue queue) {
  if (queue.is_srq()) {
    auto it = srqs.find(queue.srqn().value());
    const proto::DoorbellRecord* d = it == srqs.end() ? nullptr : record(it->second.ctx, it->second.doorbell);
    if (d == nullptr) return std::nullopt;
    return it->second.seen = d->sq_producer.load(std::memory_order_acquire);
  }
  auto it = qps.find(queue.qpn().value());
  const proto::DoorbellRecord* d = it == qps.end() ? nullptr : record(it->second.ctx, it->second.doorbell);
  if (d == nullptr) return std::nullopt;
  return it->second.rq_seen = d->rq_producer.load(std::memory_order_acquire);
}

void HostState::on_event(nic::Cqn cqn) {
  auto it = cqs.find(cqn.value());
  if (it == cqs.end() || it->second.channel_fd < 0) return;
  const uint32_t cookie = it->second.cookie;
  if (write(it->second.channel_fd, &cookie, sizeof cookie) < 0) { /* the program is gone or not reading */ }
}

void HostState::on_async_event(nic::AsyncEvent event, nic::AsyncObject about) {
  const uint32_t id = nic::number_of(about);  // the tables and the wire keep raw numbers
  uint32_t ctx = 0;  // no context has id 0: an object not in the tables gets no event
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

Registry::Registry(size_t hosts) {
  for (size_t i = 0; i < hosts; ++i) {
    hosts_.push_back(std::make_unique<HostState>());
    hosts_.back()->index = i;
    hosts_.back()->contexts = &contexts_;
  }
}

scenario::World::MemoryFor Registry::memory_for() {
  return [this](size_t i) -> nic::HostMemory& { return hosts_[i]->memory; };
}

Context* Registry::context_of(int session_fd, uint32_t ctx) const {
  auto it = contexts_.find(ctx);
  if (it == contexts_.end() || it->second->session_fd != session_fd) return nullptr;
  return it->second;
}

int Registry::open_context(int session_fd, size_t host, size_t slot, int async_fd, Context*& out) {
  if (next_context_ > 0xFFFF) return ENOMEM;
  auto c = std::make_unique<Context>();
  c->id = next_context_++;
  c->host = host;
  c->slot = slot;
  c->session_fd = session_fd;
  c->async_fd = async_fd;
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
  h.cpus_contended.store(0);
  state(*c).memory.add_segment(c->slot, c->address(), c->base, proto::kSegmentBytes);
  out = c.get();
  contexts_[c->id] = c.get();
  store_.push_back(std::move(c));
  return 0;
}

void Registry::release_mrs(HostState& h, const Context& c) {
  nic::Nic& n = *h.host->nic;
  for (auto it = h.mrs.begin(); it != h.mrs.end();) {
    if (it->second.ctx != c.id) {
      ++it;
      continue;
    }
    n.translation().remove(nic::Lkey(it->first));
    h.memory.space(c.slot).remove_region(it->second.addr, it->second.length, it->second.access);
    drop_runs(h.memory.space(c.slot), it->second.runs);
    it = h.mrs.erase(it);
  }
}

void Registry::release_context(Context& c) {
  if (c.base == nullptr) return;
  HostState& h = *hosts_[c.host];
  nic::Nic& n = *h.host->nic;
  std::vector<uint32_t> qps;
  for (const auto& [qpn, qp] : h.qps)
    if (qp.ctx == c.id) qps.push_back(qpn);
  for (uint32_t qpn : qps) destroy_qp(h, qpn);
  std::erase_if(h.srqs, [&](const auto& e) {
    if (e.second.ctx != c.id) return false;
    n.destroy_srq(nic::Srqn(e.first));
    return true;
  });
  std::erase_if(h.cqs, [&](const auto& e) {
    if (e.second.ctx != c.id) return false;
    if (e.second.channel_fd >= 0) close(e.second.channel_fd);
    n.destroy_cq(nic::Cqn(e.first));
    return true;
  });
  release_mrs(h, c);
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
  std::erase_if(store_, [&](const auto& p) { return p.get() == &c; });
}

void Registry::release_session(int session_fd) {
  std::vector<Context*> mine;
  for (auto& [id, c] : contexts_)
    if (c->session_fd == session_fd) mine.push_back(c);
  for (Context* c : mine) release_context(*c);
}

void Registry::release_all() {
  // release_context() takes the context out of store_ (a loop over the vector
  // would skip every other one, leaking its memfd and mapping).
  while (!store_.empty()) {
    Context& c = *store_.back();
    if (c.base == nullptr) {
      store_.pop_back();
      continue;
    }
    release_context(c);
  }
}

void Registry::destroy_qp(HostState& h, uint32_t qpn) {
  auto it = h.qps.find(qpn);
  if (it == h.qps.end()) return;
  // Out of the table first: the QP raises no async event from here on (a
  // destroy is a move to Reset, which raises none; the program's objects for
  // it are going).
  const QpEntry entry = it->second;
  h.qps.erase(it);
  nic::Nic& n = *h.host->nic;
  // Into ERR first: outstanding work is flushed and timers stop.
  nic::QpAttr a;
  a.state = nic::QpState::Err;
  n.modify_qp(nic::Qpn(qpn), a, nic::kQpState);
  n.destroy_qp(nic::Qpn(qpn));
  Context& c = *contexts_[entry.ctx];
  c.doorbell_used[entry.doorbell] = false;
  give_back(c, entry.sq);
  give_back(c, entry.rq);
}

uint64_t Registry::take_ring(Context& c, uint64_t bytes) {
  c.rings.reclaim(nic(c).dma().writes_done(), [&](uint64_t at, uint64_t n) {
    // Its pages go back to the system, and the next ring there starts zeroed
    // (no stale CQE the program could take for a new one).
    if (fallocate(c.memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at),
                  static_cast<off_t>(n)) != 0)
      std::memset(c.base + at, 0, n);
  });
  return c.rings.allocate(bytes);
}

void Registry::give_back(Context& c, uint64_t ring) { c.rings.release(ring, nic(c).dma().writes()); }

void Registry::drop_runs(ProcessHostMemory& space, std::vector<std::byte*>& runs) {
  for (std::byte* p : runs) space.remove_run(p);
  runs.clear();
}

}  // namespace rnicsim::emulation
