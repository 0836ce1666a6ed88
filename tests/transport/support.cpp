// Transport factory and child-process plumbing for the transport tests.
#include "support.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <spindle/transport/tcp.hpp>
#if SPINDLE_HAVE_SHM
#include <spindle/transport/auto.hpp>
#include <spindle/transport/shm.hpp>
#endif
#if SPINDLE_HAVE_RDMA
#include <spindle/transport/rdma.hpp>
#endif

#include "../smc/die_with_parent.hpp"

namespace spindle::transport::test {

MadeTransport make_transport(std::string_view kind, NodeId id, const NodeOptions& options) {
  if (kind == "tcp") {
    TcpConfig cfg;
    cfg.self = NodeAddress{id, "127.0.0.1", 0};
    cfg.suspicion_timeout = options.suspicion_timeout;
    cfg.heartbeat_interval = std::max(std::chrono::milliseconds(10), options.suspicion_timeout / 5);
    auto t = std::make_unique<TcpTransport>(cfg);
    NodeAddress a{id, "127.0.0.1", t->port()};
    return {std::move(t), a};
  }
#if SPINDLE_HAVE_SHM
  if (kind == "shm") {
    ShmConfig cfg;
    cfg.self = id;
    cfg.name_prefix = options.shm_namespace.empty() ? "spindle-test" : options.shm_namespace;
    cfg.suspicion_timeout = options.suspicion_timeout;
    cfg.heartbeat_interval = std::max(std::chrono::milliseconds(10), options.suspicion_timeout / 5);
    auto t = std::make_unique<ShmTransport>(cfg);
    return {std::move(t), NodeAddress{id, "", 0}};
  }
  if (kind == "auto") {
    AutoConfig cfg;
    cfg.tcp.self = NodeAddress{id, options.host, 0};
    cfg.tcp.suspicion_timeout = options.suspicion_timeout;
    cfg.tcp.heartbeat_interval =
        std::max(std::chrono::milliseconds(10), options.suspicion_timeout / 5);
    cfg.shm.name_prefix = options.shm_namespace.empty() ? "spindle-test" : options.shm_namespace;
    cfg.shm.suspicion_timeout = cfg.tcp.suspicion_timeout;
    cfg.shm.heartbeat_interval = cfg.tcp.heartbeat_interval;
    auto t = std::make_unique<AutoTransport>(cfg);
    NodeAddress a{id, options.host, t->port()};
    return {std::move(t), a};
  }
#endif
#if SPINDLE_HAVE_RDMA
  if (kind == "rdma") {
    RdmaConfig cfg;
    cfg.self = NodeAddress{id, "127.0.0.1", 0};
    cfg.suspicion_timeout = options.suspicion_timeout;
    auto t = std::make_unique<RdmaTransport>(cfg);
    NodeAddress a{id, "127.0.0.1", t->port()};
    return {std::move(t), a};
  }
#endif
  throw std::runtime_error("unknown transport '" + std::string(kind) + "'");
}

void cleanup(std::string_view kind, const std::string& shm_namespace) {
#if SPINDLE_HAVE_SHM
  if ((kind == "shm" || kind == "auto") && !shm_namespace.empty()) {
    (void)ShmTransport::reclaim_stale(shm_namespace);
  }
#else
  (void)kind;
  (void)shm_namespace;
#endif
}

bool transport_available(std::string_view kind, std::string& why) {
#if SPINDLE_HAVE_RDMA
  if (kind == "rdma") return rdma_device_available(why);
#endif
  if (kind == "tcp") return true;
#if SPINDLE_HAVE_SHM
  if (kind == "shm" || kind == "auto") return true;
#endif
  why = "transport '" + std::string(kind) + "' is not built";
  return false;
}

Child::Child(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ == 0) {
    // It dies with the test, also when CTest's timeout or a signal kills the test.
    spindle::testing::die_with_parent(parent);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  const int rc = pid_ < 0 ? errno : 0;
  ::close(in[0]);
  ::close(out[1]);
  to_child_ = in[1];
  from_child_ = out[0];
  if (rc != 0) throw std::runtime_error("fork " + argv[0] + ": " + std::strerror(rc));
}

Child::~Child() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
  if (to_child_ >= 0) ::close(to_child_);
  if (from_child_ >= 0) ::close(from_child_);
}

std::optional<std::string> Child::read_line(Clock::time_point deadline) {
  while (true) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      log_.push_back(line);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd p{from_child_, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return std::nullopt;
    char buf[4096];
    const ssize_t n = ::read(from_child_, buf, sizeof buf);
    if (n <= 0) return std::nullopt;  // child closed stdout (exited)
    buffer_.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<std::string> Child::expect(std::string_view prefix, Clock::time_point deadline) {
  while (auto line = read_line(deadline)) {
    if (line->rfind(prefix, 0) == 0) return line;
  }
  return std::nullopt;
}

void Child::send(const std::string& line) {
  const std::string l = line + "\n";
  std::size_t off = 0;
  while (off < l.size()) {
    const ssize_t n = ::write(to_child_, l.data() + off, l.size() - off);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

void Child::kill9() {
  if (pid_ > 0 && !reaped_) ::kill(pid_, SIGKILL);
}

int Child::wait(Clock::time_point deadline) {
  if (reaped_) return -1;
  while (true) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      if (WIFEXITED(st)) return WEXITSTATUS(st);
      if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
      return -1;
    }
    if (Clock::now() >= deadline) {
      kill9();
      ::waitpid(pid_, &st, 0);
      reaped_ = true;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace spindle::transport::test
