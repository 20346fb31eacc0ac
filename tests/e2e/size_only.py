#!/usr/bin/env python3
"""Size-only payload (scenario `payload: size_only`) changes nothing but the bytes.

Each scenario runs twice with the same seed, with full payload bytes and size-only.
The summaries agree line by line (but for the data column, which size-only cannot
check, and the wall-clock line), and so do every counter in stats.json and every
flow's completion time. The captures hold the same frames at the same times with
the same lengths on the wire; a size-only frame's captured bytes are the full
frame's headers (a frame a fault corrupted may differ), so a size-only capture
says exactly what was elided. The size-only captures lint clean and decode in
tshark.

usage: size_only.py RNICSIM TSHARK TSHARK_CHECK SCENARIO_DIR WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys

rnicsim, tshark, tshark_check, scenarios, work = sys.argv[1:6]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)

# (scenario, frames a fault corrupts in it); ib_lossy's captures are ERF
CASES = [
    ("size_only_ops.yaml", 0),
    ("fault_corrupt_flap.yaml", 1),
    ("spreading_pfc.yaml", 0),
    ("ib_lossy.yaml", 0),
]
WALL_CLOCK = ("wall", "events_per_s", "wall_seconds", "events/s")


def run(scenario, mode):
    out = f"{work}/{scenario[:-5]}_{mode}"
    p = subprocess.run([rnicsim, "run", f"{scenarios}/{scenario}", "--set", f"payload={mode}",
                        "--pcap", f"{out}.pcap", "--out", out], capture_output=True, text=True)
    assert p.returncode == 0, (scenario, mode, p.returncode, p.stdout, p.stderr)
    return out, p.stdout


def pcap_records(path):
    """(link type, [(ts_sec, ts_frac, caplen, len, bytes)]), an ERF record's
    (native IB) counted and taken after its header, whose lengths must agree"""
    data = open(path, "rb").read()
    magic, = struct.unpack_from("<I", data, 0)
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)
    link, = struct.unpack_from("<I", data, 20)
    records, off = [], 24
    while off < len(data):
        sec, frac, caplen, length = struct.unpack_from("<IIII", data, off)
        off += 16
        body = data[off:off + caplen]
        off += caplen
        if link == 197:
            rlen, wlen = struct.unpack_from(">H", body, 10)[0], struct.unpack_from(">H", body, 14)[0]
            assert (body[8], rlen, wlen + 16) == (21, caplen, length), (path, body[:16].hex(), caplen, length)
            caplen, length, body = caplen - 16, length - 16, body[16:]
        records.append((sec, frac, caplen, length, body))
    return link, records


def comparable_summary(text):
    lines = []
    for line in text.splitlines():
        if line.startswith("payload: size-only") or line.startswith("simulated "):
            continue
        if line.rstrip().endswith((" ok", " n/a")):
            line = line.rstrip().rsplit(" ", 1)[0].rstrip()
        lines.append(line)
    return lines


def strip_wall_clock(x):
    if isinstance(x, dict):
        return {k: strip_wall_clock(v) for k, v in x.items() if not any(w in k for w in WALL_CLOCK)}
    if isinstance(x, list):
        return [strip_wall_clock(v) for v in x]
    return x


for scenario, corrupted in CASES:
    full_dir, full_text = run(scenario, "full")
    so_dir, so_text = run(scenario, "size_only")
    assert "payload: size-only" in so_text, so_text
    assert comparable_summary(full_text) == comparable_summary(so_text), (full_text, so_text)
    for name in ("stats.json",):
        a = strip_wall_clock(json.load(open(f"{full_dir}/{name}")))
        b = strip_wall_clock(json.load(open(f"{so_dir}/{name}")))
        assert a == b, (scenario, name, [k for k in a if a.get(k) != b.get(k)][:10])
    summary = json.load(open(f"{so_dir}/summary.json"))
    for w in summary["workloads"]:
        atomic = w["op"] in ("atomic", "fetch_add", "cmp_swap")
        assert w["data_checked"] == atomic, w
        assert w["data_verified"], w
    for f in sorted(os.listdir(full_dir)):
        if f.startswith("flows_") and f.endswith(".csv"):
            assert open(f"{full_dir}/{f}").read() == open(f"{so_dir}/{f}").read(), (scenario, f)

    captures = [(f"{full_dir}.pcap", f"{so_dir}.pcap")]
    captures += [(f"{full_dir}/{f}", f"{so_dir}/{f}") for f in sorted(os.listdir(full_dir)) if f.endswith(".pcap")]
    elided = 0
    for full_pcap, so_pcap in captures:
        link_a, a = pcap_records(full_pcap)
        link_b, b = pcap_records(so_pcap)
        assert link_a == link_b and len(a) == len(b) > 0, (full_pcap, len(a), len(b))
        differing = 0
        for (sa, fa, ca, la, xa), (sb, fb, cb, lb, xb) in zip(a, b):
            assert (sa, fa, la) == (sb, fb, lb), (so_pcap, (sa, fa, la), (sb, fb, lb))
            assert cb <= ca
            if cb < lb:
                elided += 1
            if xa[:cb] != xb:
                differing += 1
        assert differing <= corrupted, (so_pcap, differing)
        lint = subprocess.run([rnicsim, "lint", so_pcap], capture_output=True, text=True)
        assert lint.returncode == 0 and "0 errors, 0 warnings" in lint.stdout, lint.stdout
        t = subprocess.run(["sh", tshark_check, tshark, so_pcap],
                           capture_output=True, text=True)
        assert t.returncode == 0, t.stdout + t.stderr
    assert elided > 0, scenario
    print(f"{scenario}: same results and frames with full and size-only payload; "
          f"{elided} frames captured as headers only; lint and tshark clean")
