// See config.hpp.
#include "config.hpp"

#include "core/glob.hpp"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace spindle::gateway {
namespace {

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    std::ostringstream os;
    os << path_;
    if (at.IsDefined() && at.Mark().line >= 0)
      os << ':' << at.Mark().line + 1 << ':' << at.Mark().column + 1;
    os << ": " << key << ": " << what;
    throw ConfigError(os.str());
  }

  std::string where(const YAML::Node& at) const {
    return path_ + ":" + std::to_string(at.Mark().line + 1) + ":" +
           std::to_string(at.Mark().column + 1);
  }

  void only(const YAML::Node& map, const std::string& key,
            std::initializer_list<const char*> allowed) const {
    if (!map.IsMap()) fail(map, key, "expected a map");
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, key, "a key must be a name");
      const auto k = kv.first.as<std::string>();
      bool ok = false;
      for (const char* a : allowed)
        ok = ok || k == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed)
          list += std::string(list.empty() ? "" : ", ") + a;
        fail(kv.first, key.empty() ? k : key + "." + k, "unknown key (known: " + list + ")");
      }
    }
  }

  std::string string(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a string");
    return n.as<std::string>();
  }

  uint32_t domain(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a domain id (0 to 232)");
    try {
      const auto v = n.as<int64_t>();
      if (v < 0 || v > 232) fail(n, key, "domain id " + std::to_string(v) + " is not in 0..232");
      return static_cast<uint32_t>(v);
    } catch (const YAML::BadConversion&) {
      fail(n, key, "'" + n.as<std::string>() + "' is not a domain id (0 to 232)");
    }
  }

  std::vector<std::string> strings(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(n.as<std::string>());
      return out;
    }
    if (!n.IsSequence()) fail(n, key, "expected a list of strings");
    for (size_t i = 0; i < n.size(); ++i)
      out.push_back(string(n[i], key + "[" + std::to_string(i) + "]"));
    return out;
  }

  std::string path_;
};

std::string resolve_path(const std::string& base_dir, const std::string& p) {
  if (p.empty() || p.front() == '/') return p;
  return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

void read_ends(const Reader& r, const YAML::Node& root, const char* key, EndKind kind,
               std::vector<EndConfig>& ends, std::vector<YAML::Node>& at) {
  const YAML::Node n = root[key];
  if (!n) return;
  auto one = [&](const YAML::Node& e, const std::string& k) {
    r.only(e, k, {"domain", "name", "config"});
    EndConfig end;
    end.kind = kind;
    if (!e["domain"]) r.fail(e, k + ".domain", "missing (the domain id)");
    end.domain = r.domain(e["domain"], k + ".domain");
    if (e["name"]) end.name = r.string(e["name"], k + ".name");
    if (e["config"]) {
      if (kind == EndKind::Spindle)
        r.fail(
            e["config"], k + ".config",
            "a Spindle participant reads its domain file from SPINDLE_CONFIG (docs/user-guide.md)");
      end.config = r.string(e["config"], k + ".config");
    }
    ends.push_back(end);
    at.push_back(e);
  };
  if (n.IsSequence()) {
    for (size_t i = 0; i < n.size(); ++i)
      one(n[i], std::string(key) + "[" + std::to_string(i) + "]");
  } else {
    one(n, key);
  }
}

TopicQos read_qos(const Reader& r, const YAML::Node& n, const std::string& key) {
  TopicQos q;
  r.only(n, key, {"reliability", "durability", "history", "deadline", "consistency"});
  if (n["reliability"]) {
    const auto v = r.string(n["reliability"], key + ".reliability");
    if (v == "reliable")
      q.reliability = Reliability::Reliable;
    else if (v == "best_effort")
      q.reliability = Reliability::BestEffort;
    else
      r.fail(n["reliability"], key + ".reliability",
             "'" + v + "' is not one of reliable, best_effort");
  }
  if (n["durability"]) {
    const auto v = r.string(n["durability"], key + ".durability");
    if (v == "volatile")
      q.durability = Durability::Volatile;
    else if (v == "transient_local")
      q.durability = Durability::TransientLocal;
    else
      r.fail(n["durability"], key + ".durability",
             "'" + v + "' is not one of volatile, transient_local");
  }
  if (n["history"]) {
    const auto& h = n["history"];
    const auto v = r.string(h, key + ".history");
    if (v == "all") {
      q.history_depth = 0;
    } else {
      try {
        const auto d = h.as<int64_t>();
        if (d < 1 || d > 1000000) throw YAML::BadConversion(h.Mark());
        q.history_depth = static_cast<int32_t>(d);
      } catch (const YAML::BadConversion&) {
        r.fail(h, key + ".history", "'" + v + "' is neither a depth (1 to 1000000) nor 'all'");
      }
    }
  }
  if (n["deadline"]) {
    const auto& d = n["deadline"];
    try {
      const double s = d.as<double>();
      if (!(s > 0 && s < 1e9)) throw YAML::BadConversion(d.Mark());
      q.deadline_s = s;
    } catch (const YAML::BadConversion&) {
      r.fail(d, key + ".deadline",
             "'" + r.string(d, key + ".deadline") + "' is not a period in seconds (> 0)");
    }
  }
  if (n["consistency"]) {
    const auto v = r.string(n["consistency"], key + ".consistency");
    if (v != "unordered" && v != "atomic" && v != "volatile" && v != "logged")
      r.fail(n["consistency"], key + ".consistency",
             "'" + v + "' is not one of unordered, atomic, volatile, logged");
    q.consistency = v;
  }
  return q;
}

}  // namespace

bool glob_match(const std::string& p, const std::string& t) {
  return spindle::core::glob_match(p, t);
}

bool allowed(const Config& c, const std::string& name) {
  bool keep = c.allow.empty();
  for (const auto& p : c.allow)
    keep = keep || glob_match(p, name);
  for (const auto& p : c.deny)
    keep = keep && !glob_match(p, name);
  return keep;
}

namespace {
Config read_config(const std::string& text, const std::string& path);
}  // namespace

Config parse_config(const std::string& text, const std::string& path) {
  try {
    return read_config(text, path);
  } catch (const YAML::Exception& e) {
    // Anything the checks above missed still names the place.
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

namespace {

Config read_config(const std::string& text, const std::string& path) {
  Reader r(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(path + ":" + std::to_string(e.mark.line + 1) + ":" +
                      std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) r.fail(root, "(top)", "expected a map with spindle, rtps, idl and topics");
  r.only(root, "", {"spindle", "rtps", "idl", "include", "topics", "allow", "deny"});

  Config c;
  c.path = path;
  const std::string dir = std::filesystem::path(path).parent_path().string();
  std::vector<YAML::Node> end_at;
  read_ends(r, root, "spindle", EndKind::Spindle, c.ends, end_at);
  read_ends(r, root, "rtps", EndKind::Rtps, c.ends, end_at);
  if (c.ends.size() != 2)
    r.fail(root, "spindle/rtps",
           "a gateway joins exactly two domains (found " + std::to_string(c.ends.size()) +
               "): give spindle: {domain: N} and rtps: {domain: M}, or a list of two of one kind");
  for (size_t i = 0; i < 2; ++i) {
    auto& e = c.ends[i];
    if (!e.name.empty()) continue;
    const bool twice = c.ends[0].kind == c.ends[1].kind;
    e.name = std::string(e.kind == EndKind::Spindle ? "spindle" : "rtps") +
             (twice ? std::to_string(e.domain) : "");
  }
  if (c.ends[0].name == c.ends[1].name)
    r.fail(end_at[1], "name", "both ends are named '" + c.ends[0].name + "' (give each a name:)");
  if (c.ends[0].kind == c.ends[1].kind && c.ends[0].domain == c.ends[1].domain)
    r.fail(end_at[1], "domain", "both ends are the same domain");
  for (auto& e : c.ends) {
    if (e.config.rfind("file://", 0) == 0)
      e.config = "file://" + resolve_path(dir, e.config.substr(7));
  }

  if (!root["idl"]) r.fail(root, "idl", "missing (the IDL files that define the topics' types)");
  for (const auto& f : r.strings(root["idl"], "idl"))
    c.idl.push_back(resolve_path(dir, f));
  if (root["include"])
    for (const auto& f : r.strings(root["include"], "include"))
      c.include_dirs.push_back(resolve_path(dir, f));
  if (root["allow"]) c.allow = r.strings(root["allow"], "allow");
  if (root["deny"]) c.deny = r.strings(root["deny"], "deny");

  const YAML::Node topics = root["topics"];
  if (!topics || !topics.IsSequence() || topics.size() == 0)
    r.fail(topics ? topics : root, "topics", "expected a list of {name, type} entries");
  std::set<std::string> names;
  for (size_t i = 0; i < topics.size(); ++i) {
    const YAML::Node t = topics[i];
    const std::string key = "topics[" + std::to_string(i) + "]";
    r.only(t, key, {"name", "type", "direction", "partitions", "qos"});
    TopicConfig tc;
    tc.where = r.where(t);
    if (!t["name"]) r.fail(t, key + ".name", "missing (the topic's name)");
    if (!t["type"]) r.fail(t, key + ".type", "missing (the topic's IDL type)");
    tc.name = r.string(t["name"], key + ".name");
    tc.type = r.string(t["type"], key + ".type");
    if (tc.name.empty()) r.fail(t["name"], key + ".name", "empty");
    if (tc.type.empty()) r.fail(t["type"], key + ".type", "empty (the topic's IDL type)");
    if (!names.insert(tc.name).second)
      r.fail(t["name"], key + ".name", "topic '" + tc.name + "' is listed twice");
    if (t["direction"]) {
      const auto d = r.string(t["direction"], key + ".direction");
      if (d != "both") {
        for (const auto& e : c.ends)
          if (d == "to_" + e.name) tc.to = e.name;
        if (!tc.to)
          r.fail(t["direction"], key + ".direction",
                 "'" + d + "' is not one of both, to_" + c.ends[0].name + ", to_" + c.ends[1].name);
      }
    }
    if (t["partitions"]) tc.partitions = r.strings(t["partitions"], key + ".partitions");
    if (t["qos"]) tc.qos = read_qos(r, t["qos"], key + ".qos");
    if (tc.name.find_first_of("*?") != std::string::npos) {
      c.patterns.push_back(std::move(tc));
    } else if (allowed(c, tc.name)) {
      c.topics.push_back(std::move(tc));
    } else {
      c.filtered_out.push_back(tc.name);
    }
  }
  if (c.topics.empty() && c.patterns.empty())
    r.fail(topics, "allow/deny", "they leave no topic to bridge");
  return c;
}

}  // namespace

Config load_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path + ": cannot read the configuration file");
  std::ostringstream os;
  os << in.rdbuf();
  return parse_config(os.str(), path);
}

}  // namespace spindle::gateway
