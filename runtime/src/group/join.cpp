// The contact protocol for joining a domain (see join.hpp; format in docs/membership.md).
#include "group/join.hpp"

#include "core/interfaces.hpp"
#include "core/socket_io.hpp"
#include "security/tls_socket.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <utility>

#include <dds/core/Exception.hpp>

namespace spindle::group {

namespace {

using core::connect_to;
using core::read_exact;
using core::remaining_ms;
using core::write_all;
using Clock = std::chrono::steady_clock;
constexpr std::size_t kMaxRequest = 8 * 1024;
constexpr std::size_t kMaxView = 1 << 20;
// The state transfer carries the retained history of every retained topic (docs/storage.md):
// it may be large, so it is read as it comes, never allocated up front from the header.
constexpr std::size_t kMaxState = std::size_t{16} << 30;
constexpr std::size_t kStateChunk = std::size_t{16} << 20;
constexpr auto kRequestTimeout = std::chrono::seconds(3);
// A joiner answers CHECK at once (its join() is reading); one that does not is gone or
// frozen, and is not proposed.
constexpr auto kReadyTimeout = std::chrono::seconds(1);
constexpr std::string_view kMagic = "SPINDLE-JOIN 2";
// Where an external client's HELLO frame has its magic (client/relay_wire.hpp).
constexpr std::size_t kClientMagicAt = 9;
constexpr std::string_view kClientMagic = "SPINDLE-CLIENT 1";
// A secured joiner's first line, and the secured port's answer: TLS follows.
constexpr std::string_view kSecureMagic = "SPINDLE-SECURE 1";
constexpr std::string_view kSecureAnswer = "SECURE 1";
// A TLS answer gives up when a chunk of it makes no progress for this long.
constexpr auto kTlsWriteStall = std::chrono::seconds(30);
constexpr std::size_t kTlsChunk = std::size_t{1} << 20;
constexpr std::string_view kSecuredDomain =
    "this domain is secured: a participant needs a security section (security.ca, "
    "security.certificate, security.private_key, security.permissions) in its domain file "
    "(docs/security.md)";
constexpr std::string_view kUnsecuredDomain =
    "this domain is not secured, and a participant with a security section does not join it";

// One line (without '\n'), at most `max` bytes.
std::optional<std::string> read_line(int fd, std::size_t max, Clock::time_point deadline,
                                     bool* closed = nullptr) {
  std::string line;
  std::byte c{};
  while (line.size() < max) {
    if (!read_exact(fd, &c, 1, deadline, closed)) return std::nullopt;
    if (static_cast<char>(c) == '\n') return line;
    line += static_cast<char>(c);
  }
  return std::nullopt;
}

// One join connection: a plain socket, or TLS over it (a secured domain). Owns the socket.
class Link {
 public:
  explicit Link(int fd) : fd_(fd) {}
  explicit Link(std::unique_ptr<security::TlsSocket> tls) : fd_(tls->fd()), tls_(std::move(tls)) {}
  ~Link() {
    if (tls_) {
      tls_->shutdown();
    } else if (fd_ >= 0) {
      ::close(fd_);
    }
  }
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Gives up a plain link's socket (for TLS over it).
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }

  bool write_all(const void* data, std::size_t n) {
    if (!tls_) return core::write_all(fd_, data, n);
    const auto* p = static_cast<const char*>(data);
    for (std::size_t at = 0; at < n; at += kTlsChunk) {
      if (!tls_->write_all(p + at, std::min(kTlsChunk, n - at), Clock::now() + kTlsWriteStall))
        return false;
    }
    return true;
  }
  bool read_exact(void* data, std::size_t n, Clock::time_point deadline, bool* closed = nullptr) {
    if (tls_) return tls_->read_exact(data, n, deadline, closed);
    return core::read_exact(fd_, static_cast<std::byte*>(data), n, deadline, closed);
  }
  std::optional<std::string> read_line(std::size_t max, Clock::time_point deadline,
                                       bool* closed = nullptr) {
    if (tls_) return tls_->read_line(max, deadline, closed);
    return spindle::group::read_line(fd_, max, deadline, closed);
  }

 private:
  int fd_;
  std::unique_ptr<security::TlsSocket> tls_;
};

}  // namespace

std::uint16_t default_join_port(std::uint32_t domain_id) noexcept {
  return static_cast<std::uint16_t>(kJoinPortBase + domain_id % 50000);
}

// --------------------------------------------------------------------------- wire form

std::string encode(const JoinRequest& r) {
  std::ostringstream os;
  os << kMagic << "\ndomain " << r.domain_id << "\nnode " << r.node << "\nhost " << r.host
     << "\nport " << r.port << '\n';
  if (r.pid != 0) os << "pid " << r.pid << '\n';
  if (r.host_id != 0) os << "host_id " << r.host_id << '\n';
  for (const auto& s : r.settings)
    os << "setting " << s.name << ' ' << s.value << '\n';
  os << "end\n";
  return os.str();
}

std::optional<JoinRequest> parse_join(std::string_view text, std::string& error) {
  JoinRequest r;
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  bool magic = false, end = false, domain = false, node = false, port = false;
  auto number = [&](const std::string& v, std::uint64_t max, std::uint64_t& out) {
    if (v.empty() || v.size() > 19 || v.find_first_not_of("0123456789") != std::string::npos)
      return false;
    out = std::stoull(v);
    return out <= max;
  };
  while (std::getline(in, line)) {
    ++n;
    const auto where = "join request line " + std::to_string(n) + ": ";
    if (!magic) {
      if (line != kMagic) {
        error = where + "expected '" + std::string(kMagic) + "'";
        return std::nullopt;
      }
      magic = true;
      continue;
    }
    if (line == "end") {
      end = true;
      break;
    }
    const auto sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string value = sp == std::string::npos ? "" : line.substr(sp + 1);
    std::uint64_t v = 0;
    if (key == "domain" && number(value, 0x7fffffff, v)) {
      r.domain_id = static_cast<std::uint32_t>(v);
      domain = true;
    } else if (key == "node" && number(value, 0xffffffff, v)) {
      r.node = static_cast<NodeId>(v);
      node = true;
    } else if (key == "port" && number(value, 65535, v)) {
      r.port = static_cast<std::uint16_t>(v);
      port = true;
    } else if (key == "pid" && number(value, 0xffffffff, v)) {
      r.pid = static_cast<std::uint32_t>(v);
    } else if (key == "host_id" && number(value, 0x7fffffffffffffff, v)) {
      r.host_id = v;
    } else if (key == "host" && !value.empty() && value.size() <= 255) {
      r.host = value;
    } else if (key == "setting" && value.find(' ') != std::string::npos && r.settings.size() < 32) {
      const auto s = value.find(' ');
      r.settings.push_back({value.substr(0, s), value.substr(s + 1)});
    } else {
      error = where + "bad or unknown field '" + line.substr(0, 64) + "'";
      return std::nullopt;
    }
  }
  if (!magic || !end || !domain || !node || !port) {
    error = "join request: incomplete (it needs the magic line, domain, node, port and end)";
    return std::nullopt;
  }
  return r;
}

// ------------------------------------------------------------------------- PendingJoin

namespace {

// The answer over the joiner's connection: WELCOME or REFUSED, then closed.
class SocketAnswer final : public JoinAnswer {
 public:
  explicit SocketAnswer(std::unique_ptr<Link> link) : link_(std::move(link)) {}
  SocketAnswer(const SocketAnswer&) = delete;
  SocketAnswer& operator=(const SocketAnswer&) = delete;

  bool welcome(const View& view, std::span<const std::byte> state) override {
    if (!link_) return false;
    const std::string yaml = to_yaml(view);
    const std::string head =
        "WELCOME " + std::to_string(yaml.size()) + " " + std::to_string(state.size()) + "\n";
    const bool ok = link_->write_all(head.data(), head.size()) &&
                    link_->write_all(yaml.data(), yaml.size()) &&
                    link_->write_all(state.data(), state.size());
    link_.reset();
    return ok;
  }

  bool wait() override {
    static constexpr std::string_view kWait = "WAIT\n";
    return link_ && link_->write_all(kWait.data(), kWait.size());
  }

  void refuse(const std::string& why) override {
    if (!link_) return;
    std::string line = "REFUSED " + why;
    for (auto& c : line)
      if (c == '\n') c = ' ';
    line += '\n';
    (void)link_->write_all(line.data(), line.size());
    link_.reset();
  }

 private:
  std::unique_ptr<Link> link_;
};

}  // namespace

bool PendingJoin::welcome(const View& view, std::span<const std::byte> state) {
  if (!answer_) return false;
  const auto answer = std::move(answer_);
  return answer->welcome(view, state);
}

void PendingJoin::refuse(const std::string& why) {
  if (!answer_) return;
  const auto answer = std::move(answer_);
  answer->refuse(why);
}

// ------------------------------------------------------------------------ JoinListener

int bind_join_port(const std::string& host, std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  // An address, or a name (node.host): its first IPv4 address.
  const auto address = core::resolve_ipv4(host);
  if (!address) {
    ::close(fd);
    return -1;
  }
  a.sin_addr.s_addr = *address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

JoinListener::JoinListener(int listen_fd, Handler handler,
                           std::shared_ptr<ClientHandlerSlot> clients,
                           std::shared_ptr<const security::Credentials> credentials)
    : fd_(listen_fd),
      handler_(std::move(handler)),
      clients_(std::move(clients)),
      credentials_(std::move(credentials)) {
  if (::pipe2(wake_, O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
  thread_ = std::thread([this] { run(); });
}

JoinListener::~JoinListener() {
  if (wake_[1] >= 0) {
    const char c = 'x';
    (void)::write(wake_[1], &c, 1);
  }
  thread_.join();
  ::close(fd_);
  for (int f : wake_)
    if (f >= 0) ::close(f);
}

namespace {

// One connection to the join port: reading its request, then waiting for its READY.
struct Incoming {
  int fd = -1;
  std::string source;  // the peer's IPv4 address
  Clock::time_point deadline;
  std::string text;                    // what it sent so far (at most kMaxRequest)
  std::optional<JoinRequest> request;  // parsed: CHECK sent, waiting for READY
  std::string nonce;
  // A secured domain: TLS over fd (it owns fd then), its handshake under way or done.
  std::unique_ptr<security::TlsSocket> tls;
  bool handshaking = false;
  bool want_write = false;  // TLS waits for the socket to take bytes
  security::PeerIdentity peer;
};

// The connection's link, for an answer (the Incoming gives up its socket).
std::unique_ptr<Link> link_of(Incoming& c) {
  if (c.tls) return std::make_unique<Link>(std::move(c.tls));
  return std::make_unique<Link>(std::exchange(c.fd, -1));
}

// 16 hex digits, never all zero (0 means "no nonce" in a view).
std::string new_nonce() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uint64_t v = 0;
  while (v == 0)
    v = rng();
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Where the request ends: just past its "end" line (a whole line, not a value that ends in
// "end"), or npos while it is not complete.
std::size_t request_end(const std::string& text) {
  if (text.starts_with("end\n")) return 4;
  const auto at = text.find("\nend\n");
  return at == std::string::npos ? at : at + 5;
}

}  // namespace

void JoinListener::run() {
  std::vector<Incoming> open;
  std::vector<pollfd> fds;
  auto drop = [&](std::size_t i) {
    if (!open[i].tls) ::close(open[i].fd);
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
  };
  // Refuses connection i (when it said anything) and drops it.
  auto refuse = [&](std::size_t i, const std::string& why) {
    SocketAnswer(link_of(open[i])).refuse(why);
    open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
  };
  // A secured domain's members say in one line whom they turned away (docs/security.md).
  auto turned_away = [](const Incoming& c, const std::string& why) {
    std::cerr << "spindle: join port: refused " << (c.source.empty() ? "a participant" : c.source)
              << ": " << why << '\n';
  };
  for (;;) {
    fds.assign({{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}});
    auto next = Clock::time_point::max();
    for (const auto& c : open) {
      fds.push_back({c.fd, static_cast<short>(c.want_write ? POLLOUT : POLLIN), 0});
      next = std::min(next, c.deadline);
    }
    const int wait = open.empty() ? -1 : std::max(1, remaining_ms(next));
    if (::poll(fds.data(), fds.size(), wait) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if ((fds[1].revents & POLLIN) != 0) break;
    // Input first (indices match fds[2 + i] until something is erased: walk backwards).
    for (std::size_t i = open.size(); i-- > 0;) {
      if ((fds[2 + i].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR)) == 0) continue;
      auto& c = open[i];
      if (c.handshaking) {
        const auto step = c.tls->handshake_step();
        c.want_write = step == security::TlsSocket::Step::want_write;
        if (step == security::TlsSocket::Step::want_read || c.want_write) continue;
        if (step == security::TlsSocket::Step::failed) {
          turned_away(c, c.tls->error());
          drop(i);
          continue;
        }
        c.handshaking = false;
        c.peer = c.tls->peer();
        if (!c.peer.valid()) {
          const std::string why = "certificate " + c.peer.subject + " (issuer " + c.peer.issuer +
                                  "): " + c.peer.refusal;
          turned_away(c, why);
          refuse(i, why);
          continue;
        }
        c.deadline = Clock::now() + kRequestTimeout;
        // Its request may be in already: read on.
      }
      char buf[1024];
      bool got = false;
      long n = 0;
      do {
        const std::size_t room = kMaxRequest - c.text.size();
        if (room == 0) break;
        n = c.tls ? c.tls->recv_some(buf, std::min(room, sizeof buf))
                  : ::recv(c.fd, buf, std::min(room, sizeof buf), MSG_DONTWAIT);
        if (n > 0) {
          c.text.append(buf, static_cast<std::size_t>(n));
          got = true;
        }
        // TLS may hold decrypted bytes that poll() does not see: take all of them.
      } while (c.tls && n > 0);
      if (c.tls) c.want_write = c.tls->wants_write();
      if (!got) {
        if (c.tls ? n == -1 : (n < 0 && (errno == EAGAIN || errno == EINTR))) continue;
        drop(i);  // gone: a joiner that crashed after asking is never proposed
        continue;
      }
      // An external client's HELLO (u32 length, type 1, u32 length, its magic): the leader's
      // relay takes the connection (docs/membership.md, "External clients").
      if (!c.request && !c.tls && c.text.size() >= kClientMagicAt + kClientMagic.size() &&
          c.text.compare(kClientMagicAt, kClientMagic.size(), kClientMagic) == 0) {
        JoinPort::ClientHandler to;
        {
          std::lock_guard lock(clients_->mu);
          to = clients_->handler;
        }
        if (!to || credentials_) {
          if (credentials_) turned_away(c, "external clients are not admitted to a secured domain");
          drop(i);  // nobody here serves clients
          continue;
        }
        Incoming client = std::move(c);
        open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
        try {
          to(client.fd, std::move(client.text));
        } catch (const std::exception&) {
          // The handler owns the socket from here; nothing escapes this thread.
        }
        continue;
      }
      if (!c.tls && !c.request) {
        // The first line says whether the joiner is secured.
        const auto eol = c.text.find('\n');
        if (eol == std::string::npos && c.text.size() < 64) continue;  // the line is not in
        const bool secure_line = std::string_view(c.text).substr(0, eol) == kSecureMagic;
        if (secure_line && !credentials_) {
          refuse(i, std::string(kUnsecuredDomain));
          continue;
        }
        if (!secure_line && credentials_) {
          turned_away(c, "a participant with no security section asked to join");
          refuse(i, std::string(kSecuredDomain));
          continue;
        }
        if (secure_line) {
          if (eol + 1 != c.text.size()) {
            refuse(i, "nothing may follow '" + std::string(kSecureMagic) +
                          "' before the port answers");
            continue;
          }
          const std::string answer = std::string(kSecureAnswer) + "\n";
          if (!write_all(c.fd, answer.data(), answer.size())) {
            drop(i);
            continue;
          }
          c.text.clear();
          c.tls = std::make_unique<security::TlsSocket>(*credentials_, c.fd, true);
          c.handshaking = true;
          continue;
        }
      }
      if (!c.request) {
        const auto end = request_end(c.text);
        if (end == std::string::npos) {
          if (c.text.size() >= kMaxRequest) refuse(i, "request longer than 8 KiB");
          continue;
        }
        std::string error;
        auto request = parse_join(c.text.substr(0, end), error);
        if (!request) {
          refuse(i, error);
          continue;
        }
        request->source = c.source;
        request->subject = c.peer.subject;
        request->serial = c.peer.serial;
        c.request = std::move(request);
        c.nonce = new_nonce();
        c.request->nonce = std::stoull(c.nonce, nullptr, 16);
        c.text.clear();
        c.deadline = Clock::now() + kReadyTimeout;
        const std::string check = "CHECK " + c.nonce + "\n";
        const bool sent = c.tls ? c.tls->write_all(check.data(), check.size(), c.deadline)
                                : write_all(c.fd, check.data(), check.size());
        if (!sent) drop(i);
        continue;
      }
      const auto eol = c.text.find('\n');
      if (eol == std::string::npos) {
        if (c.text.size() > 64) refuse(i, "expected READY");
        continue;
      }
      if (c.text.substr(0, eol) != "READY " + c.nonce) {
        refuse(i, "expected READY " + c.nonce);
        continue;
      }
      Incoming done = std::move(c);
      open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
      if (!done.tls) {
        const int flags = ::fcntl(done.fd, F_GETFL);
        if (flags >= 0) (void)::fcntl(done.fd, F_SETFL, flags & ~O_NONBLOCK);  // the answer blocks
      }
      try {
        auto request = std::move(*done.request);
        handler_(PendingJoin(std::make_unique<SocketAnswer>(link_of(done)), std::move(request)));
      } catch (const std::exception&) {
        // The handler refused or dropped it; nothing escapes this thread.
      }
    }
    // Deadlines: a request not in within kRequestTimeout, a READY not within kReadyTimeout.
    const auto now = Clock::now();
    for (std::size_t i = open.size(); i-- > 0;) {
      if (now < open[i].deadline) continue;
      if (open[i].request || open[i].text.empty() || open[i].handshaking) {
        drop(i);
      } else {
        refuse(i, "incomplete request after " + std::to_string(kRequestTimeout.count()) + " s");
      }
    }
    if ((fds[0].revents & POLLIN) == 0) continue;
    sockaddr_in from{};
    socklen_t len = sizeof from;
    const int c =
        ::accept4(fd_, reinterpret_cast<sockaddr*>(&from), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (c < 0) {
      // Out of descriptors or a connection that went away: go on after a breath.
      if (errno == EMFILE || errno == ENFILE) ::usleep(50'000);
      continue;
    }
    // Answers of a few lines, and a TLS handshake's flights: each at once (no Nagle).
    const int nodelay = 1;
    (void)::setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
    // At the cap the oldest connection goes: a flood of silent connections cannot keep a
    // joiner out (it asks again), and what the port holds stays bounded.
    if (open.size() >= kMaxJoinConnections) drop(0);
    char ip[INET_ADDRSTRLEN] = "";
    if (from.sin_family == AF_INET) (void)::inet_ntop(AF_INET, &from.sin_addr, ip, sizeof ip);
    Incoming in;
    in.fd = c;
    in.source = ip;
    in.deadline = Clock::now() + kRequestTimeout;
    open.push_back(std::move(in));
  }
  for (std::size_t i = open.size(); i-- > 0;)
    drop(i);
}

// ------------------------------------------------------------------------- TcpJoinPort

TcpJoinPort::TcpJoinPort(std::string host, std::uint16_t port, int bound_fd,
                         std::shared_ptr<const security::Credentials> credentials)
    : host_(std::move(host)),
      port_(port),
      bound_fd_(bound_fd),
      credentials_(std::move(credentials)) {}

TcpJoinPort::~TcpJoinPort() {
  close();
  if (bound_fd_ >= 0) ::close(bound_fd_);
}

bool TcpJoinPort::open(Handler handler) {
  if (listener_) return true;
  int fd = std::exchange(bound_fd_, -1);
  if (fd < 0) fd = bind_join_port(host_, port_);
  if (fd < 0) return false;
  listener_ = std::make_unique<JoinListener>(fd, std::move(handler), clients_, credentials_);
  return true;
}

void TcpJoinPort::set_client_handler(ClientHandler handler) {
  std::lock_guard lock(clients_->mu);
  clients_->handler = std::move(handler);
}

void TcpJoinPort::close() {
  listener_.reset();
}

// ------------------------------------------------------------------------------- join

std::optional<Welcome> join(const std::vector<transport::NodeAddress>& contacts,
                            const JoinRequest& request, Clock::time_point deadline,
                            const std::shared_ptr<const security::Credentials>& credentials,
                            Clock::duration patience) {
  const std::string text = encode(request);
  const std::string domain = "domain " + std::to_string(request.domain_id);
  // What a WAIT gives back (docs/membership.md, "The contact protocol").
  if (patience <= Clock::duration::zero()) patience = deadline - Clock::now();
  for (const auto& contact : contacts) {
    // From the address the request gives: the leader has members dial the joiner only at
    // the address it asked from.
    const int fd = connect_to(contact, std::min(deadline, Clock::now() + std::chrono::seconds(1)),
                              request.host);
    if (fd < 0) continue;
    auto link = std::make_unique<Link>(fd);
    if (credentials) {
      // docs/security.md: say we are secured, then TLS; the leader must prove it is one of
      // this domain's members before anything of ours crosses.
      const std::string hello = std::string(kSecureMagic) + "\n";
      if (!link->write_all(hello.data(), hello.size())) continue;
      bool closed = false;
      const auto answer = link->read_line(4096, deadline, &closed);
      if (!answer && closed) continue;  // the leader went away: ask again
      if (!answer || *answer != kSecureAnswer) {
        const std::string said = answer ? answer->substr(0, 160) : "nothing in time";
        throw dds::core::Error(
            domain + " at " + transport::address_of(contact) + " is not secured (it answered '" +
            said +
            "'), and a participant with a security section does not join an unsecured domain");
      }
      // The descriptor becomes the TLS socket's.
      auto tls = std::make_unique<security::TlsSocket>(*credentials, link->release(), false);
      if (!tls->handshake(deadline)) {
        throw dds::core::Error("joining " + domain + " through " + transport::address_of(contact) +
                               ": " + tls->error());
      }
      const auto leader = tls->peer();
      if (!leader.valid()) {
        throw dds::core::Error("joining " + domain + " through " + transport::address_of(contact) +
                               ": the leader's certificate " + leader.subject + " (issuer " +
                               leader.issuer + ") does not check out: " + leader.refusal +
                               "; it is not a member of this domain");
      }
      link = std::make_unique<Link>(std::move(tls));
    }
    if (!link->write_all(text.data(), text.size())) continue;
    bool closed = false;
    auto head = link->read_line(4096, deadline, &closed);
    // The port checks that we are here to take the answer: say so at once.
    if (head && head->rfind("CHECK ", 0) == 0 && head->size() <= 64) {
      const std::string ready = "READY " + head->substr(6) + "\n";
      if (!link->write_all(ready.data(), ready.size())) continue;
      // The leader took our request (it checked that we are here): we wait our whole
      // patience for its answer from now, and, queued behind other joiners (at most
      // kMaxJoins go in per view change), again from each WAIT it sends while we wait.
      deadline = std::max(deadline, Clock::now() + patience);
      head = link->read_line(4096, deadline, &closed);
    }
    while (head && *head == "WAIT") {
      deadline = std::max(deadline, Clock::now() + patience);
      head = link->read_line(4096, deadline, &closed);
    }
    // Closed without a word: the leader went away while we asked (it closed or crashed);
    // as with nobody listening, the caller asks again.
    if (!head && closed) continue;
    if (!head) {
      throw dds::core::Error("joining " + domain + " through " + transport::address_of(contact) +
                             ": the leader did not answer in time");
    }
    if (head->rfind("REFUSED ", 0) == 0) {
      throw dds::core::Error(domain + " refused node " + std::to_string(request.node) +
                             " (contact " + transport::address_of(contact) +
                             "): " + head->substr(8));
    }
    std::istringstream in(*head);
    std::string word;
    std::size_t view_len = 0, state_len = 0;
    if (!(in >> word >> view_len >> state_len) || word != "WELCOME" || view_len > kMaxView ||
        state_len > kMaxState) {
      throw dds::core::Error("joining " + domain + ": " + transport::address_of(contact) +
                             " answered what is not a Spindle DDS leader: '" + head->substr(0, 64) +
                             "'");
    }
    std::string yaml(view_len, '\0');
    Welcome w;
    bool whole = link->read_exact(yaml.data(), view_len, deadline);
    while (whole && w.state.size() < state_len) {
      const auto at = w.state.size();
      w.state.resize(at + std::min(kStateChunk, state_len - at));
      whole = link->read_exact(w.state.data() + at, w.state.size() - at, deadline);
    }
    if (!whole)
      throw dds::core::Error("joining " + domain + ": the leader's welcome was cut short");
    try {
      w.view = parse_group(yaml, "the leader's welcome");
    } catch (const GroupError& e) {
      throw dds::core::Error("joining " + domain + ": " + e.what());
    }
    return w;
  }
  return std::nullopt;
}

}  // namespace spindle::group
