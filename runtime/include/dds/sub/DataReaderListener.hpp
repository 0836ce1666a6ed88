// Reader-side listeners (DDS-PSM-Cxx §7.5.5): DataReaderListener<T> for one typed reader,
// AnyDataReaderListener for a Subscriber or DomainParticipant that hears about all its
// readers, and SubscriberListener (which adds DATA_ON_READERS). The NoOp variants
// implement every callback as nothing.
//
// Threading: callbacks run on the participant's listener thread, never on a protocol
// thread; a callback may read or take from the reader. Only statuses in the mask given
// with the listener are delivered; others go to the parent's listener (subscriber, then
// participant). DATA_ON_READERS on a subscriber's listener takes precedence over
// DATA_AVAILABLE on its readers, as the DCPS specification says.
#pragma once

#include <dds/core/status/Status.hpp>

namespace dds::sub {

template <typename T>
class DataReader;
class AnyDataReader;
class Subscriber;

template <typename T>
class DataReaderListener {
 public:
  virtual ~DataReaderListener() = default;
  virtual void on_requested_deadline_missed(
      DataReader<T>& reader, const dds::core::status::RequestedDeadlineMissedStatus& status) = 0;
  virtual void on_requested_incompatible_qos(
      DataReader<T>& reader, const dds::core::status::RequestedIncompatibleQosStatus& status) = 0;
  virtual void on_sample_rejected(DataReader<T>& reader,
                                  const dds::core::status::SampleRejectedStatus& status) = 0;
  virtual void on_liveliness_changed(DataReader<T>& reader,
                                     const dds::core::status::LivelinessChangedStatus& status) = 0;
  virtual void on_data_available(DataReader<T>& reader) = 0;
  virtual void on_subscription_matched(
      DataReader<T>& reader, const dds::core::status::SubscriptionMatchedStatus& status) = 0;
  virtual void on_sample_lost(DataReader<T>& reader,
                              const dds::core::status::SampleLostStatus& status) = 0;
};

template <typename T>
class NoOpDataReaderListener : public virtual DataReaderListener<T> {
 public:
  void on_requested_deadline_missed(
      DataReader<T>&, const dds::core::status::RequestedDeadlineMissedStatus&) override {}
  void on_requested_incompatible_qos(
      DataReader<T>&, const dds::core::status::RequestedIncompatibleQosStatus&) override {}
  void on_sample_rejected(DataReader<T>&, const dds::core::status::SampleRejectedStatus&) override {
  }
  void on_liveliness_changed(DataReader<T>&,
                             const dds::core::status::LivelinessChangedStatus&) override {}
  void on_data_available(DataReader<T>&) override {}
  void on_subscription_matched(DataReader<T>&,
                               const dds::core::status::SubscriptionMatchedStatus&) override {}
  void on_sample_lost(DataReader<T>&, const dds::core::status::SampleLostStatus&) override {}
};

class AnyDataReaderListener {
 public:
  virtual ~AnyDataReaderListener() = default;
  virtual void on_requested_deadline_missed(
      AnyDataReader& reader, const dds::core::status::RequestedDeadlineMissedStatus& status) = 0;
  virtual void on_requested_incompatible_qos(
      AnyDataReader& reader, const dds::core::status::RequestedIncompatibleQosStatus& status) = 0;
  virtual void on_sample_rejected(AnyDataReader& reader,
                                  const dds::core::status::SampleRejectedStatus& status) = 0;
  virtual void on_liveliness_changed(AnyDataReader& reader,
                                     const dds::core::status::LivelinessChangedStatus& status) = 0;
  virtual void on_data_available(AnyDataReader& reader) = 0;
  virtual void on_subscription_matched(
      AnyDataReader& reader, const dds::core::status::SubscriptionMatchedStatus& status) = 0;
  virtual void on_sample_lost(AnyDataReader& reader,
                              const dds::core::status::SampleLostStatus& status) = 0;
};

class NoOpAnyDataReaderListener : public virtual AnyDataReaderListener {
 public:
  void on_requested_deadline_missed(
      AnyDataReader&, const dds::core::status::RequestedDeadlineMissedStatus&) override {}
  void on_requested_incompatible_qos(
      AnyDataReader&, const dds::core::status::RequestedIncompatibleQosStatus&) override {}
  void on_sample_rejected(AnyDataReader&, const dds::core::status::SampleRejectedStatus&) override {
  }
  void on_liveliness_changed(AnyDataReader&,
                             const dds::core::status::LivelinessChangedStatus&) override {}
  void on_data_available(AnyDataReader&) override {}
  void on_subscription_matched(AnyDataReader&,
                               const dds::core::status::SubscriptionMatchedStatus&) override {}
  void on_sample_lost(AnyDataReader&, const dds::core::status::SampleLostStatus&) override {}
};

class SubscriberListener : public virtual AnyDataReaderListener {
 public:
  virtual void on_data_on_readers(Subscriber& subscriber) = 0;
};
class NoOpSubscriberListener : public virtual SubscriberListener,
                               public virtual NoOpAnyDataReaderListener {
 public:
  void on_data_on_readers(Subscriber&) override {}
};

}  // namespace dds::sub
