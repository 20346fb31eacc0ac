// The sending side of PFC (802.1Qbb) at one port: whoever buffers what arrives on
// the port (a switch's ingress accounting, a NIC's receive buffer) says, per
// priority, whether it is congested; this block turns that into pause frames on
// the port's egress, ahead of data. XOFF sends `quanta` for the priority and
// refreshes the pause before it runs out (after `refresh` of its time); XON, when
// the buffer drained, sends quanta 0 at once. One frame carries every priority
// that changes or refreshes at that moment.
#pragma once

#include <array>
#include <cstdint>

#include "fabric/frame.hpp"
#include "fabric/port.hpp"
#include "packet/pfc.hpp"
#include "sim/scheduler.hpp"
#include "sim/simulator.hpp"

namespace rnicsim::fabric {

struct PfcParams {
  uint8_t priorities = 0;        // bit p: priority p is lossless (PFC on)
  uint16_t quanta = 0xFFFF;      // pause quanta sent with XOFF
  // A pause is refreshed when this share of its time has passed (so it never
  // runs out while the buffer stays congested).
  double refresh = 0.5;
  // Thresholds on the bytes buffered per ingress port and priority. Static
  // (xoff_bytes > 0): XOFF above xoff_bytes, XON at or below xon_bytes.
  // Dynamic (xoff_bytes == 0): XOFF above alpha x the free shared buffer, XON
  // at or below that minus xon_offset_bytes.
  uint64_t xoff_bytes = 0;
  uint64_t xon_bytes = 0;
  double alpha = 0.125;
  uint64_t xon_offset_bytes = 2 * 1024;
  // Room kept per ingress port and lossless priority for what arrives after
  // XOFF; 0 = derived from the link (default_headroom).
  uint64_t headroom_bytes = 0;
  bool enabled() const { return priorities != 0; }
  bool lossless(uint8_t p) const { return (priorities >> p) & 1; }
};

// The headroom for a link, from its full delay budget as the mlx5 driver
// reserves it (port_buffer.c, calculate_xoff): per Gb/s of line rate, the
// pause-response time (the link's pfc_response_delay: MAC/PHY and upper layer at
// both ends, 2.408 us = 301 bytes per Gb/s by default), 2.16 bytes per metre of
// cable (the propagation delay at 5 ns/m) and 2.72 Ethernet MTUs for the frames
// in flight at both ends. 100 Gb/s, 7 m, MTU 1500: 35 680 bytes.
uint64_t default_headroom(const PortParams& link, uint32_t eth_mtu);
// The headroom a port keeps: pfc.headroom_bytes as set, else default_headroom.
inline uint64_t headroom_for(const PfcParams& pfc, const PortParams& link, uint32_t eth_mtu) {
  return pfc.headroom_bytes > 0 ? pfc.headroom_bytes : default_headroom(link, eth_mtu);
}

struct PfcSendCounters {
  std::array<uint64_t, 8> xoff{}, xon{}, refresh{};
  uint64_t frames = 0;
};

class PfcGenerator {
public:
  PfcGenerator(sim::Simulator& sim, FramePool& pool, Port& port, const packet::MacAddr& mac, const PfcParams& params);
  PfcGenerator(const PfcGenerator&) = delete;
  PfcGenerator& operator=(const PfcGenerator&) = delete;

  // The buffer behind this port is (or is no longer) congested on `priority`.
  void set_congested(uint8_t priority, bool congested);
  bool xoff(uint8_t priority) const { return (xoff_mask_ >> priority) & 1; }
  const PfcSendCounters& counters() const { return counters_; }

private:
  void send(uint8_t enable, uint8_t xon_mask);
  void on_refresh();
  sim::Simulator& sim_;
  FramePool& pool_;
  Port& port_;
  packet::MacAddr mac_;
  PfcParams params_;
  sim::Duration refresh_after_;
  uint8_t xoff_mask_ = 0;
  sim::Event refresh_;
  PfcSendCounters counters_;
};

}  // namespace rnicsim::fabric
