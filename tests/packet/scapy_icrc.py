#!/usr/bin/python3
"""Recompute the ICRC of every RoCEv2 packet in the given pcaps and compare it
with the one in the packet.

IPv4: scapy's own scapy.contrib.roce BTH.compute_icrc() (scapy builds the
masked pseudo packet itself). scapy has no IPv6 ICRC, so IPv6 packets are
checked by masking the bytes scapy's dissection locates (IPv6 traffic class,
flow label, hop limit, UDP checksum, BTH resv8a) and running zlib.crc32; that
byte-level path is also run on every IPv4 packet and must agree with scapy's.

Exit status 1 on any mismatch, or if no packet was checked.
"""
import struct
import sys
import zlib

from scapy.all import rdpcap, raw, Dot1Q  # noqa: F401  (Dot1Q: make sure VLAN is dissected)
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.contrib.roce import BTH


def masked_icrc(l3: bytes, v6: bool) -> int:
    b = bytearray(l3)
    if v6:
        b[0] |= 0x0F
        b[1] = b[2] = b[3] = 0xFF
        b[7] = 0xFF
        ihl = 40
    else:
        ihl = (b[0] & 0x0F) * 4
        b[1] = 0xFF
        b[8] = 0xFF
        b[10] = b[11] = 0xFF
    b[ihl + 6] = b[ihl + 7] = 0xFF  # UDP checksum
    b[ihl + 8 + 4] = 0xFF  # BTH resv8a
    return zlib.crc32(b"\xff" * 8 + bytes(b[:-4])) & 0xFFFFFFFF


def main(paths):
    checked = 0
    failures = 0
    for path in paths:
        for n, p in enumerate(rdpcap(path), start=1):
            where = f"{path} frame {n}"
            if BTH not in p or UDP not in p:
                print(f"{where}: scapy found no RoCEv2 BTH")
                failures += 1
                continue
            if IP in p:
                l3 = raw(p[IP])[: p[IP].len]
                v6 = False
            elif IPv6 in p:
                l3 = raw(p[IPv6])[: 40 + p[IPv6].plen]
                v6 = True
            else:
                print(f"{where}: no IP layer")
                failures += 1
                continue
            received = struct.unpack("<I", l3[-4:])[0]
            ours = masked_icrc(l3, v6)
            opname = p[BTH].sprintf("%BTH.opcode%")
            if not v6:
                scapy_icrc = struct.unpack("<I", p[BTH].compute_icrc(None))[0]
                if scapy_icrc != received:
                    print(f"{where} {opname}: scapy ICRC {scapy_icrc:08x} != packet {received:08x}")
                    failures += 1
                if scapy_icrc != ours:
                    print(f"{where} {opname}: byte-level ICRC {ours:08x} != scapy {scapy_icrc:08x}")
                    failures += 1
            elif ours != received:
                print(f"{where} {opname}: IPv6 ICRC {ours:08x} != packet {received:08x}")
                failures += 1
            checked += 1
    print(f"checked {checked} packets, {failures} mismatches")
    return 0 if checked > 0 and failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
