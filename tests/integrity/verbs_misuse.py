#!/usr/bin/python3
"""Verbs misuse through the shim (pyverbs, run under rnicsim exec): each call
fails with the errno the verbs define and the process goes on.

  - ibv_post_send on a QP in RESET or INIT: EINVAL (IBTA 10.8.2: the send queue
    accepts work requests from RTS on); ibv_post_recv in RESET: EINVAL;
  - ibv_modify_qp RESET -> RTS: EINVAL;
  - ibv_reg_mr with REMOTE_WRITE but no LOCAL_WRITE: EINVAL (IBTA 10.6.3.1);
  - overflowing a CQ that is never polled: the CQ overruns, IBV_EVENT_CQ_ERR
    arrives, and the entries it holds are the first ones, none overwritten.
"""
import errno
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR


def refused(what, want, fn):
    try:
        fn()
    except PyverbsRDMAError as ex:
        if ex.error_code != want:
            print("FAIL: %s: errno %d, expected %s" % (what, ex.error_code, errno.errorcode[want]))
            sys.exit(1)
        print("%s: %s" % (what, errno.errorcode[want]))
        return
    print("FAIL: %s succeeded" % what)
    sys.exit(1)


def main():
    ctx = Context(name="rnicsim0")
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1, max_recv_sge=1)))
    mr = MR(pd, 4096, e.IBV_ACCESS_LOCAL_WRITE)
    send = SendWR(opcode=e.IBV_WR_SEND, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)])
    recv = RecvWR(num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)])

    refused("post_send in RESET", errno.EINVAL, lambda: qp.post_send(send))
    refused("post_recv in RESET", errno.EINVAL, lambda: qp.post_recv(recv))
    rts = QPAttr()
    rts.qp_state = e.IBV_QPS_RTS
    refused("modify_qp RESET -> RTS", errno.EINVAL, lambda: qp.modify(rts, e.IBV_QP_STATE))
    init = QPAttr()
    init.qp_state = e.IBV_QPS_INIT
    init.pkey_index = 0
    init.port_num = 1
    init.qp_access_flags = e.IBV_ACCESS_REMOTE_WRITE
    qp.modify(init, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT | e.IBV_QP_ACCESS_FLAGS)
    refused("post_send in INIT", errno.EINVAL, lambda: qp.post_send(send))
    qp.post_recv(recv)  # INIT takes receives
    refused("reg_mr REMOTE_WRITE without LOCAL_WRITE", errno.EINVAL, lambda: MR(pd, 4096, e.IBV_ACCESS_REMOTE_WRITE))
    cq_resized(ctx, pd, mr)
    cq_overrun(ctx, pd, mr)
    for o in (qp, mr, cq, pd, ctx):
        o.close()
    print("PASS")


def flushed_receives(pd, cq, mr, count, first_id):
    """A QP in ERR: each receive posted completes at once with WR_FLUSH_ERR."""
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                           cap=QPCap(max_send_wr=4, max_recv_wr=32, max_send_sge=1, max_recv_sge=1)))
    err = QPAttr()
    err.qp_state = e.IBV_QPS_ERR
    qp.modify(err, e.IBV_QP_STATE)
    for i in range(count):
        qp.post_recv(RecvWR(wr_id=first_id + i, num_sge=1, sg=[SGE(mr.buf, 64, mr.lkey)]))
    return qp


def poll_all(cq, want):
    """Polls until `want` completions came (or 2 s passed)."""
    import time
    got, end = [], time.monotonic() + 2
    while len(got) < want and time.monotonic() < end:
        n, wcs = cq.poll(want - len(got))
        got += wcs
    return got


def cq_resized(ctx, pd, mr):
    """ibv_resize_cq(4 -> 16): the CQ then holds 32, and 20 completions fit."""
    cq = CQ(ctx, 4)
    cq.resize(16)
    if cq.cqe != 31:
        print("FAIL: CQ resized to 16 reports cqe %d, expected 31" % cq.cqe)
        sys.exit(1)
    qp = flushed_receives(pd, cq, mr, 20, 200)
    ids = [wc.wr_id for wc in poll_all(cq, 20)]
    if ids != list(range(200, 220)):
        print("FAIL: the resized CQ holds %s" % ids)
        sys.exit(1)
    print("CQ resized: 20 completions in a CQ of 16 (holds 32)")
    qp.close()
    cq.close()


def cq_overrun(ctx, pd, mr):
    """Receives posted to a QP in ERR complete at once (flushed): 12 of them
    into a CQ of 4 (which holds 8) that nobody polls."""
    cq = CQ(ctx, 4)
    if cq.cqe != 7:
        print("FAIL: CQ(4) reports cqe %d, expected 7" % cq.cqe)
        sys.exit(1)
    qp = flushed_receives(pd, cq, mr, 12, 100)
    event = ctx.get_async_event()  # blocks until the daemon raises it
    if event.event_type != e.IBV_EVENT_CQ_ERR:
        print("FAIL: async event %d, expected IBV_EVENT_CQ_ERR" % event.event_type)
        sys.exit(1)
    event.ack()
    n, wcs = cq.poll(16)
    ids = [wc.wr_id for wc in wcs]
    if ids != list(range(100, 108)) or any(wc.status != e.IBV_WC_WR_FLUSH_ERR for wc in wcs):
        print("FAIL: the overrun CQ holds %s" % ids)
        sys.exit(1)
    print("CQ overrun: IBV_EVENT_CQ_ERR, the first 8 completions kept")
    qp.close()
    cq.close()


if __name__ == "__main__":
    main()
