// The entity cores: the untyped runtime behind the PSM's typed classes. DomainParticipant,
// Topic<T>, Publisher, DataWriter<T>, Subscriber and DataReader<T> are thin reference
// types (dds::core::Reference) over these delegates; the typed templates pass samples as
// `const void*` with a TypeSupport table (type_support.hpp) and adapt typed listeners to
// the hooks below. The implementations live in runtime/src/dcps (entities.hpp).
//
// Not part of the DDS API. Threading: every member may be called from any application
// thread, concurrently; listeners (the hooks) are called on the participant's listener
// thread, never on a protocol thread, with no runtime lock held.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <dds/core/Duration.hpp>
#include <dds/core/InstanceHandle.hpp>
#include <dds/core/Time.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/status/Status.hpp>
#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/sub/status/DataState.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/detail/entity_delegate.hpp>
#include <spindle/detail/sample_sink.hpp>
#include <spindle/detail/type_support.hpp>
#include <spindle/inspect.hpp>

namespace dds::domain {
class DomainParticipantListener;
}
namespace dds::pub {
class PublisherListener;
}
namespace dds::sub {
class SubscriberListener;
}
namespace dds::topic {
class PublicationBuiltinTopicData;
class SubscriptionBuiltinTopicData;
}  // namespace dds::topic
namespace spindle::dcps {
class HistoryCache;
}

namespace spindle::detail {

class TopicCore;
class PublisherCore;
class SubscriberCore;
class WriterCore;
class ReaderCore;

// Typed listeners, adapted by the templates (DataWriter<T>::listener(...), ...).
class TopicListenerHook {
 public:
  virtual ~TopicListenerHook() = default;
  virtual void on_inconsistent_topic(const dds::core::status::InconsistentTopicStatus& s) = 0;
};

class WriterListenerHook {
 public:
  virtual ~WriterListenerHook() = default;
  virtual void on_offered_deadline_missed(
      const dds::core::status::OfferedDeadlineMissedStatus& s) = 0;
  virtual void on_offered_incompatible_qos(
      const dds::core::status::OfferedIncompatibleQosStatus& s) = 0;
  virtual void on_liveliness_lost(const dds::core::status::LivelinessLostStatus& s) = 0;
  virtual void on_publication_matched(const dds::core::status::PublicationMatchedStatus& s) = 0;
};

class ReaderListenerHook {
 public:
  virtual ~ReaderListenerHook() = default;
  virtual void on_requested_deadline_missed(
      const dds::core::status::RequestedDeadlineMissedStatus& s) = 0;
  virtual void on_requested_incompatible_qos(
      const dds::core::status::RequestedIncompatibleQosStatus& s) = 0;
  virtual void on_sample_rejected(const dds::core::status::SampleRejectedStatus& s) = 0;
  virtual void on_liveliness_changed(const dds::core::status::LivelinessChangedStatus& s) = 0;
  virtual void on_data_available() = 0;
  virtual void on_subscription_matched(const dds::core::status::SubscriptionMatchedStatus& s) = 0;
  virtual void on_sample_lost(const dds::core::status::SampleLostStatus& s) = 0;
};

// A compiled content filter (ContentFilteredTopic) or query (QueryCondition) over one
// topic type: the DDS 1.4 annex B language, docs/filters.md. Made by make_content_filter;
// a reader created with one keeps only the data samples that pass it, a query condition
// selects with it.
//
// Threading: every member may be called from any thread; parameters(p) swaps the compiled
// program atomically, so a match in progress uses the old or the new one.
class ContentFilterCore {
 public:
  virtual ~ContentFilterCore() = default;
  [[nodiscard]] virtual const std::string& expression() const = 0;
  [[nodiscard]] virtual std::vector<std::string> parameters() const = 0;
  // InvalidArgumentError naming the position when a parameter does not fit its use (for a
  // deferred filter not used yet: when it is used).
  virtual void parameters(const std::vector<std::string>& p) = 0;
  // Before the filter is used (a read, a condition): its parameters are checked and bound
  // now if they were deferred — InvalidArgumentError naming the position — and checked at
  // once from then on.
  virtual void use() = 0;
  // Needs use() first.
  [[nodiscard]] virtual bool matches(const void* sample) const = 0;
  // A query's ORDER BY: whether it has one, and whether `a` sorts before `b`.
  [[nodiscard]] virtual bool ordered() const = 0;
  [[nodiscard]] virtual bool before(const void* a, const void* b) const = 0;
};

// InvalidArgumentError (naming the column) for a bad expression or parameter,
// UnsupportedError when idlc generated no member tables for the type. `query`: the
// QueryCondition grammar, which may end in ORDER BY. `defer`: the parameters are checked at
// use() (a dds::sub::Query, which may get its parameters after its expression), the text
// and its members at once.
std::shared_ptr<ContentFilterCore> make_content_filter(const TypeSupport& type,
                                                       const std::string& expression,
                                                       const std::vector<std::string>& parameters,
                                                       bool query, bool defer = false);

// Makes the listener hook of a new writer or reader from its core. create_writer and
// create_reader install it before the entity is announced, so that a listener given at
// creation hears the entity's very first match (set afterwards, it could miss it).
using WriterHookFactory =
    std::function<std::shared_ptr<WriterListenerHook>(const std::shared_ptr<WriterCore>&)>;
using ReaderHookFactory =
    std::function<std::shared_ptr<ReaderListenerHook>(const std::shared_ptr<ReaderCore>&)>;

class ParticipantCore : public EntityDelegate {
 public:
  using EntityDelegate::EntityDelegate;

  [[nodiscard]] virtual std::uint32_t domain_id() const = 0;
  [[nodiscard]] virtual dds::domain::qos::DomainParticipantQos qos() const = 0;
  virtual void qos(const dds::domain::qos::DomainParticipantQos& q) = 0;
  [[nodiscard]] virtual dds::topic::qos::TopicQos default_topic_qos() const = 0;
  virtual void default_topic_qos(const dds::topic::qos::TopicQos& q) = 0;
  [[nodiscard]] virtual dds::pub::qos::PublisherQos default_publisher_qos() const = 0;
  virtual void default_publisher_qos(const dds::pub::qos::PublisherQos& q) = 0;
  [[nodiscard]] virtual dds::sub::qos::SubscriberQos default_subscriber_qos() const = 0;
  virtual void default_subscriber_qos(const dds::sub::qos::SubscriberQos& q) = 0;

  // Throws PreconditionNotMetError if `name` exists with another type.
  virtual std::shared_ptr<TopicCore> create_topic(const std::string& name, const TypeSupport& type,
                                                  const dds::topic::qos::TopicQos& q) = 0;
  // Null when no topic of that name was created here.
  [[nodiscard]] virtual std::shared_ptr<TopicCore> find_topic(const std::string& name) const = 0;
  // This participant's open topics, by name.
  [[nodiscard]] virtual std::vector<std::shared_ptr<TopicCore>> topics() const = 0;
  // The topics of the domain as discovery knows them (every member's Topics and the topics
  // of every writer and reader), by name: each name once, with its type name.
  struct DiscoveredTopic {
    std::string name;
    std::string type_name;
    // The type's XTypes TypeInformation and TypeMapping as a Topic record carried them
    // (<spindle/types/type_object.hpp>); empty when none did.
    std::vector<std::uint8_t> type_information{};
    std::vector<std::uint8_t> type_mapping{};
  };
  [[nodiscard]] virtual std::vector<DiscoveredTopic> discovered_topics() const = 0;
  // Every participant, Topic and endpoint discovery knows (<spindle/inspect.hpp>).
  [[nodiscard]] virtual spindle::inspect::Snapshot inspect() const = 0;
  virtual std::shared_ptr<PublisherCore> create_publisher(const dds::pub::qos::PublisherQos& q) = 0;
  virtual std::shared_ptr<SubscriberCore> create_subscriber(
      const dds::sub::qos::SubscriberQos& q) = 0;

  virtual void assert_liveliness() = 0;
  [[nodiscard]] virtual dds::core::Time current_time() const = 0;
  [[nodiscard]] virtual bool contains_entity(dds::core::InstanceHandle h) const = 0;
  // Closes every contained entity (DomainParticipant::close_contained_entities).
  virtual void close_contained_entities() = 0;

  virtual void listener(dds::domain::DomainParticipantListener* l,
                        const dds::core::status::StatusMask& mask) = 0;
  [[nodiscard]] virtual dds::domain::DomainParticipantListener* listener() const = 0;

  // Spindle: this participant's member id and transport ("tcp", "shm", "rdma").
  [[nodiscard]] virtual std::uint32_t node_id() const = 0;
  [[nodiscard]] virtual std::string transport_kind() const = 0;

  // DCPS ignore_participant/_topic/_publication/_subscription (dds::domain::ignore, ...):
  // from now on this participant's endpoints behave as if the remote entity with handle `h`
  // did not exist — matches with it end (when the call returns)
  // and none begin. Irreversible. A handle not (yet) discovered is kept and takes effect
  // if it appears. InvalidArgumentError for a nil handle or one of another kind;
  // PreconditionNotMetError for this participant's own handle.
  enum class Ignored : std::uint8_t { participant, topic, publication, subscription };
  virtual void ignore(Ignored kind, dds::core::InstanceHandle h) = 0;

  // The built-in subscriber (dds::sub::builtin_subscriber, BuiltinTopic.hpp): made on the
  // first call with its four readers, which get the domain as discovered so far as history
  // and every later change live. It lives while the application holds it or one of its
  // readers; the next call after that makes a new one.
  [[nodiscard]] virtual std::shared_ptr<SubscriberCore> builtin_subscriber() = 0;
  // The built-in data of a discovered writer or reader (its handle), or null when the
  // domain has no such endpoint now.
  [[nodiscard]] virtual std::shared_ptr<const dds::topic::PublicationBuiltinTopicData>
  publication_data(dds::core::InstanceHandle h) const = 0;
  [[nodiscard]] virtual std::shared_ptr<const dds::topic::SubscriptionBuiltinTopicData>
  subscription_data(dds::core::InstanceHandle h) const = 0;
};

// What a TopicDescription is: a Topic, or a ContentFilteredTopic over one.
class TopicDescriptionCore : public EntityDelegate {
 public:
  using EntityDelegate::EntityDelegate;
  [[nodiscard]] virtual const std::string& name() const = 0;
  [[nodiscard]] virtual const TypeSupport& type() const = 0;
  [[nodiscard]] virtual std::shared_ptr<ParticipantCore> participant() const = 0;
};

class TopicCore : public TopicDescriptionCore {
 public:
  using TopicDescriptionCore::TopicDescriptionCore;
  [[nodiscard]] virtual dds::topic::qos::TopicQos qos() const = 0;
  virtual void qos(const dds::topic::qos::TopicQos& q) = 0;
  virtual void listener(std::shared_ptr<TopicListenerHook> hook,
                        const dds::core::status::StatusMask& mask) = 0;
  [[nodiscard]] virtual std::shared_ptr<TopicListenerHook> listener() const = 0;
};

// A ContentFilteredTopic: a name, the topic it filters and its filter. Readers made on it
// read the topic and keep what passes the filter (SubscriberCore::create_reader).
class FilteredTopicCore final : public TopicDescriptionCore {
 public:
  FilteredTopicCore(std::shared_ptr<TopicCore> topic, std::string name,
                    std::shared_ptr<ContentFilterCore> filter)
      : TopicDescriptionCore(dds::core::InstanceHandle::nil()),
        topic_(std::move(topic)),
        name_(std::move(name)),
        filter_(std::move(filter)) {}
  [[nodiscard]] const std::string& name() const override { return name_; }
  [[nodiscard]] const TypeSupport& type() const override { return topic_->type(); }
  [[nodiscard]] std::shared_ptr<ParticipantCore> participant() const override {
    return topic_->participant();
  }
  [[nodiscard]] const std::shared_ptr<TopicCore>& topic() const noexcept { return topic_; }
  [[nodiscard]] const std::shared_ptr<ContentFilterCore>& filter() const noexcept {
    return filter_;
  }

 private:
  std::shared_ptr<TopicCore> topic_;
  std::string name_;
  std::shared_ptr<ContentFilterCore> filter_;
};

class PublisherCore : public EntityDelegate {
 public:
  using EntityDelegate::EntityDelegate;
  [[nodiscard]] virtual std::shared_ptr<ParticipantCore> participant() const = 0;
  [[nodiscard]] virtual dds::pub::qos::PublisherQos qos() const = 0;
  virtual void qos(const dds::pub::qos::PublisherQos& q) = 0;
  [[nodiscard]] virtual dds::pub::qos::DataWriterQos default_datawriter_qos() const = 0;
  virtual void default_datawriter_qos(const dds::pub::qos::DataWriterQos& q) = 0;
  // `hook` may be empty (no listener); else its listener gets the statuses in `mask`.
  virtual std::shared_ptr<WriterCore> create_writer(const std::shared_ptr<TopicCore>& topic,
                                                    const dds::pub::qos::DataWriterQos& q,
                                                    const WriterHookFactory& hook,
                                                    const dds::core::status::StatusMask& mask) = 0;
  virtual void wait_for_acknowledgments(const dds::core::Duration& timeout) = 0;
  // A coherent set (DCPS 2.2.2.4.1.10-11; dds::pub::CoherentSet): with Presentation
  // coherent_access, what its writers write until the matching end goes out as one message
  // per writer (TOPIC scope) or one for the publisher (GROUP scope), delivered whole or not at
  // all. Calls nest; the outermost end publishes. end without begin: PreconditionNotMetError.
  virtual void begin_coherent_changes() = 0;
  virtual void end_coherent_changes() = 0;
  // Its writers that are not closed (dds::pub::find).
  [[nodiscard]] virtual std::vector<std::shared_ptr<WriterCore>> writers() const = 0;
  virtual void listener(dds::pub::PublisherListener* l,
                        const dds::core::status::StatusMask& mask) = 0;
  [[nodiscard]] virtual dds::pub::PublisherListener* listener() const = 0;
};

class SubscriberCore : public EntityDelegate {
 public:
  using EntityDelegate::EntityDelegate;
  [[nodiscard]] virtual std::shared_ptr<ParticipantCore> participant() const = 0;
  [[nodiscard]] virtual dds::sub::qos::SubscriberQos qos() const = 0;
  virtual void qos(const dds::sub::qos::SubscriberQos& q) = 0;
  [[nodiscard]] virtual dds::sub::qos::DataReaderQos default_datareader_qos() const = 0;
  virtual void default_datareader_qos(const dds::sub::qos::DataReaderQos& q) = 0;
  // `hook` may be empty (no listener); else its listener gets the statuses in `mask`.
  // `filtered` (may be null): the ContentFilteredTopic over `topic` the reader is made on;
  // its filter applies to every data sample.
  virtual std::shared_ptr<ReaderCore> create_reader(
      const std::shared_ptr<TopicCore>& topic, const dds::sub::qos::DataReaderQos& q,
      const ReaderHookFactory& hook, const dds::core::status::StatusMask& mask,
      std::shared_ptr<FilteredTopicCore> filtered) = 0;
  // Readers of this subscriber holding samples in `state` (find_datareaders / get_datareaders).
  [[nodiscard]] virtual std::vector<std::shared_ptr<ReaderCore>> readers_with(
      const dds::sub::status::DataState& state) const = 0;
  virtual void notify_datareaders() = 0;
  // begin_access/end_access (DCPS 2.2.2.5.2.8-9; dds::sub::CoherentAccess): with GROUP
  // ordered or coherent access, readers_with() lists the readers in the order of their
  // samples across the group's topics while access is open. Calls nest. end without begin:
  // PreconditionNotMetError.
  virtual void begin_access() = 0;
  virtual void end_access() = 0;
  // Its readers that are not closed (dds::sub::find).
  [[nodiscard]] virtual std::vector<std::shared_ptr<ReaderCore>> readers() const = 0;
  virtual void listener(dds::sub::SubscriberListener* l,
                        const dds::core::status::StatusMask& mask) = 0;
  [[nodiscard]] virtual dds::sub::SubscriberListener* listener() const = 0;
};

class WriterCore : public EntityDelegate {
 public:
  using EntityDelegate::EntityDelegate;
  [[nodiscard]] virtual const TypeSupport& type() const = 0;
  [[nodiscard]] virtual std::shared_ptr<TopicCore> topic() const = 0;
  [[nodiscard]] virtual std::shared_ptr<PublisherCore> publisher() const = 0;
  [[nodiscard]] virtual dds::pub::qos::DataWriterQos qos() const = 0;
  virtual void qos(const dds::pub::qos::DataWriterQos& q) = 0;

  // `handle` nil: the instance is the sample's key. A non-nil handle must be the one the
  // sample's key gives (PreconditionNotMetError otherwise).
  virtual void write(const void* sample, const dds::core::Time& timestamp,
                     dds::core::InstanceHandle handle) = 0;
  virtual dds::core::InstanceHandle register_instance(const void* key_holder,
                                                      const dds::core::Time& timestamp) = 0;
  virtual void unregister_instance(dds::core::InstanceHandle h,
                                   const dds::core::Time& timestamp) = 0;
  virtual void dispose_instance(dds::core::InstanceHandle h, const dds::core::Time& timestamp) = 0;
  [[nodiscard]] virtual dds::core::InstanceHandle lookup_instance(const void* key_holder) const = 0;
  // The instance's key holder sample (the last sample written or registered for it);
  // throws InvalidArgumentError for an unknown handle.
  [[nodiscard]] virtual std::shared_ptr<const void> key_value(
      dds::core::InstanceHandle h) const = 0;
  // Loans (DataWriter<T>::loan_sample): a slot reserved for type().native_size bytes,
  // 64-byte aligned, in which the typed writer constructs the sample. Blocks like write().
  // UnsupportedError when the type is not self-contained (type_support.hpp).
  [[nodiscard]] virtual void* loan() = 0;
  [[nodiscard]] virtual bool is_loan(const void* sample) const = 0;
  // Publishes a loaned sample in place (no copy) and ends the loan.
  virtual void write_loan(const void* sample, const dds::core::Time& timestamp) = 0;
  // Ends a loan without publishing.
  virtual void return_loan(const void* sample) = 0;

  virtual void assert_liveliness() = 0;
  virtual void wait_for_acknowledgments(const dds::core::Duration& timeout) = 0;
  [[nodiscard]] virtual dds::core::InstanceHandleSeq matched_subscriptions() const = 0;
  virtual void listener(std::shared_ptr<WriterListenerHook> hook,
                        const dds::core::status::StatusMask& mask) = 0;
  [[nodiscard]] virtual std::shared_ptr<WriterListenerHook> listener() const = 0;
};

class ReaderCore : public EntityDelegate {
 public:
  using EntityDelegate::EntityDelegate;
  [[nodiscard]] virtual const TypeSupport& type() const = 0;
  [[nodiscard]] virtual std::shared_ptr<TopicCore> topic() const = 0;
  [[nodiscard]] virtual std::shared_ptr<SubscriberCore> subscriber() const = 0;
  [[nodiscard]] virtual dds::sub::qos::DataReaderQos qos() const = 0;
  virtual void qos(const dds::sub::qos::DataReaderQos& q) = 0;
  [[nodiscard]] virtual std::shared_ptr<spindle::dcps::HistoryCache> history_cache() const = 0;

  enum class Scope : std::uint8_t { all, instance, next_instance };
  struct Selection {
    dds::sub::status::DataState state = dds::sub::status::DataState::any();
    Scope scope = Scope::all;
    dds::core::InstanceHandle instance;
    std::int32_t max_samples = -1;  // LENGTH_UNLIMITED
    // A query (Selector::content, QueryCondition): only valid samples whose data passes.
    std::function<bool(const void*)> content;
  };
  // Throws InvalidArgumentError for Scope::instance with an unknown handle.
  virtual void read(const Selection& selection, SampleSink& sink) = 0;
  virtual void take(const Selection& selection, SampleSink& sink) = 0;
  [[nodiscard]] virtual dds::core::InstanceHandle lookup_instance(const void* key_holder) const = 0;
  [[nodiscard]] virtual std::shared_ptr<const void> key_value(
      dds::core::InstanceHandle h) const = 0;
  [[nodiscard]] virtual dds::core::InstanceHandleSeq matched_publications() const = 0;
  // The states read()/take() select when not told (DataReader::default_filter_state).
  [[nodiscard]] virtual dds::sub::status::DataState default_state() const = 0;
  virtual void default_state(const dds::sub::status::DataState& s) = 0;
  // What the reader was made on: its topic, or the ContentFilteredTopic over it.
  [[nodiscard]] virtual std::shared_ptr<TopicDescriptionCore> description() const = 0;
  virtual void wait_for_historical_data(const dds::core::Duration& timeout) = 0;
  virtual void listener(std::shared_ptr<ReaderListenerHook> hook,
                        const dds::core::status::StatusMask& mask) = 0;
  [[nodiscard]] virtual std::shared_ptr<ReaderListenerHook> listener() const = 0;
};

// Creates a participant: finds its domain file (SPINDLE_CONFIG, ...), builds the transport
// and joins the domain's group. Defined by the Spindle::dds library, which links the
// transports. Throws dds::core::Error with what went wrong (unreachable members, bad file).
std::shared_ptr<ParticipantCore> create_participant(
    std::uint32_t domain_id, const dds::domain::qos::DomainParticipantQos& q);

// The participants of this process, the PSM's DomainParticipantFactory role (defined next
// to create_participant, which registers each one). The table holds them weakly: a
// participant closed, or gone with its last reference, is not found.
// One participant of this process in `domain_id` (a live, open one), or null.
std::shared_ptr<ParticipantCore> find_participant(std::uint32_t domain_id);
// The QoS of participants created without one; set checks consistency. Thread-safe.
dds::domain::qos::DomainParticipantQos default_participant_qos();
void default_participant_qos(const dds::domain::qos::DomainParticipantQos& q);

// The domain id a participant created with dds::domain::default_id() joins.
inline constexpr std::uint32_t kDefaultDomain = 0xffffffffu;

}  // namespace spindle::detail
