// Loading and checking a participant's credentials (see credentials.hpp).
#include "security/credentials.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace spindle::security {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct CrlFree {
  void operator()(X509_CRL* c) const { X509_CRL_free(c); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* s) const { X509_STORE_CTX_free(s); }
};
struct StackFree {
  void operator()(STACK_OF(X509) * s) const { sk_X509_pop_free(s, X509_free); }
};
using Cert = std::unique_ptr<X509, X509Free>;
using Crl = std::unique_ptr<X509_CRL, CrlFree>;
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Store = std::unique_ptr<X509_STORE, StoreFree>;

std::string bio_text(BIO* b) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(b, &data);
  return n > 0 ? std::string(data, static_cast<std::size_t>(n)) : std::string();
}

std::string name_text(const X509_NAME* name) {
  std::unique_ptr<BIO, BioFree> b(BIO_new(BIO_s_mem()));
  if (!b || name == nullptr) return {};
  (void)X509_NAME_print_ex(b.get(), name, 0, XN_FLAG_RFC2253);
  return canonical_subject(bio_text(b.get()));
}

std::string time_text(const ASN1_TIME* t) {
  std::unique_ptr<BIO, BioFree> b(BIO_new(BIO_s_mem()));
  if (!b || t == nullptr) return {};
  (void)ASN1_TIME_print(b.get(), t);
  return bio_text(b.get());
}

std::string serial_text(const X509* cert) {
  const ASN1_INTEGER* s = X509_get0_serialNumber(cert);
  BIGNUM* bn = ASN1_INTEGER_to_BN(s, nullptr);
  if (bn == nullptr) return {};
  char* hex = BN_bn2hex(bn);
  std::string out = hex != nullptr ? hex : "";
  OPENSSL_free(hex);
  BN_free(bn);
  return out;
}

// The whole file, or a SecurityError naming the key.
std::string read_file(const std::string& key, const std::string& path) {
  if (path.empty()) throw SecurityError("security." + key + ": missing");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw SecurityError("security." + key + ": " + path + ": cannot read it (" +
                        std::strerror(errno) + ")");
  }
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::unique_ptr<BIO, BioFree> memory(const std::string& text) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Every certificate of a PEM file (at least one).
std::vector<Cert> read_certificates(const std::string& key, const std::string& path) {
  const std::string text = read_file(key, path);
  auto bio = memory(text);
  std::vector<Cert> out;
  for (;;) {
    Cert c(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
    if (!c) break;
    out.push_back(std::move(c));
  }
  ERR_clear_error();  // the end of the file reads as an error
  if (out.empty()) {
    throw SecurityError("security." + key + ": " + path +
                        ": no PEM certificate in it (expected '-----BEGIN CERTIFICATE-----')");
  }
  return out;
}

Crl read_crl(const std::string& path) {
  const std::string text = read_file("crl", path);
  auto bio = memory(text);
  Crl crl(PEM_read_bio_X509_CRL(bio.get(), nullptr, nullptr, nullptr));
  if (!crl) {
    throw SecurityError(
        "security.crl: " + path +
        ": not a PEM revocation list (expected '-----BEGIN X509 CRL-----'): " + openssl_error());
  }
  return crl;
}

// Accepts every peer in the handshake itself: identify() judges the certificate afterwards,
// against the CRL in force then, and the caller refuses in words. The handshake still
// proves that the peer holds the key of the certificate it presents.
int accept_for_now(int, X509_STORE_CTX*) {
  return 1;
}

SSL_CTX* make_context(bool server, X509* cert, const std::vector<Cert>& chain, EVP_PKEY* key) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) throw SecurityError("TLS: " + openssl_error("cannot make a TLS context"));
  bool ok = SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1 &&
            SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1 &&
            SSL_CTX_use_certificate(ctx, cert) == 1 && SSL_CTX_use_PrivateKey(ctx, key) == 1;
  for (std::size_t i = 1; ok && i < chain.size(); ++i) {
    X509_up_ref(chain[i].get());
    ok = SSL_CTX_add_extra_chain_cert(ctx, chain[i].get()) == 1;
    if (!ok) X509_free(chain[i].get());
  }
  if (!ok) {
    const std::string why = openssl_error();
    SSL_CTX_free(ctx);
    throw SecurityError("TLS: cannot set up the context: " + why);
  }
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, accept_for_now);
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  if (server) (void)SSL_CTX_set_num_tickets(ctx, 0);
  return ctx;
}

// The verdict on `cert` against these CAs (and CRL), now; `untrusted`: the peer's chain.
PeerIdentity verify(const std::vector<Cert>& cas, X509_CRL* crl, X509* cert,
                    STACK_OF(X509) * untrusted) {
  PeerIdentity id;
  id.subject = name_text(X509_get_subject_name(cert));
  id.issuer = name_text(X509_get_issuer_name(cert));
  id.serial = serial_text(cert);
  Store store(X509_STORE_new());
  for (const auto& ca : cas)
    X509_STORE_add_cert(store.get(), ca.get());
  if (crl != nullptr) {
    X509_STORE_add_crl(store.get(), crl);
    X509_STORE_set_flags(store.get(), X509_V_FLAG_CRL_CHECK);
  }
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> ctx(X509_STORE_CTX_new());
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store.get(), cert, untrusted) != 1) {
    id.refusal = "cannot check it: " + openssl_error();
    return id;
  }
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    id.refusal = X509_verify_cert_error_string(err);
    if (err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
        err == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT || err == X509_V_ERR_CERT_SIGNATURE_FAILURE ||
        err == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN) {
      id.refusal += ": not issued by this domain's CA";
    }
    if (err == X509_V_ERR_CERT_HAS_EXPIRED)
      id.refusal += " (not after " + time_text(X509_get0_notAfter(cert)) + ")";
    if (err == X509_V_ERR_CERT_NOT_YET_VALID)
      id.refusal += " (not before " + time_text(X509_get0_notBefore(cert)) + ")";
    ERR_clear_error();
  }
  return id;
}

}  // namespace

struct Credentials::State {
  std::vector<Cert> ca;
  mutable std::mutex mu;
  Crl crl;               // guarded by mu
  std::string crl_text;  // guarded by mu: what reload_crl() compares
};

std::string openssl_error(std::string_view fallback) {
  std::string out;
  while (const unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    const char* reason = ERR_reason_error_string(e);
    out += (out.empty() ? "" : "; ") + std::string(reason != nullptr ? reason : buf);
  }
  return out.empty() ? std::string(fallback) : out;
}

std::string canonical_subject(std::string_view subject) {
  std::string out;
  bool in_type = true;  // reading an attribute type (before '=')
  std::size_t i = 0;
  auto skip_spaces = [&] {
    while (i < subject.size() && subject[i] == ' ')
      ++i;
  };
  skip_spaces();
  for (; i < subject.size(); ++i) {
    const char c = subject[i];
    if (c == '\\' && i + 1 < subject.size()) {  // an escaped character stays as it is
      out += c;
      out += subject[++i];
      continue;
    }
    if (c == '=' && in_type) {
      while (!out.empty() && out.back() == ' ')
        out.pop_back();
      out += '=';
      in_type = false;
      ++i;
      skip_spaces();
      --i;
      continue;
    }
    if ((c == ',' || c == '+') && !in_type) {
      while (!out.empty() && out.back() == ' ')
        out.pop_back();
      out += c;
      in_type = true;
      ++i;
      skip_spaces();
      --i;
      continue;
    }
    out += in_type ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
  }
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  return out;
}

std::shared_ptr<const Credentials> Credentials::load(const Settings& settings) {
  std::shared_ptr<Credentials> c(new Credentials());
  c->settings_ = settings;
  c->state_ = std::make_unique<State>();
  for (const auto& [key, value] : {std::pair{"ca", settings.ca},
                                   {"certificate", settings.certificate},
                                   {"private_key", settings.private_key},
                                   {"permissions", settings.permissions}}) {
    if (value.empty()) {
      throw SecurityError(std::string("security.") + key +
                          ": missing (a secured participant needs ca, certificate, private_key "
                          "and permissions)");
    }
  }
  c->state_->ca = read_certificates("ca", settings.ca);
  auto chain = read_certificates("certificate", settings.certificate);
  const std::string key_text = read_file("private_key", settings.private_key);
  auto key_bio = memory(key_text);
  // No passphrase callback: OpenSSL's default would prompt on the terminal.
  const auto no_passphrase = [](char*, int, int, void*) { return 0; };
  Key key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, no_passphrase, nullptr));
  if (!key) {
    const std::string why = openssl_error();
    const bool encrypted = key_text.find("ENCRYPTED") != std::string::npos;
    throw SecurityError("security.private_key: " + settings.private_key +
                        (encrypted ? ": the key is encrypted; give it unencrypted (openssl pkey "
                                     "-in KEY -out KEY.plain), readable by this user only"
                                   : ": not a PEM private key (" + why + ")"));
  }
  X509* leaf = chain.front().get();
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    throw SecurityError("security.private_key: " + settings.private_key +
                        " is not the key of security.certificate " + settings.certificate + " (" +
                        name_text(X509_get_subject_name(leaf)) + ")");
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int md_len = 0;
  if (X509_digest(c->state_->ca.front().get(), EVP_sha256(), md, &md_len) != 1)
    throw SecurityError("security.ca: " + settings.ca + ": " + openssl_error());
  static constexpr char kHex[] = "0123456789abcdef";
  for (unsigned int i = 0; i < md_len; ++i) {
    c->ca_fingerprint_ += kHex[md[i] >> 4];
    c->ca_fingerprint_ += kHex[md[i] & 15];
  }
  if (!settings.crl.empty()) {
    c->state_->crl_text = read_file("crl", settings.crl);
    c->state_->crl = read_crl(settings.crl);
  }
  c->subject_ = name_text(X509_get_subject_name(leaf));
  c->serial_ = serial_text(leaf);
  // Our own certificate must pass what every peer will check.
  {
    std::unique_ptr<STACK_OF(X509), StackFree> untrusted(sk_X509_new_null());
    for (std::size_t i = 1; i < chain.size(); ++i) {
      X509_up_ref(chain[i].get());
      sk_X509_push(untrusted.get(), chain[i].get());
    }
    const auto self = verify(c->state_->ca, c->state_->crl.get(), leaf, untrusted.get());
    if (!self.valid()) {
      throw SecurityError("security.certificate: " + settings.certificate + " (" + self.subject +
                          ", issuer " + self.issuer + ") does not check out against security.ca " +
                          settings.ca + ": " + self.refusal);
    }
  }
  c->client_ = make_context(false, leaf, chain, key.get());
  try {
    c->server_ = make_context(true, leaf, chain, key.get());
  } catch (...) {
    SSL_CTX_free(c->client_);
    c->client_ = nullptr;
    throw;
  }
  return c;
}

Credentials::~Credentials() {
  SSL_CTX_free(client_);
  SSL_CTX_free(server_);
}

PeerIdentity Credentials::identify(X509* cert) const {
  std::lock_guard lock(state_->mu);
  return verify(state_->ca, state_->crl.get(), cert, nullptr);
}

PeerIdentity Credentials::identify(SSL* ssl) const {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) {
    PeerIdentity id;
    id.refusal = "it presented no certificate";
    return id;
  }
  // The peer's chain: on a client it starts with the leaf, on a server it does not; either
  // way the leaf among the untrusted certificates does no harm.
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);
  std::lock_guard lock(state_->mu);
  return verify(state_->ca, state_->crl.get(), cert, chain);
}

bool Credentials::revoked(std::string_view serial) const {
  std::lock_guard lock(state_->mu);
  if (!state_->crl) return false;
  const STACK_OF(X509_REVOKED)* list = X509_CRL_get_REVOKED(state_->crl.get());
  for (int i = 0; i < sk_X509_REVOKED_num(list); ++i) {
    const X509_REVOKED* r = sk_X509_REVOKED_value(list, i);
    BIGNUM* bn = ASN1_INTEGER_to_BN(X509_REVOKED_get0_serialNumber(r), nullptr);
    if (bn == nullptr) continue;
    char* hex = BN_bn2hex(bn);
    const bool same = hex != nullptr && serial == hex;
    OPENSSL_free(hex);
    BN_free(bn);
    if (same) return true;
  }
  return false;
}

bool Credentials::reload_crl() const {
  if (settings_.crl.empty()) return false;
  std::string text = read_file("crl", settings_.crl);
  {
    std::lock_guard lock(state_->mu);
    if (text == state_->crl_text) return false;
  }
  Crl crl = read_crl(settings_.crl);
  // What evicts members while the domain runs must come from the CA: a list it did not sign
  // is refused, and the one in force stays.
  const bool signed_by_ca = std::any_of(state_->ca.begin(), state_->ca.end(), [&](const Cert& ca) {
    EVP_PKEY* key = X509_get0_pubkey(ca.get());
    return key != nullptr && X509_CRL_verify(crl.get(), key) == 1;
  });
  ERR_clear_error();
  if (!signed_by_ca) {
    throw SecurityError("security.crl: " + settings_.crl +
                        ": the revocation list is not signed by security.ca (" + settings_.ca +
                        ")");
  }
  std::lock_guard lock(state_->mu);
  state_->crl = std::move(crl);
  state_->crl_text = std::move(text);
  return true;
}

}  // namespace spindle::security
