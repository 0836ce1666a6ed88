// Namespaces for multi-process tests that need a network of their own (the partition test,
// the chaos test): the calling process becomes root of new user, network and mount
// namespaces — unprivileged where the kernel allows user namespaces — with loopback up and
// a private /run for `ip netns`. Nothing it does there reaches the host's network.
#pragma once

#include <string>

namespace spindle::testing {

// The `ip` tool's path (iproute2; in /usr/sbin or /sbin, which a user's PATH may lack), or
// empty when it is not installed.
[[nodiscard]] std::string ip_tool();

// Runs a shell command quietly; true if it exited 0.
bool run_quietly(const std::string& command);

// Enters the namespaces (call before any thread starts). Empty on success, otherwise why
// not: a test skips then (exit 77) and prints it.
[[nodiscard]] std::string enter_namespaces();

}  // namespace spindle::testing
