// Certain death on one host (see liveness.hpp).
#include "group/liveness.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <set>
#include <string>

namespace spindle::group {

namespace {

// FNV-1a, 64 bits: the host id only has to be equal for equal inputs.
std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

ProcessIdentity compute_identity() {
  ProcessIdentity id;
  id.pid = static_cast<std::uint32_t>(::getpid());
  std::string boot;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  if (!std::getline(in, boot) || boot.empty()) return id;  // no host id: nothing certain
  struct stat ns {};
  if (::stat("/proc/self/ns/pid", &ns) != 0) return id;
  // Kept within 63 bits (it travels as a YAML integer) and never 0 (0 means unknown).
  id.host_id =
      (fnv1a(boot + ":" + std::to_string(ns.st_dev) + ":" + std::to_string(ns.st_ino)) >> 1) | 1;
  return id;
}

}  // namespace

ProcessIdentity this_process() {
  // The pid changes across fork(); the host id does not (same boot, same namespace unless
  // the child unshares it, which a participant does not).
  static const ProcessIdentity base = compute_identity();
  ProcessIdentity id = base;
  id.pid = static_cast<std::uint32_t>(::getpid());
  return id;
}

Member with_identity(Member m) {
  const auto id = this_process();
  m.pid = id.pid;
  m.host_id = id.host_id;
  return m;
}

ProcessWatch::ProcessWatch() : self_(this_process()) {}

ProcessWatch::~ProcessWatch() {
  for (const auto& [pid, fd] : fds_)
    if (fd >= 0) ::close(fd);
}

void ProcessWatch::watch(std::span<const Member> members) {
  std::lock_guard lock(mu_);
  std::set<std::uint32_t> keep;
  for (const auto& m : members) {
    if (m.pid == 0 || m.host_id == 0 || m.host_id != self_.host_id || m.pid == self_.pid) continue;
    keep.insert(m.pid);
    (void)probe(m.pid);
  }
  for (auto it = fds_.begin(); it != fds_.end();) {
    if (keep.contains(it->first)) {
      ++it;
      continue;
    }
    if (it->second >= 0) ::close(it->second);
    it = fds_.erase(it);
  }
}

ProcessState ProcessWatch::state(const Member& m) {
  if (m.pid == 0 || m.host_id == 0 || self_.host_id == 0 || m.host_id != self_.host_id) {
    return ProcessState::unknown;
  }
  if (m.pid == self_.pid) return ProcessState::alive;
  std::lock_guard lock(mu_);
  return probe(m.pid);
}

ProcessState ProcessWatch::probe(std::uint32_t pid) {
  auto [it, fresh] = fds_.try_emplace(pid, -1);
  if (fresh) {
#ifdef SYS_pidfd_open
    const long fd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
    if (fd >= 0) {
      it->second = static_cast<int>(fd);
    } else if (errno == ESRCH) {
      fds_.erase(it);  // nothing to keep: the pid may be reused later
      return ProcessState::exited;
    }
#endif
  }
  if (it->second >= 0) {
    pollfd p{it->second, POLLIN, 0};
    // Readable once the process has exited (a zombie included).
    return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0 ? ProcessState::exited
                                                                         : ProcessState::alive;
  }
  // No pidfd (an old kernel, or not permitted): whether the pid still exists. A zombie
  // still does, so this only errs towards "alive".
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
    fds_.erase(it);
    return ProcessState::exited;
  }
  return ProcessState::alive;
}

}  // namespace spindle::group
