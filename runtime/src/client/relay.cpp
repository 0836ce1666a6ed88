// A member's service to external clients (see relay.hpp).
#include "client/relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>

#include <dds/core/Exception.hpp>

#include "client/relay_wire.hpp"
#include "core/interfaces.hpp"
#include "dcps/wire.hpp"

namespace spindle::client {

namespace {
using Clock = std::chrono::steady_clock;
using dcps::SampleKind;
constexpr auto kHelloTimeout = std::chrono::seconds(3);
constexpr std::size_t kMaxPending = 256;
constexpr std::size_t kReadChunk = 256 * 1024;
const group::Channel kBuiltin{0, group::Ordering::atomic, 0};
}  // namespace

struct Relay::Client {
  int fd = -1;
  std::string peer;
  Clock::time_point hello_deadline;
  bool welcomed = false;
  transport::NodeId node = 0;  // the client's node id (HELLO)
  // I/O thread only.
  std::vector<std::byte> in;
  struct Blocked {
    group::Channel channel;
    std::vector<std::byte> message;
  };
  std::optional<Blocked> blocked;  // a message waiting for room in its ring
  std::map<std::uint64_t, SampleKind> announced;
  bool bye = false;
  // Under mu.
  std::mutex mu;
  std::unordered_set<std::uint64_t> wants;  // every message of these topics
  std::unordered_set<std::uint64_t> own;    // only the client's own messages of these
  std::vector<std::byte> out;
  std::size_t out_at = 0;
  bool broken = false;
  std::string broken_why;
  std::map<std::uint64_t, std::uint64_t> acks;  // protocol thread: this batch's
  // One of the client's entities (serial 0 names a node, not an entity).
  [[nodiscard]] bool owns(std::uint64_t guid) const noexcept {
    return dcps::guid_node(guid) == node && (guid & 0xffff'ffffu) != 0;
  }
  [[nodiscard]] std::size_t queued() const noexcept { return out.size() - out_at; }
};

Relay::Relay(group::Bus& bus, dcps::Router& router, RelaySettings s)
    : bus_(&bus), router_(&router), settings_(std::move(s)) {
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (!settings_.listen) {
    router_->set_tap(this);
    thread_ = std::thread([this] { run(); });
    return;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  (void)::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(settings_.port);
  // The listen address is node.bind or node.host: an address, or a name (its first IPv4
  // address, as the join port and the tcp transport take it).
  const auto address = core::resolve_ipv4(settings_.host);
  if (address) a.sin_addr.s_addr = *address;
  if (listen_fd_ < 0 || !address ||
      ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    const std::string why = address ? std::strerror(errno) : "the name has no IPv4 address";
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::close(wake_fd_);
    throw dds::core::Error("domain " + std::to_string(settings_.domain_id) +
                           ": cannot serve clients at " + settings_.host + ":" +
                           std::to_string(settings_.port) + " (client_port): " + why);
  }
  socklen_t len = sizeof a;
  (void)::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  router_->set_tap(this);
  thread_ = std::thread([this] { run(); });
}

Relay::~Relay() {
  stop();
}

void Relay::stop() {
  if (stopping_.exchange(true)) return;
  router_->set_tap(nullptr);
  wake();
  if (thread_.joinable()) thread_.join();
  for (auto& c : pending_)
    ::close(c->fd);
  pending_.clear();
  std::vector<std::shared_ptr<Client>> clients;
  {
    std::lock_guard lock(clients_mu_);
    clients.swap(clients_);
    any_clients_.store(false);
  }
  for (auto& c : clients) {
    let_go(*c);
    ::close(c->fd);
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_fd_);
  std::lock_guard lock(adopt_mu_);
  for (auto& [fd, bytes] : adopted_)
    ::close(fd);
  adopted_.clear();
}

void Relay::adopt(int fd, std::string already) {
  {
    std::lock_guard lock(adopt_mu_);
    if (!stopping_.load()) {
      adopted_.emplace_back(fd, std::move(already));
      fd = -1;
    }
  }
  if (fd >= 0) {
    ::close(fd);  // stopped: nobody serves it
    return;
  }
  wake();
}

void Relay::take_adopted() {
  std::vector<std::pair<int, std::string>> taken;
  {
    std::lock_guard lock(adopt_mu_);
    taken.swap(adopted_);
  }
  for (auto& [fd, bytes] : taken) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    char host[INET_ADDRSTRLEN] = "?";
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      (void)::inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
    add_pending(fd, std::string(host) + ":" + std::to_string(ntohs(a.sin_port)) + " (join port)",
                std::move(bytes));
    const auto c = pending_.back();  // a copy: welcoming it takes it out of pending_
    read_from(c);                    // its HELLO may be whole already
  }
}

RelayStats Relay::stats() const {
  RelayStats s;
  {
    std::lock_guard lock(stats_mu_);  // a leaf: on_batch takes it under clients_mu_
    s = stats_;
  }
  std::lock_guard lock(clients_mu_);
  s.clients = clients_.size();
  return s;
}

void Relay::cut_off_all(const std::string& why) {
  std::lock_guard lock(clients_mu_);
  for (auto& c : clients_) {
    std::lock_guard clock(c->mu);
    c->broken = true;
    c->broken_why = why;
  }
  wake();
}

void Relay::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

// ----------------------------------------------------------------------- the I/O thread

void Relay::run() {
  while (!stopping_.load()) {
    try {
      serve();
    } catch (const std::exception& e) {
      // Nothing a client sends may take the member down: report, and serve on.
      std::cerr << "spindle: domain " << settings_.domain_id << ": the client relay of node "
                << bus_->node() << " recovered from: " << e.what() << '\n';
    }
  }
}

void Relay::serve() {
  std::vector<pollfd> fds;
  std::vector<std::shared_ptr<Client>> polled;
  while (!stopping_.load()) {
    fds.clear();
    polled.clear();
    take_adopted();
    fds.push_back({wake_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, listen_fd_ >= 0 ? short{POLLIN} : short{0}, 0});
    bool blocked = false;
    std::vector<std::shared_ptr<Client>> all;
    {
      std::lock_guard lock(clients_mu_);
      all = clients_;
    }
    all.insert(all.end(), pending_.begin(), pending_.end());
    for (auto& c : all) {
      short events = c->blocked ? 0 : POLLIN;
      blocked = blocked || c->blocked.has_value();
      {
        std::lock_guard lock(c->mu);
        if (c->queued() > 0) events |= POLLOUT;
      }
      fds.push_back({c->fd, events, 0});
      polled.push_back(c);
    }
    const int ready = ::poll(fds.data(), fds.size(), blocked ? 2 : 100);
    if (ready < 0 && errno != EINTR) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // out of memory: later
      continue;
    }
    if ((fds[0].revents & POLLIN) != 0) {
      std::uint64_t n = 0;
      (void)!::read(wake_fd_, &n, sizeof n);
    }
    if (listen_fd_ >= 0 && (fds[1].revents & POLLIN) != 0) accept_one();
    for (std::size_t i = 0; i < polled.size(); ++i) {
      auto& c = polled[i];
      const auto ev = fds[i + 2].revents;
      if ((ev & POLLOUT) != 0) {
        std::lock_guard lock(c->mu);
        flush(*c);
      }
      if ((ev & (POLLIN | POLLHUP | POLLERR)) != 0) read_from(c);
    }
    // Messages waiting for room, and clients the protocol thread cut off or that never said
    // HELLO.
    const auto now = Clock::now();
    for (auto& c : all) {
      if (c->fd < 0) continue;
      if (c->blocked) {
        std::string why;
        if (publish(c, c->blocked->channel, c->blocked->message, why)) {
          c->blocked.reset();
          read_from(c);  // the frames it had sent meanwhile
        }
      }
      std::string broken;
      {
        std::lock_guard lock(c->mu);
        if (c->broken) broken = c->broken_why;
      }
      if (!broken.empty()) {
        drop(c, broken);
      } else if (!c->welcomed && now > c->hello_deadline) {
        drop(c, "it sent no HELLO in time");
      }
    }
  }
}

void Relay::accept_one() {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  const int fd =
      ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  char host[INET_ADDRSTRLEN] = {};
  (void)::inet_ntop(AF_INET, &a.sin_addr, host, sizeof host);
  add_pending(fd, std::string(host) + ":" + std::to_string(ntohs(a.sin_port)), {});
}

void Relay::add_pending(int fd, std::string peer, std::string already) {
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  auto c = std::make_shared<Client>();
  c->fd = fd;
  c->peer = std::move(peer);
  const auto* p = reinterpret_cast<const std::byte*>(already.data());
  c->in.assign(p, p + already.size());
  c->hello_deadline = Clock::now() + kHelloTimeout;
  if (pending_.size() >= kMaxPending) drop(pending_.front(), "too many connections say nothing");
  pending_.push_back(std::move(c));
}

void Relay::read_from(const std::shared_ptr<Client>& c) {
  if (c->fd < 0) return;
  if (!c->blocked) {
    const auto had = c->in.size();
    c->in.resize(had + kReadChunk);
    const auto n = ::recv(c->fd, c->in.data() + had, kReadChunk, MSG_DONTWAIT);
    c->in.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      drop(c, c->bye ? "" : n == 0 ? "it closed the connection" : std::strerror(errno));
      return;
    }
  }
  std::size_t at = 0;
  std::string why;
  while (!c->blocked && c->in.size() - at >= kFrameHead) {
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i)
      n |= static_cast<std::uint32_t>(c->in[at + static_cast<std::size_t>(i)]) << (8 * i);
    if (n < 1 || n > bus_->max_large_message() + 64 * 1024) {
      drop(c, "it sent a frame of " + std::to_string(n) + " bytes");
      return;
    }
    if (c->in.size() - at < 4 + std::size_t{n}) break;
    const auto type = static_cast<std::uint8_t>(c->in[at + 4]);
    const std::span<const std::byte> body(c->in.data() + at + kFrameHead, n - 1);
    at += 4 + std::size_t{n};
    if (!handle(c, type, body, why)) {
      drop(c, why);
      return;
    }
    if (c->fd < 0) return;
  }
  c->in.erase(c->in.begin(), c->in.begin() + static_cast<std::ptrdiff_t>(at));
}

bool Relay::handle(const std::shared_ptr<Client>& c, std::uint8_t type,
                   std::span<const std::byte> body, std::string& why) {
  const auto t = static_cast<FrameType>(type);
  if (!c->welcomed) {
    if (t != FrameType::hello) {
      why = "it sent " + std::string(to_string(t)) + " before HELLO";
      return false;
    }
    welcome(c, body);
    return true;
  }
  switch (t) {
    case FrameType::publish: {
      const auto p = decode_publish(body, why);
      if (!p) return false;
      if (const auto bad = check_message(*c, p->message); !bad.empty()) {
        // Not the client's to send: refused, and the client with it (a client that forges
        // messages is no client of ours).
        why = "it sent a message it may not: " + bad;
        std::lock_guard lock(stats_mu_);
        ++stats_.refused;
        stats_.last_refusal = c->peer + ": " + bad;
        return false;
      }
      if (!publish(c, p->channel, p->message, why)) {
        c->blocked = Client::Blocked{p->channel, {p->message.begin(), p->message.end()}};
      }
      return true;
    }
    case FrameType::want: {
      const auto w = decode_want(body, why);
      if (!w) return false;
      std::lock_guard lock(c->mu);
      c->wants.erase(w->first);
      c->own.erase(w->first);
      if (w->second == group::Want::all) c->wants.insert(w->first);
      if (w->second == group::Want::own) c->own.insert(w->first);
      return true;
    }
    case FrameType::bye:
      c->bye = true;
      return true;
    default:
      why = "it sent " + std::string(to_string(t)) + ", which a client does not send";
      return false;
  }
}

void Relay::welcome(const std::shared_ptr<Client>& c, std::span<const std::byte> body) {
  std::string why;
  const auto hello = decode_hello(body, why);
  if (hello && hello->domain_id != settings_.domain_id) {
    why = "this member serves domain " + std::to_string(settings_.domain_id) + ", not " +
          std::to_string(hello->domain_id);
  }
  if (hello && why.empty()) {
    for (const auto& mine : settings_.must_agree) {
      for (const auto& [k, v] : hello->settings) {
        if (k == mine.name && v != mine.value)
          why = k + " is " + v + " at the client and " + mine.value + " here";
      }
    }
  }
  if (why.empty() && !bus_->halted().empty()) why = "this member halted: " + bus_->halted();
  if (why.empty() && bus_->view().rank_of(hello->node)) {
    why = "node " + std::to_string(hello->node) + " is a member of this domain, not a client";
  }
  if (why.empty()) {
    std::lock_guard lock(clients_mu_);
    for (const auto& other : clients_)
      if (other->node == hello->node)
        why = "node " + std::to_string(hello->node) + " is a client here already";
  }
  // From here on the domain takes the client's messages from this member (the builtin
  // subgroup's order: before any of them).
  if (why.empty()) why = announce_client(SampleKind::client_attached, hello->node);
  if (!why.empty()) {
    const auto refused = encode_refused(why);
    std::lock_guard lock(c->mu);
    queue(*c, refused);
    c->broken = true;  // dropped once the refusal went out (or at once)
    c->broken_why = "refused: " + why;
    return;
  }
  c->node = hello->node;
  // Here at once: its first messages may come back before the attach is delivered.
  router_->attach(c->node, bus_->node());
  std::erase(pending_, c);
  // The cut: the state and the view as the participant has them, and from the next batch on
  // everything the client wants.
  router_->at_cut([&](const group::View& v) {
    Welcome w;
    w.relay = bus_->node();
    w.max_large_message = bus_->max_large_message();
    w.view_yaml = group::to_yaml(v);
    w.state = router_->state_for_joiner();
    const auto frame = encode(w);
    std::lock_guard lock(clients_mu_);
    {
      std::lock_guard clock(c->mu);
      queue(*c, frame);
    }
    c->welcomed = true;
    clients_.push_back(c);
    any_clients_.store(true, std::memory_order_release);
  });
  std::lock_guard lock(stats_mu_);
  ++stats_.welcomed;
}

std::string Relay::check_message(const Client& c, std::span<const std::byte> message) {
  std::string error;
  const auto p = dcps::parse(message, error);
  if (!p) return error;
  const auto& h = p->header;
  if (h.kind == SampleKind::repair) {
    // A repair's piece (dcps/repair.hpp) in the client's participant's name: the client keeps
    // its own writers' changes, and the members that take the repair check each of them.
    if (h.writer != dcps::make_guid(c.node, 0)) return "a repair not in its own name";
    return h.topic == 0 ? "" : "a repair off the builtin topic";
  }
  if (!c.owns(h.writer)) {
    return "writer " + std::to_string(h.writer) + " is not one of its entities' (node " +
           std::to_string(c.node) + ")";
  }
  switch (h.kind) {
    case SampleKind::data:
    case SampleKind::dispose:
    case SampleKind::unregister:
      if (h.topic == 0) return "a sample on the builtin topic";
      return "";
    case SampleKind::coherent_set: {
      std::vector<dcps::ParsedSample> set;
      if (!dcps::parse_set(p->payload, set, error)) return error;
      for (const auto& inner : set)
        if (!c.owns(inner.header.writer))
          return "a coherent set holds writer " + std::to_string(inner.header.writer) +
                 ", not one of its own";
      return h.topic == 0 ? "a coherent set on the builtin topic" : "";
    }
    case SampleKind::announce_writer:
    case SampleKind::announce_reader:
    case SampleKind::announce_topic:
    case SampleKind::announce_type:  // a piece of one of its topics' type records
    case SampleKind::retire_writer:
    case SampleKind::retire_reader:
    case SampleKind::retire_topic:
    case SampleKind::liveliness:
      return h.topic == 0 ? "" : "a discovery message off the builtin topic";
    case SampleKind::announce_participant:
      if (h.writer != dcps::make_guid(c.node, 1)) return "a participant record not its own";
      return h.topic == 0 ? "" : "a discovery message off the builtin topic";
    default:
      return "a " + std::string(dcps::to_string(h.kind)) + " message (clients may not send those)";
  }
}

bool Relay::publish(const std::shared_ptr<Client>& c, const group::Channel& channel,
                    std::span<const std::byte> message, std::string& why) {
  dcps::SampleHeader h;
  std::memcpy(&h, message.data(), sizeof h);  // checked: a whole header
  const bool builtin = h.topic == 0;
  try {
    // No waiting here: this thread serves every client. A full ring is tried again shortly,
    // with the client's connection unread meanwhile (its sends wait: back-pressure).
    // A large sample of an unbounded type: the client's writer asked for the room (its
    // record), so until the view that gives it comes the message is tried again too.
    if (!builtin && message.size() > group::kUnboundedRoom)
      bus_->expect_room(channel, message.size());
    auto loan = bus_->reserve(builtin ? kBuiltin : channel, message.size(), Clock::now());
    std::memcpy(loan.data, message.data(), message.size());
    bus_->commit(loan, message.size(), Clock::now() + std::chrono::seconds(1));
  } catch (const dds::core::TimeoutError&) {
    return false;
  } catch (const dds::core::Exception& e) {
    // Too large, or this member halted: the message is lost to everyone, as the client's own
    // write would have failed.
    why = e.what();
    std::lock_guard lock(stats_mu_);
    ++stats_.refused;
    stats_.last_refusal = c->peer + ": " + why;
    return true;
  }
  switch (h.kind) {
    case SampleKind::announce_writer:
    case SampleKind::announce_reader:
    case SampleKind::announce_topic:
      c->announced[h.writer] = h.kind;
      break;
    case SampleKind::retire_writer:
    case SampleKind::retire_reader:
    case SampleKind::retire_topic:
      c->announced.erase(h.writer);
      break;
    default:
      break;
  }
  std::lock_guard lock(stats_mu_);
  ++stats_.published;
  return true;
}

std::string Relay::announce_client(dcps::SampleKind kind, transport::NodeId client) {
  dcps::SampleHeader h;
  h.kind = kind;
  h.topic = 0;
  h.writer = dcps::make_guid(bus_->node(), 0);
  h.source_time_ns = bus_->runtime().wall_ns();
  try {
    router_->publish(
        kBuiltin, h, 4,
        [client](std::span<std::byte> out) {
          for (std::size_t i = 0; i < 4; ++i)
            out[i] = static_cast<std::byte>((client >> (8 * i)) & 0xff);
        },
        Clock::now() + std::chrono::seconds(1));
  } catch (const dds::core::Exception& e) {
    return std::string("this member could not announce the client: ") + e.what();
  }
  return "";
}

void Relay::let_go(Client& c) {
  for (const auto& [guid, kind] : c.announced) {
    dcps::SampleHeader h;
    h.kind = kind == SampleKind::announce_writer   ? SampleKind::retire_writer
             : kind == SampleKind::announce_reader ? SampleKind::retire_reader
                                                   : SampleKind::retire_topic;
    h.topic = 0;
    h.writer = guid;
    h.source_time_ns = bus_->runtime().wall_ns();
    try {
      router_->publish(
          kBuiltin, h, 0, [](std::span<std::byte>) {}, Clock::now() + std::chrono::seconds(1));
    } catch (const dds::core::Exception& e) {
      std::cerr << "spindle: domain " << settings_.domain_id << ": could not retire entity " << guid
                << " of the client at " << c.peer << ": " << e.what() << '\n';
    }
  }
  c.announced.clear();
  (void)announce_client(SampleKind::client_detached, c.node);
}

void Relay::drop(const std::shared_ptr<Client>& c, const std::string& why) {
  if (c->fd < 0) return;
  std::erase(pending_, c);
  if (c->welcomed) {
    {
      std::lock_guard lock(clients_mu_);
      std::erase(clients_, c);
      any_clients_.store(!clients_.empty(), std::memory_order_release);
    }
    let_go(*c);
    if (!why.empty()) {
      std::cerr << "spindle: domain " << settings_.domain_id << ": node " << bus_->node()
                << " no longer relays for the client at " << c->peer << ": " << why << '\n';
    }
  }
  {
    std::lock_guard lock(c->mu);
    flush(*c);  // a refusal, say
  }
  ::close(c->fd);
  c->fd = -1;
}

// ------------------------------------------------------------------ out, to the clients

void Relay::queue(Client& c, std::span<const std::byte> frame) {
  const bool idle = c.queued() == 0;
  c.out.insert(c.out.end(), frame.begin(), frame.end());
  if (idle) flush(c);
  if (c.queued() > 0) wake();
}

void Relay::flush(Client& c) {
  while (c.queued() > 0 && c.fd >= 0) {
    const auto n = ::send(c.fd, c.out.data() + c.out_at, c.queued(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      break;  // full (the I/O thread waits for room), or failed (it reads the failure)
    }
    c.out_at += static_cast<std::size_t>(n);
  }
  if (c.out_at == c.out.size()) {
    c.out.clear();
    c.out_at = 0;
  } else if (c.out_at > (std::size_t{1} << 20) && c.out_at > c.out.size() / 2) {
    c.out.erase(c.out.begin(), c.out.begin() + static_cast<std::ptrdiff_t>(c.out_at));
    c.out_at = 0;
  }
}

void Relay::to_all(std::span<const std::byte> frame) {
  if (!any_clients_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(clients_mu_);
  for (auto& c : clients_) {
    std::lock_guard clock(c->mu);
    if (!c->broken) queue(*c, frame);
  }
}

void Relay::on_batch(std::span<const group::Message> batch) {
  if (!any_clients_.load(std::memory_order_acquire)) return;
  struct Seen {
    std::uint64_t topic = 0;
    std::uint64_t writer = 0;
    bool retained = false;
    bool valid = false;
    // A member's request or piece of a history, or a piece of a repair (dcps/repair.hpp):
    // clients are never left behind, and no such message is for one. A repair's request is
    // (a client keeps its own writers' changes and answers it).
    bool members_only = false;
  };
  std::vector<Seen> seen(batch.size());
  const auto self = bus_->node();
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const auto& m = batch[i];
    if (m.payload.size() < sizeof(dcps::SampleHeader)) continue;  // the Router reports it
    dcps::SampleHeader h;
    std::memcpy(&h, m.payload.data(), sizeof h);
    const bool members_only = h.topic == 0 && (h.kind == dcps::SampleKind::refresh_request ||
                                               h.kind == dcps::SampleKind::refresh_state ||
                                               h.kind == dcps::SampleKind::repair);
    seen[i] =
        Seen{h.topic, h.writer, h.topic != 0 && router_->retains(h.topic), true, members_only};
  }
  std::vector<const group::Message*> picked;
  std::uint64_t relayed = 0;
  std::uint64_t dropped = 0;
  std::lock_guard lock(clients_mu_);
  for (auto& c : clients_) {
    std::lock_guard clock(c->mu);
    if (c->broken) continue;
    const bool over = c->queued() > settings_.queue_bytes;
    picked.clear();
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const auto& s = seen[i];
      if (!s.valid) continue;
      // Its own messages, its participant's repair pieces among them (their guid names the
      // node: serial 0).
      if (batch[i].sender == self && dcps::guid_node(s.writer) == c->node) ++c->acks[s.writer];
      if (s.members_only) continue;
      if (s.topic != 0 && !s.retained && !c->wants.contains(s.topic) &&
          !(c->owns(s.writer) && c->own.contains(s.topic)))
        continue;
      if (over && s.topic != 0 && s.retained) {
        // A retained topic's history at the client would keep the hole: it is cut off, and
        // connects again for a whole history with its welcome.
        c->broken = true;
        c->broken_why = "it read nothing while " + std::to_string(c->queued()) +
                        " bytes waited for it, and a retained topic's messages came (it connects "
                        "again for the whole history)";
        wake();
        break;
      }
      if (over && s.topic != 0) {
        ++dropped;  // the client's readers see the gap in the writer's numbers
        continue;
      }
      picked.push_back(&batch[i]);
    }
    if (c->broken) continue;
    if (!picked.empty()) {
      FrameWriter w(FrameType::deliver);
      begin_deliver(w, static_cast<std::uint32_t>(picked.size()));
      for (const auto* m : picked)
        add_delivered(w, *m);
      queue(*c, w.finish());
      relayed += picked.size();
    }
    for (const auto& [writer, n] : c->acks)
      queue(*c, encode(Acked{writer, n}));
    c->acks.clear();
    if (c->queued() > 4 * settings_.queue_bytes) {
      c->broken = true;
      c->broken_why = "it read nothing while " + std::to_string(c->queued()) +
                      " bytes waited for it, builtin messages among them";
      wake();
    }
  }
  std::lock_guard slock(stats_mu_);
  stats_.relayed += relayed;
  stats_.dropped += dropped;
}

void Relay::on_view(const group::View& view) {
  to_all(encode_view(group::to_yaml(view)));
}

void Relay::on_member_lost(transport::NodeId node, bool left, const std::string& why) {
  to_all(encode(Lost{node, left, why}));
}

void Relay::on_halt(const std::string& why) {
  // The domain removed this member and, with it, every client's endpoints: the clients
  // halt too (they do not come back with it).
  to_all(encode_halt(why));
  cut_off_all("this member halted");
}

}  // namespace spindle::client
