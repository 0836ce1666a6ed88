// Strict YAML reading shared by the group, QoS-profile and domain-file loaders.
#include "core/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <utility>

namespace spindle::core {

namespace {

std::string compose(const std::string& source, int line, const std::string& key,
                    const std::string& problem) {
  // Appends one piece at a time: GCC 12 at -O3 reports a false -Wrestrict overlap for
  // `":" + std::to_string(line)` (GCC bug 105329).
  std::string m = source;
  if (line > 0) {
    m += ':';
    m += std::to_string(line);
  }
  m += ": ";
  if (!key.empty()) {
    m += key;
    m += ": ";
  }
  m += problem;
  return m;
}

}  // namespace

std::string shown(const YAML::Node& n) {
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  if (n.IsSequence()) return "a list";
  if (n.IsMap()) return "a mapping";
  return "nothing";
}

YamlError::YamlError(std::string source, int line, std::string key, std::string problem)
    : std::runtime_error(compose(source, line, key, problem)),
      source_(std::move(source)),
      line_(line),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

int line_of(const YAML::Node& n) noexcept {
  if (!n.IsDefined()) return 0;
  const auto mark = n.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

void YamlReader::fail(const YAML::Node& at, const std::string& key, const std::string& what) const {
  fail_at_line(line_of(at), key, what);
}

void YamlReader::fail_at_line(int line, const std::string& key, const std::string& what) const {
  throw YamlError(source_, line, key, what);
}

void YamlReader::expect_map(const YAML::Node& n, const std::string& key,
                            std::span<const std::string_view> allowed) const {
  if (n.IsNull()) return;
  if (!n.IsMap()) fail(n, key, "expected a mapping, got " + shown(n));
  std::vector<std::string> seen;
  for (const auto& kv : n) {
    if (!kv.first.IsScalar()) fail(kv.first, key, "a key must be a plain name");
    const auto& name = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string list;
      for (auto a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
      fail(kv.first, join(key, name), "unknown key (allowed: " + list + ")");
    }
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      fail(kv.first, join(key, name), "given twice");
    seen.push_back(name);
  }
}

YAML::Node YamlReader::find(const YAML::Node& map, std::string_view name) {
  if (map.IsMap()) {
    for (const auto& kv : map)
      if (kv.first.IsScalar() && kv.first.Scalar() == name) return kv.second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

bool parse_integer(std::string_view text, long long& out) noexcept {
  const auto* first = text.data();
  const auto* last = text.data() + text.size();
  if (!text.empty() && text.front() == '+') ++first;
  const auto [end, ec] = std::from_chars(first, last, out, 10);
  return first != last && ec == std::errc() && end == last;
}

long long YamlReader::bounded_integer(const YAML::Node& n, const std::string& key, long long lo,
                                      long long hi, bool open_above) const {
  if (!n.IsScalar()) fail(n, key, "expected an integer, got " + shown(n));
  long long v = 0;
  if (!parse_integer(n.Scalar(), v)) fail(n, key, "expected an integer, got '" + n.Scalar() + "'");
  if (v >= lo && v <= hi) return v;
  if (!open_above)
    fail(n, key,
         "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
             std::to_string(v));
  if (v < lo) fail(n, key, "must be >= " + std::to_string(lo) + ", got " + std::to_string(v));
  fail(n, key, "must be <= " + std::to_string(hi) + ", got " + std::to_string(v));
}

std::string YamlReader::text(const YAML::Node& n, const std::string& key) const {
  if (!n.IsScalar()) fail(n, key, "expected a string, got " + shown(n));
  return n.Scalar();
}

bool YamlReader::boolean(const YAML::Node& n, const std::string& key) const {
  if (n.IsScalar() && n.Scalar() == "true") return true;
  if (n.IsScalar() && n.Scalar() == "false") return false;
  fail(n, key, "expected true or false, got " + shown(n));
}

dds::core::Duration YamlReader::duration(const YAML::Node& n, const std::string& key,
                                         const dds::core::Duration& lo,
                                         const dds::core::Duration& hi) const {
  dds::core::Duration d;
  if (!n.IsScalar() || !parse_duration(n.Scalar(), d))
    fail(n, key,
         "expected a duration (an integer with ns, us, ms, s or min, or 0, or infinite), got " +
             shown(n));
  if (d < lo || d > hi) {
    if (hi.is_infinite())
      fail(n, key, "must be >= " + format_duration(lo) + ", got " + format_duration(d));
    fail(n, key,
         "must be in " + format_duration(lo) + ".." + format_duration(hi) + ", got " +
             format_duration(d));
  }
  return d;
}

std::size_t YamlReader::choice(const YAML::Node& n, const std::string& key,
                               std::span<const std::string_view> choices) const {
  if (n.IsScalar()) {
    const auto it = std::find(choices.begin(), choices.end(), n.Scalar());
    if (it != choices.end()) return static_cast<std::size_t>(it - choices.begin());
  }
  fail(n, key, "expected " + list_alternatives(choices) + ", got " + shown(n));
}

std::vector<std::string> YamlReader::text_list(const YAML::Node& n, const std::string& key) const {
  if (!n.IsSequence()) fail(n, key, "expected a list of strings, got " + shown(n));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n.size(); ++i)
    out.push_back(text(n[i], item(key, i)));
  return out;
}

void check_version(const YamlReader& r, const YAML::Node& root, int supported) {
  const auto version = YamlReader::find(root, "version");
  const auto known = "this loader reads version " + std::to_string(supported);
  if (!version.IsDefined()) r.fail(root, "version", "missing (" + known + ")");
  const auto v = r.integer<int>(version, "version", INT32_MIN, INT32_MAX);
  if (v != supported)
    r.fail(version, "version", "unsupported version " + std::to_string(v) + " (" + known + ")");
}

YAML::Node parse_yaml(std::string_view text, const std::string& source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    throw YamlError(source, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "syntax: " + e.msg);
  }
}

std::string read_text_file(const std::filesystem::path& file, std::string_view what) {
  std::error_code ec;
  std::ifstream in;
  if (std::filesystem::is_regular_file(file, ec)) in.open(file, std::ios::binary);
  if (!in.is_open() || !in) {
    throw YamlError(file.string(), 0, "", "cannot open the " + std::string(what));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string list_alternatives(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

namespace {

struct Unit {
  std::string_view name;
  std::int64_t nanos;
};
// Longest first: format_duration picks the largest unit that divides exactly.
constexpr Unit kUnits[] = {
    {"min", 60'000'000'000}, {"s", 1'000'000'000}, {"ms", 1'000'000}, {"us", 1'000}, {"ns", 1}};

}  // namespace

bool parse_duration(std::string_view text, dds::core::Duration& out) noexcept {
  if (text == "infinite") {
    out = dds::core::Duration::infinite();
    return true;
  }
  if (text == "0") {
    out = dds::core::Duration::zero();
    return true;
  }
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  if (digits == 0 || digits > 18) return false;
  std::int64_t count = 0;
  std::from_chars(text.data(), text.data() + digits, count);
  const auto unit = text.substr(digits);
  for (const auto& u : kUnits) {
    if (unit != u.name) continue;
    // Finite durations stop below Duration's infinite seconds value.
    constexpr std::int64_t kMaxNanos =
        std::int64_t{dds::core::Duration::kInfiniteSec - 1} * 1'000'000'000;
    if (count > kMaxNanos / u.nanos) return false;
    out = dds::core::Duration(std::chrono::nanoseconds(count * u.nanos));
    return true;
  }
  return false;
}

std::string format_duration(const dds::core::Duration& d) {
  if (d.is_infinite()) return "infinite";
  const auto ns = d.to_nanosecs();
  if (ns == 0) return "0";
  for (const auto& u : kUnits)
    if (ns % u.nanos == 0) return std::to_string(ns / u.nanos) + std::string(u.name);
  return std::to_string(ns) + "ns";
}

}  // namespace spindle::core
