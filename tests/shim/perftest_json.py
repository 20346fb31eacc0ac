#!/usr/bin/env python3
"""rnicsim run --perftest-json writes what perftest's --out_json writes.

perftest itself runs on the shim (ib_write_bw, ib_read_lat, --out_json) and the
same tests run as scenario workloads with --perftest-json. Each pair of files
has the same keys in the same order; test_info says the same of the same
configuration; and the units agree: MsgSize in bytes, BW in perftest's MB/sec
(BW_average = MsgRate x MsgSize / 2^20 in both files), latency in usec (ours
equal to the report's t_*_us in summary.json). perftest's file is not quite
JSON (bare keys and words, trailing commas); ours is read by json.load.

usage: perftest_json.py RNICSIM WORKDIR PORT
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time

rnicsim, work, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# (workload name, perftest program and options, the workload in the scenario)
TESTS = [
    ("write_bw", ["ib_write_bw", "-n", "200"], "{name: write_bw, op: write, pattern: bw, size: 65536, iterations: 200}"),
    ("read_lat", ["ib_read_lat", "-n", "100"], "{name: read_lat, op: read, pattern: lat, iterations: 100}"),
]


def perftest_document(path):
    """perftest's --out_json file, one member per line ("key: value,")."""
    stack = [{}]
    for line in open(path):
        line = line.strip().rstrip(",")
        if line in ("{", ""):
            continue
        if line == "}":
            done = stack.pop()
            if not stack:
                return done
            continue
        key, value = (part.strip() for part in line.split(":", 1))
        if value == "{":
            stack[-1][key] = {}
            stack.append(stack[-1][key])
        elif re.fullmatch(r"-?[0-9]+", value):
            stack[-1][key] = int(value)
        elif re.fullmatch(r"-?[0-9.]+", value):
            stack[-1][key] = float(value)
        else:
            stack[-1][key] = value.strip('"')
    return stack[0]


def wait_for(predicate, what):
    for _ in range(200):
        if predicate():
            return
        time.sleep(0.05)
    sys.exit(f"FAIL: no {what}")


def listening(p):
    """A program listens on TCP port p (asked of ss: a connection would be its client)."""
    out = subprocess.run(["ss", "-ltnH", f"sport = :{p}"], capture_output=True, text=True).stdout
    return "LISTEN" in out


def run_perftest(name, program, p):
    """Server and client on the daemon's two hosts; the client's JSON file."""
    sock = f"{work}/sock/daemon.sock"
    files = {role: f"{work}/{name}_{role}.json" for role in ("server", "client")}
    cmd = [rnicsim, "exec", "--socket", sock, "--"] + program + ["-p", str(p), "--out_json"]
    server = subprocess.Popen(cmd + [f"--out_json_file={files['server']}"], stdout=subprocess.DEVNULL)
    wait_for(lambda: listening(p), f"{name} server on port {p}")
    client = subprocess.run(cmd + [f"--out_json_file={files['client']}", "localhost"], capture_output=True,
                            text=True, timeout=120)
    assert server.wait(timeout=120) == 0 and client.returncode == 0, (name, client.stdout, client.stderr)
    return perftest_document(files["client"])


daemon = subprocess.Popen([rnicsim, "serve", "--socket", f"{work}/sock/daemon.sock", "--idle-exit", "5"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    wait_for(lambda: os.path.exists(f"{work}/sock/daemon.sock"), "daemon socket")
    real = {name: run_perftest(name, program, port + i) for i, (name, program, _) in enumerate(TESTS)}
finally:
    daemon.terminate()
    daemon.wait()

scenario = f"{work}/perftest.yaml"
with open(scenario, "w") as f:
    f.write("name: perftest_json\nhosts: [{name: a}, {name: b}]\n"
            "links: [{between: [a, b], rate: 100Gbps, delay: 1us}]\nworkloads:\n")
    for name, _, workload in TESTS:
        f.write(f"  - {workload[:-1]}, from: a, to: b}}\n")
subprocess.run([rnicsim, "run", scenario, "--perftest-json", f"{work}/ours", "--out", f"{work}/out"], check=True,
               stdout=subprocess.DEVNULL)
summary = {w["name"]: w for w in json.load(open(f"{work}/out/summary.json"))["workloads"]}

for name, _, _ in TESTS:
    theirs, ours = real[name], json.load(open(f"{work}/ours/{name}.json"))
    for part in ("test_info", "results"):
        assert list(ours[part]) == list(theirs[part]), (name, part, list(ours[part]), list(theirs[part]))
    assert ours["test_info"] == theirs["test_info"], (name, ours["test_info"], theirs["test_info"])
    for doc in (theirs, ours):
        r = doc["results"]
        assert r["MsgSize"] == ours["results"]["MsgSize"] and r["n_iterations"] == ours["results"]["n_iterations"]
        if "BW_average" in r:  # MB/sec of 2^20 bytes; perftest rounds to 2 and 6 decimals
            # Half a unit of MsgRate's last decimal, as bandwidth, plus BW's own rounding:
            # a slow run (few messages per second) has few digits of MsgRate left.
            rounding = 0.5e-6 * 1e6 * r["MsgSize"] / 2**20 + 0.005
            assert math.isclose(r["BW_average"], r["MsgRate"] * 1e6 * r["MsgSize"] / 2**20, rel_tol=1e-3,
                                abs_tol=rounding), (name, r)
    row = summary[name]["perftest"][-1]
    if "BW_average" in ours["results"]:
        assert ours["results"]["BW_average"] == row["bw_avg_gbps"] * 1e9 / 8 / 2**20, (name, ours, row)
    else:
        assert [ours["results"][k] for k in ("t_min", "t_typical", "t_avg", "percentile_99")] == \
            [row[k] for k in ("t_min_us", "t_typical_us", "t_avg_us", "t_p99_us")], (name, ours, row)
    print(f"{name}: {len(ours['test_info'])} test_info and {len(ours['results'])} results keys as perftest's, "
          f"same configuration and units")
print("PASS")
