#!/usr/bin/env python3
"""Checks a WQE timeline (rnicsim --timeline) against the Trace Event Format's
rules: one JSON object with a traceEvents array and displayTimeUnit; known
phases; integer pid and tid; timestamps and durations as finite, non-negative
numbers of microseconds; instants with a scope; durations on one track nested
(X spans and matched B/E pairs); metadata naming every process and track used.
Then what a test asks of the content (--retransmission, --wrs, --only-qp,
--window).

usage: timeline_check.py FILE [--retransmission] [--wrs] [--only-qp QPN]
                              [--window START_US:END_US] [--min-events N]
                              [--expect NAME@TRACK]...
"""
import argparse
import json
import math
import re
import sys
from collections import defaultdict

PHASES = {"B", "E", "X", "i", "I", "M"}
METADATA = {"process_name", "thread_name", "process_sort_index", "thread_sort_index"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def integer(v):
    return isinstance(v, int) and not isinstance(v, bool)


def no_constants(name):
    raise ValueError("not JSON: " + name)


def check_event(i, e):
    if not isinstance(e, dict):
        fail(f"event {i} is not an object")
    ph = e.get("ph")
    if ph not in PHASES:
        fail(f"event {i}: phase {ph!r}")
    if not integer(e.get("pid")) or not integer(e.get("tid")):
        fail(f"event {i}: pid and tid must be integers: {e}")
    if not isinstance(e.get("name"), str):
        fail(f"event {i}: no name")
    if ph == "M":
        if e["name"] not in METADATA:
            fail(f"event {i}: metadata {e['name']!r}")
        args = e.get("args", {})
        ok = isinstance(args.get("name"), str) if e["name"].endswith("_name") else integer(args.get("sort_index"))
        if not ok:
            fail(f"event {i}: metadata without its value: {e}")
        return
    if not number(e.get("ts")) or e["ts"] < 0:
        fail(f"event {i}: ts must be a non-negative number of microseconds: {e}")
    if ph == "X" and (not number(e.get("dur")) or e["dur"] < 0):
        fail(f"event {i}: dur must be a non-negative number: {e}")
    if ph in ("i", "I") and e.get("s", "t") not in ("t", "p", "g"):
        fail(f"event {i}: instant scope {e.get('s')!r}")
    if "args" in e and not isinstance(e["args"], dict):
        fail(f"event {i}: args is not an object")


def spans_by_track(events):
    """(pid, tid) -> [(start, end, name)], X spans and B/E pairs matched in order."""
    tracks = defaultdict(list)
    open_b = defaultdict(list)
    timed = sorted((e for e in events if e["ph"] in ("B", "E", "X")), key=lambda e: e["ts"])
    for e in timed:
        key = (e["pid"], e["tid"])
        if e["ph"] == "X":
            tracks[key].append((e["ts"], e["ts"] + e["dur"], e["name"]))
        elif e["ph"] == "B":
            open_b[key].append(e)
        else:
            if not open_b[key]:
                fail(f"an E without its B on track {key} at {e['ts']}")
            b = open_b[key].pop()
            tracks[key].append((b["ts"], e["ts"], b["name"]))
    for key, left in open_b.items():
        if left:
            fail(f"a B without its E on track {key}: {left[0]['name']} at {left[0]['ts']}")
    return tracks


def check_nesting(tracks):
    eps = 1e-9
    for key, spans in tracks.items():
        stack = []
        for start, end, name in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
            while stack and stack[-1][1] <= start + eps:
                stack.pop()
            if stack and end > stack[-1][1] + eps:
                fail(f"track {key}: {name} [{start}, {end}] overlaps {stack[-1][2]} [{stack[-1][0]}, {stack[-1][1]}]"
                     " without nesting in it")
            stack.append((start, end, name))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--retransmission", action="store_true")
    ap.add_argument("--wrs", action="store_true")
    ap.add_argument("--only-qp")
    ap.add_argument("--window")
    ap.add_argument("--min-events", type=int, default=1)
    ap.add_argument("--expect", action="append", default=[], help="an event NAME on a track named TRACK")
    a = ap.parse_args()

    with open(a.file) as f:
        try:
            doc = json.load(f, parse_constant=no_constants)
        except ValueError as err:
            fail(f"{a.file} is not valid JSON: {err}")
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("not an object with a traceEvents array")
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        fail(f"displayTimeUnit {doc.get('displayTimeUnit')!r}")
    events = doc["traceEvents"]
    for i, e in enumerate(events):
        check_event(i, e)

    processes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    timed = [e for e in events if e["ph"] != "M"]
    for e in timed:
        if e["pid"] not in processes:
            fail(f"pid {e['pid']} has no process_name")
        if (e["pid"], e["tid"]) not in threads:
            fail(f"track {(e['pid'], e['tid'])} has no thread_name")
    check_nesting(spans_by_track(events))
    if len(timed) < a.min_events:
        fail(f"{len(timed)} events, expected at least {a.min_events}")

    def track_name(e):
        return threads[(e["pid"], e["tid"])]

    if a.wrs:
        stages = {e["name"] for e in timed if e.get("cat") == "stage"}
        for s in ("doorbell", "transmit", "CQE write"):
            if s not in stages:
                fail(f"no work request shows the stage {s!r} (stages: {sorted(stages)})")
        if not any(e.get("cat") == "wr" and re.search(r"WRs", track_name(e)) for e in timed):
            fail("no work request span on a QP's WR track")

    if a.retransmission:
        retx = [e for e in timed if e["ph"] == "i" and e["name"].startswith("retransmit")]
        if not retx:
            fail("no retransmission instant")
        for r in retx:
            label = track_name(r)
            if not re.fullmatch(r"QP 0x[0-9a-f]{6}", label):
                fail(f"retransmission on track {label!r}, not a QP's")
            psn = r["args"]["psn"]
            # The right QP: the one whose work requests (on its WR tracks, in
            # the same NIC) took that PSN.
            owners = [e for e in timed if e.get("cat") == "wr" and e["pid"] == r["pid"]
                      and track_name(e).startswith(label + " WRs") and "psn" in e.get("args", {})
                      and e["args"]["psn"] <= psn < e["args"]["psn"] + e["args"]["packets"]]
            if owners:
                break
        else:
            fail("no retransmission lies on the track of the QP whose work request took its PSN")
        print(f"retransmission on {label} (psn {psn}) of {processes[r['pid']]}")

    for want in a.expect:
        name, track = want.split("@")
        if not any(e["name"] == name and track_name(e) == track for e in timed):
            fail(f"no {name!r} on a track {track!r}")

    if a.only_qp:
        qpn = int(a.only_qp, 0)
        used = {track_name(e) for e in timed}
        for name in used:
            if not name.startswith(f"QP 0x{qpn:06x}"):
                fail(f"track {name!r} is not of QP {a.only_qp}")

    if a.window:
        lo, hi = (float(x) for x in a.window.split(":"))
        for e in timed:
            end = e["ts"] + e.get("dur", 0)
            if e["ts"] < lo - 1e-9 or end > hi + 1e-9:
                fail(f"{e['name']} [{e['ts']}, {end}] is outside the window [{lo}, {hi}]")

    print(f"ok: {len(timed)} events on {len({(e['pid'], e['tid']) for e in timed})} tracks of "
          f"{len(processes)} NICs")


if __name__ == "__main__":
    main()
