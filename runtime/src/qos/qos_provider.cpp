// dds::core::QosProvider over the profile library.
#include <dds/core/Exception.hpp>
#include <dds/core/QosProvider.hpp>

#include "qos/profiles.hpp"

namespace dds::core {

namespace {

std::filesystem::path path_of(const std::string& uri) {
  constexpr std::string_view kScheme = "file://";
  if (uri.rfind(kScheme, 0) == 0) return uri.substr(kScheme.size());
  return uri;
}

}  // namespace

QosProvider::QosProvider(const std::string& uri, const std::string& profile) : uri_(uri) {
  const auto search = spindle::qos::default_search_path();
  const auto file = spindle::qos::find_profile_file(path_of(uri), search);
  if (!file) {
    std::string looked;
    for (const auto& d : search)
      looked += ", " + d.string();
    throw InvalidArgumentError(uri +
                               ": cannot find the QoS profile file (looked in the current "
                               "directory" +
                               looked + ")");
  }
  library_ = std::make_shared<const spindle::qos::ProfileLibrary>(
      spindle::qos::ProfileLibrary::load(*file, search));
  if (!profile.empty()) {
    (void)library_->profile(profile);  // an unknown profile fails here, not at first use
    default_ = profile;
  } else if (library_->own_names().size() == 1) {
    default_ = library_->own_names().front();
  }
}

const std::string& QosProvider::default_profile() const {
  if (default_.empty()) {
    std::string known;
    for (const auto& n : library_->names())
      known += (known.empty() ? "" : ", ") + n;
    throw PreconditionNotMetError(library_->source() +
                                  ": no default QoS profile: name one in QosProvider(uri, "
                                  "profile) or pass an id (profiles: " +
                                  known + ")");
  }
  return default_;
}

std::vector<std::string> QosProvider::profiles() const {
  return library_->names();
}

dds::domain::qos::DomainParticipantQos QosProvider::participant_qos() const {
  return participant_qos(default_profile());
}
dds::domain::qos::DomainParticipantQos QosProvider::participant_qos(const std::string& id) const {
  return library_->profile(id).participant;
}
dds::topic::qos::TopicQos QosProvider::topic_qos() const {
  return topic_qos(default_profile());
}
dds::topic::qos::TopicQos QosProvider::topic_qos(const std::string& id) const {
  return library_->profile(id).topic;
}
dds::pub::qos::PublisherQos QosProvider::publisher_qos() const {
  return publisher_qos(default_profile());
}
dds::pub::qos::PublisherQos QosProvider::publisher_qos(const std::string& id) const {
  return library_->profile(id).publisher;
}
dds::sub::qos::SubscriberQos QosProvider::subscriber_qos() const {
  return subscriber_qos(default_profile());
}
dds::sub::qos::SubscriberQos QosProvider::subscriber_qos(const std::string& id) const {
  return library_->profile(id).subscriber;
}
dds::pub::qos::DataWriterQos QosProvider::datawriter_qos() const {
  return datawriter_qos(default_profile());
}
dds::pub::qos::DataWriterQos QosProvider::datawriter_qos(const std::string& id) const {
  return library_->profile(id).writer;
}
dds::sub::qos::DataReaderQos QosProvider::datareader_qos() const {
  return datareader_qos(default_profile());
}
dds::sub::qos::DataReaderQos QosProvider::datareader_qos(const std::string& id) const {
  return library_->profile(id).reader;
}

}  // namespace dds::core
