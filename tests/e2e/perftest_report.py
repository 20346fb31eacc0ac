#!/usr/bin/env python3
"""Checks rnicsim's perftest-equivalent report against perftest's own format:
the header lines byte for byte (perftest_parameters.h RESULT_FMT_G and
RESULT_FMT_LAT), one row per size that parses with perftest's columns, and the
same numbers in summary.json.
usage: perftest_report.py RNICSIM SCENARIO OUTDIR (OUTDIR from a run with --out)"""
import json
import subprocess
import sys

BW_HEADER = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
LAT_HEADER = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    "
              "t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
RESULT_LINE = "-" * 87

rnicsim, scenario, outdir = sys.argv[1:4]
out = subprocess.run([rnicsim, "run", scenario], capture_output=True, text=True, check=True).stdout.splitlines()
summary = json.load(open(outdir + "/summary.json"))
tables = {}
i = 0
while i < len(out):
    if out[i].startswith(" Workload        : "):
        name = out[i].split(":", 1)[1].split("\t")[0].strip()
        j = i
        while out[j] not in (BW_HEADER, LAT_HEADER):
            j += 1
            assert not out[j].startswith(" Workload"), "no perftest header for " + name
        assert out[j - 1] == RESULT_LINE, out[j - 1]
        rows = []
        k = j + 1
        while out[k] != RESULT_LINE:
            rows.append(out[k].split())
            k += 1
        tables[name] = (out[j], rows)
        i = k
    i += 1

for w in summary["workloads"]:
    header, rows = tables[w["name"]]
    want = BW_HEADER if w["pattern"] == "bw" else LAT_HEADER
    assert header == want, (w["name"], header)
    assert len(rows) == len(w["perftest"]), (w["name"], len(rows), len(w["perftest"]))
    for cols, row in zip(rows, w["perftest"]):
        assert int(cols[0]) == row["bytes"] and int(cols[1]) == row["iterations"], (w["name"], cols, row)
        if w["pattern"] == "bw":
            assert len(cols) == 5, cols
            peak, avg, rate = map(float, cols[2:])
            assert abs(avg - row["bw_avg_gbps"]) < 0.01 and abs(rate - row["msg_rate_mpps"]) <= 1e-5 * rate + 1e-6, (cols, row)
            assert 0 < avg <= peak <= 100.0, (w["name"], cols)
        else:
            assert len(cols) == 9, cols
            t_min, t_max, typ, avg, stdev, p99, p999 = map(float, cols[2:])
            assert 0 < t_min <= typ <= t_max and t_min <= avg <= t_max and t_min <= p99 <= p999, (w["name"], cols)
    assert w["completed"] and w["data_verified"], w
print("%d perftest reports match perftest's columns" % len(summary["workloads"]))
