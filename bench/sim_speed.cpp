// sim_speed: simulated packets per wall second, rnicsim beside ns-3, in one run:
// two hosts on one 100 Gb/s link with 1 us delay, an RDMA WRITE stream of
// 1 MiB messages in 4 KiB packets (ns-3: UdpClient -> UdpServer, the same
// packets). The ratio is rnicsim / ns-3 in data packets per wall second. It
// fails if a run does not move every packet or the data check fails; never on
// timing.
//
//   sim_speed [--packets N] [--rounds R] [--smoke]

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bench/ns3_p2p.hpp"
#include "scenario/runner.hpp"

namespace {

constexpr std::uint32_t kPayloadBytes = 4096;          // RoCE MTU / UDP payload
constexpr std::uint64_t kMessageBytes = 1024 * 1024;   // one RDMA WRITE
constexpr std::uint64_t kPacketsPerMessage = kMessageBytes / kPayloadBytes;
constexpr std::uint64_t kDefaultPackets = 1048576;
constexpr std::uint64_t kSmokePackets = 20480;
constexpr std::uint64_t kMaxPackets = 0xffffffffULL;   // ns-3 UdpClient's MaxPackets is 32-bit
constexpr unsigned kDefaultRounds = 3;
constexpr unsigned kMaxRounds = 100;

struct Options {
  std::uint64_t packets = kDefaultPackets;
  unsigned rounds = kDefaultRounds;
  bool smoke = false;
};

struct RnicsimResult {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  std::uint64_t data_packets = 0;   // request packets, retransmissions included
  std::uint64_t total_packets = 0;  // every frame on the wire, ACKs included
  std::uint64_t retransmissions = 0;
  std::uint64_t drops = 0;
  bool completed = false;
  std::string failure;
  std::uint64_t events = 0;
  std::uint64_t writes_dropped = 0;  // payload DMA writes written over before anybody looked
  bool data_verified = false;        // the receiver's buffer matched the sender's at the end
  double sim_seconds = 0;
  double run_seconds = 0;   // the runner's own wall time
  double wall_seconds = 0;  // around run_text: parse, build, run, tear down
  double cpu_seconds = 0;   // process CPU time over the same span
};

// CPU time of this process. Beside wall time it shows how much of a run was
// lost to other load on the machine (the program itself is single-threaded).
double cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: sim_speed [--packets N] [--rounds R] [--smoke]\n"
               "  --packets N  data packets per simulator (default %llu; rounded up to\n"
               "               whole 1 MiB messages of %llu packets)\n"
               "  --rounds R   alternating rounds; each side counts its fastest (default %u)\n"
               "  --smoke      short run (%llu packets, one round) that checks both sides, for CI\n",
               static_cast<unsigned long long>(kDefaultPackets),
               static_cast<unsigned long long>(kPacketsPerMessage), kDefaultRounds,
               static_cast<unsigned long long>(kSmokePackets));
}

// The value of option `name`: an integer in [1, max], or nothing (and a message).
std::optional<unsigned long long> count_argument(const char* name, const char* value, unsigned long long max) {
  char* end = nullptr;
  const unsigned long long n = std::strtoull(value, &end, 10);
  if (*value == '\0' || *end != '\0' || n == 0 || n > max) {
    std::fprintf(stderr, "sim_speed: %s wants an integer in [1, %llu], got '%s'\n", name, max, value);
    return std::nullopt;
  }
  return n;
}

std::optional<Options> parse_args(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--smoke") {
      options.smoke = true;
      options.packets = kSmokePackets;
      options.rounds = 1;
    } else if (arg == "--rounds" && i + 1 < argc) {
      const auto n = count_argument("--rounds", argv[++i], kMaxRounds);
      if (!n) return std::nullopt;
      options.rounds = static_cast<unsigned>(*n);
    } else if (arg == "--packets" && i + 1 < argc) {
      const auto n = count_argument("--packets", argv[++i], kMaxPackets);
      if (!n) return std::nullopt;
      options.packets = *n;
    } else if (arg == "--help" || arg == "-h") {
      usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "sim_speed: unknown argument '%s'\n", argv[i]);
      usage(stderr);
      return std::nullopt;
    }
  }
  return options;
}

// The three ways rnicsim runs the stream. Deferred, the figure: full payload
// bytes (ns-3's packets carry none), read from the sender's memory, the
// receiver's buffer checked at the end; a received payload is written when
// somebody looks at it, so one that the next message writes over first is never
// copied (the program prints how many). Copied: every payload written as it
// lands. SizeOnly: no bytes, as ns-3.
enum class Payload { Deferred, Copied, SizeOnly };

std::string stream_scenario(std::uint64_t messages, bool size_only) {
  return std::string("name: sim_speed\n") + (size_only ? "payload: size_only\n" : "") +
         "seed: 1\n"
         "link_layer: roce_v2\n"
         "hosts: [{name: a}, {name: b}]\n"
         "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\n"
         "nic: {mtu: 4096}\n"
         "workloads:\n"
         "  - {name: stream, op: write, pattern: bw, from: a, to: b, size: 1MiB, count: " +
         std::to_string(messages) + ", tx_depth: 16}\n";
}

RnicsimResult run_rnicsim_stream(std::uint64_t messages, Payload payload) {
  namespace sc = rnicsim::scenario;
  sc::RunOptions options;
  options.quiet = true;
  options.defer_writes = payload != Payload::Copied;
  const std::string text = stream_scenario(messages, payload == Payload::SizeOnly);

  const double cpu_start = cpu_now();
  const auto start = std::chrono::steady_clock::now();
  const sc::Summary summary = sc::run_text(text, "sim_speed.yaml", options);
  const auto stop = std::chrono::steady_clock::now();
  const double cpu_stop = cpu_now();

  RnicsimResult result;
  result.messages = summary.messages;
  result.bytes = summary.bytes;
  result.data_packets = summary.data_packets;
  result.total_packets = summary.packets;
  result.retransmissions = summary.retransmissions;
  result.drops = summary.drops;
  result.completed = summary.completed;
  result.writes_dropped = summary.payload_writes_dropped;
  result.data_verified = !summary.workloads.empty();
  for (const sc::WorkloadSummary& w : summary.workloads) {
    result.data_verified = result.data_verified && w.data_checked && w.data_verified;
    if (!w.failure.empty()) result.failure += (result.failure.empty() ? "" : "; ") + w.name + ": " + w.failure;
  }
  result.events = summary.events;
  result.sim_seconds = summary.sim_seconds;
  result.run_seconds = summary.wall_seconds;
  result.wall_seconds = std::chrono::duration<double>(stop - start).count();
  result.cpu_seconds = cpu_stop - cpu_start;
  return result;
}

// The least any simulator that carries full payload bytes must do for this stream:
// per packet, one copy of the payload from the sender's memory into a frame (the
// NIC's DMA read) and one from the frame into the receiver's memory (the DMA
// write), over buffers the size the run uses (1 MiB messages, 32 frames in flight).
// Returns the wall seconds for `packets` packets.
double payload_copy_floor(std::uint64_t packets) {
  constexpr std::size_t kMessage = 1 << 20, kFrames = 32, kFrameBytes = kPayloadBytes + 128;
  std::vector<unsigned char> src(kMessage), dst(kMessage), frames(kFrames * kFrameBytes);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t p = 0; p < packets; ++p) {
    const std::size_t off = (p % (kMessage / kPayloadBytes)) * kPayloadBytes;
    unsigned char* frame = frames.data() + (p % kFrames) * kFrameBytes + 58;  // after the headers
    std::memcpy(frame, src.data() + off, kPayloadBytes);
    std::memcpy(dst.data() + off, frame, kPayloadBytes);
    asm volatile("" : : "r"(dst.data()) : "memory");  // the copies are observable
  }
  const auto stop = std::chrono::steady_clock::now();
  if (std::memcmp(src.data(), dst.data(), kMessage) != 0) std::fprintf(stderr, "sim_speed: copy check failed\n");
  return std::chrono::duration<double>(stop - start).count();
}

double per_second(std::uint64_t count, double seconds) {
  return seconds > 0 ? static_cast<double>(count) / seconds : 0.0;
}

// Every round is printed and checked: ns-3 and the three rnicsim runs, each
// timed around its whole simulation (set-up, run, tear-down). Each side's
// figure is its fastest round, so that a slow spell of a shared machine does
// not fall on one side only.
struct Round {
  rnicsim::bench::Ns3Result ns3;
  double ns3_cpu_seconds = 0;
  RnicsimResult rn, copied, size_only;
};

// Runs ns-3 and the three rnicsim variants `count` times, printing each round;
// nullopt if a rnicsim scenario failed.
std::optional<std::vector<Round>> run_rounds(unsigned count, std::uint64_t packets, std::uint64_t messages) {
  std::vector<Round> rounds;
  for (unsigned i = 1; i <= count; ++i) {
    Round& round = rounds.emplace_back();
    const double ns3_cpu_start = cpu_now();
    round.ns3 = rnicsim::bench::run_ns3_p2p(packets, kPayloadBytes);
    round.ns3_cpu_seconds = cpu_now() - ns3_cpu_start;
    try {
      round.rn = run_rnicsim_stream(messages, Payload::Deferred);
      round.copied = run_rnicsim_stream(messages, Payload::Copied);
      round.size_only = run_rnicsim_stream(messages, Payload::SizeOnly);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sim_speed: rnicsim scenario failed: %s\n", e.what());
      return std::nullopt;
    }
    const double n = round.ns3.wall_seconds, r = round.rn.wall_seconds, c = round.copied.wall_seconds,
                 so = round.size_only.wall_seconds;
    std::printf("round %u: ns-3 wall %.3f s, rnicsim wall %.3f s (ratio %.2fx), copied at once %.3f s (%.2fx), "
                "size-only %.3f s (%.2fx)\n",
                i, n, r, r > 0 ? n / r : 0.0, c, c > 0 ? n / c : 0.0, so, so > 0 ? n / so : 0.0);
    std::fflush(stdout);
  }
  return rounds;
}

// What the payload costs: lent, copied as it lands, none at all, and the
// floor of copying it twice.
void report_payload(const RnicsimResult& rn, const RnicsimResult& rn_copied, const RnicsimResult& rn_size_only,
                    double ns3_rate, std::uint64_t packets) {
  std::printf("rnicsim payload: real bytes, each frame's lent by the sender's memory; %llu of %llu DMA writes into "
              "the receiver's buffer written over by the next message before anybody looked, never copied; the "
              "buffer %s the sender's at the end\n",
              static_cast<unsigned long long>(rn.writes_dropped), static_cast<unsigned long long>(rn.data_packets),
              rn.data_verified ? "matched" : "did NOT match");
  const double copied_rate = per_second(rn_copied.data_packets, rn_copied.wall_seconds);
  std::printf("rnicsim with every payload copied as it lands: %.0f packets/s, wall %.3f s; ratio %.2fx ns-3\n",
              copied_rate, rn_copied.wall_seconds, ns3_rate > 0 ? copied_rate / ns3_rate : 0.0);
  const double so_rate = per_second(rn_size_only.data_packets, rn_size_only.wall_seconds);
  std::printf("rnicsim size-only (no payload bytes, as ns-3): %.0f packets/s, wall %.3f s; ratio %.2fx ns-3\n",
              so_rate, rn_size_only.wall_seconds, ns3_rate > 0 ? so_rate / ns3_rate : 0.0);
  // What copying every payload twice costs, measured now: the limit of a
  // simulator that moves each packet's bytes into a frame and out again.
  const double floor_seconds = payload_copy_floor(packets);
  const double floor_rate = per_second(packets, floor_seconds);
  std::printf("payload copies alone (2 x %u B memcpy per packet): %.1f ns/packet, %.0f packets/s = %.1fx ns-3; "
              "rnicsim spends %.1f ns/packet (%.1f with every payload copied as it lands)\n",
              kPayloadBytes, floor_seconds * 1e9 / static_cast<double>(packets), floor_rate,
              ns3_rate > 0 ? floor_rate / ns3_rate : 0.0, rn.wall_seconds * 1e9 / static_cast<double>(rn.data_packets),
              rn_copied.wall_seconds * 1e9 / static_cast<double>(std::max<std::uint64_t>(rn_copied.data_packets, 1)));

}

// The fastest round of each side, its rates and the ratios.
void report(const std::vector<Round>& rounds, unsigned count, std::uint64_t packets) {
  auto fastest = [&](auto wall) -> const Round& {
    return *std::min_element(rounds.begin(), rounds.end(),
                             [&](const Round& a, const Round& b) { return wall(a) < wall(b); });
  };
  const Round& ns3_round = fastest([](const Round& r) { return r.ns3.wall_seconds; });
  const rnicsim::bench::Ns3Result& ns3 = ns3_round.ns3;
  const double ns3_cpu_seconds = ns3_round.ns3_cpu_seconds;
  const RnicsimResult& rn = fastest([](const Round& r) { return r.rn.wall_seconds; }).rn;
  const RnicsimResult& rn_copied = fastest([](const Round& r) { return r.copied.wall_seconds; }).copied;
  const RnicsimResult& rn_size_only = fastest([](const Round& r) { return r.size_only.wall_seconds; }).size_only;
  if (count > 1) std::printf("fastest of %u rounds, each side:\n", count);

  const double ns3_rate = per_second(ns3.packets_received, ns3.wall_seconds);
  const double rn_rate = per_second(rn.data_packets, rn.wall_seconds);
  const double rn_total_rate = per_second(rn.total_packets, rn.wall_seconds);
  const double ns3_gbps =
      ns3.sim_seconds > 0 ? ns3.packets_received * ns3.wire_bytes * 8.0 / ns3.sim_seconds / 1e9 : 0.0;
  const double rn_gbps = rn.sim_seconds > 0 ? rn.bytes * 8.0 / rn.sim_seconds / 1e9 : 0.0;

  std::printf("ns-3 %s packets/s: %.0f (%llu received of %llu sent, %.6f s simulated, "
              "%.1f Gb/s on the wire)\n",
              ns3.version.c_str(), ns3_rate, static_cast<unsigned long long>(ns3.packets_received),
              static_cast<unsigned long long>(ns3.packets_sent), ns3.sim_seconds, ns3_gbps);
  std::printf("rnicsim packets/s: %.0f data, %.0f total incl. ACKs (%llu data, %llu total, "
              "%llu retransmitted, %llu dropped, %.6f s simulated, %.1f Gb/s payload)\n",
              rn_rate, rn_total_rate, static_cast<unsigned long long>(rn.data_packets),
              static_cast<unsigned long long>(rn.total_packets),
              static_cast<unsigned long long>(rn.retransmissions),
              static_cast<unsigned long long>(rn.drops), rn.sim_seconds, rn_gbps);
  std::printf("ns-3 wall: %.3f s (run %.3f s, CPU %.3f s)\n", ns3.wall_seconds, ns3.run_seconds,
              ns3_cpu_seconds);
  std::printf("rnicsim wall: %.3f s (run %.3f s, CPU %.3f s, %llu events)\n", rn.wall_seconds,
              rn.run_seconds, rn.cpu_seconds, static_cast<unsigned long long>(rn.events));
  std::printf("CPU-time ratio: %.2fx\n",
              ns3.packets_received > 0 && rn.cpu_seconds > 0
                  ? per_second(rn.data_packets, rn.cpu_seconds) /
                        per_second(ns3.packets_received, ns3_cpu_seconds)
                  : 0.0);
  std::printf("ratio rnicsim/ns-3: %.2fx\n", ns3_rate > 0 ? rn_rate / ns3_rate : 0.0);
  report_payload(rn, rn_copied, rn_size_only, ns3_rate, packets);
}

// Whether every side of round `round` moved what it should, with the same events.
bool check_round(size_t round, const Round& rd, std::uint64_t packets, std::uint64_t messages) {
  bool ok = true;
  const rnicsim::bench::Ns3Result& n = rd.ns3;
  const RnicsimResult& r = rd.rn;
  const RnicsimResult& so = rd.size_only;
  const RnicsimResult& c = rd.copied;
  if (n.packets_received != packets || n.packets_sent != packets || n.packets_lost != 0) {
    std::fprintf(stderr, "sim_speed: round %zu: ns-3 moved %llu of %llu packets (%llu sent, %llu lost)\n", round,
                 static_cast<unsigned long long>(n.packets_received),
                 static_cast<unsigned long long>(packets),
                 static_cast<unsigned long long>(n.packets_sent),
                 static_cast<unsigned long long>(n.packets_lost));
    ok = false;
  }
  if (c.data_packets != r.data_packets || c.events != r.events || !c.data_verified || !r.data_verified ||
      c.writes_dropped != 0) {
    std::fprintf(stderr,
                 "sim_speed: round %zu: copied-at-once run differs (%llu data packets, %llu events, %llu writes "
                 "dropped) or a data check failed (deferred %s, copied %s)\n",
                 round, static_cast<unsigned long long>(c.data_packets), static_cast<unsigned long long>(c.events),
                 static_cast<unsigned long long>(c.writes_dropped), r.data_verified ? "ok" : "FAILED",
                 c.data_verified ? "ok" : "FAILED");
    ok = false;
  }
  if (so.data_packets != r.data_packets || so.events != r.events) {
    std::fprintf(stderr, "sim_speed: round %zu: size-only run differs: %llu data packets, %llu events\n", round,
                 static_cast<unsigned long long>(so.data_packets),
                 static_cast<unsigned long long>(so.events));
    ok = false;
  }
  if (!r.completed || r.messages != messages || r.bytes != messages * kMessageBytes ||
      r.data_packets - r.retransmissions != packets || r.total_packets < r.data_packets) {
    std::fprintf(stderr,
                 "sim_speed: round %zu: rnicsim %s: %llu of %llu messages, %llu of %llu bytes, "
                 "%llu data packets (%llu retransmitted) of %llu, %llu frames on the wire%s%s\n",
                 round, r.completed ? "completed" : "did not complete",
                 static_cast<unsigned long long>(r.messages),
                 static_cast<unsigned long long>(messages),
                 static_cast<unsigned long long>(r.bytes),
                 static_cast<unsigned long long>(messages * kMessageBytes),
                 static_cast<unsigned long long>(r.data_packets),
                 static_cast<unsigned long long>(r.retransmissions),
                 static_cast<unsigned long long>(packets),
                 static_cast<unsigned long long>(r.total_packets),
                 r.failure.empty() ? "" : "; ", r.failure.c_str());
    ok = false;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parse_args(argc, argv);
  if (!options) return 2;

  const std::uint64_t messages = (options->packets + kPacketsPerMessage - 1) / kPacketsPerMessage;
  const std::uint64_t packets = messages * kPacketsPerMessage;
  if (packets > kMaxPackets) {
    std::fprintf(stderr, "sim_speed: %llu packets after rounding up exceeds %llu\n",
                 static_cast<unsigned long long>(packets),
                 static_cast<unsigned long long>(kMaxPackets));
    return 2;
  }

  std::printf("stream: %llu data packets of %u B payload (%llu x 1 MiB RDMA WRITE), "
              "100 Gb/s link, 1 us delay%s\n",
              static_cast<unsigned long long>(packets), kPayloadBytes,
              static_cast<unsigned long long>(messages), options->smoke ? " [smoke]" : "");
  std::fflush(stdout);

  const std::optional<std::vector<Round>> rounds = run_rounds(options->rounds, packets, messages);
  if (!rounds) return 1;
  report(*rounds, options->rounds, packets);
  bool ok = true;
  for (size_t i = 0; i < rounds->size(); ++i) ok = check_round(i + 1, (*rounds)[i], packets, messages) && ok;
  return ok ? 0 : 1;
}
