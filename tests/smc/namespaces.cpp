// Namespaces for multi-process tests (see namespaces.hpp).
#include "namespaces.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace spindle::testing {

namespace {

bool write_file(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

}  // namespace

std::string ip_tool() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"})
    if (::access(p, X_OK) == 0) return p;
  return {};
}

bool run_quietly(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string enter_namespaces() {
  if (ip_tool().empty()) return "the `ip` tool (iproute2) is not installed";
  const auto uid = ::getuid();
  const auto gid = ::getgid();
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWNS) != 0)
    return std::string("unshare(user, net, mount namespaces): ") + std::strerror(errno) +
           " (unprivileged user namespaces are off here)";
  if (!write_file("/proc/self/setgroups", "deny") ||
      !write_file("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !write_file("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1"))
    return std::string("cannot map this user into its user namespace: ") + std::strerror(errno);
  // Our own view of mounts: a private /run for `ip netns`, nothing leaks outside.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
      ::mount("tmpfs", "/run", "tmpfs", 0, nullptr) != 0)
    return std::string("cannot mount a private /run: ") + std::strerror(errno);
  if (!run_quietly(ip_tool() + " link set lo up"))
    return "cannot bring loopback up in the new network namespace";
  return {};
}

}  // namespace spindle::testing
