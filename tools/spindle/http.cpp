// The server of `spindle status --http` (http.hpp).
#include "http.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace spindle_cli {
namespace {

using Clock = std::chrono::steady_clock;

// How long a client has to send its request, and then to take the answer.
constexpr std::chrono::seconds kRequestTime{5};
constexpr std::chrono::seconds kAnswerTime{5};

const char* reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    default:
      return "Internal Server Error";
  }
}

std::string answer(const HttpResponse& r, bool head = false) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + reason(r.status) + "\r\n";
  out += "Content-Type: " + r.content_type + "\r\n";
  out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  out += "Cache-Control: no-store\r\n";
  if (r.status == 405) out += "Allow: GET, HEAD\r\n";
  out += "Connection: close\r\n\r\n";
  if (!head) out += r.body;
  return out;
}

std::string error(int status) {
  return answer({status, "text/plain; charset=utf-8", std::string(reason(status)) + "\n"});
}

// "HOST:PORT" → host and port; an IPv6 host in brackets.
std::pair<std::string, std::string> split_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size())
    throw std::runtime_error("'" + address + "' is not HOST:PORT");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  return {host, address.substr(colon + 1)};
}

// The end of a request's head (after the blank line), or npos.
std::size_t head_end(const std::string& in) {
  const auto crlf = in.find("\r\n\r\n");
  if (crlf != std::string::npos) return crlf + 4;
  const auto lf = in.find("\n\n");
  return lf == std::string::npos ? lf : lf + 2;
}

struct Client {
  int fd = -1;
  std::string in;
  std::string out;
  std::size_t sent = 0;
  enum class State { reading, writing, draining } state = State::reading;
  Clock::time_point deadline;
};

}  // namespace

std::string http_answer(const std::string& request, const HttpServer::Handler& handler) {
  const auto eol = request.find('\n');
  std::string line = request.substr(0, eol);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  // METHOD SP TARGET SP HTTP/1.x, nothing else.
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || line.find(' ', sp2 + 1) != std::string::npos) return error(400);
  const std::string method = line.substr(0, sp1);
  const std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string version = line.substr(sp2 + 1);
  const auto token = [](const std::string& s) {
    return !s.empty() && std::ranges::all_of(s, [](char c) { return c >= 'A' && c <= 'Z'; });
  };
  if (!token(method) || version.rfind("HTTP/1.", 0) != 0 || version.size() != 8 || target.empty() ||
      target.front() != '/' ||
      std::ranges::any_of(target, [](char c) { return c <= ' ' || c == 0x7f; }))
    return error(400);
  if (method != "GET" && method != "HEAD") return error(405);
  const std::string path = target.substr(0, target.find_first_of("?#"));
  try {
    const auto r = handler(path);
    if (!r) return error(404);
    return answer(*r, method == "HEAD");
  } catch (...) {
    return error(500);
  }
}

HttpServer::HttpServer(const std::string& address, Handler handler) : handler_(std::move(handler)) {
  const auto [host, port] = split_address(address);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int e = getaddrinfo(host.c_str(), port.c_str(), &hints, &found); e != 0)
    throw std::runtime_error("cannot listen at " + address + ": " + gai_strerror(e));
  std::string why = "no address";
  for (auto* a = found; a != nullptr && listener_ < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 16) != 0) {
      why = std::strerror(errno);
      close(fd);
      continue;
    }
    listener_ = fd;
  }
  freeaddrinfo(found);
  if (listener_ < 0) throw std::runtime_error("cannot listen at " + address + ": " + why);
  sockaddr_storage at{};
  socklen_t len = sizeof at;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&at), &len);
  std::array<char, NI_MAXHOST> name{};
  std::array<char, NI_MAXSERV> service{};
  getnameinfo(reinterpret_cast<sockaddr*>(&at), len, name.data(), name.size(), service.data(),
              service.size(), NI_NUMERICHOST | NI_NUMERICSERV);
  const std::string h = name.data();
  bound_ = (h.find(':') != std::string::npos ? "[" + h + "]" : h) + ":" + service.data();
  if (pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
    close(listener_);
    throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
  }
  thread_ = std::thread([this] { run(); });
}

HttpServer::~HttpServer() {
  const char byte = 0;
  (void)!write(wake_[1], &byte, 1);
  thread_.join();
  close(listener_);
  close(wake_[0]);
  close(wake_[1]);
}

void HttpServer::run() noexcept {
  std::vector<Client> clients;
  std::vector<pollfd> fds;
  for (;;) {
    try {
      fds.clear();
      fds.push_back({wake_[0], POLLIN, 0});
      fds.push_back({listener_, static_cast<short>(clients.size() < kMaxClients ? POLLIN : 0), 0});
      auto next = Clock::now() + std::chrono::seconds(1);
      for (const auto& c : clients) {
        fds.push_back(
            {c.fd, static_cast<short>(c.state == Client::State::writing ? POLLOUT : POLLIN), 0});
        next = std::min(next, c.deadline);
      }
      const auto wait =
          std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now()).count();
      if (poll(fds.data(), fds.size(), static_cast<int>(std::max<long long>(wait, 0) + 1)) < 0 &&
          errno != EINTR)
        continue;
      if ((fds[0].revents & POLLIN) != 0) break;
      const auto now = Clock::now();
      for (std::size_t i = 0; i < clients.size(); ++i) {
        auto& c = clients[i];
        const short ev = fds[i + 2].revents;
        if (c.state == Client::State::reading && (ev & (POLLIN | POLLHUP | POLLERR)) != 0) {
          std::array<char, 4096> buf{};
          const auto n = recv(c.fd, buf.data(), buf.size(), 0);
          if (n > 0) c.in.append(buf.data(), static_cast<std::size_t>(n));
          if (const auto end = head_end(c.in); end != std::string::npos) {
            c.out = http_answer(c.in.substr(0, end), handler_);
          } else if (c.in.size() > kMaxRequest || (n == 0 && !c.in.empty())) {
            c.out = error(400);
          } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            close(c.fd);
            c.fd = -1;
            continue;
          }
          if (!c.out.empty()) {
            c.state = Client::State::writing;
            c.deadline = now + kAnswerTime;
          }
        } else if (c.state == Client::State::writing && (ev & (POLLOUT | POLLHUP | POLLERR)) != 0) {
          const auto n = send(c.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
          if (n > 0) c.sent += static_cast<std::size_t>(n);
          if (n < 0 && errno != EAGAIN && errno != EINTR) {
            close(c.fd);
            c.fd = -1;
            continue;
          }
          if (c.sent == c.out.size()) {
            // Read what the client still sends until it closes, so that the close sends no
            // reset that would take the answer with it.
            shutdown(c.fd, SHUT_WR);
            c.state = Client::State::draining;
            c.deadline = now + std::chrono::seconds(1);
          }
        } else if (c.state == Client::State::draining && (ev & (POLLIN | POLLHUP | POLLERR)) != 0) {
          std::array<char, 4096> buf{};
          const auto n = recv(c.fd, buf.data(), buf.size(), 0);
          if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            close(c.fd);
            c.fd = -1;
            continue;
          }
        }
        if (now >= c.deadline) {
          if (c.state == Client::State::reading) {
            // Too slow to ask: answered once, without waiting for it to take the answer.
            const auto late = error(408);
            (void)send(c.fd, late.data(), late.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
          }
          close(c.fd);
          c.fd = -1;
        }
      }
      std::erase_if(clients, [](const Client& c) { return c.fd < 0; });
      if ((fds[1].revents & POLLIN) != 0) {
        const int fd = accept4(listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) clients.push_back({fd, {}, {}, 0, Client::State::reading, now + kRequestTime});
      }
    } catch (...) {
      // Out of memory for a buffer, say: drop every connection and go on serving.
      for (auto& c : clients)
        close(c.fd);
      clients.clear();
    }
  }
  for (auto& c : clients)
    close(c.fd);
}

}  // namespace spindle_cli
