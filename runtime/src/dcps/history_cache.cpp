// HistoryCache: instance bookkeeping, the insert rules, read/take with SampleInfo ranks,
// lifespan and autopurge.
#include "dcps/history_cache.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <utility>

#include <dds/sub/SampleInfo.hpp>

namespace spindle::dcps {

using dds::sub::status::DataState;
using dds::sub::status::InstanceState;
using dds::sub::status::SampleState;
using dds::sub::status::ViewState;
using detail::MutexLock;

namespace {

constexpr std::int64_t kNoTime = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kUnlimitedSize = std::numeric_limits<std::size_t>::max();

// Instance states as stored; the InstanceState bit of state s is 1 << s.
constexpr std::uint8_t kAlive = 0;
constexpr std::uint8_t kDisposed = 1;
constexpr std::uint8_t kNoWriters = 2;

std::int64_t to_ns(const dds::core::Time& t) {
  return t.is_valid() ? t.to_nanosecs() : kNoTime;
}

dds::core::Time to_time(std::int64_t ns) {
  return ns == kNoTime ? dds::core::Time::invalid() : dds::core::Time::from_nanosecs(ns);
}

// t + d, saturating at kNever; an unknown t never expires.
std::int64_t add_saturating(std::int64_t t, std::int64_t d) {
  if (t == kNoTime || d == kNever || t > kNever - d) return kNever;
  return t + d;
}

std::int64_t duration_ns(const dds::core::Duration& d) {
  return d.is_infinite() ? kNever : d.to_nanosecs();
}

std::size_t limit_of(std::int32_t v) {
  return v < 0 ? kUnlimitedSize : static_cast<std::size_t>(v);
}

bool same_key(const KeyHash& a, const KeyHash& b) {
  std::uint64_t a0 = 0;
  std::uint64_t a1 = 0;
  std::uint64_t b0 = 0;
  std::uint64_t b1 = 0;
  std::memcpy(&a0, a.data(), 8);
  std::memcpy(&a1, a.data() + 8, 8);
  std::memcpy(&b0, b.data(), 8);
  std::memcpy(&b1, b.data() + 8, 8);
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

std::size_t bucket(bool read, bool view_new, std::uint8_t state) {
  return (read ? 6u : 0u) + (view_new ? 0u : 3u) + state;
}

// Whether the samples of bucket b are selected by `mask`.
bool bucket_matches(std::size_t b, const DataState& mask) {
  const bool read = b >= 6;
  const bool view_new = (b % 6) < 3;
  const auto state = static_cast<std::uint8_t>(b % 3);
  return mask.sample_state().test(read ? 0 : 1) && mask.view_state().test(view_new ? 0 : 1) &&
         mask.instance_state().test(state);
}

}  // namespace

// ------------------------------------------------------------------------ storage types

struct HistoryCache::Entry {
  std::shared_ptr<const void> data;
  std::int64_t source_ns = kNoTime;
  std::int64_t reception_ns = kNoTime;
  std::int64_t expiry_ns = kNever;
  std::uint64_t writer = 0;
  std::uint64_t seq = 0;  // insertion number (ordered access)
  std::int32_t disposed_gen = 0;
  std::int32_t no_writers_gen = 0;
  bool read = false;
  bool doomed = false;  // taken or expired: removed right after
};

namespace {

// A ring of entries, oldest first; capacity is a power of two.
template <class E>
class SampleRing {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  E& operator[](std::size_t i) noexcept { return buf_[(head_ + i) & (buf_.size() - 1)]; }
  const E& operator[](std::size_t i) const noexcept {
    return buf_[(head_ + i) & (buf_.size() - 1)];
  }
  E& front() noexcept { return buf_[head_]; }

  void push_back(E&& e) {
    if (size_ == buf_.size()) grow();
    (*this)[size_] = std::move(e);
    ++size_;
  }
  void pop_front() noexcept {
    buf_[head_] = E{};
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
  }
  // Removes the entries `drop` selects, keeping the order of the rest; returns how many.
  template <class Pred>
  std::size_t remove_if(Pred drop) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      if (drop((*this)[i])) continue;
      if (kept != i) (*this)[kept] = std::move((*this)[i]);
      ++kept;
    }
    const std::size_t removed = size_ - kept;
    for (std::size_t i = kept; i < size_; ++i)
      (*this)[i] = E{};
    size_ = kept;
    return removed;
  }
  void clear() noexcept {
    for (std::size_t i = 0; i < size_; ++i)
      (*this)[i] = E{};
    head_ = 0;
    size_ = 0;
  }

 private:
  void grow() {
    std::vector<E> bigger(buf_.empty() ? 1 : buf_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i)
      bigger[i] = std::move((*this)[i]);
    buf_.swap(bigger);
    head_ = 0;
  }
  std::vector<E> buf_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

struct WriterRegistration {
  std::uint64_t writer;
  std::int32_t strength;
  // The writer's number of the last change of this instance applied here (Change::writer_seq;
  // 0: unnumbered): a change numbered at or below it is one this cache already has.
  std::uint64_t last_seq = 0;
};

}  // namespace

struct HistoryCache::Instance {
  KeyHash key{};
  dds::core::InstanceHandle handle;
  std::shared_ptr<const void> key_data;
  SampleRing<Entry> samples;
  std::uint8_t state = kAlive;
  bool view_new = true;
  std::int32_t disposed_gen = 0;
  std::int32_t no_writers_gen = 0;
  // The invalid sample: present when a state change to not-alive found no unread sample
  // to carry it. Its generation counts are the instance's (a data sample, the only thing
  // that changes them, removes it).
  bool invalid = false;
  bool invalid_read = false;
  std::int64_t invalid_source_ns = kNoTime;
  std::int64_t invalid_reception_ns = kNoTime;
  std::uint64_t invalid_writer = 0;
  std::uint64_t invalid_seq = 0;
  // Samples per sample state, the invalid one included.
  std::size_t read_count = 0;
  std::size_t not_read_count = 0;
  std::vector<WriterRegistration> writers;
  // The place in the total order of the latest change applied (Change::pos_*; -1: none).
  std::uint64_t pos_epoch = 0;
  std::uint32_t pos_subgroup = 0;
  std::int64_t pos_order = -1;
  // Whether the latest change applied comes after `c` in the total order (a view's messages
  // all come before the next view's; within a view, only one subgroup's compare).
  [[nodiscard]] bool after(const Change& c) const noexcept {
    if (c.pos_order < 0 || pos_order < 0) return false;
    if (pos_epoch != c.pos_epoch) return pos_epoch > c.pos_epoch;
    return pos_subgroup == c.pos_subgroup && pos_order > c.pos_order;
  }
  void note_position(const Change& c) noexcept {
    if (c.pos_order < 0 || after(c)) return;
    pos_epoch = c.pos_epoch;
    pos_subgroup = c.pos_subgroup;
    pos_order = c.pos_order;
  }
  std::uint64_t owner = 0;  // EXCLUSIVE ownership; 0: none
  std::int32_t owner_strength = 0;
  std::int64_t last_source_ns = kNoTime;      // DESTINATION_ORDER
  std::int64_t last_accepted_ns = kNoTime;    // TIME_BASED_FILTER
  std::int64_t not_alive_since_ns = kNoTime;  // READER_DATA_LIFECYCLE; kNoTime when done
  // emit_ordered's scratch: this instance's picks in the collection, those pushed so far,
  // and the generation of its last one.
  std::size_t ordered_n = 0;
  std::size_t ordered_k = 0;
  std::int32_t ordered_mrsic = 0;

  [[nodiscard]] bool has_unread_valid() const noexcept {
    return not_read_count > ((invalid && !invalid_read) ? 1u : 0u);
  }
  [[nodiscard]] bool reclaimable() const noexcept {
    return samples.empty() && !invalid && state != kAlive && writers.empty();
  }
  [[nodiscard]] std::int32_t generation() const noexcept { return disposed_gen + no_writers_gen; }
  WriterRegistration* find_writer(std::uint64_t w) {
    for (auto& r : writers) {
      if (r.writer == w) return &r;
    }
    return nullptr;
  }
  void register_writer(std::uint64_t w, std::int32_t strength, std::uint64_t seq) {
    if (auto* r = find_writer(w)) {
      r->strength = strength;
      r->last_seq = std::max(r->last_seq, seq);
    } else {
      writers.push_back({w, strength, seq});
    }
  }
  // The strongest registered writer (ties: the lowest handle) becomes the owner.
  void elect_owner() {
    owner = 0;
    owner_strength = 0;
    for (const auto& r : writers) {
      if (owner == 0 || r.strength > owner_strength ||
          (r.strength == owner_strength && r.writer < owner)) {
        owner = r.writer;
        owner_strength = r.strength;
      }
    }
  }
};

std::size_t KeyHashHash::operator()(const KeyHash& k) const noexcept {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  std::memcpy(&a, k.data(), sizeof a);
  std::memcpy(&b, k.data() + sizeof a, sizeof b);
  const std::uint64_t h = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xbf58476d1ce4e5b9ull;
  return static_cast<std::size_t>(h ^ (h >> 31));
}

bool HistoryCache::KeyHashEqual::operator()(const KeyHash& a, const KeyHash& b) const noexcept {
  return same_key(a, b);
}

// ------------------------------------------------------------------------ construction

HistoryCache::HistoryCache(const HistoryCacheConfig& config, Clock clock,
                           std::shared_ptr<std::atomic<std::uint64_t>> sequence)
    : config_(config),
      clock_(std::move(clock)),
      per_instance_cap_(config.keep_all ? limit_of(config.max_samples_per_instance)
                                        : std::min(limit_of(config.depth < 1 ? 1 : config.depth),
                                                   limit_of(config.max_samples_per_instance))),
      max_samples_(limit_of(config.max_samples)),
      max_instances_(limit_of(config.max_instances)),
      lifespan_ns_(duration_ns(config.lifespan)),
      separation_ns_(config.minimum_separation.is_infinite()
                         ? kNever
                         : config.minimum_separation.to_nanosecs()),
      next_expiry_ns_(kNever),
      sequence_(sequence ? std::move(sequence) : std::make_shared<std::atomic<std::uint64_t>>(0)) {}

HistoryCache::~HistoryCache() = default;

// ------------------------------------------------------------------------ bookkeeping

void HistoryCache::count_sample(Instance& i, bool read, bool add) {
  std::size_t& per_instance = read ? i.read_count : i.not_read_count;
  std::size_t& global = counts_[bucket(read, i.view_new, i.state)];
  if (add) {
    ++per_instance;
    ++global;
  } else {
    --per_instance;
    --global;
  }
}

void HistoryCache::uncount_instance(const Instance& i) {
  counts_[bucket(false, i.view_new, i.state)] -= i.not_read_count;
  counts_[bucket(true, i.view_new, i.state)] -= i.read_count;
}

void HistoryCache::recount_instance(const Instance& i) {
  counts_[bucket(false, i.view_new, i.state)] += i.not_read_count;
  counts_[bucket(true, i.view_new, i.state)] += i.read_count;
}

void HistoryCache::set_state(Instance& i, std::uint8_t state, bool view_new) {
  if (i.state == state && i.view_new == view_new) return;
  uncount_instance(i);
  i.state = state;
  i.view_new = view_new;
  recount_instance(i);
}

void HistoryCache::note_not_alive(Instance& i, std::int64_t since_ns) {
  i.not_alive_since_ns = since_ns;
  const auto delay = duration_ns(i.state == kDisposed ? config_.autopurge_disposed_samples_delay
                                                      : config_.autopurge_nowriter_samples_delay);
  next_expiry_ns_ = std::min(next_expiry_ns_, add_saturating(since_ns, delay));
}

// A state change to not-alive must be visible to the application even when it has read
// or taken every sample: then an invalid sample carries it (DCPS §2.2.2.5.1.x "valid
// data"). With an unread data sample pending, that sample's SampleInfo shows the state.
void HistoryCache::add_invalid(Instance& i, const Change& c) {
  if (i.has_unread_valid()) return;
  if (i.invalid) {
    if (i.invalid_read) {
      count_sample(i, true, false);
      count_sample(i, false, true);
    }
  } else {
    count_sample(i, false, true);
  }
  i.invalid = true;
  i.invalid_read = false;
  i.invalid_source_ns = to_ns(c.source_timestamp);
  i.invalid_reception_ns = to_ns(c.reception_timestamp);
  i.invalid_writer = c.writer.value();
  i.invalid_seq = sequence_->fetch_add(1, std::memory_order_relaxed) + 1;
}

void HistoryCache::drop_invalid(Instance& i) {
  if (!i.invalid) return;
  count_sample(i, i.invalid_read, false);
  i.invalid = false;
}

void HistoryCache::pop_oldest(Instance& i) {
  count_sample(i, i.samples.front().read, false);
  i.samples.pop_front();
  --total_samples_;
}

void HistoryCache::purge_samples(Instance& i) {
  for (std::size_t k = 0; k < i.samples.size(); ++k)
    count_sample(i, i.samples[k].read, false);
  total_samples_ -= i.samples.size();
  i.samples.clear();
  drop_invalid(i);
}

HistoryCache::Instance& HistoryCache::create_instance(const KeyHash& key) {
  auto inst = std::make_unique<Instance>();
  inst->key = key;
  inst->handle = dds::core::InstanceHandle(next_handle_++);
  Instance& ref = *inst;
  instances_.push_back(std::move(inst));  // handles only grow: stays sorted
  by_key_.emplace(key, &ref);
  return ref;
}

HistoryCache::Instance* HistoryCache::find_key(const KeyHash& key) {
  if (last_ != nullptr && same_key(last_->key, key)) return last_;
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

const HistoryCache::Instance* HistoryCache::find_key(const KeyHash& key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? nullptr : it->second;
}

std::size_t HistoryCache::lower_index(std::uint64_t handle) const {
  auto it = std::lower_bound(
      instances_.begin(), instances_.end(), handle,
      [](const std::unique_ptr<Instance>& i, std::uint64_t h) { return i->handle.value() < h; });
  return static_cast<std::size_t>(it - instances_.begin());
}

const HistoryCache::Instance* HistoryCache::find_handle(dds::core::InstanceHandle h) const {
  const std::size_t idx = lower_index(h.value());
  if (idx == instances_.size() || instances_[idx]->handle != h) return nullptr;
  return instances_[idx].get();
}

void HistoryCache::remove_reclaimable() {
  if (!reclaim_pending_) return;
  reclaim_pending_ = false;
  std::size_t kept = 0;
  for (std::size_t k = 0; k < instances_.size(); ++k) {
    Instance* i = instances_[k].get();
    if (i->reclaimable()) {
      by_key_.erase(i->key);
      if (last_ == i) last_ = nullptr;
      instances_[k].reset();
      continue;
    }
    if (kept != k) instances_[kept] = std::move(instances_[k]);
    ++kept;
  }
  instances_.resize(kept);
}

// ------------------------------------------------------------------------ insert

// The checks every update of an existing instance passes: ownership, then destination
// order, then (data only) the time-based filter.
bool HistoryCache::admit(Instance& i, const Change& c, InsertResult& r) {
  const std::uint64_t w = c.writer.value();
  if (config_.exclusive_ownership) {
    const bool stronger = c.ownership_strength > i.owner_strength ||
                          (c.ownership_strength == i.owner_strength && w < i.owner);
    if (i.owner != 0 && i.owner != w && !stronger) {
      r.outcome = InsertOutcome::not_owner;
      return false;
    }
    i.owner = w;
    i.owner_strength = c.ownership_strength;
  }
  const std::int64_t source = to_ns(c.source_timestamp);
  if (config_.by_source_timestamp && source != kNoTime && i.last_source_ns != kNoTime &&
      source < i.last_source_ns) {
    r.outcome = InsertOutcome::out_of_order;
    return false;
  }
  if (c.kind == ChangeKind::data && separation_ns_ > 0 && i.state == kAlive &&
      i.last_accepted_ns != kNoTime) {
    const std::int64_t t = source != kNoTime ? source : to_ns(c.reception_timestamp);
    if (t - i.last_accepted_ns < separation_ns_) {
      r.outcome = InsertOutcome::filtered;
      return false;
    }
  }
  return true;
}

// RESOURCE_LIMITS for one more data sample on `i` (null: a new instance, whose
// max_instances check the caller made). Sets
// r.replaced when KEEP_LAST will push the oldest out instead.
bool HistoryCache::check_limits(const Instance* i, InsertResult& r) const {
  const std::size_t have = i == nullptr ? 0 : i->samples.size();
  if (have >= per_instance_cap_ && !config_.keep_all && have > 0) {
    r.replaced = true;  // KEEP_LAST: the instance's count does not grow
    return true;
  } else if (have >= per_instance_cap_) {
    r.reject_reason =
        dds::core::status::SampleRejectedState::rejected_by_samples_per_instance_limit();
  } else if (total_samples_ >= max_samples_) {
    r.reject_reason = dds::core::status::SampleRejectedState::rejected_by_samples_limit();
  } else {
    return true;
  }
  r.outcome = InsertOutcome::rejected;
  return false;
}

// LIFESPAN: source timestamp (or, without one, reception) + the shorter lifespan.
std::int64_t HistoryCache::expiry_of(const Change& c) const {
  const std::int64_t lifespan =
      c.lifespan.is_infinite() ? lifespan_ns_ : std::min(lifespan_ns_, c.lifespan.to_nanosecs());
  const std::int64_t source = to_ns(c.source_timestamp);
  return add_saturating(source != kNoTime ? source : to_ns(c.reception_timestamp), lifespan);
}

void HistoryCache::insert_locked(Change& c, InsertResult& r) {
  r = InsertResult{};
  const std::int64_t now = to_ns(c.reception_timestamp);
  if (now != kNoTime && now >= next_expiry_ns_ && expire_locked(now)) remove_reclaimable();

  Instance* i = find_key(c.key);
  const bool created = i == nullptr;
  if (created) {
    if (c.kind == ChangeKind::unregister) return;  // nothing registered: ignored
    if (instances_.size() >= max_instances_) {
      r.outcome = InsertOutcome::rejected;
      r.reject_reason = dds::core::status::SampleRejectedState::rejected_by_instances_limit();
      return;
    }
  } else {
    r.instance = i->handle;
    // A change this cache already applied (a repair that the stream brought first, or the
    // stream's copy of one a repair brought): nothing to do.
    if (c.writer_seq != 0) {
      if (const auto* w = i->find_writer(c.writer.value()); w && c.writer_seq <= w->last_seq) {
        r.outcome = InsertOutcome::duplicate;
        return;
      }
    }
    if (i->after(c)) {
      r.outcome = InsertOutcome::superseded;
      return;
    }
    if (c.kind == ChangeKind::unregister) {
      const Unregistered u = apply_unregister(*i, c.writer.value(), now);
      if (u == Unregistered::unrelated) return;
      i->note_position(c);
      r.outcome = InsertOutcome::accepted;
      r.data_available = u == Unregistered::now_no_writers;
      if (i->reclaimable()) {
        reclaim_pending_ = true;
        remove_reclaimable();
      }
      return;
    }
    if (!admit(*i, c, r)) return;
  }
  const std::int64_t expiry = c.kind == ChangeKind::data ? expiry_of(c) : kNever;
  if (now != kNoTime && expiry <= now) {
    r.outcome = InsertOutcome::expired;  // its lifespan ran out on the way
    return;
  }
  if (c.kind == ChangeKind::data && !check_limits(i, r)) return;
  if (created) {
    i = &create_instance(c.key);
    r.instance = i->handle;
    if (config_.exclusive_ownership) {
      i->owner = c.writer.value();
      i->owner_strength = c.ownership_strength;
    }
  }
  last_ = i;
  i->note_position(c);
  if (!i->key_data && c.data) i->key_data = c.data;
  r.outcome = InsertOutcome::accepted;
  if (c.kind == ChangeKind::data) {
    apply_data(*i, c, expiry, r);
  } else {
    apply_dispose(*i, c, created, r);
  }
}

void HistoryCache::apply_data(Instance& i, Change& c, std::int64_t expiry_ns, InsertResult& r) {
  i.register_writer(c.writer.value(), c.ownership_strength, c.writer_seq);
  if (i.state != kAlive) {
    // Back to life: a new generation, and the instance is new to the application again.
    if (i.state == kDisposed) {
      ++i.disposed_gen;
    } else {
      ++i.no_writers_gen;
    }
    set_state(i, kAlive, true);
    i.not_alive_since_ns = kNoTime;
  }
  drop_invalid(i);
  if (r.replaced) pop_oldest(i);

  Entry e;
  e.source_ns = to_ns(c.source_timestamp);
  e.reception_ns = to_ns(c.reception_timestamp);
  e.expiry_ns = expiry_ns;
  e.writer = c.writer.value();
  e.seq = c.order != 0 ? c.order : sequence_->fetch_add(1, std::memory_order_relaxed) + 1;
  e.disposed_gen = i.disposed_gen;
  e.no_writers_gen = i.no_writers_gen;
  e.data = std::move(c.data);
  next_expiry_ns_ = std::min(next_expiry_ns_, e.expiry_ns);
  if (e.source_ns != kNoTime) i.last_source_ns = std::max(i.last_source_ns, e.source_ns);
  i.last_accepted_ns = e.source_ns != kNoTime ? e.source_ns : e.reception_ns;
  i.samples.push_back(std::move(e));
  count_sample(i, false, true);
  ++total_samples_;
  r.data_available = true;
}

void HistoryCache::apply_dispose(Instance& i, const Change& c, bool created, InsertResult& r) {
  i.register_writer(c.writer.value(), c.ownership_strength, c.writer_seq);
  const std::int64_t source = to_ns(c.source_timestamp);
  if (source != kNoTime) i.last_source_ns = std::max(i.last_source_ns, source);
  if (i.state == kDisposed && !created) return;  // applied; nothing new to see
  set_state(i, kDisposed, i.view_new);
  note_not_alive(i, to_ns(c.reception_timestamp));
  add_invalid(i, c);
  r.data_available = true;
}

HistoryCache::Unregistered HistoryCache::apply_unregister(Instance& i, std::uint64_t writer,
                                                          std::int64_t now_ns) {
  const bool was_owner = i.owner == writer && writer != 0;
  const auto before = i.writers.size();
  std::erase_if(i.writers, [writer](const WriterRegistration& r) { return r.writer == writer; });
  const bool was_registered = i.writers.size() != before;
  if (!was_registered && !was_owner) return Unregistered::unrelated;
  if (was_owner) i.elect_owner();
  if (!i.writers.empty() || i.state != kAlive) return Unregistered::applied;
  set_state(i, kNoWriters, i.view_new);
  note_not_alive(i, now_ns);
  Change c;
  c.writer = dds::core::InstanceHandle(writer);
  c.reception_timestamp = to_time(now_ns);
  add_invalid(i, c);
  return Unregistered::now_no_writers;
}

void HistoryCache::forget_places() {
  detail::MutexLock lock(mu_);
  for (auto& i : instances_)
    i->pos_order = -1;
}

InsertResult HistoryCache::insert(Change&& change) {
  InsertResult r;
  {
    MutexLock lock(mu_);
    insert_locked(change, r);
  }
  if (r.data_available) observers_.notify();
  return r;
}

void HistoryCache::insert_batch(std::span<Change> changes, std::span<InsertResult> results) {
  if (results.size() < changes.size()) {
    throw std::invalid_argument("HistoryCache::insert_batch: fewer results than changes");
  }
  bool notify = false;
  {
    MutexLock lock(mu_);
    for (std::size_t k = 0; k < changes.size(); ++k) {
      insert_locked(changes[k], results[k]);
      notify = notify || results[k].data_available;
    }
  }
  if (notify) observers_.notify();
}

std::size_t HistoryCache::writer_lost(dds::core::InstanceHandle writer,
                                      const dds::core::Time& now) {
  std::size_t changed = 0;
  {
    MutexLock lock(mu_);
    const std::int64_t now_ns = to_ns(now);
    for (auto& i : instances_) {
      if (apply_unregister(*i, writer.value(), now_ns) == Unregistered::now_no_writers) ++changed;
      if (i->reclaimable()) reclaim_pending_ = true;
    }
    remove_reclaimable();
  }
  if (changed > 0) observers_.notify();
  return changed;
}

// ------------------------------------------------------------------------ read / take

ReadStatus HistoryCache::read(const ReadSelection& selection, detail::SampleSink& sink) {
  return read_or_take(selection, sink, false);
}

ReadStatus HistoryCache::take(const ReadSelection& selection, detail::SampleSink& sink) {
  return read_or_take(selection, sink, true);
}

ReadStatus HistoryCache::read_or_take(const ReadSelection& sel, detail::SampleSink& sink,
                                      bool take) {
  bool emitted = false;
  {
    MutexLock lock(mu_);
    if (next_expiry_ns_ != kNever && expire_locked(to_ns(clock_()))) remove_reclaimable();
    std::size_t first = 0;
    std::size_t last = instances_.size();
    if (sel.scope == ReadSelection::Scope::instance) {
      first = lower_index(sel.instance.value());
      if (first == last || instances_[first]->handle != sel.instance) {
        return ReadStatus::bad_instance;
      }
      last = first + 1;
    } else if (sel.scope == ReadSelection::Scope::next_instance) {
      first = sel.instance.is_nil() ? 0 : lower_index(sel.instance.value() + 1);
    }
    std::size_t limit = limit_of(sel.max_samples);
    const std::size_t candidates = count_matching_locked(sel.state);
    if (limit == 0 || candidates == 0) return ReadStatus::ok;
    sink.reserve(std::min(limit, candidates));

    const auto view_mask = sel.state.view_state();
    const auto instance_mask = sel.state.instance_state();
    if (config_.ordered && sel.scope == ReadSelection::Scope::all) {
      emitted = emit_ordered(sel, limit, sink, take);
    } else {
      for (std::size_t idx = first; idx < last && limit > 0; ++idx) {
        Instance& i = *instances_[idx];
        if (!view_mask.test(i.view_new ? 0 : 1) || !instance_mask.test(i.state)) continue;
        const std::size_t n = emit_instance(i, sel, limit, sink, take);
        if (n == 0) continue;
        emitted = true;
        limit -= n;
        if (i.reclaimable()) reclaim_pending_ = true;
        if (sel.scope == ReadSelection::Scope::next_instance) break;
      }
    }
    remove_reclaimable();
  }
  // Reading moves samples to READ and instances to NOT_NEW: a condition on those states
  // may have become true.
  if (emitted) observers_.notify();
  return ReadStatus::ok;
}

void HistoryCache::pick_instance(const Instance& i, const ReadSelection& sel, std::size_t limit) {
  const bool want_read = sel.state.sample_state().test(0);
  const bool want_not_read = sel.state.sample_state().test(1);
  picks_.clear();
  for (std::size_t k = 0; k < i.samples.size() && picks_.size() < limit; ++k) {
    const Entry& e = i.samples[k];
    if (!(e.read ? want_read : want_not_read)) continue;
    if (sel.content && !sel.content(e.data.get())) continue;
    picks_.push_back(k);
  }
  // An invalid sample carries no data for a query to look at.
  if (i.invalid && !sel.content && picks_.size() < limit &&
      (i.invalid_read ? want_read : want_not_read)) {
    picks_.push_back(i.samples.size());
  }
}

std::int32_t HistoryCache::generation_of(const Instance& i, std::size_t pick) const {
  if (pick == i.samples.size()) return i.generation();
  return i.samples[pick].disposed_gen + i.samples[pick].no_writers_gen;
}

// Ranks (DCPS §2.2.2.5.5): against the most recent sample of the instance in this
// collection (MRSIC) and the most recent the reader holds (the instance's generation).
void HistoryCache::push_pick(const Instance& i, std::size_t pick, std::size_t k, std::size_t n,
                             std::int32_t mrsic, detail::SampleSink& sink) const {
  const ViewState view(i.view_new ? ViewState::kNewView : ViewState::kNotNewView);
  const InstanceState istate(1u << i.state);
  const auto sample_rank = static_cast<std::int32_t>(n - 1 - k);
  const std::int32_t gen = generation_of(i, pick);
  const dds::sub::Rank rank(sample_rank, mrsic - gen, i.generation() - gen);
  if (pick == i.samples.size()) {
    const DataState state(SampleState(i.invalid_read ? SampleState::kRead : SampleState::kNotRead),
                          view, istate);
    sink.push(std::shared_ptr<const void>(i.key_data),
              dds::sub::SampleInfo(to_time(i.invalid_source_ns), to_time(i.invalid_reception_ns),
                                   state, {i.disposed_gen, i.no_writers_gen}, rank, false, i.handle,
                                   dds::core::InstanceHandle(i.invalid_writer)));
  } else {
    const Entry& e = i.samples[pick];
    const DataState state(SampleState(e.read ? SampleState::kRead : SampleState::kNotRead), view,
                          istate);
    sink.push(std::shared_ptr<const void>(e.data),
              dds::sub::SampleInfo(to_time(e.source_ns), to_time(e.reception_ns), state,
                                   {e.disposed_gen, e.no_writers_gen}, rank, true, i.handle,
                                   dds::core::InstanceHandle(e.writer)));
  }
}

std::size_t HistoryCache::emit_instance(Instance& i, const ReadSelection& sel, std::size_t limit,
                                        detail::SampleSink& sink, bool take) {
  pick_instance(i, sel, limit);
  const std::size_t n = picks_.size();
  if (n == 0) return 0;
  const std::int32_t mrsic = generation_of(i, picks_.back());
  for (std::size_t k = 0; k < n; ++k)
    push_pick(i, picks_[k], k, n, mrsic, sink);
  // Only now change the cache, so that a sink that throws leaves it as it was.
  settle_picks(i, take);
  return n;
}

// Ordered access: every instance's selected samples, merged by insertion number (each
// instance's own picks are already in that order), cut at `limit`; ranks count within the
// collection as for grouped access.
bool HistoryCache::emit_ordered(const ReadSelection& sel, std::size_t limit,
                                detail::SampleSink& sink, bool take) {
  const auto view_mask = sel.state.view_state();
  const auto instance_mask = sel.state.instance_state();
  ordered_picks_.clear();
  for (auto& ip : instances_) {
    Instance& i = *ip;
    i.ordered_n = 0;
    i.ordered_k = 0;
    if (!view_mask.test(i.view_new ? 0 : 1) || !instance_mask.test(i.state)) continue;
    pick_instance(i, sel, limit);
    for (const std::size_t pick : picks_) {
      const std::uint64_t seq = pick == i.samples.size() ? i.invalid_seq : i.samples[pick].seq;
      ordered_picks_.push_back({seq, &i, pick});
    }
  }
  if (ordered_picks_.empty()) return false;
  std::sort(ordered_picks_.begin(), ordered_picks_.end(),
            [](const OrderedPick& a, const OrderedPick& b) { return a.seq < b.seq; });
  if (ordered_picks_.size() > limit) ordered_picks_.resize(limit);
  for (const OrderedPick& p : ordered_picks_) {
    ++p.instance->ordered_n;
    p.instance->ordered_mrsic = generation_of(*p.instance, p.index);
  }
  for (const OrderedPick& p : ordered_picks_) {
    Instance& i = *p.instance;
    push_pick(i, p.index, i.ordered_k++, i.ordered_n, i.ordered_mrsic, sink);
  }
  // Only now change the cache, instance by instance: grouped by instance, each instance's
  // picks keep their (ascending) order.
  std::stable_sort(ordered_picks_.begin(), ordered_picks_.end(),
                   [](const OrderedPick& a, const OrderedPick& b) {
                     return std::less<>{}(a.instance, b.instance);
                   });
  for (std::size_t k = 0; k < ordered_picks_.size();) {
    Instance& i = *ordered_picks_[k].instance;
    picks_.clear();
    for (; k < ordered_picks_.size() && ordered_picks_[k].instance == &i; ++k)
      picks_.push_back(ordered_picks_[k].index);
    settle_picks(i, take);
    if (i.reclaimable()) reclaim_pending_ = true;
  }
  return true;
}

void HistoryCache::settle_picks(Instance& i, bool take) {
  const std::size_t n = picks_.size();
  const std::size_t invalid_index = i.samples.size();
  const bool took_invalid = picks_.back() == invalid_index;
  if (take && n == i.samples.size() + (i.invalid ? 1u : 0u)) {
    // Everything: the common case of take() — no compaction needed.
    uncount_instance(i);
    i.read_count = 0;
    i.not_read_count = 0;
    total_samples_ -= i.samples.size();
    i.samples.clear();
    i.invalid = false;
  } else if (take) {
    for (std::size_t k = 0; k < n; ++k) {
      if (picks_[k] == invalid_index) continue;
      Entry& e = i.samples[picks_[k]];
      e.doomed = true;
      count_sample(i, e.read, false);
    }
    total_samples_ -= i.samples.remove_if([](const Entry& e) { return e.doomed; });
    if (took_invalid) drop_invalid(i);
  } else {
    for (std::size_t k = 0; k < n; ++k) {
      if (picks_[k] == invalid_index) continue;
      Entry& e = i.samples[picks_[k]];
      if (e.read) continue;
      count_sample(i, false, false);
      e.read = true;
      count_sample(i, true, true);
    }
    if (took_invalid && !i.invalid_read) {
      count_sample(i, false, false);
      i.invalid_read = true;
      count_sample(i, true, true);
    }
  }
  set_state(i, i.state, false);
}

// ------------------------------------------------------------------------ expiry

bool HistoryCache::expire_locked(std::int64_t now_ns) {
  if (now_ns < next_expiry_ns_) return false;
  bool changed = false;
  std::int64_t next = kNever;
  for (auto& ip : instances_) {
    Instance& i = *ip;
    bool expired = false;
    for (std::size_t k = 0; k < i.samples.size(); ++k) {
      Entry& e = i.samples[k];
      if (e.expiry_ns > now_ns) {
        next = std::min(next, e.expiry_ns);
        continue;
      }
      e.doomed = true;
      expired = true;
      count_sample(i, e.read, false);
    }
    if (expired) {
      total_samples_ -= i.samples.remove_if([](const Entry& e) { return e.doomed; });
      changed = true;
    }
    if (i.state != kAlive && i.not_alive_since_ns != kNoTime) {
      const auto delay =
          duration_ns(i.state == kDisposed ? config_.autopurge_disposed_samples_delay
                                           : config_.autopurge_nowriter_samples_delay);
      const std::int64_t deadline = add_saturating(i.not_alive_since_ns, delay);
      if (now_ns >= deadline) {
        changed = changed || !i.samples.empty() || i.invalid;
        purge_samples(i);
        i.not_alive_since_ns = kNoTime;
        // NO_WRITERS: the instance goes too. DISPOSED: it goes once no writer has it.
        if (i.state == kNoWriters) i.writers.clear();
      } else {
        next = std::min(next, deadline);
      }
    }
    if (i.reclaimable()) reclaim_pending_ = true;
  }
  next_expiry_ns_ = next;
  return changed || reclaim_pending_;
}

bool HistoryCache::expire(const dds::core::Time& now) {
  MutexLock lock(mu_);
  const bool changed = expire_locked(to_ns(now));
  remove_reclaimable();
  return changed;
}

dds::core::Time HistoryCache::next_expiry() const {
  MutexLock lock(mu_);
  return next_expiry_ns_ == kNever ? dds::core::Time::invalid() : to_time(next_expiry_ns_);
}

// ------------------------------------------------------------------------ queries

dds::core::InstanceHandle HistoryCache::lookup_instance(const KeyHash& key) const {
  MutexLock lock(mu_);
  const Instance* i = find_key(key);
  return i == nullptr ? dds::core::InstanceHandle::nil() : i->handle;
}

std::shared_ptr<const void> HistoryCache::instance_key_data(
    dds::core::InstanceHandle instance) const {
  MutexLock lock(mu_);
  const Instance* i = find_handle(instance);
  return i == nullptr ? nullptr : i->key_data;
}

std::size_t HistoryCache::count_matching_locked(const DataState& mask) const {
  std::size_t n = 0;
  for (std::size_t b = 0; b < kBuckets; ++b) {
    if (counts_[b] != 0 && bucket_matches(b, mask)) n += counts_[b];
  }
  return n;
}

bool HistoryCache::has_matching(const DataState& mask) const {
  MutexLock lock(mu_);
  return count_matching_locked(mask) != 0;
}

template <class F>
void HistoryCache::for_each_matching(const DataState& mask, F&& f) const {
  const bool want_read = mask.sample_state().test(0);
  const bool want_not_read = mask.sample_state().test(1);
  for (const auto& ip : instances_) {
    const Instance& i = *ip;
    if (!mask.view_state().test(i.view_new ? 0 : 1) || !mask.instance_state().test(i.state)) {
      continue;
    }
    for (std::size_t k = 0; k < i.samples.size(); ++k) {
      const Entry& e = i.samples[k];
      if ((e.read ? want_read : want_not_read) && !f(i, &e)) return;
    }
    if (i.invalid && (i.invalid_read ? want_read : want_not_read) && !f(i, nullptr)) return;
  }
}

bool HistoryCache::has_matching(const DataState& mask,
                                const std::function<bool(const void*)>& content) const {
  if (!content) return has_matching(mask);
  MutexLock lock(mu_);
  if (count_matching_locked(mask) == 0) return false;
  bool found = false;
  for_each_matching(mask, [&](const Instance&, const Entry* e) {
    found = e != nullptr && content(e->data.get());
    return !found;
  });
  return found;
}

std::size_t HistoryCache::count_matching(const DataState& mask) const {
  MutexLock lock(mu_);
  return count_matching_locked(mask);
}

std::size_t HistoryCache::instance_count() const {
  MutexLock lock(mu_);
  return instances_.size();
}

void HistoryCache::replace_data(const std::function<void(std::shared_ptr<const void>&)>& f) {
  MutexLock lock(mu_);
  for (auto& i : instances_) {
    if (!i) continue;
    f(i->key_data);
    for (std::size_t k = 0; k < i->samples.size(); ++k)
      f(i->samples[k].data);
  }
}

std::size_t HistoryCache::sample_count() const {
  MutexLock lock(mu_);
  return total_samples_;
}

std::vector<std::uint64_t> HistoryCache::sequence_of(const DataState& mask, std::size_t max) const {
  MutexLock lock(mu_);
  std::vector<std::uint64_t> out;
  for_each_matching(mask, [&](const Instance& i, const Entry* e) {
    out.push_back(e != nullptr ? e->seq : i.invalid_seq);
    return true;
  });
  std::sort(out.begin(), out.end());
  if (out.size() > max) out.resize(max);
  return out;
}

}  // namespace spindle::dcps
