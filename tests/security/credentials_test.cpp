// Credentials and the permissions document (runtime/src/security): every file that does not
// load or check out gets its message, a TLS handshake between two certificates of the CA
// names each side, and the permissions decide as docs/security.md says.
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include "pki.hpp"
#include "security/credentials.hpp"
#include "security/permissions.hpp"
#include "security/tls_socket.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;
using spindle::security::Action;
using spindle::security::Credentials;
using spindle::security::Permissions;
using spindle::security::SecurityError;
using spindle::security::Settings;
using spindle::security::TlsSocket;
using spindle::test::Pki;

namespace {

struct World {
  fs::path dir;
  Pki pki;
  std::string writer_serial, reader_serial;
  World()
      : dir(fs::temp_directory_path() /
            ("spindle-pki-" + std::to_string(::getpid()) + "-" +
             std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))),
        pki(dir) {
    pki.make_ca("ca");
    pki.make_ca("rogue");
    writer_serial = pki.issue("ca", "CN=writer", "writer");
    reader_serial = pki.issue("ca", "CN=reader,O=Avionics", "reader");
    pki.issue("ca", "CN=old", "expired", -30, -1);
    pki.issue("ca", "CN=later", "future", 10, 20);
    pki.issue("rogue", "CN=reader", "impostor");
    std::ofstream(dir / "perms.yaml") << spindle::test::kIssuePermissions;
  }
  ~World() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  Settings settings(const std::string& who, const std::string& ca = "ca") const {
    return Settings{pki.pem(ca).string(), pki.pem(who).string(), pki.key(who).string(),
                    (dir / "perms.yaml").string(), ""};
  }
};

std::string load_error(const Settings& s) {
  try {
    (void)Credentials::load(s);
  } catch (const SecurityError& e) {
    return e.what();
  }
  return "(loaded)";
}

}  // namespace

TEST_CASE("credentials load, and each bad file says why", "[credentials]") {
  World w;
  const auto writer = Credentials::load(w.settings("writer"));
  CHECK(writer->subject() == "CN=writer");
  CHECK(writer->serial() == w.writer_serial);
  CHECK(writer->ca_fingerprint().size() == 64);
  CHECK(Credentials::load(w.settings("reader"))->subject() == "CN=reader,O=Avionics");

  auto s = w.settings("writer");
  s.certificate = (w.dir / "missing.pem").string();
  CHECK_THAT(load_error(s), Contains("security.certificate: ") &&
                                Contains("missing.pem: cannot read it (No such file"));
  s = w.settings("writer");
  s.ca = (w.dir / "perms.yaml").string();
  CHECK_THAT(load_error(s), Contains("security.ca: ") && Contains("no PEM certificate in it"));
  s = w.settings("writer");
  s.private_key = w.pki.key("reader").string();
  CHECK_THAT(load_error(s), Contains("security.private_key: ") &&
                                Contains("is not the key of security.certificate"));
  s = w.settings("writer");
  s.private_key = w.pki.pem("writer").string();
  CHECK_THAT(load_error(s),
             Contains("security.private_key: ") && Contains("not a PEM private key"));
  w.pki.encrypt_key("writer");
  s = w.settings("writer");
  s.private_key = (w.dir / "writer-encrypted.key").string();
  CHECK_THAT(load_error(s), Contains("security.private_key: ") &&
                                Contains("the key is encrypted; give it unencrypted"));
  s = w.settings("writer");
  s.private_key.clear();
  CHECK_THAT(load_error(s), Contains("security.private_key: missing"));
  CHECK_THAT(load_error(w.settings("expired")),
             Contains("CN=old") && Contains("certificate has expired") && Contains("not after"));
  CHECK_THAT(load_error(w.settings("future")), Contains("certificate is not yet valid"));
  CHECK_THAT(
      load_error(w.settings("impostor")),
      Contains("CN=reader, issuer CN=rogue") && Contains("does not check out against security.ca"));
  // Revoked by the CA's list.
  w.pki.revoke("ca", {w.reader_serial});
  s = w.settings("reader");
  s.crl = w.pki.crl("ca").string();
  CHECK_THAT(load_error(s), Contains("certificate revoked"));
  s.crl = w.pki.pem("ca").string();
  CHECK_THAT(load_error(s), Contains("security.crl: ") && Contains("not a PEM revocation list"));
}

TEST_CASE("a revocation list read again takes effect", "[credentials]") {
  World w;
  w.pki.revoke("ca", {});
  auto s = w.settings("writer");
  s.crl = w.pki.crl("ca").string();
  const auto writer = Credentials::load(s);
  CHECK_FALSE(writer->revoked(w.reader_serial));
  CHECK_FALSE(writer->reload_crl());  // unchanged
  w.pki.revoke("ca", {w.reader_serial});
  CHECK(writer->reload_crl());
  CHECK(writer->revoked(w.reader_serial));
  CHECK_FALSE(writer->revoked(w.writer_serial));
  // A list another CA signed, in its place: refused, and the one in force stays.
  w.pki.revoke("rogue", {w.writer_serial});
  fs::copy_file(w.pki.crl("rogue"), w.pki.crl("ca"), fs::copy_options::overwrite_existing);
  CHECK_THROWS_WITH(writer->reload_crl(),
                    Contains("security.crl: " + w.pki.crl("ca").string() +
                             ": the revocation list is not signed by security.ca"));
  CHECK(writer->revoked(w.reader_serial));
  CHECK_FALSE(writer->revoked(w.writer_serial));
  // Half a file (a list being written): not PEM; the one in force stays.
  std::ofstream(w.pki.crl("ca"), std::ios::trunc) << "-----BEGIN X509 CRL-----\nMIIB";
  CHECK_THROWS_WITH(writer->reload_crl(), Contains("not a PEM revocation list"));
  CHECK(writer->revoked(w.reader_serial));
}

TEST_CASE("canonical subjects", "[credentials]") {
  using spindle::security::canonical_subject;
  CHECK(canonical_subject("cn = writer, o=Acme") == "CN=writer,O=Acme");
  CHECK(canonical_subject("CN=a\\, b,O=x") == "CN=a\\, b,O=x");
  CHECK(canonical_subject("  CN=x  ") == "CN=x");
}

namespace {

// A TLS handshake between `client` and `server` over a socket pair; the identity each
// side judged of the other.
std::pair<spindle::security::PeerIdentity, spindle::security::PeerIdentity> handshake(
    const Credentials& client, const Credentials& server) {
  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  auto far = std::async(std::launch::async, [&] {
    TlsSocket s(server, sv[1], true);
    REQUIRE(s.handshake(deadline));
    const auto who = s.peer();
    const std::string hello = "hello\n";
    REQUIRE(s.write_all(hello.data(), hello.size(), deadline));
    return who;
  });
  TlsSocket c(client, sv[0], false);
  REQUIRE(c.handshake(deadline));
  const auto line = c.read_line(64, deadline);
  CHECK(line == "hello");
  return {c.peer(), far.get()};
}

}  // namespace

TEST_CASE("a TLS handshake names both certificates", "[credentials]") {
  World w;
  const auto writer = Credentials::load(w.settings("writer"));
  const auto reader = Credentials::load(w.settings("reader"));
  const auto [server_seen, client_seen] = handshake(*reader, *writer);
  CHECK(server_seen.valid());
  CHECK(server_seen.subject == "CN=writer");
  CHECK(client_seen.valid());
  CHECK(client_seen.subject == "CN=reader,O=Avionics");
  CHECK(client_seen.serial == w.reader_serial);

  // A certificate of another CA finishes the handshake (so the port can say why) and is
  // judged invalid, on both sides.
  const auto rogue_settings = w.settings("impostor", "rogue");
  const auto impostor = Credentials::load(rogue_settings);
  const auto [leader, joiner] = handshake(*impostor, *writer);
  CHECK_FALSE(joiner.valid());
  CHECK(joiner.subject == "CN=reader");
  CHECK(joiner.issuer == "CN=rogue");
  CHECK_THAT(joiner.refusal, Contains("not issued by this domain's CA"));
  CHECK_FALSE(leader.valid());  // the impostor's CA knows nothing of the writer either

  // Revoked while running.
  w.pki.revoke("ca", {w.reader_serial});
  auto s = w.settings("writer");
  s.crl = w.pki.crl("ca").string();
  const auto strict = Credentials::load(s);
  const auto [unused, revoked] = handshake(*reader, *strict);
  CHECK_THAT(revoked.refusal, Contains("certificate revoked"));
}

TEST_CASE("a TLS handshake cut short or with garbage fails without a hang", "[credentials]") {
  World w;
  const auto writer = Credentials::load(w.settings("writer"));
  for (const std::string& junk : {std::string(), std::string("GET / HTTP/1.0\r\n\r\n"),
                                  std::string("\x16\x03\x01\x00\x05hello", 10)}) {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    if (!junk.empty())
      REQUIRE(::write(sv[0], junk.data(), junk.size()) == static_cast<ssize_t>(junk.size()));
    ::close(sv[0]);
    TlsSocket s(*writer, sv[1], true);
    CHECK_FALSE(s.handshake(std::chrono::steady_clock::now() + std::chrono::seconds(2)));
    CHECK_FALSE(s.error().empty());
  }
}

TEST_CASE("the issue's permissions document decides as written", "[permissions]") {
  const auto p = Permissions::parse(spindle::test::kIssuePermissions, "perms.yaml");
  CHECK(p.digest() == spindle::security::sha256_hex(spindle::test::kIssuePermissions));
  CHECK(p.digest().size() == 64);
  CHECK(p.allows("CN=writer", Action::publish, "Secret", {}));
  CHECK_FALSE(p.allows("CN=writer", Action::subscribe, "Secret", {}));
  CHECK(p.allows("CN=reader", Action::subscribe, "Secret", {}));
  CHECK_FALSE(p.allows("CN=reader", Action::publish, "Secret", {}));
  CHECK_FALSE(p.allows("CN=outsider", Action::subscribe, "Secret", {}));
  CHECK(p.allows("CN=outsider", Action::subscribe, "Public", {}));
  const auto no = p.decide("CN=outsider", Action::subscribe, "Secret", {});
  CHECK_THAT(no.rule, Contains("default: deny") && Contains("CN=outsider subscribe 'Secret'"));
  CHECK_THAT(p.decide("CN=writer", Action::publish, "Secret", {}).rule,
             Contains("grants[0] (perms.yaml:4)"));
}

TEST_CASE("permissions: patterns, partitions, default allow", "[permissions]") {
  const auto p = Permissions::parse(R"(version: 1
default: allow
grants:
  - subject: "cn=ops, o=Acme"
    publish: ["Track*", "Alert?"]
    partitions: ["ops", "ops.*"]
  - {subject: "*", subscribe: [Weather]}
)",
                                    "p.yaml");
  CHECK(p.allows("CN=ops,O=Acme", Action::publish, "TrackA", {"ops"}));
  CHECK(p.allows("CN=ops,O=Acme", Action::publish, "Alert1", {"ops.east", "ops"}));
  CHECK(p.allows("CN=ops,O=Acme", Action::publish, "Alert12", {"ops"}));  // no grant names it
  CHECK_FALSE(p.allows("CN=ops,O=Acme", Action::publish, "TrackA", {}));  // "" is no ops
  CHECK_FALSE(p.allows("CN=other", Action::publish, "TrackA", {"ops"}));  // named: restricted
  CHECK(p.allows("CN=other", Action::publish, "Other", {}));              // not named: open
  CHECK(p.allows("CN=anyone", Action::subscribe, "Weather", {}));
  using spindle::security::matches;
  CHECK(matches("*", ""));
  CHECK(matches("a*b*c", "aXbYc"));
  CHECK_FALSE(matches("a*b", "aXc"));
  CHECK(matches("?", "x"));
  CHECK_FALSE(matches("?", ""));
  CHECK(matches("*b", "*ab"));  // a wildcard in the pattern is one, even facing a *
}

TEST_CASE("a bad permissions document names the line and the key", "[permissions]") {
  auto error = [](const std::string& text) {
    try {
      (void)Permissions::parse(text, "perms.yaml");
    } catch (const SecurityError& e) {
      return std::string(e.what());
    }
    return std::string("(parsed)");
  };
  CHECK_THAT(error("version: 1\ngrants: []\n"), Contains("default: missing"));
  CHECK_THAT(error("version: 1\ndefault: maybe\n"),
             Contains("perms.yaml:2: default:") && Contains("deny"));
  CHECK_THAT(error("version: 1\ndefault: deny\ngrants:\n  - {subject: writer, publish: [A]}\n"),
             Contains("perms.yaml:4: grants[0].subject") && Contains("RFC 4514"));
  CHECK_THAT(error("version: 1\ndefault: deny\ngrants:\n  - {subject: CN=a}\n"),
             Contains("grants[0]: grants nothing"));
  CHECK_THAT(error("version: 1\ndefault: deny\ngrants:\n  - {subject: CN=a, pubish: [A]}\n"),
             Contains("grants[0]") && Contains("pubish"));
  CHECK_THAT(error("version: 2\ndefault: deny\n"), Contains("version"));
  CHECK_THAT(error("default: deny\n"), Contains("version"));
  CHECK_THAT(error("version: 1\ndefault: deny\ngrants: {a: 1}\n"),
             Contains("grants: expected a list"));
  try {
    (void)Permissions::load("/nonexistent/perms.yaml");
    FAIL("loaded");
  } catch (const SecurityError& e) {
    CHECK_THAT(e.what(), Contains("security.permissions: ") && Contains("/nonexistent/perms.yaml"));
  }
}
