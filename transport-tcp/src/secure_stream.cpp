// Secured TCP streams (see secure_stream.hpp for the layout).
#include "secure_stream.hpp"

#include <openssl/evp.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#include "frame.hpp"
#include "security/credentials.hpp"

namespace spindle::transport::tcp_secure {

namespace {

// nonce = IV xor (0^32 || counter as a big-endian u64), as TLS 1.3 does (RFC 8446 5.3).
void make_nonce(const std::byte (&iv)[kIv], std::uint64_t counter, unsigned char* nonce) noexcept {
  std::memcpy(nonce, iv, kIv);
  for (std::size_t i = 0; i < 8; ++i)
    nonce[kIv - 1 - i] ^= static_cast<unsigned char>(counter >> (8 * i));
}

EVP_CIPHER_CTX* gcm_context(std::span<const std::byte, kKey> key, bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) throw std::bad_alloc();
  const auto* k = reinterpret_cast<const unsigned char*>(key.data());
  const int ok = encrypt ? EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, k, nullptr)
                         : EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, k, nullptr);
  if (ok != 1) {
    EVP_CIPHER_CTX_free(ctx);
    throw std::runtime_error("tcp: cannot set up AES-256-GCM: " + security::openssl_error());
  }
  return ctx;
}

}  // namespace

Unit parse_unit(const std::byte* header) noexcept {
  const auto v = tcp_frames::get<std::uint32_t>(header);
  return Unit{(v & kHandshakeBit) != 0, v & ~kHandshakeBit};
}

Sealer::Sealer(std::span<const std::byte, kKey> key, std::span<const std::byte, kIv> iv)
    : ctx_(gcm_context(key, true)) {
  std::memcpy(iv_, iv.data(), kIv);
}
Sealer::~Sealer() {
  EVP_CIPHER_CTX_free(ctx_);
}

void Sealer::seal(std::span<const std::byte> plain, std::vector<std::byte>& out) {
  while (!plain.empty()) {
    const std::size_t n = std::min(plain.size(), kSealChunk);
    const std::size_t at = out.size();
    out.resize(at + kUnitHeader + n + kTag);
    std::byte* rec = out.data() + at;
    tcp_frames::put<std::uint32_t>(rec, static_cast<std::uint32_t>(n));
    unsigned char nonce[kIv];
    make_nonce(iv_, counter_++, nonce);
    auto* u = reinterpret_cast<unsigned char*>(rec);
    int len = 0;
    // Failures here mean OpenSSL itself is broken (out of memory): nothing sensible can go.
    if (EVP_EncryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce) != 1 ||
        EVP_EncryptUpdate(ctx_, nullptr, &len, u, kUnitHeader) != 1 ||
        EVP_EncryptUpdate(ctx_, u + kUnitHeader, &len,
                          reinterpret_cast<const unsigned char*>(plain.data()),
                          static_cast<int>(n)) != 1 ||
        EVP_EncryptFinal_ex(ctx_, u + kUnitHeader + len, &len) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_GET_TAG, kTag, u + kUnitHeader + n) != 1) {
      throw std::runtime_error("tcp: AES-256-GCM seal failed: " + security::openssl_error());
    }
    plain = plain.subspan(n);
  }
}

Opener::Opener(std::span<const std::byte, kKey> key, std::span<const std::byte, kIv> iv)
    : ctx_(gcm_context(key, false)) {
  std::memcpy(iv_, iv.data(), kIv);
}
Opener::~Opener() {
  EVP_CIPHER_CTX_free(ctx_);
}

bool Opener::open(std::span<const std::byte> record, std::byte* out) {
  const Unit unit = parse_unit(record.data());
  if (unit.handshake || record.size() != unit.wire()) return false;
  unsigned char nonce[kIv];
  make_nonce(iv_, counter_, nonce);
  const auto* u = reinterpret_cast<const unsigned char*>(record.data());
  auto* o = reinterpret_cast<unsigned char*>(out);
  unsigned char tag[kTag];
  std::memcpy(tag, u + kUnitHeader + unit.length, kTag);
  int len = 0;
  const bool ok =
      EVP_DecryptInit_ex(ctx_, nullptr, nullptr, nullptr, nonce) == 1 &&
      EVP_DecryptUpdate(ctx_, nullptr, &len, u, kUnitHeader) == 1 &&
      EVP_DecryptUpdate(ctx_, o, &len, u + kUnitHeader, static_cast<int>(unit.length)) == 1 &&
      EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_GCM_SET_TAG, kTag, tag) == 1 &&
      EVP_DecryptFinal_ex(ctx_, o + len, &len) == 1;
  if (!ok) {
    (void)security::openssl_error();  // clear this thread's queue
    return false;
  }
  ++counter_;
  return true;
}

Handshake::Handshake(const security::Credentials& credentials, bool client)
    : credentials_(credentials), client_(client) {
  ssl_ = SSL_new(client ? credentials.client_context() : credentials.server_context());
  BIO* in = BIO_new(BIO_s_mem());
  BIO* out = BIO_new(BIO_s_mem());
  if (ssl_ == nullptr || in == nullptr || out == nullptr) {
    BIO_free(in);
    BIO_free(out);
    error_ = security::openssl_error("cannot start TLS");
    return;
  }
  SSL_set_bio(ssl_, in, out);  // the SSL owns both now
  if (client) {
    SSL_set_connect_state(ssl_);
  } else {
    SSL_set_accept_state(ssl_);
  }
}

Handshake::~Handshake() {
  if (ssl_ != nullptr) SSL_free(ssl_);
}

Handshake::Step Handshake::step(std::span<const std::byte> in, std::vector<std::byte>& out) {
  if (!error_.empty()) return Step::failed;
  if (!in.empty() && BIO_write(SSL_get_rbio(ssl_), in.data(), static_cast<int>(in.size())) !=
                         static_cast<int>(in.size())) {
    error_ = security::openssl_error("cannot buffer handshake bytes");
    return Step::failed;
  }
  const int rc = SSL_do_handshake(ssl_);
  const int err = rc == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, rc);
  // Whatever TLS wrote (a flight, or an alert on failure) goes out as handshake units.
  BIO* wbio = SSL_get_wbio(ssl_);
  char* data = nullptr;
  const long pending = BIO_get_mem_data(wbio, &data);
  for (long done = 0; done < pending;) {
    const auto n = static_cast<std::uint32_t>(std::min<long>(pending - done, 16 << 10));
    const std::size_t at = out.size();
    out.resize(at + kUnitHeader + n);
    tcp_frames::put<std::uint32_t>(out.data() + at, kHandshakeBit | n);
    std::memcpy(out.data() + at + kUnitHeader, data + done, n);
    done += n;
  }
  (void)BIO_reset(wbio);
  if (rc == 1) return Step::done;
  if (err == SSL_ERROR_WANT_READ) return Step::more;
  error_ = security::openssl_error("TLS handshake failed");
  return Step::failed;
}

security::PeerIdentity Handshake::identify() const {
  return credentials_.identify(ssl_);
}

Keys Handshake::keys() {
  // Both ends export the same bytes: [client->server key | server->client key |
  // client->server IV | server->client IV].
  std::byte m[2 * kKey + 2 * kIv];
  if (SSL_export_keying_material(ssl_, reinterpret_cast<unsigned char*>(m), sizeof m,
                                 kExporterLabel, std::strlen(kExporterLabel), nullptr, 0, 0) != 1) {
    error_ = security::openssl_error("cannot export keys from the TLS session");
    return {};
  }
  const std::span<const std::byte> all(m);
  const auto c2s_key = all.subspan<0, kKey>();
  const auto s2c_key = all.subspan<kKey, kKey>();
  const auto c2s_iv = all.subspan<2 * kKey, kIv>();
  const auto s2c_iv = all.subspan<2 * kKey + kIv, kIv>();
  Keys k;
  k.seal = client_ ? std::make_unique<Sealer>(c2s_key, c2s_iv)
                   : std::make_unique<Sealer>(s2c_key, s2c_iv);
  k.open = client_ ? std::make_unique<Opener>(s2c_key, s2c_iv)
                   : std::make_unique<Opener>(c2s_key, c2s_iv);
  OPENSSL_cleanse(m, sizeof m);
  return k;
}

}  // namespace spindle::transport::tcp_secure
