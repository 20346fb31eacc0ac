#include "emulation/host_namespace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "refuse_namespaces.hpp"

namespace rnicsim::emulation {
namespace {

namespace fs = std::filesystem;

// Runs `check` in a child process (namespaces are the process's own) and
// returns what it wrote to its pipe: "" when every check held.
std::string in_child(const std::function<std::string()>& check) {
  int p[2];
  if (pipe(p) != 0) return "pipe";
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    const std::string what = check();
    if (!what.empty()) (void)!write(p[1], what.data(), what.size());
    _exit(0);
  }
  close(p[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(p[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) out += " (the child died)";
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), {}};
}

HostView view() {
  HostView v;
  std::snprintf(v.device.host, sizeof v.device.host, "host0");
  std::snprintf(v.device.device, sizeof v.device.device, "rnicsim0");
  v.device.rate_bps = 100'000'000'000ull;
  v.device.mtu = 4096;
  return v;
}

TEST(HostNamespace, ACoveredDirectoryKeepsItsEntriesLeavesOutTheNamedAndGainsTheNew) {
  const fs::path dir = fs::temp_directory_path() / ("rnicsim-cover-" + std::to_string(getpid()));
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "kept") << "kept\n";
  std::ofstream(dir / "gone") << "gone\n";
  std::ofstream(dir / "sub" / "inner") << "inner\n";
  fs::create_symlink("sub/inner", dir / "link");
  const std::string what = in_child([&]() -> std::string {
    if (std::string e = enter_own_mounts(); !e.empty()) return e;
    const std::string e = cover_directory(dir, {"gone"}, [](const std::string& d) {
      std::ofstream(d + "/new") << "new\n";
      return std::string();
    });
    if (!e.empty()) return e;
    std::string bad;
    if (read_text(dir / "kept") != "kept\n") bad += " kept";
    if (read_text(dir / "link") != "inner\n") bad += " link";
    if (read_text(dir / "new") != "new\n") bad += " new";
    if (fs::exists(dir / "gone")) bad += " gone-is-there";
    if (open((dir / "other").c_str(), O_WRONLY | O_CREAT, 0644) >= 0) bad += " writable";
    return bad;
  });
  EXPECT_EQ(what, "");
  EXPECT_TRUE(fs::exists(dir / "gone")) << "outside the namespace nothing changed";
  EXPECT_FALSE(fs::exists(dir / "new"));
  fs::remove_all(dir);
}

TEST(HostNamespace, TheHostViewShowsTheDeviceAndLeavesTheRestOfSysAndDev) {
  const std::string what = in_child([]() -> std::string {
    if (std::string e = enter_own_mounts(); !e.empty()) return e;
    if (std::string e = mount_host_view(view()); !e.empty()) return e;
    std::string bad;
    if (read_text("/sys/class/infiniband/rnicsim0/ports/1/state") != "4: ACTIVE\n") bad += " state";
    if (read_text("/sys/class/infiniband_verbs/uverbs0/ibdev") != "rnicsim0\n") bad += " ibdev";
    struct stat st{};
    if (stat("/dev/infiniband/uverbs0", &st) != 0 || !S_ISCHR(st.st_mode)) bad += " uverbs0-not-a-char-device";
    if (access("/dev/infiniband/uverbs0", R_OK | W_OK) != 0) bad += " uverbs0-not-read-writable";
    if (!fs::exists("/sys/class/net/lo")) bad += " net-lo";
    const int null = open("/dev/null", O_WRONLY);
    if (null < 0 || write(null, "x", 1) != 1) bad += " dev-null";
    if (null >= 0) close(null);
    return bad;
  });
  EXPECT_EQ(what, "");
  EXPECT_FALSE(fs::exists("/sys/class/infiniband/rnicsim0")) << "outside the namespace nothing changed";
}

TEST(HostNamespace, ARefusedNamespaceIsAnErrorThatSaysWhatToAllow) {
  const std::string what = in_child([]() -> std::string {
    if (refuse_namespaces() != 0) return "no seccomp: " + std::string(std::strerror(errno));
    const std::string e = enter_own_mounts();
    if (e.find("unshare: Operation not permitted") == std::string::npos) return "unexpected: '" + e + "'";
    if (e.find("allow") == std::string::npos) return "no advice: '" + e + "'";
    return {};
  });
  EXPECT_EQ(what, "");
}

}  // namespace
}  // namespace rnicsim::emulation
