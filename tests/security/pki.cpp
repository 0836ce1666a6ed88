// The tests' PKI (see pki.hpp).
#include "pki.hpp"

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

namespace spindle::test {

namespace {

struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CertFree {
  void operator()(X509* c) const { X509_free(c); }
};
struct FileClose {
  void operator()(FILE* f) const { std::fclose(f); }
};
using Key = std::unique_ptr<EVP_PKEY, KeyFree>;
using Cert = std::unique_ptr<X509, CertFree>;
using File = std::unique_ptr<FILE, FileClose>;

File open_for(const std::filesystem::path& p, const char* mode) {
  File f(std::fopen(p.c_str(), mode));
  if (!f) throw std::runtime_error("pki: cannot open " + p.string());
  return f;
}

Key new_key() {
  Key k(EVP_EC_gen("P-256"));
  if (!k) throw std::runtime_error("pki: cannot make a key");
  return k;
}

void write_key(const std::filesystem::path& p, EVP_PKEY* k) {
  auto f = open_for(p, "w");
  PEM_write_PrivateKey(f.get(), k, nullptr, nullptr, 0, nullptr, nullptr);
  ::chmod(p.c_str(), 0600);
}

void write_cert(const std::filesystem::path& p, X509* c) {
  auto f = open_for(p, "w");
  PEM_write_X509(f.get(), c);
}

Key read_key(const std::filesystem::path& p) {
  auto f = open_for(p, "r");
  return Key(PEM_read_PrivateKey(f.get(), nullptr, nullptr, nullptr));
}

Cert read_cert(const std::filesystem::path& p) {
  auto f = open_for(p, "r");
  return Cert(PEM_read_X509(f.get(), nullptr, nullptr, nullptr));
}

// An RFC 4514 string ("CN=a,O=b": the most specific first) into a name, whose encoding
// goes the other way (O, then CN), as `openssl req -subj /O=b/CN=a` makes it.
void set_name(X509_NAME* name, const std::string& subject) {
  std::vector<std::string> parts;
  std::size_t at = 0;
  while (at <= subject.size()) {
    auto comma = subject.find(',', at);
    if (comma == std::string::npos) comma = subject.size();
    parts.push_back(subject.substr(at, comma - at));
    at = comma + 1;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    const auto eq = it->find('=');
    if (eq == std::string::npos) throw std::runtime_error("pki: bad subject " + subject);
    X509_NAME_add_entry_by_txt(name, it->substr(0, eq).c_str(), MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(it->c_str() + eq + 1), -1, -1,
                               0);
  }
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) throw std::runtime_error("pki: bad extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

}  // namespace

Pki::Pki(std::filesystem::path dir) : dir_(std::move(dir)) {
  std::filesystem::create_directories(dir_);
}

void Pki::make_ca(const std::string& name) {
  auto k = new_key();
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), static_cast<long>(++next_serial_));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -86400);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3650L * 86400);
  set_name(X509_get_subject_name(cert.get()), "CN=" + name);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  X509_set_pubkey(cert.get(), k.get());
  add_ext(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_ext(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_ext(cert.get(), cert.get(), NID_subject_key_identifier, "hash");
  X509_sign(cert.get(), k.get(), EVP_sha256());
  write_cert(pem(name), cert.get());
  write_key(key(name), k.get());
}

std::string Pki::issue(const std::string& ca, const std::string& subject, const std::string& file,
                       long from_days, long to_days) {
  auto ca_key = read_key(key(ca));
  auto ca_cert = read_cert(pem(ca));
  if (!ca_key || !ca_cert) throw std::runtime_error("pki: no CA " + ca);
  auto k = new_key();
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);
  // 20 octets, as the openssl command line makes them (RFC 5280's longest): the view must
  // hold such a serial.
  char hex[48];
  std::snprintf(hex, sizeof hex, "5A%030X%08lX", 0u, ++next_serial_);
  BIGNUM* bn = nullptr;
  BN_hex2bn(&bn, hex);
  ASN1_INTEGER* serial = BN_to_ASN1_INTEGER(bn, nullptr);
  X509_set_serialNumber(cert.get(), serial);
  ASN1_INTEGER_free(serial);
  char* text = BN_bn2hex(bn);
  const std::string serial_hex = text;
  OPENSSL_free(text);
  BN_free(bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), from_days * 86400);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), to_days * 86400);
  set_name(X509_get_subject_name(cert.get()), subject);
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  X509_set_pubkey(cert.get(), k.get());
  add_ext(cert.get(), ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_ext(cert.get(), ca_cert.get(), NID_key_usage, "critical,digitalSignature");
  add_ext(cert.get(), ca_cert.get(), NID_ext_key_usage, "clientAuth,serverAuth");
  X509_sign(cert.get(), ca_key.get(), EVP_sha256());
  write_cert(pem(file), cert.get());
  write_key(key(file), k.get());
  return serial_hex;
}

void Pki::encrypt_key(const std::string& file) {
  auto k = read_key(key(file));
  const auto out = dir_ / (file + "-encrypted.key");
  auto f = open_for(out, "w");
  static const char kPass[] = "passphrase";
  PEM_write_PrivateKey(f.get(), k.get(), EVP_aes_256_cbc(),
                       reinterpret_cast<const unsigned char*>(kPass), sizeof kPass - 1, nullptr,
                       nullptr);
  ::chmod(out.c_str(), 0600);
}

void Pki::revoke(const std::string& ca, const std::vector<std::string>& serials) {
  auto ca_key = read_key(key(ca));
  auto ca_cert = read_cert(pem(ca));
  X509_CRL* crl = X509_CRL_new();
  X509_CRL_set_version(crl, 1);
  X509_CRL_set_issuer_name(crl, X509_get_subject_name(ca_cert.get()));
  ASN1_TIME* now = X509_gmtime_adj(nullptr, -60);
  ASN1_TIME* next = X509_gmtime_adj(nullptr, 30L * 86400);
  X509_CRL_set1_lastUpdate(crl, now);
  X509_CRL_set1_nextUpdate(crl, next);
  for (const auto& s : serials) {
    X509_REVOKED* r = X509_REVOKED_new();
    BIGNUM* bn = nullptr;
    BN_hex2bn(&bn, s.c_str());
    ASN1_INTEGER* i = BN_to_ASN1_INTEGER(bn, nullptr);
    X509_REVOKED_set_serialNumber(r, i);
    X509_REVOKED_set_revocationDate(r, now);
    X509_CRL_add0_revoked(crl, r);
    ASN1_INTEGER_free(i);
    BN_free(bn);
  }
  X509_CRL_sort(crl);
  X509_CRL_sign(crl, ca_key.get(), EVP_sha256());
  {
    auto f = open_for(this->crl(ca), "w");
    PEM_write_X509_CRL(f.get(), crl);
  }
  ASN1_TIME_free(now);
  ASN1_TIME_free(next);
  X509_CRL_free(crl);
}

std::string security_yaml(const Pki& pki, const std::string& ca, const std::string& who,
                          const std::filesystem::path& permissions, bool with_crl) {
  std::string y = "security:\n  ca: " + pki.pem(ca).string() +
                  "\n  certificate: " + pki.pem(who).string() +
                  "\n  private_key: " + pki.key(who).string() +
                  "\n  permissions: " + permissions.string() + "\n";
  if (with_crl) y += "  crl: " + pki.crl(ca).string() + "\n";
  return y;
}

}  // namespace spindle::test
