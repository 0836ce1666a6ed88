// The built-in topics (DCPS §2.2.5, DDS-PSM-Cxx §7.5.4): DCPSParticipant, DCPSTopic,
// DCPSPublication and DCPSSubscription, read through a participant's built-in subscriber.
//
// The data is what discovery knows (entities.hpp, "Discovery"): the endpoint table's writer
// and reader records, and the installed view's members. Nothing here travels: the readers
// are Readers that are never announced nor subscribed to a subgroup, and the participant
// inserts Changes it makes from its tables into their caches, so reads, takes, conditions
// and listeners are the Reader's own.
//
// Ordering: every change of the tables queues its built-in samples under mu_ (at the
// point of the builtin subgroup's total order where the table changed) into each reader's
// pending list; flush_builtin(), serialized by builtin_mu_, moves the lists out under mu_
// and inserts them with no lock held. A new built-in subscriber starts with a snapshot of
// the tables in its pending lists, taken under mu_, so it sees every entity once and each
// later change after it.
//
// DCPSParticipant has an instance per member whose participant record was applied (with
// the UserData the record carries; this participant's own from its QoS), disposed when the
// member leaves the view. DCPSTopic has an instance per topic name that some member's Topic
// (its record) or some writer or reader uses, showing the Topic record of lowest guid (so
// every member shows the same), else the first endpoint's TopicData and QoS; it is disposed
// when the last of those goes.
#include <algorithm>

#include <dds/topic/BuiltinTopic.hpp>

#include "dcps/entities.hpp"

namespace spindle::dcps {

namespace pol = dds::core::policy;
using dds::topic::BuiltinTopicKey;

namespace {

BuiltinTopicKey key_of(std::uint64_t guid) {
  return {static_cast<std::int32_t>(guid_node(guid)), static_cast<std::int32_t>(guid & 0xffffffffu),
          0};
}
BuiltinTopicKey participant_key(NodeId node) {
  return key_of(make_guid(node, 1));
}
BuiltinTopicKey topic_key(const std::string& name) {
  const auto id = topic_id(name);
  return {static_cast<std::int32_t>(id >> 32), static_cast<std::int32_t>(id & 0xffffffffu), -1};
}

std::shared_ptr<dds::topic::PublicationBuiltinTopicData> publication_of(const WriterRecord& w) {
  auto d = std::make_shared<dds::topic::PublicationBuiltinTopicData>();
  d->key(key_of(w.guid));
  d->participant_key(participant_key(guid_node(w.guid)));
  d->topic_name(w.topic_name);
  d->type_name(w.type_name);
  const auto& q = w.qos;
  d->durability(q.policy<pol::Durability>());
  d->durability_service(q.policy<pol::DurabilityService>());
  d->deadline(q.policy<pol::Deadline>());
  d->latency_budget(q.policy<pol::LatencyBudget>());
  d->liveliness(q.policy<pol::Liveliness>());
  d->reliability(q.policy<pol::Reliability>());
  d->lifespan(q.policy<pol::Lifespan>());
  d->user_data(q.policy<pol::UserData>());
  d->ownership(q.policy<pol::Ownership>());
  d->ownership_strength(q.policy<pol::OwnershipStrength>());
  d->destination_order(q.policy<pol::DestinationOrder>());
  const auto& g = w.publisher_qos;
  d->presentation(g.policy<pol::Presentation>());
  d->partition(g.policy<pol::Partition>());
  d->group_data(g.policy<pol::GroupData>());
  d->topic_data(w.topic_data);
  return d;
}

std::shared_ptr<dds::topic::SubscriptionBuiltinTopicData> subscription_of(const ReaderRecord& r) {
  auto d = std::make_shared<dds::topic::SubscriptionBuiltinTopicData>();
  d->key(key_of(r.guid));
  d->participant_key(participant_key(guid_node(r.guid)));
  d->topic_name(r.topic_name);
  d->type_name(r.type_name);
  const auto& q = r.qos;
  d->durability(q.policy<pol::Durability>());
  d->deadline(q.policy<pol::Deadline>());
  d->latency_budget(q.policy<pol::LatencyBudget>());
  d->liveliness(q.policy<pol::Liveliness>());
  d->reliability(q.policy<pol::Reliability>());
  d->ownership(q.policy<pol::Ownership>());
  d->destination_order(q.policy<pol::DestinationOrder>());
  d->user_data(q.policy<pol::UserData>());
  d->time_based_filter(q.policy<pol::TimeBasedFilter>());
  const auto& g = r.subscriber_qos;
  d->presentation(g.policy<pol::Presentation>());
  d->partition(g.policy<pol::Partition>());
  d->group_data(g.policy<pol::GroupData>());
  d->topic_data(r.topic_data);
  return d;
}

// A topic's QoS as far as an endpoint's record tells it.
template <class Qos>
dds::topic::qos::TopicQos topic_qos_of(const Qos& q) {
  dds::topic::qos::TopicQos t;
  t << q.template policy<pol::Durability>() << q.template policy<pol::Deadline>()
    << q.template policy<pol::LatencyBudget>() << q.template policy<pol::Liveliness>()
    << q.template policy<pol::Reliability>() << q.template policy<pol::DestinationOrder>()
    << q.template policy<pol::History>() << q.template policy<pol::ResourceLimits>()
    << q.template policy<pol::Ownership>();
  if constexpr (std::is_same_v<Qos, dds::pub::qos::DataWriterQos>) {
    t << q.template policy<pol::DurabilityService>() << q.template policy<pol::TransportPriority>()
      << q.template policy<pol::Lifespan>();
  }
  return t;
}

}  // namespace

// What builtin_subscriber() hands out: the application's reference keeps the subscriber and
// its four readers (which hold the subscriber, and it the participant; the participant
// holds them weakly, so no cycle keeps it alive).
struct Participant::BuiltinSet {
  std::shared_ptr<Subscriber> subscriber;
  std::array<std::shared_ptr<Reader>, kBuiltinTopics> readers;
};

std::shared_ptr<Reader> Subscriber::create_builtin_reader(const std::shared_ptr<Topic>& t,
                                                          const dds::sub::qos::DataReaderQos& q) {
  const auto guid = participant_->next_guid();
  auto self = std::static_pointer_cast<Subscriber>(shared_from_this());
  auto r =
      make_entity<Reader>(participant_->bus(), self, t, q, InstanceHandle(guid), guid, nullptr);
  r->make_builtin();
  readers_.add(r);
  return r;
}

void Reader::feed(std::vector<Change> changes) {
  if (changes.empty() || is_closed()) return;
  std::vector<InsertResult> results;
  insert(changes, results);
}

std::shared_ptr<detail::SubscriberCore> Participant::builtin_subscriber() {
  check_open();
  std::lock_guard feed(builtin_mu_);
  std::shared_ptr<BuiltinSet> set;
  {
    std::lock_guard lock(mu_);
    set = builtin_.set.lock();
  }
  if (set) return {set, set->subscriber.get()};
  set = std::make_shared<BuiltinSet>();
  auto self = std::static_pointer_cast<Participant>(shared_from_this());
  std::unique_lock lock(mu_);
  // Readers the application still holds (and so their subscriber) are handed out again and
  // keep their queue; the missing ones are made anew and start with the current state.
  set->subscriber = builtin_.subscriber.lock();
  if (!set->subscriber) {
    set->subscriber =
        make_entity<Subscriber>(*bus_, self, dds::sub::qos::SubscriberQos{}, next_handle());
    builtin_.subscriber = set->subscriber;
  }
  std::array<bool, kBuiltinTopics> fresh{};
  std::array<std::vector<Change>, kBuiltinTopics> kept;
  // DCPS §2.2.5: RELIABLE, TRANSIENT_LOCAL, KEEP_LAST 1.
  dds::sub::qos::DataReaderQos q;
  q << pol::Reliability::Reliable() << pol::Durability::TransientLocal()
    << pol::History::KeepLast(1);
  const std::pair<const char*, const detail::TypeSupport*> topics[kBuiltinTopics] = {
      {"DCPSParticipant", &detail::type_support<dds::topic::ParticipantBuiltinTopicData>()},
      {"DCPSTopic", &detail::type_support<dds::topic::TopicBuiltinTopicData>()},
      {"DCPSPublication", &detail::type_support<dds::topic::PublicationBuiltinTopicData>()},
      {"DCPSSubscription", &detail::type_support<dds::topic::SubscriptionBuiltinTopicData>()},
  };
  for (std::size_t i = 0; i < kBuiltinTopics; ++i) {
    set->readers[i] = builtin_.readers[i].lock();
    if (set->readers[i]) {
      kept[i].swap(builtin_.pending[i]);
      continue;
    }
    fresh[i] = true;
    builtin_.pending[i].clear();
    auto t = make_entity<Topic>(*bus_, self, topics[i].first, *topics[i].second,
                                dds::topic::qos::TopicQos{}, next_handle());
    set->readers[i] = set->subscriber->create_builtin_reader(t, q);
    builtin_.readers[i] = set->readers[i];
  }
  if (std::find(fresh.begin(), fresh.end(), true) != fresh.end()) {
    // The domain as discovered so far is the new readers' history.
    builtin_.active = true;
    builtin_.topic_shown.clear();
    if (!participant_records_.contains(bus_->node())) builtin_participant(bus_->node(), true);
    for (const auto& [node, p] : participant_records_)
      builtin_participant(node, true);
    std::set<std::string> topic_names;
    for (const auto& [g, t] : topic_records_)
      topic_names.insert(t.topic_name);
    for (const auto& [g, w] : endpoints_.writer_records()) {
      builtin_endpoint(w, true);
      topic_names.insert(w.topic_name);
    }
    for (const auto& [g, r] : endpoints_.reader_records()) {
      builtin_endpoint(r, true);
      topic_names.insert(r.topic_name);
    }
    for (const auto& name : topic_names)
      builtin_topic_check(name);
  }
  for (std::size_t i = 0; i < kBuiltinTopics; ++i)
    if (!fresh[i]) builtin_.pending[i].swap(kept[i]);  // the snapshot is for the new ones only
  builtin_.set = set;
  // The snapshot goes in now (builtin_mu_ held: no later change can overtake it).
  std::array<std::vector<Change>, kBuiltinTopics> batch;
  for (std::size_t i = 0; i < kBuiltinTopics; ++i)
    batch[i].swap(builtin_.pending[i]);
  lock.unlock();
  for (std::size_t i = 0; i < kBuiltinTopics; ++i)
    set->readers[i]->feed(std::move(batch[i]));
  return {set, set->subscriber.get()};
}

void Participant::queue_builtin(std::size_t index, std::shared_ptr<const void> data, bool alive) {
  if (!builtin_.active) return;
  const auto now = wall_now();
  Change c;
  c.kind = alive ? ChangeKind::data : ChangeKind::dispose;
  c.writer = instance_handle();
  c.source_timestamp = now;
  c.reception_timestamp = now;
  const detail::TypeSupport* types[kBuiltinTopics] = {
      &detail::type_support<dds::topic::ParticipantBuiltinTopicData>(),
      &detail::type_support<dds::topic::TopicBuiltinTopicData>(),
      &detail::type_support<dds::topic::PublicationBuiltinTopicData>(),
      &detail::type_support<dds::topic::SubscriptionBuiltinTopicData>(),
  };
  c.key = types[index]->key_hash(data.get());
  c.data = std::move(data);
  builtin_.pending[index].push_back(std::move(c));
}

void Participant::builtin_endpoint(const WriterRecord& w, bool alive) {
  if (builtin_.active) queue_builtin(kDcpsPublication, publication_of(w), alive);
}

void Participant::builtin_endpoint(const ReaderRecord& r, bool alive) {
  if (builtin_.active) queue_builtin(kDcpsSubscription, subscription_of(r), alive);
}

void Participant::builtin_topic(const std::string& name, const std::string& type,
                                const dds::topic::qos::TopicQos& qos,
                                const dds::core::policy::TopicData& td, bool alive) {
  if (!builtin_.active) return;
  auto d = std::make_shared<dds::topic::TopicBuiltinTopicData>();
  d->key(topic_key(name));
  d->name(name);
  d->type_name(type);
  d->durability(qos.policy<pol::Durability>());
  d->durability_service(qos.policy<pol::DurabilityService>());
  d->deadline(qos.policy<pol::Deadline>());
  d->latency_budget(qos.policy<pol::LatencyBudget>());
  d->liveliness(qos.policy<pol::Liveliness>());
  d->reliability(qos.policy<pol::Reliability>());
  d->transport_priority(qos.policy<pol::TransportPriority>());
  d->lifespan(qos.policy<pol::Lifespan>());
  d->destination_order(qos.policy<pol::DestinationOrder>());
  d->history(qos.policy<pol::History>());
  d->resource_limits(qos.policy<pol::ResourceLimits>());
  d->ownership(qos.policy<pol::Ownership>());
  d->topic_data(td);
  queue_builtin(kDcpsTopic, std::move(d), alive);
}

void Participant::builtin_topic_check(const std::string& name, std::uint64_t changed) {
  if (!builtin_.active) return;
  // The sample's source: the Topic record of lowest guid, else the first writer, else the
  // first reader.
  const discovery::TopicRecord* topic = nullptr;
  for (const auto& [g, t] : topic_records_) {
    if (t.topic_name == name) {
      topic = &t;
      break;
    }
  }
  const WriterRecord* writer = nullptr;
  const ReaderRecord* reader = nullptr;
  std::uint64_t source = 0;
  if (topic != nullptr) {
    source = topic->guid;
  } else {
    for (const auto& [g, w] : endpoints_.writer_records()) {
      if (w.topic_name == name) {
        writer = &w;
        source = g;
        break;
      }
    }
    if (writer == nullptr) {
      for (const auto& [g, r] : endpoints_.reader_records()) {
        if (r.topic_name == name) {
          reader = &r;
          source = g;
          break;
        }
      }
    }
  }
  const auto shown = builtin_.topic_shown.find(name);
  if (source == 0) {  // nothing has the name any more
    if (shown != builtin_.topic_shown.end()) {
      builtin_.topic_shown.erase(shown);
      builtin_topic(name, {}, {}, {}, false);
    }
    return;
  }
  if (shown != builtin_.topic_shown.end() && shown->second == source && source != changed) return;
  builtin_.topic_shown[name] = source;
  if (topic != nullptr) {
    builtin_topic(name, topic->type_name, topic->qos, topic->qos.policy<pol::TopicData>(), true);
  } else if (writer != nullptr) {
    builtin_topic(name, writer->type_name, topic_qos_of(writer->qos), writer->topic_data, true);
  } else {
    builtin_topic(name, reader->type_name, topic_qos_of(reader->qos), reader->topic_data, true);
  }
}

void Participant::builtin_participant(NodeId node, bool alive) {
  if (!builtin_.active) return;
  auto d = std::make_shared<dds::topic::ParticipantBuiltinTopicData>();
  d->key(participant_key(node));
  if (node == bus_->node()) {
    d->user_data(qos_.get().policy<pol::UserData>());
  } else if (const auto it = participant_records_.find(node); it != participant_records_.end()) {
    d->user_data(it->second.qos.policy<pol::UserData>());
  }
  queue_builtin(kDcpsParticipant, std::move(d), alive);
}

void Participant::flush_builtin() {
  std::lock_guard feed(builtin_mu_);
  std::array<std::vector<Change>, kBuiltinTopics> batch;
  std::array<std::shared_ptr<Reader>, kBuiltinTopics> readers;
  {
    std::lock_guard lock(mu_);
    if (!builtin_.active) return;
    bool any = false;
    for (std::size_t i = 0; i < kBuiltinTopics; ++i) {
      batch[i].swap(builtin_.pending[i]);
      readers[i] = builtin_.readers[i].lock();
      any = any || readers[i] != nullptr;
    }
    // Every built-in reader is gone: queue nothing until the next builtin_subscriber().
    if (!any) builtin_.active = false;
  }
  for (std::size_t i = 0; i < kBuiltinTopics; ++i)
    if (readers[i]) readers[i]->feed(std::move(batch[i]));
}

std::shared_ptr<const dds::topic::PublicationBuiltinTopicData> Participant::publication_data(
    InstanceHandle h) const {
  std::lock_guard lock(mu_);
  const auto* w = endpoints_.writer(h.value());
  return w == nullptr ? nullptr : publication_of(*w);
}

std::shared_ptr<const dds::topic::SubscriptionBuiltinTopicData> Participant::subscription_data(
    InstanceHandle h) const {
  std::lock_guard lock(mu_);
  const auto* r = endpoints_.reader(h.value());
  return r == nullptr ? nullptr : subscription_of(*r);
}

}  // namespace spindle::dcps
