// An external client's link to its relay (see client_bus.hpp).
#include "client/client_bus.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <new>

#include <dds/core/Exception.hpp>

#include "core/socket_io.hpp"
#include "dcps/wire.hpp"

namespace spindle::client {

namespace {

using Clock = std::chrono::steady_clock;
using transport::address_of;

// One whole frame (head and body) before `deadline`; the body into `body`. nullopt with
// `error` set when the connection failed, timed out or sent a length past kMaxFrame.
std::optional<FrameType> read_frame(int fd, std::vector<std::byte>& body,
                                    Clock::time_point deadline, std::string& error) {
  std::byte head[kFrameHead];
  bool closed = false;
  if (!core::read_exact(fd, head, kFrameHead, deadline, &closed)) {
    error = closed ? "it closed the connection" : "it sent no answer in time";
    return std::nullopt;
  }
  std::uint32_t n = 0;
  for (int i = 0; i < 4; ++i)
    n |= static_cast<std::uint32_t>(head[i]) << (8 * i);
  if (n < 1 || n > kMaxFrame) {
    error = "it sent a frame of " + std::to_string(n) + " bytes";
    return std::nullopt;
  }
  body.resize(n - 1);
  if (!core::read_exact(fd, body.data(), body.size(), deadline, &closed)) {
    error = closed ? "it closed the connection mid-frame" : "a frame stopped halfway";
    return std::nullopt;
  }
  return static_cast<FrameType>(head[4]);
}

}  // namespace

// ------------------------------------------------------------------------------ runtime

ClientRuntime::~ClientRuntime() {
  stop_executors();
}

group::TimePoint ClientRuntime::now() const noexcept {
  return Clock::now();
}

std::int64_t ClientRuntime::wall_ns() const noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void ClientRuntime::start(sst::PredicateLoop& /*loop*/) {
  // A client runs no predicate loop: its protocol thread is the link's reader.
}

void ClientRuntime::stop() {}

bool ClientRuntime::on_protocol_thread() const noexcept {
  return protocol_.load() == std::this_thread::get_id();
}

bool ClientRuntime::wait_until(group::TimePoint deadline, const std::function<bool()>& done) {
  return group::wait_in_slices(deadline, done);
}

void ClientRuntime::stop_executors() {
  control_.stop();
  executor_.stop();
}

// ---------------------------------------------------------------------------- the link

namespace {

// The relays to try now: those discovery finds, then the listed ones not among them.
std::vector<transport::NodeAddress> relays_now(const ClientSettings& s) {
  std::vector<transport::NodeAddress> out;
  if (s.discover) out = s.discover();
  for (const auto& r : s.relays) {
    const bool known = std::any_of(out.begin(), out.end(), [&](const transport::NodeAddress& a) {
      return a.host == r.host && a.port == r.port;
    });
    if (!known) out.push_back(r);
  }
  return out;
}

}  // namespace

std::unique_ptr<ClientBus> ClientBus::connect(const ClientSettings& s) {
  // A relay not listening yet, or closing the connection unanswered (its member still
  // starting), is tried again until the connect timeout; one that refused is not.
  const auto deadline = Clock::now() + s.connect_timeout;
  std::vector<std::pair<transport::NodeAddress, std::string>> why;  // in the order first tried
  std::vector<std::string> refused;                                 // address_of() of each
  for (;;) {
    bool retry = false;
    for (const auto& relay : relays_now(s)) {
      const auto name = address_of(relay);
      if (std::find(refused.begin(), refused.end(), name) != refused.end()) continue;
      auto it = std::find_if(why.begin(), why.end(), [&](const auto& w) {
        return w.first.host == relay.host && w.first.port == relay.port;
      });
      if (it == why.end()) it = why.insert(why.end(), {relay, {}});
      bool answered = false;
      if (auto link = try_relay(s, relay, deadline, it->second, answered))
        return std::unique_ptr<ClientBus>(new ClientBus(s, std::move(*link)));
      if (answered) refused.push_back(name);
      retry = retry || !answered;
    }
    if (!retry || Clock::now() + std::chrono::milliseconds(100) >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::string failures;
  for (const auto& [relay, what] : why)
    failures += "\n  " + address_of(relay) + ": " + what;
  throw dds::core::Error("domain " + std::to_string(s.domain_id) +
                         ": no relay took this client (role: client; relays tried):" + failures);
}

std::optional<ClientBus::Link> ClientBus::try_relay(const ClientSettings& s,
                                                    const transport::NodeAddress& a,
                                                    Clock::time_point deadline, std::string& why,
                                                    bool& final) {
  const int fd = core::connect_to(a, deadline);
  if (fd < 0) {
    why = "no connection";
    return std::nullopt;
  }
  // Blocking from here: the reader thread and senders wait on poll() themselves.
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  Hello h;
  h.domain_id = s.domain_id;
  h.node = s.node;
  for (const auto& x : s.must_agree)
    h.settings.emplace_back(x.name, x.value);
  const auto hello = encode(h);
  std::vector<std::byte> body;
  if (!core::write_all(fd, hello.data(), hello.size())) {
    why = "it closed the connection";
  } else if (const auto t = read_frame(fd, body, deadline, why)) {
    // It answered: what it says stands. A connection closed unanswered is tried again (a
    // member's join port is open a moment before the member serves clients there).
    final = true;
    std::string error;
    if (*t == FrameType::refused) {
      const auto text = decode_text(*t, body, error);
      why = "refused: " + (text ? *text : error);
    } else if (*t != FrameType::welcome) {
      why = "it answered " + std::string(to_string(*t)) + ", not WELCOME";
    } else if (auto w = decode_welcome(body, error)) {
      try {
        auto view = group::parse_group(w->view_yaml, "the relay's welcome");
        return Link{fd, a, std::move(*w), std::move(view)};
      } catch (const std::exception& e) {
        why = e.what();
      }
    } else {
      why = error;
    }
  }
  ::close(fd);
  return std::nullopt;
}

ClientBus::ClientBus(ClientSettings s, Link link)
    : settings_(std::move(s)),
      fd_(link.fd),
      address_(std::move(link.address)),
      node_(settings_.node),
      relay_(link.welcome.relay),
      max_large_(link.welcome.max_large_message),
      state_(std::move(link.welcome.state)),
      view_(std::move(link.view)) {}

ClientBus::~ClientBus() {
  stop();
  shutdown();
}

transport::NodeAddress ClientBus::address() const {
  std::lock_guard lock(mu_);
  return address_;
}

std::string ClientBus::relay_address() const {
  return "node " + std::to_string(relay_.load()) + " at " + address_of(address());
}

void ClientBus::start(group::EngineClient& client) {
  client_ = &client;
  reader_ = std::thread([this] { read_loop(); });
}

void ClientBus::stop() {
  stopping_.store(true);
  {
    std::lock_guard lock(send_mu_);
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RD);
  }
  if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
  runtime_.stop_executors();
}

void ClientBus::shutdown() {
  stop();
  std::lock_guard lock(send_mu_);
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void ClientBus::leave() {
  const auto bye = encode_bye();
  try {
    send(bye, {}, Clock::now() + std::chrono::milliseconds(200));
  } catch (const dds::core::Exception&) {
    // The relay does not read: it sees the connection close instead.
  }
}

std::string ClientBus::halted() const {
  std::lock_guard lock(mu_);
  return halted_;
}

group::View ClientBus::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

std::uint32_t ClientBus::max_message(group::Channel channel) const {
  std::lock_guard lock(mu_);
  const auto sg = group::subgroup_of(view_, channel);
  // No subgroup yet: the relay sizes the message when it publishes it; the builtin
  // subgroup's slot is the domain's smallest.
  return view_.subgroups.at(sg ? *sg : 0).max_payload;
}

std::uint64_t ClientBus::in_flight(group::Channel channel) const {
  std::lock_guard lock(mu_);
  std::uint64_t n = 0;
  for (const auto& [guid, s] : writers_)
    if (s.channel == channel) n += s.sent - std::min(s.sent, s.acked);
  return n;
}

group::Loan ClientBus::reserve(group::Channel channel, std::size_t size, Clock::time_point) {
  if (auto why = halted(); !why.empty()) throw dds::core::PreconditionNotMetError(why);
  if (size > max_large_.load()) {
    throw dds::core::PreconditionNotMetError(
        "a message of " + std::to_string(size) + " bytes is larger than the largest the relay " +
        relay_address() + " takes (" + std::to_string(max_large_.load()) + ")");
  }
  // Private memory: the message goes to the relay, which writes it into its own slot.
  auto* data = static_cast<std::byte*>(::operator new (size == 0 ? 1 : size, std::align_val_t{64}));
  group::Loan loan;
  loan.channel = channel;
  loan.data = data;
  loan.capacity = size;
  loan.scratch =
      std::shared_ptr<void>(data, [](void* p) { ::operator delete (p, std::align_val_t{64}); });
  return loan;
}

void ClientBus::commit(group::Loan& loan, std::size_t size, Clock::time_point deadline) {
  if (auto why = halted(); !why.empty()) throw dds::core::PreconditionNotMetError(why);
  std::span<const std::byte> message(loan.data, size);
  dcps::SampleHeader h;
  if (size >= sizeof h) std::memcpy(&h, loan.data, sizeof h);
  // An abandoned loan: nothing to order at the relay, and readers would skip it.
  if (size >= sizeof h && h.kind != dcps::SampleKind::nothing) {
    const auto head = encode_publish_head(loan.channel, size);
    send(head, message, deadline);
    std::lock_guard lock(mu_);
    auto& w = writers_[h.writer];
    w.channel = loan.channel;
    ++w.sent;
  }
  loan.scratch.reset();
  loan.data = nullptr;
}

void ClientBus::want(std::uint64_t topic, group::Want want) {
  {
    std::lock_guard lock(mu_);
    if (want != group::Want::none) {
      wants_[topic] = want;
    } else {
      wants_.erase(topic);
    }
  }
  const auto frame = encode_want(topic, want);
  try {
    send(frame, {}, Clock::now() + std::chrono::seconds(1));
  } catch (const dds::core::Exception& e) {
    halt("the relay " + relay_address() + " took no request for a topic: " + e.what());
  }
}

void ClientBus::send(std::span<const std::byte> frame, std::span<const std::byte> tail,
                     Clock::time_point deadline) {
  std::lock_guard lock(send_mu_);
  if (fd_ < 0) {
    throw dds::core::PreconditionNotMetError("this client has no connection to a relay (" +
                                             halted() + ")");
  }
  send_on(fd_, frame, tail, deadline, relay_address());
}

void ClientBus::send_on(int fd, std::span<const std::byte> frame, std::span<const std::byte> tail,
                        Clock::time_point deadline, const std::string& relay) {
  pollfd p{fd, POLLOUT, 0};
  for (;;) {
    const int ready = ::poll(&p, 1, core::remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) {
      throw dds::core::TimeoutError("the relay " + relay +
                                    " took no more of this client's messages in time (its "
                                    "topic's ring stayed full)");
    }
    break;
  }
  // Begun, the frame is finished: a cut frame would end the link.
  iovec parts[2] = {{const_cast<std::byte*>(frame.data()), frame.size()},
                    {const_cast<std::byte*>(tail.data()), tail.size()}};
  int count = tail.empty() ? 1 : 2;
  iovec* at = parts;
  while (count > 0) {
    msghdr m{};
    m.msg_iov = at;
    m.msg_iovlen = static_cast<std::size_t>(count);
    const auto n = ::sendmsg(fd, &m, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        ::poll(&p, 1, 100);
        continue;
      }
      throw dds::core::PreconditionNotMetError("the connection to the relay " + relay +
                                               " failed: " + std::strerror(errno));
    }
    auto left = static_cast<std::size_t>(n);
    while (count > 0 && left >= at->iov_len) {
      left -= at->iov_len;
      ++at;
      --count;
    }
    if (count > 0) {
      at->iov_base = static_cast<std::byte*>(at->iov_base) + left;
      at->iov_len -= left;
    }
  }
}

void ClientBus::halt(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    if (!halted_.empty()) return;
    halted_ = why;
  }
  if (client_ != nullptr) client_->on_halt(why);
}

bool ClientBus::reconnect() {
  {
    std::lock_guard lock(send_mu_);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  // Every relay of the list (and those discovery finds now), from the one after the relay
  // that went, round and round.
  const auto gone = address();
  while (!stopping_.load()) {
    const auto relays = relays_now(settings_);
    std::size_t next = 0;
    for (std::size_t i = 0; i < relays.size(); ++i)
      if (relays[i].host == gone.host && relays[i].port == gone.port)
        next = (i + 1) % relays.size();
    for (std::size_t k = 0; k < relays.size() && !stopping_.load(); ++k) {
      const auto& a = relays[(next + k) % relays.size()];
      std::string why;
      bool answered = false;
      auto link = try_relay(settings_, a, Clock::now() + std::chrono::seconds(2), why, answered);
      if (!link) continue;
      // The new relay hands on the topics this client's readers take, from before they are
      // announced again.
      std::map<std::uint64_t, group::Want> wants;
      {
        std::lock_guard lock(mu_);
        wants = wants_;
      }
      try {
        for (const auto& [topic, want] : wants)
          send_on(link->fd, encode_want(topic, want), {}, Clock::now() + std::chrono::seconds(1),
                  address_of(link->address));
      } catch (const dds::core::Exception&) {
        ::close(link->fd);
        continue;  // gone again: the next one
      }
      // Its connection and welcome become ours; the halt (on the control thread) has run.
      runtime_.control().drain();
      group::View view;
      std::vector<std::byte> state;
      {
        std::lock_guard slock(send_mu_);
        std::lock_guard lock(mu_);
        fd_ = link->fd;
        address_ = link->address;
        relay_.store(link->welcome.relay);
        max_large_.store(link->welcome.max_large_message);
        view_ = link->view;
        view = view_;
        state = std::move(link->welcome.state);
        halted_.clear();
        writers_.clear();  // what went to the old relay is acknowledged by nobody now
      }
      std::cerr << "spindle: domain " << settings_.domain_id << ": client node " << node_
                << " reconnected through " << relay_address() << '\n';
      client_->on_rejoin(view, state);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

void ClientBus::read_loop() {
  runtime_.set_protocol_thread(std::this_thread::get_id());
  std::vector<std::byte> body;
  std::vector<group::Message> batch;
  for (;;) {
    int fd = -1;
    {
      std::lock_guard lock(send_mu_);
      fd = fd_;
    }
    const auto who = "the relay " + relay_address();
    std::string gone;
    try {
      for (;;) {
        std::string error;
        const auto t = read_frame(fd, body, Clock::time_point::max(), error);
        if (stopping_.load()) return;
        if (!t) {
          gone = who + " is gone (" + error + ")";
          break;
        }
        if (*t == FrameType::halt) {
          const auto why = decode_text(*t, body, error);
          gone = who + " halted: " + (why ? *why : error);
          break;
        }
        if (!dispatch(*t, body, batch, error)) {
          gone = who + " sent a bad frame (" + error + "): this client left it";
          break;
        }
      }
    } catch (const std::exception& e) {
      gone = who + ": " + e.what();
    }
    if (closing_.load() || stopping_.load()) {
      halt("this client is closing");
      return;
    }
    halt(gone + "; this client connects to a relay again");
    if (!reconnect()) return;
  }
}

bool ClientBus::dispatch(FrameType t, std::span<const std::byte> body,
                         std::vector<group::Message>& batch, std::string& error) {
  switch (t) {
    case FrameType::deliver:
      if (!decode_deliver(body, batch, error)) return false;
      // After a failover the new relay's stream may begin before where the old one's ended:
      // what a reader took already is not taken twice (the rule for listened messages).
      for (auto& m : batch)
        m.listened = true;
      if (!batch.empty()) client_->on_deliver(batch);
      return true;
    case FrameType::view:
      if (const auto yaml = decode_text(t, body, error)) {
        auto v = group::parse_group(*yaml, "the relay's view");
        {
          std::lock_guard lock(mu_);
          view_ = v;
        }
        client_->on_view(v);
        return true;
      }
      return false;
    case FrameType::lost:
      if (const auto l = decode_lost(body, error)) {
        client_->on_member_lost(l->node, l->left, l->why);
        return true;
      }
      return false;
    case FrameType::acked:
      if (const auto a = decode_acked(body, error)) {
        std::lock_guard lock(mu_);
        if (const auto it = writers_.find(a->writer); it != writers_.end())
          it->second.acked += a->count;
        return true;
      }
      return false;
    default:
      error = "a " + std::string(to_string(t)) + " frame, which a relay does not send";
      return false;
  }
}

}  // namespace spindle::client
