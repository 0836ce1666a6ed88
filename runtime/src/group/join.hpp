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
// The join port: 7410 + domain id on 127.0.0.1 unless the domain file says otherwise; only
// the leader listens on it, and whoever leads next takes it over — so participants of a
// domain on one host find each other with no configuration, in any start order.
//
// Threading: JoinListener owns one thread that accepts and reads requests (each bounded in
// size and time; a stranger that sends nothing is dropped after a few seconds), then hands
// each valid request to its handler with the open connection; welcome()/refuse() answer it
// from any thread. join() blocks the calling thread, bounded by its deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <spindle/transport/transport.hpp>

#include "group/view.hpp"

namespace spindle::group {

inline constexpr std::uint16_t kJoinPortBase = 7410;
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
  std::vector<transport::AgreedSetting> settings;
};

struct Welcome {
  View view;
  std::vector<std::byte> state;
};

// A request and the connection to answer it on (owned: answer once, or drop to close).
class PendingJoin {
 public:
  PendingJoin() = default;
  PendingJoin(int fd, JoinRequest request) : fd_(fd), request_(std::move(request)) {}
  ~PendingJoin();
  PendingJoin(PendingJoin&& o) noexcept;
  PendingJoin& operator=(PendingJoin&& o) noexcept;
  PendingJoin(const PendingJoin&) = delete;
  PendingJoin& operator=(const PendingJoin&) = delete;

  [[nodiscard]] const JoinRequest& request() const noexcept { return request_; }
  // Sends the view and the state; false if the joiner is gone.
  bool welcome(const View& view, std::span<const std::byte> state);
  void refuse(const std::string& why);

 private:
  int fd_ = -1;
  JoinRequest request_;
};

class JoinListener {
 public:
  using Handler = std::function<void(PendingJoin)>;
  // Takes a bound, listening socket (bind_join_port()).
  JoinListener(int listen_fd, Handler handler);
  ~JoinListener();
  JoinListener(const JoinListener&) = delete;
  JoinListener& operator=(const JoinListener&) = delete;

 private:
  void run();
  int fd_;
  int wake_[2] = {-1, -1};
  Handler handler_;
  std::thread thread_;
};

// A listening socket on host:port (SO_REUSEADDR), or -1 when the port is taken.
[[nodiscard]] int bind_join_port(const std::string& host, std::uint16_t port);

// Asks each contact in turn to let `request` join. nullopt when no contact answers (no
// domain is running there); throws dds::core::Error with the leader's words when refused.
[[nodiscard]] std::optional<Welcome> join(const std::vector<transport::NodeAddress>& contacts,
                                          const JoinRequest& request,
                                          std::chrono::steady_clock::time_point deadline);

// The request's wire form and its parser (for tests and the fuzzer): nullopt with `error`
// naming the line when malformed.
[[nodiscard]] std::string encode(const JoinRequest& r);
[[nodiscard]] std::optional<JoinRequest> parse_join(std::string_view text, std::string& error);

}  // namespace spindle::group
