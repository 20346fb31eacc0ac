#!/usr/bin/env python3
"""Every number of --out is the value the run computed, to the last digit.

A run with --exact-twins writes beside each file FILE a twin FILE.exact with
every double as a C99 hex float (its bits, written by printf's %a rather than
the decimal writer). This reads summary.json, stats.json and every CSV with
Python's json and csv modules (and pandas where installed) and checks that
each decimal reads back as exactly its twin's bits and is the shortest
decimal that does, that integers, strings and the files' shapes agree, and
that no file holds NaN or infinity. A copy cut to 6 significant digits, as
the files were once written, must fail the same check. The integers and the
simulated time are also compared with what the run printed (printf's path).
Names: a workload named with a comma is refused with exit 2 at its line and
column; a sweep value with commas survives in sweep.csv.

usage: exact_outputs.py RNICSIM SCENARIO_DIR OUT_DIR
"""
import csv
import glob
import json
import os
import re
import shutil
import subprocess
import sys


class Decimal(str):
    """A JSON number with a fraction or an exponent, kept as its text."""


def reject(token):
    raise ValueError("not a JSON number: " + token)


def load_json(path):
    with open(path) as f:
        return json.load(f, parse_float=Decimal, parse_constant=reject)


def digits(text):
    """Significant digits of a decimal's text: '0.00120' -> '12'."""
    mantissa = re.split("[eE]", text.lstrip("-"))[0].replace(".", "")
    return mantissa.strip("0")


class Checker:
    def __init__(self):
        self.doubles = 0
        self.problems = []

    def decimal(self, where, text, hex_text):
        self.doubles += 1
        value = float.fromhex(hex_text)
        if float(text) != value:
            self.problems.append("%s: %s is not %r (%s)" % (where, text, value, hex_text))
        elif len(digits(text)) != len(digits(repr(value))):
            self.problems.append("%s: %s is not the shortest form, %r" % (where, text, value))

    def json_value(self, where, a, b):
        if isinstance(a, dict) and isinstance(b, dict):
            if list(a) != list(b):
                self.problems.append("%s: keys differ" % where)
            for k in a:
                self.json_value(where + "." + k, a[k], b.get(k))
        elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
            for i, (x, y) in enumerate(zip(a, b)):
                self.json_value("%s[%d]" % (where, i), x, y)
        elif isinstance(a, Decimal) and isinstance(b, str) and "0x" in b:
            self.decimal(where, a, b)
        elif isinstance(a, int) and not isinstance(a, bool) and isinstance(b, str) and "0x" in b:
            self.problems.append("%s: the double %s was written without a fraction" % (where, a))
        elif a != b or type(a) is not type(b):
            self.problems.append("%s: %r against the twin's %r" % (where, a, b))

    def csv_file(self, path, twin):
        with open(path, newline="") as f, open(twin, newline="") as g:
            rows, exact = list(csv.reader(f, strict=True)), list(csv.reader(g, strict=True))
        if len(rows) < 1 or len(rows) != len(exact):
            self.problems.append("%s: %d rows, twin %d" % (path, len(rows), len(exact)))
            return rows
        for r, (row, twin_row) in enumerate(zip(rows, exact)):
            if len(row) != len(rows[0]) or len(row) != len(twin_row):
                self.problems.append("%s:%d: %d fields, header %d" % (path, r + 1, len(row), len(rows[0])))
                continue
            for c, (a, b) in enumerate(zip(row, twin_row)):
                where = "%s:%d:%s" % (os.path.basename(path), r + 1, rows[0][c])
                if b.startswith(("0x", "-0x")):
                    self.decimal(where, a, b)
                elif a != b:
                    self.problems.append("%s: %r against the twin's %r" % (where, a, b))
                elif a.lower() in ("nan", "inf", "-inf", "infinity"):
                    self.problems.append("%s: %s" % (where, a))
        return rows


def check_dir(d):
    """Checks every output file in d against its twin; returns the checker."""
    ck = Checker()
    for name in ("summary.json", "stats.json"):
        ck.json_value(name, load_json(os.path.join(d, name)), load_json(os.path.join(d, name + ".exact")))
    for path in sorted(glob.glob(os.path.join(d, "*.csv"))):
        ck.csv_file(path, path + ".exact")
    return ck


def pandas_agrees(d):
    try:
        import pandas
    except ImportError:
        return "pandas not installed"
    for path in sorted(glob.glob(os.path.join(d, "*.csv"))):
        frame = pandas.read_csv(path, float_precision="round_trip")
        exact = pandas.read_csv(path + ".exact", dtype=str, keep_default_na=False)
        for col in frame.columns:
            for v, t in zip(frame[col], exact[col]):
                if t.startswith(("0x", "-0x")) and float(v) != float.fromhex(t):
                    raise AssertionError("pandas: %s %s: %r is not %s" % (path, col, v, t))
    return "pandas reads the same numbers"


def run(rnicsim, *args, expect=0):
    r = subprocess.run([rnicsim, *args], capture_output=True, text=True)
    assert r.returncode == expect, (args, r.returncode, r.stdout, r.stderr)
    return r


def main():
    rnicsim, scenarios, out = sys.argv[1:4]
    shutil.rmtree(out, ignore_errors=True)
    d = os.path.join(out, "run")
    printed = run(rnicsim, "run", os.path.join(scenarios, "exact_outputs.yaml"), "--out", d, "--exact-twins").stdout

    ck = check_dir(d)
    assert not ck.problems, "\n".join(ck.problems[:20])
    assert ck.doubles > 1000, ck.doubles
    csvs = sorted(os.path.basename(p) for p in glob.glob(os.path.join(d, "*.csv")))
    assert csvs == ["delivered.csv", "flows_some_flows.csv", "pauses.csv", "qps.csv", "queues.csv",
                    "throughput.csv"], csvs

    # What the run printed (printf, another path) agrees with the JSON.
    s = load_json(os.path.join(d, "summary.json"))
    assert s["schema"] == "rnicsim.summary" and s["schema_version"] == 1, s["schema"]
    assert load_json(os.path.join(d, "stats.json"))["schema_version"] == 1
    m = re.search(r"messages (\d+)  bytes (\d+)  packets (\d+) \(data (\d+)\)  retransmissions (\d+)  drops (\d+)",
                  printed)
    assert [int(x) for x in m.groups()] == [s[k] for k in ("messages", "bytes", "packets", "data_packets",
                                                           "retransmissions", "drops")], (m.groups(), s)
    assert s["retransmissions"] > 0, "the lossy link should make retransmissions"
    ms = re.search(r"simulated (\d+\.\d{6}) ms", printed).group(1)
    assert "%.6f" % (float(s["simulated_seconds"]) * 1e3) == ms, (s["simulated_seconds"], ms)
    # A workload's delivered.csv column adds up to the bytes its receivers placed.
    with open(os.path.join(d, "delivered.csv"), newline="") as f:
        delivered = list(csv.DictReader(f))
    for w in s["workloads"]:
        if w["pattern"] == "bw":
            assert sum(int(r[w["name"]]) for r in delivered) == w["bytes"], w["name"]

    # The check bites: the same files cut to 6 significant digits fail it.
    cut = os.path.join(out, "cut")
    shutil.copytree(d, cut)
    for name in ("summary.json", "queues.csv", "throughput.csv"):
        p = os.path.join(cut, name)
        text = open(p).read()
        open(p, "w").write(re.sub(r"\d+\.\d{7,}", lambda t: "%.6g" % float(t.group(0)), text))
    bad = check_dir(cut)
    assert any(n in pr for pr in bad.problems for n in ("summary.json", "throughput.csv")), bad.problems[:5]

    # A sweep's values with commas survive quoting; its numbers are exact too.
    sd = os.path.join(out, "sweep")
    sweep = run(rnicsim, "run", os.path.join(scenarios, "exact_sweep.yaml"), "--out", sd, "--exact-twins")
    ck = Checker()
    rows = ck.csv_file(os.path.join(sd, "sweep.csv"), os.path.join(sd, "sweep.csv.exact"))
    assert not ck.problems, ck.problems
    values = re.findall(r"nic\.pcie=(.*)", sweep.stderr)
    assert [r[0] for r in rows[1:]] == values == ["{lanes: 8, generation: 3}", "{lanes: 16, generation: 4}"], rows

    # A workload name with a comma would split CSV columns and name a file: refused.
    bad_name = os.path.join(scenarios, "..", "bad_scenarios", "workload_name_comma.yaml")
    for cmd in ("run", "validate"):
        r = run(rnicsim, cmd, bad_name, expect=2)
        assert re.match(re.escape(bad_name) + r":5:11: workload name 'write,stream' must be", r.stderr), r.stderr

    print("%d doubles exact and shortest in %d CSV files and 2 JSON files; %s" % (check_dir(d).doubles, len(csvs),
                                                                                 pandas_agrees(d)))


if __name__ == "__main__":
    main()
