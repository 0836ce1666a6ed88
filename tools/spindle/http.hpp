// A small HTTP/1.1 server for `spindle status --http`: GET (and HEAD) of a few fixed paths,
// one response per connection (Connection: close). It answers what it cannot take with an
// error status and goes on: 400 for a request that does not parse or is larger than 8 KiB,
// 408 for one that takes longer than 5 s to arrive, 405 for another method, 404 for a path
// the handler does not know; nothing a client sends ends the server.
//
// Threading: one thread of its own runs every connection (poll() over the listening socket
// and up to kMaxClients clients); the handler is called on it and must not throw (an
// exception is answered 500 and the server goes on). The constructor binds and starts it,
// the destructor stops and joins it.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <thread>

namespace spindle_cli {

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

class HttpServer {
 public:
  // The response for a GET of `path` (the request target without its query), or nullopt for
  // 404.
  using Handler = std::function<std::optional<HttpResponse>(const std::string& path)>;

  // Listens at `address`, "HOST:PORT" (PORT 0: any free port; an IPv6 host in brackets).
  // Throws std::runtime_error naming the address and why when it cannot.
  HttpServer(const std::string& address, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Where it listens, "HOST:PORT" with the port it got.
  [[nodiscard]] const std::string& address() const noexcept { return bound_; }

  static constexpr int kMaxClients = 32;
  static constexpr std::size_t kMaxRequest = 8192;

 private:
  void run() noexcept;

  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: the destructor's byte ends poll()
  std::string bound_;
  Handler handler_;
  std::thread thread_;
};

// The response to one request's bytes (its head, up to the blank line), as the server sends
// it: status line, headers and body. Public for the server's unit of work; `handler` as above.
[[nodiscard]] std::string http_answer(const std::string& request,
                                      const HttpServer::Handler& handler);

}  // namespace spindle_cli
