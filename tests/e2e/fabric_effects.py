#!/usr/bin/env python3
"""Fabric effects end to end, asserted on measured values.

usage: fabric_effects.py spreading RNICSIM SCENARIO_DIR WORKDIR TSHARK
       fabric_effects.py ecmp RNICSIM SCENARIO_DIR WORKDIR
       fabric_effects.py ecn RNICSIM SCENARIO_DIR WORKDIR TSHARK TSHARK_CHECK
       fabric_effects.py nic_pfc RNICSIM SCENARIO_DIR WORKDIR
       fabric_effects.py faults RNICSIM SCENARIO_DIR WORKDIR TSHARK TSHARK_CHECK
       fabric_effects.py scheduling RNICSIM SCENARIO_DIR WORKDIR TSHARK
       fabric_effects.py fat_tree RNICSIM SCENARIO_DIR WORKDIR
       fabric_effects.py gbn_loss RNICSIM SCENARIO_DIR WORKDIR
       fabric_effects.py ib_credits RNICSIM SCENARIO_DIR WORKDIR

spreading: the victim flow (v -> w, a path with room to spare) keeps its line
  rate without PFC, and loses more than 40% of it with PFC, where the incast on
  another port of the next switch pauses the link it shares (congestion
  spreading); with PFC nothing is dropped and s1's uplink was paused; the
  scenario's capture on that switch port holds as many PFC frames as the port
  counted, cut at the snap length, and lints without error.
ecmp: leaf0 spreads 64 flows over its 4 spine uplinks: every uplink carries at
  least half of an even share of the frames, and they add up to what leaf0's
  hosts sent to the other leaf.
ecn: an incast marks packets CE at the switch's egress; the switch's count,
  the receiving NIC's count, lint's CE count in the receiver's capture and
  tshark's all agree; the capture lints clean and decodes.
nic_pfc: a NIC with a slow receive side pauses its peer: it sends XOFF and XON,
  the peer's port stands paused, and the receive pipeline never holds more than
  its RX buffer and the headroom.
faults: a link that goes down loses what is sent meanwhile and a link with
  Gilbert-Elliott loss loses frames; go-back-N recovers both, the data is
  intact, and the capture lints clean with the retransmissions as observations.
scheduling: two streams on priorities 1 and 2 share a switch port. Strict
  priority gives priority 2 the whole port; DWRR 1 : 3 gives it three quarters
  while both send, so it takes 4/3 as long; either way the port is kept busy
  (the last byte arrives at the same time).
fat_tree: an all-to-all in a k = 4 fat-tree completes without a drop, and the
  traffic between pods crosses all 4 core switches, each at least half of an
  even share.
gbn_loss: go-back-N goodput under Bernoulli loss: above 90 Gb/s at 1e-5, well
  below that at 1e-3, under 2 Gb/s at 3%; the data arrives intact every time.
ib_credits: an IB incast through a switch drops and goes back N without credit
  flow control; with it nothing is dropped or retransmitted, the senders stall
  on credits and the receiver's link stays busy.
"""
import re
import json
import os
import shutil
import subprocess
import sys

mode, rnicsim, scen, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def run(name, pcap=None, sets=(), tag=""):
    out = f"{work}/{name}{tag}"
    r = subprocess.run([rnicsim, "run", f"{scen}/{name}.yaml", "--out", out] + (["--pcap", pcap] if pcap else []) +
                       [a for s in sets for a in ("--set", s)], capture_output=True, text=True)
    assert r.returncode == 0 and "result: completed" in r.stdout, r.stdout + r.stderr
    s = json.load(open(f"{out}/summary.json"))
    assert all(w["data_verified"] for w in s["workloads"]), s
    return s, json.load(open(f"{out}/stats.json"))["counters"]


def gbps(s, name):
    return [w for w in s["workloads"] if w["name"] == name][0]["gbps"]


if mode == "spreading":
    lossy, _ = run("spreading_lossy")
    pfc, stats = run("spreading_pfc")
    free, blocked = gbps(lossy, "victim"), gbps(pfc, "victim")
    assert lossy["drops"] > 0 and free > 90, (lossy["drops"], free)
    assert pfc["drops"] == 0 and pfc["retransmissions"] == 0, pfc
    assert blocked < 0.6 * free, (blocked, free)
    # s1's port 4 is its link to s2: s2 paused it.
    assert stats["s1.port4.pfc_pause_rx.p3"] > 0 and stats["s1.port4.pfc_paused_ps.p3"] > 0, stats
    print(f"victim: {free:.2f} Gb/s without PFC, {blocked:.2f} Gb/s with PFC "
          f"(s1's uplink paused {stats['s1.port4.pfc_paused_ps.p3'] / 1e6:.1f} us)")
    cap = f"{work}/spreading_pfc/s1_uplink.pcap"
    n_pfc = len(subprocess.run([sys.argv[5], "-n", "-r", cap, "-Y", "macc.opcode == 0x0101", "-T", "fields",
                                "-e", "frame.number"], capture_output=True, text=True, check=True).stdout.split())
    assert n_pfc == stats["s1.port4.pfc_pause_rx.p3"] + stats["s1.port4.pfc_xon_rx.p3"], (n_pfc, stats)
    lint = subprocess.run([rnicsim, "lint", cap], capture_output=True, text=True)
    assert lint.returncode == 0 and "headers only (cut by the capture's snap length" in lint.stdout, lint.stdout
    assert "0 errors, 0 warnings" in lint.stdout, lint.stdout
    print(f"s1's uplink capture: {n_pfc} PFC frames")
elif mode == "ecmp":
    s, stats = run("ecmp_leaf_spine")
    # leaf0: ports 0..7 go to h0..h7, ports 8..11 to spine0..3.
    up = [stats[f"leaf0.port{8 + i}.tx_frames"] for i in range(4)]
    sent = sum(stats[f"h{i}.nic.tx_packets"] for i in range(8))
    assert sum(up) == sent, (up, sent)
    assert min(up) >= sum(up) / 4 / 2, up
    assert s["drops"] == 0, s
    print(f"leaf0 uplinks carried {up} frames ({sent} sent by its hosts)")
elif mode == "ecn":
    tshark, check = sys.argv[5:7]
    pcap = f"{work}/r.pcap"
    s, stats = run("incast_ecn", pcap)
    f = s["fabric"]
    assert f["ecn_marked"] > 0 and f["ecn_marked"] == f["ecn_ce_received"], f
    assert s["drops"] == 0, s
    lint = subprocess.run([rnicsim, "lint", pcap], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    lint_ce = sum(int(n) for n in re.findall(r"(\d+) CE/FECN marked", lint.stdout))
    ws = subprocess.run([tshark, "-n", "-r", pcap, "-Y", "ip.dsfield.ecn == 3", "-T", "fields", "-e", "frame.number"],
                        capture_output=True, text=True, check=True).stdout.split()
    assert lint_ce == len(ws) == f["ecn_marked"], (lint_ce, len(ws), f["ecn_marked"])
    subprocess.run([check, tshark, pcap], check=True)
    print(f"{f['ecn_marked']} packets marked CE; r's NIC, lint and tshark count the same")
elif mode == "nic_pfc":
    s, stats = run("nic_pfc")
    assert s["drops"] == 0 and s["retransmissions"] == 0, s
    assert stats["b.port0.pfc_xoff_tx.p3"] > 0 and stats["b.port0.pfc_xon_tx.p3"] > 0, stats
    assert stats["a.port0.pfc_pause_rx.p3"] == stats["b.port0.pfc_xoff_tx.p3"], stats
    assert stats["a.port0.pfc_paused_ps.p3"] > 0, stats
    peak = stats["b.nic.rx_buffer_peak_bytes"]
    # 64 KiB buffer; mlx5's headroom for 1 us (200 m) at 100 Gb/s is more than
    # half of it, so XOFF comes at half the buffer and what the headroom allows
    # for arrives on top: the peak stays within XOFF + headroom.
    headroom = stats["b.port0.pfc_headroom_bytes"]
    assert headroom > 32 * 1024, headroom
    assert 16 * 1024 < peak <= 32 * 1024 + headroom, (peak, headroom)
    print(f"b paused a {stats['b.port0.pfc_xoff_tx.p3']} times; b's receive buffer peaked at {peak} bytes")
elif mode == "faults":
    tshark, check = sys.argv[5:7]
    pcap = f"{work}/a.pcap"
    s, stats = run("link_faults", pcap)
    down, burst = stats.get("a.port0.drops_link_down", 0), stats["c.port0.drops_loss"]
    assert down > 0 and burst > 0, stats
    assert s["drops"] == down + burst and s["retransmissions"] > 0, s
    lint = subprocess.run([rnicsim, "lint", pcap], capture_output=True, text=True)
    assert lint.returncode == 0 and "observation: retransmission" in lint.stdout, lint.stdout
    subprocess.run([check, tshark, pcap], check=True)
    print(f"link down: {down} frames lost; Gilbert-Elliott: {burst} lost; {s['retransmissions']} retransmitted, data intact")
elif mode == "scheduling":
    times = {}
    for name in ("strict", "dwrr"):
        s, _ = run(name)
        assert s["drops"] == 0, s
        times[name] = {w["name"]: w["seconds"] for w in s["workloads"]}
    cap = f"{work}/dwrr/c_priority2.pcap"
    dscp = subprocess.run([sys.argv[5], "-n", "-r", cap, "-T", "fields", "-e", "ip.dsfield.dscp", "-e", "ip.src"],
                          capture_output=True, text=True, check=True).stdout.split("\n")
    rows = [l.split("\t") for l in dscp if l]
    assert rows and all(d == "16" for d, _ in rows), set(d for d, _ in rows)
    assert sum(1 for _, src in rows if src == "10.0.0.2") == 64 * 16, len(rows)  # 64 x 64 KiB in 4 KiB packets
    assert subprocess.run([rnicsim, "lint", cap], capture_output=True).returncode == 0
    ratio = times["dwrr"]["p2"] / times["strict"]["p2"]
    assert 1.25 < ratio < 1.42, times
    assert abs(times["dwrr"]["p1"] / times["strict"]["p1"] - 1) < 0.01, times
    print(f"priority 2 finishes in {times['strict']['p2'] * 1e6:.1f} us under strict priority, "
          f"{times['dwrr']['p2'] * 1e6:.1f} us under DWRR 1:3 (x{ratio:.3f}, 4/3 expected)")
elif mode == "fat_tree":
    s, stats = run("fat_tree")
    assert s["drops"] == 0 and s["fabric"]["switches"] == 20, s
    core = [stats[f"core{i}.forwarded"] for i in range(4)]
    assert min(core) >= sum(core) / 4 / 2, core
    print(f"fat-tree all-to-all: {s['messages']} flows, core switches forwarded {core}")
elif mode == "gbn_loss":
    # Each loss costs what was on the wire behind it (the link's round trip):
    # what still waited in the NIC's transmit buffer is taken back, not sent
    # twice, so a 4 MiB transmit buffer no longer resends ~30x what a 128 KiB one does.
    s, stats = run("gbn_loss")
    g = {w["name"]: w["gbps"] for w in s["workloads"]}
    deep, deep_stats = run("gbn_loss", sets=["nic.tx_buffer_bytes=4194304"], tag="_deep")
    d = {w["name"]: w["gbps"] for w in deep["workloads"]}
    assert g["loss_1e-5"] > 90, g
    assert 0.85 * g["loss_1e-5"] < g["loss_1e-3"] < 0.99 * g["loss_1e-5"], g
    # At 3e-2 a lost NAK or resend is NAKed again within microseconds (the
    # responder's NAK timer, the packets behind a lost resend), not left to the
    # 67 ms ACK timeout: go-back-N keeps a fair share of the link.
    assert 30 < g["loss_3e-2"] < 0.8 * g["loss_1e-3"], g
    assert stats["e.nic.completer.timeouts"] == 0, stats["e.nic.completer.timeouts"]
    assert stats["f.nic.responder.repeated_naks"] > 0, stats["f.nic.responder.repeated_naks"]
    assert d["loss_1e-3"] > 0.9 * g["loss_1e-3"], (d, g)
    # Host c sends on the 1e-3 link.
    resent = stats["c.nic.retransmitted_packets"]
    resent_deep = deep_stats["c.nic.retransmitted_packets"]
    assert resent_deep < 4 * resent, (resent, resent_deep)
    print("go-back-N goodput: " + ", ".join(f"{k} {v:.2f} Gb/s" for k, v in g.items()) +
          f"; with a 4 MiB transmit buffer at 1e-3: {d['loss_1e-3']:.2f} Gb/s" +
          f"; packets resent {resent} and {resent_deep}")
elif mode == "ib_credits":
    lossy, _ = run("ib_incast")
    assert lossy["drops"] > 0 and lossy["retransmissions"] > 0, lossy
    s, _ = run("ib_incast_credits")
    f = s["fabric"]
    assert s["drops"] == 0 and s["retransmissions"] == 0, s
    assert f["credit_stalls"] > 0 and f["credit_stall_us"] > 0, f
    gbps = s["bytes"] * 8 / s["simulated_seconds"] / 1e9
    assert gbps > 85, gbps
    print(f"IB incast: {lossy['drops']} drops without credits; with credits none, "
          f"{f['credit_stalls']} credit stalls, {gbps:.1f} Gb/s into the receiver")
else:
    sys.exit(f"unknown mode {mode}")
