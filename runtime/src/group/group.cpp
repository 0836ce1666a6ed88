// YAML loading of the group description. Every map is checked against the list of keys it
// may hold (unknown keys are errors), every scalar is range-checked, and every error names
// the source, the 1-based line and the dotted key path.
#include "group/group.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace spindle::group {

std::string_view to_string(Ordering o) noexcept {
  return o == Ordering::atomic ? "atomic" : "unordered";
}

std::optional<std::size_t> GroupDescription::rank_of(NodeId id) const noexcept {
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i].id == id) return i;
  return std::nullopt;
}

namespace {

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    std::ostringstream os;
    os << source_;
    if (at.IsDefined() && at.Mark().line >= 0) os << ':' << at.Mark().line + 1;
    os << ": " << key << ": " << what;
    throw GroupError(os.str());
  }

  void expect_map(const YAML::Node& n, const std::string& key,
                  std::initializer_list<std::string_view> allowed) const {
    if (!n.IsMap()) fail(n, key, "expected a mapping");
    for (const auto& kv : n) {
      const auto name = kv.first.as<std::string>();
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string list;
        for (auto a : allowed)
          list += (list.empty() ? "" : ", ") + std::string(a);
        fail(kv.first, join(key, name), "unknown key (allowed: " + list + ")");
      }
    }
  }

  template <class T>
  T integer(const YAML::Node& n, const std::string& key, T lo, T hi) const {
    if (!n.IsScalar()) fail(n, key, "expected an integer");
    long long v = 0;
    try {
      std::size_t used = 0;
      const auto text = n.Scalar();
      v = std::stoll(text, &used, 10);
      if (used != text.size()) throw std::invalid_argument(text);
    } catch (const std::exception&) {
      fail(n, key, "expected an integer, got '" + n.Scalar() + "'");
    }
    if (v < static_cast<long long>(lo) || v > static_cast<long long>(hi)) {
      fail(n, key,
           "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " +
               std::to_string(v));
    }
    return static_cast<T>(v);
  }

  std::string text(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string");
    return n.Scalar();
  }

  std::vector<NodeId> ids(const YAML::Node& n, const std::string& key) const {
    if (!n.IsSequence()) fail(n, key, "expected a list of member ids");
    std::vector<NodeId> out;
    for (std::size_t i = 0; i < n.size(); ++i)
      out.push_back(integer<NodeId>(n[i], key + "[" + std::to_string(i) + "]", 0,
                                    std::numeric_limits<NodeId>::max()));
    return out;
  }

  static std::string join(const std::string& a, const std::string& b) {
    return a.empty() ? b : a + "." + b;
  }

 private:
  std::string source_;
};

}  // namespace

GroupDescription parse_group(std::string_view yaml, std::string_view source) {
  Reader r(source);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw GroupError(std::string(source) + ":" + std::to_string(e.mark.line + 1) +
                     ": syntax: " + e.msg);
  }
  r.expect_map(root, "", {"version", "epoch", "members", "subgroups", "knobs"});
  if (!root["version"]) r.fail(root, "version", "missing (this reader knows version 1)");
  (void)r.integer<int>(root["version"], "version", 1, 1);

  GroupDescription g;
  if (auto e = root["epoch"])
    g.epoch = r.integer<std::uint64_t>(e, "epoch", 1, std::numeric_limits<std::int64_t>::max());

  const auto members = root["members"];
  if (!members || !members.IsSequence() || members.size() == 0)
    r.fail(members ? members : root, "members", "expected a non-empty list");
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string key = "members[" + std::to_string(i) + "]";
    const auto m = members[i];
    r.expect_map(m, key, {"id", "host", "port"});
    if (!m["id"]) r.fail(m, key + ".id", "missing");
    Member mem;
    mem.id = r.integer<NodeId>(m["id"], key + ".id", 0, std::numeric_limits<NodeId>::max());
    if (auto h = m["host"]) mem.host = r.text(h, key + ".host");
    if (auto p = m["port"]) mem.port = r.integer<std::uint16_t>(p, key + ".port", 0, 65535);
    g.members.push_back(std::move(mem));
  }

  const auto subs = root["subgroups"];
  if (subs) {
    if (!subs.IsSequence()) r.fail(subs, "subgroups", "expected a list");
    for (std::size_t i = 0; i < subs.size(); ++i) {
      const std::string key = "subgroups[" + std::to_string(i) + "]";
      const auto s = subs[i];
      r.expect_map(s, key,
                   {"name", "members", "senders", "window_size", "max_payload", "ordering"});
      Subgroup sg;
      sg.name = s["name"] ? r.text(s["name"], key + ".name") : "subgroup" + std::to_string(i);
      if (!s["members"]) r.fail(s, key + ".members", "missing");
      sg.members = r.ids(s["members"], key + ".members");
      sg.senders = s["senders"] ? r.ids(s["senders"], key + ".senders") : sg.members;
      if (auto w = s["window_size"])
        sg.window_size = r.integer<std::uint32_t>(w, key + ".window_size", 1, kMaxWindow);
      if (auto p = s["max_payload"])
        sg.max_payload = r.integer<std::uint32_t>(p, key + ".max_payload", 1, kMaxPayload);
      if (auto o = s["ordering"]) {
        const auto v = r.text(o, key + ".ordering");
        if (v == "atomic") {
          sg.ordering = Ordering::atomic;
        } else if (v == "unordered") {
          sg.ordering = Ordering::unordered;
        } else {
          r.fail(o, key + ".ordering", "expected atomic or unordered, got '" + v + "'");
        }
      }
      // Cross-references are checked here, where the line is still known.
      std::set<NodeId> seen;
      for (std::size_t k = 0; k < sg.members.size(); ++k) {
        const auto id = sg.members[k];
        if (!seen.insert(id).second)
          r.fail(s["members"], key + ".members", "member " + std::to_string(id) + " twice");
        if (!g.rank_of(id))
          r.fail(s["members"], key + ".members",
                 "node " + std::to_string(id) + " is not in members");
      }
      std::set<NodeId> sseen;
      for (auto id : sg.senders) {
        if (!seen.contains(id))
          r.fail(s["senders"], key + ".senders",
                 "sender " + std::to_string(id) + " is not a member of the subgroup");
        if (!sseen.insert(id).second)
          r.fail(s["senders"], key + ".senders", "sender " + std::to_string(id) + " twice");
      }
      g.subgroups.push_back(std::move(sg));
    }
  }

  if (auto k = root["knobs"]) {
    r.expect_map(k, "knobs",
                 {"idle_spin_us", "sleep_slice_us", "heartbeat_ms", "suspicion_timeout_ms"});
    if (auto v = k["idle_spin_us"])
      g.knobs.idle_spin = std::chrono::microseconds(
          r.integer<std::int64_t>(v, "knobs.idle_spin_us", 0, 10'000'000));
    if (auto v = k["sleep_slice_us"])
      g.knobs.sleep_slice = std::chrono::microseconds(
          r.integer<std::int64_t>(v, "knobs.sleep_slice_us", 1, 10'000'000));
    if (auto v = k["heartbeat_ms"])
      g.knobs.heartbeat_interval =
          std::chrono::milliseconds(r.integer<std::int64_t>(v, "knobs.heartbeat_ms", 0, 600'000));
    if (auto v = k["suspicion_timeout_ms"])
      g.knobs.suspicion_timeout = std::chrono::milliseconds(
          r.integer<std::int64_t>(v, "knobs.suspicion_timeout_ms", 1, 3'600'000));
  }
  validate(g, source);
  return g;
}

GroupDescription load_group(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw GroupError(file.string() + ": cannot open the group file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_group(ss.str(), file.string());
}

void validate(const GroupDescription& g, std::string_view source) {
  const std::string src(source);
  if (g.members.empty()) throw GroupError(src + ": members: the group has no member");
  if (g.members.size() > kMaxMembers)
    throw GroupError(src + ": members: at most " + std::to_string(kMaxMembers) + " members");
  std::set<NodeId> ids;
  for (const auto& m : g.members)
    if (!ids.insert(m.id).second)
      throw GroupError(src + ": members: id " + std::to_string(m.id) + " appears twice");
  for (std::size_t i = 0; i < g.subgroups.size(); ++i) {
    const auto& s = g.subgroups[i];
    const std::string key = src + ": subgroups[" + std::to_string(i) + "]";
    if (s.members.empty()) throw GroupError(key + ".members: empty");
    if (s.window_size < 1 || s.window_size > kMaxWindow)
      throw GroupError(key + ".window_size: must be in 1.." + std::to_string(kMaxWindow));
    if (s.max_payload < 1 || s.max_payload > kMaxPayload)
      throw GroupError(key + ".max_payload: must be in 1.." + std::to_string(kMaxPayload));
    for (auto id : s.members)
      if (!ids.contains(id))
        throw GroupError(key + ".members: node " + std::to_string(id) + " is not in members");
    for (auto id : s.senders)
      if (std::find(s.members.begin(), s.members.end(), id) == s.members.end())
        throw GroupError(key + ".senders: sender " + std::to_string(id) +
                         " is not a member of the subgroup");
  }
}

std::string to_yaml(const GroupDescription& g) {
  std::ostringstream os;
  os << "version: 1\nepoch: " << g.epoch << "\nmembers:\n";
  for (const auto& m : g.members)
    os << "  - {id: " << m.id << ", host: \"" << m.host << "\", port: " << m.port << "}\n";
  os << "subgroups:\n";
  auto list = [&](const std::vector<NodeId>& v) {
    os << '[';
    for (std::size_t i = 0; i < v.size(); ++i)
      os << (i ? ", " : "") << v[i];
    os << ']';
  };
  for (const auto& s : g.subgroups) {
    os << "  - name: \"" << s.name << "\"\n    members: ";
    list(s.members);
    os << "\n    senders: ";
    list(s.senders);
    os << "\n    window_size: " << s.window_size << "\n    max_payload: " << s.max_payload
       << "\n    ordering: " << to_string(s.ordering) << '\n';
  }
  if (g.subgroups.empty()) os << "  []\n";
  os << "knobs:\n  idle_spin_us: " << g.knobs.idle_spin.count()
     << "\n  sleep_slice_us: " << g.knobs.sleep_slice.count()
     << "\n  heartbeat_ms: " << g.knobs.heartbeat_interval.count()
     << "\n  suspicion_timeout_ms: " << g.knobs.suspicion_timeout.count() << '\n';
  return os.str();
}

}  // namespace spindle::group
