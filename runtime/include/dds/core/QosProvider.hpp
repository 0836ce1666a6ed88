// dds::core::QosProvider: entity QoS from YAML profile files (DDS-PSM-Cxx §7.5.5, with
// Spindle's YAML format instead of XML; schema in qos-profiles/schema.md, guide in
// docs/qos.md).
//
//   dds::core::QosProvider qp("my-app.yaml", "telemetry");
//   dds::pub::qos::DataWriterQos wq = qp.datawriter_qos();        // the default profile
//   dds::sub::qos::DataReaderQos rq = qp.datareader_qos("logged");  // any loaded profile
//
// `uri` is a path or a file:// URI. A relative path that does not exist from the current
// directory is looked up in each folder of SPINDLE_QOS_PATH, then in the installed profile
// folder (<prefix>/share/spindle/qos-profiles), so QosProvider("atomic.yaml") finds the
// shipped profile. The file and everything it includes is loaded, resolved and checked by
// the constructor; errors name the file, the line and the key and are thrown as
// dds::core::InvalidArgumentError, or dds::core::InconsistentPolicyError when a profile's
// policies contradict each other.
//
// The getters without an id use `profile`; when `profile` is empty and the file defines
// exactly one profile, that one. Otherwise they throw dds::core::PreconditionNotMetError.
// An unknown profile id throws dds::core::InvalidArgumentError listing the known ones.
//
// Threading: the loaded profiles are immutable and shared by copies of the provider; all
// getters may be called from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>

namespace spindle::qos {
class ProfileLibrary;
}

namespace dds::core {

class QosProvider {
 public:
  explicit QosProvider(const std::string& uri, const std::string& profile = "");

  [[nodiscard]] dds::domain::qos::DomainParticipantQos participant_qos() const;
  [[nodiscard]] dds::domain::qos::DomainParticipantQos participant_qos(const std::string& id) const;
  [[nodiscard]] dds::topic::qos::TopicQos topic_qos() const;
  [[nodiscard]] dds::topic::qos::TopicQos topic_qos(const std::string& id) const;
  [[nodiscard]] dds::pub::qos::PublisherQos publisher_qos() const;
  [[nodiscard]] dds::pub::qos::PublisherQos publisher_qos(const std::string& id) const;
  [[nodiscard]] dds::sub::qos::SubscriberQos subscriber_qos() const;
  [[nodiscard]] dds::sub::qos::SubscriberQos subscriber_qos(const std::string& id) const;
  [[nodiscard]] dds::pub::qos::DataWriterQos datawriter_qos() const;
  [[nodiscard]] dds::pub::qos::DataWriterQos datawriter_qos(const std::string& id) const;
  [[nodiscard]] dds::sub::qos::DataReaderQos datareader_qos() const;
  [[nodiscard]] dds::sub::qos::DataReaderQos datareader_qos(const std::string& id) const;

  // Spindle extensions: the file that was loaded, and every profile it makes available.
  [[nodiscard]] const std::string& uri() const noexcept { return uri_; }
  [[nodiscard]] std::vector<std::string> profiles() const;

 private:
  [[nodiscard]] const std::string& default_profile() const;
  std::shared_ptr<const spindle::qos::ProfileLibrary> library_;
  std::string uri_;
  std::string default_;
};

}  // namespace dds::core
