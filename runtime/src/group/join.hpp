// Joining a running domain (DESIGN §7): the contact protocol between a participant that
// starts and the domain's leader, over a TCP connection of its own (docs/membership.md,
// "Joining", has the byte format).
//
//   joiner                                   leader (holds the domain's join port)
//   ------                                   ------
//   connect to a contact (the join port)
//   JOIN: domain, node id, its transport
//   address, the settings that must agree ->
//                                            checks them; the join goes into the next
//                                            view's proposal (membership.hpp); after the
//                                            commit and the ragged edge:
//                                       <-   WELCOME: the new view (YAML) and the state
//                                            transfer (endpoint records, etc.)
//   builds its engine from that view and connects with everyone else
//
//   or, at once:                        <-   REFUSED: why (another domain, a setting that
//                                            differs, an id in use, a full view)
//
// The join port: 7410 + domain id unless the domain file says otherwise, at the leader's
// node.bind (its node.host); only the leader listens on it, and whoever leads next takes it
// over — so participants of a domain on one host find each other with no configuration, in
// any start order, and those on other hosts through contacts or the multicast beacon that
// announces it (beacon.hpp).
//
// The leader's side is a JoinPort, so that the engine joins the same way on real sockets
// (TcpJoinPort) and in the deterministic simulator (sim_join.hpp, no socket at all).
//
// Before a request goes to the handler, the port checks that the joiner is there to take
// its answer: it sends CHECK <nonce> and waits a moment for READY <nonce> (a joiner that
// crashed or froze right after asking is never proposed).
//
// Threading: JoinListener owns one thread that accepts connections and serves up to
// kMaxJoinConnections of them at once, each with its own deadline and at most kMaxRequest
// bytes read (a stranger that sends nothing is dropped after a few seconds; past the cap
// the oldest is dropped), then hands each checked request to its handler with the open
// connection; welcome()/refuse() answer it from any thread. join() blocks the calling
// thread, bounded by its deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "group/view.hpp"

namespace spindle::security {
class Credentials;
}

namespace spindle::group {

inline constexpr std::uint16_t kJoinPortBase = 7410;
// Join connections the port serves at once (reading a request or waiting for READY).
inline constexpr std::size_t kMaxJoinConnections = 256;
// A leader that is closing turns joiners away with this; a joiner asks again (the next
// leader takes the port over, or it founds the domain).
inline constexpr std::string_view kLeaderLeaving = "the leader is leaving the domain; try again";
// The join port of a domain when the domain file names none.
[[nodiscard]] std::uint16_t default_join_port(std::uint32_t domain_id) noexcept;

struct JoinRequest {
  std::uint32_t domain_id = 0;
  NodeId node = 0;
  std::string host = "127.0.0.1";  // the joiner's transport address
  std::uint16_t port = 0;
  // The joiner's process (liveness.hpp), so that members on its host can tell its death
  // for certain; 0: unknown.
  std::uint32_t pid = 0;
  std::uint64_t host_id = 0;
  std::vector<transport::AgreedSetting> settings;
  // Not on the wire: the address the request came from, as the join port saw it (empty in
  // the simulator). Members dial a joiner only there (docs/membership.md, "Joining").
  std::string source;
  // Not in the request: the nonce of the port's CHECK, which the joiner answered. It goes
  // into the view; the joiner's transport proves it (the tcp HELLO), so that nobody else
  // can connect in its place. 0: none (the simulator).
  std::uint64_t nonce = 0;
  // Not on the wire: in a secured domain, the certificate the joiner proved in the join
  // port's TLS handshake (canonical subject, hex serial); empty otherwise.
  std::string subject{};
  std::string serial{};
};

struct Welcome {
  View view;
  std::vector<std::byte> state;
};

// The way back to one joiner: a TCP connection (join.cpp), or the simulator's
// (sim_join.hpp). Answer once; destroyed unanswered, the joiner learns the leader went
// away and asks again.
class JoinAnswer {
 public:
  virtual ~JoinAnswer() = default;
  // Sends the view and the state; false if the joiner is gone.
  virtual bool welcome(const View& view, std::span<const std::byte> state) = 0;
  virtual void refuse(const std::string& why) = 0;
  // Tells a joiner still queued that the leader goes on (WAIT: it waits its whole patience
  // again); false if it is gone. Nothing to say where nobody waits on a socket (simulator).
  virtual bool wait() { return true; }

 protected:
  JoinAnswer() = default;
  JoinAnswer(const JoinAnswer&) = default;
  JoinAnswer& operator=(const JoinAnswer&) = default;
};

// A request and the way to answer it (owned: answer once, or drop to close).
class PendingJoin {
 public:
  PendingJoin() = default;
  PendingJoin(std::unique_ptr<JoinAnswer> answer, JoinRequest request)
      : answer_(std::move(answer)), request_(std::move(request)) {}

  [[nodiscard]] const JoinRequest& request() const noexcept { return request_; }
  // Sends the view and the state; false if the joiner is gone or it was answered already.
  bool welcome(const View& view, std::span<const std::byte> state);
  void refuse(const std::string& why);
  // JoinAnswer::wait(), while it is not answered; false once answered or gone.
  bool wait() { return answer_ && answer_->wait(); }

 private:
  std::unique_ptr<JoinAnswer> answer_;
  JoinRequest request_;
};

// The leader's end of the join channel: the domain's TCP join port (TcpJoinPort), or the
// simulator's (sim_join.hpp). Only the leader holds it; whoever leads next opens it.
class JoinPort {
 public:
  using Handler = std::function<void(PendingJoin)>;
  // A connection that speaks the external clients' link instead (client/relay_wire.hpp: its
  // first frame a HELLO): the socket (non-blocking; the handler owns it) and what was read of
  // it so far. With none set, such a connection is refused.
  using ClientHandler = std::function<void(int fd, std::string already)>;
  virtual ~JoinPort() = default;
  // Any thread, open or not; the port's listener calls the latest handler.
  virtual void set_client_handler(ClientHandler handler) { (void)handler; }
  // Starts handing each request to `handler` (from any thread). False while someone else
  // holds the port (a leader before us, closing): try again shortly.
  virtual bool open(Handler handler) = 0;
  // Stops: the handler is not called once close() returned, and the port is free.
  virtual void close() = 0;
  [[nodiscard]] virtual bool is_open() const = 0;

 protected:
  JoinPort() = default;
  JoinPort(const JoinPort&) = default;
  JoinPort& operator=(const JoinPort&) = default;
};

// A thread that accepts TCP join connections on a listening socket and reads one request
// from each (bounded in size and time).
// Where a join port's client connections go (JoinPort::set_client_handler): shared between
// the port and its listener, so that a handler set while the port is open applies at once.
struct ClientHandlerSlot {
  std::mutex mu;
  JoinPort::ClientHandler handler;
};

// In a secured domain (`credentials` set; docs/security.md) a joiner first says
// "SPINDLE-SECURE 1", the port answers "SECURE 1", and the rest of the contact protocol runs
// over TLS 1.3, each side presenting its certificate: a joiner whose certificate does not
// check out is refused in words over that channel, and its request carries the subject and
// serial it proved. A plain request to a secured port, and a secured one to a plain port,
// are refused. External clients are not admitted to a secured domain.
class JoinListener {
 public:
  using Handler = JoinPort::Handler;
  // Takes a bound, listening socket (bind_join_port()).
  JoinListener(int listen_fd, Handler handler,
               std::shared_ptr<ClientHandlerSlot> clients = std::make_shared<ClientHandlerSlot>(),
               std::shared_ptr<const security::Credentials> credentials = nullptr);
  ~JoinListener();
  JoinListener(const JoinListener&) = delete;
  JoinListener& operator=(const JoinListener&) = delete;

 private:
  void run();
  int fd_;
  int wake_[2] = {-1, -1};
  Handler handler_;
  std::shared_ptr<ClientHandlerSlot> clients_;
  std::shared_ptr<const security::Credentials> credentials_;
  std::thread thread_;
};

// The domain's join port on host:port.
class TcpJoinPort final : public JoinPort {
 public:
  // `bound_fd`: a socket already bound and listening there (bind_join_port()), used by
  // the first open(); -1 to bind at open().
  TcpJoinPort(std::string host, std::uint16_t port, int bound_fd = -1,
              std::shared_ptr<const security::Credentials> credentials = nullptr);
  ~TcpJoinPort() override;
  TcpJoinPort(const TcpJoinPort&) = delete;
  TcpJoinPort& operator=(const TcpJoinPort&) = delete;

  bool open(Handler handler) override;
  void close() override;
  [[nodiscard]] bool is_open() const override { return listener_ != nullptr; }
  void set_client_handler(ClientHandler handler) override;

 private:
  std::string host_;
  std::uint16_t port_;
  int bound_fd_;
  std::shared_ptr<const security::Credentials> credentials_;
  std::shared_ptr<ClientHandlerSlot> clients_ = std::make_shared<ClientHandlerSlot>();
  std::unique_ptr<JoinListener> listener_;
};

// A listening socket on host:port (SO_REUSEADDR), or -1 when the port is taken.
[[nodiscard]] int bind_join_port(const std::string& host, std::uint16_t port);

// Asks each contact in turn to let `request` join. nullopt when no contact answers (no
// domain is running there); throws dds::core::Error with the leader's words when refused.
// With `credentials`, the join runs over TLS (above): a leader whose certificate does not
// check out, or a domain that is not secured, is an error naming it.
// A leader's WAIT (its joiners queued) moves the deadline to `patience` from then (zero: what
// was left of it at the call).
[[nodiscard]] std::optional<Welcome> join(
    const std::vector<transport::NodeAddress>& contacts, const JoinRequest& request,
    std::chrono::steady_clock::time_point deadline,
    const std::shared_ptr<const security::Credentials>& credentials = nullptr,
    std::chrono::steady_clock::duration patience = {});

// The request's wire form and its parser (for tests and the fuzzer): nullopt with `error`
// naming the line when malformed.
[[nodiscard]] std::string encode(const JoinRequest& r);
[[nodiscard]] std::optional<JoinRequest> parse_join(std::string_view text, std::string& error);

}  // namespace spindle::group
