// Several "hosts" on one machine, for the tests of what crosses a network (DESIGN §15;
// docs/membership.md, "Across hosts"): each host is a network namespace wired to one bridge,
// with an address of its own (10.253.0.<i>/24), a pid namespace and a /dev/shm of its own
// (host_exec.cpp), so that nothing it runs shares memory, a loopback or process ids with
// another host. Nothing reaches the machine's own network: the test process first becomes
// root of user, network and mount namespaces of its own (tests/smc/namespaces.hpp), and the
// bridge lives there.
//
//           test process (its own user, net and mount namespaces)
//                              br0
//            +------------------+------------------+
//          p1 (link)          p2                  p3            cut(i): p<i> down
//            |                  |                   |
//   host 1: v1 10.253.0.1   host 2: v2 .2      host 3: v3 .3     (each: netns h<i>, its own
//           pid 1 = host_exec --init              ...            pid namespace, /dev/shm)
//
// Threading: one thread (the test's). Every wait is bounded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process.hpp"

namespace spindle::testing {

class Hosts {
 public:
  // Enters the namespaces and makes the bridge; call before any thread starts. Empty on
  // success, else why not (the test skips then, exit 77).
  [[nodiscard]] static std::string enter();

  Hosts() = default;
  ~Hosts();
  Hosts(const Hosts&) = delete;
  Hosts& operator=(const Hosts&) = delete;

  // Host i (1..250): its namespace, its link on the bridge and its first process. With
  // `multicast` false its interface has no multicast (a network that does not carry it).
  void add(std::uint32_t i, bool multicast = true);
  [[nodiscard]] static std::string address(std::uint32_t i);

  // Starts `argv` on host i (its standard error on its standard output with `stderr_too`).
  [[nodiscard]] std::unique_ptr<Process> run(std::uint32_t i, const std::vector<std::string>& argv,
                                             bool stderr_too = false);

  // The host's link on the bridge down (nothing reaches it or comes from it, no connection
  // is reset: a cable pulled) and up again.
  void cut(std::uint32_t i);
  void mend(std::uint32_t i);
  // Every process of host i killed at once (its pid 1: a power cut); power_on starts the
  // host again, with an empty /dev/shm, as a host that reboots.
  void power_off(std::uint32_t i);
  void power_on(std::uint32_t i);

 private:
  void start(std::uint32_t i);
  std::map<std::uint32_t, std::unique_ptr<Process>> init_;  // each host's first process
  std::map<std::uint32_t, int> pid_;                        // its pid as we see it
};

}  // namespace spindle::testing
