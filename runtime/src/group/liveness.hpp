// Certain death on one host (DESIGN §7, docs/membership.md "Availability"). The majority
// rule guards against partitions, but a member whose process has exited cannot be on the
// other side of one: it is gone. Members on one host can tell that for certain — the
// process no longer exists — so they need no majority to remove it. Across hosts nothing
// is certain, and the majority rule (with a witness for even splits) decides as before.
//
// Each member carries its process identity in the view (Member::pid, Member::host_id):
// the process id, and a host id that is equal exactly for processes that share a kernel
// and a pid namespace (a hash of the boot id and the pid namespace), so that a pid means
// the same process to both. A ProcessWatch opens a pidfd for every same-host member of the
// current view and answers, without blocking, whether that process has exited.
//
//   member on another host, or no identity   -> unknown  (majority rule)
//   same host, pidfd not readable            -> alive    (a pause, a hang, a cut link:
//                                                          majority rule)
//   same host, pidfd readable / no such pid  -> exited   (certain: not counted)
//
// A pid reused by another process is harmless: a pidfd can only be opened for it after
// the member's own process exited, so "exited" is never wrong; "alive" merely errs on the
// side of the majority rule.
//
// Threading: ProcessWatch's members may be called from any thread (one mutex, a leaf).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>

#include "group/view.hpp"

namespace spindle::group {

enum class ProcessState : std::uint8_t {
  unknown,  // not on this host (or no identity): nothing is certain
  alive,    // on this host, the process exists
  exited,   // on this host, the process is gone: a certain death
};

// This process's identity as a member (Member::pid, Member::host_id).
struct ProcessIdentity {
  std::uint32_t pid = 0;
  std::uint64_t host_id = 0;  // 0: unknown
};
[[nodiscard]] ProcessIdentity this_process();
// `m` with this process's identity filled in.
[[nodiscard]] Member with_identity(Member m);

class ProcessWatch {
 public:
  ProcessWatch();
  ~ProcessWatch();
  ProcessWatch(const ProcessWatch&) = delete;
  ProcessWatch& operator=(const ProcessWatch&) = delete;

  // Opens pidfds for the same-host members of `members` and closes those of processes no
  // longer listed (called when a view is installed).
  void watch(std::span<const Member> members);
  // What is known for certain of `m`'s process (opens its pidfd if not watched yet).
  [[nodiscard]] ProcessState state(const Member& m);

 private:
  ProcessState probe(std::uint32_t pid);

  const ProcessIdentity self_;
  std::mutex mu_;                     // a leaf
  std::map<std::uint32_t, int> fds_;  // pid -> pidfd; -1: none to be had (kill(pid, 0))
};

}  // namespace spindle::group
