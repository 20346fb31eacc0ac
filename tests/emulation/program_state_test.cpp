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
