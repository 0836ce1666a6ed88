// QoS profile files (qos-profiles/*.yaml, schema in qos-profiles/schema.md): loading a file
// and everything it includes, resolving each profile's `base` chain, and building the six
// entity QoS values of every profile. All profiles are checked when a file is loaded, so a
// library that loads holds only valid, consistent profiles.
//
// Errors name the file, the line and the key:
//   atomic.yaml:12: profiles.atomic.writer.history.depth: must be >= 1, got 0
// and are thrown as dds::core::InvalidArgumentError (syntax, unknown or repeated keys,
// types, ranges, bad include or base, inheritance or include cycles, missing files or
// profiles) or dds::core::InconsistentPolicyError (a resolved QoS whose policies
// contradict each other; the line is that of the most derived setting involved).
//
// Threading: a ProfileLibrary is immutable once built; share it freely between threads.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dds/domain/qos/DomainParticipantQos.hpp>
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/pub/qos/PublisherQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>
#include <dds/sub/qos/SubscriberQos.hpp>
#include <dds/topic/qos/TopicQos.hpp>

namespace spindle::qos {

// The QoS of every entity kind under one profile.
struct ProfileQos {
  dds::domain::qos::DomainParticipantQos participant;
  dds::topic::qos::TopicQos topic;
  dds::pub::qos::PublisherQos publisher;
  dds::sub::qos::SubscriberQos subscriber;
  dds::pub::qos::DataWriterQos writer;
  dds::sub::qos::DataReaderQos reader;
  friend bool operator==(const ProfileQos&, const ProfileQos&) = default;
};

class ProfileLibrary {
 public:
  // Loads `file` and, transitively, the files it includes. `search_path` is where included
  // names not found next to the including file are looked up, in order.
  [[nodiscard]] static ProfileLibrary load(const std::filesystem::path& file,
                                           const std::vector<std::filesystem::path>& search_path);
  // The same for YAML text; `source` names it in errors; included names are looked up in
  // `include_dir`, then on `search_path`.
  [[nodiscard]] static ProfileLibrary parse(std::string_view yaml, const std::string& source,
                                            const std::vector<std::filesystem::path>& search_path,
                                            const std::filesystem::path& include_dir = ".");

  // Throws dds::core::InvalidArgumentError naming the source and the known profiles when
  // there is no profile `name`.
  [[nodiscard]] const ProfileQos& profile(std::string_view name) const;
  [[nodiscard]] bool contains(std::string_view name) const { return profiles_.contains(name); }
  // Every profile, of the main file and of the files it includes, sorted by name.
  [[nodiscard]] std::vector<std::string> names() const;
  // The profiles the main file defines, in file order.
  [[nodiscard]] const std::vector<std::string>& own_names() const noexcept { return own_; }
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

 private:
  ProfileLibrary() = default;
  static ProfileLibrary build_library(std::string_view text, const std::string& source,
                                      const std::filesystem::path& dir,
                                      const std::optional<std::filesystem::path>& canonical,
                                      const std::vector<std::filesystem::path>& search_path);
  std::string source_;
  std::map<std::string, ProfileQos, std::less<>> profiles_;
  std::vector<std::string> own_;
};

// Where profile files are looked up after the including file's folder: each folder of the
// colon-separated SPINDLE_QOS_PATH, then the installed profile folder
// (<prefix>/share/spindle/qos-profiles).
[[nodiscard]] std::vector<std::filesystem::path> default_search_path();

// `name` as given if it names a file, else (when relative) the first `dir / name` on
// `search_path` that is a file.
[[nodiscard]] std::optional<std::filesystem::path> find_profile_file(
    const std::filesystem::path& name, const std::vector<std::filesystem::path>& search_path);

}  // namespace spindle::qos
