// Builds a transport by name for the multi-process tests and the benchmark: "tcp"
// (loopback) and, when built, "shm"; finds free loopback ports for domain files.
// Threading: control thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::testing {

struct Made {
  std::unique_ptr<transport::Transport> transport;
  std::uint16_t port = 0;  // tcp: the bound port; 0 elsewhere
};

// `ns` names the shared-memory namespace of one run (ignored by tcp).
Made make_transport(const std::string& kind, transport::NodeId id, const std::string& ns);
// Transports compiled into this build, in the order tests run them.
std::vector<std::string> available_transports();
// A TCP port on 127.0.0.1 that was free a moment ago, for domain files listing members.
std::uint16_t free_loopback_port();

}  // namespace spindle::testing
