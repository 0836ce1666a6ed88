// dds::pub::Publisher: groups DataWriters and carries their Partition and Presentation
// (DDS-PSM-Cxx §7.5.3).
//
// Threading: every operation may be called from any thread.
#pragma once

#include <memory>

#include <dds/core/Duration.hpp>
#include <dds/core/Entity.hpp>
#include <dds/core/status/State.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/pub/DataWriterListener.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::pub {

class Publisher : public dds::core::Entity {
 public:
  using Core = spindle::detail::PublisherCore;

  Publisher(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit Publisher(const dds::domain::DomainParticipant& dp)
      : Publisher(dp, dp.default_publisher_qos()) {}
  Publisher(const dds::domain::DomainParticipant& dp, const qos::PublisherQos& q,
            PublisherListener* listener = nullptr,
            const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : Entity(dp.core().create_publisher(q)) {
    if (listener != nullptr) core().listener(listener, mask);
  }
  explicit Publisher(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  // The publisher `e` refers to; IllegalOperationError if it is another kind of entity. Implicit,
  // as the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  Publisher(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : Entity(checked_downcast<Core>(e, "Publisher")) {}

  [[nodiscard]] qos::PublisherQos qos() const { return core().qos(); }
  void qos(const qos::PublisherQos& q) { core().qos(q); }
  Publisher& operator<<(const qos::PublisherQos& q) {
    qos(q);
    return *this;
  }
  const Publisher& operator>>(qos::PublisherQos& q) const {
    q = qos();
    return *this;
  }
  [[nodiscard]] qos::DataWriterQos default_datawriter_qos() const {
    return core().default_datawriter_qos();
  }
  Publisher& default_datawriter_qos(const qos::DataWriterQos& q) {
    core().default_datawriter_qos(q);
    return *this;
  }
  [[nodiscard]] dds::domain::DomainParticipant participant() const {
    return dds::domain::DomainParticipant(core().participant());
  }
  // Waits until every sample written so far by this node's writers was delivered by every
  // member; throws TimeoutError.
  void wait_for_acknowledgments(const dds::core::Duration& timeout) {
    core().wait_for_acknowledgments(timeout);
  }
  void listener(PublisherListener* l, const dds::core::status::StatusMask& mask) {
    core().listener(l, mask);
  }
  [[nodiscard]] PublisherListener* listener() const { return core().listener(); }

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
};

}  // namespace dds::pub
