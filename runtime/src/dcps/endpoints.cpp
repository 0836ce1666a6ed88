// Publisher, Subscriber, DataWriter and DataReader cores (see entities.hpp).
#include <algorithm>
#include <bit>
#include <iostream>
#include <limits>
#include <set>
#include <thread>
#include <unordered_map>

#include <dds/domain/DomainParticipantListener.hpp>
#include <dds/pub/AnyDataWriter.hpp>
#include <dds/sub/AnyDataReader.hpp>
#include <dds/sub/Subscriber.hpp>

#include "dcps/entities.hpp"
#include "qos/checks.hpp"

namespace spindle::dcps {

namespace {

using SteadyClock = std::chrono::steady_clock;
namespace policy = dds::core::policy;

SteadyClock::duration to_steady(const dds::core::Duration& d) {
  return std::chrono::duration_cast<SteadyClock::duration>(d.to_chrono());
}

bool unordered(const dds::core::policy::Durability& d, const spindle::policy::Consistency& c) {
  return qos::effective_consistency(d, c) == spindle::policy::ConsistencyKind::UNORDERED;
}

HistoryCacheConfig cache_config(const dds::sub::qos::DataReaderQos& q,
                                const dds::sub::qos::SubscriberQos& sq) {
  HistoryCacheConfig c;
  const auto& h = q.policy<policy::History>();
  c.keep_all = h.kind() == policy::HistoryKind::KEEP_ALL;
  c.depth = h.depth();
  const auto& rl = q.policy<policy::ResourceLimits>();
  c.max_samples = rl.max_samples();
  c.max_instances = rl.max_instances();
  c.max_samples_per_instance = rl.max_samples_per_instance();
  c.by_source_timestamp = q.policy<policy::DestinationOrder>().kind() ==
                          policy::DestinationOrderKind::BY_SOURCE_TIMESTAMP;
  c.exclusive_ownership = q.policy<policy::Ownership>().kind() == policy::OwnershipKind::EXCLUSIVE;
  c.minimum_separation = q.policy<policy::TimeBasedFilter>().minimum_separation();
  const auto& rdl = q.policy<policy::ReaderDataLifecycle>();
  c.autopurge_nowriter_samples_delay = rdl.autopurge_nowriter_samples_delay();
  c.autopurge_disposed_samples_delay = rdl.autopurge_disposed_samples_delay();
  // PRESENTATION: ordered access over a topic or a group hands samples out in delivery
  // order across instances (docs/dcps.md, "Presentation").
  const auto& p = sq.policy<policy::Presentation>();
  c.ordered =
      p.ordered_access() && p.access_scope() != policy::PresentationAccessScopeKind::INSTANCE;
  return c;
}

// Records a status event of `entity` — consumed when someone listens — and posts the call
// to whoever listens for it (Entity::target): its typed hook, else the untyped parent or
// participant listener `any`, given the entity as AnyEntity. The job holds the entity
// weakly (the predicate thread must not end up holding the last reference: make_entity())
// and calls only if the same listener still hears the status then (Participant::post_listener).
template <class AnyEntity, class Entity, class Record, class HookCall, class AnyCall>
void post_status(Participant& p, Entity& entity, const StatusMask& bit, Record record,
                 HookCall hook_call, AnyCall any_call) {
  auto target = entity.target(bit);
  const auto s = record(static_cast<bool>(target));
  if (!target) return;
  auto weak = std::weak_ptr<Entity>(std::static_pointer_cast<Entity>(entity.shared_from_this()));
  p.post_listener([weak, bit, target = std::move(target), s, hook_call, any_call] {
    const auto self = weak.lock();
    if (!self || self->target(bit) != target) return;  // replaced, removed or closed since
    if (target.hook) {
      hook_call(*target.hook, s);
    } else {
      AnyEntity e(std::static_pointer_cast<typename AnyEntity::Core>(self));
      any_call(*target.any, e, s);
    }
  });
}

// Whether `factory` creates its entities enabled: it is enabled itself and its
// EntityFactory says autoenable_created_entities (DCPS 2.2.3.6).
template <class Factory>
bool creates_enabled(const Factory& factory) {
  return factory.is_enabled() &&
         factory.qos().template policy<policy::EntityFactory>().autoenable_created_entities();
}

template <class Core>
std::shared_ptr<Core> self_of(Core* c) {
  return std::static_pointer_cast<Core>(c->shared_from_this());
}

std::string representation_name(policy::DataRepresentationId id) {
  return id == policy::DataRepresentationId::XCDR1 ? "XCDR1"
         : id == policy::DataRepresentationId::XML ? "XML"
                                                   : "XCDR2";
}

// Whether the type allows `id`; refuses XML, which Spindle does not encode.
bool type_allows(const detail::TypeSupport& t, policy::DataRepresentationId id, const char* who) {
  if (id == policy::DataRepresentationId::XML)
    throw dds::core::UnsupportedError(std::string(who) + "<" + std::string(t.type_name) +
                                      ">: DataRepresentation XML is not supported (XCDR1, XCDR2)");
  return (t.representations &
          (id == policy::DataRepresentationId::XCDR1 ? cdr::kXcdr1Bit : cdr::kXcdr2Bit)) != 0;
}

// The encoding a writer's samples take: its DataRepresentation's first, or the type's own.
cdr::Encoding writer_encoding(const detail::TypeSupport& t, const policy::DataRepresentation& p) {
  if (p.value().empty()) return t.encoding;
  const auto first = p.value().front();
  if (!type_allows(t, first, "DataWriter"))
    throw dds::core::InconsistentPolicyError(
        "DataWriter<" + std::string(t.type_name) + ">: DataRepresentation " +
        representation_name(first) +
        " is not among the type's data representations (its @data_representation)");
  for (const auto id : p.value())
    (void)type_allows(t, id, "DataWriter");
  return first == policy::DataRepresentationId::XCDR2 ? cdr::Encoding::Xcdr2 : cdr::Encoding::Xcdr1;
}

// The encodings a reader takes: those its DataRepresentation lists that the type allows, or
// all the type allows.
policy::DataRepresentationIdSeq reader_representations(const detail::TypeSupport& t,
                                                       const policy::DataRepresentation& p) {
  policy::DataRepresentationIdSeq out;
  if (p.value().empty()) {
    if ((t.representations & cdr::kXcdr1Bit) != 0)
      out.push_back(policy::DataRepresentationId::XCDR1);
    if ((t.representations & cdr::kXcdr2Bit) != 0)
      out.push_back(policy::DataRepresentationId::XCDR2);
    return out;
  }
  for (const auto id : p.value())
    if (type_allows(t, id, "DataReader")) out.push_back(id);
  if (out.empty())
    throw dds::core::InconsistentPolicyError(
        "DataReader<" + std::string(t.type_name) +
        ">: DataRepresentation lists none of the type's data representations (its "
        "@data_representation)");
  return out;
}

// `topic` as a topic of participant `p`, or PreconditionNotMet naming the entity
// (`what`) that was to be created on it.
std::shared_ptr<Topic> own_topic(const std::shared_ptr<detail::TopicCore>& topic,
                                 const Participant& p, const char* what) {
  auto t = std::dynamic_pointer_cast<Topic>(topic);
  if (!t || &t->owner() != &p) {
    throw dds::core::PreconditionNotMetError(std::string(what) +
                                             ": the topic belongs to another participant");
  }
  return t;
}

}  // namespace

// ----------------------------------------------------------------------------- Publisher

Publisher::Publisher(std::shared_ptr<Participant> p, const dds::pub::qos::PublisherQos& q,
                     InstanceHandle h)
    : PublisherCore(h),
      participant_(std::move(p)),
      qos_(q),
      coherent_(q.policy<policy::Presentation>().coherent_access()),
      group_(group_scope(q.policy<policy::Presentation>())) {}

void Publisher::begin_coherent_changes() {
  check_open();
  std::lock_guard lock(set_mu_);
  if (++set_depth_ == 1 && coherent_) collecting_.store(true, std::memory_order_release);
}

void Publisher::end_coherent_changes() {
  check_open();
  std::vector<SetPart> parts;
  {
    std::lock_guard lock(set_mu_);
    if (set_depth_ == 0) {
      throw dds::core::PreconditionNotMetError(
          "Publisher::end_coherent_changes: no coherent set is open (begin_coherent_changes, "
          "or a dds::pub::CoherentSet, first)");
    }
    if (--set_depth_ > 0) return;
    collecting_.store(false, std::memory_order_release);
    parts.swap(set_);
  }
  // Each writer's part goes out as one message, whole or not at all; a part that cannot
  // (a ring full past max_blocking_time, larger than the largest message) fails the call
  // and the rest still go.
  std::exception_ptr first_error;
  for (auto& part : parts) {
    try {
      part.writer->publish_set(part.messages);
    } catch (...) {
      if (!first_error) first_error = std::current_exception();
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

bool Publisher::add_to_set(const std::shared_ptr<Writer>& w, const SampleHeader& h,
                           std::span<const std::byte> payload) {
  std::lock_guard lock(set_mu_);
  if (!collecting_.load(std::memory_order_relaxed)) return false;
  // GROUP scope: one part for every writer (the first one sends it, on the channel they all
  // share); TOPIC scope: one per writer.
  auto part = group_ ? set_.begin() : std::find_if(set_.begin(), set_.end(), [&](const SetPart& p) {
    return p.writer == w;
  });
  if (part == set_.end()) part = set_.insert(set_.end(), SetPart{w, {}});
  append_to_set(part->messages, h, payload);
  return true;
}

dds::pub::qos::PublisherQos Publisher::qos() const {
  return qos_.get();
}
void Publisher::qos(const dds::pub::qos::PublisherQos& q) {
  check_open();
  qos_.set_own(q);
}
dds::pub::qos::DataWriterQos Publisher::default_datawriter_qos() const {
  return default_writer_qos_.get();
}
void Publisher::default_datawriter_qos(const dds::pub::qos::DataWriterQos& q) {
  default_writer_qos_.set_default(q);
}

std::shared_ptr<detail::WriterCore> Publisher::create_writer(
    const std::shared_ptr<detail::TopicCore>& topic, const dds::pub::qos::DataWriterQos& q,
    const detail::WriterHookFactory& hook, const StatusMask& mask) {
  check_open();
  auto t = own_topic(topic, *participant_, "DataWriter");
  if (t->type().serialize == nullptr) {
    throw dds::core::PreconditionNotMetError("DataWriter: topic '" + t->name() + "' has type '" +
                                             std::string(t->type().type_name) +
                                             "', which has no codec (a built-in topic type)");
  }
  qos::check_consistent(q);
  participant_->check_grant(security::Action::publish, t->name(),
                            qos().policy<dds::core::policy::Partition>().name());
  // The writer's handle is its guid: what readers see as its publication handle.
  const auto guid = participant_->next_guid();
  auto w = make_entity<Writer>(participant_->bus(), self_of<Publisher>(this), t, q,
                               InstanceHandle(guid), guid);
  writers_.add(w);
  if (hook) w->listener(hook(w), mask);  // before the announcement: it hears every match
  if (!creates_enabled(*this)) {
    w->start_disabled();  // announced by enable()
    return w;
  }
  participant_->announce(w);
  w->start_timers();
  return w;
}

void Publisher::wait_for_acknowledgments(const dds::core::Duration& timeout) {
  check_open();
  auto& e = participant_->bus();
  const auto until = e.runtime().now() + to_steady(std::min(timeout, dds::core::Duration(3600, 0)));
  const auto writers = writers_.alive();
  const bool acked = e.runtime().wait_until(until, [&] {
    return std::all_of(writers.begin(), writers.end(),
                       [&](const auto& w) { return e.in_flight(w->channel()) == 0; });
  });
  if (!acked) {
    throw dds::core::TimeoutError(
        "wait_for_acknowledgments: samples are still waiting for some member to deliver them");
  }
}

std::vector<std::shared_ptr<detail::WriterCore>> Publisher::writers() const {
  std::vector<std::shared_ptr<detail::WriterCore>> out;
  for (auto& w : writers_.alive())
    if (!w->is_closed()) out.push_back(std::move(w));
  return out;
}

void Publisher::listener(dds::pub::PublisherListener* l, const StatusMask& mask) {
  listener_.set(l, mask);
  participant_->fence_listeners();
}
dds::pub::PublisherListener* Publisher::listener() const {
  return listener_.get();
}
dds::pub::PublisherListener* Publisher::listener_for(const StatusMask& status) const {
  return listener_.for_status(status);
}

void Publisher::enable() {
  if (is_enabled()) return;
  check_open();
  if (!participant_->is_enabled()) {
    throw dds::core::PreconditionNotMetError("Publisher::enable: its participant is not enabled");
  }
  PublisherCore::enable();
  if (creates_enabled(*this)) {
    for (const auto& w : writers_.alive())
      w->enable();
  }
}

void Subscriber::enable() {
  if (is_enabled()) return;
  check_open();
  if (!participant_->is_enabled()) {
    throw dds::core::PreconditionNotMetError("Subscriber::enable: its participant is not enabled");
  }
  SubscriberCore::enable();
  if (creates_enabled(*this)) {
    for (const auto& r : readers_.alive())
      r->enable();
  }
}

void Writer::enable() {
  if (is_enabled()) return;
  check_open();
  if (!publisher_->is_enabled()) {
    throw dds::core::PreconditionNotMetError(
        "DataWriter::enable: its publisher is not enabled (enable the publisher first)");
  }
  WriterCore::enable();
  auto self = std::static_pointer_cast<Writer>(shared_from_this());
  publisher_->owner().announce(self);
  start_timers();
}

void Reader::enable() {
  if (is_enabled()) return;
  check_open();
  if (!subscriber_->is_enabled()) {
    throw dds::core::PreconditionNotMetError(
        "DataReader::enable: its subscriber is not enabled (enable the subscriber first)");
  }
  ReaderCore::enable();
  if (builtin_) return;  // fed by its participant, never announced
  auto self = std::static_pointer_cast<Reader>(shared_from_this());
  subscriber_->owner().announce(self);
  start_timers();
}

void Publisher::close() {
  if (is_closed()) return;
  writers_.close_all();
  listener(nullptr, StatusMask::none());  // a closed entity calls no listener
  PublisherCore::close();
}

// ---------------------------------------------------------------------------- Subscriber

Subscriber::Subscriber(std::shared_ptr<Participant> p, const dds::sub::qos::SubscriberQos& q,
                       InstanceHandle h)
    : SubscriberCore(h),
      participant_(std::move(p)),
      qos_(q),
      group_(group_scope(q.policy<policy::Presentation>())),
      sequence_(group_ ? std::make_shared<std::atomic<std::uint64_t>>(0) : nullptr) {}

dds::sub::qos::SubscriberQos Subscriber::qos() const {
  return qos_.get();
}
void Subscriber::qos(const dds::sub::qos::SubscriberQos& q) {
  check_open();
  qos_.set_own(q);
}
dds::sub::qos::DataReaderQos Subscriber::default_datareader_qos() const {
  return default_reader_qos_.get();
}
void Subscriber::default_datareader_qos(const dds::sub::qos::DataReaderQos& q) {
  default_reader_qos_.set_default(q);
}

std::shared_ptr<detail::ReaderCore> Subscriber::create_reader(
    const std::shared_ptr<detail::TopicCore>& topic, const dds::sub::qos::DataReaderQos& q,
    const detail::ReaderHookFactory& hook, const StatusMask& mask,
    std::shared_ptr<detail::FilteredTopicCore> filtered) {
  check_open();
  auto t = own_topic(topic, *participant_, "DataReader");
  if (filtered && filtered->topic() != topic) {
    throw dds::core::PreconditionNotMetError("DataReader: the ContentFilteredTopic '" +
                                             filtered->name() + "' filters another topic");
  }
  qos::check_consistent(q);
  participant_->check_grant(security::Action::subscribe, t->name(),
                            qos().policy<dds::core::policy::Partition>().name());
  // The reader's handle is its guid: what writers see as its subscription handle.
  const auto guid = participant_->next_guid();
  auto r = make_entity<Reader>(participant_->bus(), self_of<Subscriber>(this), t, q,
                               InstanceHandle(guid), guid, std::move(filtered));
  readers_.add(r);
  if (hook) r->listener(hook(r), mask);  // before the announcement: it hears every match
  participant_->router().subscribe(topic_id(t->name()), r.get());
  if (!creates_enabled(*this)) {
    r->start_disabled();  // announced by enable()
    return r;
  }
  participant_->announce(r);
  r->start_timers();
  return r;
}

std::vector<std::shared_ptr<detail::ReaderCore>> Subscriber::readers_with(
    const dds::sub::status::DataState& state) const {
  std::vector<std::shared_ptr<detail::ReaderCore>> out;
  if (!group_) {
    for (auto& r : readers_.alive())
      if (!r->is_closed() && r->history_cache()->has_matching(state)) out.push_back(std::move(r));
    return out;
  }
  // GROUP scope: a reader once per sample, in the order the samples were delivered across
  // the group's topics (the readers' caches share one insertion sequence) — read one sample
  // from each, in turn (DCPS 2.2.2.5.2.10).
  std::vector<std::pair<std::uint64_t, std::shared_ptr<Reader>>> order;
  for (auto& r : readers_.alive()) {
    if (r->is_closed()) continue;
    for (const auto seq : r->history_cache()->sequence_of(state, SIZE_MAX))
      order.emplace_back(seq, r);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  out.reserve(order.size());
  for (auto& [seq, r] : order)
    out.push_back(std::move(r));
  return out;
}

void Subscriber::begin_access() {
  check_open();
  // Between two deliveries: a batch reaches all of this subscriber's readers before the
  // access opens, or (held back) none of them until it ends.
  participant_->router().between_deliveries([&] { access_depth_.fetch_add(1); });
}

void Subscriber::end_access() {
  check_open();
  bool open = false;
  participant_->router().between_deliveries([&] {
    const int depth = access_depth_.load();
    if (depth == 0) return;
    open = true;
    access_depth_.store(depth - 1);
    if (depth > 1 || !group_) return;
    for (auto& r : readers_.alive())
      r->release_held();
  });
  if (!open) {
    throw dds::core::PreconditionNotMetError(
        "Subscriber::end_access: no access is open (begin_access, or a "
        "dds::sub::CoherentAccess, first)");
  }
}

void Subscriber::notify_datareaders() {
  for (auto& r : readers_with(dds::sub::status::DataState::new_data()))
    std::static_pointer_cast<Reader>(r)->raise_data_available();
}

std::vector<std::shared_ptr<detail::ReaderCore>> Subscriber::readers() const {
  std::vector<std::shared_ptr<detail::ReaderCore>> out;
  for (auto& r : readers_.alive())
    if (!r->is_closed()) out.push_back(std::move(r));
  return out;
}

void Subscriber::listener(dds::sub::SubscriberListener* l, const StatusMask& mask) {
  listener_.set(l, mask);
  participant_->fence_listeners();
}
dds::sub::SubscriberListener* Subscriber::listener() const {
  return listener_.get();
}
dds::sub::SubscriberListener* Subscriber::listener_for(const StatusMask& status) const {
  return listener_.for_status(status);
}

void Subscriber::close() {
  if (is_closed()) return;
  readers_.close_all();
  listener(nullptr, StatusMask::none());  // a closed entity calls no listener
  SubscriberCore::close();
}

void Subscriber::data_arrived(Reader& reader) {
  const auto on_readers = StatusMask::data_on_readers();
  dds::sub::SubscriberListener* l = listener_for(on_readers);
  if (l == nullptr) l = participant_->listener_for(on_readers);
  if (l == nullptr) {
    reader.raise_data_available();
    return;
  }
  // Weak until the job runs: the predicate thread must not end up holding the last
  // reference (see make_entity()). Called only if `l` still hears DATA_ON_READERS then.
  participant_->post_listener([l, on_readers, weak = weak_from_this()] {
    const auto self = std::static_pointer_cast<Subscriber>(weak.lock());
    if (!self || self->is_closed()) return;
    auto* now = self->listener_for(on_readers);
    if (now == nullptr) now = self->participant_->listener_for(on_readers);
    if (now != l) return;
    self->statuses().clear_changes(on_readers);  // the listener was told (DCPS 2.2.4.1)
    dds::sub::Subscriber s(std::static_pointer_cast<SubscriberCore>(self));
    l->on_data_on_readers(s);
  });
}

// -------------------------------------------------------------------------------- Writer

std::uint64_t partition_key(const dds::core::policy::Partition& p) {
  std::set<std::string> names(p.name().begin(), p.name().end());
  if (names.empty()) names.insert("");
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the names, each closed by a NUL
  for (const auto& n : names) {
    for (const char c : n) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ULL;
    }
    h ^= 0xff;  // no byte of UTF-8 text
    h *= 0x100000001b3ULL;
  }
  return h == 0 ? 1 : h;
}

bool group_scope(const dds::core::policy::Presentation& p) {
  return p.access_scope() == policy::PresentationAccessScopeKind::GROUP &&
         (p.ordered_access() || p.coherent_access());
}

std::uint64_t group_channel_id(std::uint32_t node) {
  // Hashed like a topic name, but no topic name holds a NUL: no topic shares it.
  std::string name("\0group\0", 7);
  name += std::to_string(node);
  return topic_id(name);
}

group::Channel writer_channel(const std::string& topic_name, const dds::pub::qos::DataWriterQos& q,
                              const dds::pub::qos::PublisherQos& pq, std::uint32_t node) {
  const auto partition = partition_key(pq.policy<dds::core::policy::Partition>());
  if (group_scope(pq.policy<policy::Presentation>()))
    return group::Channel{group_channel_id(node), group::Ordering::atomic, partition};
  return group::Channel{
      topic_id(topic_name),
      unordered(q.policy<policy::Durability>(), q.policy<spindle::policy::Consistency>())
          ? group::Ordering::unordered
          : group::Ordering::atomic,
      partition};
}

group::Channel writer_channel(const WriterRecord& w) {
  return writer_channel(w.topic_name, w.qos, w.publisher_qos, guid_node(w.guid));
}

Writer::Writer(std::shared_ptr<Publisher> pub, std::shared_ptr<Topic> topic,
               const dds::pub::qos::DataWriterQos& q, InstanceHandle h, std::uint64_t guid)
    : WriterCore(h),
      publisher_(std::move(pub)),
      topic_(std::move(topic)),
      guid_(guid),
      topic_id_(dcps::topic_id(topic_->name())),
      logged_(logs(q)),
      best_effort_(q.policy<policy::Reliability>().kind() == policy::ReliabilityKind::BEST_EFFORT),
      encoding_(writer_encoding(topic_->type(), q.policy<policy::DataRepresentation>())),
      qos_(q) {
  channel_ = writer_channel(topic_->name(), q, publisher_->qos(), guid_node(guid));
  last_assert_ = clock_now();
}

Writer::~Writer() {
  close();
}

void Writer::close() {
  if (is_closed()) return;
  // Loans still out are returned: their slots must be committed for the ring to move.
  std::map<const void*, Slot> loans;
  {
    std::lock_guard lock(mu_);
    loans.swap(loans_);
    loans_out_.store(0, std::memory_order_relaxed);
  }
  for (auto& [p, slot] : loans)
    publisher_->owner().router().abandon(slot, deadline());
  // Unregister (and, with autodispose, dispose) what is still registered, then retire.
  std::vector<InstanceHandle> live;
  {
    std::lock_guard lock(mu_);
    for (const auto& [k, i] : instances_)
      live.push_back(i.handle);
  }
  for (auto h : live) {
    try {
      unregister_instance(h, wall_now());
    } catch (const dds::core::Exception& e) {
      // Once: the next ones would fail alike (a halted member, a failed log).
      std::cerr << "spindle: closing a writer of '" << topic_->name() << "': unregistering "
                << live.size() << " instance(s) failed: " << e.what() << '\n';
      break;
    }
  }
  auto& d = publisher_->owner().executor();
  d.cancel(deadline_timer_);
  d.cancel(liveliness_timer_);
  if (is_enabled()) publisher_->owner().retire_writer(guid_);  // else never announced
  listener(nullptr, StatusMask::none());                       // a closed entity calls no listener
  WriterCore::close();
}

dds::pub::qos::DataWriterQos Writer::qos() const {
  return qos_.get();
}
void Writer::qos(const dds::pub::qos::DataWriterQos& q) {
  check_open();
  qos_.set_own(q);
}

WriterRecord Writer::record() const {
  WriterRecord r;
  r.guid = guid_;
  r.topic_name = topic_->name();
  r.type_name = std::string(topic_->type().type_name);
  r.qos = qos();
  if (r.qos.policy<policy::DataRepresentation>().value().empty())  // the type's choice, named
    r.qos.policy(policy::DataRepresentation({encoding_ == cdr::Encoding::Xcdr2
                                                 ? policy::DataRepresentationId::XCDR2
                                                 : policy::DataRepresentationId::XCDR1}));
  r.publisher_qos = publisher_->qos();
  r.topic_data = topic_->qos().policy<dds::core::policy::TopicData>();
  // What the layout reserves for its messages (group::ChannelDemand::max_sample): the type's
  // bound where it has one for the encoding this writer uses, and no bound where a coherent
  // set may gather any number of samples into one message.
  r.max_sample = bound();
  if (r.max_sample == 0) r.room = room_.load(std::memory_order_relaxed);
  return r;
}

std::uint64_t Writer::bound() const {
  const auto& type = topic_->type();
  if (type.max_size != cdr::kUnbounded && encoding_ == type.encoding &&
      !publisher_->qos().policy<policy::Presentation>().coherent_access())
    return std::max<std::uint64_t>(type.max_size, type.native_size);
  return 0;
}

// The topic's RDMC space is laid out from the writers' records (group::ChannelDemand::room):
// an unbounded type's writer asks for more before it writes a sample larger than it asked
// for so far, then waits (about a view change, as creating an endpoint does) for the view
// that gives it. The engine takes such a sample meanwhile only in a view that has the room.
bool Writer::make_room(std::size_t payload) {
  const std::uint64_t want = std::bit_ceil(std::uint64_t{payload});
  if (want <= group::kUnboundedRoom || bound() != 0) return false;
  auto& owner = publisher_->owner();
  auto& router = owner.router();
  if (payload > router.max_sample()) return false;  // refused, naming the setting
  router.expect_room(channel_, want);
  std::uint64_t had = room_.load(std::memory_order_relaxed);
  do {
    if (had >= want) return false;
  } while (!room_.compare_exchange_weak(had, want, std::memory_order_relaxed));
  owner.announce_again(*this);
  auto& bus = owner.bus();
  auto& rt = bus.runtime();
  if (bus.on_protocol_thread() || rt.executor().on_executor_thread() ||
      rt.control().on_executor_thread())
    return true;  // reserve() waits up to the write's deadline
  (void)rt.wait_until(clock_now() + kMatchWait, [&] {
    const auto room = router.sendable(channel_);
    return !room || *room >= payload;
  });
  return true;
}

bool Writer::manual_by_participant() const {
  return qos_.read([](const auto& q) {
    return q.template policy<policy::Liveliness>().kind() ==
           policy::LivelinessKind::MANUAL_BY_PARTICIPANT;
  });
}

group::TimePoint Writer::deadline() const {
  const dds::core::Duration block = qos_.read(
      [](const auto& q) { return q.template policy<policy::Reliability>().max_blocking_time(); });
  if (block.is_infinite() || block > dds::core::Duration(86400, 0)) {
    return clock_now() + std::chrono::hours(24);
  }
  return clock_now() + to_steady(block);
}

Writer::Instance& Writer::instance_for(const void* sample, const cdr::KeyHash& key, bool& created) {
  auto it = instances_.find(key);
  created = it == instances_.end();
  if (!created) return it->second;
  Instance i;
  i.handle = publisher_->owner().next_instance_handle();
  const auto& t = topic_->type();
  try {
    i.key_holder.resize(t.size(sample, encoding_));
  } catch (const std::exception& e) {
    throw dds::core::InvalidDataError("DataWriter<" + std::string(t.type_name) +
                                      ">: the sample cannot be serialized: " + e.what());
  }
  (void)t.serialize(sample, i.key_holder, encoding_);
  by_handle_[i.handle.value()] = key;
  return instances_.emplace(key, std::move(i)).first->second;
}

void Writer::send(SampleKind kind, const cdr::KeyHash& key, const dds::core::Time& ts,
                  std::span<const std::byte> payload, const void* sample) {
  if (logged_) check_log();
  SampleHeader h;
  h.kind = kind;
  h.topic = topic_id_;
  h.writer = guid_;
  h.source_time_ns = ts.to_nanosecs();
  h.key = key;
  h.seq = take_seq();
  // A message that is not sent after all gives its number back: readers must not count a
  // failed write as lost. A BEST_EFFORT drop is a loss, and keeps it (publish_message).
  try {
    if (publisher_->collecting() && send_to_set(h, payload, sample)) return;
    publish_message(h, payload, sample);
  } catch (...) {
    give_back_seq(h.seq);
    throw;
  }
  see_own_sample();
}

void Writer::see_own_sample() {
  // Only a reader of this process waits on its delivery; with none (readers in other
  // processes alone: the usual case) a write costs nothing more.
  if (own_readers_.load(std::memory_order_relaxed) == 0) return;
  // A loan out keeps its slot's place in the ring, ahead of what was written after it:
  // nothing behind it is delivered before it is written, so waiting would only wait out the
  // deadline.
  if (loans_out_.load(std::memory_order_relaxed) != 0) return;
  auto& bus = publisher_->owner().bus();
  auto& rt = bus.runtime();
  // Delivery runs on the protocol thread, and listeners on the executors: a write from one
  // of them must not wait for itself.
  if (bus.on_protocol_thread() || rt.executor().on_executor_thread() ||
      rt.control().on_executor_thread())
    return;
  const auto mark = bus.local_sent_mark(channel_);
  if (!mark) return;
  // Usually a few microseconds away: the commit woke the protocol thread, and the message
  // is stable at once. Yield first (on a small machine that thread needs this core), then
  // the runtime's sleeps, up to the write's own deadline.
  for (int i = 0; i < 64; ++i) {
    if (bus.delivered_locally(channel_, *mark)) return;
    std::this_thread::yield();
  }
  (void)rt.wait_until(std::max(deadline(), clock_now() + std::chrono::milliseconds(100)),
                      [&] { return bus.delivered_locally(channel_, *mark); });
}

void Writer::publish_message(const SampleHeader& h, std::span<const std::byte> payload,
                             const void* sample) {
  auto& router = publisher_->owner().router();
  if (sample == nullptr) {
    make_room(payload.size());
    router.publish(
        channel_, h, payload.size(),
        [&](std::span<std::byte> out) { std::copy(payload.begin(), payload.end(), out.begin()); },
        deadline());
    return;
  }
  const auto& t = topic_->type();
  std::size_t size = 0;
  try {
    size = t.size(sample, encoding_);
  } catch (const std::exception& e) {
    throw dds::core::InvalidDataError("DataWriter<" + std::string(t.type_name) +
                                      ">: the sample cannot be serialized: " + e.what());
  }
  // Two pointers only: the router keeps `fill` in a std::function, whose small buffer (16
  // bytes) this fits, so a write allocates nothing (latency.wakeups counts it).
  const auto fill = [this, sample](std::span<std::byte> out) {
    const auto& type = topic_->type();
    const auto r = type.serialize(sample, out, encoding_);
    if (!r.ok()) {
      throw dds::core::InvalidDataError("DataWriter<" + std::string(type.type_name) +
                                        ">: the sample cannot be serialized: " + r.detail);
    }
  };
  // A sample that asked for more room waited for it; one that finds it not there yet waits
  // like a RELIABLE one (a view change of its own making, not a slow member).
  const bool grew = make_room(size);
  if (!best_effort_ || grew) {
    router.publish(channel_, h, size, fill, deadline());
    return;
  }
  // BEST_EFFORT never waits for a slow member: a sample that finds the ring full (or a
  // view change under way) is dropped, for every reader alike.
  try {
    router.publish(channel_, h, size, fill, clock_now());
  } catch (const dds::core::TimeoutError&) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool Writer::send_to_set(const SampleHeader& h, std::span<const std::byte> payload,
                         const void* sample) {
  std::vector<std::byte> bytes;
  if (sample != nullptr) {
    const auto& t = topic_->type();
    try {
      bytes.resize(t.size(sample, encoding_));
    } catch (const std::exception& e) {
      throw dds::core::InvalidDataError("DataWriter<" + std::string(t.type_name) +
                                        ">: the sample cannot be serialized: " + e.what());
    }
    const auto r = t.serialize(sample, bytes, encoding_);
    if (!r.ok()) {
      throw dds::core::InvalidDataError("DataWriter<" + std::string(t.type_name) +
                                        ">: the sample cannot be serialized: " + r.detail);
    }
    payload = bytes;
  }
  return publisher_->add_to_set(std::static_pointer_cast<Writer>(shared_from_this()), h, payload);
}

void Writer::publish_set(const std::vector<std::byte>& messages) {
  check_open();
  if (logged_) check_log();
  SampleHeader h;
  h.kind = SampleKind::coherent_set;
  h.topic = topic_id_;
  h.writer = guid_;
  h.source_time_ns = publisher_->owner().wall_now().to_nanosecs();
  auto& router = publisher_->owner().router();
  const auto fill = [&](std::span<std::byte> out) {
    std::copy(messages.begin(), messages.end(), out.begin());
  };
  if (messages.size() > router.max_sample()) {
    throw dds::core::PreconditionNotMetError(
        "CoherentSet::end: the coherent set of DataWriter of '" + topic_->name() + "' holds " +
        std::to_string(messages.size()) + " bytes, more than the largest message (" +
        std::to_string(router.max_sample()) + " bytes: engine.rdmc_buffer_size)");
  }
  const bool grew = make_room(messages.size());
  if (!best_effort_ || grew) {
    router.publish(channel_, h, messages.size(), fill, deadline());
  } else {
    try {
      router.publish(channel_, h, messages.size(), fill, clock_now());
    } catch (const dds::core::TimeoutError&) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  see_own_sample();
}

cdr::KeyHash Writer::note_write(const void* sample, InstanceHandle handle,
                                InstanceHandle& created) {
  const auto& t = topic_->type();
  cdr::KeyHash key{};
  try {
    if (t.keyed) key = t.key_hash(sample);
  } catch (const std::exception& e) {
    throw dds::core::InvalidDataError("DataWriter<" + std::string(t.type_name) +
                                      ">: the key cannot be serialized: " + e.what());
  }
  std::lock_guard lock(mu_);
  bool is_new = false;
  Instance& i = instance_for(sample, key, is_new);
  if (!handle.is_nil() && handle != i.handle) {
    if (is_new) {
      by_handle_.erase(i.handle.value());
      instances_.erase(key);
    }
    throw dds::core::PreconditionNotMetError(
        "DataWriter::write: the instance handle does not belong to the sample's key");
  }
  created = is_new ? i.handle : InstanceHandle::nil();
  i.registered = true;
  i.last_write = clock_now();
  last_assert_ = i.last_write;
  liveliness_lost_reported_ = false;
  return key;
}

// A failed write (larger than a slot, ring full, not serializable) must not leave behind an
// instance it created: no reader heard of it, and its key holder — that very sample — would
// be refused again when close() sends the unregister.
void Writer::forget_created(const cdr::KeyHash& key, InstanceHandle created) {
  if (created.is_nil()) return;
  std::lock_guard lock(mu_);
  auto it = instances_.find(key);
  if (it != instances_.end() && it->second.handle == created) {
    by_handle_.erase(created.value());
    instances_.erase(it);
  }
}

void Writer::write(const void* sample, const dds::core::Time& ts, InstanceHandle handle) {
  check_open();
  if (!is_enabled()) throw dds::core::NotEnabledError("DataWriter: not enabled");
  InstanceHandle created;
  const auto key = note_write(sample, handle, created);
  try {
    send(SampleKind::data, key, ts, {}, sample);
  } catch (...) {
    forget_created(key, created);
    throw;
  }
}

void* Writer::loan() {
  check_open();
  const auto& t = topic_->type();
  if (t.native_size == 0) {
    throw dds::core::UnsupportedError(
        "DataWriter<" + std::string(t.type_name) +
        ">::loan_sample: only samples of self-contained types (no strings, sequences, "
        "optional members or unions) can be built in an SMC slot; use write()");
  }
  (void)make_room(t.native_size);  // a coherent publisher's writer has no bound
  auto slot = publisher_->owner().router().reserve(channel_, t.native_size, deadline());
  std::lock_guard lock(mu_);
  loans_.emplace(slot.payload, slot);
  loans_out_.store(loans_.size(), std::memory_order_relaxed);
  return slot.payload;
}

bool Writer::is_loan(const void* sample) const {
  std::lock_guard lock(mu_);
  return loans_.contains(sample);
}

Slot Writer::end_loan(const void* sample) {
  std::lock_guard lock(mu_);
  auto it = loans_.find(sample);
  if (it == loans_.end()) {
    throw dds::core::PreconditionNotMetError("DataWriter: the sample is not on loan");
  }
  const Slot slot = it->second;
  loans_.erase(it);
  loans_out_.store(loans_.size(), std::memory_order_relaxed);
  return slot;
}

void Writer::check_log() const {
  const auto why = publisher_->owner().log_failure(topic_id_);
  if (why.empty()) return;
  throw dds::core::OutOfResourcesError(
      "DataWriter of '" + topic_->name() +
      "': the durable log of this topic failed at this member, so its samples can no longer "
      "be logged (what was written before is kept): " +
      why);
}

void Writer::write_loan(const void* sample, const dds::core::Time& ts) {
  check_open();
  if (logged_) check_log();
  Slot slot = end_loan(sample);
  cdr::KeyHash key{};
  try {
    InstanceHandle created;
    key = note_write(sample, {}, created);
  } catch (...) {
    publisher_->owner().router().abandon(slot, deadline());
    throw;
  }
  SampleHeader h;
  h.kind = SampleKind::data;
  h.flags = kFlagNative;
  h.topic = topic_id_;
  h.writer = guid_;
  h.source_time_ns = ts.to_nanosecs();
  h.key = key;
  h.seq = take_seq();
  try {
    // In a coherent set the loaned bytes join the set, and the slot goes back unused.
    if (publisher_->collecting() &&
        send_to_set(h, std::span<const std::byte>(slot.payload, topic_->type().native_size),
                    nullptr)) {
      publisher_->owner().router().abandon(slot, deadline());
      return;
    }
    publisher_->owner().router().commit(slot, h, topic_->type().native_size, deadline());
  } catch (...) {
    give_back_seq(h.seq);
    throw;
  }
  see_own_sample();
}

void Writer::return_loan(const void* sample) {
  Slot slot = end_loan(sample);
  publisher_->owner().router().abandon(slot, deadline());
}

InstanceHandle Writer::register_instance(const void* key_holder, const dds::core::Time&) {
  check_open();
  const auto& t = topic_->type();
  cdr::KeyHash key{};
  if (t.keyed) key = t.key_hash(key_holder);
  std::lock_guard lock(mu_);
  bool created = false;
  Instance& i = instance_for(key_holder, key, created);
  i.registered = true;
  return i.handle;
}

void Writer::lifecycle(InstanceHandle h, const dds::core::Time& ts, bool dispose) {
  check_open();
  if (!is_enabled()) throw dds::core::NotEnabledError("DataWriter: not enabled");
  cdr::KeyHash key{};
  std::vector<std::byte> holder;
  bool autodispose = false;
  {
    std::lock_guard lock(mu_);
    auto k = by_handle_.find(h.value());
    if (k == by_handle_.end()) {
      throw dds::core::PreconditionNotMetError(
          std::string(dispose ? "dispose_instance" : "unregister_instance") +
          ": the instance is not registered with this writer");
    }
    key = k->second;
    holder = instances_.at(key).key_holder;
    autodispose = qos_.read([](const auto& q) {
      return q.template policy<policy::WriterDataLifecycle>().autodispose_unregistered_instances();
    });
    if (!dispose) {
      instances_.erase(key);
      by_handle_.erase(k);
    }
  }
  if (dispose || autodispose) send(SampleKind::dispose, key, ts, holder, nullptr);
  if (!dispose) send(SampleKind::unregister, key, ts, holder, nullptr);
}

void Writer::unregister_instance(InstanceHandle h, const dds::core::Time& ts) {
  lifecycle(h, ts, false);
}

void Writer::dispose_instance(InstanceHandle h, const dds::core::Time& ts) {
  lifecycle(h, ts, true);
}

InstanceHandle Writer::lookup_instance(const void* key_holder) const {
  const auto& t = topic_->type();
  cdr::KeyHash key{};
  if (t.keyed) key = t.key_hash(key_holder);
  std::lock_guard lock(mu_);
  auto it = instances_.find(key);
  return it == instances_.end() ? InstanceHandle::nil() : it->second.handle;
}

std::shared_ptr<const void> Writer::key_value(InstanceHandle h) const {
  std::vector<std::byte> holder;
  {
    std::lock_guard lock(mu_);
    auto k = by_handle_.find(h.value());
    if (k == by_handle_.end()) {
      throw dds::core::InvalidArgumentError("DataWriter::key_value: unknown instance handle");
    }
    holder = instances_.at(k->second).key_holder;
  }
  std::string error;
  auto data = topic_->type().decode(holder, error);
  if (!data) throw dds::core::Error("DataWriter::key_value: " + error);
  return data;
}

void Writer::assert_liveliness() {
  check_open();
  {
    std::lock_guard lock(mu_);
    last_assert_ = clock_now();
    liveliness_lost_reported_ = false;
  }
  SampleHeader h;
  h.kind = SampleKind::liveliness;
  h.writer = guid_;
  h.source_time_ns = wall_now().to_nanosecs();
  publisher_->owner().router().publish(
      channel_, h, 0, [](std::span<std::byte>) {}, deadline());
}

void Writer::wait_for_acknowledgments(const dds::core::Duration& timeout) {
  publisher_->wait_for_acknowledgments(timeout);
}

dds::core::InstanceHandleSeq Writer::matched_subscriptions() const {
  dds::core::InstanceHandleSeq out;
  std::lock_guard lock(mu_);
  for (const auto& [g, floor] : readers_)
    out.emplace_back(g);
  return out;
}

std::vector<RepairFloor> Writer::floors_for(NodeId node) const {
  std::vector<RepairFloor> out;
  std::lock_guard lock(mu_);
  for (const auto& [g, floor] : readers_)
    if (guid_node(g) == node) out.push_back(RepairFloor{g, guid_, floor});
  return out;
}

std::optional<std::int32_t> Writer::kept_depth() const {
  return qos_.read([](const auto& q) -> std::optional<std::int32_t> {
    const auto& h = q.template policy<policy::History>();
    if (q.template policy<policy::Reliability>().kind() != policy::ReliabilityKind::RELIABLE ||
        h.kind() != policy::HistoryKind::KEEP_LAST)
      return std::nullopt;
    return std::max(1, h.depth());
  });
}

void Writer::listener(std::shared_ptr<detail::WriterListenerHook> hook, const StatusMask& mask) {
  {
    std::lock_guard lock(mu_);
    hook_ = std::move(hook);
    mask_ = mask;
  }
  publisher_->owner().fence_listeners();
}

Writer::Target Writer::target(const StatusMask& status) const {
  Target t;
  if (is_closed()) return t;
  {
    std::lock_guard lock(mu_);
    if (hook_ && has(mask_, status)) t.hook = hook_;
  }
  if (!t.hook) t.any = publisher_->listener_for(status);
  if (!t.hook && t.any == nullptr) t.any = publisher_->owner().listener_for(status);
  return t;
}
std::shared_ptr<detail::WriterListenerHook> Writer::listener() const {
  std::lock_guard lock(mu_);
  return hook_;
}

// A writer status: to the writer's listener, else the publisher's, else the participant's;
// with none listening it stays pending for status_changes() and StatusConditions.
template <class Record, class HookCall, class AnyCall>
void Writer::event(const StatusMask& bit, Record record, HookCall hook_call, AnyCall any_call) {
  post_status<dds::pub::AnyDataWriter>(publisher_->owner(), *this, bit, record, hook_call,
                                       any_call);
}

void Writer::matched(std::uint64_t reader_guid, int delta, bool local) {
  {
    std::lock_guard lock(mu_);
    const bool fresh =
        delta > 0
            // What it wrote before the match is no business of that reader (a repair's floor).
            ? readers_.emplace(reader_guid, seq_.load(std::memory_order_relaxed)).second
            : readers_.erase(reader_guid) > 0;
    if (fresh) {
      if (delta < 0)
        local_readers_.erase(reader_guid);
      else if (local)
        local_readers_.insert(reader_guid);
      own_readers_.store(local_readers_.size(), std::memory_order_relaxed);
    }
  }
  using S = dds::core::status::PublicationMatchedStatus;
  event(
      StatusMask::publication_matched(),
      [&](bool consume) {
        return statuses().publication_matched(delta, InstanceHandle(reader_guid), consume);
      },
      [](detail::WriterListenerHook& h, const S& s) { h.on_publication_matched(s); },
      [](dds::pub::AnyDataWriterListener& l, dds::pub::AnyDataWriter& w, const S& s) {
        l.on_publication_matched(w, s);
      });
}

void Writer::incompatible(const std::vector<dds::core::policy::QosPolicyId>& ids) {
  using S = dds::core::status::OfferedIncompatibleQosStatus;
  event(
      StatusMask::offered_incompatible_qos(),
      [&](bool consume) { return statuses().offered_incompatible_qos(ids, consume); },
      [](detail::WriterListenerHook& h, const S& s) { h.on_offered_incompatible_qos(s); },
      [](dds::pub::AnyDataWriterListener& l, dds::pub::AnyDataWriter& w, const S& s) {
        l.on_offered_incompatible_qos(w, s);
      });
}

// Timers hold the writer weakly: one that fires while the writer goes does nothing.
void Writer::start_timers() {
  const auto q = qos();
  auto& d = publisher_->owner().executor();
  const std::weak_ptr<Writer> weak = std::static_pointer_cast<Writer>(shared_from_this());
  if (const auto period = q.policy<policy::Deadline>().period(); !period.is_infinite()) {
    deadline_timer_ = d.schedule(clock_now() + to_steady(period), [weak] {
      if (auto w = weak.lock()) w->check_deadlines();
    });
  }
  const auto& live = q.policy<policy::Liveliness>();
  if (live.kind() != policy::LivelinessKind::AUTOMATIC && !live.lease_duration().is_infinite()) {
    liveliness_timer_ = d.schedule(clock_now() + to_steady(live.lease_duration()), [weak] {
      if (auto w = weak.lock()) w->check_liveliness();
    });
  }
}

void Writer::check_deadlines() {
  if (is_closed()) return;
  const auto period = to_steady(qos().policy<policy::Deadline>().period());
  const auto now = clock_now();
  std::vector<InstanceHandle> missed;
  {
    std::lock_guard lock(mu_);
    for (auto& [k, i] : instances_) {
      if (now - i.last_write >= period) {
        missed.push_back(i.handle);
        i.last_write = now;
      }
    }
  }
  using S = dds::core::status::OfferedDeadlineMissedStatus;
  for (auto h : missed) {
    event(
        StatusMask::offered_deadline_missed(),
        [&](bool consume) { return statuses().offered_deadline_missed(h, consume); },
        [](detail::WriterListenerHook& hk, const S& s) { hk.on_offered_deadline_missed(s); },
        [](dds::pub::AnyDataWriterListener& l, dds::pub::AnyDataWriter& w, const S& s) {
          l.on_offered_deadline_missed(w, s);
        });
  }
  const std::weak_ptr<Writer> weak = std::static_pointer_cast<Writer>(shared_from_this());
  deadline_timer_ = publisher_->owner().executor().schedule(now + period, [weak] {
    if (auto w = weak.lock()) w->check_deadlines();
  });
}

void Writer::check_liveliness() {
  if (is_closed()) return;
  const auto lease = to_steady(qos().policy<policy::Liveliness>().lease_duration());
  const auto now = clock_now();
  bool lost = false;
  {
    std::lock_guard lock(mu_);
    if (now - last_assert_ >= lease && !liveliness_lost_reported_) {
      liveliness_lost_reported_ = true;
      lost = true;
    }
  }
  if (lost) {
    using S = dds::core::status::LivelinessLostStatus;
    event(
        StatusMask::liveliness_lost(),
        [&](bool consume) { return statuses().liveliness_lost(consume); },
        [](detail::WriterListenerHook& h, const S& s) { h.on_liveliness_lost(s); },
        [](dds::pub::AnyDataWriterListener& l, dds::pub::AnyDataWriter& w, const S& s) {
          l.on_liveliness_lost(w, s);
        });
  }
  const std::weak_ptr<Writer> weak = std::static_pointer_cast<Writer>(shared_from_this());
  liveliness_timer_ = publisher_->owner().executor().schedule(
      now + std::max<SteadyClock::duration>(lease / 4, std::chrono::milliseconds(1)), [weak] {
        if (auto w = weak.lock()) w->check_liveliness();
      });
}

// -------------------------------------------------------------------------------- Reader

Reader::Reader(std::shared_ptr<Subscriber> sub, std::shared_ptr<Topic> topic,
               const dds::sub::qos::DataReaderQos& q, InstanceHandle h, std::uint64_t guid,
               std::shared_ptr<detail::FilteredTopicCore> filtered)
    : ReaderCore(h),
      subscriber_(std::move(sub)),
      topic_(std::move(topic)),
      guid_(guid),
      topic_id_(dcps::topic_id(topic_->name())),
      filtered_(std::move(filtered)),
      filter_(filtered_ ? filtered_->filter().get() : nullptr),
      cache_(std::make_shared<HistoryCache>(cache_config(q, subscriber_->qos()),
                                            &dds::core::Time::now, subscriber_->sequence())),
      representations_(
          reader_representations(topic_->type(), q.policy<policy::DataRepresentation>())),
      qos_(q) {}

Reader::~Reader() {
  close();
}

bool Reader::drive(std::chrono::steady_clock::time_point deadline, bool (*done)(const void*),
                   const void* arg) {
  if (is_closed()) return false;
  return subscriber_->owner().bus().drive(deadline, [&] { return done(arg); });
}

void Reader::close() {
  if (is_closed()) return;
  auto& owner = subscriber_->owner();
  owner.router().unsubscribe(topic_id_, this);  // waits for a delivery in progress
  auto& d = owner.executor();
  d.cancel(deadline_timer_);
  d.cancel(liveliness_timer_);
  d.cancel(expiry_timer_);
  if (is_enabled() && !builtin_) owner.retire_reader(guid_);  // else never announced
  listener(nullptr, StatusMask::none());                      // a closed entity calls no listener
  cache_->observers().close_all();  // its read conditions leave their WaitSets
  ReaderCore::close();
}

dds::sub::qos::DataReaderQos Reader::qos() const {
  return qos_.get();
}
void Reader::qos(const dds::sub::qos::DataReaderQos& q) {
  check_open();
  qos_.set_own(q);
}

ReaderRecord Reader::record() const {
  ReaderRecord r;
  r.guid = guid_;
  r.topic_name = topic_->name();
  r.type_name = std::string(topic_->type().type_name);
  r.qos = qos();
  r.qos.policy(policy::DataRepresentation(representations_));
  r.subscriber_qos = subscriber_->qos();
  r.topic_data = topic_->qos().policy<dds::core::policy::TopicData>();
  return r;
}

namespace {
ReadSelection to_cache(const detail::ReaderCore::Selection& s) {
  ReadSelection r;
  r.state = s.state;
  r.instance = s.instance;
  r.max_samples = s.max_samples;
  r.content = s.content;
  switch (s.scope) {
    case detail::ReaderCore::Scope::all:
      r.scope = ReadSelection::Scope::all;
      break;
    case detail::ReaderCore::Scope::instance:
      r.scope = ReadSelection::Scope::instance;
      break;
    case detail::ReaderCore::Scope::next_instance:
      r.scope = ReadSelection::Scope::next_instance;
      break;
  }
  return r;
}
}  // namespace

void Reader::read(const Selection& selection, detail::SampleSink& sink) {
  check_open();
  if (!is_enabled()) throw dds::core::NotEnabledError("DataReader::read: not enabled");
  std::lock_guard data(data_mu_);
  if (cache_->read(to_cache(selection), sink) == ReadStatus::bad_instance) {
    throw dds::core::InvalidArgumentError("DataReader::read: unknown instance handle");
  }
  on_read();
}

void Reader::take(const Selection& selection, detail::SampleSink& sink) {
  check_open();
  if (!is_enabled()) throw dds::core::NotEnabledError("DataReader::take: not enabled");
  std::lock_guard data(data_mu_);
  if (cache_->take(to_cache(selection), sink) == ReadStatus::bad_instance) {
    throw dds::core::InvalidArgumentError("DataReader::take: unknown instance handle");
  }
  took_.store(true, std::memory_order_relaxed);
  on_read();
}

void Reader::mark_data_available() {
  statuses().set_changes(StatusMask::data_available());
  subscriber_->statuses().set_changes(StatusMask::data_on_readers());
}

bool Reader::lose_writer(InstanceHandle writer) {
  std::lock_guard data(data_mu_);
  if (cache_->writer_lost(writer, wall_now()) == 0) return false;
  mark_data_available();  // NOT_ALIVE_NO_WRITERS samples to read
  return true;
}

void Reader::on_read() {
  statuses().clear_changes(StatusMask::data_available());
  subscriber_->statuses().clear_changes(StatusMask::data_on_readers());
}

InstanceHandle Reader::lookup_instance(const void* key_holder) const {
  const auto& t = topic_->type();
  cdr::KeyHash key{};
  if (t.keyed) key = t.key_hash(key_holder);
  return cache_->lookup_instance(key);
}

std::shared_ptr<const void> Reader::key_value(InstanceHandle h) const {
  return cache_->instance_key_data(h);
}

dds::core::InstanceHandleSeq Reader::matched_publications() const {
  dds::core::InstanceHandleSeq out;
  std::lock_guard lock(mu_);
  for (const auto& [g, w] : writers_)
    out.push_back(w.handle);
  return out;
}

void Reader::wait_for_historical_data(const dds::core::Duration& timeout) {
  // A reader that asks for no history (VOLATILE) has none to wait for; one that does gets
  // it at the view boundary where its matches start (Participant::settle).
  check_open();
  std::unique_lock lock(mu_);
  const auto received = [this] { return history_received_; };
  if (timeout.is_infinite()) {
    history_cv_.wait(lock, received);
    return;
  }
  if (!history_cv_.wait_for(lock, to_steady(timeout), received)) {
    throw dds::core::TimeoutError("wait_for_historical_data: the retained history of '" +
                                  topic_->name() + "' did not arrive within " +
                                  std::to_string(timeout.to_millisecs()) + " ms");
  }
}

void Reader::listener(std::shared_ptr<detail::ReaderListenerHook> hook, const StatusMask& mask) {
  {
    std::lock_guard lock(mu_);
    hook_ = std::move(hook);
    mask_ = mask;
  }
  subscriber_->owner().fence_listeners();
}

Reader::Target Reader::target(const StatusMask& status) const {
  Target t;
  if (is_closed()) return t;
  {
    std::lock_guard lock(mu_);
    if (hook_ && has(mask_, status)) t.hook = hook_;
  }
  if (!t.hook) t.any = subscriber_->listener_for(status);
  if (!t.hook && t.any == nullptr) t.any = subscriber_->owner().listener_for(status);
  return t;
}
std::shared_ptr<detail::ReaderListenerHook> Reader::listener() const {
  std::lock_guard lock(mu_);
  return hook_;
}

// A reader status: to the reader's listener, else the subscriber's, else the participant's.
template <class Record, class HookCall, class AnyCall>
void Reader::event(const StatusMask& bit, Record record, HookCall hook_call, AnyCall any_call) {
  post_status<dds::sub::AnyDataReader>(subscriber_->owner(), *this, bit, record, hook_call,
                                       any_call);
}

void Reader::raise_data_available() {
  const auto bit = StatusMask::data_available();
  if (!target(bit)) return;
  // One call pending at a time: a fast stream must not queue a call per batch.
  if (data_available_posted_.exchange(true)) return;
  subscriber_->owner().post_listener([bit, weak = weak_from_this()] {
    const auto self = std::static_pointer_cast<Reader>(weak.lock());
    if (!self) return;
    self->data_available_posted_.store(false);
    // Whoever hears it now (it may have changed since the post).
    const auto t = self->target(bit);
    if (!t) return;
    self->statuses().clear_changes(bit);  // the listener was told (DCPS 2.2.4.1)
    if (t.hook) {
      t.hook->on_data_available();
    } else {
      dds::sub::AnyDataReader r(std::static_pointer_cast<ReaderCore>(self));
      t.any->on_data_available(r);
    }
  });
}

void Reader::raise_sample_lost(const std::string& why) {
  std::cerr << "spindle: reader of '" << topic_->name() << "' lost a sample: " << why << '\n';
  count_sample_lost(1);
}

void Reader::count_sample_lost(std::int32_t count) {
  using S = dds::core::status::SampleLostStatus;
  event(
      StatusMask::sample_lost(),
      [&](bool consume) { return statuses().sample_lost(count, consume); },
      [](detail::ReaderListenerHook& h, const S& s) { h.on_sample_lost(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const S& s) {
        l.on_sample_lost(r, s);
      });
}

void Reader::matched(const WriterRecord& w) {
  MatchedWriter m;
  m.handle = InstanceHandle(w.guid);
  m.strength = w.qos.policy<policy::OwnershipStrength>().value();
  m.lifespan = w.qos.policy<policy::Lifespan>().duration();
  const auto& live = w.qos.policy<policy::Liveliness>();
  m.manual_liveliness = live.kind() != policy::LivelinessKind::AUTOMATIC;
  m.lease = live.lease_duration();
  m.last_seen = clock_now();
  bool start_watch = false;
  {
    std::lock_guard lock(mu_);
    // Matched again after its participant rejoined: where this writer's stream stood then.
    if (const auto it = resume_seq_.find(w.guid); it != resume_seq_.end()) {
      m.last_seq = it->second;
      resume_seq_.erase(it);
    }
    writers_[w.guid] = m;
    start_watch = m.watched() && liveliness_timer_ == 0;
  }
  if (start_watch) watch_liveliness(clock_now() + std::chrono::milliseconds(20));
  using S = dds::core::status::SubscriptionMatchedStatus;
  event(
      StatusMask::subscription_matched(),
      [&](bool consume) { return statuses().subscription_matched(+1, m.handle, consume); },
      [](detail::ReaderListenerHook& h, const S& s) { h.on_subscription_matched(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const S& s) {
        l.on_subscription_matched(r, s);
      });
  using L = dds::core::status::LivelinessChangedStatus;
  event(
      StatusMask::liveliness_changed(),
      [&](bool consume) { return statuses().liveliness_changed(+1, 0, m.handle, consume); },
      [](detail::ReaderListenerHook& h, const L& s) { h.on_liveliness_changed(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const L& s) {
        l.on_liveliness_changed(r, s);
      });
}

void Reader::unmatched(std::uint64_t writer_guid) {
  bool alive = false;
  {
    std::lock_guard lock(mu_);
    auto it = writers_.find(writer_guid);
    if (it == writers_.end()) return;
    alive = it->second.alive;
    writers_.erase(it);
  }
  const InstanceHandle h(writer_guid);
  if (lose_writer(h)) subscriber_->data_arrived(*this);
  using S = dds::core::status::SubscriptionMatchedStatus;
  event(
      StatusMask::subscription_matched(),
      [&](bool consume) { return statuses().subscription_matched(-1, h, consume); },
      [](detail::ReaderListenerHook& hk, const S& s) { hk.on_subscription_matched(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const S& s) {
        l.on_subscription_matched(r, s);
      });
  using L = dds::core::status::LivelinessChangedStatus;
  event(
      StatusMask::liveliness_changed(),
      [&](bool consume) {
        return statuses().liveliness_changed(alive ? -1 : 0, alive ? 0 : -1, h, consume);
      },
      [](detail::ReaderListenerHook& hk, const L& s) { hk.on_liveliness_changed(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const L& s) {
        l.on_liveliness_changed(r, s);
      });
}

void Reader::incompatible(const std::vector<dds::core::policy::QosPolicyId>& ids) {
  using S = dds::core::status::RequestedIncompatibleQosStatus;
  event(
      StatusMask::requested_incompatible_qos(),
      [&](bool consume) { return statuses().requested_incompatible_qos(ids, consume); },
      [](detail::ReaderListenerHook& h, const S& s) { h.on_requested_incompatible_qos(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const S& s) {
        l.on_requested_incompatible_qos(r, s);
      });
}

void Reader::writer_asserted(std::uint64_t writer_guid) {
  bool revived = false;
  {
    std::lock_guard lock(mu_);
    auto it = writers_.find(writer_guid);
    if (it == writers_.end()) return;
    if (it->second.watched()) it->second.last_seen = clock_now();
    if (!it->second.alive) {
      it->second.alive = true;
      revived = true;
    }
  }
  if (!revived) return;
  using L = dds::core::status::LivelinessChangedStatus;
  event(
      StatusMask::liveliness_changed(),
      [&](bool consume) {
        return statuses().liveliness_changed(+1, -1, InstanceHandle(writer_guid), consume);
      },
      [](detail::ReaderListenerHook& h, const L& s) { h.on_liveliness_changed(s); },
      [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const L& s) {
        l.on_liveliness_changed(r, s);
      });
}

std::optional<Change> Reader::make_change(const ParsedSample& sample, std::int32_t strength,
                                          const dds::core::Duration& lifespan,
                                          const dds::core::Time& received) {
  const auto& hdr = sample.header;
  Change c;
  c.ownership_strength = strength;
  c.lifespan = lifespan;
  c.key = hdr.key;
  c.writer = InstanceHandle(hdr.writer);
  c.writer_seq = hdr.seq;
  c.pos_epoch = sample.epoch;
  c.pos_subgroup = sample.subgroup;
  c.pos_order = sample.order;
  c.source_timestamp = dds::core::Time::from_nanosecs(hdr.source_time_ns);
  c.reception_timestamp = received;
  std::string error;
  switch (hdr.kind) {
    case SampleKind::data:
      c.kind = ChangeKind::data;
      if ((hdr.flags & kFlagNative) != 0) {
        c.data = in_place(sample);
        if (!c.data) c.data = topic_->type().from_native(sample.payload, error);
      } else {
        c.data = topic_->type().decode(sample.payload, error);
      }
      if (!c.data) {
        raise_sample_lost("a sample from writer " + std::to_string(hdr.writer) +
                          " does not decode as " + std::string(topic_->type().type_name) + ": " +
                          error);
        return std::nullopt;
      }
      // A ContentFilteredTopic's reader keeps only what passes its filter.
      if (filter_ && !filter_->matches(c.data.get())) return std::nullopt;
      break;
    case SampleKind::dispose:
    case SampleKind::unregister:
      c.kind = hdr.kind == SampleKind::dispose ? ChangeKind::dispose : ChangeKind::unregister;
      if (!sample.payload.empty()) c.data = topic_->type().decode(sample.payload, error);
      break;
    default:
      return std::nullopt;
  }
  return c;
}

std::shared_ptr<const void> Reader::in_place(const ParsedSample& sample) {
  const auto& t = topic_->type();
  if (sample.source == nullptr || t.native_in_place == nullptr) return nullptr;
  if (copying_) {
    // Until the application takes again (it was not gone, only slow), or nothing is left.
    if (!took_.exchange(false, std::memory_order_relaxed) && cache_->sample_count() != 0)
      return nullptr;
    copying_ = false;
  }
  auto hold = sample.source->pins->pin(*sample.source);
  if (!hold) return nullptr;
  auto data = t.native_in_place(sample.payload, std::move(hold));
  if (!data) return nullptr;
  if (in_place_.size() >= kInPlaceSweep)
    std::erase_if(in_place_, [](const auto& w) { return w.expired(); });
  in_place_.emplace_back(data);
  return data;
}

void Reader::unpin() {
  if (in_place_.empty()) return;
  copying_ = true;
  took_.store(false, std::memory_order_relaxed);
  const auto& t = topic_->type();
  std::unordered_map<const void*, std::shared_ptr<const void>> copies;
  std::string error;
  for (const auto& w : in_place_) {
    const auto held = w.lock();
    if (!held) continue;
    auto copy = t.from_native({static_cast<const std::byte*>(held.get()), t.native_size}, error);
    if (copy) copies.emplace(held.get(), std::move(copy));
  }
  in_place_.clear();
  if (copies.empty()) return;
  const auto swap = [&](std::shared_ptr<const void>& data) {
    if (!data) return;
    const auto it = copies.find(data.get());
    if (it != copies.end()) data = it->second;
  };
  for (auto& c : held_)
    swap(c.data);
  for (auto& c : pending_)
    swap(c.data);
  cache_->replace_data(swap);
}

void Reader::on_sample(const ParsedSample& sample, NodeId /*sender*/) {
  const auto& hdr = sample.header;
  std::int32_t strength = 0;
  dds::core::Duration lifespan;
  bool repaired_copy = false;  // the stream's copy of what a repair brought already
  {
    std::lock_guard lock(mu_);
    auto it = writers_.find(hdr.writer);
    if (it == writers_.end()) return;  // not matched (yet, or any more): not for us
    strength = it->second.strength;
    lifespan = it->second.lifespan;
    if (it->second.watched()) it->second.last_seen = clock_now();
    // Messages of this writer that never reached us: a BEST_EFFORT drop, or what went by
    // while this participant was out of the domain (a rejoin).
    auto& last = it->second.last_seq;
    // A listener takes messages past a view change's trim, and their sender sends them
    // again in the next view: what it took already is not taken twice.
    if (sample.listened && hdr.seq != 0 && last != 0 && hdr.seq <= last) return;
    if (hdr.seq != 0) {
      auto& repaired = it->second.repaired;
      repaired_copy =
          !repaired.empty() && std::binary_search(repaired.begin(), repaired.end(), hdr.seq);
      if (last != 0 && hdr.seq > last + 1) {
        // What a repair brought of the jump was not lost.
        const auto upto = std::lower_bound(repaired.begin(), repaired.end(), hdr.seq);
        missed_ += hdr.seq - last - 1 - static_cast<std::uint64_t>(upto - repaired.begin());
      } else if (last == 0) {
        // The first of this writer's samples here: what a listener skipped right before
        // it has no number to show the gap (a best-effort reader lapped: docs/dev/smc.md).
        missed_ += sample.lost_before;
      }
      last = std::max(last, hdr.seq);
      if (!repaired.empty())
        repaired.erase(repaired.begin(), std::upper_bound(repaired.begin(), repaired.end(), last));
    }
  }
  if (hdr.kind == SampleKind::data) writer_asserted(hdr.writer);
  if (repaired_copy) return;
  if (!batch_received_) batch_received_ = wall_now();
  if (auto c = make_change(sample, strength, lifespan, *batch_received_)) {
    // A GROUP subscriber's readers number samples as they are delivered, across its topics:
    // a batch reaches its readers one after another, which must not reorder them.
    if (const auto& seq = subscriber_->sequence()) c->order = seq->fetch_add(1) + 1;
    pending_.push_back(std::move(*c));
  }
}

void Reader::on_batch_end() {
  batch_received_.reset();
  if (missed_ > 0) {
    count_sample_lost(static_cast<std::int32_t>(
        std::min<std::uint64_t>(missed_, std::numeric_limits<std::int32_t>::max())));
    missed_ = 0;
  }
  if (pending_.empty()) return;
  if (subscriber_->holding()) {
    // Its GROUP subscriber's access is open: kept aside until it ends.
    held_.insert(held_.end(), std::make_move_iterator(pending_.begin()),
                 std::make_move_iterator(pending_.end()));
    pending_.clear();
    return;
  }
  insert(pending_, results_, true);
  pending_.clear();
}

void Reader::stash_positions() {
  {
    std::lock_guard lock(mu_);
    for (const auto& [guid, w] : writers_)
      if (w.last_seq != 0) resume_seq_[guid] = w.last_seq;
  }
  cache_->forget_places();
}

void Reader::release_held() {
  if (held_.empty()) return;
  insert(held_, results_, true);
  held_.clear();
}

void Reader::receive_history(const std::vector<Historical>& history, std::uint64_t lost) {
  if (lost > 0) {
    std::cerr << "spindle: reader of '" << topic_->name() << "': " << lost
              << (lost == 1 ? " sample" : " samples")
              << " of its history were lost in a damaged durable log\n";
    count_sample_lost(static_cast<std::int32_t>(
        std::min<std::uint64_t>(lost, std::numeric_limits<std::int32_t>::max())));
  }
  std::vector<Change> changes;
  changes.reserve(history.size());
  std::string error;
  for (const auto& h : history) {
    const auto parsed = parse(h.entry.message, error);
    if (!parsed) {
      raise_sample_lost("a retained sample from writer " + std::to_string(h.entry.writer) +
                        " does not parse: " + error);
      continue;
    }
    if (auto c = make_change(*parsed, h.strength, h.lifespan, wall_now()))
      changes.push_back(std::move(*c));
  }
  if (!changes.empty()) {
    std::vector<InsertResult> results(changes.size());
    insert(changes, results);
  }
  {
    std::lock_guard lock(mu_);
    history_received_ = true;
  }
  history_cv_.notify_all();
}

bool Reader::reliable() const {
  return qos_.read([](const auto& q) {
    return q.template policy<policy::Reliability>().kind() == policy::ReliabilityKind::RELIABLE;
  });
}

std::size_t Reader::repair(const Repair& repair) {
  if (!reliable() || is_closed()) return 0;
  std::vector<Change> changes;
  for (const auto& m : repair.messages) {
    const auto& hdr = m.header;
    if (hdr.topic != topic_id_) continue;
    // Only what its writer wrote after it matched this reader.
    const auto f = std::find_if(repair.floors.begin(), repair.floors.end(), [&](const auto& x) {
      return x.reader == guid_ && x.writer == hdr.writer;
    });
    if (f == repair.floors.end() || hdr.seq <= f->floor) continue;
    std::int32_t strength = 0;
    dds::core::Duration lifespan;
    {
      std::lock_guard lock(mu_);
      const auto it = writers_.find(hdr.writer);
      if (it == writers_.end()) continue;  // not matched any more
      strength = it->second.strength;
      lifespan = it->second.lifespan;
      // Ahead of the stream: when the stream jumps over it, it is not counted lost.
      auto& ahead = it->second.repaired;
      if (it->second.last_seq != 0 && hdr.seq > it->second.last_seq) {
        const auto at = std::lower_bound(ahead.begin(), ahead.end(), hdr.seq);
        if (at == ahead.end() || *at != hdr.seq) ahead.insert(at, hdr.seq);
      }
    }
    if (auto c = make_change(m, strength, lifespan, wall_now())) {
      if (const auto& seq = subscriber_->sequence()) c->order = seq->fetch_add(1) + 1;
      changes.push_back(std::move(*c));
    }
  }
  if (changes.empty()) return 0;
  if (subscriber_->holding()) {
    const auto n = changes.size();
    held_.insert(held_.end(), std::make_move_iterator(changes.begin()),
                 std::make_move_iterator(changes.end()));
    return n;
  }
  std::vector<InsertResult> results(changes.size());
  insert(changes, results);
  return static_cast<std::size_t>(
      std::count_if(results.begin(), results.end(),
                    [](const InsertResult& r) { return r.outcome == InsertOutcome::accepted; }));
}

void Reader::expect_history() {
  std::lock_guard lock(mu_);
  history_received_ = false;
}

bool Reader::awaits_history() const {
  std::lock_guard lock(mu_);
  return !history_received_;
}

void Reader::insert(std::vector<Change>& changes, std::vector<InsertResult>& results, bool stream) {
  results.resize(changes.size());
  std::unique_lock data(data_mu_);
  cache_->insert_batch(changes, results);
  bool available = false;
  for (const auto& r : results)
    available = available || r.data_available;
  if (available) mark_data_available();  // before a take can see the data (data_mu_)
  data.unlock();
  const auto now = clock_now();
  // DESTINATION_ORDER BY_SOURCE_TIMESTAMP drops an update older than the instance's latest:
  // the reader never sees that sample, which DCPS counts as lost (SAMPLE_LOST). So does the
  // stream's change that a repair's newer one of its instance went ahead of.
  const auto late = static_cast<std::int32_t>(
      std::count_if(results.begin(), results.end(), [stream](const InsertResult& r) {
        return r.outcome == InsertOutcome::out_of_order ||
               (stream &&
                (r.outcome == InsertOutcome::duplicate || r.outcome == InsertOutcome::superseded));
      }));
  if (late > 0) count_sample_lost(late);
  for (const auto& r : results) {
    if (r.outcome == InsertOutcome::accepted) {
      std::lock_guard lock(mu_);
      instance_seen_[r.instance.value()] = now;
    }
    if (r.outcome == InsertOutcome::rejected) {
      using S = dds::core::status::SampleRejectedStatus;
      event(
          StatusMask::sample_rejected(),
          [&](bool consume) {
            return statuses().sample_rejected(r.reject_reason, r.instance, consume);
          },
          [](detail::ReaderListenerHook& h, const S& s) { h.on_sample_rejected(s); },
          [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& rd, const S& s) {
            l.on_sample_rejected(rd, s);
          });
    }
  }
  if (available) {
    subscriber_->data_arrived(*this);
  }
  schedule_expiry();
}

void Reader::schedule_expiry() {
  const auto next = cache_->next_expiry();
  if (!next.is_valid()) return;
  std::lock_guard lock(mu_);
  if (expiry_at_.is_valid() && expiry_at_ <= next) return;
  expiry_at_ = next;
  auto& d = subscriber_->owner().executor();
  d.cancel(expiry_timer_);
  const auto wall = wall_now();
  const auto delay = next > wall ? next - wall : dds::core::Duration::zero();
  const std::weak_ptr<Reader> weak = std::static_pointer_cast<Reader>(weak_from_this().lock());
  expiry_timer_ = d.schedule(clock_now() + to_steady(delay), [weak] {
    auto r = weak.lock();
    if (!r) return;
    {
      std::lock_guard l(r->mu_);
      r->expiry_at_ = dds::core::Time::invalid();
    }
    if (r->is_closed()) return;
    r->cache_->expire(r->wall_now());
    r->schedule_expiry();
  });
}

// Timers hold the reader weakly: one that fires while the reader goes does nothing.
void Reader::start_timers() {
  const auto period = qos().policy<policy::Deadline>().period();
  if (period.is_infinite()) return;
  const std::weak_ptr<Reader> weak = std::static_pointer_cast<Reader>(shared_from_this());
  deadline_timer_ =
      subscriber_->owner().executor().schedule(clock_now() + to_steady(period), [weak] {
        if (auto r = weak.lock()) r->check_deadlines();
      });
}

void Reader::watch_liveliness(group::TimePoint at) {
  const std::weak_ptr<Reader> weak = std::static_pointer_cast<Reader>(shared_from_this());
  const auto id = subscriber_->owner().executor().schedule(at, [weak] {
    if (auto r = weak.lock()) r->check_liveliness();
  });
  std::lock_guard lock(mu_);
  liveliness_timer_ = id;
}

void Reader::check_deadlines() {
  if (is_closed()) return;
  const auto period = to_steady(qos().policy<policy::Deadline>().period());
  const auto now = clock_now();
  std::vector<InstanceHandle> missed;
  {
    std::lock_guard lock(mu_);
    for (auto& [h, seen] : instance_seen_) {
      if (now - seen >= period) {
        missed.emplace_back(h);
        seen = now;
      }
    }
  }
  using S = dds::core::status::RequestedDeadlineMissedStatus;
  for (auto h : missed) {
    event(
        StatusMask::requested_deadline_missed(),
        [&](bool consume) { return statuses().requested_deadline_missed(h, consume); },
        [](detail::ReaderListenerHook& hk, const S& s) { hk.on_requested_deadline_missed(s); },
        [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const S& s) {
          l.on_requested_deadline_missed(r, s);
        });
  }
  const std::weak_ptr<Reader> weak = std::static_pointer_cast<Reader>(shared_from_this());
  deadline_timer_ = subscriber_->owner().executor().schedule(now + period, [weak] {
    if (auto r = weak.lock()) r->check_deadlines();
  });
}

// Writers with manual liveliness that stayed silent for their lease are not alive; their
// instances lose them as writers (NOT_ALIVE_NO_WRITERS once no writer is left).
void Reader::check_liveliness() {
  if (is_closed()) return;
  const auto now = clock_now();
  std::vector<std::uint64_t> lost;
  bool watching = false;
  {
    std::lock_guard lock(mu_);
    for (auto& [g, w] : writers_) {
      if (!w.watched()) continue;
      watching = true;
      if (w.alive && now - w.last_seen >= to_steady(w.lease)) {
        w.alive = false;
        lost.push_back(g);
      }
    }
    if (!watching) liveliness_timer_ = 0;  // matched() starts it again
  }
  for (auto g : lost) {
    const InstanceHandle h(g);
    if (lose_writer(h)) subscriber_->data_arrived(*this);
    using L = dds::core::status::LivelinessChangedStatus;
    event(
        StatusMask::liveliness_changed(),
        [&](bool consume) { return statuses().liveliness_changed(-1, +1, h, consume); },
        [](detail::ReaderListenerHook& hk, const L& s) { hk.on_liveliness_changed(s); },
        [](dds::sub::AnyDataReaderListener& l, dds::sub::AnyDataReader& r, const L& s) {
          l.on_liveliness_changed(r, s);
        });
  }
  if (watching) watch_liveliness(now + std::chrono::milliseconds(20));
}

}  // namespace spindle::dcps
