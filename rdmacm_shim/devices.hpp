// The RDMA devices the CM works on: one opened context per device, shared by
// the whole process (rdma_get_devices lists them; an id's verbs is one of them).
#pragma once

#include <infiniband/verbs.h>

#include <vector>

namespace rnicsim::rdmacm {

// The contexts of the devices ibv_get_device_list lists, in its order, opened
// on first use and kept open for the life of the process; devices that do not
// open are left out. Empty, with errno ENODEV, when there is none.
std::vector<ibv_context*> device_contexts();

// The PD the library allocates for a device's ids that are given none (as
// upstream's ucma_get_pd), kept with the device's context and freed when the
// library goes.
ibv_pd* default_pd(ibv_context* verbs);

}  // namespace rnicsim::rdmacm
