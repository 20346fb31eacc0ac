#!/usr/bin/python3
"""Verbs misuse through the shim (pyverbs, run under rnicsim exec): each call
fails with the errno the verbs define and the process goes on.

  - ibv_post_send on a QP in RESET or INIT: EINVAL (IBTA 10.8.2: the send queue
    accepts work requests from RTS on); ibv_post_recv in RESET: EINVAL;
  - ibv_modify_qp RESET -> RTS: EINVAL;
  - ibv_reg_mr with REMOTE_WRITE but no LOCAL_WRITE: EINVAL (IBTA 10.6.3.1).
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
    for o in (qp, mr, cq, pd, ctx):
        o.close()
    print("PASS")


if __name__ == "__main__":
    main()
