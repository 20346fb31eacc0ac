#include "nic_model/dma_engine.hpp"

#include <cstring>
#include <stdexcept>

namespace rnicsim::nic {

DmaEngine::DmaEngine(sim::Simulator& sim, PcieLink& pcie, HostMemory& memory)
    : sim_(sim),
      pcie_(pcie),
      memory_(memory),
      read_event_([this] { on_read_done(); }, "dma.read_done"),
      write_event_([this] { on_write_done(); }, "dma.write_done") {}

void DmaEngine::read(uint64_t addr, std::span<std::byte> dst, DmaClient* client, uint64_t tag) {
  Request r;
  r.done = pcie_.read(sim_.now(), dst.size());
  r.addr = addr;
  r.read_dst = dst;
  r.client = client;
  r.tag = tag;
  read_q_.push_back(std::move(r));
  ++reads_;
  if (!read_event_.scheduled()) sim_.scheduler().schedule(read_event_, read_q_.front().done);
}

void DmaEngine::write(uint64_t addr, std::span<const std::byte> src, fabric::Frame&& holder, DmaClient* client,
                      uint64_t tag) {
  Request r;
  r.done = pcie_.write(sim_.now(), src.size());
  r.addr = addr;
  r.write_src = src;
  r.holder = std::move(holder);
  r.client = client;
  r.tag = tag;
  write_q_.push_back(std::move(r));
  ++writes_;
  if (!write_event_.scheduled()) sim_.scheduler().schedule(write_event_, write_q_.front().done);
}

void DmaEngine::write_small(uint64_t addr, std::span<const std::byte> src, DmaClient* client, uint64_t tag) {
  if (src.size() > 64) throw std::length_error("write_small takes at most 64 bytes");
  Request r;
  r.done = pcie_.write(sim_.now(), src.size());
  r.addr = addr;
  std::memcpy(r.small.data(), src.data(), src.size());
  r.write_src = std::span<const std::byte>(r.small.data(), src.size());
  r.use_small = true;
  r.client = client;
  r.tag = tag;
  write_q_.push_back(std::move(r));
  ++writes_;
  if (!write_event_.scheduled()) sim_.scheduler().schedule(write_event_, write_q_.front().done);
}

void DmaEngine::on_read_done() {
  Request r = read_q_.pop_front();
  if (!read_q_.empty()) sim_.scheduler().schedule(read_event_, read_q_.front().done);
  const bool ok = memory_.read(r.addr, r.read_dst);
  if (r.client != nullptr) r.client->dma_done(r.tag, ok);
}

void DmaEngine::on_write_done() {
  Request r = write_q_.pop_front();
  if (!write_q_.empty()) sim_.scheduler().schedule(write_event_, write_q_.front().done);
  // The small buffer moved with the request: point at the moved copy.
  const std::span<const std::byte> src =
      r.use_small ? std::span<const std::byte>(r.small.data(), r.write_src.size()) : r.write_src;
  const bool ok = memory_.write(r.addr, src);
  if (r.client != nullptr) r.client->dma_done(r.tag, ok);
}

}  // namespace rnicsim::nic
