// RDMC transfers (see rdmc.hpp).
#include "rdmc/rdmc.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace spindle::rdmc {

namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kHeaderBytes = 24;  // {size u64, where u64, seq + 1 u64}
// Of a header's `where`: the message is not transferred; its receivers read it in the
// sender's row of the sends region, at `where` less this bit. Without it `where` is 0.
constexpr std::uint64_t kInPlace = std::uint64_t{1} << 63;

std::size_t align_up(std::size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}

}  // namespace

Rdmc::Rdmc(transport::Transport& t, std::uint64_t epoch, std::vector<std::vector<NodeId>> groups,
           Settings settings, Callbacks callbacks, std::vector<std::size_t> group_bytes)
    : t_(&t),
      s_(settings),
      cb_(std::move(callbacks)),
      control_id_(control_region(epoch)),
      pool_id_(pool_region(epoch)),
      sends_id_(sends_region(epoch)) {
  if (s_.block_size == 0 || s_.block_size % kAlign != 0)
    throw std::invalid_argument("rdmc: block_size must be a positive multiple of 64");
  if (s_.staging_per_peer == 0) throw std::invalid_argument("rdmc: staging_per_peer must be >= 1");
  if (groups.size() > kMaxGroups)
    throw std::invalid_argument("rdmc: more than " + std::to_string(kMaxGroups) + " groups");
  if (!group_bytes.empty() && group_bytes.size() != groups.size())
    throw std::invalid_argument("rdmc: " + std::to_string(group_bytes.size()) +
                                " buffer sizes for " + std::to_string(groups.size()) + " groups");
  const NodeId self = t.self();
  for (const auto& g : groups) {
    if (g.size() < 2) throw std::invalid_argument("rdmc: a group needs a sender and a receiver");
    for (auto id : g)
      if (std::count(g.begin(), g.end(), id) != 1)
        throw std::invalid_argument("rdmc: node " + std::to_string(id) + " twice in a group");
    nodes_.insert(nodes_.end(), g.begin(), g.end());
  }
  std::sort(nodes_.begin(), nodes_.end());
  nodes_.erase(std::unique(nodes_.begin(), nodes_.end()), nodes_.end());
  const auto index = [&](NodeId id) {
    return static_cast<std::uint32_t>(std::lower_bound(nodes_.begin(), nodes_.end(), id) -
                                      nodes_.begin());
  };
  const bool in_any = std::binary_search(nodes_.begin(), nodes_.end(), self);
  me_ = in_any ? index(self) : 0;
  const std::size_t n = nodes_.size();
  std::size_t off = align_up(n * n * sizeof(std::uint64_t));  // credits
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& members = groups[i];
    Group g;
    g.members = members;
    g.bytes = align_up((group_bytes.empty() ? s_.group_bytes : group_bytes[i]) + s_.header_room);
    for (auto id : members)
      g.node.push_back(index(id));
    const auto it = std::find(members.begin(), members.end(), self);
    g.member = it != members.end();
    g.rank = g.member ? static_cast<std::uint32_t>(it - members.begin()) : 0;
    g.header_offset = off;
    off += kHeaders * kHeaderBytes;
    g.started_offset = off;
    off += members.size() * sizeof(std::uint64_t);
    g.complete_offset = off;
    off += members.size() * sizeof(std::uint64_t);
    g.done_offset = off;
    off = align_up(off + members.size() * sizeof(std::uint64_t));
    groups_.push_back(std::move(g));
  }
  auto control = t.create_region(control_id_, std::max<std::size_t>(off, kAlign));
  control_ = control.bytes.data();
  // The senders' buffers, where the transport may keep rows in place (shm): one row per node,
  // the buffer space of every group it sends in (a page at least: every node has a row, so
  // every pair maps each other's alike), each row read where it lies by the receivers on its
  // host. Every node lays it out the same.
  const bool rows = in_any && s_.in_place && t.keeps_rows_in_place();
  if (rows) {
    std::vector<transport::WriteGrant> row_of(n);
    std::size_t at = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::size_t start = at;
      for (auto& g : groups_)
        if (g.node[0] == i) {
          g.send_at = at;
          at += g.bytes;
        }
      at = std::max(start + transport::kRowAlign,
                    (at + transport::kRowAlign - 1) / transport::kRowAlign * transport::kRowAlign);
      row_of[i] = {nodes_[i], {{start, at - start}}};
    }
    sends_ = t.create_rows_region(sends_id_, at, row_of).bytes.data();
    t.keep_rows_mapped(sends_id_);
  }
  // The pool: staging buffers for each peer we may receive from, then message space.
  std::size_t peers = 0;
  for (std::uint32_t i = 0; i < n; ++i)
    if (nodes_[i] != self) ++peers;
  staging_end_ = in_any ? peers * s_.staging_per_peer * s_.block_size : 0;
  pool_size_ = staging_end_;
  for (auto& g : groups_) {
    if (!g.member) continue;
    if (g.rank == 0 && rows) {
      g.free.emplace(g.send_at, g.bytes);
      continue;
    }
    g.free.emplace(pool_size_, g.bytes);
    pool_size_ += g.bytes;
  }
  auto pool = t.create_region(pool_id_, std::max<std::size_t>(pool_size_, kAlign));
  pool_ = pool.bytes.data();
  // Each node writes only what is its own (transport.hpp, "Rows belong to their owners"):
  // its row of credits, the header ring of a group it sends in, its started, complete and
  // done counters. Nobody writes the pool one-sidedly: blocks are two-sided sends into the
  // receives posted there.
  std::vector<transport::WriteGrant> grants(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    grants[i].writer = nodes_[i];
    grants[i].ranges.push_back({credit_offset(i, 0), n * sizeof(std::uint64_t)});
  }
  for (const auto& g : groups_) {
    grants[g.node[0]].ranges.push_back({g.header_offset, kHeaders * kHeaderBytes});
    for (std::size_t r = 0; r < g.node.size(); ++r) {
      for (const std::size_t column : {g.started_offset, g.complete_offset, g.done_offset})
        grants[g.node[r]].ranges.push_back({column + r * sizeof(std::uint64_t), 8});
    }
  }
  t.restrict_writes(control_id_, grants);
  t.restrict_writes(pool_id_, {});
  sent_to_.assign(n, 0);
  posted_for_.assign(n, 0);
  suspected_.assign(n, 0);
  staging_at_.assign(n, 0);
  std::size_t at = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (nodes_[i] == self) continue;
    staging_at_[i] = at;
    at += s_.staging_per_peer * s_.block_size;
  }
  if (in_any) {
    // The header rings (grants list them after the credits) before the counters that
    // publish them.
    auto& r = grants[me_].ranges;
    std::stable_partition(r.begin(), r.end(), [&](const transport::ByteRange& b) {
      return std::any_of(groups_.begin(), groups_.end(),
                         [&](const Group& g) { return g.header_offset == b.offset; });
    });
    mine_ = r;
  }
}

std::size_t Rdmc::max_message(GroupId g) const {
  return largest(groups_.at(g));
}

std::size_t Rdmc::largest(const Group& g) const noexcept {
  return std::min<std::size_t>(g.bytes, std::size_t{s_.block_size} * (kMaxBlocks - 1));
}

// ------------------------------------------------------------------------ memory

std::uint64_t Rdmc::load(std::size_t off) const noexcept {
  return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(control_ + off))
      .load(std::memory_order_acquire);
}

void Rdmc::store(std::size_t off, std::uint64_t v) noexcept {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(control_ + off))
      .store(v, std::memory_order_release);
}

void Rdmc::push(NodeId peer, std::size_t off, std::size_t len) {
  const auto st = t_->write(peer, control_id_, off, control_id_, off, len);
  // A joiner still connecting gets all of ours once it connected (on_event).
  if (st == transport::Status::retry && t_->connecting(peer)) return;
  if (st != transport::Status::ok && st != transport::Status::peer_suspected)
    fail(peer, "rdmc: a control write to node " + std::to_string(peer) + " was refused");
}

std::size_t Rdmc::credit_offset(std::uint32_t from, std::uint32_t to) const noexcept {
  return (static_cast<std::size_t>(from) * nodes_.size() + to) * sizeof(std::uint64_t);
}

std::optional<std::size_t> Rdmc::allocate(Group& g, std::size_t size) {
  size = align_up(std::max<std::size_t>(size, 1));
  std::lock_guard lock(pool_mu_);
  for (auto it = g.free.begin(); it != g.free.end(); ++it) {
    if (it->second < size) continue;
    const std::size_t at = it->first;
    const std::size_t rest = it->second - size;
    g.free.erase(it);
    if (rest > 0) g.free.emplace(at + size, rest);
    g.used.emplace(at, size);
    return at;
  }
  return std::nullopt;
}

void Rdmc::free(Group& g, std::size_t offset) {
  std::lock_guard lock(pool_mu_);
  const auto u = g.used.find(offset);
  if (u == g.used.end()) return;
  std::size_t at = u->first;
  std::size_t size = u->second;
  g.used.erase(u);
  // Coalesce with the neighbours.
  auto next = g.free.lower_bound(at);
  if (next != g.free.end() && at + size == next->first) {
    size += next->second;
    next = g.free.erase(next);
  }
  if (next != g.free.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == at) {
      at = prev->first;
      size += prev->second;
      g.free.erase(prev);
    }
  }
  g.free.emplace(at, size);
}

// ------------------------------------------------------------------------ protocol

std::uint32_t Rdmc::immediate(GroupId g, std::uint64_t seq, std::uint32_t block) const {
  return (g << 20) | static_cast<std::uint32_t>((seq % kHeaders) << kBlockBits) | block;
}

Rdmc::~Rdmc() {
  t_->place_blocks(this, nullptr);
}

void Rdmc::start() {
  // Blocks land in their messages where the transport can say so (shm): no staging copy.
  // Set before any receive is posted, so before any block of this view comes.
  if (staging_end_ != 0)
    t_->place_blocks(this, [this](NodeId, std::uint32_t immediate, std::uint32_t length) {
      return place(immediate, length);
    });
  const NodeId self = t_->self();
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i] == self || staging_end_ == 0 || t_->connecting(nodes_[i])) continue;
    open(i);
  }
}

void Rdmc::open(std::uint32_t i) {
  std::size_t at = staging_at_[i];
  for (std::uint32_t k = 0; k < s_.staging_per_peer; ++k) {
    if (t_->post_receive(nodes_[i], pool_id_, at, s_.block_size) == transport::Status::ok)
      ++posted_for_[i];
    at += s_.block_size;
  }
  store(credit_offset(me_, i), posted_for_[i]);
  push(nodes_[i], credit_offset(me_, i), sizeof(std::uint64_t));
}

Rdmc::Group& Rdmc::sender_group(GroupId id, std::size_t size) {
  if (id >= groups_.size()) throw std::invalid_argument("rdmc: no group " + std::to_string(id));
  Group& g = groups_[id];
  if (!g.member || g.rank != 0)
    throw std::invalid_argument("rdmc: node " + std::to_string(t_->self()) +
                                " does not send in group " + std::to_string(id));
  if (size == 0) throw std::invalid_argument("rdmc: an empty message");
  if (size > max_message(id))
    throw std::invalid_argument("rdmc: a message of " + std::to_string(size) +
                                " bytes exceeds the largest group " + std::to_string(id) +
                                " takes, " + std::to_string(max_message(id)));
  return g;
}

std::uint64_t Rdmc::least(const Group& g, std::size_t column_offset) const noexcept {
  std::uint64_t least = UINT64_MAX;
  for (std::uint32_t r = 1; r < g.members.size(); ++r)
    least = std::min(least, load(column_offset + r * sizeof(std::uint64_t)));
  return least;
}

bool Rdmc::header_room(const Group& g) const noexcept {
  // Every receiver is done with the message kHeaders back, whose header slot this reuses.
  return (g.next_seq < kHeaders || least(g, g.done_offset) > g.next_seq - kHeaders) &&
         g.active.size() < kHeaders;
}

bool Rdmc::send(GroupId id, std::span<const std::byte> message) {
  Group& g = sender_group(id, message.size());
  if (g.broken || !header_room(g)) return false;
  const auto at = allocate(g, message.size());
  if (!at) {
    ++stats_.waits_for_pool;
    return false;
  }
  std::memcpy(space_of(g) + *at, message.data(), message.size());
  std::uint64_t seq = 0;
  return send_reserved(id, {space_of(g) + *at, message.size()}, seq);
}

std::optional<std::span<std::byte>> Rdmc::reserve(GroupId id, std::size_t size) {
  Group& g = sender_group(id, size);
  const auto at = allocate(g, size);
  if (!at) return std::nullopt;
  return std::span<std::byte>(space_of(g) + *at, size);
}

void Rdmc::unreserve(GroupId id, std::span<const std::byte> reservation) {
  if (id >= groups_.size()) return;
  const std::byte* base = space_of(groups_[id]);
  if (reservation.data() < base) return;
  free(groups_[id], static_cast<std::size_t>(reservation.data() - base));
}

bool Rdmc::all_in_place(const Group& g) const {
  for (std::uint32_t r = 1; r < g.members.size(); ++r)
    if (!t_->row_in_place(g.members[r], sends_id_)) return false;
  return true;
}

bool Rdmc::send_reserved(GroupId id, std::span<const std::byte> message, std::uint64_t& seq) {
  Group& g = sender_group(id, message.size());
  const std::byte* base = space_of(g);
  const auto offset = static_cast<std::size_t>(message.data() - base);
  {
    std::lock_guard lock(pool_mu_);
    const auto u = g.used.find(offset);
    if (message.data() < base || u == g.used.end() || u->second < message.size())
      throw std::invalid_argument("rdmc: a message outside group " + std::to_string(id) +
                                  "'s reservations");
  }
  if (g.broken || !header_room(g)) return false;
  seq = g.next_seq;
  Message m;
  m.seq = seq;
  m.size = message.size();
  m.blocks = static_cast<std::uint32_t>((message.size() + s_.block_size - 1) / s_.block_size);
  m.region = base == pool_ ? pool_id_ : sends_id_;
  m.offset = offset;
  // Every receiver maps our row: none is sent a block, each reads the message where it is
  // (and we keep it until each is done with it).
  m.in_place = sends_ != nullptr && all_in_place(g);
  if (!m.in_place)
    m.plan = plan(s_.algorithm, static_cast<std::uint32_t>(g.members.size()), 0, m.blocks);
  for (const auto& st : m.plan)
    if (st.send) ++m.sends;
  m.have.assign(m.blocks, 1);
  m.have_count = m.blocks;
  const bool in_place = m.in_place;
  g.active.push_back(std::move(m));
  ++g.next_seq;
  // The header: size and where first, then the seq that publishes it (two writes: one
  // write's bytes have no order of their own). The bytes in place were stored before.
  const std::size_t h = g.header_offset + (seq % kHeaders) * kHeaderBytes;
  store(h, message.size());
  store(h + 8, in_place ? offset | kInPlace : 0);
  store(h + 16, seq + 1);
  for (std::uint32_t r = 1; r < g.members.size(); ++r) {
    push(g.members[r], h, 16);
    push(g.members[r], h + 16, 8);
  }
  return true;
}

void Rdmc::announce(Group& g, std::size_t column_offset, std::uint64_t value) {
  const std::size_t off = column_offset + g.rank * sizeof(std::uint64_t);
  store(off, value);
  for (std::uint32_t r = 0; r < g.members.size(); ++r)
    if (r != g.rank) push(g.members[r], off, sizeof(std::uint64_t));
}

Rdmc::Message* Rdmc::find(Group& g, std::uint32_t parity) {
  for (auto& m : g.active)
    if (m.seq % kHeaders == parity) return &m;
  return nullptr;
}

void Rdmc::release(GroupId id, std::uint64_t seq) {
  if (id >= groups_.size()) return;
  for (auto& m : groups_[id].active)
    if (m.seq == seq) m.released = true;
}

std::optional<std::uint32_t> Rdmc::index_of(NodeId node) const noexcept {
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), node);
  if (it == nodes_.end() || *it != node) return std::nullopt;
  return static_cast<std::uint32_t>(it - nodes_.begin());
}

void Rdmc::fail(NodeId peer, const std::string& why) {
  const auto i = index_of(peer);
  if (!i || suspected_[*i] != 0) return;
  suspected_[*i] = 1;
  for (auto& g : groups_)
    if (std::find(g.members.begin(), g.members.end(), peer) != g.members.end()) g.broken = true;
  if (cb_.failed) cb_.failed(peer, why);
}

void Rdmc::on_event(const transport::Event& e) {
  if (const auto* b = std::get_if<transport::BlockReceived>(&e)) {
    if (b->region == pool_id_) land(*b);
  } else if (const auto* s = std::get_if<transport::BlockSent>(&e)) {
    const GroupId id = s->immediate >> 20;
    if (id >= groups_.size()) return;
    if (auto* m = find(groups_[id], (s->immediate >> kBlockBits) % kHeaders)) ++m->sends_done;
  } else if (const auto* x = std::get_if<transport::Suspicion>(&e)) {
    fail(x->peer, "rdmc: node " + std::to_string(x->peer) + " suspected: " + x->detail);
  } else if (const auto* c = std::get_if<transport::PeerConnected>(&e)) {
    // A joiner connected late (start()): its receives and credits, then all of ours.
    const auto i = index_of(c->peer);
    if (!i || c->peer == t_->self()) return;
    if (staging_end_ != 0 && posted_for_[*i] == 0) open(*i);
    for (const auto& r : mine_)
      push(c->peer, r.offset, r.length);
  }
}

// The message a block is for, where this node receives it and still lacks the block, and
// its length there (0 when there is none such).
Rdmc::Message* Rdmc::expecting(std::uint32_t immediate, std::uint32_t& want) {
  want = 0;
  const GroupId id = immediate >> 20;
  const std::uint32_t block = immediate & (kMaxBlocks - 1);
  if (id >= groups_.size() || !groups_[id].member || groups_[id].rank == 0) return nullptr;
  Message* m = find(groups_[id], (immediate >> kBlockBits) % kHeaders);
  if (m == nullptr || m->in_place || block >= m->blocks) return nullptr;
  want = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(s_.block_size, m->size - std::uint64_t{block} * s_.block_size));
  return m;
}

std::optional<transport::BlockPlace> Rdmc::place(std::uint32_t immediate, std::uint32_t length) {
  std::uint32_t want = 0;
  Message* m = expecting(immediate, want);
  const std::uint32_t block = immediate & (kMaxBlocks - 1);
  // Anything unexpected takes a staging buffer, and land() judges it there.
  if (m == nullptr || m->have[block] != 0 || length != want) return std::nullopt;
  m->have[block] = kPlaced;
  return transport::BlockPlace{pool_id_, m->offset + std::uint64_t{block} * s_.block_size};
}

void Rdmc::land(const transport::BlockReceived& b) {
  const GroupId id = b.immediate >> 20;
  const std::uint32_t block = b.immediate & (kMaxBlocks - 1);
  std::uint32_t want = 0;
  Message* m = expecting(b.immediate, want);
  const std::uint64_t at = m == nullptr ? 0 : m->offset + std::uint64_t{block} * s_.block_size;
  // A placed block is where place() put it; any other lands in a staging buffer.
  const bool expected = m != nullptr && b.length == want &&
                        (b.placed ? m->have[block] == kPlaced && b.offset == at
                                  : m->have[block] == 0 && b.offset < staging_end_);
  if (!expected) {
    // Nobody sends a block of a message not started here, twice, or cut: a peer that
    // does is faulty.
    fail(b.peer, "rdmc: node " + std::to_string(b.peer) + " sent a block no plan expects (group " +
                     std::to_string(id) + ", block " + std::to_string(block) + ", " +
                     std::to_string(b.length) + " bytes)");
    return;
  }
  if (!b.placed) std::memcpy(pool_ + at, pool_ + b.offset, b.length);
  m->have[block] = 1;
  ++m->have_count;
  ++stats_.blocks_received;
  const auto it = std::lower_bound(nodes_.begin(), nodes_.end(), b.peer);
  const auto i = static_cast<std::uint32_t>(it - nodes_.begin());
  if (b.placed) {
    // No staging buffer taken: the peer's credit comes back at once (its receives posted
    // here still outnumber the blocks it has in flight).
    ++stats_.blocks_placed;
    ++posted_for_[i];
  } else if (t_->post_receive(b.peer, pool_id_, b.offset, s_.block_size) == transport::Status::ok) {
    ++posted_for_[i];  // the staging buffer goes back to the peer that filled it
  } else {
    return;
  }
  store(credit_offset(me_, i), posted_for_[i]);
  push(b.peer, credit_offset(me_, i), sizeof(std::uint64_t));
}

bool Rdmc::start_messages(Group& g) {
  if (g.rank == 0) return false;
  bool did = false;
  while (g.active.size() < kHeaders) {
    const std::size_t h = g.header_offset + (g.next_seq % kHeaders) * kHeaderBytes;
    if (load(h + 16) != g.next_seq + 1) break;  // not announced yet
    const std::uint64_t size = load(h);
    const auto blocks = static_cast<std::uint32_t>((size + s_.block_size - 1) / s_.block_size);
    const std::size_t most = largest(g);
    if (size == 0 || size > most) {
      fail(g.members[0], "rdmc: node " + std::to_string(g.members[0]) + " announced a message of " +
                             std::to_string(size) + " bytes, more than this node takes (" +
                             std::to_string(most) + ")");
      return did;
    }
    if (const std::uint64_t where = load(h + 8); where != 0) {
      if (!start_in_place(g, size, blocks, where)) return did;
      did = true;
      continue;
    }
    const auto at = allocate(g, size);
    if (!at) {
      ++stats_.waits_for_pool;
      break;  // back-pressure: nobody sends us its blocks until we have room
    }
    Message m;
    m.seq = g.next_seq;
    m.size = size;
    m.blocks = blocks;
    m.region = pool_id_;
    m.offset = *at;
    m.plan = plan(s_.algorithm, static_cast<std::uint32_t>(g.members.size()), g.rank, blocks);
    for (const auto& st : m.plan)
      if (st.send) ++m.sends;
    m.have.assign(blocks, 0);
    g.active.push_back(std::move(m));
    ++g.next_seq;
    announce(g, g.started_offset, g.next_seq);
    did = true;
  }
  return did;
}

bool Rdmc::start_in_place(Group& g, std::uint64_t size, std::uint32_t blocks, std::uint64_t where) {
  const NodeId sender = g.members[0];
  const auto refuse = [&](const std::string& what) {
    fail(sender, "rdmc: node " + std::to_string(sender) + " announced message " +
                     std::to_string(g.next_seq) + " of a group in place " + what);
    return false;
  };
  if ((where & kInPlace) == 0)
    return refuse("with no place (" + std::to_string(where) + " where 0 or in place was due)");
  where &= ~kInPlace;
  if (sends_ == nullptr || !t_->row_in_place(sender, sends_id_)) {
    // Mapped once it connected (a member joining in the background): wait for it.
    if (sends_ != nullptr && t_->connecting(sender)) return false;
    return refuse("but its buffers are not mapped here (the transport copies them)");
  }
  // Within the sender's buffer space for this group: a faulty one may name no other bytes.
  if (where < g.send_at || where - g.send_at > g.bytes || size > g.bytes - (where - g.send_at))
    return refuse("at offset " + std::to_string(where) + " (" + std::to_string(size) +
                  " bytes), outside its buffer space [" + std::to_string(g.send_at) + ", " +
                  std::to_string(g.send_at + g.bytes) + ")");
  Message m;
  m.seq = g.next_seq;
  m.size = size;
  m.blocks = blocks;
  m.region = sends_id_;
  m.offset = where;
  m.in_place = true;
  m.have.assign(m.blocks, 1);
  m.have_count = m.blocks;
  g.active.push_back(std::move(m));
  ++g.next_seq;
  announce(g, g.started_offset, g.next_seq);
  return true;
}

bool Rdmc::send_blocks(GroupId id, Group& g) {
  bool did = false;
  for (auto& m : g.active) {
    while (m.next < m.plan.size()) {
      const auto& st = m.plan[m.next];
      if (!st.send) {
        ++m.next;
        continue;
      }
      const auto [peer_rank, block] = *st.send;
      if (m.have[block] != 1) break;  // not here yet (or placed, not yet reported)
      // The receiver has a buffer for this message, and a staging receive posted for us.
      if (load(g.started_offset + peer_rank * sizeof(std::uint64_t)) <= m.seq) break;
      const std::uint32_t peer = g.node[peer_rank];
      if (load(credit_offset(peer, me_)) <= sent_to_[peer]) break;
      const std::uint64_t at = m.offset + std::uint64_t{block} * s_.block_size;
      const auto len = static_cast<std::uint32_t>(
          std::min<std::uint64_t>(s_.block_size, m.size - std::uint64_t{block} * s_.block_size));
      const auto st2 = t_->send_block(nodes_[peer], m.region, at, len, immediate(id, m.seq, block));
      if (st2 == transport::Status::retry) return did;  // the transport's queue is full: later
      if (st2 != transport::Status::ok) {
        fail(nodes_[peer], "rdmc: sending a block to node " + std::to_string(nodes_[peer]) +
                               " failed (" + std::string(transport::to_string(st2)) + ")");
        return did;
      }
      ++sent_to_[peer];
      ++stats_.blocks_sent;
      ++m.next;
      did = true;
    }
  }
  return did;
}

bool Rdmc::finish(GroupId id, Group& g) {
  bool did = false;
  // Complete everywhere: the least count the receivers announced.
  const std::uint64_t everywhere = g.rank == 0 ? least(g, g.complete_offset) : 0;
  bool in_order = true;  // every earlier message delivered: a group delivers in order
  std::uint64_t complete = g.done;
  bool prefix = true;
  for (auto& m : g.active) {
    if (!m.finished && m.have_count == m.blocks && m.next == m.plan.size() &&
        m.sends_done == m.sends) {
      m.finished = true;
      did = true;
    }
    const bool here = g.rank == 0 ? m.finished && m.seq < everywhere : m.have_count == m.blocks;
    if (!m.delivered && here && in_order) {
      m.delivered = true;
      if (g.rank != 0) {
        ++stats_.messages_delivered;
        if (m.in_place) ++stats_.messages_in_place;
      }
      if (cb_.delivered)
        cb_.delivered(id, m.seq, std::span<const std::byte>(address(m), m.size));
      else
        m.released = true;
      did = true;
    }
    in_order = in_order && m.delivered;
    prefix = prefix && m.finished;
    if (prefix) ++complete;
  }
  if (g.rank != 0 && complete != g.complete) {
    g.complete = complete;
    announce(g, g.complete_offset, complete);
    did = true;
  }
  // Delivered, finished and released messages leave in order; the sender learns how far
  // we got.
  // A message read in place stays at its sender until every receiver is done with it.
  const std::uint64_t gone_everywhere = g.rank == 0 ? least(g, g.done_offset) : 0;
  const auto leaves = [&](const Message& m) {
    return m.finished && m.delivered && m.released &&
           (!m.in_place || g.rank != 0 || m.seq < gone_everywhere);
  };
  std::uint64_t done = g.done;
  while (!g.active.empty() && leaves(g.active.front())) {
    if (!g.active.front().in_place || g.rank == 0) free(g, g.active.front().offset);
    g.active.pop_front();
    ++done;
  }
  if (done != g.done) {
    g.done = done;
    announce(g, g.done_offset, done);
    did = true;
  }
  return did;
}

bool Rdmc::poll() {
  bool did = false;
  for (GroupId id = 0; id < groups_.size(); ++id) {
    Group& g = groups_[id];
    if (!g.member || g.broken) continue;
    did = start_messages(g) || did;
    // Nothing in transfer: nothing to send or finish (the loop runs this every step, so an
    // idle group costs one look at its header ring).
    if (g.active.empty()) continue;
    did = send_blocks(id, g) || did;
    did = finish(id, g) || did;
  }
  return did;
}

}  // namespace spindle::rdmc
