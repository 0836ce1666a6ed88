// TLS over one socket (see tls_socket.hpp).
#include "security/tls_socket.hpp"

#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace spindle::security {

namespace {

// OpenSSL writes to the socket with write(): a peer that closed would raise SIGPIPE and end
// the process. While one of our TLS calls runs, SIGPIPE is blocked for this thread, and one
// it raised is taken before the mask is restored (the socket's error reports it instead).
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    (void)sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    (void)pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    if (!was_pending_) {
      sigset_t pending;
      sigemptyset(&pending);
      (void)sigpending(&pending);
      if (sigismember(&pending, SIGPIPE) == 1) {
        const timespec zero{};
        (void)sigtimedwait(&pipe_, nullptr, &zero);
      }
    }
    (void)pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_{};
  sigset_t old_{};
  bool was_pending_ = false;
};

}  // namespace

TlsSocket::TlsSocket(const Credentials& credentials, int fd, bool server)
    : credentials_(credentials), fd_(fd) {
  const int flags = ::fcntl(fd_, F_GETFL);
  if (flags >= 0) (void)::fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  ssl_ = SSL_new(server ? credentials.server_context() : credentials.client_context());
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    error_ = openssl_error("cannot start TLS");
    return;
  }
  if (server) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
  }
}

TlsSocket::~TlsSocket() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (fd_ >= 0) ::close(fd_);
}

TlsSocket::Step TlsSocket::handshake_step() {
  if (ssl_ == nullptr) return Step::failed;
  const NoSigpipe no_sigpipe;
  ERR_clear_error();
  const int rc = SSL_do_handshake(ssl_);
  if (rc == 1) return Step::done;
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ) return Step::want_read;
  if (err == SSL_ERROR_WANT_WRITE) return Step::want_write;
  if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
    error_ = errno != 0 ? std::string("the connection failed: ") + std::strerror(errno)
                        : "the peer closed the connection during the TLS handshake";
  } else {
    error_ = "TLS handshake: " + openssl_error("failed");
  }
  return Step::failed;
}

bool TlsSocket::wait(bool for_write, Clock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) {
    error_ = "timed out";
    return false;
  }
  pollfd p{fd_, static_cast<short>(for_write ? POLLOUT : POLLIN), 0};
  const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
  if (rc < 0 && errno == EINTR) return true;
  if (rc <= 0) {
    error_ = rc == 0 ? "timed out" : std::string("poll: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool TlsSocket::handshake(Clock::time_point deadline) {
  for (;;) {
    switch (handshake_step()) {
      case Step::done:
        return true;
      case Step::failed:
        return false;
      case Step::want_read:
        if (!wait(false, deadline)) return false;
        break;
      case Step::want_write:
        if (!wait(true, deadline)) return false;
        break;
    }
  }
}

PeerIdentity TlsSocket::peer() const {
  return credentials_.identify(ssl_);
}

long TlsSocket::recv_some(void* data, std::size_t n) {
  if (ssl_ == nullptr) return -2;
  const NoSigpipe no_sigpipe;
  ERR_clear_error();
  const int rc = SSL_read(ssl_, data, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
  want_write_ = false;
  if (rc > 0) return rc;
  const int err = SSL_get_error(ssl_, rc);
  if (err == SSL_ERROR_WANT_READ) return -1;
  if (err == SSL_ERROR_WANT_WRITE) {
    want_write_ = true;
    return -1;
  }
  if (err == SSL_ERROR_ZERO_RETURN) return 0;
  if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return 0;  // closed without notify
  error_ = "TLS: " + openssl_error("read failed");
  return -2;
}

bool TlsSocket::read_exact(void* data, std::size_t n, Clock::time_point deadline, bool* closed) {
  auto* p = static_cast<char*>(data);
  std::size_t got = 0;
  while (got < n) {
    const long rc = recv_some(p + got, n - got);
    if (rc > 0) {
      got += static_cast<std::size_t>(rc);
      continue;
    }
    if (rc == 0 || rc == -2) {
      if (closed != nullptr) *closed = rc == 0;
      return false;
    }
    if (!wait(want_write_, deadline)) return false;
  }
  return true;
}

bool TlsSocket::write_all(const void* data, std::size_t n, Clock::time_point deadline) {
  if (ssl_ == nullptr) return false;
  const auto* p = static_cast<const char*>(data);
  std::size_t sent = 0;
  while (sent < n) {
    const NoSigpipe no_sigpipe;
    ERR_clear_error();
    const int rc =
        SSL_write(ssl_, p + sent, static_cast<int>(std::min<std::size_t>(n - sent, 1 << 30)));
    if (rc > 0) {
      sent += static_cast<std::size_t>(rc);
      continue;
    }
    const int err = SSL_get_error(ssl_, rc);
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      if (!wait(err == SSL_ERROR_WANT_WRITE, deadline)) return false;
      continue;
    }
    error_ = "TLS: " + openssl_error("write failed");
    return false;
  }
  return true;
}

std::optional<std::string> TlsSocket::read_line(std::size_t max, Clock::time_point deadline,
                                                bool* closed) {
  std::string line;
  char c = 0;
  while (line.size() < max) {
    if (!read_exact(&c, 1, deadline, closed)) return std::nullopt;
    if (c == '\n') return line;
    line += c;
  }
  return std::nullopt;
}

void TlsSocket::shutdown() noexcept {
  if (ssl_ != nullptr) {
    const NoSigpipe no_sigpipe;
    ERR_clear_error();
    (void)SSL_shutdown(ssl_);
    ERR_clear_error();
  }
}

}  // namespace spindle::security
