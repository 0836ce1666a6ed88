// Writer-side listeners (DDS-PSM-Cxx §7.5.3): DataWriterListener<T> for one typed writer,
// AnyDataWriterListener for a Publisher or DomainParticipant that hears about all its
// writers, and PublisherListener. The NoOp variants implement every callback as nothing,
// so an application overrides only what it needs.
//
// Threading: callbacks run on the participant's listener thread, never on a protocol
// thread; a callback may call back into the entity. Only statuses in the mask given with
// the listener are delivered; others go to the parent's listener (publisher, then
// participant), as the DCPS specification says.
#pragma once

#include <dds/core/status/Status.hpp>

namespace dds::pub {

template <typename T>
class DataWriter;
class AnyDataWriter;

template <typename T>
class DataWriterListener {
 public:
  virtual ~DataWriterListener() = default;
  virtual void on_offered_deadline_missed(
      DataWriter<T>& writer, const dds::core::status::OfferedDeadlineMissedStatus& status) = 0;
  virtual void on_offered_incompatible_qos(
      DataWriter<T>& writer, const dds::core::status::OfferedIncompatibleQosStatus& status) = 0;
  virtual void on_liveliness_lost(DataWriter<T>& writer,
                                  const dds::core::status::LivelinessLostStatus& status) = 0;
  virtual void on_publication_matched(
      DataWriter<T>& writer, const dds::core::status::PublicationMatchedStatus& status) = 0;
};

template <typename T>
class NoOpDataWriterListener : public virtual DataWriterListener<T> {
 public:
  void on_offered_deadline_missed(DataWriter<T>&,
                                  const dds::core::status::OfferedDeadlineMissedStatus&) override {}
  void on_offered_incompatible_qos(
      DataWriter<T>&, const dds::core::status::OfferedIncompatibleQosStatus&) override {}
  void on_liveliness_lost(DataWriter<T>&, const dds::core::status::LivelinessLostStatus&) override {
  }
  void on_publication_matched(DataWriter<T>&,
                              const dds::core::status::PublicationMatchedStatus&) override {}
};

class AnyDataWriterListener {
 public:
  virtual ~AnyDataWriterListener() = default;
  virtual void on_offered_deadline_missed(
      AnyDataWriter& writer, const dds::core::status::OfferedDeadlineMissedStatus& status) = 0;
  virtual void on_offered_incompatible_qos(
      AnyDataWriter& writer, const dds::core::status::OfferedIncompatibleQosStatus& status) = 0;
  virtual void on_liveliness_lost(AnyDataWriter& writer,
                                  const dds::core::status::LivelinessLostStatus& status) = 0;
  virtual void on_publication_matched(
      AnyDataWriter& writer, const dds::core::status::PublicationMatchedStatus& status) = 0;
};

class NoOpAnyDataWriterListener : public virtual AnyDataWriterListener {
 public:
  void on_offered_deadline_missed(AnyDataWriter&,
                                  const dds::core::status::OfferedDeadlineMissedStatus&) override {}
  void on_offered_incompatible_qos(
      AnyDataWriter&, const dds::core::status::OfferedIncompatibleQosStatus&) override {}
  void on_liveliness_lost(AnyDataWriter&, const dds::core::status::LivelinessLostStatus&) override {
  }
  void on_publication_matched(AnyDataWriter&,
                              const dds::core::status::PublicationMatchedStatus&) override {}
};

class PublisherListener : public virtual AnyDataWriterListener {};
class NoOpPublisherListener : public virtual PublisherListener,
                              public virtual NoOpAnyDataWriterListener {};

}  // namespace dds::pub
