// Transport factory for multi-process SMC runs (see transports.hpp).
#include "transports.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mutex>
#include <set>
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

std::uint16_t free_loopback_port() {
  // The kernel may hand out the port it just released again (bind, close, bind): a domain
  // file listing two members would then give both one address. A port returned once in this
  // process is never returned again.
  static std::mutex mu;
  static std::set<std::uint16_t> given;
  std::lock_guard lock(mu);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    // Port 0: the kernel picks a free one, which getsockname() reports.
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    ::close(fd);
    if (!ok) throw std::runtime_error("no free loopback port");
    if (given.insert(ntohs(addr.sin_port)).second) return ntohs(addr.sin_port);
  }
  throw std::runtime_error("no loopback port this process has not used yet in 64 tries");
}

}  // namespace spindle::testing
