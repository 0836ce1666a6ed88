// A raw connection to a domain's join port on 127.0.0.1 (docs/membership.md, "The contact
// protocol"): what a scripted, buggy or hostile program sees of it. For the join and chaos
// tests.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "loopback.hpp"

namespace spindle::testing {

class RawJoin {
 public:
  explicit RawJoin(std::uint16_t port) : fd_(connect_loopback(port)), connected_(fd_ >= 0) {}
  ~RawJoin() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawJoin(const RawJoin&) = delete;
  RawJoin& operator=(const RawJoin&) = delete;

  [[nodiscard]] bool connected() const { return connected_; }
  void send(const std::string& text) { (void)::send(fd_, text.data(), text.size(), MSG_NOSIGNAL); }
  // One line without its '\n', or what came before the stream ended or `seconds` passed.
  std::string line(int seconds = 5) {
    timeval tv{seconds, 0};
    (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string out;
    char c = 0;
    while (::read(fd_, &c, 1) == 1 && c != '\n')
      out += c;
    return out;
  }
  // Answers the port's "CHECK <nonce>" (read as `check`) with READY.
  void ready(const std::string& check) { send("READY " + check.substr(6) + "\n"); }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

}  // namespace spindle::testing
