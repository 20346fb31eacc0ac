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
