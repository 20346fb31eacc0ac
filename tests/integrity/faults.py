#!/usr/bin/python3
"""Data integrity under faults: every RC operation of integrity_ops.yaml, checked
end to end under one fault setting of the table below.

usage: faults.py RNICSIM SCENARIO WORKDIR RUN [--seed N]

For every workload of the run:
  - every send WQE posted completes exactly once (all are signaled);
  - per QP the completions are SUCCESS, then at most one error, then only
    WR_FLUSH_ERR: when the requester's retries run out (retry_cnt timeouts with no
    progress) the WQE waiting for its ACK completes with RETRY_EXC_ERR, the QP
    enters the Error state and every WQE after it is flushed (IBTA 10.3.1,
    C10-29: errors complete even unsignaled WQEs);
  - the only error is RETRY_EXC_ERR, at most one per QP;
  - without an error: the workload completes, the target memory (or the atomic's
    count) holds exactly what was sent, and the receives completed equal the
    messages that consume one (no retransmitted SEND or WRITE_WITH_IMM delivered
    twice, each immediate in order).
Prints one line of figures (bytes moved and verified, drops, retransmissions).
"""
import json
import os
import subprocess
import sys

# Bursts of lost frames, 2 frames long on average. The chain moves per frame,
# so a lone QP on an idle link (the latency workloads) meets a burst with its
# own retransmissions alone: its retry_cnt + 1 = 8 tries of a 2-frame message
# all fall in one burst with probability 0.5^15, a few in 10^4 runs. Longer
# bursts (0.7^15 at p_bad_good 0.3) ran the retries out in 4 seeds of 100:
# that is the outage run's outcome, not this one's.
GE_BURST = "{p_good_bad: 0.01, p_bad_good: 0.5, loss_good: 0, loss_bad: 1}"
# Corrupt 3 frames at 5 places in each direction (requests one way, ACKs and
# responses the other; both carry more than 3 000 frames): 30 frames.
CORRUPT_AT = (40, 700, 1500, 2300, 3000)
CORRUPTED = 3 * len(CORRUPT_AT) * 2
CORRUPT = "[" + ", ".join("{link: [a, b], action: corrupt, nth: %d, count: 3}" % n for n in CORRUPT_AT) + "]"

# name: (--set arguments, what must be seen: "drops", "rx_errors", "retry_exc")
RUNS = {
    "clean": ([], None),
    "loss_0.1pct": (["links.0.loss=0.001"], "drops"),
    "loss_1pct": (["links.0.loss=0.01"], "drops"),
    "loss_10pct": (["links.0.loss=0.1"], "drops"),
    "burst": (["links.0.gilbert_elliott=" + GE_BURST], "drops"),
    "corrupt": (["faults=" + CORRUPT], "rx_errors"),
    # Short outages: the ACK timeout recovers them.
    "flaps": (["links.0.down=[{from: 100us, to: 150us}, {from: 400us, to: 420us}, {from: 1ms, to: 1.3ms}]"], "drops"),
    # An outage longer than retry_cnt (7) timeouts of 67 ms: retries run out.
    "outage": (["links.0.down=[{from: 100us, to: 2s}]"], "retry_exc"),
}
ALLOWED_ERRORS = {"RETRY_EXC_ERR", "WR_FLUSH_ERR"}


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_workload(w):
    name = w["name"]
    c = w["send_completions"]
    done = sum(c.values())
    if done != w["sends_posted"]:
        fail("%s: %d send WQEs posted, %d completions %s" % (name, w["sends_posted"], done, c))
    if not w["completion_order_ok"]:
        fail("%s: a QP completed a WQE with SUCCESS or an error after its first error" % name)
    other = set(c) - {"SUCCESS"} - ALLOWED_ERRORS
    if other:
        fail("%s: unexpected completion statuses %s" % (name, sorted(other)))
    retry_exc = c.get("RETRY_EXC_ERR", 0)
    if c.get("WR_FLUSH_ERR", 0) and not retry_exc:
        fail("%s: flushed WQEs without the error that flushed them" % name)
    qps = w["qps"] if w["pattern"] == "bw" else 2
    if retry_exc > qps:
        fail("%s: %d RETRY_EXC_ERR on %d QPs" % (name, retry_exc, qps))
    if retry_exc:
        if w["completed"]:
            fail("%s: completed despite RETRY_EXC_ERR" % name)
        return retry_exc
    if not w["completed"] or not w["data_verified"]:
        fail("%s: completed %s, data_verified %s (%s)" % (name, w["completed"], w["data_verified"], w.get("failure")))
    if w["bytes_verified"] <= 0:
        fail("%s: no byte verified" % name)
    if w["receives_completed"] != w["receives_expected"]:
        fail("%s: %d messages needing a receive posted, %d receive completions" %
             (name, w["receives_expected"], w["receives_completed"]))
    return 0


def main():
    rnicsim, scenario, workdir, run = sys.argv[1:5]
    extra = sys.argv[5:]
    sets, must_see = RUNS[run]
    out = os.path.join(workdir, run)
    cmd = [rnicsim, "run", scenario, "--out", out] + extra
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        fail("rnicsim exited %d\n%s%s" % (p.returncode, p.stdout, p.stderr))
    s = json.load(open(os.path.join(out, "summary.json")))
    retry_exc = sum(check_workload(w) for w in s["workloads"])
    if retry_exc and run != "outage":
        fail("retries ran out under %s: %s" % (run, s["completions"]))
    seen = {"drops": s["drops"], "rx_errors": s["rx_errors"], "retry_exc": retry_exc}
    if must_see and seen[must_see] == 0:
        fail("the fault did nothing: no %s" % must_see)
    if run == "corrupt" and s["rx_errors"] != CORRUPTED:
        fail("%d frames corrupted, %d caught by the ICRC check" % (CORRUPTED, s["rx_errors"]))
    if run == "outage" and s["completed"]:
        fail("the run completed through a 2 s outage")
    ok = [w for w in s["workloads"] if w["completed"]]
    print("%s: %d workloads (%d completed, %d failed with RETRY_EXC_ERR), %d WQEs, completions %s, "
          "%d bytes moved, %d bytes verified, %d receives (0 duplicates), drops %d, rx_errors %d, "
          "retransmissions %d" % (
              run, len(s["workloads"]), len(ok), len(s["workloads"]) - len(ok),
              sum(w["sends_posted"] for w in s["workloads"]), s["completions"],
              sum(w["bytes"] for w in ok), sum(w["bytes_verified"] for w in ok),
              sum(w["receives_completed"] for w in s["workloads"]),
              s["drops"], s["rx_errors"], s["retransmissions"]))


if __name__ == "__main__":
    main()
