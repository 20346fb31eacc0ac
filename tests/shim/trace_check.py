# Checks a RNICSIM_TRACE file: every line is a JSON object with a time, a pid
# and a thread, and the trace holds the calls named on the command line (in
# each of the processes) and, unless --calls-only, work requests and completions.
# Every call of a thread returns, in order, with its errno and (but for void
# functions) its value; ibv_create_qp returns a pointer and ibv_modify_qp 0;
# send and receive work requests name their QP with the same key.
# usage: trace_check.py TRACE PROCESSES [--calls-only] CALL...
import collections
import json
import sys

path, processes = sys.argv[1], int(sys.argv[2])
args = sys.argv[3:]
calls_only = "--calls-only" in args
wanted = [a for a in args if a != "--calls-only"]
by_pid = collections.defaultdict(collections.Counter)
open_calls = collections.defaultdict(list)  # (pid, tid) -> calls not yet returned
with open(path) as f:
    for n, line in enumerate(f, 1):
        d = json.loads(line)
        assert isinstance(d["t_ns"], int) and d["pid"] > 0 and d["tid"] > 0, (n, d)
        thread = (d["pid"], d["tid"])
        if "return" in d:
            assert open_calls[thread] and open_calls[thread].pop() == d["return"], (n, d, open_calls[thread])
            assert isinstance(d["errno"], int), (n, d)
            if d["return"] == "ibv_create_qp":
                assert d["value"].startswith("0x") and int(d["value"], 16) != 0, (n, d)
            if d["return"] == "ibv_modify_qp":
                assert d["value"] == 0, (n, d)
            by_pid[d["pid"]]["return:" + d["return"]] += 1
            continue
        if "wr" in d:
            assert "qp" in d or "srq" in d, (n, d)
        kind = d.get("call") or ("wr:" + d["wr"] if "wr" in d else "wc" if "wc" in d else None)
        assert kind is not None, (n, d)
        if "call" in d:
            open_calls[thread].append(d["call"])
        by_pid[d["pid"]][kind] += 1
assert len(by_pid) == processes, f"{len(by_pid)} processes in the trace, expected {processes}"
for pid, counts in by_pid.items():
    missing = [c for c in wanted if counts[c] == 0 or counts["return:" + c] != counts[c]]
    assert not missing, f"process {pid}: no {missing} in the trace"
    if not calls_only:
        assert counts["wr:send"] > 0 and counts["wr:recv"] > 0 and counts["wc"] > 0, (pid, counts)
    print(pid, dict(counts))
print("trace ok")
