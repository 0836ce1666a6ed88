// spindle::detail::create_participant: the one place that turns a domain file into a
// transport and a participant (see spindle/detail/dcps.hpp). It lives in the Spindle::dds
// library, which links the transports; the runtime library itself knows only the contract.
#include <arpa/inet.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <dds/core/Exception.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/transport/tcp.hpp>
#if SPINDLE_HAVE_SHM
#include <spindle/transport/auto.hpp>
#include <spindle/transport/shm.hpp>
#endif
#if SPINDLE_HAVE_RDMA
#include <spindle/transport/rdma.hpp>
#endif

#include "client/client_bus.hpp"
#include "config/domain_config.hpp"
#include "core/interfaces.hpp"
#include "dcps/entities.hpp"
#include "dcps/wire.hpp"
#include "group/engine.hpp"
#include "group/join.hpp"
#include "group/liveness.hpp"
#include "group/thread_runtime.hpp"
#include "participant_registry.hpp"
#include "qos/checks.hpp"
#include "security/credentials.hpp"
#include "security/permissions.hpp"

namespace spindle::detail {

namespace {

using config::DomainConfig;
using config::TransportKind;
using namespace std::chrono_literals;

std::chrono::milliseconds ms(std::chrono::nanoseconds d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d);
}

// A secured participant's credentials and permissions (docs/security.md); both null where
// the domain file has no security section.
struct Secured {
  std::shared_ptr<const security::Credentials> credentials;
  std::shared_ptr<const security::Permissions> permissions;
  [[nodiscard]] bool on() const noexcept { return credentials != nullptr; }
};

// Loads and checks the security section's files; errors name the configuration.
Secured load_security(const DomainConfig& c, const std::string& source) {
  if (!c.security.enabled()) return {};
  try {
    Secured s;
    s.credentials = security::Credentials::load(c.security);
    s.permissions = std::make_shared<const security::Permissions>(
        security::Permissions::load(c.security.permissions));
    return s;
  } catch (const security::SecurityError& e) {
    throw dds::core::Error("domain " + std::to_string(c.domain_id) + " (config: " + source +
                           "): " + e.what());
  }
}

// What every member of the domain must share, exchanged in the transport's handshake: a
// peer whose values differ is refused with both named. "protocol" is the version of what
// the layers above the transport put on the wire (SST rows, SMC slots, discovery records).
// A secured domain adds its CA's fingerprint and its permissions document's SHA-256.
std::vector<transport::AgreedSetting> must_agree(const DomainConfig& c, const Secured& sec = {}) {
  std::vector<transport::AgreedSetting> out = {
      {"protocol", "4"},
      {"transport", std::string(config::to_string(c.transport))},
      {"engine.slot_size", std::to_string(c.engine.slot_size)},
      {"engine.window_size", std::to_string(c.engine.window_size)},
      {"engine.lag_bound", std::to_string(ms(c.engine.lag_bound).count()) + " ms"}};
  if (sec.on()) {
    out.push_back({"security.ca", sec.credentials->ca_fingerprint()});
    out.push_back({std::string(security::kPermissionsSetting), sec.permissions->digest()});
  }
  return out;
}

// The prefix of the domain's shared-memory names: a secured domain's derive from its CA too,
// so that a secured and an unsecured domain of one id on one host never meet.
std::string shm_prefix(const DomainConfig& c, const Secured& sec) {
  std::string p = c.shm_namespace;
  if (sec.on()) p += ".s" + sec.credentials->ca_fingerprint().substr(0, 16);
  return p + ".d" + std::to_string(c.domain_id);
}

// The tcp transport as the domain uses it (alone, or as the auto transport's far half).
transport::TcpConfig tcp_config(const DomainConfig& c, const Secured& sec) {
  transport::TcpConfig t;
  t.self = transport::NodeAddress{c.node_id, c.node.host, c.node.port};
  t.bind = c.bind;
  // One failure detector: the SST's heartbeats judge silence (engine.suspicion_timeout);
  // the transport reports only streams that fail or close.
  t.heartbeat_interval = std::chrono::milliseconds(0);
  t.suspicion_timeout = ms(c.engine.suspicion_timeout);
  t.domain_id = c.domain_id;
  t.must_agree = must_agree(c, sec);
  t.security = sec.credentials;  // null: streams in clear
  return t;
}

#if SPINDLE_HAVE_SHM
// The shm transport as the domain uses it (alone, or as the auto transport's near half).
transport::ShmConfig shm_config(const DomainConfig& c, const Secured& sec) {
  transport::ShmConfig t;
  t.self = c.node_id;
  t.name_prefix = shm_prefix(c, sec);
  // One failure detector: the SST's heartbeats judge silence; the transport reports
  // peers that left the view (checked every 200 ms) or whose process exited (at once).
  t.suspicion_timeout = std::chrono::milliseconds(0);
  t.heartbeat_interval = std::chrono::milliseconds(200);
  t.domain_id = c.domain_id;
  t.must_agree = must_agree(c, sec);
  // A block travels through the pair's ring, which holds blocks up to half its size:
  // room for two RDMC blocks at least.
  t.ring_bytes =
      std::max<std::size_t>(t.ring_bytes, 2 * (std::size_t{c.engine.rdmc_block_size} + 64));
  return t;
}
#endif

std::unique_ptr<transport::Transport> make_transport(const DomainConfig& c, const Secured& sec) {
  switch (c.transport) {
    case TransportKind::tcp:
      return std::make_unique<transport::TcpTransport>(tcp_config(c, sec));
    case TransportKind::automatic: {
#if SPINDLE_HAVE_SHM
      transport::AutoConfig t;
      t.tcp = tcp_config(c, sec);
      t.shm = shm_config(c, sec);
      auto a = std::make_unique<transport::AutoTransport>(std::move(t));
      // Said once, at start: members of this host are reached over tcp, slower than shm.
      if (!a->shm_unavailable().empty())
        std::cerr << "spindle: domain " << c.domain_id << ": " << a->shm_unavailable()
                  << "; peers on this host are reached over tcp\n";
      return a;
#else
      return std::make_unique<transport::TcpTransport>(tcp_config(c, sec));
#endif
    }
    case TransportKind::shm: {
#if SPINDLE_HAVE_SHM
      return std::make_unique<transport::ShmTransport>(shm_config(c, sec));
#else
      throw dds::core::UnsupportedError("transport shm is not built into this Spindle DDS");
#endif
    }
    case TransportKind::rdma: {
#if SPINDLE_HAVE_RDMA
      std::string why;
      if (!transport::rdma_device_available(why)) {
        throw dds::core::Error("transport rdma: no RDMA device here (" + why +
                               "); choose tcp or shm in the domain file");
      }
      transport::RdmaConfig t;
      t.self = transport::NodeAddress{c.node_id, c.node.host, c.node.port};
      t.bind = c.bind;
      t.suspicion_timeout = ms(c.engine.suspicion_timeout);
      return std::make_unique<transport::RdmaTransport>(t);
#else
      throw dds::core::UnsupportedError("transport rdma is not built into this Spindle DDS");
#endif
    }
  }
  throw dds::core::Error("unknown transport");
}

}  // namespace

// A node id for a participant whose configuration names none: random, so that
// participants that find each other with no configuration do not collide (0 is kept for
// "unset").
namespace {
// Whether other members of this domain run on this host over shared memory (their shm
// transports' sockets are bound; ShmTransport::live_nodes).
bool shm_peers_exist(const DomainConfig& c, const Secured& sec) {
#if SPINDLE_HAVE_SHM
  const auto ids = transport::ShmTransport::live_nodes(shm_prefix(c, sec));
  return std::any_of(ids.begin(), ids.end(), [&](transport::NodeId id) { return id != c.node_id; });
#else
  (void)c;
  (void)sec;
  return false;
#endif
}

// Whether the transport reaches peers on this host over shared memory (shm, or the auto
// transport whose shm half runs): then their sockets show whether the domain lives here.
bool uses_shm(const transport::Transport& t) {
#if SPINDLE_HAVE_SHM
  if (const auto* a = dynamic_cast<const transport::AutoTransport*>(&t))
    return a->shm_unavailable().empty();
#endif
  return t.kind() == "shm";
}

// The port peers dial to reach this node's transport (tcp, or the auto transport's tcp
// half); 0 where none does.
std::uint16_t dial_port(const transport::Transport& t) {
  if (const auto* tcp = dynamic_cast<const transport::TcpTransport*>(&t)) return tcp->port();
#if SPINDLE_HAVE_SHM
  if (const auto* a = dynamic_cast<const transport::AutoTransport*>(&t)) return a->port();
#endif
  return 0;
}

transport::NodeId random_node_id() {
  std::random_device rd;
  std::uniform_int_distribution<transport::NodeId> pick(1, 0x7fffffffu);
  return pick(rd);
}

// The identity of a domain founded here (group::View::identity): random, never 0.
std::uint64_t new_identity() {
  std::random_device rd;
  std::uniform_int_distribution<std::uint64_t> pick(1, std::numeric_limits<std::uint64_t>::max());
  return pick(rd);
}

// The identity of a domain whose members are listed: the same at each of them, from the list
// (FNV-1a over ids, hosts and ports).
std::uint64_t listed_identity(const std::vector<group::Member>& members) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&](std::string_view bytes) {
    for (const char b : bytes)
      h = (h ^ static_cast<unsigned char>(b)) * 1099511628211ull;
  };
  for (const auto& m : members)
    mix(std::to_string(m.id) + '@' + m.host + ':' + std::to_string(m.port) + ';');
  return h == 0 ? 1 : h;
}

// The multicast beacon of discovery across hosts (discovery.multicast; group/beacon.hpp), or
// null: where it is off, where this node is reachable on loopback only, and where multicast
// is missing (mode auto says so once per process and goes on with contacts; mode on fails).
std::shared_ptr<group::Beacon> make_beacon(const DomainConfig& c, std::uint16_t join_port,
                                           const std::string& source) {
  const auto& m = c.discovery.multicast;
  if (m.mode == config::MulticastMode::off) return nullptr;
  const std::string domain = "domain " + std::to_string(c.domain_id) + " (config: " + source + ")";
  auto missing = [&](const std::string& why) -> std::shared_ptr<group::Beacon> {
    if (m.mode == config::MulticastMode::on)
      throw dds::core::Error(domain + ": discovery.multicast.mode is on, but " + why +
                             " (set the mode to auto or off, or discovery.multicast.interface)");
    static std::once_flag said;
    std::call_once(said, [&] {
      std::cerr << "spindle: " << domain << ": no multicast discovery here: " << why
                << "; participants on other hosts are found only through contacts "
                   "(docs/membership.md, \"Discovery across hosts\")\n";
    });
    return nullptr;
  };
  // A node given a loopback address is for this host alone: nothing to announce or hear.
  const auto host = core::resolve_ipv4(c.node.host);
  if (!host || (ntohl(*host) >> 24) == 127) {
    if (m.mode != config::MulticastMode::on) return nullptr;
    return missing("node.host " + c.node.host +
                   " is a loopback address, which no other host reaches");
  }
  std::string why;
  const auto iface = core::find_interface(m.interface, why);
  if (!iface) return missing(why);
  group::BeaconSettings s;
  s.domain_id = c.domain_id;
  s.join_port = join_port;
  s.group = m.address;
  s.port = m.port;
  s.interface = iface->address;
  s.ttl = static_cast<int>(m.ttl);
  s.interval = ms(m.interval);
  try {
    return std::make_shared<group::Beacon>(std::move(s));
  } catch (const group::BeaconUnavailable& e) {
    return missing(e.what());
  }
}

// The join ports of the leaders `beacon` heard (the winner first), then `contacts` not among
// them.
std::vector<transport::NodeAddress> with_discovered(
    const group::Beacon* beacon, const std::vector<transport::NodeAddress>& contacts) {
  std::vector<transport::NodeAddress> out;
  if (beacon != nullptr)
    for (const auto& a : beacon->leaders())
      out.push_back(transport::NodeAddress{0, core::dotted(a.ipv4), a.join_port});
  for (const auto& k : contacts) {
    const bool known = std::any_of(out.begin(), out.end(), [&](const transport::NodeAddress& a) {
      return a.host == k.host && a.port == k.port;
    });
    if (!known) out.push_back(k);
  }
  return out;
}
}  // namespace

namespace {

// How a participant that halted (it lost its majority: a partition, a long pause) gets back
// into its domain (group::Engine::rejoin_with): through the join port, as it joined first, with
// its node id (the domain removed its old self). When nobody answers for longer than a
// leader takes to hand the port on, and the domain file names no contacts (the domain lives on
// this host), it founds the domain anew; with contacts it only ever asks.
class JoinPortRejoiner final : public group::Rejoiner {
 public:
  // `discovery`: the leaders multicast discovery hears are asked first (a domain that lost
  // to a larger one joins that), and none may be heard for it to found anew; null: none.
  JoinPortRejoiner(std::vector<transport::NodeAddress> contacts,
                   std::shared_ptr<group::Beacon> discovery, group::JoinRequest request,
                   std::string join_host, std::uint16_t join_port, bool may_found,
                   std::chrono::nanoseconds founding_grace, group::LayoutSettings layout,
                   group::Member self, std::shared_ptr<const security::Credentials> credentials)
      : contacts_(std::move(contacts)),
        discovery_(std::move(discovery)),
        request_(std::move(request)),
        join_host_(std::move(join_host)),
        join_port_(join_port),
        may_found_(may_found),
        founding_grace_(founding_grace),
        layout_(std::move(layout)),
        self_(std::move(self)),
        credentials_(std::move(credentials)) {}

  std::optional<group::Rejoined> attempt() override {
    const auto now = std::chrono::steady_clock::now();
    std::optional<group::Welcome> welcome;
    try {
      welcome = group::join(with_discovered(discovery_.get(), contacts_), request_,
                            now + std::chrono::seconds(1), credentials_);
    } catch (const dds::core::Error&) {
      // Refused: its old self is still a member (not removed yet), the leader is leaving, or
      // the domain changed its settings. Ask again later.
      silent_since_.reset();
      return std::nullopt;
    }
    if (welcome) {
      silent_since_.reset();
      return group::Rejoined{std::move(welcome->view), std::move(welcome->state), nullptr};
    }
    if (!silent_since_) silent_since_ = now;
    if (!may_found_ || now - *silent_since_ < founding_grace_) return std::nullopt;
    if (discovery_ && !discovery_->leaders().empty()) return std::nullopt;  // one leads: ask it
    const int fd = group::bind_join_port(join_host_, join_port_);
    if (fd < 0) return std::nullopt;  // someone else founds it: ask them next time
    auto view = group::first_view({self_}, layout_);
    view.identity = new_identity();
    return group::Rejoined{
        std::move(view),
        {},
        std::make_unique<group::TcpJoinPort>(join_host_, join_port_, fd, credentials_)};
  }

 private:
  std::vector<transport::NodeAddress> contacts_;
  std::shared_ptr<group::Beacon> discovery_;
  group::JoinRequest request_;
  std::string join_host_;
  std::uint16_t join_port_;
  bool may_found_;
  std::chrono::nanoseconds founding_grace_;
  group::LayoutSettings layout_;
  group::Member self_;
  std::shared_ptr<const security::Credentials> credentials_;
  std::optional<std::chrono::steady_clock::time_point> silent_since_;
};

// A member's participant: the first view, a join, or founding the domain.
std::shared_ptr<dcps::Participant> join_as_member(const config::FoundDomainConfig& found,
                                                  const dds::domain::qos::DomainParticipantQos& q) {
  DomainConfig c = found.config;
  // Without a member list a participant joins whatever runs (contacts, or the domain's join
  // port on this host) and founds the domain if nothing does.
  const bool joining = c.members.empty();
  if (joining && c.node_id == 0) {
    c.node_id = random_node_id();
    // A random id has no logs of its own: it takes over those of an earlier process
    // (storage/home.hpp), so PERSISTENT data outlives processes with no domain file.
    c.storage.adopt_orphans = true;
  }
  const Secured sec = load_security(c, found.source);
  std::unique_ptr<transport::Transport> t;
  try {
    t = make_transport(c, sec);
  } catch (const dds::core::Exception&) {
    throw;
  } catch (const std::exception& e) {
    throw dds::core::Error("domain " + std::to_string(c.domain_id) + ", node " +
                           std::to_string(c.node_id) + " (config: " + found.source +
                           "): cannot start the " + std::string(config::to_string(c.transport)) +
                           " transport: " + e.what());
  }
  group::LayoutSettings layout;
  layout.window_size = c.engine.window_size;
  layout.slot_size = c.engine.slot_size;
  layout.header_size = static_cast<std::uint32_t>(sizeof(dcps::SampleHeader));
  layout.knobs = c.knobs();
  layout.lag_bound = ms(c.engine.lag_bound);
  layout.permissions = sec.permissions;  // the layout enforces the grants
  const auto timeout = ms(c.engine.connect_timeout);
  auto secured = [&](std::shared_ptr<dcps::Participant> p) {
    if (sec.on()) p->secure(sec.credentials->subject(), sec.permissions);
    return p;
  };
  const std::uint16_t join_port =
      c.join_port != 0 ? c.join_port : group::default_join_port(c.domain_id);
  // The join port listens at node.bind (node.host unless set), where other hosts reach it.
  const std::string join_host = c.listen_host();
  auto join_port_of = [&](int bound_fd = -1) {
    return std::make_unique<group::TcpJoinPort>(join_host, join_port, bound_fd, sec.credentials);
  };
  auto runtime = [] { return std::make_unique<group::ThreadRuntime>(); };
  // Our own entry in a view we make: in a secured domain, with our certificate's identity.
  auto certified = [&](group::Member m) {
    if (sec.on()) {
      m.subject = sec.credentials->subject();
      m.serial = sec.credentials->serial();
    }
    return m;
  };

  // Where it asks to join, and to rejoin after a halt: the contacts named; a listed member,
  // the join port at the other members' hosts (whoever leads holds it); otherwise the join
  // port on this host, 127.0.0.1 (a leader of this host listens there unless it was told an
  // address of its own; then it is heard by multicast), after the leaders discovery hears.
  std::vector<transport::NodeAddress> contacts;
  for (const auto& a : c.contacts)
    contacts.push_back(transport::NodeAddress{0, a.host, a.port});
  if (!joining && c.join_port != 0) {
    for (const auto& m : c.members) {
      const bool listed = std::any_of(contacts.begin(), contacts.end(), [&](const auto& k) {
        return k.host == m.host && k.port == c.join_port;
      });
      if (!listed) contacts.push_back(transport::NodeAddress{0, m.host, c.join_port});
    }
  }
  if (joining && contacts.empty())
    contacts.push_back(transport::NodeAddress{0, "127.0.0.1", join_port});
  group::JoinRequest request;
  request.domain_id = c.domain_id;
  request.node = c.node_id;
  request.host = c.node.host;
  const auto me = group::this_process();
  request.pid = me.pid;
  request.host_id = me.host_id;
  request.port = dial_port(*t);
  request.settings = must_agree(c, sec);
  // A halted member asks the same way (the request keeps the transport's port), and founds
  // the domain anew only where a fresh participant would: no contacts named, no members
  // listed.
  // Multicast discovery (announcing while it leads, and listening), where the domain has a
  // join port.
  const auto beacon =
      joining || c.join_port != 0 ? make_beacon(c, join_port, found.source) : nullptr;
  const std::uint32_t join_ipv4 = core::resolve_ipv4(c.node.host).value_or(0);
  auto rejoiner = [&] {
    auto self =
        certified(group::with_identity(group::Member{c.node_id, c.node.host, request.port}));
    return std::make_unique<JoinPortRejoiner>(
        contacts, beacon, request, join_host, join_port, joining && c.contacts.empty(),
        c.engine.suspicion_timeout + std::chrono::milliseconds(500), layout, self, sec.credentials);
  };

  if (!joining) {
    // Our own entry carries our process; the others' are not known (the majority rule
    // decides their deaths).
    auto members = c.initial_members();
    for (auto& m : members) {
      if (m.id != c.node_id) {
        m.subject = security::canonical_subject(m.subject);
        continue;
      }
      if (sec.on() && security::canonical_subject(m.subject) != sec.credentials->subject()) {
        throw dds::core::Error(
            "domain " + std::to_string(c.domain_id) + " (config: " + found.source +
            "): members: node " + std::to_string(m.id) + "'s subject is '" + m.subject +
            "', but security.certificate is " + sec.credentials->subject() + "'s");
      }
      m = certified(group::with_identity(m));
    }
    auto first = group::first_view(members, layout);
    first.identity = listed_identity(members);
    auto engine = std::make_unique<group::Engine>(std::move(first), std::move(t), runtime(),
                                                  timeout, c.domain_id, layout);
    engine->watch_revocations(sec.credentials);
    if (c.join_port != 0) {
      engine->serve_joins(join_port_of(), must_agree(c, sec));
      engine->announce_on(beacon, join_ipv4);
      // Removed (a partition, a pause), it comes back through the others' join port.
      engine->rejoin_with(rejoiner());
    }
    return secured(std::make_shared<dcps::Participant>(c.domain_id, q, std::move(engine),
                                                       std::span<const std::byte>{}, c.storage));
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout;
  // Nobody answering is no reason to found the domain at once: a domain whose leader just
  // died has no listener until its next leader took the port over (one view change; up to
  // a suspicion timeout where members' shared-memory sockets show the domain lives on),
  // and founding a second domain then would split it for good.
  const auto found_after =
      start + (uses_shm(*t) && shm_peers_exist(c, sec)
                   ? c.engine.suspicion_timeout + std::chrono::milliseconds(500)
                   : std::chrono::milliseconds(300));
  // Without contacts named, the leaders multicast discovery hears are asked too; a second
  // query after a moment covers a datagram lost.
  bool queried_again = false;
  for (;;) {
    if (beacon && !queried_again && std::chrono::steady_clock::now() - start > 150ms) {
      beacon->query();
      queried_again = true;
    }
    const auto asked = c.contacts.empty() ? with_discovered(beacon.get(), contacts) : contacts;
    std::optional<group::Welcome> welcome;
    try {
      welcome = group::join(asked, request, deadline, sec.credentials, timeout);
    } catch (const dds::core::Error& e) {
      // A restarted participant may come back before its old incarnation is removed: its
      // id is still a member for a moment. A leader that is closing asks us to come back.
      // Anything else refused is final.
      const std::string_view what = e.what();
      const bool again = what.find("is already a member") != std::string_view::npos ||
                         what.find(group::kLeaderLeaving) != std::string_view::npos;
      if (!again || std::chrono::steady_clock::now() + std::chrono::milliseconds(300) >= deadline)
        throw;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    if (welcome) {
      std::unique_ptr<group::Engine> engine;
      try {
        engine = std::make_unique<group::Engine>(std::move(welcome->view), std::move(t), runtime(),
                                                 timeout, c.domain_id, layout);
      } catch (const dds::core::Error&) {
        // A member of the welcome view could not be reached: often the domain went on to a
        // later view before we connected (it removes us then). Ask again, on a new transport.
        if (std::chrono::steady_clock::now() + std::chrono::milliseconds(300) >= deadline) throw;
        t = make_transport(c, sec);
        request.port = dial_port(*t);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      engine->serve_joins(join_port_of(), must_agree(c, sec));
      engine->announce_on(beacon, join_ipv4);
      engine->rejoin_with(rejoiner());
      engine->watch_revocations(sec.credentials);
      return secured(std::make_shared<dcps::Participant>(c.domain_id, q, std::move(engine),
                                                         welcome->state, c.storage));
    }
    // A participant that names contacts joins a running domain and never founds one: two
    // hosts whose contacts did not answer would otherwise each lead a domain of their own,
    // the split the majority rule exists to prevent. It asks again until connect_timeout.
    if (!c.contacts.empty()) {
      if (std::chrono::steady_clock::now() + std::chrono::milliseconds(100) >= deadline) {
        std::string tried;
        for (const auto& a : contacts)
          tried += (tried.empty() ? "" : ", ") + transport::address_of(a);
        // A joiner asks from node.host: a loopback address reaches no other host (said where
        // a contact is on another host).
        auto is_loopback = [](const std::string& h) {
          return h.rfind("127.", 0) == 0 || h == "localhost";
        };
        const bool loopback =
            is_loopback(c.node.host) &&
            std::any_of(contacts.begin(), contacts.end(),
                        [&](const transport::NodeAddress& a) { return !is_loopback(a.host); });
        throw dds::core::Error("domain " + std::to_string(c.domain_id) +
                               " (config: " + found.source + "): none of the contacts (" + tried +
                               ") admitted this participant within engine.connect_timeout (" +
                               std::to_string(timeout.count()) +
                               " ms); a participant that names contacts joins a running domain "
                               "and never founds one" +
                               (loopback ? "; its node.host " + c.node.host +
                                               " is a loopback address, which other hosts "
                                               "cannot reach (set node.host, or leave it auto)"
                                         : std::string()));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    // Nobody leads here or on the network: after the grace above, found the domain if the
    // join port is ours. A leader heard but not answering yet (its port changing hands) is
    // asked again.
    if (asked.size() > contacts.size()) {
      if (std::chrono::steady_clock::now() + 100ms >= deadline) {
        std::string heard;
        for (std::size_t i = 0; i + contacts.size() < asked.size(); ++i)
          heard += (heard.empty() ? "" : ", ") + transport::address_of(asked[i]);
        throw dds::core::Error(
            "domain " + std::to_string(c.domain_id) + " (config: " + found.source +
            "): multicast discovery heard its leader at " + heard +
            ", but none of them admitted this participant within "
            "engine.connect_timeout (" +
            std::to_string(timeout.count()) + " ms): is the join port open between the hosts?");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (std::chrono::steady_clock::now() < found_after) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      continue;
    }
    if (const int fd = group::bind_join_port(join_host, join_port); fd >= 0) {
      auto self = c.initial_members();
      self.front() = certified(group::with_identity(self.front()));
      self.front().port = request.port;
      auto first = group::first_view(self, layout);
      first.identity = new_identity();
      auto engine = std::make_unique<group::Engine>(std::move(first), std::move(t), runtime(),
                                                    timeout, c.domain_id, layout);
      engine->serve_joins(join_port_of(fd), must_agree(c, sec));
      engine->announce_on(beacon, join_ipv4);
      engine->rejoin_with(rejoiner());
      return secured(std::make_shared<dcps::Participant>(c.domain_id, q, std::move(engine),
                                                         std::span<const std::byte>{}, c.storage));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      throw dds::core::Error(
          "domain " + std::to_string(c.domain_id) + " (config: " + found.source +
          "): no leader answered on the join port " + std::to_string(join_port) +
          " and it is held by another program; set join_port in the domain file");
    }
    // Someone else is founding the domain right now: ask again.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// An external client's participant (role: client): no transport and no view of its own, one
// connection to a member that relays for it (docs/membership.md, "External clients").
std::shared_ptr<dcps::Participant> join_as_client(const config::FoundDomainConfig& found,
                                                  const dds::domain::qos::DomainParticipantQos& q) {
  const auto& c = found.config;
  client::ClientSettings s;
  s.domain_id = c.domain_id;
  // Its entities' guids name it: a random id unless the file names one (0 is "unset").
  s.node = c.node_id != 0 ? c.node_id : random_node_id();
  for (const auto& a : c.relays)
    s.relays.push_back(transport::NodeAddress{0, a.host, a.port});
  // None listed: the domain's join port, where whoever leads relays (after a failover too),
  // on this host and at the leaders multicast discovery hears.
  if (s.relays.empty()) {
    const std::uint16_t join_port =
        c.join_port != 0 ? c.join_port : group::default_join_port(c.domain_id);
    s.relays.push_back(transport::NodeAddress{0, "127.0.0.1", join_port});
    if (auto beacon = make_beacon(c, join_port, found.source)) {
      s.discover = [beacon] { return with_discovered(beacon.get(), {}); };
    }
  }
  // What the client puts on the wire (samples, discovery records) is the members' format.
  s.must_agree = {must_agree(c).front()};
  s.connect_timeout = ms(c.engine.connect_timeout);
  std::unique_ptr<client::ClientBus> bus;
  try {
    bus = client::ClientBus::connect(s);
  } catch (const dds::core::Error& e) {
    throw dds::core::Error(std::string(e.what()) + " (config: " + found.source + ")");
  }
  const std::vector<std::byte> state = bus->joined_state();
  return std::make_shared<dcps::Participant>(c.domain_id, q, std::move(bus), state, c.storage);
}

// create_participant without the registration.
std::shared_ptr<ParticipantCore> join_domain(std::uint32_t domain_id,
                                             const dds::domain::qos::DomainParticipantQos& q) {
  qos::check_consistent(q);
  const std::optional<std::uint32_t> wanted =
      domain_id == kDefaultDomain ? std::nullopt : std::optional<std::uint32_t>(domain_id);
  auto found = config::find_domain_config(wanted);
  config::resolve_node_host(found.config, found.source);
  const auto& c = found.config;
  if (c.role == config::Role::client) return join_as_client(found, q);
  auto participant = join_as_member(found, q);
  client::RelaySettings r;
  r.host = c.listen_host();
  r.port = c.client_port;
  r.domain_id = c.domain_id;
  r.must_agree = {must_agree(c).front()};
  // Clients on its own port, and those that come to the join port while this member leads.
  if (c.client_port != 0) participant->serve_clients(r);
  participant->serve_join_port_clients(std::move(r));
  return participant;
}

}  // namespace

std::shared_ptr<ParticipantCore> create_participant(
    std::uint32_t domain_id, const dds::domain::qos::DomainParticipantQos& q) {
  auto participant = join_domain(domain_id, q);
  register_participant(domain_id, participant);
  return participant;
}

}  // namespace spindle::detail
