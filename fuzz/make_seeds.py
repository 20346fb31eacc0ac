#!/usr/bin/python3
"""Writes the fuzzers' seed corpora (fuzz/corpus/*): small, valid inputs the
fuzzers start from.

  fuzz/make_seeds.py PCAP_DIR

PCAP_DIR holds the pcaps tests/packet/write_opcode_pcaps writes (one packet per
valid opcode for RoCEv2/IPv4, RoCEv2/IPv6 and InfiniBand), and cm_mads.pcap,
which tests/cm/cm_pcap writes (every CM MAD as a RoCEv2/IPv4 UD SEND).
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_pcap(path):
    """(link type, [frames]) of a classic pcap file."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = struct.unpack('<I', data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), path
    link = struct.unpack('<I', data[20:24])[0]
    frames, at = [], 24
    while at + 16 <= len(data):
        caplen = struct.unpack('<I', data[at + 8:at + 12])[0]
        frames.append(data[at + 16:at + 16 + caplen])
        at += 16 + caplen
    return link, frames


def write_pcap(path, link, frames):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xA1B23C4D, 2, 4, 0, 0, 65535, link))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1, i * 1000, len(fr), len(fr)))
            f.write(fr)


def write(kind, name, data):
    d = os.path.join(HERE, 'corpus', kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def pfc_frame():
    body = struct.pack('>HH8H', 0x0101, 0x0009, 0xFFFF, 0, 0, 0x10, 0, 0, 0, 0)
    frame = bytes.fromhex('0180c2000001' '020000000001') + struct.pack('>H', 0x8808) + body
    return frame + bytes(60 - len(frame))


def packet_and_pcap_seeds(pcap_dir):
    for name, first_byte in (('roce_ipv4', 0), ('roce_ipv6', 0), ('ib', 1)):
        link, frames = read_pcap(os.path.join(pcap_dir, name + '.pcap'))
        for i, fr in enumerate(frames):
            write('packet', '%s_%02d' % (name, i), bytes([first_byte]) + fr)
        # Captures: a few packets each, whole and cut short.
        # (No .pcap suffix: the project's .gitignore leaves out *.pcap.)
        path = os.path.join(HERE, 'corpus', 'pcap', name)
        write_pcap(path, link, frames[:12])
        with open(path, 'rb') as f:
            whole = f.read()
        write('pcap', name + '_truncated', whole[:len(whole) * 2 // 3])
    write('packet', 'pfc', bytes([0]) + pfc_frame())
    write_pcap(os.path.join(HERE, 'corpus', 'pcap', 'pfc'), 1, [pfc_frame()])


def cm_mad_seeds(pcap_dir):
    # The MAD after Ethernet, IPv4, UDP, BTH and DETH headers.
    _, frames = read_pcap(os.path.join(pcap_dir, 'cm_mads.pcap'))
    names = ('req', 'mra', 'rep', 'rtu', 'dreq', 'drep', 'rej', 'sidr_req', 'sidr_rep')
    for name, fr in zip(names, frames):
        write('cm_mad', name, fr[62:62 + 256])


# --- control protocol: records of the control fuzzer (see control_fuzzer.cpp) ---
MAGIC, VERSION = 0x524E4943, 5  # verbs_shim/protocol.hpp
(HELLO, OPEN_CONTEXT, CLOSE_CONTEXT, ALLOC_PD, DEALLOC_PD, REG_MR, DEREG_MR, CREATE_CQ, DESTROY_CQ, CREATE_QP,
 MODIFY_QP, QUERY_QP, DESTROY_QP, CREATE_SRQ, MODIFY_SRQ, DESTROY_SRQ, CREATE_AH, REREG_MR, SETTLE_CQ,
 RESIZE_CQ, SHARE_RUNS) = range(1, 22)


def framed(op, body, client=0, with_fd=False):
    """A record whose header the fuzzer writes."""
    data = struct.pack('<H', op) + body
    return bytes([client | (4 if with_fd else 0), len(data)]) + data


def raw(op, body, client=0, magic=MAGIC, version=VERSION, length=None):
    """A record sent as is: header and body."""
    data = struct.pack('<IHHIi', magic, version, op, len(body) if length is None else length, 0) + body
    return bytes([client | 8, len(data)]) + data


def hello_body(host=b''):
    # pid, host, probe word address and value (none: the daemon cannot read it)
    return struct.pack('<i64s4xQQ', 0, host, 0, 0)


def reg_mr(ctx, pd, addr, length, access, lkey=0, shared_runs=0):
    return struct.pack('<IIQQQIIII', ctx, pd, addr, length, addr, access, lkey, shared_runs, 0)


def obj(ctx, oid, value=0):
    return struct.pack('<IIQ', ctx, oid, value)


def ah(dgid=bytes(16), dlid=0, is_global=1):
    return dgid + struct.pack('<IHBBBBBB', 0, dlid, 0, 64, 0, 0, is_global, 1)


def modify(ctx, qpn, mask, state, mtu=5, dgid=bytes(16)):
    return (struct.pack('<11I', ctx, qpn, mask, state, 0, mtu, 0, 0, 0, 1, 7) +
            struct.pack('<HBBBBBBB3x', 0, 1, 1, 1, 12, 14, 7, 7) + ah(dgid))


def control_seeds():
    hello = framed(HELLO, hello_body())
    hello_host1 = framed(HELLO, hello_body(b'host1'), client=1)
    opened = hello + framed(OPEN_CONTEXT, struct.pack('<I', 0), with_fd=True)
    ctx = 2  # the well-behaved client has context 1
    setup = (opened + framed(ALLOC_PD, obj(ctx, 0)) +
             framed(REG_MR, reg_mr(ctx, 2, 0x10000, 4096, 0xF)) +
             framed(CREATE_CQ, struct.pack('<4I', ctx, 64, 1, 7), with_fd=True) +
             framed(CREATE_CQ, struct.pack('<4I', ctx, 64, 0, 0)))
    qp = framed(CREATE_QP, struct.pack('<12I', ctx, 2, 2, 3, 0, 2, 0, 16, 16, 1, 1, 0))
    gid = bytes(10) + b'\xff\xff' + bytes([10, 0, 0, 2])
    write('control', 'hello', hello)
    write('control', 'two_hosts', hello + hello_host1)
    write('control', 'open_close', opened + framed(CLOSE_CONTEXT, obj(ctx, 0)))
    write('control', 'setup', setup)
    write('control', 'qp_to_rts', setup + qp +
          framed(MODIFY_QP, modify(ctx, 1, 0x1 | 0x10 | 0x20 | 0x8, 1)) +
          framed(MODIFY_QP, modify(ctx, 1, 0x1 | 0x80 | 0x100 | 0x1000 | 0x20000 | 0x8000, 2, dgid=gid)) +
          framed(MODIFY_QP, modify(ctx, 1, 0x1 | 0x200 | 0x400 | 0x800 | 0x10000 | 0x2000, 3)) +
          framed(QUERY_QP, obj(ctx, 1)) + framed(DESTROY_QP, obj(ctx, 1)))
    write('control', 'srq_ah', setup +
          framed(CREATE_SRQ, struct.pack('<6I', ctx, 2, 64, 1, 4, 0)) +
          framed(MODIFY_SRQ, obj(ctx, 1, 8)) +
          framed(CREATE_AH, struct.pack('<II', ctx, 2) + ah(gid)) +
          framed(DESTROY_SRQ, obj(ctx, 1)))
    write('control', 'rereg_dereg', setup +
          framed(REREG_MR, reg_mr(ctx, 2, 0x20000, 8192, 0x1, lkey=0x100)) +
          framed(DEREG_MR, obj(ctx, 0x100)) + framed(DESTROY_CQ, obj(ctx, 2)) + framed(DEALLOC_PD, obj(ctx, 2)))
    # Shared pages: a run whose descriptor is not a sealed memfd (the fuzzer
    # attaches /dev/null), then a registration that counts on it.
    runs = struct.pack('<II', ctx, 1) + struct.pack('<3Q', 0x10000, 4096, 0) + bytes(3 * 24)
    write('control', 'share_runs', setup + framed(SHARE_RUNS, runs, with_fd=True) +
          framed(REG_MR, reg_mr(ctx, 2, 0x10000, 4096, 0x1, shared_runs=1)))
    write('control', 'settle', setup + framed(SETTLE_CQ, obj(ctx, 2)))
    write('control', 'resize', setup + framed(RESIZE_CQ, obj(ctx, 2, 16)) + framed(RESIZE_CQ, obj(ctx, 2, 0)) +
          framed(RESIZE_CQ, obj(ctx, 2, 1 << 20)))
    # Another client's objects, and malformed headers.
    write('control', 'foreign', opened + framed(DESTROY_CQ, obj(1, 1)) + framed(DEALLOC_PD, obj(1, 1)))
    write('control', 'raw', raw(HELLO, hello_body()) + raw(OPEN_CONTEXT, struct.pack('<I', 0)))
    write('control', 'bad_headers', raw(HELLO, bytes(88), magic=0) + raw(HELLO, bytes(88), version=VERSION + 1, client=1) +
          raw(HELLO, bytes(88), length=100, client=2))
    write('control', 'hang_up', opened + bytes([16, 0]) + opened)


def rx(opcode, to_x=False, psn=4, length=0, va=0, dma=0, flags=0, raw=0, use_raw=0, syndrome=0, change=None):
    """A packet description of the NIC receive fuzzer (see nic_rx_fuzzer.cpp)."""
    flags |= 1 if to_x else 0
    at, xor = (0, 0)
    if change:
        flags |= 8
        at, xor = change
    return (bytes([opcode, flags]) + struct.pack('<I', psn)[:3] + struct.pack('<HBIiIHBB', length, use_raw, raw, va,
                                                                               dma, at, xor, syndrome))


def nic_rx_seeds():
    write('nic_rx', 'write_send_read', rx(0x0A, length=64, dma=64, flags=2) + rx(0x04, psn=5, length=100) +
          rx(0x0C, psn=6, va=4096, dma=8192))
    write('nic_rx', 'atomics', rx(0x13, va=8, raw=7) + rx(0x14, psn=5, va=16, raw=1))
    write('nic_rx', 'write_first_last', rx(0x06, length=4096, dma=6000) + rx(0x08, psn=5, length=1904))
    write('nic_rx', 'responses', rx(0x11, to_x=True, psn=1) + rx(0x10, to_x=True, psn=3, length=4096) +
          rx(0x11, to_x=True, psn=3, syndrome=0x60))
    write('nic_rx', 'out_of_bounds', rx(0x0A, length=64, va=-64, dma=64) + rx(0x0A, psn=5, length=8, va=1 << 30,
                                                                              dma=8) + rx(0x0C, psn=6, raw=99,
                                                                                          use_raw=1, dma=64))
    write('nic_rx', 'psn_and_changes', rx(0x0A, psn=100, length=8, dma=8) + rx(0x04, psn=3, length=8) +
          rx(0x04, psn=4, length=8, change=(50, 0x10)) + rx(0x04, psn=4, length=8, change=(42, 0x01), flags=16))
    write('nic_rx', 'cnp_and_ud', rx(0x81, flags=0xC0) + rx(0x64, length=32, raw=0x11111111))


def scenario_seeds():
    sources = [os.path.join(ROOT, 'tests', 'e2e', 'scenarios'), os.path.join(ROOT, 'scenarios')]
    for d in sources:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not name.endswith('.yaml') or not os.path.isfile(path):
                continue
            with open(path, 'rb') as f:
                text = f.read()
            # The fuzzer skips texts with '/' or '\\' (they could name files elsewhere).
            text = b'\n'.join(line for line in text.split(b'\n') if not line.lstrip().startswith(b'#'))
            if b'/' in text or b'\\' in text or len(text) > 4096:
                continue
            write('scenario', name, text)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    packet_and_pcap_seeds(sys.argv[1])
    cm_mad_seeds(sys.argv[1])
    control_seeds()
    nic_rx_seeds()
    scenario_seeds()


if __name__ == '__main__':
    main()
