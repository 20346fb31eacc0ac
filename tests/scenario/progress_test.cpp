// The progress line of a long run: what it says with and without a known end.
#include <gtest/gtest.h>

#include "scenario/progress.hpp"

namespace rnicsim::scenario {
namespace {

using sim::Duration;

ProgressState at(double done, double wall_s) {
  ProgressState p;
  p.simulated = Duration::us(1500);
  p.end = Duration::ms(10);
  p.done = done;
  p.events_per_s = 2.41e6;
  p.wall_s = wall_s;
  return p;
}

TEST(Progress, LineSaysSimulatedTimeAgainstTheEndAndTheTimeLeft) {
  EXPECT_EQ(progress_line(at(0.15, 6)), "simulated 1.500 of 10.000 ms (15%), 2.41 M events/s, 34 s left");
  ProgressState estimated = at(0.5, 1);
  estimated.estimated = true;
  EXPECT_EQ(progress_line(estimated), "simulated 1.500 of ~10.000 ms (50%), 2.41 M events/s, 1.0 s left");
}

TEST(Progress, TimeLeftInMinutesAndHours) {
  EXPECT_EQ(progress_line(at(0.5, 200)), "simulated 1.500 of 10.000 ms (50%), 2.41 M events/s, 3 min 20 s left");
  EXPECT_EQ(progress_line(at(0.1, 900)), "simulated 1.500 of 10.000 ms (10%), 2.41 M events/s, 2 h 15 min left");
}

TEST(Progress, NothingDoneYetHasNoEndNorTimeLeft) {
  EXPECT_EQ(progress_line(at(0, 3)), "simulated 1.500 ms, 2.41 M events/s");
}

}  // namespace
}  // namespace rnicsim::scenario
