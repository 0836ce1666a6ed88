// The DCPS entities over the view engine (group::Engine, reached through dcps::Router):
// participant, topic, publisher, subscriber, writer, reader; discovery and matching;
// statuses and listener routing.
//
// Discovery. Creating a writer or a reader multicasts a record (discovery/records.hpp) in
// the builtin subgroup, which every member belongs to; deleting either multicasts a
// retirement the same way. Every participant — the announcer included, since SMC delivers
// a member's own messages — applies these to its endpoint table on the predicate thread in
// the builtin subgroup's total order, so every member's table agrees at every point of it,
// and at every view boundary (after the ragged edge). That table is the demand the engine
// lays per-topic subgroups out from (group/layout.hpp): a topic's samples travel only
// among the processes with an endpoint on it. Matching (same topic name and type,
// partitions, RxO rules) updates only local entities' statuses, and it takes effect at a
// view boundary: every change of the table asks the engine for a view change, and the
// matches and unmatches it implies are held (pending_) until on_view() of the next view,
// which carries the pair — the writer's process a sender of the topic's subgroup, the
// reader's a member. Since the topic's samples and the records travel in different
// subgroups, that boundary — identical at every member, after the ragged edge — is the
// one point where every member's reader starts (or stops) taking a writer's samples alike;
// and a sample written after publication_matched reaches the reader.
//
// A participant (at start) and each Topic (at creation) are announced the same way, and
// again when their QoS changes: those records are what the built-in topics and
// dds::topic::discover show of other members; they change no layout.
//
// Samples. A writer serializes straight into an SMC slot (Router::publish); a reader's
// TopicSink::on_sample keeps samples of matched writers, deserializes each once and
// applies the batch to its HistoryCache at the end of the upcall.
//
// Listeners. A status event goes to the entity's listener if its mask has the status, else
// to the publisher's/subscriber's, else to the participant's; the call is posted to the
// participant's executor (never run on the predicate thread). DATA_ON_READERS on a
// subscriber's or participant's listener takes precedence over DATA_AVAILABLE.
//
// Built-in topics (builtin.cpp): the built-in subscriber's four readers are Readers that
// are never announced nor subscribed to a topic subgroup; the participant feeds their
// caches with Changes it makes from its discovery tables (the records, the view's members),
// queued under mu_ in table order and inserted by flush_builtin() after mu_ is released.
//
// Threading and lock order: Participant::builtin_mu_ before Participant::mu_ (entity registry and
// discovery tables) before a Writer's or Reader's mu_; QosCell, ListenerSlot and Children lock
// leaves of their own; no lock is held while calling the StatusBook (its own leaf lock), the
// HistoryCache, Router::publish or a listener. Application threads create and use entities; the
// predicate thread runs on_builtin/on_sample/on_batch_end; timers and listeners run on the engine's
// executor. Time comes from the engine's Runtime (group/runtime.hpp), never from a clock directly,
// so the entities run unchanged in the deterministic simulator.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <spindle/detail/dcps.hpp>

#include "client/relay.hpp"
#include "dcps/history_cache.hpp"
#include "dcps/repair.hpp"
#include "dcps/retained.hpp"
#include "dcps/router.hpp"
#include "discovery/endpoint_table.hpp"
#include "discovery/records.hpp"
#include "group/engine.hpp"
#include "qos/checks.hpp"
#include "security/permissions.hpp"
#include "storage/home.hpp"

namespace dds::pub {
class AnyDataWriterListener;
}
namespace dds::sub {
class AnyDataReaderListener;
}

namespace spindle::dcps {

using discovery::ReaderRecord;
using discovery::WriterRecord;

// How long creating a writer or reader waits at most for the view that matches it
// (Participant::await_match): one view change takes milliseconds; a domain in the middle of
// a failure's view change needs a suspicion timeout more.
inline constexpr std::chrono::seconds kMatchWait{5};

class Participant;
class Topic;
class Publisher;
class Subscriber;
class Writer;
class Reader;

using dds::core::InstanceHandle;
using dds::core::status::StatusMask;

// What a writer or reader knows of a matched remote (or local) peer.
struct MatchedWriter {
  InstanceHandle handle;
  std::int32_t strength = 0;
  dds::core::Duration lifespan = dds::core::Duration::infinite();
  bool manual_liveliness = false;
  dds::core::Duration lease = dds::core::Duration::infinite();
  bool alive = true;
  // When it was last heard from: kept only where its liveliness is watched (watched()), so
  // a sample costs no clock read otherwise.
  std::chrono::steady_clock::time_point last_seen{};
  [[nodiscard]] bool watched() const { return manual_liveliness && !lease.is_infinite(); }
  // The last message number (SampleHeader::seq) received from it; 0: none yet. A jump means
  // messages the reader missed (SAMPLE_LOST).
  std::uint64_t last_seq = 0;
  // Numbers above last_seq that a repair brought (dcps/repair.hpp), ascending: a jump over
  // them does not count them as lost.
  std::vector<std::uint64_t> repaired;
};

// Makes an entity whose destruction never runs on the predicate thread. A delivery,
// discovery or suspicion upcall holds entities for a moment (the writer it matches, the
// reader it delivers to); if the application drops its last reference meanwhile, the
// upcall's is the last. Destroying the entity there would deadlock (Reader::close()
// unsubscribes under the lock the upcall holds) or, when the participant goes with it,
// join the predicate thread from itself. Such a destruction is handed to the dispatcher
// thread, which is built to run even the participant's end (Executor::stop() from a job).
// `engine` outlives the call: the entity being destroyed still holds its participant.
// Whether `mask` has the status bit `bit`.
[[nodiscard]] inline bool has(const StatusMask& mask, const StatusMask& bit) {
  return (mask & bit).any();
}

// One QoS value of an entity (its own, or a default it gives its children): read under a
// lock of its own, replaced only when consistent — and, for an entity's own QoS, only in
// the policies that may change after enable (qos/checks.hpp). read() looks at parts of it
// without copying the whole QoS (the writer reads its blocking time on every write).
template <class Q>
class QosCell {
 public:
  explicit QosCell(Q q) : q_(std::move(q)) {}
  [[nodiscard]] Q get() const {
    std::lock_guard lock(mu_);
    return q_;
  }
  template <class F>
  [[nodiscard]] auto read(F&& f) const {
    std::lock_guard lock(mu_);
    return f(q_);
  }
  // A default for children: any consistent QoS.
  void set_default(const Q& q) {
    qos::check_consistent(q);
    std::lock_guard lock(mu_);
    q_ = q;
  }
  // The entity's own QoS: consistent, and changing only what may change.
  void set_own(const Q& q) {
    qos::check_consistent(q);
    std::lock_guard lock(mu_);
    qos::check_changeable(q_, q);
    q_ = q;
  }

 private:
  mutable std::mutex mu_;  // a leaf
  Q q_;
};

// A non-typed listener (participant's, publisher's, subscriber's) and its status mask.
// The application owns the listener object; calls go through the dispatcher.
template <class L>
class ListenerSlot {
 public:
  void set(L* l, const StatusMask& mask) {
    std::lock_guard lock(mu_);
    l_ = l;
    mask_ = mask;
  }
  [[nodiscard]] L* get() const {
    std::lock_guard lock(mu_);
    return l_;
  }
  // The listener, if its mask has `status`.
  [[nodiscard]] L* for_status(const StatusMask& status) const {
    std::lock_guard lock(mu_);
    return l_ != nullptr && has(mask_, status) ? l_ : nullptr;
  }

 private:
  mutable std::mutex mu_;  // a leaf
  L* l_ = nullptr;
  StatusMask mask_;
};

// Who hears a status of a writer or reader: its typed listener (hook), else the untyped one
// of its publisher or subscriber, else the participant's (any); neither when nobody
// listens for it or the entity is closed.
template <class Hook, class Any>
struct ListenerTarget {
  std::shared_ptr<Hook> hook;
  Any* any = nullptr;
  explicit operator bool() const noexcept { return hook != nullptr || any != nullptr; }
  bool operator==(const ListenerTarget&) const = default;
};

// The entities a publisher or subscriber created, held weakly (the application owns them).
template <class T>
class Children {
 public:
  void add(const std::shared_ptr<T>& child) {
    std::lock_guard lock(mu_);
    std::erase_if(list_, [](const auto& w) { return w.expired(); });
    list_.push_back(child);
  }
  [[nodiscard]] std::vector<std::shared_ptr<T>> alive() const {
    std::vector<std::shared_ptr<T>> out;
    std::lock_guard lock(mu_);
    for (const auto& w : list_)
      if (auto c = w.lock()) out.push_back(std::move(c));
    return out;
  }
  void close_all() const {
    for (const auto& c : alive())
      c->close();
  }

 private:
  mutable std::mutex mu_;  // a leaf
  std::vector<std::weak_ptr<T>> list_;
};

template <class T, class... Args>
std::shared_ptr<T> make_entity(group::Bus& engine, Args&&... args) {
  return std::shared_ptr<T>(new T(std::forward<Args>(args)...), [&engine](T* entity) {
    // Not on the threads the participant's destructor stops: an upcall there (the view
    // change's on_view() runs on the control thread) may hold the last reference, and the
    // participant that goes with it would free the engine under that thread's feet.
    if (engine.on_protocol_thread() || engine.runtime().control().on_executor_thread()) {
      engine.executor().post([entity] { delete entity; });
    } else {
      delete entity;
    }
  });
}

class Participant final : public detail::ParticipantCore {
 public:
  // `log_settings`: where this node's durable logs of `logged` topics go (docs/storage.md);
  // the logs found there are recovered first.
  Participant(std::uint32_t domain_id, const dds::domain::qos::DomainParticipantQos& qos,
              std::unique_ptr<group::Bus> bus, std::span<const std::byte> joined_state = {},
              storage::LogSettings log_settings = {});
  ~Participant() override;

  // A secured domain (docs/security.md): this participant's certificate subject and the
  // domain's permissions. Set once, before the application gets the participant. Endpoints
  // without a grant are refused (check_grant), and a joiner's state transfer leaves out the
  // retained histories its subject may not read.
  void secure(std::string subject, std::shared_ptr<const security::Permissions> permissions);
  // Throws dds::core::NotAllowedBySecurityError, naming the topic and the rule, unless this
  // participant may `action` `topic` in `partitions` (always, where the domain is not secured).
  void check_grant(security::Action action, const std::string& topic,
                   const std::vector<std::string>& partitions) const;

  // ParticipantCore
  std::uint32_t domain_id() const override { return domain_id_; }
  dds::domain::qos::DomainParticipantQos qos() const override;
  void qos(const dds::domain::qos::DomainParticipantQos& q) override;
  dds::topic::qos::TopicQos default_topic_qos() const override;
  void default_topic_qos(const dds::topic::qos::TopicQos& q) override;
  dds::pub::qos::PublisherQos default_publisher_qos() const override;
  void default_publisher_qos(const dds::pub::qos::PublisherQos& q) override;
  dds::sub::qos::SubscriberQos default_subscriber_qos() const override;
  void default_subscriber_qos(const dds::sub::qos::SubscriberQos& q) override;
  std::shared_ptr<detail::TopicCore> create_topic(const std::string& name,
                                                  const detail::TypeSupport& type,
                                                  const dds::topic::qos::TopicQos& q) override;
  std::shared_ptr<detail::TopicCore> find_topic(const std::string& name) const override;
  std::vector<std::shared_ptr<detail::TopicCore>> topics() const override;
  std::vector<DiscoveredTopic> discovered_topics() const override;
  spindle::inspect::Snapshot inspect() const override;
  std::shared_ptr<detail::PublisherCore> create_publisher(
      const dds::pub::qos::PublisherQos& q) override;
  std::shared_ptr<detail::SubscriberCore> create_subscriber(
      const dds::sub::qos::SubscriberQos& q) override;
  void assert_liveliness() override;
  dds::core::Time current_time() const override { return wall_now(); }
  bool contains_entity(InstanceHandle h) const override;
  void close_contained_entities() override;
  void listener(dds::domain::DomainParticipantListener* l, const StatusMask& mask) override;
  dds::domain::DomainParticipantListener* listener() const override;
  std::uint32_t node_id() const override { return bus_->node(); }
  // EntityFactory: whether topics, publishers and subscribers start enabled.
  bool autoenables() const;
  std::string transport_kind() const override { return std::string(bus_->transport_kind()); }
  void close() override;
  // DCPS ignore_*: kept in ignored_; see "Ignoring" in participant.cpp.
  void ignore(Ignored kind, InstanceHandle h) override;
  std::shared_ptr<detail::SubscriberCore> builtin_subscriber() override;
  std::shared_ptr<const dds::topic::PublicationBuiltinTopicData> publication_data(
      InstanceHandle h) const override;
  std::shared_ptr<const dds::topic::SubscriptionBuiltinTopicData> subscription_data(
      InstanceHandle h) const override;

  // A member serves external clients (docs/membership.md, "External clients") from here on;
  // throws dds::core::Error when it cannot listen at s.host:s.port.
  void serve_clients(client::RelaySettings s);
  // ... and those that come to the domain's join port while this member leads (a member's
  // engine only; `s` without a port: the relay listens nowhere else unless serve_clients()).
  void serve_join_port_clients(client::RelaySettings s);
  // What its relay did (zeros when it serves none); the port it listens on (0: none).
  [[nodiscard]] client::RelayStats relay_stats() const;
  [[nodiscard]] std::uint16_t client_port() const;

  // For the entities.
  group::Bus& bus() noexcept { return *bus_; }
  const group::Bus& bus() const noexcept { return *bus_; }
  // A member's view engine (tests reach it for fault injection); a client has none (throws).
  group::Engine& engine() { return dynamic_cast<group::Engine&>(*bus_); }
  Router& router() noexcept { return router_; }
  group::Executor& executor() noexcept { return bus_->executor(); }
  // The runtime's clocks: monotonic for deadlines and timers, wall for timestamps.
  group::TimePoint clock_now() const noexcept { return bus_->runtime().now(); }
  dds::core::Time wall_now() const;
  std::uint64_t next_guid();
  // A new entity's handle (topic, publisher, subscriber); writers and readers use their guid.
  InstanceHandle next_handle();
  // A new instance handle for a writer's instance (a namespace of its own).
  InstanceHandle next_instance_handle();
  // The participant listener, if its mask has `status` (caller posts the call).
  dds::domain::DomainParticipantListener* listener_for(const StatusMask& status) const;
  // Listener calls. post_listener() runs `job` on the listener thread holding
  // listener_calls_, and each job calls a listener only if that listener is still the one
  // its status goes to at that moment; fence_listeners(), called once a listener was set,
  // replaced or removed, waits for a call in progress. So once listener(...) or close()
  // returns, the old listener is never called again and the application may destroy it.
  // From a listener itself the fence does not wait: its own call is the one in progress.
  void post_listener(group::Executor::Job job);
  void fence_listeners();

  // Announces a writer or reader and returns once the view that matches it with every
  // endpoint known at that moment is installed, or after kMatchWait (docs/dcps.md,
  // "Matching at creation"): a write right after creating the endpoints reaches them.
  void announce(const std::shared_ptr<Writer>& w);
  void announce(const std::shared_ptr<Reader>& r);
  // A writer's record again, changed (Writer::make_room: more room); the caller's thread.
  void announce_again(const Writer& w);
  // A Topic's record (at creation or enable(), and again when its QoS changes), and its end.
  void announce(Topic& t);
  void retire_writer(std::uint64_t guid);
  void retire_reader(std::uint64_t guid);
  void retire_topic(std::uint64_t guid);
  void forget(const Topic* t);
  // This participant's open writers and readers of topic `t` (Topic::close refuses them).
  std::pair<std::size_t, std::size_t> endpoints_of(const Topic& t) const;
  // What this member retains of topic `topic_name` (dcps/retained.hpp), oldest first: for
  // tools and tests.
  std::vector<storage::Entry> retained(const std::string& topic_name) const;
  // Retained histories this member took again after it missed messages (docs/storage.md,
  // "Refresh"), and whether it still waits for or misses any.
  [[nodiscard]] std::uint64_t refreshes() const noexcept { return refreshes_.load(); }
  // Repairs this member's readers took (docs/dcps.md, "Repair").
  [[nodiscard]] std::uint64_t repairs() const noexcept { return repairs_.load(); }
  [[nodiscard]] bool history_whole() const;
  // Why the durable log of topic `topic` failed at this member; empty while it works.
  std::string log_failure(std::uint64_t topic) const;

 private:
  using Actions = std::vector<std::function<void()>>;
  // Runs matching actions collected under mu_ (after it is released).
  void run(Actions& actions);
  // PreconditionNotMetError, naming `who`, when a record of `size` bytes does not fit a
  // builtin slot.
  void check_record_fits(std::size_t size, const std::string& who) const;
  // Multicasts one entity's discovery record; `who` names the entity in errors.
  void publish_record(SampleKind kind, std::uint64_t guid, const std::vector<std::byte>& bytes,
                      const std::string& who);
  void publish_retirement(SampleKind kind, std::uint64_t guid);
  // This participant's record, from its QoS as it is now (at start, and on a change).
  void announce_self();
  // Waits (bounded by kMatchWait) until endpoint `guid`'s record is applied here and no match
  // of it waits for a later view; returns at once on the protocol or listener thread.
  void await_match(std::uint64_t guid, bool writer);
  [[nodiscard]] bool matched_in_view(std::uint64_t guid, bool writer) const;
  // Serializes announce_self() and announce(Topic&): each record is encoded from the QoS
  // as it is when sent, so the last one sent has the latest. Taken with no other lock held.
  // Recursive: a record that waits for room in the ring lets the simulator run other jobs on
  // the waiting thread, and one of them may announce (a joiner's own record, a rejoin's).
  std::recursive_mutex announce_mu_;
  // The engine's side (control thread): every endpoint as a channel demand, and a view
  // installed (held matches it carries are reported now).
  group::Demand layout_demand() const;
  void on_view(const group::View& view);
  // Whether the installed view carries writer -> reader (mu_ held).
  bool covered(std::uint64_t writer, std::uint64_t reader) const;
  // The events of a match of writer and reader for this node's endpoints (mu_ held).
  void matched_actions(std::uint64_t writer, std::uint64_t reader, Actions& out);
  // Held matches the installed view carries, and every held unmatch (mu_ held); the caller
  // runs `out` with run_settled().
  void settle(Actions& out);
  // Runs what settle() collected (mu_ not held), then counts that settle() done.
  void run_settled(Actions& actions);
  // The state transfer: every endpoint record of the table, and its reading at a joiner
  // (records that fail to decode are reported and skipped). `subject`: a secured joiner's
  // certificate subject; retained histories it may not read are left out.
  std::vector<std::byte> endpoint_state(std::string_view subject = {}) const;
  // The name of topic `id`, from the records this member holds (mu_ held).
  std::optional<std::string> topic_name_locked(std::uint64_t id) const;
  void apply_state(std::span<const std::byte> state);
  void on_builtin(const ParsedSample& s, NodeId sender);
  void on_suspicion(NodeId node, bool left, const std::string& why);
  // Halting and rejoining (group::Engine::rejoin_with; docs/membership.md, "Rejoining").
  void on_halted();
  void on_rejoined(const group::View& view, std::span<const std::byte> state);
  void reannounce();
  void on_writer_record(WriterRecord rec);
  void on_reader_record(ReaderRecord rec);
  void on_participant_record(discovery::ParticipantRecord rec);
  void on_topic_record(discovery::TopicRecord rec);
  void on_topic_retired(std::uint64_t guid);
  void on_retired(std::uint64_t guid, bool writer);
  void collect(const std::vector<discovery::Change>& changes, Actions& out);
  std::shared_ptr<Writer> local_writer(std::uint64_t guid) const;
  std::shared_ptr<Reader> local_reader(std::uint64_t guid) const;
  std::shared_ptr<Topic> inconsistent_topic(const std::string& topic, const std::string& type);
  std::size_t known_inconsistencies(const std::string& topic);

  const std::uint32_t domain_id_;
  std::unique_ptr<group::Bus> bus_;
  mutable std::mutex relay_mu_;  // relay_, relay_settings_; before the Relay's and the tap lock
  std::unique_ptr<client::Relay> relay_;  // serve_clients(), or the first client handed over
  client::RelaySettings relay_settings_;  // for a relay made for the join port's clients
  bool relays_closed_ = false;            // close() began: no relay is made any more
  void adopt_client(int fd, std::string already);
  Router router_;
  const storage::LogSettings log_settings_;
  // Where this participant's logs live: its node's home, or one it adopted (home.hpp).
  storage::LogHome log_home_;
  std::atomic<std::uint32_t> serial_{0};
  std::atomic<std::uint64_t> handles_{0};

  mutable std::mutex mu_;
  QosCell<dds::domain::qos::DomainParticipantQos> qos_;
  discovery::ProcessInfo process_;  // set before the engine starts, then read only
  QosCell<dds::topic::qos::TopicQos> default_topic_qos_{{}};
  QosCell<dds::pub::qos::PublisherQos> default_publisher_qos_{{}};
  QosCell<dds::sub::qos::SubscriberQos> default_subscriber_qos_{{}};
  ListenerSlot<dds::domain::DomainParticipantListener> listener_;
  std::recursive_mutex listener_calls_;  // held by a listener call (post_listener)
  std::map<std::string, std::weak_ptr<Topic>> topics_;
  std::vector<std::weak_ptr<Publisher>> publishers_;
  std::vector<std::weak_ptr<Subscriber>> subscribers_;
  std::map<std::uint64_t, std::weak_ptr<Writer>> local_writers_;
  std::map<std::uint64_t, std::weak_ptr<Reader>> local_readers_;
  // Every endpoint announced in the domain and not retired (local ones included).
  discovery::EndpointTable endpoints_{[this](std::uint64_t guid) {
    return local_writer(guid) != nullptr || local_reader(guid) != nullptr;
  }};
  std::set<std::pair<std::string, std::string>> inconsistent_seen_;  // (topic, type)
  std::set<NodeId> left_;  // members that said goodbye (participant_left)
  // The records of the members' participants (by node) and of every open Topic (by guid):
  // what DCPSParticipant and DCPSTopic show. A member's go when it leaves the view.
  std::map<NodeId, discovery::ParticipantRecord> participant_records_;
  std::map<std::uint64_t, discovery::TopicRecord> topic_records_;
  // Remote topics' type information by topic guid, and what has come of it so far.
  std::map<std::uint64_t, discovery::TypeRecord> type_records_;
  std::map<std::uint64_t, discovery::Pieces> type_pieces_;
  group::View view_;              // the installed view, as on_view() last told it
  std::uint64_t generation_ = 0;  // changes of endpoints_ (group::Demand)
  // (Un)matches of this node's endpoints waiting for a view boundary: (writer, reader) ->
  // true to match, false to unmatch.
  std::map<std::pair<std::uint64_t, std::uint64_t>, bool> pending_;
  // settle()s whose actions have not run yet: a match no longer pending is not reported
  // until its writer and reader were told (await_match()).
  std::size_t settling_ = 0;
  // What the application ignored (DCPS ignore_*, irreversible): members (participants are
  // one per member, their handle make_guid(node, 1)), writer and reader guids, and topic
  // handles (kept only). A (writer, reader) pair with an ignored side never matches here.
  struct IgnoreSet {
    std::set<NodeId> nodes;
    std::set<std::uint64_t> writers, readers, topics;
  } ignored_;
  // Serializes ignore() with on_view(), the one place matches are reported, so that a match
  // of a pair is never reported after ignore() ended it. Taken before mu_.
  std::mutex ignore_mu_;
  // Whether this participant ignores the writer or the reader of the pair (mu_ held).
  bool ignores(std::uint64_t writer, std::uint64_t reader) const;
  // Retained topics (dcps/retained.hpp) by topic id: every topic a retaining writer was
  // announced on, kept while this participant lives.
  std::map<std::uint64_t, std::shared_ptr<RetainedTopic>> retained_;
  // A secured domain (secure()): our certificate subject and the domain's permissions.
  std::string subject_;                                       // guarded by mu_
  std::shared_ptr<const security::Permissions> permissions_;  // guarded by mu_
  // Changing the permissions (docs/security.md): every kPermissionsPoll the document's file
  // is read again (watch_permissions, on the executor); a new document is kept by its digest
  // and announced (SampleKind::permissions). Each member's latest announcement is noted; once
  // every member of the view announced the same document, and we hold it, it is in force
  // (switch_permissions), at the same point of the order everywhere. The first view laid out
  // after that unmatches the pairs its layout no longer covers (settle).
  std::map<std::string, std::shared_ptr<const security::Permissions>> documents_;  // mu_
  std::map<NodeId, std::string> announced_permissions_;                            // mu_
  std::optional<std::uint64_t> regrant_after_;  // mu_: the epoch the switch came in
  std::string permissions_error_;               // executor: the last one said
  void watch_permissions();
  void poll_permissions();  // watch_permissions() once kPermissionsPoll has passed
  // mu_ held: switches if every member announced one document we hold; returns it then.
  std::shared_ptr<const security::Permissions> switch_permissions();
  // Local readers that asked for history: announced, their record not applied yet
  // (wanted), then applied: the history goes to them at the next view boundary (due).
  std::set<std::uint64_t> history_wanted_, history_due_;
  // Local retaining writers and the channel each holds (group::Engine::hold_sends).
  std::map<std::uint64_t, group::Channel> held_writers_;
  // The retained topic `topic` (mu_ held), made and handed to the Router on first use.
  RetainedTopic& retained_topic(std::uint64_t topic);
  // The retained topic `topic`, if there is one (takes mu_).
  std::shared_ptr<RetainedTopic> find_retained(std::uint64_t topic) const;
  // A writer went: its topic's history learns it (mu_ held).
  void retire_retained(const WriterRecord& w);
  // A retaining writer's record kept by its topic, whose log is opened first when it logs
  // (mu_ held).
  RetainedTopic& keep(const WriterRecord& w, const storage::WriterTerms& terms);
  void open_log(RetainedTopic& t, const std::string& topic_name);  // mu_ held
  // At start: every log of this node (storage/settings.hpp) opened and replayed.
  void recover_logs();

  // Refresh (refresh.cpp; docs/storage.md, "Refresh"): a retained topic's history sent again
  // to a member that missed some of its messages while it was left behind for a lag.
  //   on_gaps              control thread, at a view boundary: the topics this member missed
  //                        messages of (damaged_; refresh_at_boundary asks for them once:
  //                        refresh_request, and again while it waits two suspicion timeouts)
  //   on_refresh_request   protocol thread: the sender waits for these histories from the
  //                        next view boundary on (refreshing_, in the builtin order)
  //   refresh_at_boundary  mu_ held, at a view boundary (view_ is still the view that ended):
  //                        the first member of `view` that was in the last one and waits for
  //                        no history of a topic sends that history as it stands to those
  //                        that wait (send_pieces, executor); returns the topics this member
  //                        waits for (their messages are held back: Router::hold_back)
  //   on_refresh_state     protocol thread: a piece of a history; the last one replaces this
  //                        member's history (RetainedTopic::refresh) if it is for it, and ends
  //                        the wait everywhere
  void on_gaps(std::span<const std::uint64_t> topics);
  void request_refresh(const std::vector<std::uint64_t>& topics);
  // Publishes a request for `topics` (refresh_request, repair_request) in the builtin
  // subgroup; `who` names it in errors, and `failed` ends the line said when it cannot go.
  void ask_for(SampleKind kind, const std::vector<std::uint64_t>& topics, const std::string& who,
               const std::string& failed);
  void on_refresh_request(const ParsedSample& s, NodeId sender);
  void on_refresh_state(const ParsedSample& s, NodeId sender);
  std::vector<std::uint64_t> refresh_at_boundary(const group::View& view);
  // Sends `bytes` to `targets` as pieces of `kind` that each fit a builtin slot (executor).
  // `cut`: a history cut at the boundary into `epoch`, not sent once a later view is in.
  void send_pieces(SampleKind kind, std::uint64_t epoch, std::uint64_t topic,
                   const std::vector<NodeId>& targets, const std::vector<std::byte>& bytes,
                   bool cut);
  // Retained topics whose history here misses messages, and those of them asked for (mu_).
  std::set<std::uint64_t> damaged_, asked_;
  // Retained topic -> the members waiting for its history (mu_; the same at every member at
  // each point of the builtin order).
  std::map<std::uint64_t, std::set<NodeId>> refreshing_;
  // Pieces of a history on their way to this member (mu_).
  struct IncomingHistory {
    std::uint64_t epoch = 0;
    std::uint32_t next = 0;
    std::vector<std::byte> bytes;
  };
  std::map<std::uint64_t, IncomingHistory> incoming_;
  std::atomic<std::uint64_t> refreshes_{0};  // histories this member took again

  // Repair (repair.cpp; dcps/repair.hpp; docs/dcps.md, "Repair"): the latest changes per
  // instance of RELIABLE KEEP_LAST writers, sent to a member whose reliable readers missed
  // messages while it was left behind.
  //   request_repair     executor: asks for the topics' repairs (repair_request)
  //   on_repair_request  protocol thread: this member's kept changes of those topics go to
  //                      the sender (send_repair, executor)
  //   on_repair          protocol thread: a piece of a repair; the last one goes to this
  //                      member's reliable readers of the topic (Reader::repair)
  void request_repair(const std::vector<std::uint64_t>& topics);
  void on_repair_request(const ParsedSample& s, NodeId sender);
  void send_repair(std::uint64_t topic, NodeId target);
  void on_repair(const ParsedSample& s, NodeId sender);
  // A local writer's changes kept for repairs (announce), and no more (retire_writer).
  void keep_for_repair(const std::shared_ptr<Writer>& w);
  void forget_for_repair(std::uint64_t writer_guid);
  // The local readers of `topic` that a repair serves: RELIABLE, open (mu_ held).
  std::vector<std::shared_ptr<Reader>> repairable_readers(std::uint64_t topic) const;
  // Topic -> the kept changes of this member's RELIABLE KEEP_LAST writers of it (a sink of the
  // topic while a writer is kept). Taken with no other lock held (the Router's is taken under
  // it), never on the protocol thread.
  std::mutex kept_mu_;
  std::map<std::uint64_t, std::shared_ptr<KeptSamples>> kept_;
  // Pieces of repairs on their way to this member, by (sending participant's node, topic):
  // a relay's and its clients' come from one member (mu_).
  std::map<std::pair<NodeId, std::uint64_t>, IncomingHistory> repairs_in_;
  std::atomic<std::uint64_t> repairs_{0};  // repairs this member's readers took

  // Built-in topics (builtin.cpp). Index of each reader in Builtin's arrays.
  enum BuiltinIndex : std::size_t {
    kDcpsParticipant,
    kDcpsTopic,
    kDcpsPublication,
    kDcpsSubscription,
    kBuiltinTopics
  };
  struct BuiltinSet;  // what builtin_subscriber() hands out: the subscriber and its readers
  struct Builtin {
    std::weak_ptr<BuiltinSet> set;
    std::weak_ptr<Subscriber> subscriber;
    std::array<std::weak_ptr<Reader>, kBuiltinTopics> readers;
    std::array<std::vector<Change>, kBuiltinTopics> pending;  // not inserted yet
    bool active = false;  // a built-in subscriber was made: changes are queued
    // DCPSTopic: each alive topic name and the record its sample shows (see
    // builtin_topic_check()).
    std::map<std::string, std::uint64_t> topic_shown;
  };
  Builtin builtin_;        // mu_
  std::mutex builtin_mu_;  // serializes flush_builtin(); before mu_
  // Queue the built-in samples of a change of the tables (mu_ held; no-ops while no
  // built-in subscriber exists).
  void builtin_endpoint(const WriterRecord& w, bool alive);
  void builtin_endpoint(const ReaderRecord& r, bool alive);
  void builtin_topic(const std::string& name, const std::string& type,
                     const dds::topic::qos::TopicQos& qos, const dds::core::policy::TopicData& td,
                     bool alive);
  // A topic name's built-in instance after a change of the tables (mu_ held): alive while a
  // Topic record or an endpoint has the name, showing the record of lowest guid, else the
  // first writer's or reader's QoS; sent again when that source changes or is `changed`
  // (the guid of a record that was replaced).
  void builtin_topic_check(const std::string& name, std::uint64_t changed = 0);
  // A member's participant: alive once its record is applied, disposed when it leaves.
  void builtin_participant(NodeId node, bool alive);
  void queue_builtin(std::size_t index, std::shared_ptr<const void> data, bool alive);
  // Inserts what is queued into the readers' caches (no lock held by the caller).
  void flush_builtin();
};

// A publisher's partition set as one key (group::Channel::partition): its names sorted,
// each once; no name is the default partition "". Never 0 (the builtin channel's).
std::uint64_t partition_key(const dds::core::policy::Partition& p);
// Whether a publisher's or subscriber's PRESENTATION asks for order or coherence over the
// GROUP scope (its topics travel and are read in one order).
bool group_scope(const dds::core::policy::Presentation& p);
// The channel of the GROUP-scope publishers of `node`: their topics travel in one subgroup,
// in one order (docs/dcps.md, "Presentation").
std::uint64_t group_channel_id(std::uint32_t node);
// The channel a writer's samples travel on: its topic, atomic or unordered by its QoS, and
// its publisher's partition set — or, for a GROUP-scope publisher, its node's group channel
// (atomic) with that partition set.
group::Channel writer_channel(const std::string& topic_name, const dds::pub::qos::DataWriterQos& q,
                              const dds::pub::qos::PublisherQos& pq, std::uint32_t node);
// The same, of a writer as its discovery record describes it.
group::Channel writer_channel(const WriterRecord& w);

class Topic final : public detail::TopicCore {
 public:
  Topic(std::shared_ptr<Participant> p, std::string name, const detail::TypeSupport& type,
        const dds::topic::qos::TopicQos& q, InstanceHandle h);
  ~Topic() override;
  const std::string& name() const override { return name_; }
  const detail::TypeSupport& type() const override { return *type_; }
  std::shared_ptr<detail::ParticipantCore> participant() const override { return participant_; }
  dds::topic::qos::TopicQos qos() const override;
  void qos(const dds::topic::qos::TopicQos& q) override;
  void listener(std::shared_ptr<detail::TopicListenerHook> hook, const StatusMask& mask) override;
  std::shared_ptr<detail::TopicListenerHook> listener() const override;
  // PreconditionNotMetError while a writer or reader of this participant uses the topic.
  void close() override;
  // Another member uses this name with another type.
  void raise_inconsistent();
  Participant& owner() const { return *participant_; }
  // Announced (at creation when enabled, else by enable()); retired by close().
  void enable() override;
  // What its discovery record says: names and QoS.
  discovery::TopicRecord record() const;
  // Called once the record was sent: close() retires it.
  void announced() noexcept { announced_.store(true); }

 private:
  const std::shared_ptr<Participant> participant_;
  std::atomic<bool> announced_{false};
  const std::string name_;
  const detail::TypeSupport* type_;
  QosCell<dds::topic::qos::TopicQos> qos_;
  mutable std::mutex mu_;
  std::shared_ptr<detail::TopicListenerHook> hook_;
  StatusMask mask_;
};

class Publisher final : public detail::PublisherCore {
 public:
  Publisher(std::shared_ptr<Participant> p, const dds::pub::qos::PublisherQos& q, InstanceHandle h);
  std::shared_ptr<detail::ParticipantCore> participant() const override { return participant_; }
  dds::pub::qos::PublisherQos qos() const override;
  void qos(const dds::pub::qos::PublisherQos& q) override;
  dds::pub::qos::DataWriterQos default_datawriter_qos() const override;
  void default_datawriter_qos(const dds::pub::qos::DataWriterQos& q) override;
  std::shared_ptr<detail::WriterCore> create_writer(const std::shared_ptr<detail::TopicCore>& topic,
                                                    const dds::pub::qos::DataWriterQos& q,
                                                    const detail::WriterHookFactory& hook,
                                                    const StatusMask& mask) override;
  void wait_for_acknowledgments(const dds::core::Duration& timeout) override;
  std::vector<std::shared_ptr<detail::WriterCore>> writers() const override;
  void listener(dds::pub::PublisherListener* l, const StatusMask& mask) override;
  dds::pub::PublisherListener* listener() const override;
  // Enables its writers too when its EntityFactory autoenables (DCPS 2.2.2.1.1.7).
  void enable() override;
  void close() override;
  dds::pub::PublisherListener* listener_for(const StatusMask& status) const;
  Participant& owner() const { return *participant_; }

  // Coherent sets (docs/dcps.md, "Coherent sets"). begin/end nest; with coherent_access the
  // outermost end publishes what the writers collected: one coherent_set message per writer
  // (wire.hpp) in the order of their first write in the set (TOPIC scope), or one for all of
  // them (GROUP scope: its writers share one channel).
  void begin_coherent_changes() override;
  void end_coherent_changes() override;
  // Whether a coherent set is collecting (a cheap look before the writer serializes).
  [[nodiscard]] bool collecting() const noexcept {
    return collecting_.load(std::memory_order_acquire);
  }
  // Adds a writer's message to the open set; false when none is open any more (the writer
  // publishes it on its own).
  bool add_to_set(const std::shared_ptr<Writer>& w, const SampleHeader& h,
                  std::span<const std::byte> payload);

 private:
  const std::shared_ptr<Participant> participant_;
  QosCell<dds::pub::qos::PublisherQos> qos_;
  QosCell<dds::pub::qos::DataWriterQos> default_writer_qos_{{}};
  ListenerSlot<dds::pub::PublisherListener> listener_;
  Children<Writer> writers_;
  // Presentation coherent_access, and the GROUP scope (one set for all its writers): fixed
  // once enabled (Presentation cannot change).
  const bool coherent_;
  const bool group_;
  std::mutex set_mu_;  // a leaf
  int set_depth_ = 0;  // guarded by set_mu_: begin_coherent_changes nesting
  std::atomic<bool> collecting_{false};
  struct SetPart {
    std::shared_ptr<Writer> writer;
    std::vector<std::byte> messages;  // coherent_set payload
  };
  std::vector<SetPart> set_;  // guarded by set_mu_
};

class Subscriber final : public detail::SubscriberCore {
 public:
  Subscriber(std::shared_ptr<Participant> p, const dds::sub::qos::SubscriberQos& q,
             InstanceHandle h);
  std::shared_ptr<detail::ParticipantCore> participant() const override { return participant_; }
  dds::sub::qos::SubscriberQos qos() const override;
  void qos(const dds::sub::qos::SubscriberQos& q) override;
  dds::sub::qos::DataReaderQos default_datareader_qos() const override;
  void default_datareader_qos(const dds::sub::qos::DataReaderQos& q) override;
  std::shared_ptr<detail::ReaderCore> create_reader(
      const std::shared_ptr<detail::TopicCore>& topic, const dds::sub::qos::DataReaderQos& q,
      const detail::ReaderHookFactory& hook, const StatusMask& mask,
      std::shared_ptr<detail::FilteredTopicCore> filtered) override;
  std::vector<std::shared_ptr<detail::ReaderCore>> readers_with(
      const dds::sub::status::DataState& state) const override;
  void notify_datareaders() override;
  std::vector<std::shared_ptr<detail::ReaderCore>> readers() const override;
  void listener(dds::sub::SubscriberListener* l, const StatusMask& mask) override;
  dds::sub::SubscriberListener* listener() const override;
  void enable() override;
  void close() override;
  dds::sub::SubscriberListener* listener_for(const StatusMask& status) const;
  Participant& owner() const { return *participant_; }
  // begin/end_access. With GROUP scope, an open access holds new deliveries back from the
  // subscriber's readers (each keeps them aside) until the last end_access, so that what
  // the application reads across readers inside it is one consistent cut: every coherent
  // set whole, and readers_with() in the order of the samples.
  void begin_access() override;
  void end_access() override;
  // GROUP scope (ordered or coherent access).
  [[nodiscard]] bool group() const noexcept { return group_; }
  // Whether deliveries are held back now (Router lock held: the protocol thread).
  [[nodiscard]] bool holding() const noexcept { return group_ && access_depth_.load() > 0; }
  // The insertion sequence its readers' caches share (GROUP scope), else null.
  [[nodiscard]] const std::shared_ptr<std::atomic<std::uint64_t>>& sequence() const noexcept {
    return sequence_;
  }
  // A built-in reader on `t` (builtin.cpp), enabled, never announced.
  std::shared_ptr<Reader> create_builtin_reader(const std::shared_ptr<Topic>& t,
                                                const dds::sub::qos::DataReaderQos& q);
  // A reader of this subscriber has new data (its statuses already set): the listener of
  // DATA_ON_READERS, or the reader's own DATA_AVAILABLE one when nobody listens for that.
  void data_arrived(Reader& reader);

 private:
  const std::shared_ptr<Participant> participant_;
  QosCell<dds::sub::qos::SubscriberQos> qos_;
  QosCell<dds::sub::qos::DataReaderQos> default_reader_qos_{{}};
  ListenerSlot<dds::sub::SubscriberListener> listener_;
  Children<Reader> readers_;
  const bool group_;
  const std::shared_ptr<std::atomic<std::uint64_t>> sequence_;
  std::atomic<int> access_depth_{0};  // begin_access nesting; changed between deliveries
};

class Writer final : public detail::WriterCore {
 public:
  Writer(std::shared_ptr<Publisher> pub, std::shared_ptr<Topic> topic,
         const dds::pub::qos::DataWriterQos& q, InstanceHandle h, std::uint64_t guid);
  ~Writer() override;
  const detail::TypeSupport& type() const override { return topic_->type(); }
  std::shared_ptr<detail::TopicCore> topic() const override { return topic_; }
  std::shared_ptr<detail::PublisherCore> publisher() const override { return publisher_; }
  dds::pub::qos::DataWriterQos qos() const override;
  void qos(const dds::pub::qos::DataWriterQos& q) override;
  void write(const void* sample, const dds::core::Time& ts, InstanceHandle handle) override;
  InstanceHandle register_instance(const void* key_holder, const dds::core::Time& ts) override;
  void unregister_instance(InstanceHandle h, const dds::core::Time& ts) override;
  void dispose_instance(InstanceHandle h, const dds::core::Time& ts) override;
  InstanceHandle lookup_instance(const void* key_holder) const override;
  std::shared_ptr<const void> key_value(InstanceHandle h) const override;
  void* loan() override;
  bool is_loan(const void* sample) const override;
  void write_loan(const void* sample, const dds::core::Time& ts) override;
  void return_loan(const void* sample) override;
  void assert_liveliness() override;
  void wait_for_acknowledgments(const dds::core::Duration& timeout) override;
  dds::core::InstanceHandleSeq matched_subscriptions() const override;
  void listener(std::shared_ptr<detail::WriterListenerHook> hook, const StatusMask& mask) override;
  std::shared_ptr<detail::WriterListenerHook> listener() const override;
  // A writer created disabled is announced (and matched) when enabled; PreconditionNotMet
  // while its publisher is disabled.
  void enable() override;
  void close() override;

  std::uint64_t guid() const noexcept { return guid_; }
  std::uint64_t topic_id() const noexcept { return topic_id_; }
  group::Channel channel() const noexcept { return channel_; }
  // Its floors for the matched readers on `node` (a repair: dcps/repair.hpp).
  std::vector<RepairFloor> floors_for(NodeId node) const;
  // RELIABLE KEEP_LAST: the depth its changes are kept to for repairs; else nullopt.
  std::optional<std::int32_t> kept_depth() const;
  // Samples a BEST_EFFORT writer dropped rather than wait for a slot.
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  WriterRecord record() const;
  // The largest sample it can write, encapsulated (WriterRecord::max_sample); 0: no bound.
  std::uint64_t bound() const;
  bool manual_by_participant() const;
  // After construction (timers hold the writer weakly).
  void start_timers();
  // Matching (predicate thread, through the participant). `local`: the reader runs in this
  // process (group::View::same_process, judged in the view that matched it).
  void matched(std::uint64_t reader_guid, int delta, bool local = false);
  void incompatible(const std::vector<dds::core::policy::QosPolicyId>& ids);
  using Target = ListenerTarget<detail::WriterListenerHook, dds::pub::AnyDataWriterListener>;
  Target target(const StatusMask& status) const;

 private:
  struct Instance {
    InstanceHandle handle;
    std::vector<std::byte> key_holder;  // CDR of the first sample registered/written for it
    std::chrono::steady_clock::time_point last_write{};
    bool registered = false;
  };
  Instance& instance_for(const void* sample, const cdr::KeyHash& key, bool& created);
  // Checks the sample's key against `handle` and notes the write; returns the key hash and
  // sets `created` to the instance's handle if this write created it (else nil).
  cdr::KeyHash note_write(const void* sample, InstanceHandle handle, InstanceHandle& created);
  void forget_created(const cdr::KeyHash& key, InstanceHandle created);
  // Removes a loan from the book (PreconditionNotMetError if `sample` is not one).
  Slot end_loan(const void* sample);
  void send(SampleKind kind, const cdr::KeyHash& key, const dds::core::Time& ts,
            std::span<const std::byte> payload, const void* sample);
  // A writer with no bound, before a sample of `payload` bytes: where that is more than it
  // asked room for so far (WriterRecord::room, in powers of two past kUnboundedRoom), asks
  // for more (its record again) and waits for the view that gives it, up to kMatchWait;
  // true then.
  bool make_room(std::size_t payload);
  // Publishes one message (send()); a BEST_EFFORT writer that finds no slot drops it (a loss
  // its readers count) rather than throw.
  void publish_message(const SampleHeader& h, std::span<const std::byte> payload,
                       const void* sample);
  // Local delivery before write() returns (docs/dcps.md, "Your own samples"): where a
  // reader of this process is matched and no other process holds places in the topic's
  // order, waits (up to the write's deadline, at least 100 ms) until every member
  // delivered what it just committed. Call right after a commit; it does nothing on the
  // protocol or executor threads (a listener that writes never waits for a delivery).
  void see_own_sample();
  // Into the publisher's open coherent set; false when none is open.
  bool send_to_set(const SampleHeader& h, std::span<const std::byte> payload, const void* sample);
  // The next message number (SampleHeader::seq), and giving it back when the message was
  // not sent after all (a write that failed), if no later one was taken meanwhile.
  std::uint64_t take_seq() noexcept { return seq_.fetch_add(1, std::memory_order_relaxed) + 1; }
  void give_back_seq(std::uint64_t seq) noexcept {
    auto expected = seq;
    (void)seq_.compare_exchange_strong(expected, seq - 1, std::memory_order_relaxed);
  }

 public:
  // Publishes a coherent set of this writer's messages (Publisher::end_coherent_changes).
  void publish_set(const std::vector<std::byte>& messages);

 private:
  void lifecycle(InstanceHandle h, const dds::core::Time& ts, bool dispose);
  // A logged writer: OutOfResourcesError when its topic's log failed at this member.
  void check_log() const;
  void check_deadlines();
  void check_liveliness();
  template <class Record, class HookCall, class AnyCall>
  void event(const StatusMask& bit, Record record, HookCall hook_call, AnyCall any_call);
  group::TimePoint deadline() const;
  group::TimePoint clock_now() const noexcept { return publisher_->owner().clock_now(); }
  dds::core::Time wall_now() const { return publisher_->owner().wall_now(); }

  const std::shared_ptr<Publisher> publisher_;
  const std::shared_ptr<Topic> topic_;
  const std::uint64_t guid_;
  const std::uint64_t topic_id_;
  const bool logged_;             // its samples go to the durable log (dcps/retained.hpp)
  const bool best_effort_;        // BEST_EFFORT: a sample that would wait for a slot is dropped
  const cdr::Encoding encoding_;  // its samples' (DataRepresentation, else the type's)
  std::atomic<std::uint64_t> dropped_{0};
  std::atomic<std::uint64_t> seq_{0};   // the last message number taken
  std::atomic<std::uint64_t> room_{0};  // WriterRecord::room (make_room())
  group::Channel channel_;
  QosCell<dds::pub::qos::DataWriterQos> qos_;
  mutable std::mutex mu_;
  std::map<cdr::KeyHash, Instance> instances_;
  std::map<std::uint64_t, cdr::KeyHash> by_handle_;
  std::map<const void*, Slot> loans_;
  std::atomic<std::size_t> loans_out_{0};  // loans_.size(), read without mu_
  // Matched readers, each with this writer's last message number when it matched.
  std::map<std::uint64_t, std::uint64_t> readers_;
  // The matched readers of this process (this participant's, or another participant's
  // here), as judged when each matched: the only readers see_own_sample() waits for.
  // own_readers_ is its size, read without mu_.
  std::set<std::uint64_t> local_readers_;
  std::atomic<std::size_t> own_readers_{0};
  std::shared_ptr<detail::WriterListenerHook> hook_;
  StatusMask mask_;
  std::chrono::steady_clock::time_point last_assert_{};
  bool liveliness_lost_reported_ = false;
  group::Executor::TimerId deadline_timer_ = 0, liveliness_timer_ = 0;
};

class Reader final : public detail::ReaderCore, public TopicSink {
 public:
  // `filtered`: the ContentFilteredTopic it reads (null for the plain topic).
  Reader(std::shared_ptr<Subscriber> sub, std::shared_ptr<Topic> topic,
         const dds::sub::qos::DataReaderQos& q, InstanceHandle h, std::uint64_t guid,
         std::shared_ptr<detail::FilteredTopicCore> filtered);
  ~Reader() override;
  const detail::TypeSupport& type() const override { return topic_->type(); }
  std::shared_ptr<detail::TopicCore> topic() const override { return topic_; }
  std::shared_ptr<detail::SubscriberCore> subscriber() const override { return subscriber_; }
  dds::sub::qos::DataReaderQos qos() const override;
  void qos(const dds::sub::qos::DataReaderQos& q) override;
  std::shared_ptr<HistoryCache> history_cache() const override { return cache_; }
  void read(const Selection& selection, detail::SampleSink& sink) override;
  void take(const Selection& selection, detail::SampleSink& sink) override;
  InstanceHandle lookup_instance(const void* key_holder) const override;
  std::shared_ptr<const void> key_value(InstanceHandle h) const override;
  dds::core::InstanceHandleSeq matched_publications() const override;
  dds::sub::status::DataState default_state() const override {
    std::lock_guard lock(mu_);
    return default_state_;
  }
  void default_state(const dds::sub::status::DataState& s) override {
    std::lock_guard lock(mu_);
    default_state_ = s;
  }
  std::shared_ptr<detail::TopicDescriptionCore> description() const override {
    if (filtered_) return filtered_;
    return topic_;
  }
  void wait_for_historical_data(const dds::core::Duration& timeout) override;
  void listener(std::shared_ptr<detail::ReaderListenerHook> hook, const StatusMask& mask) override;
  std::shared_ptr<detail::ReaderListenerHook> listener() const override;
  void enable() override;
  void close() override;
  bool drive(std::chrono::steady_clock::time_point deadline, bool (*done)(const void*),
             const void* arg) override;

  // TopicSink (predicate thread).
  void on_sample(const ParsedSample& sample, NodeId sender) override;
  void on_batch_end() override;
  // Zero-copy receive (docs/dcps.md, "Loans on the reading side"): the samples this reader
  // reads in place that its cache still holds are copied, and it copies what comes until
  // its application takes again or its cache is empty.
  void unpin() override;
  // Its participant halted (it rejoins later): each matched writer's last message number is
  // kept, so that when the writer matches again the messages it sent meanwhile count as lost;
  // the cache forgets its instances' places in the total order (the domain it rejoins may
  // number its views afresh).
  void stash_positions();
  // Applies the deliveries held back while its GROUP subscriber's access was open (Router
  // lock held).
  void release_held();

  std::uint64_t guid() const noexcept { return guid_; }
  ReaderRecord record() const;
  // Matching (predicate thread, through the participant).
  void matched(const WriterRecord& w);
  void unmatched(std::uint64_t writer_guid);
  void incompatible(const std::vector<dds::core::policy::QosPolicyId>& ids);
  void writer_asserted(std::uint64_t writer_guid);
  // After construction (timers hold the reader weakly).
  void start_timers();
  // A built-in reader (builtin.cpp): never announced; its data comes from feed(). Called
  // before the reader is shared.
  void make_builtin() noexcept { builtin_ = true; }
  [[nodiscard]] bool is_builtin() const noexcept { return builtin_; }
  void feed(std::vector<Change> changes);
  // Raise DATA_AVAILABLE on this reader (its listener, else the subscriber's, else the
  // participant's).
  void raise_data_available();
  // SAMPLE_LOST: one sample, said on stderr with `why` (a malformed or unreadable one); or
  // `count` samples quietly (BY_SOURCE_TIMESTAMP drops, a gap after a rejoin).
  void raise_sample_lost(const std::string& why);
  void count_sample_lost(std::int32_t count);
  using Target = ListenerTarget<detail::ReaderListenerHook, dds::sub::AnyDataReaderListener>;
  Target target(const StatusMask& status) const;
  // The retained history (dcps/retained.hpp): this reader waits for it (at creation, when
  // it asks for history), then receives it once, before any live sample (control thread,
  // at the view boundary where its matches start).
  void expect_history();
  // Still waiting for it (its participant halted and rejoined meanwhile: it waits again).
  [[nodiscard]] bool awaits_history() const;
  // `lost`: samples of it a damaged log lost (SAMPLE_LOST, once).
  void receive_history(const std::vector<Historical>& history, std::uint64_t lost = 0);
  // A repair (docs/dcps.md, "Repair"): of its matched writers' messages, those above the
  // floor each writer gave this reader; the cache drops what it has already (protocol
  // thread). Returns how many changes it took.
  std::size_t repair(const Repair& repair);
  std::uint64_t topic_id() const noexcept { return topic_id_; }
  bool reliable() const;

 private:
  template <class Record, class HookCall, class AnyCall>
  void event(const StatusMask& bit, Record record, HookCall hook_call, AnyCall any_call);
  // A delivered message as a change of this reader's cache (nullopt: reported, dropped).
  // `received`: its reception timestamp.
  std::optional<Change> make_change(const ParsedSample& sample, std::int32_t strength,
                                    const dds::core::Duration& lifespan,
                                    const dds::core::Time& received);
  // A native sample read where it lies, holding its slot (group::Pins); null where it
  // cannot be (not in place, this reader copying, a size or alignment that does not fit).
  std::shared_ptr<const void> in_place(const ParsedSample& sample);
  // in_place_ sheds the samples nobody holds any more once it has this many.
  static constexpr std::size_t kInPlaceSweep = 256;
  // Inserts changes into the cache and raises what follows (rejections, DATA_AVAILABLE).
  // `stream`: delivered changes, of which those a repair went ahead of (duplicate, superseded)
  // are SAMPLE_LOST too: the reader never takes them.
  void insert(std::vector<Change>& changes, std::vector<InsertResult>& results,
              bool stream = false);
  void on_read();
  // DATA_AVAILABLE and its subscriber's DATA_ON_READERS (data_mu_ held).
  void mark_data_available();
  // The cache learns that `writer` is gone; true when that left samples to read (the
  // statuses are set then).
  bool lose_writer(InstanceHandle writer);
  // Held across an insertion and the DATA_AVAILABLE it sets, and across a read or take and
  // the clearing that follows, so neither pair interleaves with the other: the status is
  // never set for data a take already returned, nor cleared for data it did not see. Taken
  // before the HistoryCache's lock and the StatusBook's.
  std::mutex data_mu_;
  void check_deadlines();
  void check_liveliness();
  void watch_liveliness(std::chrono::steady_clock::time_point at);
  void schedule_expiry();
  group::TimePoint clock_now() const noexcept { return subscriber_->owner().clock_now(); }
  dds::core::Time wall_now() const { return subscriber_->owner().wall_now(); }

  const std::shared_ptr<Subscriber> subscriber_;
  const std::shared_ptr<Topic> topic_;
  const std::uint64_t guid_;
  const std::uint64_t topic_id_;
  const std::shared_ptr<detail::FilteredTopicCore> filtered_;  // null: the plain topic
  const detail::ContentFilterCore* const filter_;              // its filter, or null
  dds::sub::status::DataState default_state_ = dds::sub::status::DataState::any();  // mu_
  std::shared_ptr<HistoryCache> cache_;
  // The encodings it takes (its DataRepresentation, else all the type allows): announced.
  const dds::core::policy::DataRepresentationIdSeq representations_;
  QosCell<dds::sub::qos::DataReaderQos> qos_;
  mutable std::mutex mu_;
  std::map<std::uint64_t, MatchedWriter> writers_;
  std::shared_ptr<detail::ReaderListenerHook> hook_;
  StatusMask mask_;
  std::map<std::uint64_t, std::chrono::steady_clock::time_point> instance_seen_;
  bool history_received_ = true;  // mu_: false while the retained history is due
  std::condition_variable history_cv_;
  group::Executor::TimerId deadline_timer_ = 0, liveliness_timer_ = 0, expiry_timer_ = 0;
  dds::core::Time expiry_at_ = dds::core::Time::invalid();
  // Predicate thread only: the batch being collected.
  std::vector<Change> held_;  // delivered while the subscriber held them back (Router lock)
  std::uint64_t missed_ = 0;  // protocol thread: messages found missing in this batch
  // Protocol thread: when this batch was received (the reception timestamp of its samples:
  // one clock read a batch, not one a sample); reset by on_batch_end().
  std::optional<dds::core::Time> batch_received_;
  // stash_positions(): per writer, its last message number before the halt (mu_).
  std::map<std::uint64_t, std::uint64_t> resume_seq_;
  std::vector<Change> pending_;
  std::vector<InsertResult> results_;
  // Zero-copy receive (protocol thread): the samples read in place (weakly: the cache or a
  // LoanedSamples holds them), and whether a sender needed them back since the application
  // last took or the cache was last empty (new samples are copies until then); took_: a
  // take() since (any thread).
  std::vector<std::weak_ptr<const void>> in_place_;
  bool copying_ = false;
  std::atomic<bool> took_{false};
  std::atomic<bool> subscribed_{false};
  std::atomic<bool> data_available_posted_{false};  // coalesces DATA_AVAILABLE calls
  bool builtin_ = false;
};

}  // namespace spindle::dcps
