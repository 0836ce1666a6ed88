// spindle-gateway's configuration file (docs/interop.md, "Configuration"): which two domains,
// which IDL files, which topics in which direction with which QoS, and the topic filters.
//
// Error model: load_config throws ConfigError whose message starts with `file:line:column:`
// and names the key ("gateway.yaml:5:11: topics[0].direction: 'sideways' is not one of ...").
// Nothing here touches a domain: the file is checked whole before anything starts.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace spindle::gateway {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class EndKind { Spindle, Rtps };

struct EndConfig {
  EndKind kind = EndKind::Spindle;
  uint32_t domain = 0;
  std::string name;    // "spindle" / "rtps", or with the domain id when a kind is there twice
  std::string config;  // rtps: Cyclone DDS XML (text or file:// URI) for this domain; may be empty
};

enum class Reliability { Reliable, BestEffort };
enum class Durability { Volatile, TransientLocal };

struct TopicQos {
  Reliability reliability = Reliability::Reliable;
  Durability durability = Durability::Volatile;
  int32_t history_depth = 0;  // 0: KEEP_ALL (the default: a gateway drops nothing it holds)
  std::optional<double> deadline_s;
  std::string consistency;  // Spindle: unordered|atomic|volatile|logged; empty: the default
};

struct TopicConfig {
  std::string name;
  std::string type;  // scoped IDL name
  // Which ends samples go to: both ends, or only `to` (an end's name).
  std::optional<std::string> to;
  std::vector<std::string> partitions;
  TopicQos qos;
  std::string where;  // "file:line:col" of the entry, for messages
};

struct Config {
  std::string path;                       // the file it was read from
  std::vector<EndConfig> ends;            // exactly two
  std::vector<std::string> idl;           // resolved against the file's folder
  std::vector<std::string> include_dirs;  // likewise
  std::vector<std::string> allow;         // topic-name patterns (* and ?); empty: all
  std::vector<std::string> deny;
  std::vector<TopicConfig> topics;  // after allow/deny
  // Entries whose name has '*' or '?': every topic of that name and type that an
  // application writes in either domain is bridged as the entry says (allow/deny apply to
  // the names found).
  std::vector<TopicConfig> patterns;
  std::vector<std::string> filtered_out;  // topics the filters removed, for the log
};

[[nodiscard]] Config load_config(const std::string& path);
[[nodiscard]] Config parse_config(const std::string& text, const std::string& path);

// Shell-style match: '*' any run, '?' one character.
[[nodiscard]] bool glob_match(const std::string& pattern, const std::string& text);
// Whether allow/deny let topic `name` through.
[[nodiscard]] bool allowed(const Config& c, const std::string& name);

}  // namespace spindle::gateway
