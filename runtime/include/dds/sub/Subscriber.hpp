// dds::sub::Subscriber: groups DataReaders and carries their Partition and Presentation
// (DDS-PSM-Cxx §7.5.5).
//
// Threading: every operation may be called from any thread.
#pragma once

#include <memory>

#include <dds/core/Entity.hpp>
#include <dds/core/status/State.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/sub/DataReaderListener.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::sub {

class Subscriber : public dds::core::Entity {
 public:
  using Core = spindle::detail::SubscriberCore;

  Subscriber(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit Subscriber(const dds::domain::DomainParticipant& dp)
      : Subscriber(dp, dp.default_subscriber_qos()) {}
  Subscriber(const dds::domain::DomainParticipant& dp, const qos::SubscriberQos& q,
             SubscriberListener* listener = nullptr,
             const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : Entity(dp.core().create_subscriber(q)) {
    if (listener != nullptr) core().listener(listener, mask);
  }
  explicit Subscriber(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  // The subscriber `e` refers to; IllegalOperationError if it is another kind of entity. Implicit,
  // as the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  Subscriber(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : Entity(checked_downcast<Core>(e, "Subscriber")) {}

  [[nodiscard]] qos::SubscriberQos qos() const { return core().qos(); }
  void qos(const qos::SubscriberQos& q) { core().qos(q); }
  Subscriber& operator<<(const qos::SubscriberQos& q) {
    qos(q);
    return *this;
  }
  const Subscriber& operator>>(qos::SubscriberQos& q) const {
    q = qos();
    return *this;
  }
  [[nodiscard]] qos::DataReaderQos default_datareader_qos() const {
    return core().default_datareader_qos();
  }
  Subscriber& default_datareader_qos(const qos::DataReaderQos& q) {
    core().default_datareader_qos(q);
    return *this;
  }
  [[nodiscard]] dds::domain::DomainParticipant participant() const {
    return dds::domain::DomainParticipant(core().participant());
  }
  // Calls on_data_available of the listeners of readers that hold unread data.
  void notify_datareaders() { core().notify_datareaders(); }
  void listener(SubscriberListener* l, const dds::core::status::StatusMask& mask) {
    core().listener(l, mask);
  }
  [[nodiscard]] SubscriberListener* listener() const { return core().listener(); }

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
};

}  // namespace dds::sub
