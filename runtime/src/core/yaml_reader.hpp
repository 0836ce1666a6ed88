// Strict reading of Spindle's YAML files (group description, QoS profiles, domain file):
// every map is checked against the keys it may hold (unknown and repeated keys are
// errors), every scalar against its type and range, and every error is a YamlError whose
// message names the source, the 1-based line and the dotted key path:
//
//   atomic.yaml:12: profiles.atomic.writer.history.depth: must be >= 1, got 0
//
// Each loader converts YamlError into the exception its API promises (GroupError,
// dds::core::InvalidArgumentError, ...), keeping the message.
//
// Nodes are only ever read through const references: yaml-cpp's non-const operator[]
// inserts missing keys, and subscripting a scalar throws, so maps are walked by iteration.
//
// Threading: YamlReader is used by one thread for one parse; the free functions are pure.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <dds/core/Duration.hpp>

namespace spindle::core {

class YamlError : public std::runtime_error {
 public:
  // line is 1-based; 0 when unknown. An empty key leaves the key out of the message.
  YamlError(std::string source, int line, std::string key, std::string problem);
  [[nodiscard]] const std::string& source() const noexcept { return source_; }
  [[nodiscard]] int line() const noexcept { return line_; }
  [[nodiscard]] const std::string& key() const noexcept { return key_; }
  [[nodiscard]] const std::string& problem() const noexcept { return problem_; }

 private:
  std::string source_;
  int line_;
  std::string key_;
  std::string problem_;
};

// How a node appears in messages: 'text', a list, a mapping, nothing.
[[nodiscard]] std::string shown(const YAML::Node& n);
// The 1-based line of a node, 0 when the node is absent or carries no position.
[[nodiscard]] int line_of(const YAML::Node& n) noexcept;

class YamlReader {
 public:
  explicit YamlReader(std::string source) : source_(std::move(source)) {}
  [[nodiscard]] const std::string& source() const noexcept { return source_; }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const;
  [[noreturn]] void fail_at_line(int line, const std::string& key, const std::string& what) const;

  // A mapping (a null node counts as an empty one) whose keys are all in `allowed`, each
  // at most once.
  void expect_map(const YAML::Node& n, const std::string& key,
                  std::span<const std::string_view> allowed) const;
  void expect_map(const YAML::Node& n, const std::string& key,
                  std::initializer_list<std::string_view> allowed) const {
    expect_map(n, key, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  // The value of `name` in mapping `map`, or an undefined node (no insertion).
  [[nodiscard]] static YAML::Node find(const YAML::Node& map, std::string_view name);

  // An integer in [lo, hi]. When hi is the type's natural limit (`open_above`) the message
  // names the bound that was crossed ("must be >= 1, got 0"), otherwise the range ("must
  // be in 1..65536, got 0").
  [[nodiscard]] long long bounded_integer(const YAML::Node& n, const std::string& key, long long lo,
                                          long long hi, bool open_above) const;
  template <class T>
  [[nodiscard]] T integer(const YAML::Node& n, const std::string& key, T lo, T hi) const {
    constexpr auto kLongMax = std::numeric_limits<long long>::max();
    const bool huge =
        static_cast<unsigned long long>(hi) > static_cast<unsigned long long>(kLongMax);
    return static_cast<T>(bounded_integer(n, key, static_cast<long long>(lo),
                                          huge ? kLongMax : static_cast<long long>(hi),
                                          hi == std::numeric_limits<T>::max()));
  }
  [[nodiscard]] std::string text(const YAML::Node& n, const std::string& key) const;
  [[nodiscard]] bool boolean(const YAML::Node& n, const std::string& key) const;
  // A duration ("100ms", "2s", "0", "infinite") within [lo, hi]; infinite passes only when
  // hi is infinite.
  [[nodiscard]] dds::core::Duration duration(const YAML::Node& n, const std::string& key,
                                             const dds::core::Duration& lo,
                                             const dds::core::Duration& hi) const;
  // The index of the scalar in `choices`.
  [[nodiscard]] std::size_t choice(const YAML::Node& n, const std::string& key,
                                   std::span<const std::string_view> choices) const;
  [[nodiscard]] std::vector<std::string> text_list(const YAML::Node& n,
                                                   const std::string& key) const;

  [[nodiscard]] static std::string join(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
  }
  [[nodiscard]] static std::string item(const std::string& key, std::size_t i) {
    return key + "[" + std::to_string(i) + "]";
  }

 private:
  std::string source_;
};

// Checks the mandatory top-level `version:` of `root` equals `supported`.
void check_version(const YamlReader& r, const YAML::Node& root, int supported);

// A decimal integer with an optional sign and nothing else.
[[nodiscard]] bool parse_integer(std::string_view text, long long& out) noexcept;

// Parses YAML text; a syntax error is a YamlError naming source:line.
[[nodiscard]] YAML::Node parse_yaml(std::string_view text, const std::string& source);
// The whole content of a file; YamlError "<file>: cannot open the <what>" if unreadable.
[[nodiscard]] std::string read_text_file(const std::filesystem::path& file, std::string_view what);

// "a or b", "a, b or c".
[[nodiscard]] std::string list_alternatives(std::span<const std::string_view> names);

// Duration text: an integer with a unit (ns, us, ms, s, min), "0" or "infinite".
[[nodiscard]] bool parse_duration(std::string_view text, dds::core::Duration& out) noexcept;
// The shortest exact text parse_duration() reads back ("100ms", "0", "infinite").
[[nodiscard]] std::string format_duration(const dds::core::Duration& d);

}  // namespace spindle::core
