#!/usr/bin/env python3
"""throughput.csv counts bytes when they are in host memory: for
scenarios/incast_pfc.yaml (four senders into one 100 Gb/s port; the
receiver's pipeline starts behind and drains a backlog from its receive
buffer), no 10 us interval carries more than the receiver's PCIe link can
write (Gen3 x16, 256-byte payloads with 24 bytes of TLP overhead each: 8 GT/s
x 16 x 128/130 x 256/280 = 115.2 Gb/s, plus one 4 KiB packet of rounding at an
interval's edge). Counted when the pipeline took them in, they showed 144 Gb/s.
The intervals still add up to the bytes summary.json reports.
usage: placement_rate.py RNICSIM SCENARIO WORKDIR"""
import json
import sys

from series_run import run_series

rnicsim, scenario, out = sys.argv[1:4]
summary, rates, _ = run_series(rnicsim, scenario, out)  # the intervals add up too
pcie_gbps = 8 * 16 * 128 / 130 * 256 / 280
edge_gbps = 4096 * 8 / 10e-6 / 1e9
worst = 0.0
for w in summary['workloads']:
    n = w['name']
    for i in range(1, len(rates) - 1):  # the last interval is shorter
        worst = max(worst, float(rates[i][n]))
    first = float(rates[0][n])
    worst = max(worst, first)
assert worst <= pcie_gbps + edge_gbps, (worst, pcie_gbps)
# The receive buffer did hold a backlog (else the check above shows nothing).
stats = json.load(open(out + '/stats.json'))['counters']
assert stats['r.nic.rx_buffer_peak_bytes'] > 8 * 4096, stats['r.nic.rx_buffer_peak_bytes']
print('fastest interval %.1f Gb/s, PCIe write limit %.1f Gb/s; receive buffer peak %d bytes' %
      (worst, pcie_gbps, stats['r.nic.rx_buffer_peak_bytes']))
