#!/usr/bin/env python3
"""throughput.csv follows the bytes each workload delivers as they arrive: for
scenarios/dcqcn_fairness.yaml (two 64 KiB WRITE streams into one port) each
workload has a non-zero rate in nearly every interval until it ends, its
intervals in delivered.csv add up to the bytes summary.json reports, the rates
agree with those bytes, and in the second half of the run the two flows hold
rates within 15 % of each other (DCQCN converged to the fair share).
usage: throughput_series.py RNICSIM SCENARIO WORKDIR"""
import sys

from series_run import run_series

# The intervals of delivered.csv add up to each workload's bytes (run_series).
summary, rates, bytes_ = run_series(*sys.argv[1:4])
names = [w['name'] for w in summary['workloads']]
# Most intervals carry data (not one spike at each workload's end).
for n in names:
    nonzero = sum(1 for row in rates if float(row[n]) > 0)
    assert nonzero > 0.9 * len(rates), (n, nonzero, len(rates))
assert len(rates) == len(bytes_) > 1000, (len(rates), len(bytes_))
last = {}
for w in summary['workloads']:
    n = w['name']
    cells = [int(row[n]) for row in bytes_]
    last[n] = max(i for i, b in enumerate(cells) if b > 0)
    nonzero = sum(1 for b in cells[:last[n] + 1] if b > 0)
    assert nonzero >= 0.95 * (last[n] + 1), (n, nonzero, last[n] + 1)
    # Gb/s = bytes x 8 over the interval (10 us, the last one shorter).
    for i in range(1, last[n]):
        span_us = float(rates[i]['time_us']) - float(rates[i - 1]['time_us'])
        want = cells[i] * 8 / span_us / 1e3
        assert abs(float(rates[i][n]) - want) <= 1e-4 * max(want, 1), (n, i, rates[i][n], want)
    print('%s: %d bytes in %d intervals, %d of them non-zero' % (n, w['bytes'], last[n] + 1, nonzero))
# Converged: from half-way to 90 % of the first finish, the mean rates agree.
end = min(last.values())
window = rates[end // 2:end * 9 // 10]
mean = {n: sum(float(row[n]) for row in window) / len(window) for n in names}
a, b = mean[names[0]], mean[names[1]]
assert abs(a - b) <= 0.15 * (a + b) / 2, mean
assert 85 < a + b < 100, mean  # together they fill the port's payload rate
print('rates from %s us to %s us: %s' % (window[0]['time_us'], window[-1]['time_us'],
                                         ', '.join('%s %.1f Gb/s' % (n, mean[n]) for n in names)))
