#!/usr/bin/python3
"""Isolation of the emulation daemon's clients, through its control protocol.

usage: isolation.py RNICSIM WORKDIR

  - the socket's missing directory is created private (0700) (an existing one
    is left as it is: tests/shim/serve_socket_dir.sh);
  - a connection from another uid is refused (SO_PEERCRED) and the daemon keeps
    serving its own user;
  - destroying a CQ a QP uses or a PD an MR uses is EBUSY;
  - a client that names another client's context, PD, MR (lkey), CQ or QP is
    refused (EBADF for the context, EINVAL for the objects) and the other
    client's objects are untouched: it queries and destroys them afterwards.
"""
import array
import ctypes
import errno
import os
import re
import socket
import stat
import struct
import subprocess
import sys
import time

MAGIC = 0x524E4943
# The protocol's version, read where it is declared.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../verbs_shim/protocol.hpp")) as _f:
    VERSION = int(re.search(r"kVersion = (\d+);", _f.read()).group(1))
HDR = struct.Struct("<IHHIi")  # magic, version, op, length, status
(HELLO, OPEN_CONTEXT, CLOSE_CONTEXT, ALLOC_PD, DEALLOC_PD, REG_MR, DEREG_MR, CREATE_CQ, DESTROY_CQ, CREATE_QP,
 MODIFY_QP, QUERY_QP, DESTROY_QP, CREATE_SRQ, MODIFY_SRQ, DESTROY_SRQ, CREATE_AH, REREG_MR, SETTLE_CQ) = range(1, 20)
IBV_QPT_RC = 2
IBV_QPS_INIT, IBV_QPS_ERR = 1, 6
INIT_MASK = 1 | 8 | 16 | 32  # state, access flags, pkey index, port
ACCESS_ALL = 0xF


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def object_req(ctx, oid=0, value=0):
    return struct.pack("<IIQ", ctx, oid, value)


def modify_qp_req(ctx, qpn, state, mask=1):
    # ctx qpn mask state cur_state path_mtu qkey rq_psn sq_psn dest_qpn access,
    # pkey_index, port_num and 6 more u8 fields, 3 reserved, then the AhWire (28 bytes).
    return struct.pack("<IIIIIIIIIIIH10B", ctx, qpn, mask, state, 0, 0, 0, 0, 0, 0, 0, 0, 1, *([0] * 9)) + bytes(28)


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(path)
        self.keep = []

    def call(self, op, body=b"", fds=()):
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        self.sock.sendmsg([HDR.pack(MAGIC, VERSION, op, len(body), 0) + body], anc)
        msg, anc, _, _ = self.sock.recvmsg(4096, socket.CMSG_SPACE(4 * 4))
        if not msg:
            raise ConnectionResetError("the daemon closed the connection")
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for fd in array.array("i", data[: len(data) - len(data) % 4]):
                    os.close(fd)
        status = HDR.unpack_from(msg)[4]
        return status, msg[HDR.size:]

    def ok(self, op, body=b"", fds=(), fmt=None):
        status, rep = self.call(op, body, fds)
        if status != 0:
            fail("op %d refused for its owner: %s" % (op, os.strerror(status)))
        return struct.unpack_from(fmt, rep) if fmt else rep

    def setup(self, with_objects):
        self.ok(HELLO, struct.pack("<i64s4xQQ", os.getpid(), b"", 0, 0))
        r, w = os.pipe()
        self.keep += [r, w]
        self.ctx = self.ok(OPEN_CONTEXT, struct.pack("<I", 0), fds=[w], fmt="<IIQ")[0]
        if not with_objects:
            return
        self.pd = self.ok(ALLOC_PD, object_req(self.ctx), fmt="<II")[0]
        self.buf = ctypes.create_string_buffer(8192)
        self.lkey = self.ok(REG_MR, struct.pack("<IIQQQIIII", self.ctx, self.pd, ctypes.addressof(self.buf), 8192,
                                                ctypes.addressof(self.buf), ACCESS_ALL, 0, 0, 0), fmt="<II")[0]
        self.cqn = self.ok(CREATE_CQ, struct.pack("<IIII", self.ctx, 16, 0, 0), fmt="<I")[0]
        self.qpn = self.ok(CREATE_QP, struct.pack("<12I", self.ctx, self.pd, self.cqn, self.cqn, 0, IBV_QPT_RC, 0,
                                                  8, 8, 1, 1, 0), fmt="<I")[0]
        self.ok(MODIFY_QP, modify_qp_req(self.ctx, self.qpn, IBV_QPS_INIT, INIT_MASK))


def wait_socket(path):
    for _ in range(200):
        if os.path.exists(path):
            return
        time.sleep(0.05)
    fail("the daemon did not create " + path)


def other_uid_refused(path, log):
    # Open the directory and the socket to everyone: only SO_PEERCRED stands in the way.
    os.chmod(os.path.dirname(path), 0o755)
    os.chmod(path, 0o777)
    pid = os.fork()
    if pid == 0:
        code = 3
        try:
            os.setgid(65534)
            os.setuid(65534)
            c = Client(path)
            c.call(HELLO, struct.pack("<i64s4xQQ", os.getpid(), b"", 0, 0))
            code = 1  # answered
        except (ConnectionResetError, BrokenPipeError, ConnectionRefusedError):
            code = 0
        except OSError as e:
            code = 0 if e.errno in (errno.ECONNRESET, errno.EPIPE) else 2
        finally:
            os._exit(code)
    _, st = os.waitpid(pid, 0)
    os.chmod(os.path.dirname(path), 0o700)
    if os.waitstatus_to_exitcode(st) != 0:
        fail("a client of uid 65534 was not refused (child exit %d)" % os.waitstatus_to_exitcode(st))
    for _ in range(100):
        if "refused a connection from uid 65534" in open(log).read():
            return
        time.sleep(0.05)
    fail("the daemon did not report the refused uid")


def attack(a, b):
    """A names B's context and B's objects; every request must be refused."""
    # A names B's context: every request is refused before it looks further.
    foreign_ctx = [
        (QUERY_QP, object_req(b.ctx, b.qpn)), (DESTROY_QP, object_req(b.ctx, b.qpn)),
        (MODIFY_QP, modify_qp_req(b.ctx, b.qpn, IBV_QPS_ERR)), (DEREG_MR, object_req(b.ctx, b.lkey)),
        (DESTROY_CQ, object_req(b.ctx, b.cqn)), (DEALLOC_PD, object_req(b.ctx, b.pd)),
        (SETTLE_CQ, object_req(b.ctx, b.cqn)), (ALLOC_PD, object_req(b.ctx)), (CLOSE_CONTEXT, object_req(b.ctx)),
    ]
    # A names B's objects in its own context: they are not A's.
    foreign_obj = [
        (QUERY_QP, object_req(a.ctx, b.qpn)), (DESTROY_QP, object_req(a.ctx, b.qpn)),
        (MODIFY_QP, modify_qp_req(a.ctx, b.qpn, IBV_QPS_ERR)), (DEREG_MR, object_req(a.ctx, b.lkey)),
        (DESTROY_CQ, object_req(a.ctx, b.cqn)), (DEALLOC_PD, object_req(a.ctx, b.pd)),
        (SETTLE_CQ, object_req(a.ctx, b.cqn)),
        (REG_MR, struct.pack("<IIQQQIIII", a.ctx, b.pd, ctypes.addressof(b.buf), 8192, 0, ACCESS_ALL, 0, 0, 0)),
        (REREG_MR, struct.pack("<IIQQQIIII", a.ctx, b.pd, ctypes.addressof(b.buf), 8192, 0, ACCESS_ALL, b.lkey, 0, 0)),
        (CREATE_QP, struct.pack("<12I", a.ctx, b.pd, b.cqn, b.cqn, 0, IBV_QPT_RC, 0, 8, 8, 1, 1, 0)),
        (CREATE_SRQ, struct.pack("<6I", a.ctx, b.pd, 8, 1, 0, 0)),
        (CREATE_AH, struct.pack("<II", a.ctx, b.pd) + bytes(28)),
    ]
    for table, want in ((foreign_ctx, errno.EBADF), (foreign_obj, errno.EINVAL)):
        for op, body in table:
            status, _ = a.call(op, body)
            if status != want:
                fail("op %d naming another client's resource: status %d, expected %s" % (
                    op, status, errno.errorcode[want]))
    return len(foreign_ctx), len(foreign_obj)


def main():
    rnicsim, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    sockdir = os.path.join(work, "sock")
    subprocess.run(["rm", "-rf", sockdir])  # missing: the daemon creates it
    path = os.path.join(sockdir, "daemon.sock")
    log = os.path.join(work, "daemon.log")
    daemon = subprocess.Popen([rnicsim, "serve", "--socket", path], stdout=open(log, "w"), stderr=subprocess.STDOUT)
    try:
        wait_socket(path)
        mode = stat.S_IMODE(os.stat(sockdir).st_mode)
        if mode != 0o700:
            fail("socket directory mode %o, not 700" % mode)
        print("socket directory mode 0700")

        other_uid_refused(path, log)
        print("uid 65534 refused")

        b = Client(path)
        b.setup(with_objects=True)
        # Another context of the same process (on the same host), then another
        # process (on the other host).
        a = Client(path)
        a.setup(with_objects=False)
        refused_ctx, refused_obj = attack(a, b)
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                c = Client(path)
                c.setup(with_objects=False)
                attack(c, b)
                code = 0
            finally:
                os._exit(code)
        _, st = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(st) != 0:
            fail("another process reached the client's resources")
        # B's objects are as B left them.
        state = b.ok(QUERY_QP, object_req(b.ctx, b.qpn), fmt="<II")[1]
        if state != IBV_QPS_INIT:
            fail("the other client's QP is in state %d, not INIT" % state)
        # Its owner cannot destroy what is still in use: the CQ of a QP, the PD of an MR.
        for op, oid in ((DESTROY_CQ, b.cqn), (DEALLOC_PD, b.pd)):
            status, _ = b.call(op, object_req(b.ctx, oid))
            if status != errno.EBUSY:
                fail("op %d on a resource in use: status %d, expected EBUSY" % (op, status))
        for op, oid in ((DESTROY_QP, b.qpn), (DESTROY_CQ, b.cqn), (DEREG_MR, b.lkey), (DEALLOC_PD, b.pd)):
            b.ok(op, object_req(b.ctx, oid))
        print("from another context and from another process: %d requests naming the client's context and %d "
              "naming its PD/MR/CQ/QP refused; its QP, CQ, MR and PD intact" % (refused_ctx, refused_obj))
    finally:
        daemon.terminate()
        daemon.wait()
    print("PASS")


if __name__ == "__main__":
    main()
