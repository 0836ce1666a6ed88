// SST layout computation, push queue, heartbeats and suspicions (see sst.hpp).
#include "sst/sst.hpp"

#include <algorithm>
#include <stdexcept>

namespace spindle::sst {

SstLayout::SstLayout(const group::View& g) : subgroups_(g.subgroups.size()) {
  const std::size_t n = g.members.size();
  columns_.resize(n * subgroups_);
  for (const auto& s : g.subgroups)
    stride_.push_back(stride_for(s.max_payload));
  joiners_at_ = sizeof(MembershipRow) + round_up(sizeof(std::int64_t) * g.subgroups.size(), kLine);
  identities_ = g.secured();
  membership_len_ = joiners_at_ + sizeof(JoinEntry) * kMaxJoins +
                    (identities_ ? sizeof(JoinIdentity) * kMaxJoins : 0);
  std::size_t off = 0;
  for (std::size_t r = 0; r < n; ++r) {
    const NodeId id = g.members[r].id;
    row_offset_.push_back(off);
    std::size_t row = sizeof(ControlRow) + membership_len_;
    for (std::size_t s = 0; s < subgroups_; ++s) {
      const auto& sg = g.subgroups[s];
      auto& c = columns_[r * subgroups_ + s];
      if (std::find(sg.members.begin(), sg.members.end(), id) == sg.members.end()) continue;
      c.present = true;
      c.counters = off + row;
      c.counters_len =
          sg.ordering == group::Ordering::atomic
              ? sizeof(CountersRow)
              : round_up(sizeof(std::uint64_t) * sg.senders.size() + sizeof(MemberSet), kLine);
      if (c.counters_len == 0) c.counters_len = kLine;
      row += c.counters_len;
      if (std::find(sg.senders.begin(), sg.senders.end(), id) != sg.senders.end()) {
        c.sender = true;
        c.guard = off + row;
        row += sizeof(SenderGuardRow);
        c.headers = off + row;
        row += round_up(sizeof(SlotHeader) * sg.window_size, kLine);
        c.slots = off + row;
        row += stride_[s] * sg.window_size;
      }
    }
    row_size_.push_back(row);
    // Each row on its own pages: a transport may keep it in place, at its owner
    // (Transport::share_rows).
    off += round_up(row, transport::kRowAlign);
  }
  region_size_ = off;
}

Clock steady_clock() {
  return [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::steady_clock::now().time_since_epoch());
  };
}

Sst::Sst(transport::Transport& t, const group::View& g, Clock clock)
    : transport_(&t), group_(g), layout_(g), clock_(std::move(clock)) {
  const auto rank = group_.rank_of(t.self());
  if (!rank) {
    throw std::invalid_argument("sst: node " + std::to_string(t.self()) +
                                " is not a member of the group");
  }
  my_rank_ = *rank;
  region_ = region_id(group_.epoch);
  const std::size_t n = layout_.rows();
  // Rows belong to their owners: a member's writes may touch its own row only (its control
  // and membership columns, counters, guards and slot rings all live there), so a write into
  // another's row is the writer's suspicion, never the row owner's (transport.hpp).
  // Each row is its pages (SstLayout), which a transport on one host may keep in place.
  std::vector<transport::WriteGrant> grants;
  for (std::size_t r = 0; r < n; ++r) {
    grants.push_back(transport::WriteGrant{
        node_of(r), {transport::ByteRange{layout_.row_offset(r), layout_.row_extent(r)}}});
  }
  auto region = transport_->create_rows_region(region_, layout_.region_size(), grants);
  base_ = region.bytes.data();
  queues_.resize(n);
  suspected_.assign(n, 0);
  last_heartbeat_.assign(n, 0);
  heartbeat_seen_at_.assign(n, std::chrono::nanoseconds{0});
  // Counters start at -1 ("nothing yet") in every copy of every row, so a peer's row reads
  // correctly before its first push arrives.
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t s = 0; s < group_.subgroups.size(); ++s) {
      const auto& c = layout_.columns(r, s);
      if (c.present && group_.subgroups[s].ordering == group::Ordering::atomic) {
        store<std::int64_t>(c.counters + offsetof(CountersRow, received_num), -1);
        store<std::int64_t>(c.counters + offsetof(CountersRow, delivered_num), -1);
        store<std::int64_t>(c.counters + offsetof(CountersRow, released_num), -1);
      }
    }
  }
}

transport::Status Sst::connect(std::chrono::milliseconds timeout) {
  std::vector<transport::NodeAddress> members;
  for (const auto& m : group_.members) {
    // A member joining with this view that never connects must not hold the others for
    // the whole connect timeout (docs/membership.md, "Joining").
    members.push_back(transport::NodeAddress{
        m.id, m.host, m.port,
        m.joining ? 2 * group_.knobs.suspicion_timeout : std::chrono::milliseconds{0}, m.nonce,
        m.subject});
  }
  const auto st = transport_->connect(members, group_.epoch, timeout);
  connecting_.assign(rows(), 0);
  for (std::size_t r = 0; r < rows(); ++r)
    if (r != my_rank_ && transport_->connecting(node_of(r))) connecting_[r] = 1;
  const auto now = clock_();
  for (auto& t : heartbeat_seen_at_)
    t = now;
  next_heartbeat_ = now;
  return st;
}

namespace {
// Adds [offset, +len) to a sorted list of unique offsets (a repeat widens the entry).
template <class Range>
void add_unique(std::vector<Range>& v, std::size_t offset, std::size_t len) {
  auto it = std::lower_bound(v.begin(), v.end(), offset,
                             [](const Range& r, std::size_t o) { return r.offset < o; });
  if (it != v.end() && it->offset == offset) {
    it->len = std::max(it->len, len);
    return;
  }
  v.insert(it, Range{offset, len});
}
}  // namespace

Sst::PeerQueue* Sst::queue_for(std::size_t rank) {
  if (rank == my_rank_ || suspected_[rank] || connecting(rank)) return nullptr;
  auto& q = queues_[rank];
  if (q.empty()) dirty_.push_back(rank);
  return &q;
}

void Sst::push_row(std::size_t rank) {
  const std::size_t row = layout_.row_offset(my_rank_);
  const std::size_t fixed = layout_.membership(my_rank_) + layout_.membership_len() - row;
  push_status(rank, row, fixed);
  std::vector<Range> guards;
  for (std::size_t s = 0; s < group_.subgroups.size(); ++s) {
    const auto& c = layout_.columns(my_rank_, s);
    if (!c.present) continue;
    guards.push_back(Range{c.counters, c.counters_len});
    if (c.sender) guards.push_back(Range{c.guard, sizeof(SenderGuardRow)});
  }
  std::sort(guards.begin(), guards.end(),
            [](const Range& a, const Range& b) { return a.offset < b.offset; });
  std::size_t at = row + fixed;
  for (const auto& g : guards) {
    if (g.offset > at) push_data(rank, at, g.offset - at);
    at = std::max(at, g.offset + g.len);
  }
  const std::size_t end = row + layout_.row_size(my_rank_);
  if (end > at) push_data(rank, at, end - at);
  for (const auto& g : guards)
    push_guard(rank, g.offset, g.len);
}

void Sst::push_data(std::size_t rank, std::size_t offset, std::size_t len) {
  if (len == 0) return;
  auto* q = queue_for(rank);
  if (q == nullptr) return;
  // A push copies our memory as it is when it goes out, so bytes queued twice go once: the
  // queue is a set of disjoint ranges in offset order (the guards after them publish them).
  // A peer that takes nothing (a stopped listener over tcp) costs at most one range per
  // gap in our row, however long it stops.
  auto& v = q->data;
  std::size_t begin = offset;
  std::size_t end = offset + len;
  if (!v.empty() && v.back().offset + v.back().len < begin) {  // the usual case: past the end
    v.push_back(Range{begin, len});
    return;
  }
  // The first range that ends at or after `begin`, up to the last that starts at or before
  // `end`, merge with it.
  auto first = std::lower_bound(v.begin(), v.end(), begin,
                                [](const Range& r, std::size_t o) { return r.offset + r.len < o; });
  auto last = first;
  while (last != v.end() && last->offset <= end) {
    begin = std::min(begin, last->offset);
    end = std::max(end, last->offset + last->len);
    ++last;
  }
  if (first == last) {
    v.insert(first, Range{begin, end - begin});
    return;
  }
  *first = Range{begin, end - begin};
  v.erase(first + 1, last);
}

std::size_t Sst::queued(std::size_t rank) const {
  if (rank >= queues_.size()) return 0;
  const auto& q = queues_[rank];
  return q.status.size() + q.data.size() + q.guards.size();
}

void Sst::push_guard(std::size_t rank, std::size_t offset, std::size_t len) {
  if (len == 0) return;
  if (auto* q = queue_for(rank)) add_unique(q->guards, offset, len);
}

void Sst::push_status(std::size_t rank, std::size_t offset, std::size_t len) {
  if (len == 0) return;
  if (auto* q = queue_for(rank)) add_unique(q->status, offset, len);
}

void Sst::push_status_lazy(std::size_t rank, std::size_t offset, std::size_t len,
                           std::chrono::nanoseconds within) {
  if (len == 0 || rank == my_rank_ || suspected_[rank] || connecting(rank)) return;
  if (!ride_) {  // nobody here is about to reply
    push_status(rank, offset, len);
    return;
  }
  auto& q = queues_[rank];
  if (!q.empty()) {  // something goes to it this step anyway
    add_unique(q.status, offset, len);
    return;
  }
  if (q.lazy.empty()) {
    ++lazy_peers_;
    if (!lazy_due_) lazy_due_ = clock_() + within;
  }
  add_unique(q.lazy, offset, len);
}

void Sst::take_lazy(PeerQueue& q) {
  if (q.lazy.empty()) return;
  for (const auto& r : q.lazy)
    add_unique(q.status, r.offset, r.len);
  forget_lazy(q);
}

void Sst::forget_lazy(PeerQueue& q) {
  if (q.lazy.empty()) return;
  q.lazy.clear();
  if (--lazy_peers_ == 0) lazy_due_.reset();
}

bool Sst::release_lazy() {
  if (lazy_peers_ == 0) return false;
  for (std::size_t r = 0; r < queues_.size(); ++r) {
    if (queues_[r].lazy.empty()) continue;
    if (queue_for(r) != nullptr) {
      take_lazy(queues_[r]);
    } else {
      forget_lazy(queues_[r]);  // gone meanwhile: nothing goes to it
    }
  }
  return true;
}

void Sst::push_guard_to(std::span<const std::size_t> ranks, std::size_t offset, std::size_t len) {
  for (auto r : ranks)
    push_guard(r, offset, len);
}

bool Sst::has_pending() const noexcept {
  return !dirty_.empty();
}

// One write_batch per peer: status rows, then data, then the guards that publish it (a
// guard only after all of its data: the batch stops at the first refused op).
bool Sst::flush_peer(std::size_t rank, PeerQueue& q) {
  const NodeId peer = node_of(rank);
  ops_.clear();
  auto add = [&](const std::vector<Range>& v) {
    for (const auto& r : v)
      ops_.push_back(transport::WriteOp{region_, r.offset, region_, r.offset, r.len});
  };
  add(q.status);
  add(q.data);
  add(q.guards);
  const auto res = transport_->write_batch(peer, ops_);
  if (res.posted > 0 && batch_count_ != nullptr)
    batch_count_->fetch_add(1, std::memory_order_relaxed);
  switch (res.status) {
    case transport::Status::ok:
      break;
    case transport::Status::retry:
      ++stats_.retries;
      break;
    case transport::Status::peer_suspected:
    case transport::Status::closed:
      // Empties the peer's queue: nothing below may touch it.
      suspect(rank, transport::SuspicionReason::connection_lost,
              "write refused: " + std::string(transport::to_string(res.status)));
      return res.posted > 0;
    case transport::Status::invalid: {
      // Our ops lie inside our own region by construction, so the peer's side was refused:
      // it announced no region for this view, or one too small for the layout. That is bad
      // input from the peer, not our bug: suspect it and let the view change.
      const auto& op = ops_[res.posted];
      const auto remote = transport_->remote_region(peer, region_);
      if (!remote || remote->size < op.remote_offset + op.length) {
        const std::string what = "node " + std::to_string(peer) + " announced ";
        suspect(rank, transport::SuspicionReason::unknown_region,
                (remote ? what + "its SST region for view " + std::to_string(group_.epoch) +
                              " with " + std::to_string(remote->size) + " bytes; the view's " +
                              "layout needs " + std::to_string(layout_.region_size())
                        : what + "no SST region for view " + std::to_string(group_.epoch)) +
                    " (region " + std::to_string(region_) + "): write of [" +
                    std::to_string(op.remote_offset) + ", +" + std::to_string(op.length) +
                    ") refused");
        return res.posted > 0;
      }
      throw std::logic_error("sst: invalid write of [" + std::to_string(op.local_offset) + ", +" +
                             std::to_string(op.length) + ") to node " + std::to_string(peer));
    }
  }
  // Drop what was posted, queue by queue, in the order the ops were built.
  std::size_t left = res.posted;
  auto take = [&](std::vector<Range>& v, bool data) {
    const std::size_t n = std::min(left, v.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (data) {
        ++stats_.data_writes;
        stats_.data_bytes += v[i].len;
      } else {
        ++stats_.guard_writes;
      }
    }
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n));
    left -= n;
  };
  take(q.status, false);
  take(q.data, true);
  take(q.guards, false);
  return res.posted > 0;
}

bool Sst::flush() {
  if (dirty_.empty()) return false;
  bool wrote = false;
  std::size_t keep = 0;
  for (std::size_t i = 0; i < dirty_.size(); ++i) {
    const std::size_t rank = dirty_[i];
    auto& q = queues_[rank];
    take_lazy(q);  // what it owes rides on this
    if (flush_peer(rank, q)) wrote = true;
    if (!q.empty()) dirty_[keep++] = rank;
  }
  dirty_.resize(keep);
  if (wrote) ++stats_.flushes;
  return wrote;
}

void Sst::set_barrier(std::uint64_t value) {
  const std::size_t off = layout_.control(my_rank_);
  store<std::uint64_t>(off + offsetof(ControlRow, barrier), value);
  for (std::size_t r = 0; r < rows(); ++r)
    push_guard(r, off, sizeof(ControlRow));
}

void Sst::suspect(std::size_t rank, transport::SuspicionReason why, std::string detail) {
  if (rank >= suspected_.size() || rank == my_rank_ || suspected_[rank]) return;
  suspected_[rank] = 1;
  forget_lazy(queues_[rank]);
  queues_[rank] = PeerQueue{};
  const std::size_t off = layout_.control(my_rank_);
  store_set(off + offsetof(ControlRow, suspected),
            load_set(off + offsetof(ControlRow, suspected)).set(rank));
  for (std::size_t r = 0; r < rows(); ++r)
    push_guard(r, off, sizeof(ControlRow));
  if (on_suspicion_) on_suspicion_(SuspicionReport{rank, node_of(rank), why, std::move(detail)});
}

bool Sst::poll_events() {
  events_.clear();
  if (transport_->poll(events_) == 0) return false;
  for (auto& e : events_) {
    if (auto* s = std::get_if<transport::Suspicion>(&e)) {
      if (auto r = group_.rank_of(s->peer)) suspect(*r, s->reason, s->detail);
    } else if (auto* c = std::get_if<transport::PeerConnected>(&e)) {
      const auto r = group_.rank_of(c->peer);
      if (r && connecting(*r) && !suspected_[*r]) {
        connecting_[*r] = 0;
        heartbeat_seen_at_[*r] = clock_();
        push_row(*r);
        if (on_connected_) on_connected_(*r);
      }
    }
    if (on_event_) on_event_(e);
  }
  return true;
}

bool Sst::tick() {
  const auto interval = std::chrono::nanoseconds(group_.knobs.heartbeat_interval);
  if (interval.count() == 0) return false;  // the hook runs after each step (after_step)
  const auto now = clock_();
  bool did = false;
  if (lazy_due_ && now >= *lazy_due_) release_lazy();
  if (now >= next_heartbeat_) {
    const std::size_t off = layout_.control(my_rank_);
    store<std::uint64_t>(off, load<std::uint64_t>(off) + 1);
    for (std::size_t r = 0; r < rows(); ++r) {
      if (r == my_rank_ || suspected_[r] || connecting(r)) continue;
      const auto st = transport_->write(node_of(r), region_, off, region_, off, sizeof(ControlRow));
      if (st == transport::Status::ok) ++stats_.heartbeat_writes;
    }
    next_heartbeat_ = now + interval;
    // Not work that calls for more: an idle loop that sent its heartbeat goes back to
    // sleep instead of spinning idle_spin (and waking in short slices) after each one.
    hook_due_.reset();
    if (tick_hook_ && tick_hook_(now)) did = true;
  } else if (hook_due_ && now >= *hook_due_) {
    hook_due_.reset();
    if (tick_hook_ && tick_hook_(now)) did = true;
  }
  const auto timeout = std::chrono::nanoseconds(group_.knobs.suspicion_timeout);
  for (std::size_t r = 0; r < rows(); ++r) {
    if (r == my_rank_ || suspected_[r]) continue;
    const auto hb = heartbeat(r);
    if (hb != last_heartbeat_[r]) {
      last_heartbeat_[r] = hb;
      heartbeat_seen_at_[r] = now;
    } else if (now - heartbeat_seen_at_[r] > timeout) {
      const auto ms = std::to_string((now - heartbeat_seen_at_[r]).count() / 1'000'000);
      if (connecting(r)) {
        suspect(r, transport::SuspicionReason::connect_timeout,
                "node " + std::to_string(node_of(r)) + " joined view " +
                    std::to_string(group_.epoch) + " but did not connect within " + ms + " ms");
      } else {
        suspect(r, transport::SuspicionReason::heartbeat_timeout,
                "no heartbeat from node " + std::to_string(node_of(r)) + " for " + ms + " ms");
      }
      did = true;
    }
  }
  return did;
}

bool Sst::after_step() {
  if (group_.knobs.heartbeat_interval.count() != 0) return false;
  // No timers run here (the simulator): what is owed goes with this step's flush.
  release_lazy();
  if (!tick_hook_) return false;
  return tick_hook_(clock_());
}

std::optional<std::chrono::nanoseconds> Sst::tick_due_in() const {
  const auto interval = std::chrono::nanoseconds(group_.knobs.heartbeat_interval);
  if (interval.count() == 0) return std::nullopt;
  const auto timeout = std::chrono::nanoseconds(group_.knobs.suspicion_timeout);
  auto due = next_heartbeat_;
  if (hook_due_) due = std::min(due, *hook_due_);
  if (lazy_due_) due = std::min(due, *lazy_due_);
  for (std::size_t r = 0; r < rows(); ++r)
    if (r != my_rank_ && !suspected_[r]) due = std::min(due, heartbeat_seen_at_[r] + timeout);
  return std::max(std::chrono::nanoseconds(0), due - clock_());
}

}  // namespace spindle::sst
