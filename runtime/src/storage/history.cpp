// The retained history of one topic (see history.hpp).
#include "storage/history.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace spindle::storage {

using spindle::detail::MutexLock;

namespace {

// A limit as a count (kUnlimited: none).
std::uint64_t bound(std::int32_t limit) {
  return limit < 0 ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(limit);
}

}  // namespace

void History::add_writer(std::uint64_t guid, const WriterTerms& terms) {
  MutexLock lock(mu_);
  auto& w = writers_[guid];
  w.terms = terms;
  // Announced again after it was retired (this member halted and rejoined, and learnt it
  // anew): its messages are kept again.
  w.gone = false;
}

void History::retire(std::uint64_t guid) {
  MutexLock lock(mu_);
  auto it = writers_.find(guid);
  if (it == writers_.end() || it->second.gone) return;
  it->second.gone = true;
  if (it->second.terms.outlives_writer) return;
  // Data that lives with its writer goes with it: every entry it wrote, in any slot.
  for (auto s = slots_.begin(); s != slots_.end();) {
    auto& entries = s->second.entries;
    for (auto e = entries.begin(); e != entries.end();) {
      if (e->writer != guid) {
        ++e;
        continue;
      }
      order_.erase(e->seq);
      bytes_ -= e->message.size();
      e = entries.erase(e);  // middle erasure invalidates pointers: order_ is rebuilt below
    }
    s = entries.empty() ? slots_.erase(s) : std::next(s);
  }
  order_.clear();
  for (auto& [sk, slot] : slots_)
    for (auto& e : slot.entries)
      order_.emplace(e.seq, &e);
}

bool History::retain(std::uint64_t writer, const KeyHash& key, ChangeKind kind,
                     std::span<const std::byte> message, std::span<const std::byte> more) {
  MutexLock lock(mu_);
  const auto w = writers_.find(writer);
  // A writer's last messages may be delivered after its retirement (another subgroup):
  // history that outlives its writer keeps them, as members that delivered them before did.
  if (w == writers_.end() || (w->second.gone && !w->second.terms.outlives_writer)) return false;
  const auto terms = w->second.terms;
  auto& slot = slots_[SlotKey{terms.per_writer ? writer : 0, key}];
  // A slot is its data changes, then at most one dispose and one unregister: new data
  // revives the instance (its earlier lifecycle changes are history no late reader needs),
  // a lifecycle change replaces an earlier one of its kind. Depth counts data only.
  if (kind == ChangeKind::data) {
    if (!slot.entries.empty() && slot.entries.back().kind != ChangeKind::data)
      remove_if(slot, [](const Entry& x) { return x.kind != ChangeKind::data; });
  } else {
    remove_if(slot, [kind](const Entry& x) { return x.kind == kind; });
  }
  const auto depth = std::min(bound(terms.depth), bound(terms.max_samples_per_instance));
  Entry e;
  if (kind == ChangeKind::data && !slot.entries.empty() && data_count(slot) >= depth) {
    // A full instance: its oldest sample goes, and lends the new one its buffer.
    auto& oldest = slot.entries.front();
    bytes_ -= oldest.message.size();
    order_.erase(oldest.seq);
    e.message = std::move(oldest.message);
    slot.entries.pop_front();
    ++evicted_;
  }
  e.seq = next_seq_++;
  e.writer = writer;
  e.key = key;
  e.kind = kind;
  e.message.reserve(message.size() + more.size());
  e.message.assign(message.begin(), message.end());
  e.message.insert(e.message.end(), more.begin(), more.end());
  insert(slot, std::move(e));
  while (data_count(slot) > depth) {  // the oldest data change is the front
    drop_front(slot);
    ++evicted_;
  }
  enforce_limits(terms);
  return true;
}

std::size_t History::data_count(const Slot& slot) {
  // Lifecycle changes are at most the last two.
  std::size_t tail = 0;
  for (auto it = slot.entries.rbegin(); it != slot.entries.rend() && tail < 2; ++it) {
    if (it->kind == ChangeKind::data) break;
    ++tail;
  }
  return slot.entries.size() - tail;
}

void History::clear() {
  MutexLock lock(mu_);
  slots_.clear();
  order_.clear();
  bytes_ = 0;
}

void History::restore(Entry entry) {
  MutexLock lock(mu_);
  const SlotKey sk = slot_key(entry);
  next_seq_ = std::max(next_seq_, entry.seq + 1);
  insert(slots_[sk], std::move(entry));
}

History::SlotKey History::slot_key(const Entry& e) const {
  const auto w = writers_.find(e.writer);
  const bool per_writer = w == writers_.end() || w->second.terms.per_writer;
  return SlotKey{per_writer ? e.writer : 0, e.key};
}

void History::insert(Slot& slot, Entry e) {
  bytes_ += e.message.size();
  slot.last_seq = std::max(slot.last_seq, e.seq);
  // Entries arrive in seq order (delivery, or a transfer sent in order): an append.
  slot.entries.push_back(std::move(e));
  auto& back = slot.entries.back();
  order_[back.seq] = &back;
}

template <class Pred>
void History::remove_if(Slot& slot, Pred pred) {
  const auto before = slot.entries.size();
  for (auto it = slot.entries.begin(); it != slot.entries.end();) {
    if (!pred(*it)) {
      ++it;
      continue;
    }
    order_.erase(it->seq);
    bytes_ -= it->message.size();
    it = slot.entries.erase(it);
  }
  if (slot.entries.size() == before) return;
  for (auto& x : slot.entries)  // erasing inside a deque moves the others
    order_[x.seq] = &x;
}

void History::drop_front(Slot& slot) {
  auto& e = slot.entries.front();
  order_.erase(e.seq);
  bytes_ -= e.message.size();
  slot.entries.pop_front();
}

void History::enforce_limits(const WriterTerms& terms) {
  const auto max_samples = bound(terms.max_samples);
  while (order_.size() > max_samples) {
    const SlotKey sk = slot_key(*order_.begin()->second);
    auto s = slots_.find(sk);
    if (s == slots_.end() || s->second.entries.empty()) break;  // cannot happen: a slot holds it
    drop_front(s->second);
    ++evicted_;
    if (s->second.entries.empty()) slots_.erase(s);
  }
  const auto max_instances = bound(terms.max_instances);
  while (slots_.size() > max_instances) {
    // The instance updated longest ago goes whole.
    auto stalest = slots_.begin();
    for (auto s = slots_.begin(); s != slots_.end(); ++s)
      if (s->second.last_seq < stalest->second.last_seq) stalest = s;
    while (!stalest->second.entries.empty()) {
      drop_front(stalest->second);
      ++evicted_;
    }
    slots_.erase(stalest);
  }
}

std::vector<std::pair<std::uint64_t, bool>> History::writers() const {
  MutexLock lock(mu_);
  std::vector<std::pair<std::uint64_t, bool>> out;
  for (const auto& [g, w] : writers_)
    out.emplace_back(g, w.gone);
  return out;
}

bool History::knows(std::uint64_t writer) const {
  MutexLock lock(mu_);
  return writers_.contains(writer);
}

bool History::keeps(std::uint64_t writer) const {
  MutexLock lock(mu_);
  const auto it = writers_.find(writer);
  return it != writers_.end() && (!it->second.gone || it->second.terms.outlives_writer);
}

HistoryStats History::stats() const {
  MutexLock lock(mu_);
  return {order_.size(), slots_.size(), bytes_, evicted_};
}

}  // namespace spindle::storage
