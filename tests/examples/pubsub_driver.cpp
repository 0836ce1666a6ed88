// Runs the example publisher and subscriber (examples/) as two processes of one domain, as
// a user would start them, and fails unless both succeed and the subscriber received every
// sample. Used by the examples.pubsub test (the in-tree build) and by
// examples.installed_package (the programs built against an installed Spindle).
//
//   examples_pubsub_driver --publisher EXE --subscriber EXE [--samples N]
//                          [--transport tcp|shm] [--timeout SECONDS] [--env NAME=VALUE]...
//
// It writes a two-member domain file on loopback with ports the kernel hands out, starts
// the subscriber as node 1 and the publisher as node 0 (SPINDLE_CONFIG, SPINDLE_NODE_ID),
// echoes their output and kills whatever is still running at the deadline (the programs
// get two thirds of it as their own --timeout, so they normally report first).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process.hpp"

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using spindle::testing::Deadline;
using spindle::testing::Process;

struct Options {
  std::string publisher;
  std::string subscriber;
  std::string samples = "500";
  std::string transport = "tcp";
  int timeout_s = 90;
  std::vector<std::string> env;
};

// A loopback TCP port nobody listens on right now: bind port 0 and ask which one we got.
std::optional<std::uint16_t> unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  const bool ok = ::bind(fd, sa, sizeof addr) == 0 && ::getsockname(fd, sa, &len) == 0;
  ::close(fd);
  if (!ok) return std::nullopt;
  return ntohs(addr.sin_port);
}

// Starts `exe` as node `node` of the domain in `config`, through env(1) so that only the
// child sees the variables.
std::unique_ptr<Process> start(const Options& o, const std::string& exe, int node,
                               const fs::path& config, std::vector<std::string> args) {
  std::string node_id = "SPINDLE_NODE_ID=";
  node_id += std::to_string(node);
  std::vector<std::string> argv{"/usr/bin/env", "SPINDLE_CONFIG=" + config.string(), node_id};
  argv.insert(argv.end(), o.env.begin(), o.env.end());
  argv.push_back(exe);
  argv.insert(argv.end(), args.begin(), args.end());
  return std::make_unique<Process>(argv);
}

// Echoes the child's output until it closes stdout (or the deadline), then reaps it.
int finish(Process& p, const std::string& name, Deadline deadline, std::string& last_line) {
  while (auto line = p.read_line(deadline)) {
    std::cout << "  " << name << "| " << *line << "\n";
    last_line = *line;
  }
  const int status = p.wait(deadline);
  std::cout << "  " << name << " exit status " << status << (status < 0 ? " (killed)" : "")
            << std::endl;
  return status;
}

int run(const Options& o) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeout_s);
  std::string name = "spindle-examples-";
  name += std::to_string(getpid());
  const fs::path dir = fs::temp_directory_path() / name;
  fs::create_directories(dir);
  const fs::path config = dir / "spindle.yaml";
  {
    std::ofstream out(config);
    out << "# Two example processes on loopback (examples_pubsub_driver).\n"
        << "version: 1\ntransport: " << o.transport << "\n"
        << "shm: {namespace: " << name << "}\nmembers:\n";
    for (int id = 0; id < 2; ++id) {
      const auto port = unused_port();
      if (!port) {
        std::cout << "FAIL: no free loopback port" << std::endl;
        return 1;
      }
      out << "  - {id: " << id << ", host: 127.0.0.1, port: " << *port << "}\n";
    }
    out << "engine: {connect_timeout: 30s}\n";
  }
  // The programs give up (and say so) well before the driver kills them.
  const std::string timeout = std::to_string(o.timeout_s * 2 / 3);
  std::cout << "examples: " << o.samples << " samples over " << o.transport << std::endl;
  auto sub =
      start(o, o.subscriber, 1, config, {"--samples", o.samples, "--timeout", timeout, "--quiet"});
  auto pub = start(o, o.publisher, 0, config, {"--samples", o.samples, "--timeout", timeout});

  std::string sub_last, pub_last;
  const int sub_status = finish(*sub, "subscriber", deadline, sub_last);
  const int pub_status = finish(
      *pub, "publisher", std::max(deadline, std::chrono::steady_clock::now() + 5s), pub_last);
  fs::remove_all(dir);
  // Nothing of the run is named in /dev/shm, even where a member was killed (memfds).
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec)) {
    if (e.path().filename().string().rfind(name + ".", 0) == 0) {
      std::cout << "FAIL: " << e.path() << " is left in /dev/shm" << std::endl;
      return 1;
    }
  }

  std::string expected = "received ";
  expected += o.samples + " of " + o.samples + " readings";
  if (sub_status != 0 || sub_last.find(expected) == std::string::npos) {
    std::cout << "FAIL: the subscriber did not report '" << expected << "'" << std::endl;
    return 1;
  }
  if (pub_status != 0) {
    std::cout << "FAIL: the publisher failed" << std::endl;
    return 1;
  }
  std::cout << "OK: every sample arrived" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const std::string value = argv[i + 1];
    if (key == "--publisher") {
      o.publisher = value;
    } else if (key == "--subscriber") {
      o.subscriber = value;
    } else if (key == "--samples") {
      o.samples = value;
    } else if (key == "--transport") {
      o.transport = value;
    } else if (key == "--timeout") {
      o.timeout_s = std::stoi(value);
    } else if (key == "--env") {
      o.env.push_back(value);
    } else {
      o.publisher.clear();
      break;
    }
  }
  if (o.publisher.empty() || o.subscriber.empty() || argc % 2 == 0) {
    std::cerr << "usage: examples_pubsub_driver --publisher EXE --subscriber EXE [--samples N]\n"
                 "         [--transport tcp|shm] [--timeout SECONDS] [--env NAME=VALUE]...\n";
    return 2;
  }
  return run(o);
}
