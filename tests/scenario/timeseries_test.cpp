// The time series' per-port rows, kept as changes: every row reads back whole.
#include "scenario/timeseries.hpp"

#include <gtest/gtest.h>

#include <vector>

using rnicsim::scenario::ChangeRows;

TEST(ChangeRows, EveryRowReadsBackWholeFromItsChanges) {
  const std::vector<std::vector<double>> rows = {{0, 0, 0}, {0, 1.5, 0}, {0, 1.5, 0}, {2, 0, 0.25}, {2, 0, 0.25}};
  ChangeRows<double> kept(3);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) kept.set(c, row[c]);
    kept.end_row();
  }
  EXPECT_EQ(kept.rows(), rows.size());
  EXPECT_EQ(kept.changes(), 4u);  // 1.5 in, 2 in, 1.5 out, 0.25 in
  std::vector<std::vector<double>> back;
  kept.each_row([&](size_t i, const std::vector<double>& values) {
    EXPECT_EQ(i, back.size());
    back.push_back(values);
  });
  EXPECT_EQ(back, rows);
}

TEST(ChangeRows, AnEmptyTableHasNoRows) {
  ChangeRows<uint64_t> kept(5);
  int rows = 0;
  kept.each_row([&](size_t, const std::vector<uint64_t>&) { ++rows; });
  EXPECT_EQ(rows, 0);
}

// Two tables of the same rows, each of other columns (two ranks' ports), merge
// into the table one recorder of every column keeps.
TEST(ChangeRows, TablesOfOtherColumnsMergeIntoOne) {
  const std::vector<std::vector<uint64_t>> rows = {{0, 0, 0, 0}, {4, 0, 1, 0}, {4, 2, 1, 0}, {0, 2, 0, 9}};
  ChangeRows<uint64_t> all(4), even(4), odd(4);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) {
      all.set(c, row[c]);
      (c % 2 == 0 ? even : odd).set(c, row[c]);
    }
    all.end_row(), even.end_row(), odd.end_row();
  }
  rnicsim::sim::ByteWriter out;
  odd.write(out);
  rnicsim::sim::ByteReader in(out.bytes());
  even.merge(in);
  std::vector<std::vector<uint64_t>> merged, whole;
  even.each_row([&](size_t, const std::vector<uint64_t>& v) { merged.push_back(v); });
  all.each_row([&](size_t, const std::vector<uint64_t>& v) { whole.push_back(v); });
  EXPECT_EQ(merged, rows);
  EXPECT_EQ(merged, whole);
  ChangeRows<uint64_t> shorter(4);
  shorter.end_row();
  rnicsim::sim::ByteWriter one;
  shorter.write(one);
  rnicsim::sim::ByteReader other_rows(one.bytes());
  EXPECT_THROW(even.merge(other_rows), std::runtime_error);
}
