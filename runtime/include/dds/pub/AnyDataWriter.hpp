// dds::pub::AnyDataWriter: a DataWriter of any type (DDS-PSM-Cxx §7.5.3) — what a
// PublisherListener or DomainParticipantListener receives. DataWriter<T> derives from it,
// so `AnyDataWriter w = writer;` refers to the same writer.
//
// Threading: every operation may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include <dds/core/Entity.hpp>
#include <dds/core/status/Status.hpp>
#include <dds/pub/Publisher.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::pub {
template <typename T>
class DataWriter;
}

namespace dds::pub {

class AnyDataWriter : public dds::core::Entity {
 public:
  using Core = spindle::detail::WriterCore;

  AnyDataWriter(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit AnyDataWriter(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  // The writer `e` refers to; IllegalOperationError if it is another kind of entity. Implicit, as
  // the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  AnyDataWriter(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : Entity(checked_downcast<Core>(e, "AnyDataWriter")) {}

  [[nodiscard]] std::string topic_name() const { return core().topic()->name(); }
  [[nodiscard]] std::string type_name() const { return std::string(core().type().type_name); }
  [[nodiscard]] qos::DataWriterQos qos() const { return core().qos(); }
  void qos(const qos::DataWriterQos& q) { core().qos(q); }
  [[nodiscard]] Publisher publisher() const { return Publisher(core().publisher()); }
  void wait_for_acknowledgments(const dds::core::Duration& timeout) {
    core().wait_for_acknowledgments(timeout);
  }
  void assert_liveliness() { core().assert_liveliness(); }

  [[nodiscard]] dds::core::status::LivelinessLostStatus liveliness_lost_status() {
    return core().statuses().read<dds::core::status::LivelinessLostStatus>();
  }
  [[nodiscard]] dds::core::status::OfferedDeadlineMissedStatus offered_deadline_missed_status() {
    return core().statuses().read<dds::core::status::OfferedDeadlineMissedStatus>();
  }
  [[nodiscard]] dds::core::status::OfferedIncompatibleQosStatus offered_incompatible_qos_status() {
    return core().statuses().read<dds::core::status::OfferedIncompatibleQosStatus>();
  }
  [[nodiscard]] dds::core::status::PublicationMatchedStatus publication_matched_status() {
    return core().statuses().read<dds::core::status::PublicationMatchedStatus>();
  }
  [[nodiscard]] dds::core::InstanceHandleSeq matched_subscriptions() const {
    return core().matched_subscriptions();
  }

  // The typed writer; InvalidDowncastError when its type is not T (DataWriter.hpp).
  template <typename T>
  [[nodiscard]] DataWriter<T> get() const;

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
  [[nodiscard]] std::shared_ptr<Core> core_ptr() const {
    (void)open();
    return std::static_pointer_cast<Core>(delegate());
  }
};

}  // namespace dds::pub
