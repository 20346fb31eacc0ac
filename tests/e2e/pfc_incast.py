#!/usr/bin/env python3
"""Incast through one switch, with and without PFC, checked on measured values.

usage: pfc_incast.py RNICSIM TSHARK TSHARK_CHECK SCENARIO_DIR WORKDIR

Without PFC the switch drops (egress threshold) and the senders go back N; with
PFC on the traffic's priority nothing is dropped or retransmitted and the
switch pauses the senders. The capture on the first sender holds the pause
frames it received: tshark decodes them as PFC (MAC Control opcode 0x0101) for
priority 3 only, quanta 65535 (XOFF) or 0 (XON), as many as lint counts; the
time between each pause and what ends it (XON, or its quanta at 5.12 ns each
at 100 Gb/s) adds up to the paused time the port reports. Both captures lint
clean and decode in tshark.
"""
import json
import os
import shutil
import subprocess
import sys

rnicsim, tshark, check, scen, work = sys.argv[1:6]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(name):
    pcap, out = f"{work}/{name}.pcap", f"{work}/{name}"
    r = subprocess.run([rnicsim, "run", f"{scen}/{name}.yaml", "--pcap", pcap, "--out", out],
                       capture_output=True, text=True)
    print(r.stdout)
    assert r.returncode == 0 and "result: completed" in r.stdout, r.stdout + r.stderr
    s = json.load(open(f"{out}/summary.json"))
    assert all(w["data_verified"] for w in s["workloads"]), s
    lint = subprocess.run([rnicsim, "lint", pcap], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    subprocess.run([check, tshark, pcap], check=True)
    return s, json.load(open(f"{out}/stats.json"))["counters"], pcap, lint.stdout


lossy, _, _, _ = run("incast_lossy")
f = lossy["fabric"]
assert f["drops"]["egress_threshold"] > 0 and lossy["retransmissions"] > 0, lossy
assert f["pfc"]["frames_sent"] == 0, f
print(f"without PFC: {f['drops']['egress_threshold']} drops, {lossy['retransmissions']} retransmissions")

pfc, stats, pcap, lint = run("incast_pfc")
f = pfc["fabric"]
assert pfc["drops"] == 0 and sum(f["drops"].values()) == 0, pfc
assert pfc["retransmissions"] == 0, pfc
assert f["pfc"]["xoff_sent"][3] > 0 and f["pfc"]["pause_received"][3] > 0, f
assert sum(f["pfc"]["xoff_sent"]) == f["pfc"]["xoff_sent"][3], "only priority 3 is lossless"
# Lossless incast keeps the receiver's link busy: 4 x 2 MiB at close to 100 Gb/s.
gbps = pfc["workloads"][0]["gbps"]
assert gbps > 90, gbps

# The pause frames in the capture, as tshark decodes them.
fields = subprocess.run([tshark, "-n", "-r", pcap, "-Y", "eth.type == 0x8808", "-T", "fields",
                         "-e", "frame.time_epoch", "-e", "eth.dst", "-e", "macc.opcode", "-e", "macc.cbfc.enbv",
                         "-e", "macc.cbfc.pause_time.c3", "-e", "macc.cbfc.pause_time.c0"],
                        capture_output=True, text=True, check=True).stdout.split("\n")
pauses = [l.split("\t") for l in fields if l]
assert pauses, "no pause frame in the capture"
QUANTUM_NS = 5.12  # 512 bit times at 100 Gb/s
events = []
for t, dst, op, enbv, q3, q0 in pauses:
    assert dst == "01:80:c2:00:00:01" and int(op, 16) == 0x0101 and int(enbv, 16) == 0x0008, (dst, op, enbv)
    assert int(q3) in (65535, 0) and int(q0) == 0, (q3, q0)
    events.append((float(t), int(q3)))
n_pause = sum(1 for _, q in events if q)
n_xon = len(events) - n_pause
assert f"priority 3: {n_pause} pauses ({n_pause * 65535} quanta), {n_xon} XON" in lint, lint
# Paused time from the capture: each pause lasts until the next PFC frame (an
# XON, or a refresh that restarts it) or until its quanta run out.
paused_ns = 0.0
for i, (t, q) in enumerate(events):
    if q == 0:
        continue
    end = t + q * QUANTUM_NS * 1e-9
    if i + 1 < len(events):
        end = min(end, events[i + 1][0])
    paused_ns += (end - t) * 1e9
reported_ns = stats["s1.port0.pfc_paused_ps.p3"] / 1000
assert abs(paused_ns - reported_ns) <= len(events) * 1.0 + 1, (paused_ns, reported_ns)
assert stats["s1.port0.pfc_pause_rx.p3"] == n_pause and stats["s1.port0.pfc_xon_rx.p3"] == n_xon, stats
print(f"with PFC: 0 drops, {gbps:.2f} Gb/s; s1 got {n_pause} pauses and {n_xon} XON, paused "
      f"{paused_ns / 1000:.3f} us by the capture, {reported_ns / 1000:.3f} us by the port")
