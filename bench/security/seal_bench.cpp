// Sealing frames, chosen by measurement (issue 52): TLS 1.3 records (SSL_write/SSL_read over
// a memory BIO pair, AES-256-GCM) against EVP AES-256-GCM records as the tcp transport's
// secured streams make them (transport-tcp/src/secure_stream.cpp: a 4-byte header as AAD,
// a 12-byte nonce from a counter, a 16-byte tag). Each message is sealed by one end and
// opened by the other, in one thread; the figures are per message, both ends together.
//
//   spindle_seal_bench [--sizes 64,10240] [--seconds 0.5] [--smoke]
//
// Prints MB/s and ns per message for each, and the ratio TLS / GCM (STYLE 15).
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "seal_bench: %s\n", what);
  std::exit(1);
}

// A throwaway P-256 key and self-signed certificate for the TLS pair.
void self_signed(EVP_PKEY*& key, X509*& cert) {
  key = EVP_EC_gen("P-256");
  cert = X509_new();
  if (key == nullptr || cert == nullptr) die("cannot make a key");
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("bench"), -1, -1, 0);
  X509_set_issuer_name(cert, name);
  if (X509_sign(cert, key, EVP_sha256()) == 0) die("cannot sign");
}

SSL_CTX* context(bool server, EVP_PKEY* key, X509* cert) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_ciphersuites(ctx, "TLS_AES_256_GCM_SHA384");
  if (server && (SSL_CTX_use_certificate(ctx, cert) != 1 || SSL_CTX_use_PrivateKey(ctx, key) != 1))
    die("cannot set up TLS");
  SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
  return ctx;
}

struct Result {
  double mb_s;
  double ns_per_msg;
};

Result measure(std::size_t size, double seconds, auto&& one) {
  std::size_t n = 0;
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  while (Clock::now() < until) {
    for (int i = 0; i < 64; ++i)
      one();
    n += 64;
  }
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  return {static_cast<double>(n * size) / s / 1e6, s * 1e9 / static_cast<double>(n)};
}

Result tls_records(std::size_t size, double seconds, EVP_PKEY* key, X509* cert) {
  SSL_CTX* cctx = context(false, key, cert);
  SSL_CTX* sctx = context(true, key, cert);
  SSL* c = SSL_new(cctx);
  SSL* s = SSL_new(sctx);
  BIO *bc = nullptr, *bs = nullptr;
  if (BIO_new_bio_pair(&bc, 1 << 20, &bs, 1 << 20) != 1) die("no BIO pair");
  SSL_set_bio(c, bc, bc);
  SSL_set_bio(s, bs, bs);
  SSL_set_connect_state(c);
  SSL_set_accept_state(s);
  for (int i = 0; i < 100 && (!SSL_is_init_finished(c) || !SSL_is_init_finished(s)); ++i) {
    (void)SSL_do_handshake(c);
    (void)SSL_do_handshake(s);
  }
  if (!SSL_is_init_finished(c) || !SSL_is_init_finished(s)) die("TLS handshake did not finish");
  std::vector<unsigned char> msg(size, 0x5a), got(size);
  // Session tickets and the like: read them off the client first.
  (void)SSL_read(c, got.data(), 1);
  const auto r = measure(size, seconds, [&] {
    if (SSL_write(c, msg.data(), static_cast<int>(size)) != static_cast<int>(size) ||
        SSL_read(s, got.data(), static_cast<int>(size)) != static_cast<int>(size))
      die("TLS record lost");
  });
  SSL_free(c);
  SSL_free(s);
  SSL_CTX_free(cctx);
  SSL_CTX_free(sctx);
  return r;
}

Result gcm_records(std::size_t size, double seconds) {
  unsigned char k[32], iv[12];
  std::memset(k, 7, sizeof k);
  std::memset(iv, 9, sizeof iv);
  EVP_CIPHER_CTX* enc = EVP_CIPHER_CTX_new();
  EVP_CIPHER_CTX* dec = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(enc, EVP_aes_256_gcm(), nullptr, k, nullptr);
  EVP_DecryptInit_ex(dec, EVP_aes_256_gcm(), nullptr, k, nullptr);
  std::vector<unsigned char> msg(size, 0x5a), rec(4 + size + 16), got(size);
  std::uint64_t sent = 0, opened = 0;
  auto nonce = [&](std::uint64_t ctr, unsigned char* n) {
    std::memcpy(n, iv, 12);
    for (std::size_t i = 0; i < 8; ++i)
      n[11 - i] ^= static_cast<unsigned char>(ctr >> (8 * i));
  };
  const auto r = measure(size, seconds, [&] {
    unsigned char n[12];
    int len = 0;
    const auto l = static_cast<std::uint32_t>(size);
    std::memcpy(rec.data(), &l, 4);
    nonce(sent++, n);
    EVP_EncryptInit_ex(enc, nullptr, nullptr, nullptr, n);
    EVP_EncryptUpdate(enc, nullptr, &len, rec.data(), 4);
    EVP_EncryptUpdate(enc, rec.data() + 4, &len, msg.data(), static_cast<int>(size));
    EVP_EncryptFinal_ex(enc, rec.data() + 4 + len, &len);
    EVP_CIPHER_CTX_ctrl(enc, EVP_CTRL_GCM_GET_TAG, 16, rec.data() + 4 + size);
    nonce(opened++, n);
    EVP_DecryptInit_ex(dec, nullptr, nullptr, nullptr, n);
    EVP_DecryptUpdate(dec, nullptr, &len, rec.data(), 4);
    EVP_DecryptUpdate(dec, got.data(), &len, rec.data() + 4, static_cast<int>(size));
    EVP_CIPHER_CTX_ctrl(dec, EVP_CTRL_GCM_SET_TAG, 16, rec.data() + 4 + size);
    if (EVP_DecryptFinal_ex(dec, got.data() + len, &len) != 1) die("GCM record did not open");
  });
  EVP_CIPHER_CTX_free(enc);
  EVP_CIPHER_CTX_free(dec);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{64, 10240};
  double seconds = 0.5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--smoke") {
      seconds = 0.02;
    } else if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* p = argv[++i]; *p != '\0';) {
        char* end = nullptr;
        const unsigned long v = std::strtoul(p, &end, 10);
        if (end == p || v == 0 || v > (1UL << 20)) die("--sizes: each size 1..1048576");
        sizes.push_back(v);
        p = *end == ',' ? end + 1 : end;
      }
    } else {
      std::fprintf(stderr,
                   "usage: spindle_seal_bench [--sizes 64,10240] [--seconds S] [--smoke]\n");
      return 2;
    }
  }
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  self_signed(key, cert);
  std::printf("%8s  %-28s %10s %12s\n", "size", "sealing (seal + open)", "MB/s", "ns/message");
  for (const auto size : sizes) {
    const auto tls = tls_records(size, seconds, key, cert);
    const auto gcm = gcm_records(size, seconds);
    std::printf("%8zu  %-28s %10.1f %12.1f\n", size, "TLS 1.3 records (SSL_*)", tls.mb_s,
                tls.ns_per_msg);
    std::printf("%8zu  %-28s %10.1f %12.1f\n", size, "EVP AES-256-GCM records", gcm.mb_s,
                gcm.ns_per_msg);
    std::printf("%8zu  ratio TLS/GCM time per message: %.2f\n", size,
                tls.ns_per_msg / gcm.ns_per_msg);
  }
  X509_free(cert);
  EVP_PKEY_free(key);
  return 0;
}
