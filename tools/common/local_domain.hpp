// Loopback domains for the tools that start their own members (spindle-demo, spindle-perf):
// a free port per member, a domain file listing them, and a member process started with
// SPINDLE_CONFIG and SPINDLE_NODE_ID, its stdout piped back — as any application would be.
//
// Threading: called from the tool's main thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

namespace spindle::tools {

// A port the kernel just handed out on 127.0.0.1 (free again once returned).
inline std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) throw std::runtime_error("cannot find a free loopback port");
  return ntohs(a.sin_port);
}

struct LocalDomain {
  std::string transport = "tcp";  // tcp | shm | auto
  std::size_t members = 2;
  std::string shm_namespace;      // one of its own per domain
  std::size_t window = 100;       // engine.window_size
  std::size_t slot = 1024;        // engine.slot_size
  std::string comment;            // first line of the file
  std::uint16_t join_port = 0;    // the leader takes joiners on it; 0: nobody joins later
  std::size_t rdmc_block = 0;     // engine.rdmc_block_size; 0: the default
  std::string log_dir = {};       // storage.log_dir; empty: the default
  std::string idle_spin = {};     // engine.idle_spin (a duration, "200us"); empty: the default
  std::string lag_bound = {};     // engine.lag_bound (a duration, "50ms"); empty: the default
  std::uint16_t client_port = 0;  // member 0 serves external clients on it; 0: none
  // A secured domain (docs/security.md): the `security:` section's YAML (one flow map, every
  // member with the same certificate), and that certificate's subject, which each listed
  // member's entry names. Empty: unsecured.
  std::string security = {};
  std::string subject = {};
};

// The engine settings of a LocalDomain, as the inside of a YAML flow map.
inline std::string engine_settings(const LocalDomain& d) {
  std::string out = "window_size: " + std::to_string(d.window) +
                    ", slot_size: " + std::to_string(d.slot) + ", connect_timeout: 20s";
  if (d.rdmc_block > 0) out += ", rdmc_block_size: " + std::to_string(d.rdmc_block);
  if (!d.idle_spin.empty()) out += ", idle_spin: " + d.idle_spin;
  if (!d.lag_bound.empty()) out += ", lag_bound: " + d.lag_bound;
  return out;
}

// Writes a domain file listing `d.members` members on 127.0.0.1 with free ports.
inline void write_domain_file(const std::filesystem::path& file, const LocalDomain& d) {
  std::ofstream out(file);
  if (!d.comment.empty()) out << "# " << d.comment << "\n";
  out << "version: 1\ndomain_id: 0\ntransport: " << d.transport
      << "\nshm: {namespace: " << d.shm_namespace << "}\nmembers:\n";
  // Each port closes again before the next is asked for, so the kernel may hand out one
  // twice (a domain file listing one address twice is refused): take distinct ones.
  std::set<std::uint16_t> taken{d.join_port};
  for (std::size_t i = 0; i < d.members; ++i) {
    std::uint16_t port = free_loopback_port();
    while (!taken.insert(port).second)
      port = free_loopback_port();
    out << "  - {id: " << i << ", host: 127.0.0.1, port: " << port;
    if (!d.subject.empty()) out << ", subject: \"" << d.subject << "\"";
    out << "}\n";
  }
  if (d.join_port != 0) out << "join_port: " << d.join_port << "\n";
  out << "engine: {" << engine_settings(d) << "}\n";
  if (!d.log_dir.empty()) out << "storage: {log_dir: '" << d.log_dir << "'}\n";
  if (!d.security.empty()) out << "security: " << d.security << "\n";
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// Member 0's own copy of the domain file when it serves external clients (d.client_port):
// the same file and the port it serves them on.
inline void write_relay_file(const std::filesystem::path& from, const std::filesystem::path& file,
                             const LocalDomain& d) {
  std::ifstream in(from);
  std::ofstream out(file);
  out << in.rdbuf() << "client_port: " << d.client_port << "\n";
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// The domain file of an external client of member 0 (d.client_port).
inline void write_client_file(const std::filesystem::path& file, const LocalDomain& d) {
  std::ofstream out(file);
  if (!d.comment.empty()) out << "# " << d.comment << "\n";
  out << "version: 1\ndomain_id: 0\nrole: client\nrelays:\n  - {host: 127.0.0.1, port: "
      << d.client_port << "}\nengine: {connect_timeout: 20s}\n";
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// The domain file of a participant that joins the domain of write_domain_file(file, d)
// later through its join port (d.join_port must be set): no members, the same settings.
inline void write_joiner_file(const std::filesystem::path& file, const LocalDomain& d) {
  std::ofstream out(file);
  if (!d.comment.empty()) out << "# " << d.comment << "\n";
  out << "version: 1\ndomain_id: 0\ntransport: " << d.transport
      << "\nshm: {namespace: " << d.shm_namespace << "}\njoin_port: " << d.join_port
      << "\nengine: {" << engine_settings(d) << "}\n";
  if (!d.log_dir.empty()) out << "storage: {log_dir: '" << d.log_dir << "'}\n";
  if (!d.security.empty()) out << "security: " << d.security << "\n";
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

// Starts this executable as member `id` of the domain in `file` with `args`; read its
// stdout from the returned stream and pclose() it for the exit status.
inline FILE* start_member(const std::filesystem::path& file, std::size_t id,
                          const std::string& args) {
  char exe[4096] = {};
  const auto n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) throw std::runtime_error("cannot find my own executable");
  std::string cmd = "SPINDLE_CONFIG='";
  cmd += file.string();
  cmd += "' SPINDLE_NODE_ID=";
  cmd += std::to_string(id);
  cmd += " '";
  cmd.append(exe, static_cast<std::size_t>(n));
  cmd += "' ";
  cmd += args;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) throw std::runtime_error("cannot start member " + std::to_string(id));
  return f;
}

}  // namespace spindle::tools
