// Joining a secured domain (docs/security.md) as applications do, through the standard API:
// participants of this process, each with its own domain file and certificate. The writer
// founds the domain; a reader of the CA joins and takes the stream; a certificate of another
// CA, a participant with no security section, one with other permissions, one the CA revoked
// and a secured participant facing an unsecured domain are each refused with their reason,
// and the stream goes on.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include <dds/dds.hpp>
#include <spindle/domain_status.hpp>

#include "ShapeType.hpp"
#include "pki.hpp"
#include "psm_test_support.hpp"
#include "security/permissions.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using spindle::test::Pki;
using namespace std::chrono_literals;

namespace {

struct Setup {
  fs::path dir = fs::temp_directory_path() /
                 ("spindle-secure-join-" + std::to_string(::getpid()) + "-" +
                  std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  Pki pki{dir};
  std::uint16_t port = 0;
  Setup() {
    const char* p = std::getenv("SPINDLE_TEST_JOIN_PORT");
    port = static_cast<std::uint16_t>(p != nullptr ? std::atoi(p) : 27410);
    pki.make_ca("ca");
    pki.make_ca("rogue");
    pki.issue("ca", "CN=writer", "writer");
    pki.issue("ca", "CN=reader", "reader");
    pki.issue("ca", "CN=outsider", "outsider");
    // A subject longer than the view's 207 bytes for it (four RDNs of 60 characters).
    pki.issue("ca",
              "CN=" + std::string(60, 'a') + ",OU=" + std::string(60, 'b') +
                  ",OU=" + std::string(60, 'c') + ",O=" + std::string(60, 'd'),
              "verbose");
    revoked_serial = pki.issue("ca", "CN=revoked", "revoked");
    pki.issue("rogue", "CN=reader", "impostor");
    pki.revoke("ca", {revoked_serial});
    std::ofstream(dir / "perms.yaml") << spindle::test::kIssuePermissions;
    std::ofstream(dir / "other-perms.yaml")
        << spindle::test::kIssuePermissions << "  - {subject: \"*\", subscribe: [Weather]}\n";
  }
  ~Setup() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string revoked_serial;

  // A domain file for `who`; with `ca` empty, no security section.
  std::string file(const std::string& who, const std::string& ca, const std::string& perms,
                   std::uint16_t join_port, bool crl = false) const {
    std::string y = "version: 1\ntransport: tcp\njoin_port: " + std::to_string(join_port) +
                    "\nnode: {host: 127.0.0.1}\ndiscovery: {multicast: {mode: off}}\n"
                    "engine: {connect_timeout: 3s}\n";
    if (!ca.empty()) y += spindle::test::security_yaml(pki, ca, who, dir / perms, crl);
    const auto path = dir / (who + "-" + std::to_string(join_port) + ".yaml");
    std::ofstream(path) << y;
    return path.string();
  }
};

// A participant made under domain file `path`.
dds::domain::DomainParticipant participant(const std::string& path) {
  ::setenv("SPINDLE_CONFIG", path.c_str(), 1);
  dds::domain::DomainParticipant p(dds::domain::default_id());
  ::unsetenv("SPINDLE_CONFIG");
  return p;
}

std::string refusal(const std::string& path) {
  try {
    auto p = participant(path);
    p.close();
  } catch (const dds::core::Exception& e) {
    ::unsetenv("SPINDLE_CONFIG");
    return e.what();
  }
  return "(admitted)";
}

// Sends `first` to the join port on 127.0.0.1, then (after its answer) `then`; returns all
// the port said before it closed (bounded by 3 s).
std::string ask(std::uint16_t port, const std::string& first, const std::string& then = {}) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  const timeval tv{3, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  REQUIRE(::send(fd, first.data(), first.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(first.size()));
  std::string said;
  char buf[512];
  if (!then.empty()) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) said.append(buf, static_cast<std::size_t>(n));
    (void)::send(fd, then.data(), then.size(), MSG_NOSIGNAL);
  }
  for (;;) {
    const auto n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    said.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return said;
}

}  // namespace

TEST_CASE("a secured domain admits its CA's participants and refuses the rest", "[join]") {
  Setup s;
  auto writer = participant(s.file("writer", "ca", "perms.yaml", s.port, true));
  auto reader = participant(s.file("reader", "ca", "perms.yaml", s.port));
  dds::topic::Topic<ShapeType> wt(writer, "Secret");
  dds::topic::Topic<ShapeType> rt(reader, "Secret");
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<ShapeType> w(dds::pub::Publisher(writer), wt, wq);
  dds::sub::DataReader<ShapeType> r(dds::sub::Subscriber(reader), rt, rq);
  REQUIRE(
      psm_test::eventually([&] { return w.publication_matched_status().current_count() == 1; }));

  int taken = 0;
  int written = 0;
  auto stream = [&](int n) {
    for (int i = 0; i < n; ++i)
      w.write(ShapeType("RED", written++, 0, 5));
    REQUIRE(psm_test::eventually([&] {
      taken += static_cast<int>(r.take().length());
      return taken == written;
    }));
  };
  stream(20);

  // Endpoints without a grant: NotAllowedBySecurityError, naming the topic and the rule.
  try {
    dds::pub::DataWriter<ShapeType> no(dds::pub::Publisher(reader), rt, wq);
    FAIL("the reader wrote Secret");
  } catch (const dds::core::NotAllowedBySecurityError& e) {
    CHECK_THAT(e.what(), Contains("DataWriter: topic 'Secret': CN=reader may not publish it") &&
                             Contains("default: deny"));
  }
  try {
    dds::sub::DataReader<ShapeType> no(dds::sub::Subscriber(writer), wt, rq);
    FAIL("the writer read Secret");
  } catch (const dds::core::NotAllowedBySecurityError& e) {
    CHECK_THAT(e.what(), Contains("DataReader: topic 'Secret': CN=writer may not subscribe"));
  }
  stream(5);

  // Another CA's certificate with a granted subject: the leader is no member of its domain.
  CHECK_THAT(refusal(s.file("impostor", "rogue", "perms.yaml", s.port)),
             Contains("the leader's certificate CN=writer (issuer CN=ca) does not check "
                      "out") &&
                 Contains("not issued by this domain's CA"));
  stream(5);
  // No security section.
  CHECK_THAT(refusal(s.file("plain", "", "", s.port)),
             Contains("this domain is secured: a participant needs a security section"));
  stream(5);
  // Another permissions document: both digests named.
  const std::string mine = spindle::security::sha256_hex(spindle::test::kIssuePermissions);
  CHECK_THAT(refusal(s.file("outsider", "ca", "other-perms.yaml", s.port)),
             Contains("security.permissions: node") && Contains(", this domain " + mine));
  stream(5);
  // Revoked by the CA: the leader's list names it (the joiner's own file has no list).
  CHECK_THAT(refusal(s.file("revoked", "ca", "perms.yaml", s.port)),
             Contains("certificate CN=revoked (issuer CN=ca): certificate revoked"));
  stream(5);

  // Strangers at the secured port: bytes after the secure line, and a TLS handshake of
  // garbage. Each is turned away; the stream goes on.
  {
    const std::string line = "SPINDLE-SECURE 1\nSPINDLE-JOIN 2\n";
    CHECK_THAT(ask(s.port, line),
               Contains("REFUSED nothing may follow 'SPINDLE-SECURE 1' before the port answers"));
    CHECK(ask(s.port, "SPINDLE-SECURE 1\n", "\x16\x03\x01\x00\x05hello garbage") == "SECURE 1\n");
  }
  stream(5);

  // A subject the view cannot hold.
  CHECK_THAT(refusal(s.file("verbose", "ca", "perms.yaml", s.port)),
             Contains("certificate subject 'CN=" + std::string(60, 'a')) &&
                 Contains("is longer than 207 bytes"));
  stream(5);

  // A secured participant facing an unsecured domain refuses it.
  const auto other = static_cast<std::uint16_t>(s.port + 1000);
  auto plain = participant(s.file("plain", "", "", other));
  CHECK_THAT(refusal(s.file("reader", "ca", "perms.yaml", other)),
             Contains("is not secured") && Contains("does not join an unsecured domain"));
  plain.close();
  stream(5);
  CHECK(taken == 60);

  // A listed member whose entry names another subject than its certificate's.
  const auto listed = s.dir / "listed.yaml";
  std::ofstream(listed)
      << "version: 1\ntransport: tcp\nnode: {id: 1}\n"
      << "members:\n  - {id: 1, host: 127.0.0.1, port: 0, subject: \"CN=someone\"}\n"
      << spindle::test::security_yaml(s.pki, "ca", "writer", s.dir / "perms.yaml");
  CHECK_THAT(refusal(listed.string()),
             Contains("members: node 1's subject is 'CN=someone', but security.certificate is "
                      "CN=writer's"));
  r.close();
  w.close();
  reader.close();
  writer.close();
}

namespace {

// Three members on topic Secret, each with its own domain file under `perms` (and the CA's
// list with `crl`): a writer streaming a sample every 2 ms (x counting from 0) to a reader,
// which must take every one in order, and to a victim, whose last x is noted.
struct Stream {
  Stream(const Setup& s, const std::string& perms, bool crl)
      : writer(participant(s.file("writer", "ca", perms, s.port, crl))),
        reader(participant(s.file("reader", "ca", perms, s.port, crl))),
        victim(participant(s.file("victim", "ca", perms, s.port, crl))),
        wt(writer, "Secret"),
        rt(reader, "Secret"),
        vt(victim, "Secret"),
        w(dds::pub::Publisher(writer), wt, writer_qos()),
        r(dds::sub::Subscriber(reader), rt, reader_qos()),
        v(dds::sub::Subscriber(victim), vt, reader_qos()) {
    REQUIRE(
        psm_test::eventually([&] { return w.publication_matched_status().current_count() == 2; }));
    thread = std::thread([this] {
      try {
        while (!stop.load()) {
          const int x = written.load();
          started.store(x + 1);
          w.write(ShapeType("RED", x, 0, 5));
          written.fetch_add(1);
          std::this_thread::sleep_for(2ms);
        }
      } catch (const dds::core::Exception& e) {
        write_error = e.what();
      }
    });
  }
  ~Stream() { end(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  static dds::pub::qos::DataWriterQos writer_qos() {
    dds::pub::qos::DataWriterQos q;
    q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    return q;
  }
  static dds::sub::qos::DataReaderQos reader_qos() {
    dds::sub::qos::DataReaderQos q;
    q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    return q;
  }
  void take() {
    for (const auto& smp : r.take()) {
      if (!smp.info().valid()) continue;
      in_order = in_order && smp.data().x() == next;
      ++next;
    }
    for (const auto& smp : v.take())
      if (smp.info().valid()) victim_last = std::max(victim_last, smp.data().x());
  }
  void end() {
    stop.store(true);
    if (thread.joinable()) thread.join();
  }
  // After a change that cuts the victim off, until `done` (the writer's side sees it): how
  // long that took; then the stream goes on for 50 samples more and ends with no write
  // failed, the reader took every sample in order, and the victim nothing whose write
  // started after.
  std::chrono::milliseconds cut_off(const std::function<bool()>& done) {
    const auto at = std::chrono::steady_clock::now();
    const bool cut = psm_test::eventually([&] {
      take();
      return done();
    });
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - at);
    const int then = written.load();
    const int begun = started.load();  // every write from here on starts after the cut
    CHECK(cut);
    CHECK(psm_test::eventually([&] {
      take();
      return written.load() > then + 50;
    }));
    end();
    CHECK(write_error.empty());
    CHECK(psm_test::eventually([&] {
      take();
      return next == written.load();
    }));
    CHECK(in_order);
    // A write in progress as the cut is seen started before it, and may reach the victim.
    CHECK(victim_last < begun);
    return took;
  }

  dds::domain::DomainParticipant writer, reader, victim;
  dds::topic::Topic<ShapeType> wt, rt, vt;
  dds::pub::DataWriter<ShapeType> w;
  dds::sub::DataReader<ShapeType> r, v;
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::atomic<int> started{0};  // writes begun: x of the last one + 1
  std::string write_error;      // set by the stream's thread before it ends
  int next = 0;                 // the reader's next x
  bool in_order = true;
  int victim_last = -1;
  std::thread thread;
};

}  // namespace

// Revocation at run time (docs/security.md, "Revocation"): three members of the CA, the
// writer streaming to two readers; the CA's list, read again while the domain runs, revokes
// one reader's certificate. The members evict it within one view change: the writer's
// match count drops to one, the evicted reader takes nothing written after that, and the
// other reader takes the whole stream, in order, with no write failing.
TEST_CASE("revocation: a member revoked under a running stream is removed; the stream goes on",
          "[revocation]") {
  Setup s;
  const std::string victim_serial = s.pki.issue("ca", "CN=victim", "victim");
  std::ofstream(s.dir / "rev-perms.yaml") << "version: 1\ndefault: deny\ngrants:\n"
                                          << "  - {subject: \"CN=writer\", publish: [Secret]}\n"
                                          << "  - {subject: \"CN=reader\", subscribe: [Secret]}\n"
                                          << "  - {subject: \"CN=victim\", subscribe: [Secret]}\n";
  Stream st(s, "rev-perms.yaml", true);
  CHECK(psm_test::eventually([&] {
    st.take();
    return st.next >= 50 && st.victim_last >= 50;
  }));

  s.pki.revoke("ca", {s.revoked_serial, victim_serial});
  const auto took =
      st.cut_off([&] { return st.w.publication_matched_status().current_count() == 1; });
  WARN("revoked to unmatched: " << took.count() << " ms");
  CHECK(took < 3s);  // within the list's poll (kRevocationPoll, 500 ms) and one view change
  // The evicted member read the list too: it stopped, saying why, and stays out.
  CHECK(psm_test::eventually([&] { return !spindle::domain_status(st.victim).halted.empty(); }));
  CHECK_THAT(spindle::domain_status(st.victim).halted,
             Contains("was evicted: its certificate (CN=victim, serial " + victim_serial +
                      ") is revoked by security.crl; it does not rejoin"));
}

// Changing the permissions at run time (docs/security.md, "Changing the permissions"): three
// members share one permissions file; while the writer streams to two readers, the file is
// rewritten without one reader's grant. Every member reads it again, announces it, and once all
// hold it, it is in force at the same point of the order everywhere: the next layout leaves
// the reader out, the writer and the reader unmatch, and the reader takes nothing written
// after; the other reader takes the whole stream in order, no write fails; a new reader of
// the topic at that member is refused, and a joiner with the old document is refused naming
// both digests.
TEST_CASE("permissions: a grant removed under a running stream unmatches the reader",
          "[permissions_reload]") {
  Setup s;
  s.pki.issue("ca", "CN=victim", "victim");
  const std::string before =
      "version: 1\ndefault: deny\ngrants:\n"
      "  - {subject: \"CN=writer\", publish: [Secret]}\n"
      "  - {subject: \"CN=reader\", subscribe: [Secret]}\n";
  const std::string with_victim = before + "  - {subject: \"CN=victim\", subscribe: [Secret]}\n";
  std::ofstream(s.dir / "live-perms.yaml") << with_victim;
  std::ofstream(s.dir / "old-perms.yaml") << with_victim;
  Stream st(s, "live-perms.yaml", false);
  CHECK(psm_test::eventually([&] {
    st.take();
    return st.next >= 50 && st.victim_last >= 50;
  }));

  // The new document, written beside the old and renamed into place.
  std::ofstream(s.dir / "live-perms.yaml.new") << before;
  fs::rename(s.dir / "live-perms.yaml.new", s.dir / "live-perms.yaml");
  const auto took = st.cut_off([&] {
    return st.w.publication_matched_status().current_count() == 1 &&
           st.v.subscription_matched_status().current_count() == 0;
  });
  WARN("permissions file to unmatch: " << took.count() << " ms");
  CHECK(took < 3s);
  // At that member a new reader of the topic is refused by the document in force.
  try {
    dds::sub::DataReader<ShapeType> again(dds::sub::Subscriber(st.victim), st.vt,
                                          Stream::reader_qos());
    FAIL("the victim read Secret again");
  } catch (const dds::core::NotAllowedBySecurityError& e) {
    CHECK_THAT(e.what(), Contains("DataReader: topic 'Secret': CN=victim may not subscribe it"));
  }
  // A joiner with the old document is refused, naming both digests.
  const std::string now = spindle::security::sha256_hex(before);
  const std::string old = spindle::security::sha256_hex(with_victim);
  CHECK_THAT(refusal(s.file("outsider", "ca", "old-perms.yaml", s.port)),
             Contains("security.permissions: node") && Contains(" has " + old) &&
                 Contains(", this domain " + now));
}
