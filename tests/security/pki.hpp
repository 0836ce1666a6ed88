// A throwaway public-key infrastructure for the security tests: CAs, certificates (in date,
// expired, not yet valid), keys and revocation lists, written as PEM files into a folder,
// made with OpenSSL's API (EC P-256 keys, SHA-256 signatures). docs/security.md shows the
// same with the openssl command line.
//
// Threading: plain functions; a Pki is used by one thread.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace spindle::test {

// The permissions document of the security issue's acceptance, as written there.
inline constexpr const char* kIssuePermissions = R"(version: 1
default: deny
grants:
  - {subject: "CN=writer", publish: [Secret]}
  - {subject: "CN=reader", subscribe: [Secret]}
  - {subject: "CN=outsider", subscribe: [Public]}
)";

class Pki {
 public:
  explicit Pki(std::filesystem::path dir);

  // A self-signed CA "CN=<name>": <name>.pem and <name>.key.
  void make_ca(const std::string& name);
  // A certificate of `subject` (e.g. "CN=writer") issued by CA `ca`: <file>.pem and
  // <file>.key (mode 0600); valid from now + from_days to now + to_days. Returns its serial
  // (hex, upper case: 20 octets, as openssl makes them).
  std::string issue(const std::string& ca, const std::string& subject, const std::string& file,
                    long from_days = -1, long to_days = 365);
  // <file>-encrypted.key: <file>.key encrypted with a passphrase (AES-256-CBC).
  void encrypt_key(const std::string& file);
  // <ca>.crl revoking these serials (hex), signed by CA `ca`.
  void revoke(const std::string& ca, const std::vector<std::string>& serials);

  [[nodiscard]] std::filesystem::path pem(const std::string& file) const {
    return dir_ / (file + ".pem");
  }
  [[nodiscard]] std::filesystem::path key(const std::string& file) const {
    return dir_ / (file + ".key");
  }
  [[nodiscard]] std::filesystem::path crl(const std::string& ca) const {
    return dir_ / (ca + ".crl");
  }
  [[nodiscard]] const std::filesystem::path& dir() const noexcept { return dir_; }

 private:
  std::filesystem::path dir_;
  unsigned long next_serial_ = 0x1000;
};

// A domain file's security section for `who` (certificate <who>.pem, key <who>.key) under
// CA `ca`, with `permissions` (a path) and optionally `crl`, as YAML lines indented by two.
[[nodiscard]] std::string security_yaml(const Pki& pki, const std::string& ca,
                                        const std::string& who,
                                        const std::filesystem::path& permissions,
                                        bool with_crl = false);

}  // namespace spindle::test
