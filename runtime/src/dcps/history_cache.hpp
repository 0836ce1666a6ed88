// spindle::dcps::HistoryCache: a DataReader's history — its instances, their samples and
// states — with the DCPS semantics of HISTORY, RESOURCE_LIMITS, DESTINATION_ORDER,
// OWNERSHIP, TIME_BASED_FILTER, LIFESPAN and READER_DATA_LIFECYCLE (DCPS §2.2.2.5,
// §2.2.3). docs/dev/dcps-reader-cache.md describes the semantics in prose.
//
// Untyped: a sample is a std::shared_ptr<const void> to the object the typed
// DataReader<T> deserialized once on delivery (made from a std::shared_ptr<const T>); a
// read hands the same object to every reader of it. Instances are found by their 16-byte
// DDS key hash (all zeros for an unkeyed topic: one instance).
//
// Threading: inserts come from the predicate thread (one batch per delivery upcall),
// reads/takes/lookups from application threads; every public member may be called from
// any thread. One lock, mu_, guards all state. It is a leaf: nothing is called with it
// held except the caller's SampleSink (which must not call back) and the clock. Read
// conditions are notified after mu_ is released (ConditionObservers, lock order in
// spindle/detail/condition_delegate.hpp); listeners are the caller's business: insert()
// returns what happened and the caller raises statuses and calls listeners, with no
// cache lock held.
//
// Layout of one instance (samples oldest first; the invalid sample, when present, is
// after them and carries only the instance's state change):
//
//   Instance ─ key hash, handle, state, view, generation counts, writers, owner
//     samples: SampleRing (power-of-two ring, grows by doubling, never shrinks)
//       ┌──────┬──────┬──────┬──────┐
//       │  e2  │  e3  │ free │  e1  │   head = 3, size = 3: logical order e1 e2 e3
//       └──────┴──────┴──────┴──────┘
//     invalid sample: a flag + its timestamps/writer, not an Entry
//
// Instances are kept in a vector sorted by handle (handles only grow, so creation is an
// append) for "next instance" iteration, and in a hash map by key. State counts per
// (sample state, view state, instance state) are kept up to date so that "is there a
// sample matching this mask" — a ReadCondition's trigger — is 12 additions.
// KEEP_LAST with depth d costs no allocation once each instance's ring has grown to d.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include <dds/core/Duration.hpp>
#include <dds/core/InstanceHandle.hpp>
#include <dds/core/Time.hpp>
#include <dds/core/status/State.hpp>
#include <dds/sub/status/DataState.hpp>
#include <spindle/cdr/serialize.hpp>
#include <spindle/detail/condition_delegate.hpp>
#include <spindle/detail/sample_sink.hpp>
#include <spindle/detail/thread_annotations.hpp>

namespace spindle::dcps {

using KeyHash = spindle::cdr::KeyHash;

// ResourceLimits' LENGTH_UNLIMITED.
inline constexpr std::int32_t kLengthUnlimited = -1;

// A key hash as an unordered container's hash (instances by key: the reader's cache, what a
// member keeps for repairs).
struct KeyHashHash {
  std::size_t operator()(const KeyHash& k) const noexcept;
};

// The policy values the cache obeys; the entity layer maps the reader's (and matched
// topic's) QoS onto it. Fixed for the cache's lifetime.
struct HistoryCacheConfig {
  // HISTORY: KEEP_ALL, or KEEP_LAST `depth` samples per instance.
  bool keep_all = false;
  std::int32_t depth = 1;
  // RESOURCE_LIMITS (kLengthUnlimited = no limit). Under KEEP_LAST the depth is capped by
  // max_samples_per_instance, and a full instance replaces its oldest sample.
  std::int32_t max_samples = kLengthUnlimited;
  std::int32_t max_instances = kLengthUnlimited;
  std::int32_t max_samples_per_instance = kLengthUnlimited;
  // DESTINATION_ORDER: BY_SOURCE_TIMESTAMP drops an update older than the instance's
  // latest (so every reader ends with the same value); BY_RECEPTION keeps arrival order.
  bool by_source_timestamp = false;
  // OWNERSHIP EXCLUSIVE: per instance only the strongest live writer's updates are kept.
  bool exclusive_ownership = false;
  // TIME_BASED_FILTER: at most one data sample per instance per minimum_separation
  // (measured on source timestamps).
  dds::core::Duration minimum_separation = dds::core::Duration::zero();
  // LIFESPAN: a sample expires at source timestamp + lifespan (a Change may carry its
  // writer's shorter lifespan).
  dds::core::Duration lifespan = dds::core::Duration::infinite();
  // READER_DATA_LIFECYCLE: how long a not-alive instance keeps its samples.
  dds::core::Duration autopurge_nowriter_samples_delay = dds::core::Duration::infinite();
  dds::core::Duration autopurge_disposed_samples_delay = dds::core::Duration::infinite();
  // PRESENTATION ordered_access over the TOPIC or GROUP scope: read/take over all
  // instances hand samples out in the order they were inserted (the subgroup's delivery
  // order), across instances, instead of grouped by instance.
  bool ordered = false;
};

enum class ChangeKind : std::uint8_t {
  data,        // a sample (the writer registers the instance if it had not)
  dispose,     // the writer disposed the instance
  unregister,  // the writer unregistered the instance
};

// One update from one writer, as delivered.
struct Change {
  KeyHash key{};
  ChangeKind kind = ChangeKind::data;
  // data: the sample. dispose/unregister: optionally a sample holding the key fields, so
  // that readers of the instance's invalid samples see the key.
  std::shared_ptr<const void> data;
  dds::core::InstanceHandle writer;
  dds::core::Time source_timestamp = dds::core::Time::invalid();
  dds::core::Time reception_timestamp;
  std::int32_t ownership_strength = 0;
  // The writer's LIFESPAN; the shorter of this and the config's applies.
  dds::core::Duration lifespan = dds::core::Duration::infinite();
  // Its place in the delivery order, numbered from the cache's `sequence` when it was
  // delivered (a GROUP subscriber's readers); 0: numbered when inserted.
  std::uint64_t order = 0;
  // The writer's number for it (SampleHeader::seq; 0: none). Per instance and writer, a
  // change numbered at or below the last one applied is a duplicate and is dropped: a
  // repair (docs/dcps.md, "Repair") may bring a change before or after the stream does.
  std::uint64_t writer_seq = 0;
  // Its place in the subgroup's total order (ParsedSample::epoch, subgroup, order; order -1:
  // none). A change placed before the latest one its instance applied is superseded and
  // dropped: a repair's change that the stream already went past, or the stream's that a
  // repair went ahead of. Within one view, places compare only within one subgroup.
  std::uint64_t pos_epoch = 0;
  std::uint32_t pos_subgroup = 0;
  std::int64_t pos_order = -1;
};

enum class InsertOutcome : std::uint8_t {
  accepted,      // applied (data_available says whether readers can see a difference)
  rejected,      // a resource limit; reject_reason says which -> SAMPLE_REJECTED
  filtered,      // TIME_BASED_FILTER
  not_owner,     // EXCLUSIVE ownership: not the instance's strongest writer
  out_of_order,  // BY_SOURCE_TIMESTAMP: older than the instance's latest update
  expired,       // LIFESPAN: already expired when it arrived
  ignored,       // nothing to apply (unregister of an unknown instance or writer)
  duplicate,     // the instance already has this writer's change of that number, or a later
  superseded,    // the instance already applied a change later in the total order
};

struct InsertResult {
  InsertOutcome outcome = InsertOutcome::ignored;
  dds::core::status::SampleRejectedState reject_reason;
  dds::core::InstanceHandle instance;
  // The readable content changed (a sample or an instance state): the caller raises
  // DATA_AVAILABLE on the reader and DATA_ON_READERS on its subscriber.
  bool data_available = false;
  // KEEP_LAST pushed the instance's oldest sample out to make room.
  bool replaced = false;
};

// What a read or take selects.
struct ReadSelection {
  enum class Scope : std::uint8_t {
    all,            // every instance, in handle order
    instance,       // only `instance` (read_instance)
    next_instance,  // the first instance after `instance` (nil: the first) with a
                    // matching sample (read_next_instance)
  };
  dds::sub::status::DataState state;  // default: any
  Scope scope = Scope::all;
  dds::core::InstanceHandle instance;
  std::int32_t max_samples = kLengthUnlimited;
  // A query (QueryCondition, Selector::content): only valid samples whose data passes it;
  // empty selects by state alone.
  std::function<bool(const void*)> content;
};

enum class [[nodiscard]] ReadStatus : std::uint8_t{
    ok,            // possibly with no sample
    bad_instance,  // Scope::instance with a handle the cache does not know
};

class HistoryCache {
 public:
  // The reader's clock, for lifespan and autopurge on read/take; tests inject their own.
  using Clock = std::function<dds::core::Time()>;

  // Every insertion takes the next number of `sequence` (a GROUP-scope subscriber shares
  // one among its readers, so their samples compare); null: the cache's own counter.
  explicit HistoryCache(const HistoryCacheConfig& config, Clock clock = &dds::core::Time::now,
                        std::shared_ptr<std::atomic<std::uint64_t>> sequence = nullptr);
  ~HistoryCache();
  HistoryCache(const HistoryCache&) = delete;
  HistoryCache& operator=(const HistoryCache&) = delete;

  // Applies one change (its data is moved out). Notifies read conditions when the
  // readable content changed.
  [[nodiscard]] InsertResult insert(Change&& change) SPINDLE_EXCLUDES(mu_);
  // Applies a delivery batch under one lock and one notification; results[i] is for
  // changes[i]. Throws std::invalid_argument, applying nothing, if results is shorter.
  void insert_batch(std::span<Change> changes, std::span<InsertResult> results)
      SPINDLE_EXCLUDES(mu_);
  // A writer lost liveliness or went away: every instance it had registered behaves as if
  // it unregistered at `now`. Returns how many instances changed state.
  std::size_t writer_lost(dds::core::InstanceHandle writer, const dds::core::Time& now)
      SPINDLE_EXCLUDES(mu_);

  // Pushes the selected samples to `sink` — grouped by instance in handle order, oldest
  // first within an instance; or, when the config is `ordered` and the scope is all
  // instances, in insertion order across instances — with full SampleInfos, then marks
  // them read (read) or removes them (take); either way their instances are no longer new.
  ReadStatus read(const ReadSelection& selection, detail::SampleSink& sink) SPINDLE_EXCLUDES(mu_);
  ReadStatus take(const ReadSelection& selection, detail::SampleSink& sink) SPINDLE_EXCLUDES(mu_);

  // Applies lifespan and autopurge as of `now` (read/take do it on their own with the
  // clock; this is for a timer at next_expiry()). True if anything was removed.
  bool expire(const dds::core::Time& now) SPINDLE_EXCLUDES(mu_);
  // Forgets every instance's place in the total order (Change::pos_*): the reader's
  // participant halted, and the domain it rejoins may number its views afresh.
  void forget_places() SPINDLE_EXCLUDES(mu_);
  // When expire() next has work; Time::invalid() when never.
  [[nodiscard]] dds::core::Time next_expiry() const SPINDLE_EXCLUDES(mu_);

  // nil when the cache has no instance with that key.
  [[nodiscard]] dds::core::InstanceHandle lookup_instance(const KeyHash& key) const
      SPINDLE_EXCLUDES(mu_);
  // The sample holding the instance's key fields (its first sample, or the key sample of
  // the dispose/unregister that created it); null if unknown or never given.
  [[nodiscard]] std::shared_ptr<const void> instance_key_data(
      dds::core::InstanceHandle instance) const SPINDLE_EXCLUDES(mu_);
  // Whether / how many samples (valid or not) match `mask`: the ReadCondition trigger.
  [[nodiscard]] bool has_matching(const dds::sub::status::DataState& mask) const
      SPINDLE_EXCLUDES(mu_);
  // Whether a valid sample matches `mask` and passes `content` (a QueryCondition's
  // trigger): a scan of the samples in the matching states.
  [[nodiscard]] bool has_matching(const dds::sub::status::DataState& mask,
                                  const std::function<bool(const void*)>& content) const
      SPINDLE_EXCLUDES(mu_);
  [[nodiscard]] std::size_t count_matching(const dds::sub::status::DataState& mask) const
      SPINDLE_EXCLUDES(mu_);
  [[nodiscard]] std::size_t instance_count() const SPINDLE_EXCLUDES(mu_);
  // Valid samples held (what RESOURCE_LIMITS count).
  [[nodiscard]] std::size_t sample_count() const SPINDLE_EXCLUDES(mu_);
  // The insertion numbers (the `sequence` numbers) of the samples `mask` selects, in
  // increasing order, at most `max`: what a GROUP-scope subscriber merges across its
  // readers (Subscriber::get_datareaders).
  [[nodiscard]] std::vector<std::uint64_t> sequence_of(const dds::sub::status::DataState& mask,
                                                       std::size_t max) const SPINDLE_EXCLUDES(mu_);

  // Calls f on every sample's data pointer, the instances' key samples included, so that
  // it may replace them (zero-copy receive: a sample read in place by a copy of it).
  void replace_data(const std::function<void(std::shared_ptr<const void>&)>& f)
      SPINDLE_EXCLUDES(mu_);

  [[nodiscard]] const HistoryCacheConfig& config() const noexcept { return config_; }
  // ReadConditions register here.
  [[nodiscard]] detail::ConditionObservers& observers() noexcept { return observers_; }

 private:
  struct Entry;
  struct Instance;
  struct KeyHashEqual {
    bool operator()(const KeyHash& a, const KeyHash& b) const noexcept;
  };
  static constexpr std::size_t kBuckets = 12;  // 2 sample x 2 view x 3 instance states

  void insert_locked(Change& c, InsertResult& r) SPINDLE_REQUIRES(mu_);
  void apply_data(Instance& i, Change& c, std::int64_t expiry_ns, InsertResult& r)
      SPINDLE_REQUIRES(mu_);
  void apply_dispose(Instance& i, const Change& c, bool created, InsertResult& r)
      SPINDLE_REQUIRES(mu_);
  enum class Unregistered : std::uint8_t { unrelated, applied, now_no_writers };
  Unregistered apply_unregister(Instance& i, std::uint64_t writer, std::int64_t now_ns)
      SPINDLE_REQUIRES(mu_);
  [[nodiscard]] bool admit(Instance& i, const Change& c, InsertResult& r) SPINDLE_REQUIRES(mu_);
  [[nodiscard]] std::int64_t expiry_of(const Change& c) const;
  [[nodiscard]] bool check_limits(const Instance* i, InsertResult& r) const SPINDLE_REQUIRES(mu_);
  Instance& create_instance(const KeyHash& key) SPINDLE_REQUIRES(mu_);
  [[nodiscard]] Instance* find_key(const KeyHash& key) SPINDLE_REQUIRES(mu_);
  [[nodiscard]] const Instance* find_key(const KeyHash& key) const SPINDLE_REQUIRES(mu_);
  [[nodiscard]] std::size_t lower_index(std::uint64_t handle) const SPINDLE_REQUIRES(mu_);
  [[nodiscard]] const Instance* find_handle(dds::core::InstanceHandle h) const
      SPINDLE_REQUIRES(mu_);
  void remove_reclaimable() SPINDLE_REQUIRES(mu_);

  ReadStatus read_or_take(const ReadSelection& sel, detail::SampleSink& sink, bool take)
      SPINDLE_EXCLUDES(mu_);
  std::size_t emit_instance(Instance& i, const ReadSelection& sel, std::size_t limit,
                            detail::SampleSink& sink, bool take) SPINDLE_REQUIRES(mu_);
  // Ordered access: the selected samples of every instance, in insertion order.
  bool emit_ordered(const ReadSelection& sel, std::size_t limit, detail::SampleSink& sink,
                    bool take) SPINDLE_REQUIRES(mu_);
  // picks_ <- the samples of `i` that `sel` selects, at most `limit` (the invalid one's
  // index is i.samples.size()).
  void pick_instance(const Instance& i, const ReadSelection& sel, std::size_t limit)
      SPINDLE_REQUIRES(mu_);
  // Pushes sample `pick` of `i` (k-th of the instance's `n` picks, whose last has
  // generation `mrsic`) to the sink.
  void push_pick(const Instance& i, std::size_t pick, std::size_t k, std::size_t n,
                 std::int32_t mrsic, detail::SampleSink& sink) const SPINDLE_REQUIRES(mu_);
  [[nodiscard]] std::int32_t generation_of(const Instance& i, std::size_t pick) const
      SPINDLE_REQUIRES(mu_);
  // Marks picks_ of `i` read, or removes them (take); the instance is no longer new.
  void settle_picks(Instance& i, bool take) SPINDLE_REQUIRES(mu_);
  bool expire_locked(std::int64_t now_ns) SPINDLE_REQUIRES(mu_);
  void purge_samples(Instance& i) SPINDLE_REQUIRES(mu_);

  // State bookkeeping: every change of a sample's read flag or of an instance's view or
  // instance state goes through these so that counts_ stays exact.
  void count_sample(Instance& i, bool read, bool add) SPINDLE_REQUIRES(mu_);
  void uncount_instance(const Instance& i) SPINDLE_REQUIRES(mu_);
  void recount_instance(const Instance& i) SPINDLE_REQUIRES(mu_);
  void set_state(Instance& i, std::uint8_t state, bool view_new) SPINDLE_REQUIRES(mu_);
  void add_invalid(Instance& i, const Change& c) SPINDLE_REQUIRES(mu_);
  void drop_invalid(Instance& i) SPINDLE_REQUIRES(mu_);
  void pop_oldest(Instance& i) SPINDLE_REQUIRES(mu_);
  void note_not_alive(Instance& i, std::int64_t since_ns) SPINDLE_REQUIRES(mu_);
  [[nodiscard]] std::size_t count_matching_locked(const dds::sub::status::DataState& mask) const
      SPINDLE_REQUIRES(mu_);
  // Calls f(instance, entry) for each sample `mask` selects — the invalid sample as a null
  // entry — in handle order, oldest first, until f returns false.
  template <class F>
  void for_each_matching(const dds::sub::status::DataState& mask, F&& f) const
      SPINDLE_REQUIRES(mu_);

  const HistoryCacheConfig config_;
  const Clock clock_;
  // Effective per-instance cap: depth (KEEP_LAST) or max_samples_per_instance (KEEP_ALL),
  // SIZE_MAX for none; and max_samples / max_instances as sizes.
  const std::size_t per_instance_cap_;
  const std::size_t max_samples_;
  const std::size_t max_instances_;
  const std::int64_t lifespan_ns_;    // INT64_MAX: infinite
  const std::int64_t separation_ns_;  // TIME_BASED_FILTER; 0: off

  mutable detail::Mutex mu_;
  std::vector<std::unique_ptr<Instance>> instances_ SPINDLE_GUARDED_BY(mu_);  // by handle
  std::unordered_map<KeyHash, Instance*, KeyHashHash, KeyHashEqual> by_key_ SPINDLE_GUARDED_BY(mu_);
  Instance* last_ SPINDLE_GUARDED_BY(mu_) = nullptr;  // the most recently inserted-to
  std::uint64_t next_handle_ SPINDLE_GUARDED_BY(mu_) = 1;
  std::size_t total_samples_ SPINDLE_GUARDED_BY(mu_) = 0;
  std::array<std::size_t, kBuckets> counts_ SPINDLE_GUARDED_BY(mu_){};
  // Earliest time expire_locked() has work (INT64_MAX: never); a lower bound.
  std::int64_t next_expiry_ns_ SPINDLE_GUARDED_BY(mu_);
  std::vector<std::size_t> picks_ SPINDLE_GUARDED_BY(mu_);  // emit_instance scratch
  struct OrderedPick {
    std::uint64_t seq;
    Instance* instance;
    std::size_t index;
  };
  std::vector<OrderedPick> ordered_picks_ SPINDLE_GUARDED_BY(mu_);  // emit_ordered scratch
  const std::shared_ptr<std::atomic<std::uint64_t>> sequence_;
  bool reclaim_pending_ SPINDLE_GUARDED_BY(mu_) = false;

  detail::ConditionObservers observers_;
};

}  // namespace spindle::dcps
