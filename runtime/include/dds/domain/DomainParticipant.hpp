// dds::domain::DomainParticipant: this process's membership in a DDS domain
// (DDS-PSM-Cxx §7.5.1). Creating one finds the domain file (SPINDLE_CONFIG, ./spindle.yaml,
// ... — docs/qos.md), joins the domain's group over its transport and blocks until every
// configured member is connected (engine.connect_timeout); it then owns one predicate
// thread, the transport's threads and one listener thread. A reference type: copies share
// the participant, which is closed when the last reference goes away (or by close()).
//
// Threading: every operation may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>

#include <dds/core/Entity.hpp>
#include <dds/core/InstanceHandle.hpp>
#include <dds/core/Time.hpp>
#include <dds/core/status/State.hpp>
#include <dds/domain/DomainParticipantListener.hpp>
#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::domain {

// The domain a participant joins when none is named: the domain file's domain_id, else 0.
[[nodiscard]] inline std::uint32_t default_id() noexcept {
  return spindle::detail::kDefaultDomain;
}

class DomainParticipant : public dds::core::Entity {
 public:
  using Core = spindle::detail::ParticipantCore;

  DomainParticipant(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  // A participant with the process-wide default QoS (default_participant_qos()).
  explicit DomainParticipant(std::uint32_t domain_id)
      : DomainParticipant(domain_id, default_participant_qos()) {}
  DomainParticipant(
      std::uint32_t domain_id, const qos::DomainParticipantQos& qos,
      DomainParticipantListener* listener = nullptr,
      const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : Entity(spindle::detail::create_participant(domain_id, qos)) {
    if (listener != nullptr) core().listener(listener, mask);
  }
  explicit DomainParticipant(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  // The participant `e` refers to; IllegalOperationError if it is another kind of entity. Implicit,
  // as the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  DomainParticipant(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : Entity(checked_downcast<Core>(e, "DomainParticipant")) {}

  // The QoS a participant gets when it is created without one: one value for the process
  // (the PSM's DomainParticipantFactory), initially DomainParticipantQos(). Setting it
  // checks consistency (InconsistentPolicyError) and affects participants created later.
  [[nodiscard]] static qos::DomainParticipantQos default_participant_qos() {
    return spindle::detail::default_participant_qos();
  }
  static void default_participant_qos(const qos::DomainParticipantQos& q) {
    spindle::detail::default_participant_qos(q);
  }

  [[nodiscard]] std::uint32_t domain_id() const { return core().domain_id(); }
  [[nodiscard]] qos::DomainParticipantQos qos() const { return core().qos(); }
  void qos(const qos::DomainParticipantQos& q) { core().qos(q); }
  DomainParticipant& operator<<(const qos::DomainParticipantQos& q) {
    qos(q);
    return *this;
  }
  const DomainParticipant& operator>>(qos::DomainParticipantQos& q) const {
    q = qos();
    return *this;
  }

  [[nodiscard]] dds::topic::qos::TopicQos default_topic_qos() const {
    return core().default_topic_qos();
  }
  DomainParticipant& default_topic_qos(const dds::topic::qos::TopicQos& q) {
    core().default_topic_qos(q);
    return *this;
  }
  [[nodiscard]] dds::pub::qos::PublisherQos default_publisher_qos() const {
    return core().default_publisher_qos();
  }
  DomainParticipant& default_publisher_qos(const dds::pub::qos::PublisherQos& q) {
    core().default_publisher_qos(q);
    return *this;
  }
  [[nodiscard]] dds::sub::qos::SubscriberQos default_subscriber_qos() const {
    return core().default_subscriber_qos();
  }
  DomainParticipant& default_subscriber_qos(const dds::sub::qos::SubscriberQos& q) {
    core().default_subscriber_qos(q);
    return *this;
  }

  void assert_liveliness() { core().assert_liveliness(); }
  [[nodiscard]] bool contains_entity(const dds::core::InstanceHandle& h) const {
    return core().contains_entity(h);
  }
  [[nodiscard]] dds::core::Time current_time() const { return core().current_time(); }
  void close_contained_entities() { core().close_contained_entities(); }

  void listener(DomainParticipantListener* l, const dds::core::status::StatusMask& mask) {
    core().listener(l, mask);
  }
  [[nodiscard]] DomainParticipantListener* listener() const { return core().listener(); }

  // Spindle: this participant's member id in the domain and its transport.
  [[nodiscard]] std::uint32_t node_id() const { return core().node_id(); }
  [[nodiscard]] std::string transport() const { return core().transport_kind(); }

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
  [[nodiscard]] std::shared_ptr<Core> core_ptr() const {
    (void)open();
    return std::static_pointer_cast<Core>(delegate());
  }
};

}  // namespace dds::domain
