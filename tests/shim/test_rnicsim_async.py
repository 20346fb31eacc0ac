# Async events through the shim, in the rdma-core test suite's framework (copied
# beside its tests by pyverbs_suite.sh): an SRQ armed with a limit raises
# IBV_EVENT_SRQ_LIMIT_REACHED on the context's async event descriptor when its
# posted receives fall below the limit.
import pyverbs.enums as e
from pyverbs.srq import SrqAttr

import tests.utils as u
from tests.base import RCResources, RDMATestCase


class SrqLimitEventTest(RDMATestCase):
    def test_srq_limit_reached(self):
        self.client = RCResources(**self.dev_info, with_srq=True)
        self.server = RCResources(**self.dev_info, with_srq=True)
        self.client.pre_run(self.server.psns, self.server.qps_num)
        self.server.pre_run(self.client.psns, self.client.qps_num)
        server = self.server
        u.post_recv(server, u.get_recv_wr(server), num_wqes=2)
        server.srq.modify(SrqAttr(srq_limit=3), e.IBV_SRQ_LIMIT)
        # One more receive posted, one consumed: 2 left, fewer than 3.
        u.traffic(self.client, server, 1, self.gid_index, self.ib_port)
        event = server.ctx.get_async_event()
        self.assertEqual(event.event_type, e.IBV_EVENT_SRQ_LIMIT_REACHED)
        event.ack()
