// spindle::client::Relay: a member's service to external clients (docs/membership.md,
// "External clients"; the client's side is client_bus.hpp). It listens on the domain file's
// client_port and, for each client it welcomed:
//   - hands on, in this member's delivery order, every message of the builtin subgroup and
//     of the topics the client asked for (WANT) or this member retains, with the views and
//     suspicions between them — a tap on the Router (dcps::DeliveryTap), cut so that the
//     welcome's state transfer is exactly what came before the first message handed on;
//   - publishes the client's messages: their guids name the client's own node id (HELLO),
//     which the domain takes from this member once its client_attached message is delivered
//     (dcps::Router::node_of); each is checked: a client may write samples, announce its
//     participant, and announce or retire its own endpoints and topics, nothing else;
//   - when the client goes (a crash, a close, a bad frame), retires every endpoint and topic
//     it announced and did not retire, then sends client_detached.
// A client never holds this member: what it does not read waits in a queue of its own, and
// past kClientQueueBytes its topic messages are dropped (its readers count them lost by their
// sequence numbers), but a retained topic's message then cuts it off (its copy of the history
// would keep the hole; it connects again and takes the whole history with the welcome); past
// four times that it is cut off too. A message the client publishes waits
// while its topic's ring is full, and its connection is not read meanwhile (its writer sees
// its max_blocking_time run out).
//
// Threading: one I/O thread (accepts, reads, publishes, writes what the protocol thread could
// not); the tap runs on the protocol thread and sends what the socket takes at once. Lock
// order: the Router's tap lock, then clients_mu_, then a client's mu; stats_mu_ is a leaf.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "dcps/router.hpp"
#include "dcps/wire.hpp"
#include "group/engine.hpp"

namespace spindle::client {

// What a relay queues for one client before it drops its topic messages.
inline constexpr std::size_t kClientQueueBytes = std::size_t{32} << 20;

struct RelaySettings {
  bool listen = true;  // false: it takes only connections handed to it (adopt())
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the system picks (tests)
  std::uint32_t domain_id = 0;
  std::vector<transport::AgreedSetting> must_agree;
  std::size_t queue_bytes = kClientQueueBytes;
};

struct RelayStats {
  std::uint64_t clients = 0;    // connected now
  std::uint64_t welcomed = 0;   // ever
  std::uint64_t relayed = 0;    // messages handed on to clients
  std::uint64_t dropped = 0;    // topic messages dropped for clients that did not read
  std::uint64_t published = 0;  // client messages published here
  std::uint64_t refused = 0;    // client messages refused (not the client's to send)
  std::string last_refusal;
};

class Relay final : public dcps::DeliveryTap {
 public:
  // Listens at s.host:s.port and serves clients from its own thread. Throws dds::core::Error
  // when it cannot listen there.
  Relay(group::Bus& bus, dcps::Router& router, RelaySettings s);
  ~Relay() override;
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Stops serving: every client's connection closes (each client halts). Idempotent.
  void stop();
  // Serves a connection accepted elsewhere (the domain's join port, while this member leads:
  // group::JoinPort::set_client_handler), `already` read from it. Any thread.
  void adopt(int fd, std::string already);
  [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
  [[nodiscard]] RelayStats stats() const;
  // Cuts every client off, saying `why` (this member halted; or its retained history was
  // refreshed: its clients' copies miss what it missed, and a welcome brings them the whole).
  // Any thread; the Router's tap lock, where held, comes first.
  void cut_off_all(const std::string& why);

  // dcps::DeliveryTap (protocol thread, the Router's tap lock held).
  void on_batch(std::span<const group::Message> batch) override;
  void on_view(const group::View& view) override;
  void on_member_lost(transport::NodeId node, bool left, const std::string& why) override;
  void on_halt(const std::string& why) override;

 private:
  struct Client;
  void run();
  void serve();  // run()'s loop; an exception ends one turn of it, never the thread
  void accept_one();
  void take_adopted();
  // A new connection, waiting for its HELLO (I/O thread).
  void add_pending(int fd, std::string peer, std::string already);
  void read_from(const std::shared_ptr<Client>& c);
  // Handles one frame; false: the client is dropped (why in `why`).
  bool handle(const std::shared_ptr<Client>& c, std::uint8_t type, std::span<const std::byte> body,
              std::string& why);
  void welcome(const std::shared_ptr<Client>& c, std::span<const std::byte> hello);
  // Publishes the client's message; false while its ring is full (try again later).
  bool publish(const std::shared_ptr<Client>& c, const group::Channel& channel,
               std::span<const std::byte> message, std::string& why);
  [[nodiscard]] std::string check_message(const Client& c, std::span<const std::byte> message);
  void drop(const std::shared_ptr<Client>& c, const std::string& why);
  // The client went: what it announced and did not retire is retired, then client_detached.
  void let_go(Client& c);
  // client_attached / client_detached in the builtin subgroup; why it failed, or empty.
  [[nodiscard]] std::string announce_client(dcps::SampleKind kind, transport::NodeId client);
  // Queues `frame` for `c` and sends what the socket takes now (c.mu held).
  void queue(Client& c, std::span<const std::byte> frame);
  void flush(Client& c);  // c.mu held
  void to_all(std::span<const std::byte> frame);
  void wake();

  group::Bus* bus_;
  dcps::Router* router_;
  RelaySettings settings_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex clients_mu_;
  std::vector<std::shared_ptr<Client>> clients_;      // welcomed ones (the tap's)
  std::vector<std::shared_ptr<Client>> pending_;      // I/O thread: connected, no HELLO yet
  std::mutex adopt_mu_;                               // a leaf
  std::vector<std::pair<int, std::string>> adopted_;  // handed over, not yet pending
  std::atomic<bool> any_clients_{false};
  mutable std::mutex stats_mu_;  // a leaf
  RelayStats stats_;
};

}  // namespace spindle::client
