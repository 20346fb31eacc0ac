#include "scenario/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "scenario/error.hpp"

namespace rnicsim::scenario {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every way out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_text_file(const std::string& path, uint64_t max_bytes) {
  auto fail = [&](const std::string& why) { throw ScenarioError(path, 0, 0, why); };
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat on the open file
  // then says what it is, with no window for it to be swapped after the check.
  const Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) fail(std::string("cannot open the file: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(std::string("cannot read the file: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) fail(std::string("is ") + kind_of(st.st_mode) + ", not a regular file");
  const auto too_large = [&] {
    fail("the file is larger than " + std::to_string(max_bytes >> 20) + " MiB");
  };
  if (static_cast<uint64_t>(st.st_size) > max_bytes) too_large();
  std::string text;
  char buf[65536];
  while (true) {
    const ssize_t n = ::read(f.fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("cannot read the file: ") + std::strerror(errno));
    if (n == 0) return text;
    if (text.size() + static_cast<uint64_t>(n) > max_bytes) too_large();  // it grew since fstat
    text.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace rnicsim::scenario
