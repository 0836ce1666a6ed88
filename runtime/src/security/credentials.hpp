// A participant's identity in a secured domain (DESIGN §12, docs/security.md): the domain's
// CA, this participant's X.509 certificate and private key, and the CA's revocation list,
// loaded from the domain file's `security` section and checked at once, so that a bad file
// fails at create_participant with the key, the file and the reason, never at the first
// handshake.
//
//   security:
//     ca: ca.pem                  trust anchor(s): every member's certificate chains to it
//     certificate: writer.pem     this participant's certificate (then its intermediates)
//     private_key: writer.key     its key (PEM, unencrypted)
//     permissions: perms.yaml     who may publish and subscribe what (permissions.hpp)
//     crl: ca.crl                 optional: certificates the CA revoked
//
// Credentials makes the TLS contexts of both ends of a handshake (TLS 1.3 only, each side
// presenting its certificate and checking the other's against the CA and the CRL), and
// judges a peer's certificate in words: "CN=reader (issuer CN=Other CA): unable to get
// local issuer certificate".
//
// Subjects are RFC 4514 strings, the way `openssl x509 -noout -subject -nameopt RFC2253`
// prints them ("CN=writer,O=Acme"); canonical_subject() is the form they are compared in.
//
// Threading: load() is a plain function. A Credentials is immutable after load() except for
// its CRL, which reload_crl() replaces under a lock; every other member function may be
// called from any thread. SSL_CTX objects it returns are shared and reference counted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <dds/core/Exception.hpp>

using SSL_CTX = struct ssl_ctx_st;
using SSL = struct ssl_st;
using X509 = struct x509_st;

namespace spindle::security {

// The domain file's `security` section: paths, resolved against the file's folder.
struct Settings {
  std::string ca;
  std::string certificate;
  std::string private_key;
  std::string permissions;
  std::string crl;  // optional
  [[nodiscard]] bool enabled() const noexcept {
    return !ca.empty() || !certificate.empty() || !private_key.empty() || !permissions.empty() ||
           !crl.empty();
  }
  friend bool operator==(const Settings&, const Settings&) = default;
};

// A credential that does not load or does not check out: the message names the domain-file
// key, the file and the reason.
class SecurityError : public dds::core::Error {
 public:
  using dds::core::Error::Error;
};

// A peer certificate's verdict: its subject and serial, and why it is refused (empty: it
// is valid).
struct PeerIdentity {
  std::string subject;  // canonical RFC 4514
  std::string serial;   // hex, upper case
  std::string issuer;
  std::string refusal;  // empty: chains to the CA, in date, not revoked
  [[nodiscard]] bool valid() const noexcept { return refusal.empty(); }
};

class Credentials {
 public:
  // Loads and checks every file: readable, PEM, the key matching the certificate, the
  // certificate chaining to the CA, in date and not revoked. Throws SecurityError.
  [[nodiscard]] static std::shared_ptr<const Credentials> load(const Settings& settings);
  ~Credentials();
  Credentials(const Credentials&) = delete;
  Credentials& operator=(const Credentials&) = delete;

  [[nodiscard]] const Settings& settings() const noexcept { return settings_; }
  // This participant's certificate subject (canonical) and serial (hex).
  [[nodiscard]] const std::string& subject() const noexcept { return subject_; }
  [[nodiscard]] const std::string& serial() const noexcept { return serial_; }
  // SHA-256 of the first CA certificate's DER, hex: what a secured domain's members share
  // (a must-agree setting), and what its shared-memory names derive from.
  [[nodiscard]] const std::string& ca_fingerprint() const noexcept { return ca_fingerprint_; }

  // A TLS 1.3 context for the dialing (client) or accepting (server) end: our certificate
  // and key, the CA (and CRL) to check the peer with, a peer certificate required, no
  // session tickets. A server context lets a handshake with an unverified client finish, so
  // that the server can refuse it in words (check the verdict with identify()); a client
  // context fails the handshake on an unverified server.
  [[nodiscard]] SSL_CTX* client_context() const noexcept { return client_; }
  [[nodiscard]] SSL_CTX* server_context() const noexcept { return server_; }

  // The verdict on the peer of a finished handshake (no certificate: refused).
  [[nodiscard]] PeerIdentity identify(SSL* ssl) const;
  // The verdict on a certificate (with its intermediates, if any), now.
  [[nodiscard]] PeerIdentity identify(X509* cert) const;
  // Whether the CRL in force revokes this serial (hex).
  [[nodiscard]] bool revoked(std::string_view serial) const;

  // Reads security.crl again (the revocation list may grow while the domain runs).
  // Returns true if it changed; throws SecurityError if it does not load (the old list
  // stays in force).
  bool reload_crl() const;

 private:
  Credentials() = default;
  struct State;
  Settings settings_;
  std::string subject_;
  std::string serial_;
  std::string ca_fingerprint_;
  SSL_CTX* client_ = nullptr;
  SSL_CTX* server_ = nullptr;
  std::unique_ptr<State> state_;
};

// The canonical form of an RFC 4514 subject: no spaces around ',' '+' '=', attribute types
// in upper case ("cn = writer, o=Acme" -> "CN=writer,O=Acme").
[[nodiscard]] std::string canonical_subject(std::string_view subject);

// The last OpenSSL error(s) in words, the queue cleared; `fallback` if there is none.
[[nodiscard]] std::string openssl_error(std::string_view fallback = "unknown OpenSSL error");

}  // namespace spindle::security
