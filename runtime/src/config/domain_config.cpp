// The domain file: schema table, loader, checks, renderer and lookup (domain_config.hpp).
#include "config/domain_config.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <spindle/policy/Engine.hpp>

#include "core/interfaces.hpp"
#include "core/yaml_reader.hpp"
#include "core/yaml_schema.hpp"

namespace spindle::config {

namespace fs = std::filesystem;

namespace {
// TransportKind's names, in its order: to_string() and the schema's choices.
constexpr std::string_view kTransportNames[] = {"auto", "tcp", "shm", "rdma"};
}  // namespace

constexpr std::string_view kRoleNames[] = {"member", "client"};
constexpr std::string_view kMulticastModeNames[] = {"auto", "on", "off"};

std::string_view to_string(MulticastMode m) noexcept {
  return kMulticastModeNames[static_cast<std::size_t>(m)];
}

std::string_view to_string(Role r) noexcept {
  return kRoleNames[static_cast<std::size_t>(r)];
}

std::string_view to_string(TransportKind t) noexcept {
  return kTransportNames[static_cast<std::size_t>(t)];
}

std::vector<Member> DomainConfig::initial_members() const {
  if (!members.empty()) return members;
  return {Member{node_id, node.host, node.port}};
}

group::Knobs DomainConfig::knobs() const {
  using std::chrono::duration_cast;
  group::Knobs k;
  k.idle_spin = duration_cast<std::chrono::microseconds>(engine.idle_spin);
  k.sleep_slice = duration_cast<std::chrono::microseconds>(engine.sleep_slice);
  k.heartbeat_interval = duration_cast<std::chrono::milliseconds>(engine.heartbeat_interval);
  k.suspicion_timeout = duration_cast<std::chrono::milliseconds>(engine.suspicion_timeout);
  k.rdmc_block_size = engine.rdmc_block_size;
  k.rdmc_buffer_size = engine.rdmc_buffer_size;
  k.rdmc_algorithm =
      rdmc::parse_algorithm(engine.rdmc_algorithm).value_or(rdmc::Algorithm::binomial_pipeline);
  return k;
}

namespace {

using core::Field;
using core::Value;
using core::ValueType;
using core::YamlError;
using core::YamlReader;
using std::chrono::nanoseconds;

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kS = 1'000'000'000;

template <class T>
Field<T> field(std::string key, ValueType type, std::int64_t lo, std::int64_t hi,
               std::string_view doc, std::function<Value(const T&)> get,
               std::function<void(T&, const Value&)> set) {
  auto f = core::make_field<T>(std::move(key), type, lo, hi, doc);
  f.get = std::move(get);
  f.set = std::move(set);
  return f;
}

// An integer member of T.
template <class T, class Int>
Field<T> integer(std::string key, std::int64_t lo, std::int64_t hi, std::string_view doc,
                 Int T::*member) {
  return field<T>(
      std::move(key), ValueType::integer, lo, hi, doc,
      [member](const T& t) -> Value { return static_cast<std::int64_t>(t.*member); },
      [member](T& t, const Value& v) { t.*member = static_cast<Int>(std::get<std::int64_t>(v)); });
}

template <class T>
Field<T> text(std::string key, std::string_view doc, std::string T::*member) {
  return field<T>(
      std::move(key), ValueType::text, 1, 0, doc,
      [member](const T& t) -> Value { return t.*member; },
      [member](T& t, const Value& v) { t.*member = std::get<std::string>(v); });
}

// A text that may be empty (its default).
template <class T>
Field<T> optional_text(std::string key, std::string_view doc, std::string T::*member) {
  return field<T>(
      std::move(key), ValueType::text, 0, 0, doc,
      [member](const T& t) -> Value { return t.*member; },
      [member](T& t, const Value& v) { t.*member = std::get<std::string>(v); });
}

template <class T>
Field<T> span(std::string key, std::int64_t lo, std::int64_t hi, std::string_view doc,
              nanoseconds T::*member) {
  return field<T>(
      std::move(key), ValueType::duration, lo, hi, doc,
      [member](const T& t) -> Value { return dds::core::Duration(t.*member); },
      [member](T& t, const Value& v) { t.*member = std::get<dds::core::Duration>(v).to_chrono(); });
}

const std::vector<Field<EngineSettings>>& engine_fields() {
  using E = EngineSettings;
  static const std::vector<Field<E>> fields = {
      integer<E>("window_size", 1, group::kMaxWindow,
                 "SMC ring slots per sender (topics may override with the engine QoS policy).",
                 &E::window_size),
      integer<E>("slot_size", 1, group::kMaxPayload,
                 "Payload bytes per SMC slot; larger samples go by RDMC.", &E::slot_size),
      span<E>("idle_spin", 0, 10 * kS,
              "How long a protocol thread (or a thread waiting on a WaitSet, which runs the "
              "protocol meanwhile) busy-polls before it sleeps, while traffic comes within it; "
              "once it does not, 20 us (user guide, \"Performance\").",
              &E::idle_spin),
      span<E>("sleep_slice", 1 * kUs, 10 * kS,
              "Longest single sleep of an idle predicate thread (it also wakes for the next "
              "heartbeat or suspicion check, and whenever a peer writes).",
              &E::sleep_slice),
      span<E>("heartbeat_interval", 0, 600 * kS,
              "Heartbeat period of the failure detector; 0 turns heartbeats off.",
              &E::heartbeat_interval),
      span<E>("suspicion_timeout", 1 * kMs, 3600 * kS,
              "Heartbeat silence after which a peer is suspected; longer than "
              "heartbeat_interval.",
              &E::suspicion_timeout),
      span<E>("lag_bound", 0, 3600 * kS,
              "How long a reader's process may stop taking a topic's samples (a paused or "
              "busy process) before the others go on without it: it catches up, counting "
              "what it missed as SAMPLE_LOST, and holds again from the next view; 0: never. "
              "Shorter than suspicion_timeout (left out, a tenth of a suspicion_timeout "
              "under 1s). Topics may override with the engine QoS policy.",
              &E::lag_bound),
      span<E>("connect_timeout", 1 * kMs, 3600 * kS,
              "How long connecting to the other members may take before giving up.",
              &E::connect_timeout),
      integer<E>("rdmc_block_size", 4096, group::kMaxRdmcBlock,
                 "Bytes per RDMC block (a multiple of 64): samples larger than a slot travel "
                 "in blocks of this size.",
                 &E::rdmc_block_size),
      integer<E>("rdmc_buffer_size", std::int64_t{1} << 20,
                 static_cast<std::int64_t>(group::kMaxRdmcBuffer),
                 "RDMC buffer space per writing member of a topic, at each member of its "
                 "subgroup: the largest sample is this less 64 bytes. Memory is used only as "
                 "large samples fill it.",
                 &E::rdmc_buffer_size),
      text<E>("rdmc_algorithm",
              "How RDMC spreads a large sample's blocks: binomial_pipeline, binomial_tree, "
              "chain or sequential.",
              &E::rdmc_algorithm)};
  return fields;
}

const std::vector<Field<storage::LogSettings>>& storage_fields() {
  using S = storage::LogSettings;
  static const std::vector<Field<S>> fields = {
      // Empty is the default (a per-user directory), so a written-out file reads back.
      field<S>(
          "log_dir", ValueType::text, 0, 0,
          "Where the durable logs of logged topics go: <log_dir>/domain-<id>/node-<id>/"
          "<topic>/. Empty (the default): $XDG_STATE_HOME/spindle/logs, else "
          "~/.local/state/spindle/logs.",
          [](const S& s) -> Value { return s.log_dir; },
          [](S& s, const Value& v) { s.log_dir = std::get<std::string>(v); }),
      integer<S>("segment_bytes", std::int64_t{64} << 10, std::int64_t{1} << 30,
                 "A log's segment file is closed and a new one begun past this size.",
                 &S::segment_bytes),
      integer<S>("retain_bytes", 0, INT64_MAX,
                 "Oldest closed segments of a log are deleted past this many bytes; 0: no "
                 "limit.",
                 &S::retain_bytes),
      span<S>("retain_age", 0, INT64_MAX,
              "Closed segments whose newest record is older are deleted; 0: no limit.",
              &S::retain_age)};
  return fields;
}

const std::vector<Field<MulticastSettings>>& multicast_fields() {
  using M = MulticastSettings;
  static const std::vector<Field<M>> fields = [] {
    auto mode = field<M>(
        "mode", ValueType::choice, 0, 0,
        "auto: the leader announces the domain's join port by UDP multicast and a participant "
        "with no contacts asks and listens for it, where an interface has multicast (else it "
        "says so once and uses contacts, or the join port on this host); on: the same, but a "
        "participant fails where multicast is missing; off: no multicast.",
        [](const M& m) -> Value { return static_cast<std::int64_t>(m.mode); },
        [](M& m, const Value& v) {
          m.mode = static_cast<MulticastMode>(std::get<std::int64_t>(v));
        });
    mode.choices = {std::begin(kMulticastModeNames), std::end(kMulticastModeNames)};
    return std::vector<Field<M>>{
        std::move(mode),
        text<M>("address", "The multicast group (IPv4, 224.0.0.0 to 239.255.255.255).",
                &M::address),
        integer<M>("port", 1, 65535,
                   "The UDP port of the announcements, shared by every domain (the domain id "
                   "and join port travel in each datagram).",
                   &M::port),
        field<M>(
            "interface", ValueType::text, 0, 0,
            "The interface to send and listen on: a name (eth0) or one of its IPv4 addresses. "
            "Empty: the first interface that is up, not loopback and has multicast (one "
            "whose link has a carrier first; else one whose cable is not in yet).",
            [](const M& m) -> Value { return m.interface; },
            [](M& m, const Value& v) { m.interface = std::get<std::string>(v); }),
        integer<M>("ttl", 1, 255,
                   "Hops an announcement crosses: 1 keeps it on this network (no router).",
                   &M::ttl),
        span<M>("interval", 10 * kMs, 3600 * kS,
                "How often the leader announces the domain (and answers a participant that "
                "asks at once); a domain not heard for three intervals is forgotten.",
                &M::interval)};
  }();
  return fields;
}

const std::vector<Field<security::Settings>>& security_fields() {
  using S = security::Settings;
  static const std::vector<Field<S>> fields = {
      optional_text<S>(
          "ca",
          "A secured domain (docs/security.md): the PEM file of its certificate authority. "
          "Every member's certificate must chain to it. A relative path is relative to this "
          "file's folder. Setting any security key secures the participant: ca, "
          "certificate, private_key and permissions are then required.",
          &S::ca),
      optional_text<S>("certificate",
                       "This participant's PEM certificate, issued by security.ca (then any "
                       "intermediates). Its subject is the participant's identity in permissions.",
                       &S::certificate),
      optional_text<S>("private_key",
                       "The certificate's private key (PEM, unencrypted; mode 0600).",
                       &S::private_key),
      optional_text<S>(
          "permissions",
          "The permissions document (YAML: default and grants by subject), the same file at "
          "every member: its SHA-256 must agree at join.",
          &S::permissions),
      optional_text<S>(
          "crl",
          "Optional: the CA's revocation list (PEM). Read again while the domain runs: a "
          "member whose certificate it revokes is removed.",
          &S::crl)};
  return fields;
}

const std::vector<Field<Address>>& node_fields() {
  static const std::vector<Field<Address>> fields = {
      text<Address>("host",
                    "The address other members and hosts reach this node at: given in its join "
                    "request and in the view, and announced while it leads. auto: the IPv4 "
                    "address of the interface discovery uses (discovery.multicast.interface), "
                    "else of the first interface up that is not loopback (where none has "
                    "multicast), or 127.0.0.1 where there is none. With members listed "
                    "it defaults to (and must equal) its entry's.",
                    &Address::host),
      integer<Address>("port", 0, 65535,
                       "This node's TCP port (tcp, auto between hosts, rdma connection "
                       "setup); 0 lets the system pick a free one, which the others learn "
                       "from the view. With members listed it defaults to (and must equal) "
                       "its entry's.",
                       &Address::port)};
  return fields;
}

const std::vector<Field<Member>>& member_fields() {
  static const std::vector<Field<Member>> fields = {
      integer<Member>("id", 0, UINT32_MAX, "The member's node id (required, unique).", &Member::id),
      text<Member>("host", "Host name or IP address.", &Member::host),
      integer<Member>("port", 0, 65535, "TCP port (tcp, rdma connection setup).", &Member::port),
      optional_text<Member>(
          "subject",
          "In a secured domain, required: the member's certificate subject (RFC 4514, "
          "as openssl x509 -noout -subject -nameopt RFC2253 prints it); its streams "
          "are authenticated to it.",
          &Member::subject)};
  return fields;
}

const std::vector<Field<Address>>& address_fields() {
  static const std::vector<Field<Address>> fields = {
      text<Address>("host", "Host name or IP address of a running member.", &Address::host),
      integer<Address>("port", 1, 65535, "Its TCP port.", &Address::port)};
  return fields;
}

// A list of records; the loader reads it (read_records), the table documents it.
template <class R>
Field<DomainConfig> records(std::string key, std::string_view doc,
                            const std::vector<Field<R>>& record_fields) {
  auto f = core::make_field<DomainConfig>(std::move(key), ValueType::records, 0, 0, doc);
  f.record_fields.assign(record_fields.begin(), record_fields.end());
  return f;
}

const std::vector<Field<DomainConfig>>& fields() {
  static const std::vector<Field<DomainConfig>> all = [] {
    std::vector<Field<DomainConfig>> f;
    f.push_back(field<DomainConfig>(
        "version", ValueType::integer, kDomainFormatVersion, kDomainFormatVersion,
        "Required; the format version. This loader reads version 1.",
        [](const DomainConfig&) -> Value { return std::int64_t{kDomainFormatVersion}; },
        [](DomainConfig&, const Value&) {}));
    f.push_back(integer<DomainConfig>(
        "domain_id", 0, INT32_MAX,
        "The domain this file configures; a participant of another domain refuses it. Left "
        "out: the file serves any domain.",
        &DomainConfig::domain_id));
    auto transport = field<DomainConfig>(
        "transport", ValueType::choice, 0, 0,
        "auto (shared memory between members on one host, tcp between hosts, chosen per "
        "pair), tcp (any hosts), shm (shared memory, one host), rdma (verbs; connection setup "
        "over TCP).",
        [](const DomainConfig& c) -> Value { return static_cast<std::int64_t>(c.transport); },
        [](DomainConfig& c, const Value& v) {
          c.transport = static_cast<TransportKind>(std::get<std::int64_t>(v));
        });
    transport.choices = {std::begin(kTransportNames), std::end(kTransportNames)};
    f.push_back(std::move(transport));
    f.push_back(integer<DomainConfig>(
        "node.id", 0, UINT32_MAX,
        "This process's node id; SPINDLE_NODE_ID overrides it. 0 (the default): a random id, "
        "drawn by each participant, so that participants with no file do not collide; with "
        "members listed, the entry of this id (0 is then an id like any other).",
        &DomainConfig::node_id));
    for (const auto& n : node_fields())
      f.push_back(core::lift<DomainConfig>(
          n, "node", [](auto& c) -> auto& { return c.node; }));
    f.push_back(field<DomainConfig>(
        "node.bind", ValueType::text, 0, 0,
        "The local IPv4 address this node's sockets listen on: its transport, the join port "
        "while it leads, its client port. Empty: node.host, or every interface where node.host "
        "is auto (so that processes of this host reach it at 127.0.0.1 too); 0.0.0.0: every "
        "interface.",
        [](const DomainConfig& c) -> Value { return c.bind; },
        [](DomainConfig& c, const Value& v) { c.bind = std::get<std::string>(v); }));
    f.push_back(records("members",
                        "A fixed first view: these members, this node among them, start the "
                        "domain together (each waits engine.connect_timeout for all). Left "
                        "out (the usual case): the participant joins the running domain or "
                        "founds it, and members come and go by joining and leaving. Exclusive "
                        "with contacts.",
                        member_fields()));
    f.push_back(records("contacts",
                        "Join a running domain through these join ports (each host where a "
                        "member may lead, on its join_port), tried in order. Exclusive with "
                        "members. A participant that names contacts never founds a domain "
                        "itself: where none admits it within engine.connect_timeout it fails "
                        "with an error naming them. Left out: the leaders multicast discovery "
                        "hears and the join port on this host (127.0.0.1); with nothing "
                        "answering there it founds the domain after a short grace.",
                        address_fields()));
    f.push_back(integer<DomainConfig>(
        "join_port", 0, 65535,
        "The TCP port the domain's leader listens on, at node.bind, for participants that join "
        "and clients (whoever leads takes it over). 0: 7410 + domain_id. With members listed, "
        "0 means no joining after the first view (and no rejoining: a listed member that "
        "halted rejoins through the join port at the other members' hosts).",
        &DomainConfig::join_port));
    auto role = field<DomainConfig>(
        "role", ValueType::choice, 0, 0,
        "member (takes part in the domain's views and subgroups) or client (an external "
        "client: it reaches the domain through a member that relays for it, one of relays or "
        "the leader, and is never in a view; its crash or pause changes no view and holds "
        "nobody).",
        [](const DomainConfig& c) -> Value { return static_cast<std::int64_t>(c.role); },
        [](DomainConfig& c, const Value& v) {
          c.role = static_cast<Role>(std::get<std::int64_t>(v));
        });
    role.choices = {std::begin(kRoleNames), std::end(kRoleNames)};
    f.push_back(std::move(role));
    f.push_back(records("relays",
                        "A client's members to connect through (their client_port), tried in "
                        "order. Left out: the domain's join port (join_port) at the leaders "
                        "multicast discovery hears and on this host (127.0.0.1), where the "
                        "leader relays. "
                        "Only with role client.",
                        address_fields()));
    f.push_back(integer<DomainConfig>(
        "client_port", 0, 65535,
        "A member serves external clients on this TCP port, at node.bind; 0: it serves none.",
        &DomainConfig::client_port));
    f.push_back(text<DomainConfig>(
        "shm.namespace",
        "Prefix of the shared-memory segment names (letters, digits, '_', '-', '.'); "
        "domains on one host need different ones.",
        &DomainConfig::shm_namespace));
    for (const auto& e : engine_fields())
      f.push_back(core::lift<DomainConfig>(
          e, "engine", [](auto& c) -> auto& { return c.engine; }));
    for (const auto& e : security_fields())
      f.push_back(core::lift<DomainConfig>(
          e, "security", [](auto& c) -> auto& { return c.security; }));
    for (const auto& e : storage_fields())
      f.push_back(core::lift<DomainConfig>(
          e, "storage", [](auto& c) -> auto& { return c.storage; }));
    for (const auto& m : multicast_fields())
      f.push_back(core::lift<DomainConfig>(
          m, "discovery.multicast", [](auto& c) -> auto& { return c.discovery.multicast; }));
    return f;
  }();
  return all;
}

// Reads a list of records; every record's keys are checked, `required` must be present.
template <class R>
std::vector<R> read_records(const YamlReader& r, const YAML::Node& n, const std::string& key,
                            const std::vector<Field<R>>& fields, std::string_view required,
                            std::vector<int>& lines) {
  if (!n.IsSequence()) r.fail(n, key, "expected a list of mappings, got " + core::shown(n));
  std::vector<R> out;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const auto item = YamlReader::item(key, i);
    R rec;
    const auto set = core::read_fields(r, n[i], item, fields, rec);
    const bool has_required = std::any_of(set.begin(), set.end(),
                                          [&](std::size_t k) { return fields[k].key == required; });
    if (!required.empty() && !has_required)
      r.fail(n[i], item + "." + std::string(required), "missing");
    out.push_back(std::move(rec));
    lines.push_back(core::line_of(n[i]));
  }
  return out;
}

bool valid_namespace(std::string_view ns) {
  return std::all_of(ns.begin(), ns.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

struct Parsed {
  DomainConfig config;
  std::map<std::string, int, std::less<>> lines;  // key -> line, for the keys the file set
  std::vector<int> member_lines;
  std::vector<int> contact_lines;
  std::vector<int> relay_lines;
  int root_line = 0;
  int line(std::string_view key) const {
    const auto it = lines.find(key);
    return it == lines.end() ? root_line : it->second;
  }
};

void check(const YamlReader& r, Parsed& p, bool node_from_env) {
  auto& c = p.config;
  const auto fail = [&](std::string_view key, const std::string& what) {
    r.fail_at_line(p.line(key), std::string(key), what);
  };
  if (!c.members.empty() && !c.contacts.empty())
    fail("contacts", "a node lists the members or joins through contacts, not both");
  if (c.role == Role::client) {
    if (!c.members.empty()) fail("members", "a client is in no view: it lists no members");
    if (!c.contacts.empty()) fail("contacts", "a client joins through relays, not contacts");
    if (c.client_port != 0) fail("client_port", "a client relays for nobody");
  } else if (!c.relays.empty()) {
    fail("relays", "only a client (role: client) connects through relays");
  }
  if (c.security.enabled()) {
    const auto& sec = c.security;
    for (const auto& [key, value] : {std::pair{"security.ca", &sec.ca},
                                     {"security.certificate", &sec.certificate},
                                     {"security.private_key", &sec.private_key},
                                     {"security.permissions", &sec.permissions}}) {
      if (!value->empty()) continue;
      // Where the section is: the line of a key it has.
      int line = p.root_line;
      for (const auto* k : {"security.ca", "security.certificate", "security.private_key",
                            "security.permissions", "security.crl"})
        if (const auto it = p.lines.find(std::string_view(k)); it != p.lines.end())
          line = it->second;
      r.fail_at_line(line, key,
                     "missing: a secured participant needs security.ca, security.certificate, "
                     "security.private_key and security.permissions (docs/security.md)");
    }
    if (c.role == Role::client)
      fail("role", "external clients cannot take part in a secured domain yet (docs/security.md)");
    if (c.client_port != 0)
      fail("client_port", "a secured domain admits no external clients yet (docs/security.md)");
    for (std::size_t i = 0; i < c.members.size(); ++i) {
      if (c.members[i].subject.empty())
        r.fail_at_line(p.member_lines[i], YamlReader::item("members", i) + ".subject",
                       "missing: in a secured domain each listed member names its certificate "
                       "subject");
    }
  }
  if (!c.bind.empty() && !core::parse_ipv4(c.bind))
    fail("node.bind", "expected an IPv4 address (0.0.0.0: every interface), got '" + c.bind + "'");
  const auto& mc = c.discovery.multicast;
  if (const auto group = core::parse_ipv4(mc.address); !group || (ntohl(*group) >> 28) != 0xe)
    fail("discovery.multicast.address",
         "expected an IPv4 multicast group (224.0.0.0 to 239.255.255.255), got '" + mc.address +
             "'");
  if (!valid_namespace(c.shm_namespace))
    fail("shm.namespace", "only letters, digits, '_', '-' and '.', got '" + c.shm_namespace + "'");
  std::map<NodeId, std::size_t> ids;
  std::map<std::pair<std::string, std::uint16_t>, std::size_t> addresses;
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    const auto& m = c.members[i];
    const auto key = YamlReader::item("members", i);
    const int line = p.member_lines[i];
    if (auto [it, fresh] = ids.emplace(m.id, i); !fresh)
      r.fail_at_line(line, key + ".id",
                     "id " + std::to_string(m.id) + " appears twice (first at line " +
                         std::to_string(p.member_lines[it->second]) + ")");
    if (c.transport == TransportKind::shm) {
      if (m.host != c.members.front().host)
        r.fail_at_line(line, key + ".host",
                       "the shm transport needs every member on one host: '" + m.host +
                           "' differs from members[0].host '" + c.members.front().host + "'");
      continue;
    }
    if (c.members.size() > 1 && m.port == 0)
      r.fail_at_line(line, key + ".port",
                     "a member of a multi-member domain needs a port (0 would let the system "
                     "pick one its peers cannot know)");
    if (auto [it, fresh] = addresses.emplace(std::pair(m.host, m.port), i); !fresh)
      r.fail_at_line(line, key,
                     "address " + m.host + ":" + std::to_string(m.port) + " is also members[" +
                         std::to_string(it->second) + "]'s");
  }
  if (!c.members.empty()) {
    const auto self = std::find_if(c.members.begin(), c.members.end(),
                                   [&](const Member& m) { return m.id == c.node_id; });
    if (self == c.members.end()) {
      std::string list;
      for (const auto& m : c.members)
        list += (list.empty() ? "" : ", ") + std::to_string(m.id);
      fail(node_from_env || !p.lines.contains("node.id") ? "members" : "node.id",
           "node " + std::to_string(c.node_id) + (node_from_env ? " (SPINDLE_NODE_ID)" : "") +
               " is not a member (ids: " + list + ")");
    }
    const auto self_key =
        YamlReader::item("members", static_cast<std::size_t>(self - c.members.begin()));
    if (p.lines.contains("node.host") && c.node.host != self->host)
      fail("node.host",
           "'" + c.node.host + "' contradicts " + self_key + ".host '" + self->host + "'");
    if (p.lines.contains("node.port") && c.node.port != self->port)
      fail("node.port", std::to_string(c.node.port) + " contradicts " + self_key + ".port " +
                            std::to_string(self->port));
    c.node = Address{self->host, self->port};
  }
  const auto ring = std::uint64_t{c.engine.window_size} * c.engine.slot_size;
  if (ring > spindle::policy::Engine::kMaxRingBytes)
    fail(p.lines.contains("engine.window_size") ? "engine.window_size" : "engine.slot_size",
         "window_size (" + std::to_string(c.engine.window_size) + ") x slot_size (" +
             std::to_string(c.engine.slot_size) + ") = " + std::to_string(ring) +
             " bytes per sender ring, more than the limit of " +
             std::to_string(spindle::policy::Engine::kMaxRingBytes));
  const auto& e = c.engine;
  if (e.rdmc_block_size % 64 != 0)
    fail("engine.rdmc_block_size", std::to_string(e.rdmc_block_size) + " is not a multiple of 64");
  if (!rdmc::parse_algorithm(e.rdmc_algorithm))
    fail("engine.rdmc_algorithm", "'" + e.rdmc_algorithm +
                                      "' is not one of binomial_pipeline, binomial_tree, chain, "
                                      "sequential");
  // Left at its default, the lag bound stays well under a short suspicion timeout.
  if (!p.lines.contains("engine.lag_bound") && e.lag_bound >= e.suspicion_timeout)
    c.engine.lag_bound = e.suspicion_timeout / 10;
  if (e.lag_bound >= e.suspicion_timeout)
    fail("engine.lag_bound", "lag_bound (" + core::format_duration(e.lag_bound) +
                                 ") must be shorter than suspicion_timeout (" +
                                 core::format_duration(e.suspicion_timeout) +
                                 "): a lagging member is left behind before it is suspected");
  if (e.heartbeat_interval.count() > 0 && e.suspicion_timeout <= e.heartbeat_interval)
    fail(p.lines.contains("engine.suspicion_timeout") ? "engine.suspicion_timeout"
                                                      : "engine.heartbeat_interval",
         "suspicion_timeout (" + core::format_duration(e.suspicion_timeout) +
             ") must be longer than heartbeat_interval (" +
             core::format_duration(e.heartbeat_interval) + ")");
}

// Why `host` does not resolve to an address, or an empty string if it does.
std::string unresolvable(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) return ::gai_strerror(rc);
  ::freeaddrinfo(res);
  return "";
}

// Every host a tcp or rdma transport will use must resolve; the error names its key.
void check_hosts_resolve(const YamlReader& r, const Parsed& p) {
  const auto& c = p.config;
  if (c.transport == TransportKind::shm) return;
  const auto check_one = [&](const std::string& host, int line, const std::string& key) {
    if (const auto why = unresolvable(host); !why.empty())
      r.fail_at_line(line, key, "cannot resolve host '" + host + "': " + why);
  };
  for (std::size_t i = 0; i < c.members.size(); ++i)
    check_one(c.members[i].host, p.member_lines[i], YamlReader::item("members", i) + ".host");
  for (std::size_t i = 0; i < c.contacts.size(); ++i)
    check_one(c.contacts[i].host, p.contact_lines[i], YamlReader::item("contacts", i) + ".host");
  for (std::size_t i = 0; i < c.relays.size(); ++i)
    check_one(c.relays[i].host, p.relay_lines[i], YamlReader::item("relays", i) + ".host");
  if (c.members.empty() && c.node.host != kAutoHost)
    check_one(c.node.host, p.line("node.host"), "node.host");
}

DomainConfig parse(std::string_view yaml, const std::string& source, std::optional<NodeId> node_id,
                   std::optional<std::uint32_t> domain_id, bool resolve_hosts = false) {
  const YamlReader r(source);
  const YAML::Node root = core::parse_yaml(yaml, source);
  core::check_version(r, root, kDomainFormatVersion);
  Parsed p;
  p.root_line = core::line_of(root);
  const auto& all = fields();
  core::walk_fields(
      r, root, "", core::specs_of(all),
      [&](std::size_t i, const YAML::Node& name, const YAML::Node& n, const std::string& key) {
        p.lines[key] = core::line_of(name);
        if (all[i].key == "members") {
          p.config.members = read_records(r, n, key, member_fields(), "id", p.member_lines);
        } else if (all[i].key == "contacts") {
          p.config.contacts = read_records(r, n, key, address_fields(), "", p.contact_lines);
        } else if (all[i].key == "relays") {
          p.config.relays = read_records(r, n, key, address_fields(), "", p.relay_lines);
        } else {
          all[i].set(p.config, core::read_value(r, n, key, all[i]));
        }
      });
  if (node_id) p.config.node_id = *node_id;
  if (domain_id) {
    if (p.lines.contains("domain_id") && p.config.domain_id != *domain_id)
      r.fail_at_line(p.line("domain_id"), "domain_id",
                     "this file is for domain " + std::to_string(p.config.domain_id) +
                         ", the participant joins domain " + std::to_string(*domain_id));
    p.config.domain_id = *domain_id;
  }
  check(r, p, node_id.has_value());
  if (resolve_hosts) check_hosts_resolve(r, p);
  // The security section's files are relative to the domain file's folder.
  if (std::error_code ec; fs::is_regular_file(source, ec)) {
    const auto base = fs::path(source).parent_path();
    auto& sec = p.config.security;
    for (auto* path : {&sec.ca, &sec.certificate, &sec.private_key, &sec.permissions, &sec.crl})
      if (!path->empty() && fs::path(*path).is_relative()) *path = (base / *path).string();
  }
  return p.config;
}

template <class F>
auto as_config_error(F&& f) {
  try {
    return f();
  } catch (const YamlError& e) {
    throw ConfigError(e.what());
  }
}

std::optional<NodeId> node_override(const LookupEnvironment& env) {
  const auto v = env.getenv("SPINDLE_NODE_ID");
  if (!v) return std::nullopt;
  long long id = 0;
  if (!core::parse_integer(*v, id) || id < 0 || id > UINT32_MAX)
    throw ConfigError("SPINDLE_NODE_ID: expected a node id (0..4294967295), got '" + *v + "'");
  return static_cast<NodeId>(id);
}

bool looks_inline(std::string_view v) {
  return v.find('\n') != std::string_view::npos || v.front() == '{' ||
         v.find(": ") != std::string_view::npos;
}

}  // namespace

DomainConfig parse_domain_config(std::string_view yaml, const std::string& source,
                                 std::optional<NodeId> node_id) {
  return as_config_error([&] { return parse(yaml, source, node_id, std::nullopt); });
}

DomainConfig load_domain_config(const fs::path& file, std::optional<NodeId> node_id) {
  return as_config_error([&] {
    return parse(core::read_text_file(file, "domain file"), file.string(), node_id, std::nullopt);
  });
}

std::string to_yaml(const DomainConfig& c) {
  const auto& all = fields();
  const auto specs = core::specs_of(all);
  const auto values = core::render_values(all, c);
  std::string out = core::render_block(specs, values, 0);
  auto records = [&out](std::string_view key, const auto& list, const auto& rec_fields) {
    out += std::string(key) + ":";
    if (list.empty()) out += " []";
    out += "\n";
    const auto rec_specs = core::specs_of(rec_fields);
    for (const auto& item : list)
      out += "  - " + core::render_flow(rec_specs, core::render_values(rec_fields, item)) + "\n";
  };
  records("members", c.members, member_fields());
  records("contacts", c.contacts, address_fields());
  records("relays", c.relays, address_fields());
  return out;
}

void resolve_node_host(DomainConfig& c, const std::string& source) {
  const auto& wanted = c.discovery.multicast.interface;
  if (c.node.host != kAutoHost && wanted.empty()) return;
  std::string why;
  auto found = core::find_interface(wanted, why);
  if (!found && !wanted.empty())
    throw ConfigError(source + ": discovery.multicast.interface: " + why);
  if (c.node.host != kAutoHost) return;
  // No interface has multicast: the address of one that reaches other hosts all the same
  // (they find this node through contacts).
  if (!found) found = core::first_network_interface();
  c.node.host = found ? found->address : "127.0.0.1";
  // Reached at its interface's address by other hosts, and at 127.0.0.1 by its own.
  if (found && c.bind.empty()) c.bind = "0.0.0.0";
}

std::vector<fs::path> default_config_files(
    const std::function<std::optional<std::string>(const char*)>& getenv) {
  std::vector<fs::path> out{fs::path("spindle.yaml")};
  if (const auto xdg = getenv("XDG_CONFIG_HOME"); xdg && !xdg->empty()) {
    out.push_back(fs::path(*xdg) / "spindle" / "domain.yaml");
  } else if (const auto home = getenv("HOME"); home && !home->empty()) {
    out.push_back(fs::path(*home) / ".config" / "spindle" / "domain.yaml");
  }
  out.emplace_back("/etc/spindle/domain.yaml");
  return out;
}

LookupEnvironment LookupEnvironment::process() {
  LookupEnvironment env;
  env.getenv = [](const char* name) -> std::optional<std::string> {
    if (const char* v = std::getenv(name)) return std::string(v);
    return std::nullopt;
  };
  env.default_files = default_config_files(env.getenv);
  return env;
}

FoundDomainConfig find_domain_config(std::optional<std::uint32_t> domain_id) {
  return find_domain_config(domain_id, LookupEnvironment::process());
}

FoundDomainConfig find_domain_config(std::optional<std::uint32_t> domain_id,
                                     const LookupEnvironment& env) {
  const auto node = node_override(env);
  auto from_file = [&](const fs::path& file, ConfigOrigin origin, std::string_view how) {
    return as_config_error([&] {
      std::string text;
      try {
        text = core::read_text_file(file, "domain file");
      } catch (const YamlError& e) {
        throw YamlError(e.source(), 0, "", e.problem() + std::string(how));
      }
      return FoundDomainConfig{parse(text, file.string(), node, domain_id, true), origin,
                               file.string()};
    });
  };
  if (const auto v = env.getenv("SPINDLE_CONFIG"); v && !v->empty()) {
    constexpr std::string_view kScheme = "file://";
    if (v->rfind(kScheme, 0) == 0)
      return from_file(v->substr(kScheme.size()), ConfigOrigin::env_uri, " (SPINDLE_CONFIG)");
    if (looks_inline(*v)) {
      return as_config_error([&] {
        return FoundDomainConfig{parse(*v, "SPINDLE_CONFIG", node, domain_id, true),
                                 ConfigOrigin::env_inline, "SPINDLE_CONFIG"};
      });
    }
    return from_file(*v, ConfigOrigin::env_path, " (SPINDLE_CONFIG)");
  }
  for (const auto& file : env.default_files) {
    std::error_code ec;
    if (fs::is_regular_file(file, ec)) return from_file(file, ConfigOrigin::default_file, "");
  }
  FoundDomainConfig found;
  found.config.domain_id = domain_id.value_or(0);
  if (node) found.config.node_id = *node;
  found.source = "built-in defaults";
  return found;
}

std::string schema_markdown() {
  std::string out =
      "# Domain file schema (version 1)\n\n"
      "<!-- Generated from runtime/src/config/domain_config.cpp by `qos_schema_doc`; do not "
      "edit. The test qos.schema_doc fails when this file and the code differ. -->\n\n"
      "Durations are an integer with a unit (`ns`, `us`, `ms`, `s`, `min`), or `0`. Unknown "
      "keys, repeated keys, wrong types, out-of-range values and contradictions are errors "
      "naming the file, the line and the key. Every key is optional except `version`. The "
      "defaults, like no file at all, join the domain running on this host or announced on "
      "the local network, or found it, as a member with a random node id over transport "
      "auto; members come and go by joining and leaving (docs/membership.md). A deployment on "
      "several hosts: docs/membership.md, \"Across hosts\" (the addresses to give and bind, "
      "the ports to open). How a participant finds its file: docs/qos.md, \"The domain "
      "file\".\n\n"
      "| key | accepts | default | meaning |\n|---|---|---|---|\n";
  const DomainConfig defaults;
  for (const auto& f : fields()) {
    const auto value =
        f.type == ValueType::records ? std::string("[]") : core::render_value(f, f.get(defaults));
    out += "| `" + f.key + "` | " + core::markdown_cell(core::describe_type(f)) + " | `" + value +
           "` | " + core::markdown_cell(f.doc) + " |\n";
    for (const auto& r : f.record_fields)
      out += "| `" + f.key + "[]." + r.key + "` | " + core::markdown_cell(core::describe_type(r)) +
             " | | " + core::markdown_cell(r.doc) + " |\n";
  }
  return out;
}

}  // namespace spindle::config
