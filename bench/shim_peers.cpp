// The physical peers of bench/shim, measured on this machine in the same run:
//   process_vm_readv of 1 MiB from another process (the daemon's way into a
//   program's memory), a busy-polled shared-memory round trip between two
//   processes (the best a ring between program and daemon can do), and a
//   cross-CPU wake-up (a process blocked in read() woken by a write from another
//   CPU: what a sleeping daemon or program costs).
// Prints one "name value unit" line per figure.
#include <sched.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

// A limit, so the fastest of `batches` batches of `rounds` reads: on a shared
// machine a slow spell lowers a single long measurement, and with it the bar
// the shim is measured against.
double vm_readv_gbps(int batches, int rounds) {
  constexpr size_t kBytes = 1 << 20;
  std::vector<char> buf(kBytes, 'x');  // the child has the same buffer at the same address
  int hold[2];
  if (pipe(hold) != 0) return 0;
  const pid_t child = fork();
  if (child == 0) {
    char c;
    close(hold[1]);
    while (read(hold[0], &c, 1) > 0) {
    }
    _exit(0);
  }
  close(hold[0]);
  std::vector<char> dst(kBytes);
  iovec local{dst.data(), kBytes}, remote{buf.data(), kBytes};
  process_vm_readv(child, &local, 1, &remote, 1, 0);  // warm up
  auto batch = [&] {  // GB/s, 0 if a read fails
    const auto t0 = Clock::now();
    for (int i = 0; i < rounds; ++i)
      if (process_vm_readv(child, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(kBytes)) return 0.0;
    return static_cast<double>(kBytes) * rounds / seconds_since(t0) / 1e9;
  };
  double best = 0;
  for (int b = 0; b < batches; ++b) {
    const double gbps = batch();
    if (gbps == 0) {  // a failed read fails the figure
      best = 0;
      break;
    }
    best = std::max(best, gbps);
  }
  close(hold[1]);
  waitpid(child, nullptr, 0);
  return best;
}

double shm_round_trip_us(uint64_t rounds) {
  struct alignas(64) Line {
    std::atomic<uint64_t> v;
  };
  auto* lines = static_cast<Line*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  new (&lines[0]) Line{};
  new (&lines[1]) Line{};
  const pid_t child = fork();
  if (child == 0) {
    pin(1);
    for (uint64_t i = 1; i <= rounds; ++i) {
      while (lines[0].v.load(std::memory_order_acquire) != i) {
      }
      lines[1].v.store(i, std::memory_order_release);
    }
    _exit(0);
  }
  pin(0);
  std::vector<double> samples;
  samples.reserve(rounds);
  for (uint64_t i = 1; i <= rounds; ++i) {
    const auto t = Clock::now();
    lines[0].v.store(i, std::memory_order_release);
    while (lines[1].v.load(std::memory_order_acquire) != i) {
    }
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count());
  }
  waitpid(child, nullptr, 0);
  munmap(lines, 4096);
  return median(samples);
}

double wakeup_us(int rounds) {
  int ping[2], pong[2];
  if (pipe(ping) != 0 || pipe(pong) != 0) return 0;
  const pid_t child = fork();
  if (child == 0) {
    pin(1);
    char c;
    for (int i = 0; i < rounds; ++i) {
      if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1) break;
    }
    _exit(0);
  }
  pin(0);
  std::vector<double> samples;
  char c = 'p';
  for (int i = 0; i < rounds; ++i) {
    const auto t = Clock::now();
    if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1) break;
    // A round trip is two wake-ups, one on each CPU.
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t).count() / 2);
  }
  waitpid(child, nullptr, 0);
  return median(samples);
}

}  // namespace

// usage: shim_peers [--smoke]   (--smoke: a fiftieth of the rounds, for CI)
int main(int argc, char** argv) {
  const int scale = argc > 1 && std::strcmp(argv[1], "--smoke") == 0 ? 50 : 1;
  std::printf("process_vm_readv_1MiB %.2f GB/s\n", vm_readv_gbps(5, 1000 / scale));
  std::printf("shm_ring_round_trip %.3f us\n", shm_round_trip_us(200000 / scale));
  std::printf("cross_cpu_wakeup %.2f us\n", wakeup_us(5000 / scale));
  return 0;
}
