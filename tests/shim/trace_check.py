# Checks a RNICSIM_TRACE file: every line is a JSON object with a time, a pid
# and a thread, and the trace holds the calls named on the command line (in
# each of the processes) and, unless --calls-only, work requests and completions.
# usage: trace_check.py TRACE PROCESSES [--calls-only] CALL...
import collections
import json
import sys

path, processes = sys.argv[1], int(sys.argv[2])
args = sys.argv[3:]
calls_only = "--calls-only" in args
wanted = [a for a in args if a != "--calls-only"]
by_pid = collections.defaultdict(collections.Counter)
with open(path) as f:
    for n, line in enumerate(f, 1):
        d = json.loads(line)
        assert isinstance(d["t_ns"], int) and d["pid"] > 0 and d["tid"] > 0, (n, d)
        kind = d.get("call") or ("wr:" + d["wr"] if "wr" in d else "wc" if "wc" in d else None)
        assert kind is not None, (n, d)
        by_pid[d["pid"]][kind] += 1
assert len(by_pid) == processes, f"{len(by_pid)} processes in the trace, expected {processes}"
for pid, counts in by_pid.items():
    missing = [c for c in wanted if counts[c] == 0]
    assert not missing, f"process {pid}: no {missing} in the trace"
    if not calls_only:
        assert counts["wr:send"] > 0 and counts["wr:recv"] > 0 and counts["wc"] > 0, (pid, counts)
    print(pid, dict(counts))
print("trace ok")
