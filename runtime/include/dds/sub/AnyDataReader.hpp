// dds::sub::AnyDataReader: a DataReader of any type (DDS-PSM-Cxx §7.5.5) — what a
// SubscriberListener, a DomainParticipantListener or ReadCondition::data_reader() gives.
// DataReader<T> derives from it; it can also be made from a plain dds::core::Entity that
// refers to a reader (IllegalOperationError otherwise).
//
// Threading: every operation may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include <dds/core/Entity.hpp>
#include <dds/core/Exception.hpp>
#include <dds/core/status/Status.hpp>
#include <dds/sub/Subscriber.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::sub {
template <typename T>
class DataReader;
}

namespace dds::sub {

class AnyDataReader : public dds::core::Entity {
 public:
  using Core = spindle::detail::ReaderCore;

  AnyDataReader(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit AnyDataReader(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  AnyDataReader(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : Entity(downcast(e)) {}

  [[nodiscard]] std::string topic_name() const { return core().topic()->name(); }
  [[nodiscard]] std::string type_name() const { return std::string(core().type().type_name); }
  [[nodiscard]] qos::DataReaderQos qos() const { return core().qos(); }
  void qos(const qos::DataReaderQos& q) { core().qos(q); }
  [[nodiscard]] Subscriber subscriber() const { return Subscriber(core().subscriber()); }
  void wait_for_historical_data(const dds::core::Duration& timeout) {
    core().wait_for_historical_data(timeout);
  }

  [[nodiscard]] dds::core::status::SampleRejectedStatus sample_rejected_status() {
    return core().statuses().read<dds::core::status::SampleRejectedStatus>();
  }
  [[nodiscard]] dds::core::status::SampleLostStatus sample_lost_status() {
    return core().statuses().read<dds::core::status::SampleLostStatus>();
  }
  [[nodiscard]] dds::core::status::LivelinessChangedStatus liveliness_changed_status() {
    return core().statuses().read<dds::core::status::LivelinessChangedStatus>();
  }
  [[nodiscard]] dds::core::status::RequestedDeadlineMissedStatus
  requested_deadline_missed_status() {
    return core().statuses().read<dds::core::status::RequestedDeadlineMissedStatus>();
  }
  [[nodiscard]] dds::core::status::RequestedIncompatibleQosStatus
  requested_incompatible_qos_status() {
    return core().statuses().read<dds::core::status::RequestedIncompatibleQosStatus>();
  }
  [[nodiscard]] dds::core::status::SubscriptionMatchedStatus subscription_matched_status() {
    return core().statuses().read<dds::core::status::SubscriptionMatchedStatus>();
  }
  [[nodiscard]] dds::core::InstanceHandleSeq matched_publications() const {
    return core().matched_publications();
  }

  // The typed reader; InvalidDowncastError when its type is not T (DataReader.hpp).
  template <typename T>
  [[nodiscard]] DataReader<T> get() const;

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
  [[nodiscard]] std::shared_ptr<Core> core_ptr() const {
    (void)open();
    return std::static_pointer_cast<Core>(delegate());
  }
  // For dds::sub::cond::ReadCondition.
  [[nodiscard]] std::shared_ptr<spindle::dcps::HistoryCache> spindle_history_cache() const {
    return core().history_cache();
  }

 private:
  static std::shared_ptr<Core> downcast(const dds::core::Entity& e) {
    if (e.is_nil()) return nullptr;
    auto core = std::dynamic_pointer_cast<Core>(e.delegate());
    if (!core) throw dds::core::IllegalOperationError("AnyDataReader: the entity is not a reader");
    return core;
  }
};

}  // namespace dds::sub
