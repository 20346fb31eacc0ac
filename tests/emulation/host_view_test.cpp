#include "emulation/host_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "verbs_shim/device_facts.hpp"

namespace rnicsim::emulation {
namespace {

namespace proto = verbs_proto;

HostView roce_view() {
  HostView v;
  std::snprintf(v.device.host, sizeof v.device.host, "host1");
  std::snprintf(v.device.device, sizeof v.device.device, "rnicsim0");
  const uint8_t guid[8] = {0x02, 0x00, 0x00, 0xff, 0xfe, 0x00, 0x00, 0x02};
  std::memcpy(&v.device.node_guid, guid, 8);
  v.device.rate_bps = 100'000'000'000ull;
  v.device.mtu = 4096;
  v.device.link_layer = proto::kLinkLayerEthernet;
  const uint8_t ip[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2};
  std::memcpy(v.device.gid, ip, 16);
  const uint8_t mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
  std::memcpy(v.device.mac, mac, 6);
  v.netdev = "eth0";
  v.cpus = 2;
  return v;
}

std::map<std::string, std::string> files_of(const HostView& v) {
  std::map<std::string, std::string> m;
  for (const ViewFile& f : sysfs_class_files(v)) EXPECT_TRUE(m.emplace(f.path, f.text).second) << f.path;
  return m;
}

TEST(HostView, PortFilesAreInTheKernelsFormats) {
  const auto m = files_of(roce_view());
  const std::string port = "infiniband/rnicsim0/ports/1/";
  EXPECT_EQ(m.at(port + "state"), "4: ACTIVE\n");
  EXPECT_EQ(m.at(port + "phys_state"), "5: LinkUp\n");
  EXPECT_EQ(m.at(port + "rate"), "100 Gb/sec (4X EDR)\n");
  EXPECT_EQ(m.at(port + "link_layer"), "Ethernet\n");
  EXPECT_EQ(m.at(port + "lid"), "0x0\n");
  EXPECT_EQ(m.at(port + "pkeys/0"), "0xffff\n");
  EXPECT_EQ(m.at(port + "cap_mask"), "0x04010000\n") << "CM and IP-based GIDs, as mlx5 says for a RoCE port";
  EXPECT_EQ(m.at("infiniband/rnicsim0/node_guid"), "0200:00ff:fe00:0002\n");
  EXPECT_EQ(m.at("infiniband/rnicsim0/node_type"), "1: CA\n");
  EXPECT_EQ(m.at("infiniband_verbs/uverbs0/ibdev"), "rnicsim0\n");
}

TEST(HostView, TheGidTableIsTheVerbsOwnWithItsTypesAndNetdev) {
  const HostView v = roce_view();
  const auto m = files_of(v);
  const std::string port = "infiniband/rnicsim0/ports/1/";
  ASSERT_EQ(proto::gid_count(v.device), proto::kRoceGids);
  EXPECT_EQ(m.at(port + "gids/0"), "fe80:0000:0000:0000:0000:00ff:fe00:0002\n");
  EXPECT_EQ(m.at(port + "gids/3"), "0000:0000:0000:0000:0000:ffff:0a00:0002\n");
  EXPECT_EQ(m.at(port + "gid_attrs/types/0"), "IB/RoCE v1\n");
  EXPECT_EQ(m.at(port + "gid_attrs/types/3"), "RoCE v2\n");
  EXPECT_EQ(m.at(port + "gid_attrs/ndevs/3"), "eth0\n");
  EXPECT_EQ(m.count(port + "gids/4"), 0u) << "no more entries than ibv_query_port's gid_tbl_len";
  const auto files = sysfs_class_files(v);
  const auto net = std::find_if(files.begin(), files.end(),
                                [](const ViewFile& f) { return f.path == "infiniband/rnicsim0/device/net/eth0"; });
  ASSERT_NE(net, files.end());
  EXPECT_TRUE(net->symlink);
  EXPECT_EQ(net->text, "../../../../net/eth0") << "from /sys/class/infiniband/rnicsim0/device/net to /sys/class/net";
}

TEST(HostView, AnInfinibandPortHasItsLidAndNoNetdev) {
  HostView v = roce_view();
  v.device.link_layer = proto::kLinkLayerIb;
  v.device.lid = 0x12;
  v.device.rate_bps = 200'000'000'000ull;
  const auto m = files_of(v);
  const std::string port = "infiniband/rnicsim0/ports/1/";
  EXPECT_EQ(m.at(port + "link_layer"), "InfiniBand\n");
  EXPECT_EQ(m.at(port + "lid"), "0x12\n");
  EXPECT_EQ(m.at(port + "cap_mask"), "0x00010000\n");
  EXPECT_EQ(m.at(port + "rate"), "200 Gb/sec (4X HDR)\n");
  EXPECT_EQ(m.at(port + "gid_attrs/types/0"), "IB/RoCE v1\n");
  EXPECT_EQ(m.count(port + "gid_attrs/ndevs/0"), 0u);
  EXPECT_EQ(m.count(port + "gids/1"), 0u);
}

TEST(HostView, LocalCpusIsAKernelCpumask) {
  HostView v = roce_view();
  EXPECT_EQ(files_of(v).at("infiniband/rnicsim0/device/local_cpus"), "3\n");
  v.cpus = 36;
  EXPECT_EQ(files_of(v).at("infiniband/rnicsim0/device/local_cpus"), "f,ffffffff\n");
  EXPECT_EQ(files_of(v).at("infiniband/rnicsim0/device/local_cpulist"), "0-35\n");
  v.cpus = 64;
  EXPECT_EQ(files_of(v).at("infiniband/rnicsim0/device/local_cpus"), "ffffffff,ffffffff\n");
}

TEST(HostView, TheVerbsAndSysfsAgreeOnThePort) {
  const HostView v = roce_view();
  const ibv_port_attr a = proto::port_attr(v.device);
  EXPECT_EQ(a.active_speed, 32) << "EDR: 25 Gb/s a lane";
  EXPECT_EQ(a.gid_tbl_len, static_cast<int>(proto::kRoceGids));
  const ibv_device_attr d = proto::device_attr(v.device);
  EXPECT_EQ(files_of(v).at("infiniband/rnicsim0/fw_ver"), std::string(d.fw_ver) + "\n");
}

}  // namespace
}  // namespace rnicsim::emulation
