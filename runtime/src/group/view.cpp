// YAML loading of a View (a group file). Every map is checked against the list of keys it
// may hold (unknown keys are errors), every scalar is range-checked, and every error names
// the source, the 1-based line and the dotted key path.
#include "group/view.hpp"

#include "core/yaml_reader.hpp"
#include "core/yaml_schema.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <sstream>

namespace spindle::group {

std::string_view to_string(Ordering o) noexcept {
  return o == Ordering::atomic ? "atomic" : "unordered";
}

std::optional<std::size_t> View::rank_of(NodeId id) const noexcept {
  for (std::size_t i = 0; i < members.size(); ++i)
    if (members[i].id == id) return i;
  return std::nullopt;
}

bool View::same_process(NodeId a, NodeId b) const noexcept {
  if (a == b) return true;
  const auto ra = rank_of(a);
  const auto rb = rank_of(b);
  if (!ra || !rb) return false;
  const Member& x = members[*ra];
  const Member& y = members[*rb];
  return x.pid != 0 && x.pid == y.pid && x.host_id == y.host_id;
}

namespace {

using Reader = core::YamlReader;

std::vector<NodeId> ids(const Reader& r, const YAML::Node& n, const std::string& key) {
  if (!n.IsSequence()) r.fail(n, key, "expected a list of member ids");
  std::vector<NodeId> out;
  for (std::size_t i = 0; i < n.size(); ++i)
    out.push_back(
        r.integer<NodeId>(n[i], Reader::item(key, i), 0, std::numeric_limits<NodeId>::max()));
  return out;
}

constexpr std::string_view kOrderings[] = {"atomic", "unordered"};  // Ordering's order

View parse(std::string_view yaml, std::string_view source);

}  // namespace

View parse_group(std::string_view yaml, std::string_view source) {
  try {
    return parse(yaml, source);
  } catch (const core::YamlError& e) {
    throw GroupError(e.what());
  }
}

namespace {

// Topic ids and partition keys are 64-bit hashes: read as text, since the integer reader
// stops at 2^63.
std::uint64_t u64(Reader& r, const YAML::Node& n, const std::string& key) {
  const std::string text = r.text(n, key);
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size())
    r.fail(n, key, "expected an unsigned 64-bit integer, got '" + text + "'");
  return v;
}

View parse(std::string_view yaml, std::string_view source) {
  Reader r{std::string(source)};
  const YAML::Node root = core::parse_yaml(yaml, r.source());
  r.expect_map(root, "", {"version", "epoch", "identity", "members", "subgroups", "knobs"});
  if (!root["version"]) r.fail(root, "version", "missing (this reader knows version 1)");
  (void)r.integer<int>(root["version"], "version", 1, 1);

  View g;
  if (auto e = root["epoch"])
    g.epoch = r.integer<std::uint64_t>(e, "epoch", 1, std::numeric_limits<std::int64_t>::max());
  if (auto i = root["identity"]) g.identity = u64(r, i, "identity");

  const auto members = root["members"];
  if (!members || !members.IsSequence() || members.size() == 0)
    r.fail(members ? members : root, "members", "expected a non-empty list");
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::string key = "members[" + std::to_string(i) + "]";
    const auto m = members[i];
    r.expect_map(m, key,
                 {"id", "host", "port", "pid", "host_id", "joining", "nonce", "subject", "serial"});
    if (!m["id"]) r.fail(m, key + ".id", "missing");
    Member mem;
    mem.id = r.integer<NodeId>(m["id"], key + ".id", 0, std::numeric_limits<NodeId>::max());
    if (auto h = m["host"]) mem.host = r.text(h, key + ".host");
    if (auto p = m["port"]) mem.port = r.integer<std::uint16_t>(p, key + ".port", 0, 65535);
    if (auto p = m["pid"]) {
      mem.pid =
          r.integer<std::uint32_t>(p, key + ".pid", 0, std::numeric_limits<std::uint32_t>::max());
    }
    if (auto h = m["host_id"]) {
      mem.host_id = r.integer<std::uint64_t>(h, key + ".host_id", 0,
                                             std::numeric_limits<std::int64_t>::max());
    }
    if (auto j = m["joining"]) mem.joining = r.integer<int>(j, key + ".joining", 0, 1) != 0;
    if (auto n = m["nonce"]) mem.nonce = u64(r, n, key + ".nonce");
    if (auto n = m["subject"]) mem.subject = r.text(n, key + ".subject");
    if (auto n = m["serial"]) mem.serial = r.text(n, key + ".serial");
    g.members.push_back(std::move(mem));
  }

  const auto subs = root["subgroups"];
  if (subs) {
    if (!subs.IsSequence()) r.fail(subs, "subgroups", "expected a list");
    for (std::size_t i = 0; i < subs.size(); ++i) {
      const std::string key = "subgroups[" + std::to_string(i) + "]";
      const auto s = subs[i];
      r.expect_map(s, key,
                   {"name", "topic", "partitions", "members", "senders", "listeners", "demotable",
                    "lag_bound_ms", "window_size", "max_payload", "ordering", "large_bytes"});
      Subgroup sg;
      sg.name = s["name"] ? r.text(s["name"], key + ".name") : "subgroup" + std::to_string(i);
      if (auto t = s["topic"]) sg.topic = u64(r, t, key + ".topic");
      if (auto ps = s["partitions"]) {
        if (!ps.IsSequence()) r.fail(ps, key + ".partitions", "expected a list");
        for (std::size_t k = 0; k < ps.size(); ++k) {
          const auto p = u64(r, ps[k], key + ".partitions[" + std::to_string(k) + "]");
          if (!sg.partitions.empty() && p <= sg.partitions.back())
            r.fail(ps[k], key + ".partitions", "expected ascending values, each once");
          sg.partitions.push_back(p);
        }
      }
      if (!s["members"]) r.fail(s, key + ".members", "missing");
      sg.members = ids(r, s["members"], key + ".members");
      sg.senders = s["senders"] ? ids(r, s["senders"], key + ".senders") : sg.members;
      if (s["listeners"]) sg.listeners = ids(r, s["listeners"], key + ".listeners");
      if (s["demotable"]) sg.demotable = ids(r, s["demotable"], key + ".demotable");
      if (auto l = s["lag_bound_ms"])
        sg.lag_bound = std::chrono::milliseconds(
            r.integer<std::int64_t>(l, key + ".lag_bound_ms", 0, 3'600'000));
      if (auto w = s["window_size"])
        sg.window_size = r.integer<std::uint32_t>(w, key + ".window_size", 1, kMaxWindow);
      if (auto p = s["max_payload"])
        sg.max_payload = r.integer<std::uint32_t>(p, key + ".max_payload", 1, kMaxPayload);
      if (auto o = s["ordering"])
        sg.ordering = static_cast<Ordering>(r.choice(o, key + ".ordering", kOrderings));
      if (auto l = s["large_bytes"])
        sg.large = r.integer<std::uint64_t>(l, key + ".large_bytes", 0, kMaxRdmcBuffer);
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
      for (std::size_t k = 0; k < sg.listeners.size(); ++k) {
        const auto id = sg.listeners[k];
        if (!seen.contains(id))
          r.fail(s["listeners"], key + ".listeners",
                 "listener " + std::to_string(id) + " is not a member of the subgroup");
        if (sseen.contains(id))
          r.fail(s["listeners"], key + ".listeners",
                 "listener " + std::to_string(id) + " is a sender (a listener only receives)");
        if (k > 0 && id <= sg.listeners[k - 1])
          r.fail(s["listeners"], key + ".listeners", "expected ascending ids, each once");
      }
      for (std::size_t k = 0; k < sg.demotable.size(); ++k) {
        const auto id = sg.demotable[k];
        const bool listens =
            std::find(sg.listeners.begin(), sg.listeners.end(), id) != sg.listeners.end();
        if (!seen.contains(id) || sseen.contains(id) || listens)
          r.fail(s["demotable"], key + ".demotable",
                 "node " + std::to_string(id) +
                     " must be a member of the subgroup that neither sends nor listens");
        if (k > 0 && id <= sg.demotable[k - 1])
          r.fail(s["demotable"], key + ".demotable", "expected ascending ids, each once");
      }
      g.subgroups.push_back(std::move(sg));
    }
  }

  if (auto k = root["knobs"]) {
    r.expect_map(k, "knobs",
                 {"idle_spin_us", "sleep_slice_us", "heartbeat_ms", "suspicion_timeout_ms",
                  "rdmc_block_size", "rdmc_buffer_size", "rdmc_algorithm"});
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
    if (auto v = k["rdmc_block_size"])
      g.knobs.rdmc_block_size =
          r.integer<std::uint32_t>(v, "knobs.rdmc_block_size", kMinRdmcBlock, kMaxRdmcBlock);
    if (g.knobs.rdmc_block_size % 64 != 0)
      r.fail(k["rdmc_block_size"], "knobs.rdmc_block_size", "must be a multiple of 64");
    if (auto v = k["rdmc_buffer_size"])
      g.knobs.rdmc_buffer_size =
          r.integer<std::uint64_t>(v, "knobs.rdmc_buffer_size", kMinRdmcBuffer, kMaxRdmcBuffer);
    if (auto v = k["rdmc_algorithm"]) {
      const auto name = r.text(v, "knobs.rdmc_algorithm");
      const auto a = rdmc::parse_algorithm(name);
      if (!a)
        r.fail(v, "knobs.rdmc_algorithm",
               "'" + name + "' is not one of sequential, chain, binomial_tree, binomial_pipeline");
      g.knobs.rdmc_algorithm = *a;
    }
  }
  validate(g, source);
  return g;
}

}  // namespace

View load_group(const std::filesystem::path& file) {
  std::string text;
  try {
    text = core::read_text_file(file, "group file");
  } catch (const core::YamlError& e) {
    throw GroupError(e.what());
  }
  return parse_group(text, file.string());
}

void validate(const View& g, std::string_view source) {
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
    for (auto id : s.listeners) {
      if (std::find(s.members.begin(), s.members.end(), id) == s.members.end())
        throw GroupError(key + ".listeners: listener " + std::to_string(id) +
                         " is not a member of the subgroup");
      if (std::find(s.senders.begin(), s.senders.end(), id) != s.senders.end())
        throw GroupError(key + ".listeners: listener " + std::to_string(id) +
                         " is a sender (a listener only receives)");
    }
    if (!std::is_sorted(s.listeners.begin(), s.listeners.end()))
      throw GroupError(key + ".listeners: not in ascending order");
    for (auto id : s.demotable) {
      const auto in = [id](const std::vector<NodeId>& v) {
        return std::find(v.begin(), v.end(), id) != v.end();
      };
      if (!in(s.members) || in(s.senders) || in(s.listeners))
        throw GroupError(key + ".demotable: node " + std::to_string(id) +
                         " must be a member of the subgroup that neither sends nor listens");
    }
    if (!std::is_sorted(s.demotable.begin(), s.demotable.end()))
      throw GroupError(key + ".demotable: not in ascending order");
  }
}

std::string to_yaml(const View& g) {
  std::ostringstream os;
  os << "version: 1\nepoch: " << g.epoch << '\n';
  if (g.identity != 0) os << "identity: " << g.identity << '\n';
  os << "members:\n";
  for (const auto& m : g.members) {
    os << "  - {id: " << m.id << ", host: \"" << m.host << "\", port: " << m.port;
    if (m.pid != 0) os << ", pid: " << m.pid;
    if (m.host_id != 0) os << ", host_id: " << m.host_id;
    if (m.joining) os << ", joining: 1";
    if (m.nonce != 0) os << ", nonce: " << m.nonce;
    if (!m.subject.empty()) os << ", subject: " << core::yaml_quoted(m.subject);
    if (!m.serial.empty()) os << ", serial: " << core::yaml_quoted(m.serial);
    os << "}\n";
  }
  os << "subgroups:\n";
  auto list = [&](const std::vector<NodeId>& v) {
    os << '[';
    for (std::size_t i = 0; i < v.size(); ++i)
      os << (i ? ", " : "") << v[i];
    os << ']';
  };
  for (const auto& s : g.subgroups) {
    os << "  - name: \"" << s.name << "\"\n    topic: " << s.topic;
    if (!s.partitions.empty()) {
      os << "\n    partitions: [";
      for (std::size_t i = 0; i < s.partitions.size(); ++i)
        os << (i ? ", " : "") << s.partitions[i];
      os << ']';
    }
    os << "\n    members: ";
    list(s.members);
    os << "\n    senders: ";
    list(s.senders);
    if (!s.listeners.empty()) {
      os << "\n    listeners: ";
      list(s.listeners);
    }
    if (!s.demotable.empty()) {
      os << "\n    demotable: ";
      list(s.demotable);
    }
    if (s.lag_bound.count() != 0) os << "\n    lag_bound_ms: " << s.lag_bound.count();
    os << "\n    window_size: " << s.window_size << "\n    max_payload: " << s.max_payload
       << "\n    ordering: " << to_string(s.ordering) << '\n';
    if (s.large != Subgroup::kLargeFromKnobs) os << "    large_bytes: " << s.large << '\n';
  }
  if (g.subgroups.empty()) os << "  []\n";
  os << "knobs:\n  idle_spin_us: " << g.knobs.idle_spin.count()
     << "\n  sleep_slice_us: " << g.knobs.sleep_slice.count()
     << "\n  heartbeat_ms: " << g.knobs.heartbeat_interval.count()
     << "\n  suspicion_timeout_ms: " << g.knobs.suspicion_timeout.count()
     << "\n  rdmc_block_size: " << g.knobs.rdmc_block_size
     << "\n  rdmc_buffer_size: " << g.knobs.rdmc_buffer_size
     << "\n  rdmc_algorithm: " << rdmc::to_string(g.knobs.rdmc_algorithm) << '\n';
  return os.str();
}

}  // namespace spindle::group
