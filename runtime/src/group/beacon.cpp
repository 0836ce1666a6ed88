// The multicast beacon of discovery across hosts (see beacon.hpp).
#include "group/beacon.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace spindle::group {

namespace {

using Clock = std::chrono::steady_clock;

template <class T>
void put(std::vector<std::byte>& out, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<std::byte>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xff));
}

template <class T>
T get(std::span<const std::byte> in, std::size_t at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    v |= static_cast<std::uint64_t>(in[at + i]) << (8 * i);
  return static_cast<T>(v);
}

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

std::vector<std::byte> encode(const BeaconMessage& m) {
  const auto& a = m.announcement;
  std::vector<std::byte> out;
  out.reserve(kAnnouncementBytes);
  put(out, kBeaconMagic);
  put(out, kBeaconVersion);
  put(out, static_cast<std::uint8_t>(m.kind));
  put(out, a.join_port);
  put(out, a.domain_id);
  if (m.kind == BeaconKind::query) return out;
  put(out, a.identity);
  put(out, a.leader);
  put(out, a.members);
  put(out, a.epoch);
  // The address goes as it lies in memory (network byte order), not as a number.
  const auto* host = reinterpret_cast<const std::byte*>(&a.ipv4);
  out.insert(out.end(), host, host + sizeof a.ipv4);
  return out;
}

std::optional<BeaconMessage> parse_beacon(std::span<const std::byte> d, std::string& error) {
  if (d.size() < kQueryBytes) {
    error = "a datagram of " + std::to_string(d.size()) + " bytes, under the " +
            std::to_string(kQueryBytes) + " of a query";
    return std::nullopt;
  }
  if (get<std::uint32_t>(d, 0) != kBeaconMagic) {
    error = "not a Spindle DDS beacon (no SPDB magic)";
    return std::nullopt;
  }
  if (const auto v = get<std::uint8_t>(d, 4); v != kBeaconVersion) {
    error = "beacon version " + std::to_string(v) + ", this participant reads " +
            std::to_string(kBeaconVersion);
    return std::nullopt;
  }
  BeaconMessage m;
  const auto kind = get<std::uint8_t>(d, 5);
  if (kind != static_cast<std::uint8_t>(BeaconKind::announce) &&
      kind != static_cast<std::uint8_t>(BeaconKind::query)) {
    error = "unknown beacon kind " + std::to_string(kind);
    return std::nullopt;
  }
  m.kind = static_cast<BeaconKind>(kind);
  auto& a = m.announcement;
  a.join_port = get<std::uint16_t>(d, 6);
  a.domain_id = get<std::uint32_t>(d, 8);
  const std::size_t want = m.kind == BeaconKind::query ? kQueryBytes : kAnnouncementBytes;
  if (d.size() != want) {
    error = std::string(m.kind == BeaconKind::query ? "a query" : "an announcement") + " of " +
            std::to_string(d.size()) + " bytes, not " + std::to_string(want);
    return std::nullopt;
  }
  if (a.join_port == 0) {
    error = "join port 0";
    return std::nullopt;
  }
  if (m.kind == BeaconKind::query) return m;
  a.identity = get<std::uint64_t>(d, 12);
  a.leader = get<std::uint32_t>(d, 20);
  a.members = get<std::uint32_t>(d, 24);
  a.epoch = get<std::uint64_t>(d, 28);
  std::memcpy(&a.ipv4, d.data() + 36, sizeof a.ipv4);
  if (a.identity == 0 || a.members == 0 || a.epoch == 0 || a.ipv4 == 0) {
    error = "an announcement with a zero identity, member count, view or host";
    return std::nullopt;
  }
  return m;
}

bool wins_over(const Announcement& theirs, const Announcement& mine) noexcept {
  if (theirs.members != mine.members) return theirs.members > mine.members;
  return theirs.identity < mine.identity;
}

Beacon::Beacon(BeaconSettings s) : settings_(std::move(s)) {
  const auto where = "multicast discovery on " + settings_.interface + " (group " +
                     settings_.group + ", UDP port " + std::to_string(settings_.port) + ")";
  in_addr group{};
  in_addr iface{};
  if (::inet_pton(AF_INET, settings_.group.c_str(), &group) != 1 ||
      ::inet_pton(AF_INET, settings_.interface.c_str(), &iface) != 1)
    throw BeaconUnavailable(where + ": the group and the interface must be IPv4 addresses");
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw BeaconUnavailable(where + ": " + errno_text("socket"));
  auto fail = [&](const char* what) {
    const std::string why = errno_text(what);
    ::close(fd_);
    fd_ = -1;
    throw BeaconUnavailable(where + ": " + why);
  };
  const int one = 1;
  const int zero = 0;
  const unsigned char ttl = static_cast<unsigned char>(std::clamp(settings_.ttl, 1, 255));
  const unsigned char loop = 1;  // participants of this host hear it too
  if (::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) fail("SO_REUSEADDR");
  sockaddr_in local{};
  local.sin_family = AF_INET;
  local.sin_port = htons(settings_.port);
  local.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) fail("bind");
  ip_mreq join{};
  join.imr_multiaddr = group;
  join.imr_interface = iface;
  if (::setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &join, sizeof join) != 0)
    fail("joining the group (IP_ADD_MEMBERSHIP)");
  // Only our group: other groups joined on this port by other programs are not for us.
  if (::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof zero) != 0)
    fail("IP_MULTICAST_ALL");
  if (::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_IF, &iface, sizeof iface) != 0)
    fail("IP_MULTICAST_IF");
  if (::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0)
    fail("IP_MULTICAST_TTL");
  if (::setsockopt(fd_, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0)
    fail("IP_MULTICAST_LOOP");
  // A first datagram shows whether the network takes multicast at all (a route, an
  // interface that sends it): sending fails at once where it does not.
  const auto probe =
      encode(BeaconMessage{BeaconKind::query, {settings_.domain_id, settings_.join_port}});
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(settings_.port);
  to.sin_addr = group;
  if (::sendto(fd_, probe.data(), probe.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) < 0)
    fail("sending to the group");
  stats_.sent = 1;
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) fail("pipe");
  thread_ = std::thread([this] { run(); });
}

Beacon::~Beacon() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  const char c = 'x';
  (void)::write(wake_[1], &c, 1);
  thread_.join();
  ::close(fd_);
  for (const int f : wake_)
    ::close(f);
}

void Beacon::announce(std::optional<Announcement> mine) {
  {
    std::lock_guard lock(mu_);
    if (mine_ == mine) return;
    mine_ = mine;
    announce_due_ = mine.has_value();
  }
  const char c = 'a';
  (void)::write(wake_[1], &c, 1);
}

void Beacon::query() {
  {
    std::lock_guard lock(mu_);
    query_due_ = true;
  }
  const char c = 'q';
  (void)::write(wake_[1], &c, 1);
}

std::vector<Announcement> Beacon::leaders() const {
  const auto now = Clock::now();
  std::vector<Announcement> out;
  {
    std::lock_guard lock(mu_);
    for (const auto& h : heard_)
      if (now - h.at < 3 * settings_.interval) out.push_back(h.announcement);
  }
  std::sort(out.begin(), out.end(),
            [](const Announcement& a, const Announcement& b) { return wins_over(a, b); });
  return out;
}

void Beacon::set_listener(Listener listener) {
  std::lock_guard lock(listener_mu_);
  listener_ = std::move(listener);
}

Beacon::Stats Beacon::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Beacon::send(BeaconKind kind) {
  BeaconMessage m{kind, {settings_.domain_id, settings_.join_port}};
  {
    std::lock_guard lock(mu_);
    if (kind == BeaconKind::announce) {
      if (!mine_) return;
      m.announcement = *mine_;
    }
  }
  const auto bytes = encode(m);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(settings_.port);
  (void)::inet_pton(AF_INET, settings_.group.c_str(), &to.sin_addr);
  // A lost datagram is the next interval's business.
  if (::sendto(fd_, bytes.data(), bytes.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) >=
      0) {
    std::lock_guard lock(mu_);
    ++stats_.sent;
  }
}

void Beacon::receive(Clock::time_point now) {
  for (;;) {
    std::byte buf[256];
    const auto n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0) return;  // drained (EAGAIN), or an error the next poll shows again
    std::string error;
    const auto m = parse_beacon(std::span(buf, static_cast<std::size_t>(n)), error);
    bool heard = false;
    bool answer = false;
    {
      std::lock_guard lock(mu_);
      if (!m) {
        ++stats_.malformed;
        continue;
      }
      const auto& a = m->announcement;
      if (a.domain_id != settings_.domain_id || a.join_port != settings_.join_port) {
        ++stats_.ignored;
        continue;
      }
      if (m->kind == BeaconKind::query) {
        answer = mine_.has_value();
      } else if (!(mine_ && a.identity == mine_->identity && a.leader == mine_->leader)) {
        ++stats_.heard;
        auto it = std::find_if(heard_.begin(), heard_.end(), [&](const Heard& h) {
          return h.announcement.identity == a.identity;
        });
        if (it == heard_.end()) {
          heard_.push_back({a, now});
        } else if (a.epoch >= it->announcement.epoch) {
          *it = {a, now};
        }
        std::erase_if(heard_, [&](const Heard& h) { return now - h.at >= 3 * settings_.interval; });
        heard = true;
      }
    }
    if (answer) send(BeaconKind::announce);
    if (!heard) continue;
    std::lock_guard lock(listener_mu_);
    if (!listener_) continue;
    try {
      listener_(m->announcement);
    } catch (const std::exception&) {
      // Nothing escapes the beacon's thread.
    }
  }
}

void Beacon::run() {
  auto next = Clock::now();
  for (;;) {
    const auto now = Clock::now();
    bool query = false;
    bool announce = false;
    {
      std::lock_guard lock(mu_);
      if (stop_) return;
      query = std::exchange(query_due_, false);
      announce = std::exchange(announce_due_, false) || (mine_ && now >= next);
      if (!mine_) next = now + settings_.interval;  // a leader's first goes out at once
    }
    if (query) send(BeaconKind::query);
    if (announce) {
      send(BeaconKind::announce);
      next = now + settings_.interval;
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::max(next - Clock::now(), Clock::duration::zero()));
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    // Asleep for an interval at most: a leader's next announcement is due then.
    const int r = ::poll(fds, 2, static_cast<int>(std::max<std::int64_t>(1, wait.count())));
    if (r < 0 && errno != EINTR) return;
    if ((fds[1].revents & POLLIN) != 0) {
      char drain[64];
      while (::read(wake_[0], drain, sizeof drain) > 0) {
      }
    }
    if ((fds[0].revents & POLLIN) != 0) receive(Clock::now());
  }
}

}  // namespace spindle::group
