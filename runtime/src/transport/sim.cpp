// In-memory deterministic transport (see transport/sim.hpp for the model).
//
// Determinism rules kept here: no std:: random distributions, no iteration over unordered
// containers, no addresses in ordering decisions; the event queue orders by (time,
// insertion number).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "transport/sim.hpp"

#include "transport/aligned_buffer.hpp"
#include "transport/private_copy.hpp"
#include "transport/write_grants.hpp"

namespace spindle::transport::sim {

// ---------------------------------------------------------------------------- Rng
namespace {
std::uint64_t splitmix(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

Rng::Rng(std::uint64_t seed) noexcept {
  for (auto& s : s_)
    s = splitmix(seed);
}

std::uint64_t Rng::next() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t Rng::uniform(std::uint64_t lo, std::uint64_t hi) noexcept {
  const std::uint64_t span = hi - lo;
  if (span == ~std::uint64_t{0}) return next();
  // Rejection sampling: unbiased and platform-independent.
  const std::uint64_t range = span + 1;
  const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % range);
  std::uint64_t v = next();
  while (v >= limit)
    v = next();
  return lo + v % range;
}

// ---------------------------------------------------------------------------- state
namespace {

struct Message {
  bool block = false;
  // A write of the sender's own row that the receiver reads in place: no bytes travel
  // (they are there already), only the wake-up; `length` is the write's.
  bool in_place = false;
  std::uint64_t length = 0;
  RegionId region = 0;
  std::uint64_t offset = 0;
  std::uint32_t immediate = 0;
  std::vector<std::byte> bytes;
  Duration due{0};
  std::uint64_t epoch = 0;  // the sender's view: a connection belongs to one view
};

struct Channel {
  std::deque<Message> queue;
  std::size_t queued_bytes = 0;
  Duration last_due{0};
  bool scheduled = false;
  bool stalled = false;  // head is a block and the receiver has no receive posted
  bool held = false;     // head belongs to a view the receiver has not joined yet
  bool cut = false;      // drops everything posted from now on
  // The receiver refused a write of the sender (foreign_write): the connection of view
  // `closed_epoch` is gone, what is posted in it is dropped; later views connect anew.
  bool closed = false;
  std::uint64_t closed_epoch = 0;
};

struct Posted {
  RegionId region = 0;
  std::uint64_t offset = 0;
  std::uint32_t capacity = 0;
};

enum class EvKind : std::uint8_t {
  deliver,
  actor,
  suspect,
  timer,
  resume,
  join_check,
  silence,
  connected
};

struct Ev {
  Duration at{0};
  std::uint64_t seq = 0;
  EvKind kind = EvKind::deliver;
  NodeId a = 0;  // deliver: from; actor, timer: node; suspect: the suspecting node
  NodeId b = 0;  // deliver: to;   suspect: the suspected peer
  SuspicionReason reason = SuspicionReason::crashed;
  std::uint64_t epoch = 0;  // suspect: the suspecting node's view when scheduled
  bool operator>(const Ev& o) const noexcept { return at != o.at ? at > o.at : seq > o.seq; }
};

}  // namespace

// A region's memory where rows may be in place (Config::rows_in_place): a memfd mapped
// shared, so that a peer can map one row of it over its own region.
struct SharedMemory {
  int fd = -1;
  std::byte* base = nullptr;
  std::size_t length = 0;  // mapped, whole pages
};

struct SimTransport::State {
  ~State() {
    for (auto& [id, m] : shared) {
      ::munmap(m.base, m.length);
      ::close(m.fd);
    }
  }
  std::map<RegionId, AlignedBuffer> regions;
  std::map<RegionId, SharedMemory> shared;  // rows_in_place: each region's memory
  // share_rows(): each member's row of the region, where rows can be in place.
  std::map<RegionId, std::map<NodeId, ByteRange>> rows;
  std::set<RegionId> ended;  // rows declared for a view this node left: not mapped again
  std::map<RegionId, std::set<NodeId>> in_place;  // peers whose row we map, by region
  WriteGrants grants;        // restrict_writes(): who may write what (checked on delivery)
  std::set<NodeId> members;  // peers of the current view (self excluded)
  std::set<NodeId> suspected;
  std::set<NodeId> connecting;  // joiners of this view that have not joined it yet
  std::map<NodeId, std::deque<Posted>> posted;
  std::deque<Event> events;
  std::uint64_t epoch = 0;
  bool connected = false;
  bool crashed = false;
  std::function<bool()> actor;
  bool actor_scheduled = false;
  std::set<Duration> wakes;  // times of pending timer events
  Duration slow{0};
  Duration paused_until{0};  // pause(): no step before this (writes to it still land)
};

struct Network::Impl {
  explicit Impl(Config c) : cfg(c), rng(c.seed) {}

  Config cfg;
  Rng rng;
  Duration now{0};
  std::uint64_t next_seq = 0;
  std::uint64_t events_run = 0;
  std::uint64_t in_place_writes = 0;
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  std::map<NodeId, std::unique_ptr<SimTransport>> nodes;
  std::map<NodeId, std::uint32_t> hosts;  // set_host(); absent: a host of its own
  std::map<std::pair<NodeId, NodeId>, Channel> channels;
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> queue;

  void mix(std::uint64_t v) noexcept {
    for (int i = 0; i < 8; ++i) {
      hash ^= (v >> (8 * i)) & 0xff;
      hash *= 0x100000001b3ULL;
    }
  }

  void push(Ev e) {
    e.seq = next_seq++;
    queue.push(e);
  }

  Duration uniform(Duration lo, Duration hi) {
    if (hi <= lo) return lo;
    return Duration(static_cast<Duration::rep>(rng.uniform(
        static_cast<std::uint64_t>(lo.count()), static_cast<std::uint64_t>(hi.count()))));
  }

  SimTransport* find(NodeId id) {
    auto it = nodes.find(id);
    return it == nodes.end() ? nullptr : it->second.get();
  }

  Duration latency(NodeId from, NodeId to) {
    Duration l = uniform(cfg.min_latency, cfg.max_latency);
    if (rng.chance(cfg.spike_per_million)) l += uniform(Duration{0}, cfg.spike_latency);
    if (auto* f = find(from)) l += f->state().slow;
    if (auto* t = find(to)) l += t->state().slow;
    return l;
  }

  void wake(SimTransport& t) {
    ++t.activity_;
    schedule_actor(t);
  }

  void schedule_actor(SimTransport& t) {
    auto& s = t.state();
    if (!s.actor || s.actor_scheduled || s.crashed) return;
    s.actor_scheduled = true;
    push(Ev{.at = now + uniform(cfg.min_step, cfg.max_step) + s.slow,
            .kind = EvKind::actor,
            .a = t.id_});
  }

  void schedule_channel(NodeId from, NodeId to, Channel& ch) {
    if (ch.scheduled || ch.stalled || ch.held || ch.queue.empty()) return;
    ch.scheduled = true;
    push(
        Ev{.at = std::max(ch.queue.front().due, now), .kind = EvKind::deliver, .a = from, .b = to});
  }

  void schedule_suspicion(NodeId who, NodeId peer, SuspicionReason reason, Duration after) {
    auto* t = find(who);
    if (t == nullptr) return;
    push(Ev{.at = now + after,
            .kind = EvKind::suspect,
            .a = who,
            .b = peer,
            .reason = reason,
            .epoch = t->state().epoch});
  }

  void link_row(SimTransport& reader, SimTransport& owner, RegionId id);
  // `t` leaves its view: each peer's row it read in place becomes its own copy, as it ended.
  static void detach_rows(SimTransport& t);

  void raise(SimTransport& t, NodeId peer, SuspicionReason reason, std::string detail) {
    auto& s = t.state();
    if (s.crashed || !s.members.contains(peer) || s.suspected.contains(peer)) return;
    s.suspected.insert(peer);
    s.events.emplace_back(Suspicion{peer, reason, std::move(detail)});
    wake(t);
  }

  // Keeps a random prefix of what is in flight (a crash or cut loses the rest).
  void truncate(Channel& ch) {
    const auto keep = static_cast<std::size_t>(rng.uniform(0, ch.queue.size()));
    while (ch.queue.size() > keep) {
      ch.queued_bytes -= ch.queue.back().bytes.size();
      ch.queue.pop_back();
    }
  }

  void deliver(NodeId from, NodeId to) {
    Channel& ch = channels[{from, to}];
    ch.scheduled = false;
    if (ch.queue.empty()) return;
    SimTransport* dst = find(to);
    SimTransport* src = find(from);
    Message& m = ch.queue.front();
    mix(m.bytes.size());
    mix(m.offset);
    if (!m.bytes.empty()) {
      std::uint64_t edge = 0;
      std::memcpy(&edge, m.bytes.data(), std::min<std::size_t>(8, m.bytes.size()));
      mix(edge);
    }
    if (dst == nullptr || dst->state().crashed) {
      ch.queue.clear();
      ch.queued_bytes = 0;
      return;
    }
    auto& ds = dst->state();
    // A connection is per view, as with real transports: what was sent in a view the
    // receiver has not joined yet waits for its connect(); what was sent in a view the
    // receiver has left (or to a receiver whose view lacks the sender) is gone.
    if (!ds.connected || ds.epoch < m.epoch) {
      ch.held = true;  // resumes in connect()
      return;
    }
    if (ds.epoch > m.epoch || !ds.members.contains(from)) {
      ch.queued_bytes -= m.bytes.size();
      ch.queue.pop_front();
      schedule_channel(from, to, ch);
      return;
    }
    if (m.block) {
      auto& posted = ds.posted[from];
      if (posted.empty()) {
        ch.stalled = true;  // resumes in post_receive()
        return;
      }
      const Posted p = posted.front();
      if (m.bytes.size() > p.capacity) {
        raise(*dst, from, SuspicionReason::block_overflow,
              "block of " + std::to_string(m.bytes.size()) + " bytes > posted receive of " +
                  std::to_string(p.capacity));
        ch.cut = true;
        ch.queue.clear();
        ch.queued_bytes = 0;
        return;
      }
      posted.pop_front();
      auto& region = ds.regions.at(p.region);
      std::memcpy(region.data() + p.offset, m.bytes.data(), m.bytes.size());
      ds.events.emplace_back(BlockReceived{
          from, p.region, p.offset, static_cast<std::uint32_t>(m.bytes.size()), m.immediate});
      if (src != nullptr && !src->state().crashed) {
        src->state().events.emplace_back(BlockSent{to, m.immediate});
        wake(*src);
      }
    } else {
      auto it = ds.regions.find(m.region);
      const std::size_t length = m.in_place ? m.length : m.bytes.size();
      // Validated at post time, unless the receiver had not joined the sender's view yet.
      if (it == ds.regions.end() || !in_bounds(m.offset, length, it->second.size())) {
        raise(*dst, from, SuspicionReason::unknown_region,
              "write to region " + std::to_string(m.region) + " at " + std::to_string(m.offset) +
                  " (+" + std::to_string(length) + ") that this node has not registered");
        ch.cut = true;
        ch.queue.clear();
        ch.queued_bytes = 0;
        return;
      }
      // Rows belong to their owners: a write outside the writer's grant is the writer's
      // fault. Nothing of it is applied and the connection of this view closes both ways;
      // the writer finds it closed a suspicion timeout later (tcp closes it 500 ms later,
      // so that the refuser's suspicion spreads first).
      if (!ds.grants.allows(from, m.region, m.offset, length)) {
        raise(*dst, from, SuspicionReason::foreign_write,
              ds.grants.refusal(from, m.region, m.offset, length));
        std::erase_if(ch.queue, [&](const Message& x) {
          if (x.epoch > ds.epoch) return false;  // a later view's: a connection of its own
          ch.queued_bytes -= x.bytes.size();
          return true;
        });
        schedule_channel(from, to, ch);
        for (auto key : {std::pair{from, to}, std::pair{to, from}}) {
          channels[key].closed = true;
          channels[key].closed_epoch = ds.epoch;
        }
        schedule_suspicion(from, to, SuspicionReason::connection_lost, cfg.suspicion_timeout);
        return;
      }
      // In place, the receiver has read the bytes where they lie since they were stored (and
      // the sender's row is read-only here: nothing of the sender's lands in it).
      const auto read_here = ds.in_place.find(m.region);
      if (!m.in_place && (read_here == ds.in_place.end() || !read_here->second.contains(from)))
        std::memcpy(it->second.data() + m.offset, m.bytes.data(), m.bytes.size());
    }
    ch.queued_bytes -= m.bytes.size();
    ch.queue.pop_front();
    wake(*dst);
    if (src != nullptr) {
      ++src->activity_;  // back-pressure eased
    }
    schedule_channel(from, to, ch);
  }

  Status post(SimTransport& from, NodeId to, Message m) {
    auto& fs = from.state();
    if (fs.crashed) return Status::closed;
    if (!fs.members.contains(to) || fs.suspected.contains(to)) return Status::peer_suspected;
    Channel& ch = channels[{from.id_, to}];
    SimTransport* dst = find(to);
    if (ch.cut || dst == nullptr || dst->state().crashed) return Status::ok;  // lost in flight
    if (ch.closed && ch.closed_epoch == fs.epoch) return Status::ok;          // refused: closed
    if (!ch.queue.empty() && ch.queued_bytes + m.bytes.size() > cfg.channel_bytes) {
      return Status::retry;
    }
    m.epoch = fs.epoch;
    m.due = std::max(now + latency(from.id_, to), ch.last_due);
    ch.last_due = m.due;
    ch.queued_bytes += m.bytes.size();
    ch.queue.push_back(std::move(m));
    schedule_channel(from.id_, to, ch);
    return Status::ok;
  }
};

// ---------------------------------------------------------------------------- Network
Network::Network(Config config) : impl_(std::make_unique<Impl>(config)) {}
Network::~Network() = default;

SimTransport& Network::add_node(NodeId id) {
  auto [it, inserted] = impl_->nodes.emplace(id, nullptr);
  if (!inserted) throw std::invalid_argument("sim: node " + std::to_string(id) + " exists");
  it->second = std::make_unique<SimTransport>(*impl_, id);
  return *it->second;
}

SimTransport& Network::node(NodeId id) {
  auto* t = impl_->find(id);
  if (t == nullptr) throw std::out_of_range("sim: no node " + std::to_string(id));
  return *t;
}

std::vector<NodeAddress> Network::addresses() const {
  std::vector<NodeAddress> out;
  for (const auto& [id, t] : impl_->nodes)
    out.push_back(NodeAddress{id, "sim", 0});
  return out;
}

void Network::set_actor(NodeId id, std::function<bool()> step) {
  auto& t = node(id);
  t.state().actor = std::move(step);
  impl_->schedule_actor(t);
}

void Network::wake_at(NodeId id, Duration at) {
  auto& im = *impl_;
  auto& t = node(id);
  const Duration when = std::max(at, im.now);
  if (!t.state().wakes.insert(when).second) return;
  im.push(Ev{.at = when, .kind = EvKind::timer, .a = id});
}

bool Network::step() {
  auto& im = *impl_;
  if (im.queue.empty()) return false;
  const Ev e = im.queue.top();
  im.queue.pop();
  im.now = std::max(im.now, e.at);
  ++im.events_run;
  im.mix(static_cast<std::uint64_t>(e.at.count()));
  im.mix(static_cast<std::uint64_t>(e.kind) | (std::uint64_t{e.a} << 8) |
         (std::uint64_t{e.b} << 36));
  switch (e.kind) {
    case EvKind::deliver:
      im.deliver(e.a, e.b);
      break;
    case EvKind::actor: {
      auto* t = im.find(e.a);
      if (t == nullptr) break;
      auto& s = t->state();
      if (im.now < s.paused_until) {  // runs when the pause ends (still scheduled)
        im.push(Ev{.at = s.paused_until, .kind = EvKind::actor, .a = e.a});
        break;
      }
      s.actor_scheduled = false;
      if (s.crashed || !s.actor) break;
      if (s.actor()) im.schedule_actor(*t);
      break;
    }
    case EvKind::timer: {
      auto* t = im.find(e.a);
      if (t == nullptr) break;
      auto& s = t->state();
      s.wakes.erase(e.at);
      if (im.now < s.paused_until) {
        wake_at(e.a, s.paused_until);
        break;
      }
      if (s.crashed || !s.actor) break;
      if (s.actor()) im.schedule_actor(*t);
      break;
    }
    case EvKind::silence: {
      // Node b is paused: a's heartbeat detector would see its silence in every view that
      // has it, so look again a timeout later while it stays paused.
      auto* t = im.find(e.a);
      auto* quiet = im.find(e.b);
      if (t == nullptr || quiet == nullptr || t->state().crashed) break;
      if (im.now >= quiet->state().paused_until) break;
      auto& s = t->state();
      if (s.connected && s.members.contains(e.b)) {
        im.raise(*t, e.b, SuspicionReason::heartbeat_timeout,
                 "no heartbeat from node " + std::to_string(e.b));
      }
      im.push(
          Ev{.at = im.now + im.cfg.suspicion_timeout, .kind = EvKind::silence, .a = e.a, .b = e.b});
      break;
    }
    case EvKind::join_check: {
      auto* t = im.find(e.a);
      if (t == nullptr || t->state().crashed || t->state().epoch != e.epoch) break;
      auto* peer = im.find(e.b);
      const bool joined = peer != nullptr && !peer->state().crashed &&
                          peer->state().epoch == e.epoch && peer->state().connected &&
                          peer->state().members.contains(e.a);
      if (!joined)
        im.raise(*t, e.b, SuspicionReason::connect_timeout,
                 "node " + std::to_string(e.b) + " did not join view " + std::to_string(e.epoch));
      break;
    }
    case EvKind::resume: {
      // A peer that went on to a view without us, or suspected us meanwhile, closed its
      // side: we find out now, as a resumed process finds its connections closed.
      auto* t = im.find(e.a);
      if (t == nullptr || t->state().crashed) break;
      auto& s = t->state();
      for (const NodeId m : std::set<NodeId>(s.members)) {
        auto* peer = im.find(m);
        // (A peer still in an earlier view is only slow: it is not gone.)
        const bool gone =
            peer == nullptr || peer->state().crashed || peer->state().epoch > s.epoch ||
            (peer->state().epoch == s.epoch &&
             (!peer->state().members.contains(e.a) || peer->state().suspected.contains(e.a)));
        if (gone)
          im.raise(*t, m, SuspicionReason::connection_lost,
                   "node " + std::to_string(m) + " closed its connection while we were paused");
      }
      im.schedule_actor(*t);
      break;
    }
    case EvKind::connected: {
      // The joiner e.b joined e.a's view: e.a hears of it.
      auto* t = im.find(e.a);
      if (t == nullptr || t->state().crashed || t->state().epoch != e.epoch) break;
      if (t->state().connecting.erase(e.b) == 0 || t->state().suspected.contains(e.b)) break;
      t->state().events.emplace_back(PeerConnected{e.b});
      im.wake(*t);
      break;
    }
    case EvKind::suspect: {
      auto* t = im.find(e.a);
      if (t == nullptr || t->state().epoch != e.epoch) break;
      im.raise(*t, e.b, e.reason,
               "node " + std::to_string(e.b) + " " + std::string(to_string(e.reason)));
      break;
    }
  }
  return true;
}

bool Network::run_until(const std::function<bool()>& done, Duration limit) {
  while (!done()) {
    if (impl_->queue.empty() || impl_->queue.top().at > limit) return done();
    step();
  }
  return true;
}

Duration Network::now() const noexcept {
  return impl_->now;
}
std::uint64_t Network::in_place_writes() const noexcept {
  return impl_->in_place_writes;
}

std::uint64_t Network::events_run() const noexcept {
  return impl_->events_run;
}
std::uint64_t Network::trace_hash() const noexcept {
  return impl_->hash;
}
std::uint64_t Network::seed() const noexcept {
  return impl_->cfg.seed;
}
Rng& Network::rng() noexcept {
  return impl_->rng;
}

void Network::crash(NodeId id) {
  auto& im = *impl_;
  auto& t = node(id);
  auto& s = t.state();
  if (s.crashed) return;
  s.crashed = true;
  for (auto& [key, ch] : im.channels) {
    if (key.first == id) im.truncate(ch);
    if (key.second == id) {
      ch.queue.clear();
      ch.queued_bytes = 0;
    }
  }
  for (auto& [pid, peer] : im.nodes) {
    if (pid == id || peer->state().crashed || !peer->state().members.contains(id)) continue;
    im.schedule_suspicion(pid, id, SuspicionReason::crashed, im.cfg.suspicion_timeout);
  }
}

void Network::cut(NodeId a, NodeId b) {
  auto& im = *impl_;
  for (auto key : {std::pair{a, b}, std::pair{b, a}}) {
    Channel& ch = im.channels[key];
    im.truncate(ch);
    ch.cut = true;
  }
  im.schedule_suspicion(a, b, SuspicionReason::link_cut, im.cfg.suspicion_timeout);
  im.schedule_suspicion(b, a, SuspicionReason::link_cut, im.cfg.suspicion_timeout);
}

Status Network::forge_write(NodeId from, NodeId to, RegionId region, std::uint64_t offset,
                            std::span<const std::byte> bytes) {
  Message m;
  m.region = region;
  m.offset = offset;
  m.bytes.assign(bytes.begin(), bytes.end());
  return impl_->post(node(from), to, std::move(m));
}

void Network::slow(NodeId id, Duration extra) {
  node(id).state().slow = extra;
}

void Network::pause(NodeId id, Duration length) {
  auto& im = *impl_;
  auto& s = node(id).state();
  if (s.crashed) return;
  s.paused_until = std::max(s.paused_until, im.now + length);
  // Silence past the suspicion timeout: every peer with it in its view then suspects it
  // (heartbeat_timeout), in whatever view it is by then (see EvKind::silence).
  if (length > im.cfg.suspicion_timeout) {
    for (auto& [pid, peer] : im.nodes) {
      if (pid == id || peer->state().crashed) continue;
      im.push(
          Ev{.at = im.now + im.cfg.suspicion_timeout, .kind = EvKind::silence, .a = pid, .b = id});
    }
  }
  im.push(Ev{.at = s.paused_until, .kind = EvKind::resume, .a = id});
}

bool Network::crashed(NodeId id) const {
  auto* t = impl_->find(id);
  return t != nullptr && t->state().crashed;
}

void Network::set_host(NodeId id, std::uint32_t host) {
  impl_->hosts[id] = host;
}

std::uint32_t Network::host_of(NodeId id) const {
  const auto it = impl_->hosts.find(id);
  return it == impl_->hosts.end() ? 0 : it->second;
}

bool Network::paused(NodeId id) const {
  auto* t = impl_->find(id);
  return t != nullptr && impl_->now < t->state().paused_until;
}

// ---------------------------------------------------------------------------- SimTransport
SimTransport::SimTransport(Network::Impl& net, NodeId id)
    : net_(&net), id_(id), state_(std::make_unique<State>()) {}
SimTransport::~SimTransport() = default;

void SimTransport::release_region(RegionId id) {
  if (state_->connected) throw std::logic_error("sim: release_region while connected");
  state_->regions.erase(id);
  state_->grants.release(id);
  state_->rows.erase(id);
  state_->ended.erase(id);
  state_->in_place.erase(id);
  // Unmaps the peers' rows mapped over it too; a peer that maps our row keeps it.
  if (const auto it = state_->shared.find(id); it != state_->shared.end()) {
    ::munmap(it->second.base, it->second.length);
    ::close(it->second.fd);
    state_->shared.erase(it);
  }
}

void SimTransport::share_rows(RegionId id, std::span<const WriteGrant> rows) {
  restrict_writes(id, rows);
  if (!state_->shared.contains(id)) return;  // copies (Config::rows_in_place is off)
  if (auto by_owner = rows_in_place(rows, state_->regions.at(id).size()))
    state_->rows[id] = std::move(*by_owner);
}

// Maps `owner`'s row of region `id` over the same range of `reader`'s region, where both
// declared the region's rows alike for the view they are both connected to now.
void Network::Impl::link_row(SimTransport& reader, SimTransport& owner, RegionId id) {
  auto& rs = reader.state();
  auto& os = owner.state();
  if (rs.ended.contains(id) || os.ended.contains(id)) return;
  const auto mine = rs.rows.find(id);
  const auto theirs = os.rows.find(id);
  if (mine == rs.rows.end() || theirs == os.rows.end() || mine->second != theirs->second) return;
  const auto row = mine->second.find(owner.id_);
  if (row == mine->second.end() || rs.in_place[id].contains(owner.id_)) return;
  const auto& from = os.shared.at(id);
  const auto& to = rs.shared.at(id);
  if (from.length != to.length) return;
  void* p = ::mmap(to.base + row->second.offset, row->second.length, PROT_READ,
                   MAP_SHARED | MAP_FIXED, from.fd, static_cast<off_t>(row->second.offset));
  if (p == MAP_FAILED)
    throw std::runtime_error("sim: cannot map node " + std::to_string(owner.id_) +
                             "'s row: " + std::strerror(errno));
  rs.in_place[id].insert(owner.id_);
}

void Network::Impl::detach_rows(SimTransport& t) {
  auto& s = t.state();
  for (auto& [id, peers] : s.in_place) {
    const auto& rows = s.rows.at(id);
    auto& memory = s.shared.at(id);
    for (const NodeId peer : peers) {
      const auto& row = rows.at(peer);
      keep_private_copy(memory.base + row.offset, row.length);
    }
  }
  s.in_place.clear();
  for (const auto& [id, rows] : s.rows)
    s.ended.insert(id);
}

LocalRegion SimTransport::create_region(RegionId id, std::size_t size) {
  if (state_->regions.contains(id))
    throw std::invalid_argument("sim: region " + std::to_string(id) + " exists");
  if (net_->cfg.rows_in_place) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    SharedMemory m;
    m.length = std::max<std::size_t>(page, (size + page - 1) / page * page);
    const std::string name = "sim.n" + std::to_string(id_) + ".r" + std::to_string(id);
    m.fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
    if (m.fd < 0 || ::ftruncate(m.fd, static_cast<off_t>(m.length)) != 0)
      throw std::runtime_error("sim: cannot make region memory: " +
                               std::string(std::strerror(errno)));
    void* p = ::mmap(nullptr, m.length, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd, 0);
    if (p == MAP_FAILED) {
      ::close(m.fd);
      throw std::runtime_error("sim: cannot map region memory: " +
                               std::string(std::strerror(errno)));
    }
    m.base = static_cast<std::byte*>(p);
    state_->shared.emplace(id, m);
    auto& b = state_->regions[id];
    b = AlignedBuffer::borrow({m.base, size});
    return LocalRegion{id, b.span()};
  }
  auto [it, inserted] = state_->regions.emplace(id, AlignedBuffer{});
  it->second = AlignedBuffer(size);
  return LocalRegion{id, it->second.span()};
}

void SimTransport::restrict_writes(RegionId id, std::span<const WriteGrant> grants) {
  if (state_->connected) throw std::logic_error("sim: restrict_writes while connected");
  const auto it = state_->regions.find(id);
  if (it == state_->regions.end())
    throw std::invalid_argument("sim: restrict_writes: no region " + std::to_string(id));
  state_->grants.restrict(id, it->second.size(), grants);
}

Status SimTransport::connect(std::span<const NodeAddress> members, std::uint64_t view_epoch,
                             std::chrono::milliseconds /*timeout*/) {
  auto& s = *state_;
  if (s.crashed) return Status::closed;
  s.members.clear();
  s.suspected.clear();
  s.connecting.clear();
  s.posted.clear();
  s.epoch = view_epoch;
  s.connected = true;
  // Rows in place with each peer connected to this view already (the later connect maps
  // both ways).
  for (const auto& m : members) {
    auto* peer = m.id == id_ ? nullptr : net_->find(m.id);
    if (peer == nullptr || !peer->state().connected || peer->state().epoch != view_epoch) continue;
    for (const auto& [id, rows] : s.rows) {
      net_->link_row(*this, *peer, id);
      net_->link_row(*peer, *this, id);
    }
  }
  // Peers that joined this view first may have sent already.
  for (auto& [key, ch] : net_->channels) {
    if (key.second != id_ || !ch.held) continue;
    ch.held = false;
    net_->schedule_channel(key.first, key.second, ch);
  }
  Status result = Status::ok;
  for (const auto& m : members) {
    if (m.id == id_) continue;
    s.members.insert(m.id);
    auto* peer = net_->find(m.id);
    if (peer == nullptr || peer->state().crashed) {
      net_->raise(*this, m.id, SuspicionReason::connect_timeout,
                  "node " + std::to_string(m.id) + " is not running");
      result = Status::peer_suspected;
    } else if (peer->state().epoch > view_epoch) {
      // It went on to a later view without us (we were paused): it will never join ours.
      net_->raise(*this, m.id, SuspicionReason::connect_timeout,
                  "node " + std::to_string(m.id) + " is in a later view");
      result = Status::peer_suspected;
    } else {
      // A member joining with this view that has not joined it yet holds nobody: we hear
      // of it when it does (EvKind::connected), as tcp and shm connect it in the background.
      if (m.connect_within.count() > 0 &&
          !(peer->state().epoch == view_epoch && peer->state().connected))
        s.connecting.insert(m.id);
      // And we are such a joiner to members that are waiting for us.
      if (peer->state().epoch == view_epoch && peer->state().connecting.contains(id_))
        net_->push(Ev{.at = net_->now + net_->latency(id_, m.id),
                      .kind = EvKind::connected,
                      .a = m.id,
                      .b = id_,
                      .epoch = view_epoch});
      // A link cut earlier stays cut: in this view as in the last, the silence on it is
      // suspected after the suspicion timeout (a real member's heartbeats find it again;
      // the suspicion scheduled when it was cut belonged to the view then).
      const auto cut = [&](NodeId from, NodeId to) {
        const auto it = net_->channels.find({from, to});
        return it != net_->channels.end() && it->second.cut;
      };
      if (cut(id_, m.id) || cut(m.id, id_))
        net_->schedule_suspicion(id_, m.id, SuspicionReason::link_cut, net_->cfg.suspicion_timeout);
      // A member that has not joined this view long from now never will (a real
      // transport's connect timeout, far longer than its suspicion timeout): suspected then.
      // A member joining with this view gets connect_within, where that is shorter.
      const Duration wait =
          std::max<Duration>(50 * net_->cfg.suspicion_timeout, std::chrono::milliseconds(20));
      net_->push(Ev{.at = give_up_on(m, net_->now, net_->now + wait),
                    .kind = EvKind::join_check,
                    .a = id_,
                    .b = m.id,
                    .epoch = view_epoch});
    }
  }
  return result;
}

void SimTransport::disconnect() {
  auto& s = *state_;
  for (NodeId peer : s.members) {
    // Our connections of this view close: what we sent is gone, and so is what peers sent
    // us in this view or before; a peer already in a later view keeps its queue for us.
    for (auto key : {std::pair{id_, peer}, std::pair{peer, id_}}) {
      Channel& ch = net_->channels[key];
      std::erase_if(ch.queue, [&](const Message& m) {
        if (key.first != id_ && m.epoch > s.epoch) return false;
        ch.queued_bytes -= m.bytes.size();
        return true;
      });
      ch.stalled = false;
    }
    // Only a peer still in the view we leave hears of it; one that already moved on to the
    // next view has its own, separate connection to us.
    auto* p = net_->find(peer);
    if (p != nullptr && p->state().members.contains(id_) && p->state().epoch == s.epoch) {
      net_->schedule_suspicion(peer, id_, SuspicionReason::peer_left, net_->latency(id_, peer));
    }
  }
  Network::Impl::detach_rows(*this);
  s.members.clear();
  s.suspected.clear();
  s.connecting.clear();
  s.posted.clear();
  s.connected = false;
  ++s.epoch;
}

bool SimTransport::connecting(NodeId peer) const {
  return state_->connecting.contains(peer);
}

std::optional<RegionDescriptor> SimTransport::remote_region(NodeId peer, RegionId id) const {
  if (!state_->members.contains(peer)) return std::nullopt;
  auto* p = net_->find(peer);
  if (p == nullptr) return std::nullopt;
  auto it = p->state().regions.find(id);
  if (it == p->state().regions.end()) return std::nullopt;
  return RegionDescriptor{id, it->second.size(), 0, 0};
}

std::optional<LocalRegion> SimTransport::local_region(RegionId id) const {
  auto it = state_->regions.find(id);
  if (it == state_->regions.end()) return std::nullopt;
  return LocalRegion{id, it->second.span()};
}

Status SimTransport::write(NodeId peer, RegionId local, std::uint64_t local_offset, RegionId remote,
                           std::uint64_t remote_offset, std::size_t length) {
  auto src = state_->regions.find(local);
  if (src == state_->regions.end() || !in_bounds(local_offset, length, src->second.size())) {
    return Status::invalid;
  }
  if (state_->crashed) return Status::closed;
  auto* p = net_->find(peer);
  // A peer still in an earlier view may not have registered this view's regions yet: the
  // write waits at the peer until it joins the view (as connect() blocks on real
  // transports) and is checked when it lands.
  if (p != nullptr && state_->members.contains(peer) && p->state().epoch >= state_->epoch) {
    auto dst = p->state().regions.find(remote);
    if (dst == p->state().regions.end() || !in_bounds(remote_offset, length, dst->second.size())) {
      return Status::invalid;
    }
  }
  Message m;
  m.region = remote;
  m.offset = remote_offset;
  // Our own row, which the peer reads in place: only the wake-up travels.
  if (p != nullptr && local == remote && local_offset == remote_offset) {
    const auto& reads = p->state().in_place;
    const auto rows = state_->rows.find(local);
    if (const auto it = reads.find(remote);
        it != reads.end() && it->second.contains(id_) && rows != state_->rows.end()) {
      const auto own = rows->second.find(id_);
      if (own != rows->second.end() && local_offset >= own->second.offset &&
          local_offset + length <= own->second.offset + own->second.length) {
        m.in_place = true;
        m.length = length;
        ++net_->in_place_writes;
        return net_->post(*this, peer, std::move(m));
      }
    }
  }
  const auto* from = src->second.data() + local_offset;
  m.bytes.assign(from, from + length);
  return net_->post(*this, peer, std::move(m));
}

Status SimTransport::send_block(NodeId peer, RegionId local, std::uint64_t offset,
                                std::uint32_t length, std::uint32_t immediate) {
  auto src = state_->regions.find(local);
  if (src == state_->regions.end() || !in_bounds(offset, length, src->second.size())) {
    return Status::invalid;
  }
  Message m;
  m.block = true;
  m.immediate = immediate;
  const auto* from = src->second.data() + offset;
  m.bytes.assign(from, from + length);
  return net_->post(*this, peer, std::move(m));
}

Status SimTransport::post_receive(NodeId peer, RegionId local, std::uint64_t offset,
                                  std::uint32_t capacity) {
  auto& s = *state_;
  if (s.crashed) return Status::closed;
  auto r = s.regions.find(local);
  if (r == s.regions.end() || !in_bounds(offset, capacity, r->second.size())) {
    return Status::invalid;
  }
  if (!s.members.contains(peer) || s.suspected.contains(peer)) return Status::peer_suspected;
  s.posted[peer].push_back(Posted{local, offset, capacity});
  Channel& ch = net_->channels[{peer, id_}];
  if (ch.stalled) {
    ch.stalled = false;
    if (!ch.queue.empty()) ch.queue.front().due = net_->now + net_->latency(peer, id_);
    net_->schedule_channel(peer, id_, ch);
  }
  return Status::ok;
}

std::size_t SimTransport::poll(std::vector<Event>& out) {
  const std::size_t n = state_->events.size();
  for (auto& e : state_->events)
    out.push_back(std::move(e));
  state_->events.clear();
  return n;
}

void SimTransport::wait(std::uint64_t /*ticket*/, std::chrono::nanoseconds /*timeout*/) {
  // Never blocks: the scheduler runs an idle actor again when its node is woken.
}

void SimTransport::notify() noexcept {
  if (!state_->crashed) net_->wake(*this);
}

// ---------------------------------------------------------------------------- seeds
namespace {

// The environment variable `name` as a number, or `fallback` where it is unset or empty.
// Anything else is a mistake in the test's command line: say so rather than explore nothing.
template <class T>
T env_number(const char* name, T fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  if constexpr (std::is_floating_point_v<T>) {
    const double d = std::strtod(v, &end);
    if (errno == 0 && end != v && *end == '\0' && d >= 0) return static_cast<T>(d);
  } else {
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (errno == 0 && end != v && *end == '\0' && *v != '-') return static_cast<T>(n);
  }
  throw std::invalid_argument(std::string(name) + "='" + v + "' is not a non-negative number");
}

}  // namespace

Seeds Seeds::from_env(std::uint64_t default_count, std::uint64_t default_floor,
                      std::chrono::seconds default_budget) {
  Seeds s;
  s.count = env_number("SPINDLE_SIM_SEEDS", default_count);
  s.floor = std::min(
      env_number("SPINDLE_SIM_MIN_SEEDS", default_floor == 0 ? s.count : default_floor), s.count);
  const double budget_s =
      env_number("SPINDLE_SIM_BUDGET", static_cast<double>(default_budget.count()));
  // Rounded up: a positive budget is never 0, which would mean none.
  s.budget = std::chrono::milliseconds{static_cast<std::int64_t>(std::ceil(budget_s * 1000.0))};
  if (const char* one = std::getenv("SPINDLE_SIM_SEED"); one != nullptr && *one != '\0') {
    s.first = env_number<std::uint64_t>("SPINDLE_SIM_SEED", 1);
    s.count = 1;
    s.floor = 1;
  }
  return s;
}

bool Seeds::next() {
  if (done_) return false;
  const auto now = std::chrono::steady_clock::now();
  if (explored_ == 0) started_ = now;
  const bool more =
      explored_ < count && (explored_ < floor || budget.count() == 0 || now - started_ < budget);
  if (!more) {
    done_ = true;
    std::fprintf(stderr, "sim: %s\n", summary().c_str());
    return false;
  }
  ++explored_;
  return true;
}

std::string Seeds::summary() const {
  const double took =
      explored_ == 0
          ? 0.0
          : std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  char line[160];
  std::snprintf(line, sizeof line, "explored %llu of %llu seeds (first %llu, floor %llu, budget ",
                static_cast<unsigned long long>(explored_), static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(first), static_cast<unsigned long long>(floor));
  std::string out = line;
  if (budget.count() == 0) {
    out += "none";
  } else {
    std::snprintf(line, sizeof line, "%.0f s", std::chrono::duration<double>(budget).count());
    out += line;
  }
  std::snprintf(line, sizeof line, ") in %.1f s", took);
  return out + line;
}

std::string replay_command(std::uint64_t seed, std::string_view test_name) {
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  std::string cmd = "SPINDLE_SIM_SEED=" + std::to_string(seed) + " " +
                    (n > 0 ? std::string(exe, static_cast<std::size_t>(n)) : "<test binary>");
  cmd += " '";
  cmd += test_name;
  cmd += "'";
  return cmd;
}

}  // namespace spindle::transport::sim
