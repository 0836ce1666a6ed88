// The contact protocol (join.hpp): what a joiner sends reads back equal; a malformed
// request — it comes from any program that connects to the join port — is refused with
// the line and what is wrong, never trusted; and a joiner names what is wrong with
// whatever answers on the join port, or holds it without answering.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "avionics.hpp"
#include "group/beacon.hpp"
#include "group/join.hpp"
#include "join_client.hpp"
#include "scoped_config.hpp"

namespace g = spindle::group;
using FlightState = Avionics::FlightState;
using spindle::testing::RawJoin;

TEST_CASE("join: a request reads back as it was written", "[join]") {
  g::JoinRequest r;
  r.domain_id = 42;
  r.node = 0x7ffffffe;
  r.host = "127.0.0.1";
  r.port = 40000;
  r.pid = 4294967295u;
  r.host_id = 0x7fffffffffffffffull;
  r.settings = {{"protocol", "1"}, {"engine.slot_size", "1024"}};
  std::string error;
  const auto back = g::parse_join(g::encode(r), error);
  REQUIRE(back);
  CHECK(back->pid == r.pid);
  CHECK(back->host_id == r.host_id);
  CHECK(back->domain_id == 42);
  CHECK(back->node == 0x7ffffffe);
  CHECK(back->host == "127.0.0.1");
  CHECK(back->port == 40000);
  CHECK(back->settings == r.settings);
  CHECK(g::default_join_port(0) == 7410);
  CHECK(g::default_join_port(3) == 7413);
}

TEST_CASE("join: malformed requests are refused with the line and the reason", "[join]") {
  const std::string good = "SPINDLE-JOIN 2\ndomain 0\nnode 5\nhost 127.0.0.1\nport 9\n";
  const std::pair<std::string, std::string> cases[] = {
      {"GET / HTTP/1.1\n", "join request line 1: expected 'SPINDLE-JOIN 2'"},
      {"SPINDLE-JOIN 2\ndomain -1\nend\n", "join request line 2: bad or unknown field 'domain -1'"},
      {"SPINDLE-JOIN 2\nport 70000\nend\n",
       "join request line 2: bad or unknown field 'port 70000'"},
      {"SPINDLE-JOIN 2\nnode 99999999999\nend\n",
       "join request line 2: bad or unknown field 'node 99999999999'"},
      {"SPINDLE-JOIN 2\npid 4294967296\nend\n",
       "join request line 2: bad or unknown field 'pid 4294967296'"},
      {"SPINDLE-JOIN 2\nhost_id 9223372036854775808\nend\n",
       "join request line 2: bad or unknown field 'host_id 9223372036854775808'"},
      {"SPINDLE-JOIN 2\nrole admin\nend\n",
       "join request line 2: bad or unknown field 'role admin'"},
      {"SPINDLE-JOIN 2\nsetting lonely\nend\n",
       "join request line 2: bad or unknown field 'setting lonely'"},
      {good, "join request: incomplete (it needs the magic line, domain, node, port and end)"},
      {"SPINDLE-JOIN 2\ndomain 0\nport 9\nend\n",
       "join request: incomplete (it needs the magic line, domain, node, port and end)"},
      {"", "join request: incomplete (it needs the magic line, domain, node, port and end)"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    std::string error;
    CHECK_FALSE(g::parse_join(text, error));
    CHECK(error == message);
  }
  std::string error;
  CHECK(g::parse_join(good + "end\n", error));
}

TEST_CASE("join: with nobody at the contact, there is no domain to join", "[join]") {
  const std::vector<spindle::transport::NodeAddress> nobody{{0, "127.0.0.1", 1}};
  g::JoinRequest r;
  CHECK_FALSE(g::join(nobody, r, std::chrono::steady_clock::now() + std::chrono::seconds(2)));
}

namespace {

// A TCP socket bound to a free port on 127.0.0.1 (listening when `backlog` > 0); returns
// the descriptor and sets `port`.
int bound_loopback_socket(int backlog, std::uint16_t& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  if (backlog > 0) REQUIRE(::listen(fd, backlog) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  port = ntohs(a.sin_port);
  return fd;
}

// A leader on 127.0.0.1 that reads the request, then writes each line of `script` after its
// delay, then holds the connection for `linger` and closes.
class ScriptedLeader {
 public:
  using Step = std::pair<std::chrono::milliseconds, std::string>;
  ScriptedLeader(std::vector<Step> script, std::chrono::milliseconds linger) {
    fd_ = bound_loopback_socket(1, port_);
    thread_ = std::thread([this, script = std::move(script), linger] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buf[512];
      (void)::read(c, buf, sizeof buf);
      for (const auto& [delay, text] : script) {
        std::this_thread::sleep_for(delay);
        (void)::write(c, text.data(), text.size());
      }
      std::this_thread::sleep_for(linger);
      ::close(c);
    });
  }
  ~ScriptedLeader() {
    thread_.join();
    ::close(fd_);
  }
  ScriptedLeader(const ScriptedLeader&) = delete;
  ScriptedLeader& operator=(const ScriptedLeader&) = delete;
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

// A one-shot server on 127.0.0.1 that reads the request and answers `reply` (or nothing, and
// holds the connection a while), then closes: what a joiner meets when the join port holds
// something else.
class FakeLeader : public ScriptedLeader {
 public:
  explicit FakeLeader(std::string reply, bool answer = true)
      : ScriptedLeader(answer ? std::vector<Step>{{std::chrono::milliseconds(0), std::move(reply)}}
                              : std::vector<Step>{},
                       std::chrono::milliseconds(answer ? 0 : 1500)) {}
};

std::string join_error(const FakeLeader& leader, std::chrono::milliseconds wait) {
  g::JoinRequest r;
  r.domain_id = 4;
  r.node = 9;
  try {
    (void)g::join({{0, "127.0.0.1", leader.port()}}, r, std::chrono::steady_clock::now() + wait);
  } catch (const dds::core::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("join: a joiner says what is wrong with what answers on the join port", "[join]") {
  {
    FakeLeader http("HTTP/1.1 400 Bad Request\r\n\r\n");
    CHECK(
        join_error(http, std::chrono::seconds(2))
            .ends_with("answered what is not a Spindle DDS leader: 'HTTP/1.1 400 Bad Request\r'"));
  }
  {
    FakeLeader cut("WELCOME 100 0\nversion: 1\n");
    CHECK(join_error(cut, std::chrono::seconds(2)) ==
          "joining domain 4: the leader's welcome was cut short");
  }
  {
    const std::string yaml = "version: 1\nmembers: []\n";
    FakeLeader bad("WELCOME " + std::to_string(yaml.size()) + " 0\n" + yaml);
    CHECK_THAT(
        join_error(bad, std::chrono::seconds(2)),
        Catch::StartsWith("joining domain 4: the leader's welcome") && Catch::Contains("members"));
  }
  {
    // Closed without a word (a leader that went away while we asked): nobody is there, so
    // the caller asks again or founds the domain.
    FakeLeader gone("");
    CHECK(join_error(gone, std::chrono::seconds(2)) == "(no error)");
  }
  {
    // A listener closed with our connection still in its accept queue resets it: that
    // leader went away too.
    std::uint16_t port = 0;
    const int fd = bound_loopback_socket(4, port);
    std::jthread closer([fd] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      ::close(fd);
    });
    g::JoinRequest r;
    r.domain_id = 4;
    r.node = 9;
    CHECK_FALSE(g::join({{0, "127.0.0.1", port}}, r,
                        std::chrono::steady_clock::now() + std::chrono::seconds(3)));
  }
  {
    FakeLeader silent("", false);
    CHECK_THAT(join_error(silent, std::chrono::milliseconds(300)),
               Catch::EndsWith("the leader did not answer in time"));
  }
}

// docs/membership.md, "The contact protocol": a joiner queued behind others hears WAIT at each
// view the leader installs, and each gives it its whole patience again; after the last WAIT it
// waits its patience and no more.
TEST_CASE("join: each WAIT from the leader gives a queued joiner its patience again", "[join]") {
  using std::chrono::milliseconds;
  using Clock = std::chrono::steady_clock;
  g::JoinRequest r;
  r.domain_id = 4;
  r.node = 9;
  {
    // WAIT every 300 ms for 1.2 s, then the welcome: well past a patience of 500 ms.
    g::View v;
    v.members.push_back(g::Member{9, "127.0.0.1", 7000});
    const std::string yaml = g::to_yaml(v);
    std::vector<ScriptedLeader::Step> script;
    for (int i = 0; i < 4; ++i)
      script.emplace_back(milliseconds(300), "WAIT\n");
    script.emplace_back(milliseconds(300),
                        "WELCOME " + std::to_string(yaml.size()) + " 0\n" + yaml);
    ScriptedLeader leader(std::move(script), milliseconds(0));
    const auto start = Clock::now();
    const auto w = g::join({{0, "127.0.0.1", leader.port()}}, r, start + milliseconds(500));
    REQUIRE(w);
    CHECK(w->view.members == v.members);
    CHECK(Clock::now() - start >= milliseconds(1400));
  }
  {
    // One WAIT, then silence: the joiner gives up its patience after it.
    ScriptedLeader leader({{milliseconds(300), "WAIT\n"}}, milliseconds(2500));
    const auto start = Clock::now();
    std::string error;
    try {
      (void)g::join({{0, "127.0.0.1", leader.port()}}, r, start + milliseconds(500));
    } catch (const dds::core::Error& e) {
      error = e.what();
    }
    const auto waited = Clock::now() - start;
    CHECK_THAT(error, Catch::EndsWith("the leader did not answer in time"));
    CHECK(waited >= milliseconds(750));
    CHECK(waited < milliseconds(2000));
  }
}

TEST_CASE("join: a join port held by another program is named", "[join]") {
  // Bound but not listening: connecting is refused, and the port cannot be taken either.
  std::uint16_t bound = 0;
  const int fd = bound_loopback_socket(0, bound);
  const auto port = std::to_string(bound);
  // On loopback, where the other program holds it.
  const spindle::testing::ScopedDomainConfig config(
      "domain_id: 6, node: {host: 127.0.0.1}, join_port: " + port +
      ", engine: {connect_timeout: 500ms}");
  CHECK_THROWS_WITH(dds::domain::DomainParticipant(6),
                    "domain 6 (config: SPINDLE_CONFIG): no leader answered on the join port " +
                        port +
                        " and it is held by another program; set join_port in the domain file");
  ::close(fd);
}

TEST_CASE("join: a participant that names contacts never founds a domain of its own", "[join]") {
  // Nobody listens on the contact's port (nor on the domain's join port): a participant with
  // no contacts would found the domain there; one that names contacts waits for them until
  // connect_timeout and fails, naming them.
  std::uint16_t free_port = 0;
  ::close(bound_loopback_socket(0, free_port));
  const auto contact = std::to_string(free_port);
  const spindle::testing::ScopedDomainConfig config(
      "domain_id: 5, contacts: [{host: 127.0.0.1, port: " + contact +
      "}], engine: {connect_timeout: 800ms}");
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(
      dds::domain::DomainParticipant(5),
      "domain 5 (config: SPINDLE_CONFIG): none of the contacts (127.0.0.1:" + contact +
          ") admitted this participant within engine.connect_timeout (800 ms); a "
          "participant that names contacts joins a running domain and never "
          "founds one");
  // It waited for them (not one refused connection and out).
  CHECK(std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(600));
}

TEST_CASE("join: a participant that joins while the leader closes goes on all the same", "[join]") {
  // The leader closes before, while or after it admits the joiner: the joiner either joins
  // its view and sees it leave, or is asked to come back and founds the domain itself. It
  // never ends alone in a view that still names the leader (which would halt it).
  for (int i = 0; i < 8; ++i) {
    INFO("round " << i);
    auto leader = std::make_unique<dds::domain::DomainParticipant>(dds::domain::default_id());
    std::jthread closer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(3 * i));
      leader->close();
    });
    dds::domain::DomainParticipant joiner(dds::domain::default_id());
    closer.join();
    dds::topic::Topic<FlightState> topic(joiner, "FlightState");
    dds::pub::DataWriter<FlightState> writer(dds::pub::Publisher(joiner), topic);
    dds::sub::DataReader<FlightState> reader(dds::sub::Subscriber(joiner), topic,
                                             dds::sub::qos::DataReaderQos()
                                                 << dds::core::policy::Reliability::Reliable()
                                                 << dds::core::policy::History::KeepAll());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (writer.publication_matched_status().current_count() == 0 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    FlightState s;
    s.aircraft_id(7);
    writer.write(s);
    std::size_t got = 0;
    while (got == 0 && std::chrono::steady_clock::now() < deadline) {
      got += reader.take().length();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(got == 1);
  }
}

namespace {

std::uint16_t free_port() {
  std::uint16_t port = 0;
  ::close(bound_loopback_socket(0, port));
  return port;
}

}  // namespace

TEST_CASE("join: a joiner must be where it asks from, and answer the port's check", "[join]") {
  const auto port = free_port();
  // The leader on loopback, where the raw joins below connect.
  const spindle::testing::ScopedDomainConfig config(
      "domain_id: 8, transport: tcp, node: {host: 127.0.0.1}, join_port: " + std::to_string(port));
  dds::domain::DomainParticipant leader(8);
  {
    // Members would dial 10.9.9.9 for it: refused, after the check.
    RawJoin j(port);
    REQUIRE(j.connected());
    j.send("SPINDLE-JOIN 2\ndomain 8\nnode 77\nhost 10.9.9.9\nport 5000\nend\n");
    const auto check = j.line();
    REQUIRE(check.starts_with("CHECK "));
    j.ready(check);
    CHECK(j.line() ==
          "REFUSED node 77 gives its address as 10.9.9.9, but asks from 127.0.0.1; members "
          "connect only to the address a joiner asks from (set node.host)");
  }
  {
    // A name is not looked up: members would dial the address it asked from, but port 0 is
    // no transport address.
    RawJoin j(port);
    j.send("SPINDLE-JOIN 2\ndomain 8\nnode 77\nhost evil.example\nport 0\nend\n");
    const auto check = j.line();
    REQUIRE(check.starts_with("CHECK "));
    j.ready(check);
    CHECK(j.line() == "REFUSED node 77 gives no port for its tcp transport");
  }
  {
    // A wrong answer to the check is refused; no answer is dropped without a word.
    RawJoin j(port);
    j.send("SPINDLE-JOIN 2\ndomain 8\nnode 77\nhost 127.0.0.1\nport 5000\nend\n");
    REQUIRE(j.line().starts_with("CHECK "));
    j.send("READY 0\n");
    CHECK_THAT(j.line(), Catch::StartsWith("REFUSED expected READY "));
  }
  {
    // A value that ends in "end" is not the request's end line.
    RawJoin j(port);
    j.send(
        "SPINDLE-JOIN 2\ndomain 8\nnode 77\nhost 127.0.0.1\nport 5000\nsetting x backend\nend\n");
    CHECK_THAT(j.line(), Catch::StartsWith("CHECK "));
  }
  {
    RawJoin j(port);
    j.send("SPINDLE-JOIN 1\ndomain 8\nend\n");
    CHECK(j.line() == "REFUSED join request line 1: expected 'SPINDLE-JOIN 2'");
  }
}

TEST_CASE("join: silent and garbage connections do not keep a joiner out", "[join]") {
  // Each silent connection once held the single-threaded port for 3 s: 65 of them made a
  // joiner wait minutes, or fail.
  const auto port = free_port();
  const spindle::testing::ScopedDomainConfig config(
      "domain_id: 9, transport: tcp, node: {host: 127.0.0.1}, join_port: " + std::to_string(port));
  dds::domain::DomainParticipant leader(9);
  std::vector<std::unique_ptr<RawJoin>> strangers;
  for (int i = 0; i < 65; ++i) {
    strangers.push_back(std::make_unique<RawJoin>(port));
    if (i % 5 == 0) strangers.back()->send("GET / HTTP/1.1\r\nHost: x\r\n");  // never ends
    if (i % 7 == 0) strangers.back()->send("SPINDLE-JOIN 2\ndomain 9\n");     // half a request
  }
  const auto start = std::chrono::steady_clock::now();
  dds::domain::DomainParticipant joiner(9);
  const auto took = std::chrono::steady_clock::now() - start;
  // Well under one silent connection's 3 s (the join itself takes milliseconds).
  CHECK(took < std::chrono::milliseconds(2500));
  dds::topic::Topic<FlightState> topic(joiner, "FlightState");
  dds::topic::Topic<FlightState> topic0(leader, "FlightState");
  dds::pub::DataWriter<FlightState> writer(dds::pub::Publisher(leader), topic0);
  dds::sub::DataReader<FlightState> reader(dds::sub::Subscriber(joiner), topic,
                                           dds::sub::qos::DataReaderQos()
                                               << dds::core::policy::Reliability::Reliable());
  FlightState s;
  s.aircraft_id(9);
  writer.write(s);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  std::size_t got = 0;
  while (got == 0 && std::chrono::steady_clock::now() < deadline) {
    got += reader.take().length();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(got == 1);
}

// The multicast beacon's datagram (group/beacon.hpp; docs/membership.md, "Discovery across
// hosts"): what a leader announces reads back the same, and every malformed datagram is
// named, never taken.
TEST_CASE("join: a beacon's datagram reads back, and a malformed one is named", "[join]") {
  g::Announcement a{3, 7413, 0x1234567890abcdefull, 7, 4, 12, 0};
  a.ipv4 = ::inet_addr("10.253.0.1");
  const auto bytes = g::encode(g::BeaconMessage{g::BeaconKind::announce, a});
  CHECK(bytes.size() == g::kAnnouncementBytes);
  std::string error;
  const auto back = g::parse_beacon(bytes, error);
  REQUIRE(back);
  CHECK(back->kind == g::BeaconKind::announce);
  CHECK(back->announcement == a);
  const auto query = g::encode(g::BeaconMessage{g::BeaconKind::query, {3, 7413}});
  CHECK(query.size() == g::kQueryBytes);
  const auto q = g::parse_beacon(query, error);
  REQUIRE(q);
  CHECK(q->kind == g::BeaconKind::query);
  CHECK(q->announcement.domain_id == 3);
  CHECK(q->announcement.join_port == 7413);

  auto error_of = [](std::vector<std::byte> d) {
    std::string e;
    return g::parse_beacon(d, e) ? std::string("(taken)") : e;
  };
  CHECK(error_of({}) == "a datagram of 0 bytes, under the 12 of a query");
  auto other = bytes;
  other[0] = std::byte{'R'};  // an RTPS participant's datagram starts "RTPS"
  CHECK(error_of(other) == "not a Spindle DDS beacon (no SPDB magic)");
  auto version = bytes;
  version[4] = std::byte{9};
  CHECK(error_of(version) == "beacon version 9, this participant reads 1");
  auto kind = bytes;
  kind[5] = std::byte{7};
  CHECK(error_of(kind) == "unknown beacon kind 7");
  auto cut = bytes;
  cut.resize(30);
  CHECK(error_of(cut) == "an announcement of 30 bytes, not 40");
  auto long_query = query;
  long_query.push_back(std::byte{0});
  CHECK(error_of(long_query) == "a query of 13 bytes, not 12");
  auto no_port = bytes;
  no_port[6] = no_port[7] = std::byte{0};
  CHECK(error_of(no_port) == "join port 0");
  auto no_host = bytes;
  for (std::size_t i = 36; i < 40; ++i)
    no_host[i] = std::byte{0};
  CHECK(error_of(no_host) == "an announcement with a zero identity, member count, view or host");
}

TEST_CASE("join: of two domains that meet, the larger wins, then the smaller identity", "[join]") {
  const g::Announcement three{0, 7410, 900, 1, 3, 5, 1};
  const g::Announcement two{0, 7410, 100, 2, 2, 9, 2};
  CHECK(g::wins_over(three, two));
  CHECK_FALSE(g::wins_over(two, three));
  const g::Announcement also_three{0, 7410, 500, 3, 3, 2, 3};
  CHECK(g::wins_over(also_three, three));
  CHECK_FALSE(g::wins_over(three, also_three));
  CHECK_FALSE(g::wins_over(three, three));  // its own domain never wins over itself
}

TEST_CASE("join: a view's identity travels in its YAML", "[join]") {
  g::View v;
  v.members = {g::Member{1, "10.0.0.1", 7400}};
  v.identity = 0xfedcba9876543210ull;
  CHECK(g::parse_group(g::to_yaml(v), "v").identity == v.identity);
  v.identity = 0;  // none: nothing written
  CHECK(g::to_yaml(v).find("identity") == std::string::npos);
}
