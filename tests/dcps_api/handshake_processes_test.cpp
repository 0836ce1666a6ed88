// Two participant processes whose domain files disagree on what every member must share (the
// domain id, engine.slot_size) refuse each other: each one's DomainParticipant constructor
// fails with the participant's "could not reach every member" error naming both values.
// Over tcp and, for the slot size, shm.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "forked.hpp"
#include "transports.hpp"

namespace fs = std::filesystem;
namespace tst = spindle::testing;

namespace {

struct Member {
  std::uint32_t domain = 0;
  std::uint32_t slot_size = 1024;
  std::string host = "127.0.0.1";
};

// Runs one participant per entry (node i with its own domain file listing both) in its own
// process; returns what each one's constructor threw ("" if it connected).
std::vector<std::string> run(const std::string& transport, const std::vector<Member>& members) {
  const std::string name = "spindle-handshake-" + std::to_string(::getpid()) + "-" + transport;
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<std::uint16_t> ports;
  for (std::size_t i = 0; i < members.size(); ++i)
    ports.push_back(tst::free_loopback_port());
  std::vector<std::unique_ptr<tst::Forked>> children;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto file = dir / ("node" + std::to_string(i) + ".yaml");
    {
      std::ofstream out(file);
      out << "version: 1\ndomain_id: " << members[i].domain << "\ntransport: " << transport
          << "\nshm: {namespace: " << name << "}\nmembers:\n";
      for (std::size_t j = 0; j < members.size(); ++j)
        out << "  - {id: " << j << ", host: " << members[j].host << ", port: " << ports[j] << "}\n";
      out << "engine: {slot_size: " << members[i].slot_size << ", connect_timeout: 10s}\n";
    }
    const std::uint32_t domain = members[i].domain;
    children.push_back(std::make_unique<tst::Forked>([file, i, domain]() -> std::string {
      ::setenv("SPINDLE_CONFIG", file.c_str(), 1);
      ::setenv("SPINDLE_NODE_ID", std::to_string(i).c_str(), 1);
      try {
        dds::domain::DomainParticipant dp(domain);
      } catch (const std::exception& e) {
        return e.what();
      }
      return "";
    }));
  }
  std::vector<std::string> out;
  for (auto& c : children) {
    const std::string said = c->said();
    CHECK(said.find("exited abnormally") == std::string::npos);
    out.push_back(said);
  }
  fs::remove_all(dir);
  return out;
}

}  // namespace

TEST_CASE("handshake: participants of different domains refuse each other over tcp",
          "[handshake]") {
  const auto what = run("tcp", {{0, 1024}, {3, 1024}});
  INFO(what[0] + "\n" + what[1]);
  CHECK_THAT(what[0], Catch::StartsWith("domain 0: node 0 could not reach every member over tcp"));
  CHECK_THAT(what[0], Catch::Contains("; 1: node 1 is in domain 3, this node in domain 0"));
  CHECK_THAT(what[1], Catch::StartsWith("domain 3: node 1 could not reach every member over tcp"));
  CHECK_THAT(what[1], Catch::Contains("; 0: node 0 is in domain 0, this node in domain 3"));
}

TEST_CASE("handshake: participants with different slot sizes refuse each other", "[handshake]") {
  for (const std::string transport : {"tcp", "shm"}) {
    const auto what = run(transport, {{0, 1024}, {0, 2048}});
    INFO(transport + ":\n" + what[0] + "\n" + what[1]);
    CHECK_THAT(what[0], Catch::StartsWith("domain 0: node 0 could not reach every member over " +
                                          transport));
    CHECK_THAT(what[0], Catch::Contains("; 1: engine.slot_size: node 1 has 2048, this node 1024"));
    CHECK_THAT(what[1], Catch::Contains("; 0: engine.slot_size: node 0 has 1024, this node 2048"));
  }
}

TEST_CASE("handshake: participants that agree connect", "[handshake]") {
  const auto what = run("tcp", {{2, 512}, {2, 512}});
  CHECK(what[0].empty());
  CHECK(what[1].empty());
}

TEST_CASE("handshake: participants whose domain file names hosts (localhost) connect",
          "[handshake]") {
  const auto what = run("tcp", {{0, 1024, "localhost"}, {0, 1024, "localhost"}});
  CHECK(what[0].empty());
  CHECK(what[1].empty());
}

TEST_CASE("handshake: a host name that does not resolve is a domain file error naming its key",
          "[handshake]") {
  const auto what = run("tcp", {{0, 1024, "localhost"}, {0, 1024, "no-such-host.invalid"}});
  CHECK_THAT(what[0], Catch::Contains("node0.yaml:7: members[1].host: cannot resolve host "
                                      "'no-such-host.invalid': "));
  CHECK_THAT(what[1], Catch::Contains("node1.yaml:7: members[1].host: cannot resolve host "
                                      "'no-such-host.invalid': "));
}
