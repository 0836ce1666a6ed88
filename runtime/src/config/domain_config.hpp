// The domain file: which domain a participant joins, over which transport, as which node,
// with which peers, and the engine knobs (DESIGN §7, §9, §10). Every setting has a default
// that works with no file at all: a participant joins the domain running on its host or
// announced on its network (discovery.multicast), or founds it, at the address of its
// network interface (node.host: auto). Schema: docs/domain-schema.md (generated from the
// table in domain_config.cpp); guide: docs/qos.md.
//
// Lookup (find_domain_config), like Cyclone DDS's CYCLONEDDS_URI:
//   1. SPINDLE_CONFIG, if set and not empty: a path, a file:// URI, or the YAML text itself
//      (a value holding a newline, starting with '{', or holding ": " is YAML text);
//   2. ./spindle.yaml;
//   3. $XDG_CONFIG_HOME/spindle/domain.yaml ($HOME/.config/spindle/domain.yaml when
//      XDG_CONFIG_HOME is unset);
//   4. /etc/spindle/domain.yaml;
//   5. the built-in defaults.
// SPINDLE_NODE_ID, when set, replaces node.id, so several processes can share one file
// that lists every member.
//
// Errors throw ConfigError naming the file, the line and the key
// ("spindle.yaml:7: members[1].id: id 2 appears twice (first at line 5)").
//
// Threading: plain values and pure functions; find_domain_config reads the environment
// and the file system and may run on any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <dds/core/Exception.hpp>
#include <spindle/transport/transport.hpp>

#include "group/view.hpp"
#include "security/credentials.hpp"
#include "storage/settings.hpp"

namespace spindle::config {

using transport::NodeId;

// automatic is the domain file's `auto`: shm between members on one host, tcp between hosts.
enum class TransportKind : std::uint8_t { automatic, tcp, shm, rdma };
[[nodiscard]] std::string_view to_string(TransportKind t) noexcept;

// member: the process takes part in the domain's views; client: an external client, which
// reaches the domain through a member that relays for it (docs/membership.md, "External
// clients") and is never in a view.
enum class Role : std::uint8_t { member, client };
[[nodiscard]] std::string_view to_string(Role r) noexcept;

// A node's TCP/RDMA address. Port 0 lets the system pick (never in a member list of several).
struct Address {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  friend bool operator==(const Address&, const Address&) = default;
};

// A member of the first view: the group layer's member description.
using Member = group::Member;

// Engine knobs shared by every subgroup of the domain (QoS profiles may override the ring
// per topic with the Engine policy).
struct EngineSettings {
  std::uint32_t window_size = 100;  // SMC slots per sender
  std::uint32_t slot_size = 1024;   // bytes of payload per slot
  std::chrono::nanoseconds idle_spin = std::chrono::milliseconds(1);
  std::chrono::nanoseconds sleep_slice = std::chrono::milliseconds(100);
  std::chrono::nanoseconds heartbeat_interval = std::chrono::milliseconds(100);  // 0: off
  std::chrono::nanoseconds suspicion_timeout = std::chrono::seconds(1);
  // How long a member of an ordered topic may stop taking its samples before the others go
  // on without it (docs/dev/smc.md, "Lagging members"); 0: never. Topics may ask otherwise with
  // the engine QoS policy.
  std::chrono::nanoseconds lag_bound = std::chrono::milliseconds(100);
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(5);
  // RDMC, for samples larger than a slot (docs/dev/rdmc.md).
  std::uint32_t rdmc_block_size = 1u << 20;
  std::uint64_t rdmc_buffer_size = std::uint64_t{257} << 20;  // the largest sample, plus 64
  std::string rdmc_algorithm = "binomial_pipeline";
  friend bool operator==(const EngineSettings&, const EngineSettings&) = default;
};

// How a participant finds its domain on the local network with nothing configured
// (docs/membership.md, "Discovery across hosts"): the leader announces the domain's join
// port by UDP multicast, and a participant that starts asks and listens (group/beacon.hpp).
enum class MulticastMode : std::uint8_t {
  automatic,  // `auto`: on where an interface has multicast, otherwise a note and contacts
  on,         // a participant fails where multicast is missing
  off,        // contacts (or the join port on this host) only
};
[[nodiscard]] std::string_view to_string(MulticastMode m) noexcept;

struct MulticastSettings {
  MulticastMode mode = MulticastMode::automatic;
  std::string address = "239.255.0.1";  // the group (IPv4, 224.0.0.0/4)
  std::uint16_t port = 7399;            // UDP, shared by every domain (ids in the datagram)
  std::string interface;                // a name or one of its IPv4 addresses; empty: the first up,
                                        // non-loopback interface with multicast
  std::uint32_t ttl = 1;                // 1: this network only
  std::chrono::nanoseconds interval = std::chrono::seconds(1);  // between announcements
  friend bool operator==(const MulticastSettings&, const MulticastSettings&) = default;
};

struct DiscoverySettings {
  MulticastSettings multicast;
  friend bool operator==(const DiscoverySettings&, const DiscoverySettings&) = default;
};

// node.host's default: the address of the interface discovery uses (resolve_node_host).
inline constexpr std::string_view kAutoHost = "auto";

struct DomainConfig {
  std::uint32_t domain_id = 0;
  TransportKind transport = TransportKind::automatic;
  NodeId node_id = 0;  // this process's member id
  // This node's address, the one the others reach it at (from its members entry if listed;
  // `auto` until resolve_node_host).
  Address node{std::string(kAutoHost), 0};
  // The local address its sockets listen on (transport, join port, client port); empty:
  // node.host (every interface where node.host is auto: resolve_node_host); 0.0.0.0: every
  // interface.
  std::string bind;
  std::vector<Member> members;            // a fixed first view; empty: join or found
  std::vector<Address> contacts;          // or: join a running domain through any of these
  std::uint16_t join_port = 0;            // the leader's join port; 0: 7410 + domain_id
  std::string shm_namespace = "spindle";  // prefix of shared-memory segment names
  Role role = Role::member;
  std::vector<Address> relays;    // a client: the members it connects through, in order
  std::uint16_t client_port = 0;  // a member: the port it serves clients on; 0: none
  EngineSettings engine;
  storage::LogSettings storage;  // the durable logs of `logged` topics
  DiscoverySettings discovery;
  // A secured domain (docs/security.md): the files, resolved against the domain file's
  // folder; none set: not secured.
  security::Settings security;

  // The address sockets listen on: bind, else node.host.
  [[nodiscard]] const std::string& listen_host() const noexcept {
    return bind.empty() ? node.host : bind;
  }

  // The members of the first view: `members`, or this node alone.
  [[nodiscard]] std::vector<Member> initial_members() const;
  // The knobs in the group layer's form.
  [[nodiscard]] group::Knobs knobs() const;
  friend bool operator==(const DomainConfig&, const DomainConfig&) = default;
};

// The one format version this loader reads.
inline constexpr int kDomainFormatVersion = 1;

class ConfigError : public dds::core::Error {
 public:
  using dds::core::Error::Error;
};

// Parses a domain file's text; `source` names it in errors. `node_id`, when set, replaces
// the file's node.id (SPINDLE_NODE_ID) before the checks.
[[nodiscard]] DomainConfig parse_domain_config(std::string_view yaml, const std::string& source,
                                               std::optional<NodeId> node_id = std::nullopt);
[[nodiscard]] DomainConfig load_domain_config(const std::filesystem::path& file,
                                              std::optional<NodeId> node_id = std::nullopt);
// YAML that parse_domain_config reads back to an equal value.
[[nodiscard]] std::string to_yaml(const DomainConfig& config);

// Where a configuration came from.
enum class ConfigOrigin : std::uint8_t { env_path, env_uri, env_inline, default_file, built_in };

struct FoundDomainConfig {
  DomainConfig config;
  ConfigOrigin origin = ConfigOrigin::built_in;
  std::string source;  // the file, "SPINDLE_CONFIG" for inline text, "built-in defaults"
};

// What the lookup reads: the environment and the default file locations.
struct LookupEnvironment {
  std::function<std::optional<std::string>(const char* name)> getenv;
  std::vector<std::filesystem::path> default_files;  // tried in order
  // The process's environment and the default locations it implies.
  [[nodiscard]] static LookupEnvironment process();
};

// The default locations for an environment: ./spindle.yaml, the XDG file, /etc.
[[nodiscard]] std::vector<std::filesystem::path> default_config_files(
    const std::function<std::optional<std::string>(const char*)>& getenv);

// Finds and loads the configuration for `domain_id` (lookup order above). A file that
// names another domain_id is an error; a file without domain_id serves any domain. With
// nullopt (dds::domain::default_id()) the file's domain_id applies, else 0. Unlike the
// parse/load functions, which only read, this one also resolves every host the transport
// will use (tcp, rdma): a name that does not resolve is a ConfigError naming its key.
[[nodiscard]] FoundDomainConfig find_domain_config(std::optional<std::uint32_t> domain_id);
[[nodiscard]] FoundDomainConfig find_domain_config(std::optional<std::uint32_t> domain_id,
                                                   const LookupEnvironment& env);

// Replaces node.host `auto` with the address of the interface discovery uses
// (discovery.multicast.interface, or the first up, non-loopback interface with multicast),
// and an empty node.bind then with 0.0.0.0 (reached at that address and at 127.0.0.1); or
// with 127.0.0.1 where there is none. `source` names the configuration in errors. Throws
// ConfigError when discovery.multicast.interface names an interface that is not here.
void resolve_node_host(DomainConfig& config, const std::string& source);

// The schema document (docs/domain-schema.md).
[[nodiscard]] std::string schema_markdown();

}  // namespace spindle::config
