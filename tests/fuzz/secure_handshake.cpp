// libFuzzer target for the secured join port's TLS handshake (security/tls_socket.hpp):
// whatever bytes a stranger sends after "SPINDLE-SECURE 1" end in a failed handshake with a
// reason, or (never, without a key of the CA) a peer that does not check out; never a crash,
// a hang or an exception. The input is split in two flights at its first byte, so that the
// server answers between them as it does on a real socket.
//
// Threading: single-threaded (libFuzzer's).
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "pki.hpp"
#include "security/credentials.hpp"
#include "security/tls_socket.hpp"

namespace {

std::shared_ptr<const spindle::security::Credentials> credentials;

void send_all(int fd, const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    const auto w = ::send(fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w <= 0) return;  // the server closed, or its buffer is full: enough for this input
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("spindle-fuzz-pki-" + std::to_string(::getpid()));
  spindle::test::Pki pki(dir);
  pki.make_ca("ca");
  pki.issue("ca", "CN=leader", "leader");
  std::ofstream(dir / "perms.yaml") << spindle::test::kIssuePermissions;
  credentials = spindle::security::Credentials::load(
      {pki.pem("ca").string(), pki.pem("leader").string(), pki.key("leader").string(),
       (dir / "perms.yaml").string(), ""});
  std::filesystem::remove_all(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 0;
  const std::size_t first = size == 0 ? 0 : std::min<std::size_t>(data[0], size - 1);
  send_all(sv[0], data + 1, first);
  spindle::security::TlsSocket server(*credentials, sv[1], true);
  using Step = spindle::security::TlsSocket::Step;
  Step step = server.handshake_step();
  if (size > first + 1) send_all(sv[0], data + 1 + first, size - 1 - first);
  ::shutdown(sv[0], SHUT_WR);
  for (int i = 0; i < 64 && (step == Step::want_read || step == Step::want_write); ++i)
    step = server.handshake_step();
  if (step == Step::done && server.peer().valid()) __builtin_trap();  // no client key here
  if (step == Step::failed && server.error().empty()) __builtin_trap();
  ::close(sv[0]);
  return 0;
}
