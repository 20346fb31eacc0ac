#include "emulation/host_network.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

namespace rnicsim::emulation {
namespace {

std::array<uint8_t, 16> v4(const char* text) {
  std::array<uint8_t, 16> a{};
  a[10] = a[11] = 0xff;
  inet_pton(AF_INET, text, a.data() + 12);
  return a;
}

std::array<uint8_t, 16> v6(const char* text) {
  std::array<uint8_t, 16> a{};
  inet_pton(AF_INET6, text, a.data());
  return a;
}

TEST(HostNetwork, AddressesAreWrittenAsIpTakesThem) {
  EXPECT_EQ(address_text(v4("10.0.0.2")), "10.0.0.2");
  EXPECT_EQ(address_text(v6("fd00::2")), "fd00::2");
}

TEST(HostNetwork, AHostHasItsMacAddressAndARouteToEveryOtherHost) {
  const std::vector<NetworkHost> hosts = {{v4("10.0.0.1"), {2, 0, 0, 0, 0, 1}, "a"},
                                          {v4("10.0.0.2"), {2, 0, 0, 0, 0, 2}, "b"},
                                          {v4("10.0.1.7"), {2, 0, 0, 0, 1, 8}, "c"}};
  EXPECT_EQ(host_ip_commands(hosts, 1),
            "link set lo up\n"
            "link set eth0 address 02:00:00:00:00:02\n"
            "link set eth0 up\n"
            "addr add 10.0.0.2/32 dev eth0\n"
            "route add 10.0.0.1/32 dev eth0\n"
            "route add 10.0.1.7/32 dev eth0\n");
}

TEST(HostNetwork, AnIpv6HostSkipsDuplicateAddressDetection) {
  const std::vector<NetworkHost> hosts = {{v6("fd00::1"), {2, 0, 0, 0, 0, 1}, "a"},
                                          {v6("fd00::2"), {2, 0, 0, 0, 0, 2}, "b"}};
  const std::string c = host_ip_commands(hosts, 0);
  EXPECT_NE(c.find("addr add fd00::1/128 dev eth0 nodad\n"), std::string::npos) << c;
  EXPECT_NE(c.find("route add fd00::2/128 dev eth0\n"), std::string::npos) << c;
}

// Every host finds the others by name, as mpirun's -H needs; localhost stays
// the host's own.
TEST(HostNetwork, TheHostsFileNamesEveryHostAtItsAddress) {
  const std::vector<NetworkHost> hosts = {{v4("10.0.0.1"), {2, 0, 0, 0, 0, 1}, "host0"},
                                          {v6("fd00::2"), {2, 0, 0, 0, 0, 2}, "gpu1"}};
  EXPECT_EQ(hosts_file(hosts),
            "127.0.0.1\tlocalhost\n"
            "::1\tlocalhost ip6-localhost ip6-loopback\n"
            "10.0.0.1\thost0\n"
            "fd00::2\tgpu1\n");
}

// rsh's HOST may be an address, as mpirun's -H may give.
TEST(HostNetwork, AnAddressNamesItsHostAndANameStaysItself) {
  const std::string text = hosts_file({{v4("10.0.0.1"), {2, 0, 0, 0, 0, 1}, "host0"},
                                       {v4("10.0.0.2"), {2, 0, 0, 0, 0, 2}, "host1"}});
  EXPECT_EQ(host_named(text, "10.0.0.2"), "host1");
  EXPECT_EQ(host_named(text, "host0"), "host0");
  EXPECT_EQ(host_named(text, "127.0.0.1"), "127.0.0.1") << "localhost is no host of the scenario";
  EXPECT_EQ(host_named("", "10.0.0.2"), "10.0.0.2");
}

}  // namespace
}  // namespace rnicsim::emulation
