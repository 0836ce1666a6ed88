// The domain file: defaults, the full format and its YAML round trip, the lookup order
// (SPINDLE_CONFIG as path, file:// URI or inline YAML; default locations; built-in),
// SPINDLE_NODE_ID, and every contradiction with its file:line:key message.
#include <catch2/catch.hpp>

#include <map>

#include "config/domain_config.hpp"
#include "core/interfaces.hpp"
#include "support.hpp"

namespace sc = spindle::config;
using namespace std::chrono_literals;

namespace {

constexpr const char* kThreeNodes = R"(version: 1
domain_id: 7
transport: tcp
node:
  id: 1
members:
  - {id: 0, host: 10.0.0.1, port: 7400}
  - {id: 1, host: 10.0.0.2, port: 7400}
  - {id: 2, host: 10.0.0.3, port: 7400}
shm:
  namespace: flight-sim
engine:
  window_size: 256
  slot_size: 2048
  idle_spin: 500us
  sleep_slice: 2ms
  heartbeat_interval: 50ms
  suspicion_timeout: 500ms
  connect_timeout: 10s
)";

// A lookup environment with a fake process environment and default files in `dir`.
struct Lookup {
  qos_test::TempDir dir;
  std::map<std::string, std::string> vars;

  sc::LookupEnvironment env() const {
    sc::LookupEnvironment e;
    e.getenv = [vars = vars](const char* name) -> std::optional<std::string> {
      const auto it = vars.find(name);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
    e.default_files = {dir.path() / "cwd" / "spindle.yaml", dir.path() / "xdg" / "domain.yaml",
                       dir.path() / "etc" / "domain.yaml"};
    return e;
  }
  sc::FoundDomainConfig find(std::uint32_t domain = 7) const {
    return sc::find_domain_config(domain, env());
  }
  std::string error(std::uint32_t domain = 7) const {
    return qos_test::error_of<sc::ConfigError>([&] { (void)find(domain); });
  }
};

std::string error_of(const std::string& yaml, std::optional<sc::NodeId> node = std::nullopt) {
  return qos_test::error_of<sc::ConfigError>(
      [&] { (void)sc::parse_domain_config(yaml, "d.yaml", node); });
}

}  // namespace

TEST_CASE("domain: built-in defaults make a one-member domain on this machine", "[domain]") {
  const sc::DomainConfig c;
  CHECK(c.domain_id == 0);
  CHECK(c.transport == sc::TransportKind::automatic);
  CHECK(c.node_id == 0);
  // The address of this host's interface, found when the participant starts.
  CHECK(c.node == sc::Address{"auto", 0});
  CHECK(c.bind.empty());
  CHECK(c.listen_host() == "auto");
  CHECK(c.discovery.multicast.mode == sc::MulticastMode::automatic);
  CHECK(c.discovery.multicast.address == "239.255.0.1");
  CHECK(c.discovery.multicast.port == 7399);
  CHECK(c.discovery.multicast.ttl == 1);
  CHECK(c.members.empty());
  CHECK(c.initial_members() == std::vector<sc::Member>{{0, "auto", 0}});
  CHECK(c.engine.window_size == 100);
  CHECK(c.engine.suspicion_timeout == 1s);
  // The minimal file is the defaults.
  CHECK(sc::parse_domain_config("version: 1\n", "d.yaml") == c);
  // The knobs in the group layer's units.
  const auto k = c.knobs();
  CHECK(k.idle_spin == 1000us);
  CHECK(k.heartbeat_interval == 100ms);
  CHECK(k.suspicion_timeout == 1000ms);
}

TEST_CASE("domain: node.host auto is the address of the interface discovery uses", "[domain]") {
  // The first up, non-loopback interface with multicast, or loopback where there is none.
  std::string why;
  const auto iface = spindle::core::find_interface("", why);
  sc::DomainConfig c;
  sc::resolve_node_host(c, "d.yaml");
  CHECK(c.node.host == (iface ? iface->address : "127.0.0.1"));
  // Named by its address, or by its name: the same interface.
  sc::DomainConfig lo;
  lo.discovery.multicast.interface = "127.0.0.1";
  sc::resolve_node_host(lo, "d.yaml");
  CHECK(lo.node.host == "127.0.0.1");
  // A host given stays as given.
  sc::DomainConfig given;
  given.node.host = "10.1.2.3";
  sc::resolve_node_host(given, "d.yaml");
  CHECK(given.node.host == "10.1.2.3");
  // An interface that is not here is named, with those that are.
  sc::DomainConfig missing;
  missing.discovery.multicast.interface = "eth77";
  CHECK_THROWS_WITH(sc::resolve_node_host(missing, "d.yaml"),
                    Catch::StartsWith("d.yaml: discovery.multicast.interface: no interface "
                                      "'eth77' (interfaces here: lo"));
}

TEST_CASE("domain: a full file loads, and to_yaml reads back equal", "[domain]") {
  const auto c = sc::parse_domain_config(kThreeNodes, "d.yaml");
  CHECK(c.domain_id == 7);
  CHECK(c.node_id == 1);
  CHECK(c.node == sc::Address{"10.0.0.2", 7400});  // taken from its members entry
  CHECK(c.members.size() == 3);
  CHECK(c.members[2] == sc::Member{2, "10.0.0.3", 7400});
  CHECK(c.shm_namespace == "flight-sim");
  CHECK(c.engine.window_size == 256);
  CHECK(c.engine.slot_size == 2048);
  CHECK(c.engine.idle_spin == 500us);
  CHECK(c.engine.sleep_slice == 2ms);
  CHECK(c.engine.heartbeat_interval == 50ms);
  CHECK(c.engine.suspicion_timeout == 500ms);
  CHECK(c.engine.connect_timeout == 10s);
  CHECK(c.initial_members() == c.members);
  const auto text = sc::to_yaml(c);
  CHECK(sc::parse_domain_config(text, "again") == c);
  CHECK(text.find("  - {id: 2, host: \"10.0.0.3\", port: 7400}\n") != std::string::npos);
  CHECK(text.find("engine:\n  window_size: 256\n") != std::string::npos);

  sc::DomainConfig joiner;
  joiner.transport = sc::TransportKind::rdma;
  joiner.node_id = 9;
  joiner.node = {"10.0.0.9", 7409};
  joiner.contacts = {{"10.0.0.1", 7400}, {"10.0.0.2", 7400}};
  joiner.engine.heartbeat_interval = 0ns;
  CHECK(sc::parse_domain_config(sc::to_yaml(joiner), "again") == joiner);
  CHECK(sc::to_yaml(sc::DomainConfig()).find("members: []\ncontacts: []\n") != std::string::npos);

  // An external client (docs/membership.md), and a member that serves clients.
  sc::DomainConfig client;
  client.role = sc::Role::client;
  client.relays = {{"10.0.0.1", 7500}, {"10.0.0.2", 7500}};
  CHECK(sc::parse_domain_config(sc::to_yaml(client), "again") == client);
  sc::DomainConfig relay;
  relay.client_port = 7500;
  CHECK(sc::parse_domain_config(sc::to_yaml(relay), "again") == relay);
}

TEST_CASE("domain: SPINDLE_NODE_ID picks this node's entry from a shared file", "[domain]") {
  for (sc::NodeId id : {0u, 2u}) {
    const auto c = sc::parse_domain_config(kThreeNodes, "d.yaml", id);
    CHECK(c.node_id == id);
    CHECK(c.node.host == "10.0.0." + std::to_string(id + 1));
  }
  CHECK(error_of(kThreeNodes, 5) ==
        "d.yaml:6: members: node 5 (SPINDLE_NODE_ID) is not a member (ids: 0, 1, 2)");
}

TEST_CASE("domain lookup: SPINDLE_CONFIG as a path, a file:// URI, or inline YAML", "[domain]") {
  Lookup l;
  const auto file = l.dir.write("mine.yaml", kThreeNodes);
  l.dir.write("cwd/spindle.yaml", "version: 1\ndomain_id: 7\ntransport: shm\n");

  l.vars["SPINDLE_CONFIG"] = file.string();
  auto f = l.find();
  CHECK(f.origin == sc::ConfigOrigin::env_path);
  CHECK(f.source == file.string());
  CHECK(f.config.members.size() == 3);

  l.vars["SPINDLE_CONFIG"] = "file://" + file.string();
  f = l.find();
  CHECK(f.origin == sc::ConfigOrigin::env_uri);
  CHECK(f.config.node_id == 1);

  l.vars["SPINDLE_CONFIG"] = "{version: 1, transport: shm, node: {id: 4}}";
  f = l.find();
  CHECK(f.origin == sc::ConfigOrigin::env_inline);
  CHECK(f.source == "SPINDLE_CONFIG");
  CHECK(f.config.transport == sc::TransportKind::shm);
  CHECK(f.config.node_id == 4);
  CHECK(f.config.domain_id == 7);  // a file without domain_id serves the domain asked for

  l.vars["SPINDLE_CONFIG"] = "version: 1\nengine:\n  window_size: 8\n";
  CHECK(l.find().config.engine.window_size == 8);

  // SPINDLE_NODE_ID applies whatever the source.
  l.vars["SPINDLE_CONFIG"] = file.string();
  l.vars["SPINDLE_NODE_ID"] = "2";
  CHECK(l.find().config.node == sc::Address{"10.0.0.3", 7400});

  // Errors name the inline source, or the file and where its name came from.
  l.vars.erase("SPINDLE_NODE_ID");
  l.vars["SPINDLE_CONFIG"] = "version: 1\nnode: {id: x}\n";
  CHECK(l.error() == "SPINDLE_CONFIG:2: node.id: expected an integer, got 'x'");
  l.vars["SPINDLE_CONFIG"] = (l.dir.path() / "absent.yaml").string();
  CHECK(l.error() ==
        (l.dir.path() / "absent.yaml").string() + ": cannot open the domain file (SPINDLE_CONFIG)");
  l.vars["SPINDLE_CONFIG"] = "file://" + (l.dir.path() / "absent.yaml").string();
  CHECK(l.error() ==
        (l.dir.path() / "absent.yaml").string() + ": cannot open the domain file (SPINDLE_CONFIG)");
  // An empty SPINDLE_CONFIG is as if unset.
  l.vars["SPINDLE_CONFIG"] = "";
  CHECK(l.find().origin == sc::ConfigOrigin::default_file);
}

TEST_CASE("domain lookup: default locations in order, then the built-in defaults", "[domain]") {
  Lookup l;
  auto f = l.find(3);
  CHECK(f.origin == sc::ConfigOrigin::built_in);
  CHECK(f.source == "built-in defaults");
  CHECK(f.config.domain_id == 3);
  CHECK(f.config.initial_members().size() == 1);

  l.dir.write("etc/domain.yaml", "version: 1\nengine: {window_size: 3}\n");
  f = l.find();
  CHECK(f.origin == sc::ConfigOrigin::default_file);
  CHECK(f.source == (l.dir.path() / "etc" / "domain.yaml").string());
  CHECK(f.config.engine.window_size == 3);

  l.dir.write("xdg/domain.yaml", "version: 1\nengine: {window_size: 2}\n");
  CHECK(l.find().config.engine.window_size == 2);

  l.dir.write("cwd/spindle.yaml", "version: 1\nengine: {window_size: 1}\n");
  CHECK(l.find().config.engine.window_size == 1);

  l.vars["SPINDLE_NODE_ID"] = "12";
  CHECK(l.find().config.node_id == 12);
  l.vars["SPINDLE_NODE_ID"] = "-1";
  CHECK(l.error() == "SPINDLE_NODE_ID: expected a node id (0..4294967295), got '-1'");
  l.vars["SPINDLE_NODE_ID"] = "twelve";
  CHECK(l.error() == "SPINDLE_NODE_ID: expected a node id (0..4294967295), got 'twelve'");

  // A default file that is broken is an error, not skipped.
  l.vars.erase("SPINDLE_NODE_ID");
  l.dir.write("cwd/spindle.yaml", "version: 1\nengine: {window_size: 0}\n");
  CHECK(l.error() == (l.dir.path() / "cwd" / "spindle.yaml").string() +
                         ":2: engine.window_size: must be in 1..65536, got 0");
}

TEST_CASE("domain lookup: the process environment and the documented locations", "[domain]") {
  auto getenv = [](std::map<std::string, std::string> vars) {
    return [vars](const char* n) -> std::optional<std::string> {
      const auto it = vars.find(n);
      return it == vars.end() ? std::nullopt : std::optional(it->second);
    };
  };
  CHECK(sc::default_config_files(getenv({{"XDG_CONFIG_HOME", "/x"}, {"HOME", "/h"}})) ==
        std::vector<std::filesystem::path>{"spindle.yaml", "/x/spindle/domain.yaml",
                                           "/etc/spindle/domain.yaml"});
  CHECK(sc::default_config_files(getenv({{"HOME", "/h"}})) ==
        std::vector<std::filesystem::path>{"spindle.yaml", "/h/.config/spindle/domain.yaml",
                                           "/etc/spindle/domain.yaml"});
  // The real process: SPINDLE_CONFIG inline text wins over everything.
  qos_test::ScopedEnv env("SPINDLE_CONFIG", "{version: 1, domain_id: 5, transport: rdma}");
  qos_test::ScopedEnv node("SPINDLE_NODE_ID", std::nullopt);
  const auto f = sc::find_domain_config(5);
  CHECK(f.origin == sc::ConfigOrigin::env_inline);
  CHECK(f.config.transport == sc::TransportKind::rdma);
  CHECK(sc::LookupEnvironment::process().default_files.front() == "spindle.yaml");
}

// Each file (after "version: 1") and the exact error it gets; "" for none.
const std::vector<std::pair<std::string, std::string>> kContradictions = {
    {"members:\n  - {id: 0, host: a, port: 1}\n  - {id: 0, host: b, port: 1}\n",
     "d.yaml:4: members[1].id: id 0 appears twice (first at line 3)"},
    {"members:\n  - {id: 0, host: a, port: 1}\n  - {id: 1, host: a, port: 1}\n",
     "d.yaml:4: members[1]: address a:1 is also members[0]'s"},
    {"node: {id: 3}\nmembers:\n  - {id: 0, host: a, port: 1}\n",
     "d.yaml:2: node.id: node 3 is not a member (ids: 0)"},
    {"members:\n  - {id: 1, host: a, port: 1}\n",
     "d.yaml:2: members: node 0 is not a member (ids: 1)"},
    {"node: {host: b}\nmembers:\n  - {id: 0, host: a, port: 1}\n",
     "d.yaml:2: node.host: 'b' contradicts members[0].host 'a'"},
    {"node: {port: 2}\nmembers:\n  - {id: 0, host: a, port: 1}\n",
     "d.yaml:2: node.port: 2 contradicts members[0].port 1"},
    {"members:\n  - {id: 0, host: a, port: 1}\n  - {id: 1, host: b}\n",
     "d.yaml:4: members[1].port: a member of a multi-member domain needs a port (0 would let "
     "the system pick one its peers cannot know)"},
    {"transport: shm\nmembers:\n  - {id: 0, host: a}\n  - {id: 1, host: b}\n",
     "d.yaml:5: members[1].host: the shm transport needs every member on one host: 'b' "
     "differs from members[0].host 'a'"},
    {"transport: shm\nmembers:\n  - {id: 0}\n  - {id: 1}\n", ""},  // shm needs no ports
    {"members:\n  - {id: 0, port: 1}\ncontacts:\n  - {host: c, port: 2}\n",
     "d.yaml:4: contacts: a node lists the members or joins through contacts, not both"},
    {"members:\n  - {host: a, port: 1}\n", "d.yaml:3: members[0].id: missing"},
    {"contacts:\n  - {host: c, port: 0}\n",
     "d.yaml:3: contacts[0].port: must be in 1..65535, got 0"},
    {"engine:\n  window_size: 65536\n  slot_size: 65536\n",
     "d.yaml:3: engine.window_size: window_size (65536) x slot_size (65536) = 4294967296 "
     "bytes per sender ring, more than the limit of 268435456"},
    {"engine:\n  heartbeat_interval: 1s\n  suspicion_timeout: 500ms\n",
     "d.yaml:4: engine.suspicion_timeout: suspicion_timeout (500ms) must be longer than "
     "heartbeat_interval (1s)"},
    {"engine:\n  heartbeat_interval: 2s\n",
     "d.yaml:3: engine.heartbeat_interval: suspicion_timeout (1s) must be longer than "
     "heartbeat_interval (2s)"},
    {"engine:\n  heartbeat_interval: 0\n  suspicion_timeout: 1ms\n", ""},
    {"shm: {namespace: \"a/b\"}\n",
     "d.yaml:2: shm.namespace: only letters, digits, '_', '-' and '.', got 'a/b'"},
    {"nodes: {}\n",
     "d.yaml:2: nodes: unknown key (allowed: version, domain_id, transport, node, members, "
     "contacts, join_port, role, relays, client_port, shm, engine, security, storage, discovery)"},
    // Across hosts (docs/membership.md, "Across hosts").
    {"node: {host: 10.0.0.5, bind: 0.0.0.0}\n", ""},
    {"node: {bind: everywhere}\n",
     "d.yaml:2: node.bind: expected an IPv4 address (0.0.0.0: every interface), got 'everywhere'"},
    {"discovery: {multicast: {mode: off}}\n", ""},
    {"discovery: {multicast: {mode: loud}}\n",
     "d.yaml:2: discovery.multicast.mode: expected auto, on or off, got 'loud'"},
    {"discovery: {multicast: {address: 10.1.2.3}}\n",
     "d.yaml:2: discovery.multicast.address: expected an IPv4 multicast group (224.0.0.0 to "
     "239.255.255.255), got '10.1.2.3'"},
    {"discovery: {multicast: {ttl: 0}}\n",
     "d.yaml:2: discovery.multicast.ttl: must be in 1..255, got 0"},
    {"discovery: {multicast: {interval: 1ms}}\n",
     "d.yaml:2: discovery.multicast.interval: must be in 10ms..60min, got 1ms"},
    {"discovery: {beacon: {}}\n", "d.yaml:2: discovery.beacon: unknown key (allowed: multicast)"},
    {"discovery:\n  multicast: {address: 239.255.0.9, port: 7499, interface: eth0, ttl: 2, "
     "interval: 500ms}\n",
     ""},
    // External clients (docs/membership.md).
    {"role: client\nrelays:\n  - {host: a, port: 1}\n", ""},
    {"role: client\n", ""},  // through the join port
    {"role: client\nrelays:\n  - {host: a, port: 1}\nmembers:\n  - {id: 0, port: 1}\n",
     "d.yaml:5: members: a client is in no view: it lists no members"},
    {"role: client\nrelays:\n  - {host: a, port: 1}\ncontacts:\n  - {host: c, port: 2}\n",
     "d.yaml:5: contacts: a client joins through relays, not contacts"},
    {"role: client\nrelays:\n  - {host: a, port: 1}\nclient_port: 5\n",
     "d.yaml:5: client_port: a client relays for nobody"},
    {"relays:\n  - {host: a, port: 1}\n",
     "d.yaml:2: relays: only a client (role: client) connects through relays"},
    {"role: visitor\n", "d.yaml:2: role: expected member or client, got 'visitor'"},
    {"client_port: 70000\n", "d.yaml:2: client_port: must be in 0..65535, got 70000"},
    {"role: client\nrelays:\n  - {host: a, port: 0}\n",
     "d.yaml:4: relays[0].port: must be in 1..65535, got 0"},
    {"engine: {window: 3}\n",
     "d.yaml:2: engine.window: unknown key (allowed: window_size, slot_size, idle_spin, "
     "sleep_slice, heartbeat_interval, suspicion_timeout, lag_bound, connect_timeout, "
     "rdmc_block_size, rdmc_buffer_size, rdmc_algorithm)"},
    {"engine:\n  lag_bound: 1s\n",
     "d.yaml:3: engine.lag_bound: lag_bound (1s) must be shorter than suspicion_timeout (1s): "
     "a lagging member is left behind before it is suspected"},
    {"engine:\n  suspicion_timeout: 400ms\n  lag_bound: 500ms\n",
     "d.yaml:4: engine.lag_bound: lag_bound (500ms) must be shorter than suspicion_timeout "
     "(400ms): a lagging member is left behind before it is suspected"},
    {"engine: {lag_bound: -1ms}\n",
     "d.yaml:2: engine.lag_bound: expected a duration (an integer with ns, us, ms, s or min, or "
     "0, or infinite), got '-1ms'"},
    {"members:\n  - {id: 0, colour: red}\n",
     "d.yaml:3: members[0].colour: unknown key (allowed: id, host, port, subject)"},
    {"security: {ca: ca.pem, certificate: w.pem, private_key: w.key}\n",
     "d.yaml:2: security.permissions: missing: a secured participant needs security.ca, "
     "security.certificate, security.private_key and security.permissions (docs/security.md)"},
    {"role: client\nsecurity: {ca: a, certificate: b, private_key: c, permissions: d}\n",
     "d.yaml:2: role: external clients cannot take part in a secured domain yet "
     "(docs/security.md)"},
    {"members:\n  - {id: 0, port: 7400}\n  - {id: 1, port: 7401, subject: CN=b}\n"
     "security: {ca: a, certificate: b, private_key: c, permissions: d}\n",
     "d.yaml:3: members[0].subject: missing: in a secured domain each listed member names its "
     "certificate subject"},
    {"security: {ca: a, certifcate: b}\n",
     "d.yaml:2: security.certifcate: unknown key (allowed: ca, certificate, private_key, "
     "permissions, crl)"},
    {"transport: udp\n", "d.yaml:2: transport: expected auto, tcp, shm or rdma, got 'udp'"},
    {"domain_id: -1\n", "d.yaml:2: domain_id: must be >= 0, got -1"},
    {"node: {port: 65536}\n", "d.yaml:2: node.port: must be in 0..65535, got 65536"},
    {"node: {host: \"\"}\n", "d.yaml:2: node.host: must not be empty"},
    {"engine: {sleep_slice: 0}\n", "d.yaml:2: engine.sleep_slice: must be in 1us..10s, got 0"},
    {"engine: {idle_spin: infinite}\n",
     "d.yaml:2: engine.idle_spin: must be in 0..10s, got infinite"},
    {"members: {id: 0}\n", "d.yaml:2: members: expected a list of mappings, got a mapping"},
    {"engine: {rdmc_block_size: 4100}\n",
     "d.yaml:2: engine.rdmc_block_size: 4100 is not a multiple of 64"},
    {"engine: {rdmc_block_size: 1024}\n",
     "d.yaml:2: engine.rdmc_block_size: must be in 4096..67108864, got 1024"},
    {"engine: {rdmc_buffer_size: 1000}\n",
     "d.yaml:2: engine.rdmc_buffer_size: must be >= 1048576, got 1000"},
    {"engine: {rdmc_algorithm: fastest}\n",
     "d.yaml:2: engine.rdmc_algorithm: 'fastest' is not one of binomial_pipeline, "
     "binomial_tree, chain, sequential"},
    {"engine: {rdmc_algorithm: chain, rdmc_block_size: 65536, rdmc_buffer_size: 2097152}\n", ""},
    {"storage: {segment_bytes: 1000}\n",
     "d.yaml:2: storage.segment_bytes: must be in 65536..1073741824, got 1000"},
    {"storage: {retain_bytes: -1}\n", "d.yaml:2: storage.retain_bytes: must be >= 0, got -1"},
    {"storage: {retain_age: -1s}\n",
     "d.yaml:2: storage.retain_age: expected a duration (an integer with ns, us, ms, s or min, "
     "or 0, or infinite), got '-1s'"},
    {"storage: {logs: /tmp}\n",
     "d.yaml:2: storage.logs: unknown key (allowed: log_dir, segment_bytes, retain_bytes, "
     "retain_age)"},
    {"storage: {log_dir: /var/lib/spindle, segment_bytes: 1048576, retain_age: 10080min}\n", ""},
};

TEST_CASE(
    "domain errors: contradictions, unknown keys, types and ranges name the file, the "
    "line and the key",
    "[domain]") {
  for (const auto& [body, message] : kContradictions) {
    INFO(body);
    CHECK(error_of("version: 1\n" + body) == message);
  }
  // Domain id mismatch is checked by the lookup.
  Lookup l;
  l.dir.write("cwd/spindle.yaml", "version: 1\n\ndomain_id: 3\n");
  CHECK(l.error(4) == (l.dir.path() / "cwd" / "spindle.yaml").string() +
                          ":3: domain_id: this file is for domain 3, the participant joins "
                          "domain 4");
  CHECK(l.find(3).config.domain_id == 3);
}

TEST_CASE("domain errors: syntax, version, files", "[domain]") {
  CHECK(error_of("version: 1\nmembers: {id: 0}\n") ==
        "d.yaml:2: members: expected a list of mappings, got a mapping");
  CHECK(error_of("version: 1\nmembers: [\n").rfind("d.yaml:3: syntax: ", 0) == 0);
  CHECK(error_of("domain_id: 1\n") == "d.yaml:1: version: missing (this loader reads version 1)");
  CHECK(qos_test::error_of<sc::ConfigError>([] {
          (void)sc::load_domain_config("/nonexistent/spindle.yaml");
        }) == "/nonexistent/spindle.yaml: cannot open the domain file");
  // ConfigError is a dds::core::Error, so the DCPS API can let it through.
  CHECK(qos_test::error_of<dds::core::Error>([] { (void)error_of("x"); }).empty());
  CHECK_THROWS_AS(sc::parse_domain_config("version: 3\n", "d.yaml"), dds::core::Error);
}

TEST_CASE("domain lookup: hosts may be names; one that does not resolve names its key",
          "[domain][hosts]") {
  Lookup l;
  const auto named = l.dir.write("named.yaml", R"(version: 1
domain_id: 7
node: {id: 1}
members:
  - {id: 0, host: localhost, port: 7400}
  - {id: 1, host: localhost, port: 7401}
)");
  l.vars["SPINDLE_CONFIG"] = named.string();
  const auto f = l.find();
  CHECK(f.config.node == sc::Address{"localhost", 7401});

  const auto bad = l.dir.write("bad.yaml", R"(version: 1
domain_id: 7
node: {id: 1}
members:
  - {id: 0, host: localhost, port: 7400}
  - {id: 1, host: no-such-host.invalid, port: 7401}
)");
  l.vars["SPINDLE_CONFIG"] = bad.string();
  CHECK_THAT(l.error(), Catch::StartsWith(bad.string() + ":6: members[1].host: cannot resolve host "
                                                         "'no-such-host.invalid': "));

  l.vars["SPINDLE_CONFIG"] =
      "version: 1\ncontacts:\n  - {host: localhost, port: 7400}\n  - {host: nowhere.invalid, "
      "port: 7400}\n";
  CHECK_THAT(l.error(), Catch::StartsWith("SPINDLE_CONFIG:4: contacts[1].host: cannot resolve "
                                          "host 'nowhere.invalid': "));

  l.vars["SPINDLE_CONFIG"] = "version: 1\nnode:\n  id: 0\n  host: nowhere.invalid\n";
  CHECK_THAT(l.error(), Catch::StartsWith("SPINDLE_CONFIG:4: node.host: cannot resolve host "
                                          "'nowhere.invalid': "));

  // Shared memory uses no host: nothing to resolve. Parsing alone never resolves.
  l.vars["SPINDLE_CONFIG"] = "version: 1\ntransport: shm\nnode:\n  host: nowhere.invalid\n";
  CHECK(l.find().config.node.host == "nowhere.invalid");
  CHECK(
      sc::parse_domain_config("version: 1\nnode: {host: nowhere.invalid}\n", "p.yaml").node.host ==
      "nowhere.invalid");
}

TEST_CASE("domain: engine.lag_bound defaults under the suspicion timeout", "[domain]") {
  CHECK(sc::parse_domain_config("version: 1\n", "d.yaml").engine.lag_bound ==
        std::chrono::milliseconds(100));
  // Left out with a short suspicion timeout: a tenth of it.
  CHECK(sc::parse_domain_config(
            "version: 1\nengine: {heartbeat_interval: 10ms, suspicion_timeout: 50ms}\n", "d.yaml")
            .engine.lag_bound == std::chrono::milliseconds(5));
  CHECK(
      sc::parse_domain_config("version: 1\nengine: {lag_bound: 0}\n", "d.yaml").engine.lag_bound ==
      std::chrono::nanoseconds(0));
}
