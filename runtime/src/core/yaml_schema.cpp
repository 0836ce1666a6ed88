// Reading, rendering and describing schema fields (see yaml_schema.hpp).
#include "core/yaml_schema.hpp"

#include <algorithm>
#include <cstdio>

namespace spindle::core {

namespace {

std::string bound(const FieldSpec& spec, std::int64_t v) {
  if (spec.type == ValueType::duration)
    return format_duration(dds::core::Duration(std::chrono::nanoseconds(v)));
  return std::to_string(v);
}

dds::core::Duration duration_bound(std::int64_t ns) {
  return ns == kNoUpperBound ? dds::core::Duration::infinite()
                             : dds::core::Duration(std::chrono::nanoseconds(ns));
}

}  // namespace

std::string yaml_quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {  // bytes >= 0x80 (UTF-8) pass through unchanged
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Value read_value(const YamlReader& r, const YAML::Node& n, const std::string& key,
                 const FieldSpec& spec) {
  switch (spec.type) {
    case ValueType::boolean:
      return r.boolean(n, key);
    case ValueType::integer:
      return static_cast<std::int64_t>(
          r.bounded_integer(n, key, spec.lo, spec.hi, spec.hi >= INT32_MAX));
    case ValueType::count: {
      long long v = 0;
      if (n.IsScalar() && n.Scalar() == "unlimited") return std::int64_t{-1};
      if (!n.IsScalar() || !parse_integer(n.Scalar(), v))
        r.fail(n, key, "expected an integer or unlimited, got " + shown(n));
      if (v < spec.lo)
        r.fail(n, key,
               "must be >= " + std::to_string(spec.lo) + " or unlimited, got " + std::to_string(v));
      if (v > spec.hi)
        r.fail(n, key, "must be <= " + std::to_string(spec.hi) + ", got " + std::to_string(v));
      return static_cast<std::int64_t>(v);
    }
    case ValueType::duration:
      return r.duration(n, key, duration_bound(spec.lo), duration_bound(spec.hi));
    case ValueType::choice:
      return static_cast<std::int64_t>(r.choice(n, key, spec.choices));
    case ValueType::text: {
      auto t = r.text(n, key);
      if (static_cast<std::int64_t>(t.size()) < spec.lo) r.fail(n, key, "must not be empty");
      return t;
    }
    case ValueType::text_list: {
      auto list = r.text_list(n, key);
      if (!spec.choices.empty()) {  // each element one of the choices
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (std::find(spec.choices.begin(), spec.choices.end(), list[i]) == spec.choices.end())
            r.fail(n[i], key + "[" + std::to_string(i) + "]",
                   "is '" + list[i] + "', " + describe_type(spec));
        }
      }
      return list;
    }
    case ValueType::records:
      break;
  }
  r.fail(n, key, "is a list of records, read by its loader");
}

std::string render_value(const FieldSpec& spec, const Value& v) {
  switch (spec.type) {
    case ValueType::boolean:
      return std::get<bool>(v) ? "true" : "false";
    case ValueType::integer:
      return std::to_string(std::get<std::int64_t>(v));
    case ValueType::count: {
      const auto n = std::get<std::int64_t>(v);
      return n < 0 ? "unlimited" : std::to_string(n);
    }
    case ValueType::duration:
      return format_duration(std::get<dds::core::Duration>(v));
    case ValueType::choice: {
      const auto i = static_cast<std::size_t>(std::get<std::int64_t>(v));
      return i < spec.choices.size() ? std::string(spec.choices[i]) : "?";
    }
    case ValueType::text:
      return yaml_quoted(std::get<std::string>(v));
    case ValueType::text_list: {
      std::string out = "[";
      const auto& list = std::get<std::vector<std::string>>(v);
      for (std::size_t i = 0; i < list.size(); ++i)
        out += (i ? ", " : "") + yaml_quoted(list[i]);
      return out + "]";
    }
    case ValueType::records:
      break;
  }
  return "[]";
}

std::string describe_type(const FieldSpec& spec) {
  auto range = [&](std::string_view what) {
    std::string out(what);
    if (spec.hi == kNoUpperBound || (spec.type != ValueType::duration && spec.hi >= INT32_MAX))
      return out + " >= " + bound(spec, spec.lo);
    return out + " " + bound(spec, spec.lo) + ".." + bound(spec, spec.hi);
  };
  switch (spec.type) {
    case ValueType::boolean:
      return "true or false";
    case ValueType::integer:
      if (spec.lo == INT32_MIN && spec.hi == INT32_MAX) return "integer (32-bit)";
      return range("integer");
    case ValueType::count:
      return range("integer") + ", or unlimited";
    case ValueType::duration:
      return spec.hi == kNoUpperBound ? range("duration") + ", or infinite" : range("duration");
    case ValueType::choice: {
      std::string out = "one of: ";
      for (std::size_t i = 0; i < spec.choices.size(); ++i)
        out += (i ? ", " : "") + std::string(spec.choices[i]);
      return out;
    }
    case ValueType::text:
      return spec.lo > 0 ? "non-empty string" : "string";
    case ValueType::text_list: {
      if (spec.choices.empty()) return "list of strings";
      std::string out = "list of: ";
      for (std::size_t i = 0; i < spec.choices.size(); ++i)
        out += (i ? ", " : "") + std::string(spec.choices[i]);
      return out;
    }
    case ValueType::records: {
      std::string out = "list of {";
      for (std::size_t i = 0; i < spec.record_fields.size(); ++i)
        out += (i ? ", " : "") + spec.record_fields[i].key;
      return out + "}";
    }
  }
  return "";
}

namespace {

void walk(const YamlReader& r, const YAML::Node& map, const std::string& path,
          std::span<const FieldSpec* const> specs, const std::string& prefix,
          const FieldVisitor& visit) {
  std::vector<std::string> names;
  for (const auto* s : specs) {
    if (s->key.compare(0, prefix.size(), prefix) != 0) continue;
    const auto rest = s->key.substr(prefix.size());
    auto head = rest.substr(0, rest.find('.'));
    if (std::find(names.begin(), names.end(), head) == names.end()) names.push_back(head);
  }
  const std::vector<std::string_view> allowed(names.begin(), names.end());
  r.expect_map(map, path, allowed);
  if (!map.IsMap()) return;
  for (const auto& kv : map) {
    const auto& name = kv.first.Scalar();
    const auto key = YamlReader::join(path, name);
    const auto full = prefix + name;
    const auto leaf = std::find_if(specs.begin(), specs.end(),
                                   [&](const FieldSpec* s) { return s->key == full; });
    if (leaf != specs.end()) {
      visit(static_cast<std::size_t>(leaf - specs.begin()), kv.first, kv.second, key);
    } else {
      walk(r, kv.second, key, specs, full + ".", visit);
    }
  }
}

}  // namespace

void walk_fields(const YamlReader& r, const YAML::Node& map, const std::string& path,
                 std::span<const FieldSpec* const> specs, const FieldVisitor& visit) {
  walk(r, map, path, specs, "", visit);
}

std::string render_block(std::span<const FieldSpec* const> specs,
                         std::span<const std::string> values, int indent) {
  std::string out;
  std::vector<std::string> open;  // the nested mappings currently open
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i]->type == ValueType::records) continue;
    std::vector<std::string> parts;
    std::string_view key = specs[i]->key;
    for (auto dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.')) {
      parts.emplace_back(key.substr(0, dot));
      key.remove_prefix(dot + 1);
    }
    std::size_t common = 0;
    while (common < open.size() && common < parts.size() && open[common] == parts[common])
      ++common;
    open.resize(common);
    for (std::size_t d = common; d < parts.size(); ++d) {
      out += std::string(static_cast<std::size_t>(indent) + 2 * d, ' ') + parts[d] + ":\n";
      open.push_back(parts[d]);
    }
    out += std::string(static_cast<std::size_t>(indent) + 2 * parts.size(), ' ') +
           std::string(key) + ": " + values[i] + "\n";
  }
  return out;
}

std::string render_flow(std::span<const FieldSpec* const> specs,
                        std::span<const std::string> values) {
  // An empty text is left out: it reads back as the default (a record's optional text).
  std::string out = "{";
  bool first = true;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i]->type == ValueType::text && values[i] == "\"\"") continue;
    out += (first ? "" : ", ") + specs[i]->key + ": " + values[i];
    first = false;
  }
  return out + "}";
}

std::string markdown_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace spindle::core
