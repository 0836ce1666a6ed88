// Test support shared by the transport tests: build any transport by name, and spawn
// child processes that talk line by line over pipes (every read bounded by a deadline).
//
// Threading: everything here is used from the test's main thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spindle/transport/transport.hpp>

namespace spindle::transport::test {

struct NodeOptions {
  std::chrono::milliseconds suspicion_timeout{500};
  std::string shm_namespace;       // shm: segment name prefix shared by the processes of a test
  std::string host = "127.0.0.1";  // tcp, rdma, auto: the address to bind and give peers
};

struct MadeTransport {
  std::unique_ptr<Transport> transport;
  NodeAddress address;
};

// kind: "tcp", "shm", "auto" or "rdma". Throws std::runtime_error if it cannot be built here.
MadeTransport make_transport(std::string_view kind, NodeId id, const NodeOptions& options);

// The address of the auto transport's "far" nodes in a multi-process test: another loopback
// address, so the others reach them over tcp, as members of another host, while they reach
// each other over shared memory (one machine, mixed pairs; node.cpp gives it to odd ids).
inline constexpr const char* kAutoFarHost = "127.0.0.2";

// Removes what crashed nodes of a test left behind (shm segments under `shm_namespace`).
void cleanup(std::string_view kind, const std::string& shm_namespace);

// False (and why) when the transport cannot run on this machine (rdma without a device).
bool transport_available(std::string_view kind, std::string& why);

using Clock = std::chrono::steady_clock;

class Child {
 public:
  // Spawns `argv` with stdin/stdout piped to us and stderr inherited.
  explicit Child(const std::vector<std::string>& argv);
  ~Child();  // SIGKILLs and reaps if still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  std::optional<std::string> read_line(Clock::time_point deadline);
  // Reads lines until one starts with `prefix`; others are kept in log().
  std::optional<std::string> expect(std::string_view prefix, Clock::time_point deadline);
  void send(const std::string& line);
  void kill9();
  // Exit status (0..255), 128+signal, or -1 on timeout (then it is killed).
  int wait(Clock::time_point deadline);
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }
  [[nodiscard]] const std::vector<std::string>& log() const noexcept { return log_; }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1;
  int from_child_ = -1;
  std::string buffer_;
  std::vector<std::string> log_;
  bool reaped_ = false;
};

}  // namespace spindle::transport::test
