#include "emulation/program_state.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using rnicsim::emulation::threads_state;

namespace {

bool asleep(pid_t pid) { return threads_state(pid).asleep; }

// Two children: one blocked in pause(), one spinning; killed by stop().
struct Children {
  pid_t sleeper = fork_into([] { pause(); });
  pid_t spinner = fork_into([] {
    for (;;) asm volatile("" ::: "memory");
  });

  template <typename F>
  static pid_t fork_into(F body) {
    const pid_t pid = fork();
    if (pid == 0) {
      body();
      _exit(0);
    }
    return pid;
  }
  void stop() {
    for (pid_t p : {sleeper, spinner}) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
  }
};

}  // namespace

TEST(ProgramState, ARunningProcessIsNotAsleep) { EXPECT_FALSE(asleep(getpid())); }

TEST(ProgramState, AProcessBlockedInPauseIsAsleepAndOneThatSpinsIsNot) {
  Children c;
  bool slept = false;
  for (int i = 0; i < 200 && !slept; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    slept = asleep(c.sleeper);
  }
  EXPECT_TRUE(slept);
  EXPECT_FALSE(asleep(c.spinner));
  c.stop();
  EXPECT_FALSE(asleep(c.sleeper));  // gone: not readable
}

// The virtual clock's cap counts the CPU time program threads use, so that a
// thread starved of CPU on a loaded machine is waited for: a spinner's CPU
// time grows, a sleeper's stays where it was.
TEST(ProgramState, CpuTimeGrowsForASpinnerOnlyAndIsUnknownForNoProcess) {
  Children c;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto spin0 = threads_state(c.spinner), sleep0 = threads_state(c.sleeper);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto spin1 = threads_state(c.spinner), sleep1 = threads_state(c.sleeper);
  c.stop();
  ASSERT_TRUE(spin0.cpu_known && spin1.cpu_known && sleep0.cpu_known && sleep1.cpu_known);
  EXPECT_GT(spin1.cpu_ns, spin0.cpu_ns + 10'000'000);  // well under its 100 ms, on a busy machine
  EXPECT_EQ(sleep1.cpu_ns, sleep0.cpu_ns);
  EXPECT_FALSE(spin1.asleep);
  const auto gone = threads_state(c.spinner);
  EXPECT_FALSE(gone.cpu_known);
  EXPECT_FALSE(gone.asleep);
}

// The virtual clock ends a burst once every thread sleeps. A look reads the
// threads one by one; a thread that woke, worked and slept again between two
// looks is seen in the second look's slices, so two looks alone say that all
// slept at one instant. The child here wakes once (a byte on a pipe), answers
// and blocks again: each look finds it asleep, yet it ran between them.
TEST(ProgramState, TwoLooksSeeAThreadThatRanAndSleptAgainBetweenThem) {
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t child = fork();
  if (child == 0) {
    for (char b; read(to_child[0], &b, 1) == 1;)
      if (write(from_child[1], &b, 1) != 1) _exit(1);
    _exit(0);
  }
  using rnicsim::emulation::asleep_throughout;
  auto look_asleep = [child] {
    for (int i = 0; i < 400; ++i) {
      const auto t = threads_state(child);
      if (t.asleep) return t;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return threads_state(child);
  };
  const auto first = look_asleep();
  const auto quiet = threads_state(child);
  char b = 'x';
  ASSERT_EQ(write(to_child[1], &b, 1), 1);
  ASSERT_EQ(read(from_child[0], &b, 1), 1);
  const auto second = look_asleep();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  ASSERT_TRUE(first.cpu_known);
  EXPECT_EQ(first.threads, 1u);
  EXPECT_EQ(first.thread_ids, static_cast<uint64_t>(child));
  EXPECT_TRUE(first.asleep && second.asleep);
  EXPECT_TRUE(asleep_throughout(first, quiet));  // nothing woke it: one instant
  EXPECT_GT(second.slices, first.slices);
  EXPECT_FALSE(asleep_throughout(first, second));
  for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
}
