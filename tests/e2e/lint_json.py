#!/usr/bin/env python3
"""rnicsim lint --json of a lossy run's capture: one JSON object holding the
same findings as the text report, each with its frame, kind, QP and PSN.

usage: lint_json.py RNICSIM SCENARIO WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

rnicsim, scenario, d = sys.argv[1:4]
shutil.rmtree(d, ignore_errors=True)
os.makedirs(d)
pcap = os.path.join(d, "l.pcap")
subprocess.run([rnicsim, "run", scenario, "--pcap", pcap], check=True, capture_output=True)
text = subprocess.run([rnicsim, "lint", pcap], check=True, capture_output=True, text=True).stdout
out = subprocess.run([rnicsim, "lint", "--json", pcap], check=True, capture_output=True, text=True).stdout
j = json.loads(out)
assert j["schema"] == "rnicsim.lint" and j["schema_version"] == 1, j["schema"]
assert j["errors"] == 0 and j["observations"] > 0, (j["errors"], j["observations"])

# The same findings as the text report, line for line.
lines = re.findall(r"^  frame (\d+): (\w+): (.*)$", text, re.M)
assert [(f["frame"], f["severity"], f["message"]) for f in j["findings"]] == [(int(a), b, c) for a, b, c in lines]
assert len(j["findings"]) == j["errors"] + j["warnings"] + j["observations"]

# A retransmission's PSN and QP are the ones its message names.
retx = [f for f in j["findings"] if f["kind"] == "retransmission"]
assert retx, j["findings"][:5]
for f in retx:
    m = re.search(r"to 0x([0-9a-f]{6}) on .* QPN 0x([0-9a-f]{6})", f["message"])
    assert (int(m.group(1), 16), int(m.group(2), 16)) == (f["psn"], f["qp"]), f
kinds = sorted({f["kind"] for f in j["findings"]})
print("lint --json: %d findings (%s) as objects, %d streams" % (len(j["findings"]), ", ".join(kinds), len(j["streams"])))
