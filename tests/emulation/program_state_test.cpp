#include "emulation/program_state.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

using rnicsim::emulation::asleep;

TEST(ProgramState, ARunningProcessIsNotAsleep) { EXPECT_FALSE(asleep(getpid())); }

TEST(ProgramState, AProcessBlockedInPauseIsAsleepAndOneThatSpinsIsNot) {
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    pause();
    _exit(0);
  }
  const pid_t spinner = fork();
  if (spinner == 0) {
    for (;;) asm volatile("" ::: "memory");
  }
  bool slept = false;
  for (int i = 0; i < 200 && !slept; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    slept = asleep(sleeper);
  }
  EXPECT_TRUE(slept);
  EXPECT_FALSE(asleep(spinner));
  kill(sleeper, SIGKILL);
  kill(spinner, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  waitpid(spinner, nullptr, 0);
  EXPECT_FALSE(asleep(sleeper));  // gone: not readable
}

// The virtual clock's cap counts the CPU time program threads use, so that a
// thread starved of CPU on a loaded machine is waited for: a spinner's CPU
// time grows, a sleeper's stays where it was.
TEST(ProgramState, CpuTimeGrowsForASpinnerOnlyAndIsZeroForNoProcess) {
  using rnicsim::emulation::threads_state;
  const pid_t sleeper = fork();
  if (sleeper == 0) {
    pause();
    _exit(0);
  }
  const pid_t spinner = fork();
  if (spinner == 0) {
    for (;;) asm volatile("" ::: "memory");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto spin0 = threads_state(spinner), sleep0 = threads_state(sleeper);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto spin1 = threads_state(spinner), sleep1 = threads_state(sleeper);
  kill(sleeper, SIGKILL);
  kill(spinner, SIGKILL);
  waitpid(sleeper, nullptr, 0);
  waitpid(spinner, nullptr, 0);
  ASSERT_TRUE(spin0.cpu_known && spin1.cpu_known && sleep0.cpu_known && sleep1.cpu_known);
  EXPECT_GT(spin1.cpu_ns, spin0.cpu_ns + 10'000'000);  // well under its 100 ms, on a busy machine
  EXPECT_EQ(sleep1.cpu_ns, sleep0.cpu_ns);
  EXPECT_FALSE(spin1.asleep);
  const auto gone = threads_state(spinner);
  EXPECT_FALSE(gone.cpu_known);
  EXPECT_FALSE(gone.asleep);
}
