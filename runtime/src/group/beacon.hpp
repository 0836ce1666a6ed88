// Discovery across hosts with no configuration (DESIGN §7; docs/membership.md, "Discovery
// across hosts"): the leader of a domain announces its join port by UDP multicast, as SPDP
// announces RTPS participants, and a participant that starts asks for it and listens. The
// join itself goes on over tcp through the join port (join.hpp).
//
//   participant that starts                 leader of domain D (join port P)
//   -----------------------                 ---------------------------------
//   QUERY {D, P}  ----- multicast group ---> answers at once, and every interval anyway:
//                 <---------------------     ANNOUNCE {D, P, identity, leader, members,
//                                                      view, the join port's host}
//   joins through host:P (join.hpp)
//
// Every member listens, not only the leader: two domains of one id that started apart (a
// network that was cut, two hosts that started at once) hear each other once they meet, and
// the smaller one restarts into the larger (Engine::announce_on): each of its members halts
// and rejoins through the larger domain's join port. Smaller: fewer members, or as many with
// a larger identity, so that both sides agree from the same two announcements.
//
// A domain is its id and its join port: announcements of another join port are not heard
// (tests on one host keep apart by their join ports, as they do for joining).
//
// The datagram (little-endian; docs/membership.md has it drawn):
//
//   +------+---+---+----+------+ ------------- an announcement only ------------------+
//   | SPDB | v | k | P  |  D   | identity | leader | members |  view (epoch) | host    |
//   |  u32 |u8 |u8 |u16 | u32  |   u64    |  u32   |   u32   |     u64       | u32 IPv4|
//   +------+---+---+----+------+----------+--------+---------+---------------+---------+
//   v: kBeaconVersion; k: 1 announce, 2 query; 12 bytes for a query, 40 for an announcement
//
// Threading: a Beacon owns one thread that receives, answers queries and announces every
// interval; announce(), query(), leaders() and set_listener() from any thread. The listener
// runs on the beacon's thread under listener_mu_ (so that set_listener(nullptr) returns once
// no call runs) and must not block or call set_listener; it may call the others. Lock
// order: listener_mu_, then mu_ (a leaf).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <dds/core/Exception.hpp>
#include <spindle/transport/transport.hpp>

namespace spindle::group {

using transport::NodeId;

inline constexpr std::uint32_t kBeaconMagic = 0x42445053;  // "SPDB" as it lies in the datagram
inline constexpr std::uint8_t kBeaconVersion = 1;
inline constexpr std::size_t kQueryBytes = 12;
inline constexpr std::size_t kAnnouncementBytes = 40;

enum class BeaconKind : std::uint8_t { announce = 1, query = 2 };

// What a leader says of its domain (a query carries the domain id and join port only).
struct Announcement {
  std::uint32_t domain_id = 0;
  std::uint16_t join_port = 0;
  std::uint64_t identity = 0;  // View::identity: the domain since it was founded
  NodeId leader = 0;
  std::uint32_t members = 0;
  std::uint64_t epoch = 0;
  std::uint32_t ipv4 = 0;  // the join port's host, network byte order
  friend bool operator==(const Announcement&, const Announcement&) = default;
};

struct BeaconMessage {
  BeaconKind kind = BeaconKind::announce;
  Announcement announcement;
};

[[nodiscard]] std::vector<std::byte> encode(const BeaconMessage& m);
// nullopt with `error` saying what is wrong (its size, magic, version, kind, a zero field).
[[nodiscard]] std::optional<BeaconMessage> parse_beacon(std::span<const std::byte> datagram,
                                                        std::string& error);

// Whether the domain `theirs` announces wins over `mine` when they meet: it has more members,
// or as many and a smaller identity. The loser restarts into the winner.
[[nodiscard]] bool wins_over(const Announcement& theirs, const Announcement& mine) noexcept;

struct BeaconSettings {
  std::uint32_t domain_id = 0;
  std::uint16_t join_port = 0;
  std::string group = "239.255.0.1";
  std::uint16_t port = 7399;
  std::string interface;  // its IPv4 address: where announcements go out and are heard
  int ttl = 1;
  std::chrono::milliseconds interval{1000};
};

// Multicast cannot be used here: the reason names the interface and what failed.
class BeaconUnavailable : public dds::core::Error {
 public:
  using dds::core::Error::Error;
};

class Beacon {
 public:
  // Called for every announcement of this domain (id and join port) heard from another
  // domain or another leader (not this beacon's own).
  using Listener = std::function<void(const Announcement&)>;

  // Opens the socket and joins the group on the interface; throws BeaconUnavailable.
  explicit Beacon(BeaconSettings settings);
  ~Beacon();
  Beacon(const Beacon&) = delete;
  Beacon& operator=(const Beacon&) = delete;

  // What this member announces while it leads (every interval, and at once now and to each
  // query); nullopt: nothing.
  void announce(std::optional<Announcement> mine);
  // Asks the leaders of this domain to announce themselves now.
  void query();
  // The leaders of this domain heard within three intervals, the winner first (wins_over),
  // this beacon's own announcement left out.
  [[nodiscard]] std::vector<Announcement> leaders() const;
  void set_listener(Listener listener);
  [[nodiscard]] const BeaconSettings& settings() const noexcept { return settings_; }

  struct Stats {
    std::uint64_t sent = 0;
    std::uint64_t heard = 0;    // announcements of this domain from others
    std::uint64_t ignored = 0;  // datagrams of other domains or join ports
    std::uint64_t malformed = 0;
  };
  [[nodiscard]] Stats stats() const;

 private:
  void run();
  void send(BeaconKind kind);
  void receive(std::chrono::steady_clock::time_point now);

  struct Heard {
    Announcement announcement;
    std::chrono::steady_clock::time_point at;
  };

  const BeaconSettings settings_;
  int fd_ = -1;
  int wake_[2] = {-1, -1};
  mutable std::mutex mu_;  // a leaf
  std::optional<Announcement> mine_;
  bool query_due_ = false;
  bool announce_due_ = false;
  std::vector<Heard> heard_;
  std::mutex listener_mu_;
  Listener listener_;  // listener_mu_
  Stats stats_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace spindle::group
