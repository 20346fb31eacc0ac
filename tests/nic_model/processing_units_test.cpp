// Processing units: each QP's work on the unit its number steers it to, the
// units side by side. Small-message rates rise with units over many QPs and
// stay as they were for one QP; one unit is the single pipeline.
#include <gtest/gtest.h>

#include "nic_fixture.hpp"
#include "nic_model/processing_units.hpp"

using namespace rnicsim;
using namespace rnicsim::nictest;

namespace {

TEST(ProcessingUnits, SteersEachQpToOneUnitByItsNumber) {
  struct Unit {
    explicit Unit(uint32_t i, int tag) : index(i), tag(tag) {}
    uint32_t index;
    int tag;
  };
  ProcessingUnits<Unit> units(4, 9);
  ASSERT_EQ(units.count(), 4u);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(units[i].index, i);
  EXPECT_EQ(units.of(Qpn(17)).index, 1u);
  EXPECT_EQ(units.of(Qpn(20)).index, 0u);
  EXPECT_EQ(units.of(Qpn(23)).tag, 9);
  EXPECT_EQ(unit_of(Qpn(0xFFFFFF), 4), 3u);
  ProcessingUnits<Unit> none(0, 1);
  EXPECT_EQ(none.count(), 1u) << "at least one unit";
}

// round_robin_ops with `units` requester and responder units on each NIC.
sim::Duration small_ops(uint32_t qps, uint32_t units, WrOpcode op) {
  NicParams p;
  p.requester_units = p.responder_units = units;
  p.qpc_cache_entries = 0;  // no context misses: the units alone
  TestBed bed(0, 0, 7, 100'000'000'000, sim::Duration::ns(100), p);
  return round_robin_ops(bed, qps, op);
}

TEST(ProcessingUnits, SmallWriteRateRisesWithUnitsOverManyQps) {
  const sim::Duration one = small_ops(16, 1, WrOpcode::RdmaWrite);
  const sim::Duration four = small_ops(16, 4, WrOpcode::RdmaWrite);
  // Four units do not make it four times: the WQE fetches take over. A unit
  // busy with one QP's packet holds no other unit's (each has its own queue).
  EXPECT_LT(four.picoseconds() * 5, one.picoseconds() * 2) << "four units take the 16 QPs' packets side by side";
}

TEST(ProcessingUnits, SmallReadRateRisesWithUnitsOverManyQps) {
  const sim::Duration one = small_ops(16, 1, WrOpcode::RdmaRead);
  const sim::Duration four = small_ops(16, 4, WrOpcode::RdmaRead);
  EXPECT_LT(four.picoseconds() * 5, one.picoseconds() * 2) << "READ requests and their responses spread over the units";
}

TEST(ProcessingUnits, OneQpGoesNoFasterWithMoreUnits) {
  EXPECT_EQ(small_ops(1, 1, WrOpcode::RdmaWrite).picoseconds(), small_ops(1, 4, WrOpcode::RdmaWrite).picoseconds())
      << "a QP is bound to one unit";
}

}  // namespace
