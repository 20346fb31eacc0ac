#include "emulation/host_view.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "verbs_shim/device_facts.hpp"

namespace rnicsim::emulation {
namespace proto = verbs_proto;
namespace fs = std::filesystem;

namespace {

// The kernel's rate_show: the name of an active_speed and its lane rate in
// tenths of Gb/s.
struct SpeedName {
  uint8_t speed;
  const char* name;
  uint32_t lane_tenths;
};
constexpr SpeedName kSpeeds[] = {
    {1, "", 25},         {2, " DDR", 50},     {4, " QDR", 100},    {8, " FDR10", 100},
    {16, " FDR", 140},   {32, " EDR", 250},   {64, " HDR", 500},   {128, " NDR", 1000},
};
constexpr int kWidthLanes = 4;  // ibv_port_attr.active_width 2

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

std::string rate_text(const ibv_port_attr& a) {
  const SpeedName* s = &kSpeeds[0];
  for (const SpeedName& n : kSpeeds)
    if (n.speed == a.active_speed) s = &n;
  const uint32_t tenths = s->lane_tenths * kWidthLanes;
  return format("%u%s Gb/sec (%dX%s)\n", tenths / 10, tenths % 10 != 0 ? ".5" : "", kWidthLanes, s->name);
}

// local_cpus as the kernel prints a cpumask: hex words of 32 CPUs, high first.
std::string cpumask_text(uint32_t cpus) {
  std::string text;
  for (uint32_t word = (cpus + 31) / 32; word-- > 0;) {
    const uint32_t in_word = cpus - word * 32 >= 32 ? 32 : cpus - word * 32;
    const uint32_t bits = in_word == 32 ? 0xFFFFFFFFu : (1u << in_word) - 1;
    text += format(text.empty() ? "%x" : ",%08x", bits);
  }
  return text + "\n";
}

void add_device_files(std::vector<ViewFile>& out, const HostView& v, const std::string& dir) {
  const proto::DeviceInfo& d = v.device;
  const ibv_device_attr attr = proto::device_attr(d);
  const auto add = [&](const std::string& name, std::string text) { out.push_back({dir + "/" + name, std::move(text)}); };
  add("node_type", "1: CA\n");
  add("node_guid", sysfs_guid(d.node_guid) + "\n");
  add("sys_image_guid", sysfs_guid(d.node_guid) + "\n");
  add("node_desc", format("%s %s\n", d.host, d.device));
  add("fw_ver", format("%s\n", attr.fw_ver));
  add("hw_rev", format("0x%x\n", attr.hw_ver));
  add("hca_type", "rnicsim\n");
  add("board_id", "RNICSIM_0001\n");
  add("device/numa_node", "-1\n");
  add("device/local_cpus", cpumask_text(v.cpus));
  add("device/local_cpulist", v.cpus > 1 ? format("0-%u\n", v.cpus - 1) : std::string("0\n"));
  add("device/vendor", format("0x%04x\n", attr.vendor_id & 0xFFFF));
  add("device/device", format("0x%04x\n", attr.vendor_part_id));
  add("device/uevent", "PCI_SLOT_NAME=0000:00:00.0\n");
  // The port's netdev, as its PCI function lists it (pyverbs and rdma-core's
  // tests look here): /sys/class/net/<if> itself.
  if (!v.netdev.empty()) out.push_back({dir + "/device/net/" + v.netdev, "../../../../net/" + v.netdev, true});
}

void add_port_files(std::vector<ViewFile>& out, const HostView& v, const std::string& dir) {
  const proto::DeviceInfo& d = v.device;
  const ibv_port_attr a = proto::port_attr(d);
  const auto add = [&](const std::string& name, std::string text) { out.push_back({dir + "/" + name, std::move(text)}); };
  add("state", "4: ACTIVE\n");
  add("phys_state", "5: LinkUp\n");
  add("rate", rate_text(a));
  add("link_layer", proto::is_ib(d) ? "InfiniBand\n" : "Ethernet\n");
  add("lid", format("0x%x\n", a.lid));
  add("sm_lid", format("0x%x\n", a.sm_lid));
  add("lid_mask_count", format("%d\n", a.lmc));
  add("sm_sl", format("%d\n", a.sm_sl));
  add("cap_mask", format("0x%08x\n", a.port_cap_flags));
  add("pkeys/0", format("0x%04x\n", proto::kDefaultPkey));
  for (uint32_t i = 0; i < proto::gid_count(d); ++i) {
    const proto::GidEntry e = proto::gid_entry(d, i);
    add(format("gids/%u", i), sysfs_gid(e.gid.raw) + "\n");
    add(format("gid_attrs/types/%u", i), e.type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2\n" : "IB/RoCE v1\n");
    if (!proto::is_ib(d) && !v.netdev.empty()) add(format("gid_attrs/ndevs/%u", i), v.netdev + "\n");
  }
}

}  // namespace

std::string sysfs_gid(const uint8_t (&raw)[16]) {
  std::string text;
  for (int g = 0; g < 8; ++g) text += format(g == 0 ? "%02x%02x" : ":%02x%02x", raw[2 * g], raw[2 * g + 1]);
  return text;
}

std::string sysfs_guid(uint64_t guid_network_order) {
  uint8_t b[8];
  std::memcpy(b, &guid_network_order, 8);
  return format("%02x%02x:%02x%02x:%02x%02x:%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
}

std::vector<ViewFile> sysfs_class_files(const HostView& view) {
  std::vector<ViewFile> files;
  const std::string dev = std::string("infiniband/") + view.device.device;
  add_device_files(files, view, dev);
  add_port_files(files, view, format("%s/ports/%u", dev.c_str(), proto::kPortNum));
  files.push_back({"infiniband_verbs/abi_version", "6\n"});
  files.push_back({"infiniband_verbs/uverbs0/ibdev", std::string(view.device.device) + "\n"});
  files.push_back({"infiniband_verbs/uverbs0/abi_version", "1\n"});
  files.push_back({"infiniband_verbs/uverbs0/dev", "231:192\n"});
  return files;
}

std::vector<std::string> dev_infiniband_names() { return {"uverbs0", "rdma_cm"}; }

std::string write_view_files(const std::string& root, const std::vector<ViewFile>& files) {
  for (const ViewFile& f : files) {
    const fs::path path = fs::path(root) / f.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (f.symlink) {
      fs::create_symlink(f.text, path, ec);
      if (ec) return "cannot link " + path.string() + ": " + ec.message();
      continue;
    }
    std::ofstream out(path, std::ios::binary);
    out << f.text;
    if (ec || !out.flush()) return "cannot write " + path.string() + ": " + std::strerror(errno);
  }
  return {};
}

}  // namespace rnicsim::emulation
