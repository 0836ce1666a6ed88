// Transport factory for multi-process SMC runs (see transports.hpp).
#include "transports.hpp"

#include <stdexcept>

#if SPINDLE_HAVE_TCP
#include <spindle/transport/tcp.hpp>
#endif
#if SPINDLE_HAVE_SHM
#include <spindle/transport/shm.hpp>
#endif

namespace spindle::testing {

Made make_transport(const std::string& kind, transport::NodeId id, const std::string& ns) {
  (void)ns;
#if SPINDLE_HAVE_SHM
  if (kind == "shm") {
    transport::ShmConfig cfg;
    cfg.self = id;
    cfg.name_prefix = ns;
    cfg.suspicion_timeout = std::chrono::milliseconds(5000);
    return Made{std::make_unique<transport::ShmTransport>(cfg), 0};
  }
#endif
#if SPINDLE_HAVE_TCP
  if (kind == "tcp") {
    transport::TcpConfig cfg;
    cfg.self = transport::NodeAddress{id, "127.0.0.1", 0};
    cfg.suspicion_timeout = std::chrono::milliseconds(5000);
    auto t = std::make_unique<transport::TcpTransport>(cfg);
    const auto port = t->port();
    return Made{std::move(t), port};
  }
#endif
  throw std::runtime_error("transport '" + kind + "' is not built here");
}

std::vector<std::string> available_transports() {
  std::vector<std::string> out;
#if SPINDLE_HAVE_SHM
  out.push_back("shm");
#endif
#if SPINDLE_HAVE_TCP
  out.push_back("tcp");
#endif
  return out;
}

}  // namespace spindle::testing
