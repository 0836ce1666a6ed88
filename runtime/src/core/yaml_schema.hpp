// A configuration schema defined once (STYLE 10): each key is a Field with its type, range,
// choices, documentation and the accessors that read and write it on the configured
// object. The loader (read_fields/walk_fields), the YAML renderer (render_fields) and the
// generated documentation (markdown_rows) all work from the same table, so defaults and
// docs cannot drift from what the loader accepts. Used by the QoS profiles
// (qos/schema.cpp) and the domain file (config/domain_config.cpp).
//
// Keys are dotted paths below a section ("history.depth" is `history: {depth: ...}`).
//
// Threading: tables are immutable after construction; all functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <dds/core/Duration.hpp>

#include "core/yaml_reader.hpp"

namespace spindle::core {

enum class ValueType : std::uint8_t {
  boolean,    // true | false
  integer,    // in [lo, hi]
  count,      // in [lo, hi], or "unlimited" (stored as -1, dds::core::LENGTH_UNLIMITED)
  duration,   // "100ms", "2s", "0", "infinite"; [lo, hi] in nanoseconds, hi = INT64_MAX
              // admits infinite
  choice,     // one of `choices`; stored as the index (the enum's value)
  text,       // a string of at least lo characters
  text_list,  // a list of strings
  records,    // a list of mappings with `record_fields`; read by the caller
};

// integer/count: std::int64_t; choice: index as std::int64_t; text, text_list as named.
using Value =
    std::variant<bool, std::int64_t, dds::core::Duration, std::string, std::vector<std::string>>;

struct FieldSpec {
  std::string key;
  ValueType type = ValueType::integer;
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::vector<std::string_view> choices;
  std::string_view doc;
  std::vector<FieldSpec> record_fields;  // records only, for the documentation
};

template <class T>
struct Field : FieldSpec {
  std::function<Value(const T&)> get;
  std::function<void(T&, const Value&)> set;
};

inline constexpr std::int64_t kNoUpperBound = INT64_MAX;

// A field without accessors yet.
template <class T>
[[nodiscard]] Field<T> make_field(std::string key, ValueType type, std::int64_t lo, std::int64_t hi,
                                  std::string_view doc) {
  Field<T> f;
  f.key = std::move(key);
  f.type = type;
  f.lo = lo;
  f.hi = hi;
  f.doc = doc;
  return f;
}

// Field `f` of a part of T (a policy of a QoS, a sub-struct) as a field of T with key
// "prefix.key". `part` maps a T& or const T& to the part: [](auto& t) -> auto& {...}.
template <class T, class Part, class PartOf>
[[nodiscard]] Field<T> lift(const Field<Part>& f, const std::string& prefix, PartOf part) {
  Field<T> g;
  static_cast<FieldSpec&>(g) = f;
  g.key = prefix + "." + f.key;
  g.get = [get = f.get, part](const T& t) { return get(part(t)); };
  g.set = [set = f.set, part](T& t, const Value& v) { set(part(t), v); };
  return g;
}

// Reads one scalar (or list) as the spec says; errors name `key`.
// A double-quoted YAML scalar: '"' and '\\' escaped, control bytes as \xNN.
[[nodiscard]] std::string yaml_quoted(const std::string& s);

[[nodiscard]] Value read_value(const YamlReader& r, const YAML::Node& n, const std::string& key,
                               const FieldSpec& spec);
// The YAML text of a value ("100ms", "reliable", "\"text\"", "[a, b]").
[[nodiscard]] std::string render_value(const FieldSpec& spec, const Value& v);
// Human description of what a key accepts ("integer 1..65536", "one of: a, b").
[[nodiscard]] std::string describe_type(const FieldSpec& spec);

// Checks `map` (at key path `path`) holds only the dotted keys of `specs` and calls
// visit(index, key node, value node, key path) for every leaf present, in file order.
using FieldVisitor = std::function<void(std::size_t index, const YAML::Node& key_node,
                                        const YAML::Node& value, const std::string& key)>;
void walk_fields(const YamlReader& r, const YAML::Node& map, const std::string& path,
                 std::span<const FieldSpec* const> specs, const FieldVisitor& visit);

// A YAML block of `values` (one per spec, records excluded) as nested mappings, each line
// indented by `indent` spaces.
[[nodiscard]] std::string render_block(std::span<const FieldSpec* const> specs,
                                       std::span<const std::string> values, int indent);
// "{id: 1, host: \"a\", port: 2}" for one record.
[[nodiscard]] std::string render_flow(std::span<const FieldSpec* const> specs,
                                      std::span<const std::string> values);

template <class T>
[[nodiscard]] std::vector<const FieldSpec*> specs_of(const std::vector<Field<T>>& fields) {
  std::vector<const FieldSpec*> out;
  out.reserve(fields.size());
  for (const auto& f : fields)
    out.push_back(&f);
  return out;
}

// Reads every field present in `map` into `out`; returns the indexes that were set.
template <class T>
std::vector<std::size_t> read_fields(const YamlReader& r, const YAML::Node& map,
                                     const std::string& path, const std::vector<Field<T>>& fields,
                                     T& out) {
  std::vector<std::size_t> set;
  walk_fields(r, map, path, specs_of(fields),
              [&](std::size_t i, const YAML::Node&, const YAML::Node& n, const std::string& key) {
                fields[i].set(out, read_value(r, n, key, fields[i]));
                set.push_back(i);
              });
  return set;
}

// The rendered values of every non-record field of `value`.
template <class T>
[[nodiscard]] std::vector<std::string> render_values(const std::vector<Field<T>>& fields,
                                                     const T& value) {
  std::vector<std::string> out;
  for (const auto& f : fields)
    out.push_back(f.type == ValueType::records ? std::string() : render_value(f, f.get(value)));
  return out;
}

// Escapes `|` and line breaks for a markdown table cell.
[[nodiscard]] std::string markdown_cell(std::string_view text);

}  // namespace spindle::core
