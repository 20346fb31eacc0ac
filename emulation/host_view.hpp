// What a program on an emulated host finds in sysfs and /dev about its device,
// laid out as the kernel's RDMA core lays it out for a real one: the files that
// rdma-core's helpers, UCX, libfabric and topology code read
// (/sys/class/infiniband/<dev>/..., /sys/class/infiniband_verbs/uverbs0/...,
// /dev/infiniband/uverbs0). The text of each file comes from the same facts the
// shim's verbs answer with (verbs_shim/device_facts.hpp), so sysfs and
// ibv_query_port never disagree. host_namespace mounts the view.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "verbs_shim/protocol.hpp"

namespace rnicsim::emulation {

struct HostView {
  verbs_proto::DeviceInfo device;
  std::string netdev;  // the RoCE port's network interface (empty: none, and on IB)
  uint32_t cpus = 1;   // the CPUs the device is local to: 0 .. cpus-1
};

struct ViewFile {
  std::string path;  // below /sys/class
  std::string text;  // or, for a symlink, its target
  bool symlink = false;
};

// Every file of the device's /sys/class entries, in the kernel's formats.
std::vector<ViewFile> sysfs_class_files(const HostView& view);

// The names under /dev/infiniband a program looks for (UCX requires the
// uverbs character device to exist and be read-writable).
std::vector<std::string> dev_infiniband_names();

// Writes `files` below `root`, creating directories; "" or what failed.
std::string write_view_files(const std::string& root, const std::vector<ViewFile>& files);

// The kernel's text for a GID (%pI6: eight groups of four hex digits) and for a GUID.
std::string sysfs_gid(const uint8_t (&raw)[16]);
std::string sysfs_guid(uint64_t guid_network_order);

}  // namespace rnicsim::emulation
