// SST against a hostile or broken peer over a real TCP transport: a raw socket completes the
// handshake as member node 2 but announces no SST region, or one too small for the view's
// layout. The member's next push to it must become a suspicion of node 2 that names the
// region, never an exception on the predicate thread.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

#include "frame.hpp"
#include "group/view.hpp"
#include "sst/sst.hpp"

namespace sg = spindle::group;
namespace sst = spindle::sst;
namespace st = spindle::transport;
namespace tf = spindle::transport::tcp_frames;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kEpoch = 5;

// A view of node 1 (the real member, listening on `port`) and node 2 (the raw socket).
sg::View two_members(std::uint16_t port) {
  const std::string yaml =
      "version: 1\nepoch: " + std::to_string(kEpoch) +
      "\nmembers:\n  - {id: 1, host: 127.0.0.1, port: " + std::to_string(port) +
      "}\n  - {id: 2, host: 127.0.0.1, port: 1}\n"
      "subgroups:\n  - name: t\n    members: [1, 2]\n    senders: [1, 2]\n"
      "knobs:\n  heartbeat_ms: 0\n";
  return sg::parse_group(yaml, "hostile.yaml");
}

class RawPeer {
 public:
  explicit RawPeer(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  }
  ~RawPeer() { ::close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;
  void send(const std::vector<std::byte>& b) {
    REQUIRE(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(b.size()));
  }

 private:
  int fd_ = -1;
};

// Node 1's SST connected to a forged node 2 that announced `regions`; pushes the barrier
// column to it and returns what the suspicion handler saw.
std::vector<sst::SuspicionReport> push_to_forged_peer(std::vector<st::RegionDescriptor> regions) {
  st::TcpTransport t{st::TcpConfig{st::NodeAddress{1, "127.0.0.1", 0}}};
  const auto group = two_members(t.port());
  sst::Sst table(t, group, sst::steady_clock());
  std::vector<sst::SuspicionReport> reports;
  table.set_suspicion_handler([&](const sst::SuspicionReport& r) { reports.push_back(r); });
  auto connected = std::async(std::launch::async, [&] { return table.connect(5s); });
  RawPeer raw(t.port());
  std::vector<std::byte> hello;
  tf::encode_hello(hello, 2, kEpoch, regions);
  raw.send(hello);
  REQUIRE(connected.get() == st::Status::ok);
  table.set_barrier(1);
  REQUIRE_NOTHROW(table.flush());
  CHECK(table.suspected(1));
  CHECK_FALSE(table.has_pending());
  return reports;
}

}  // namespace

TEST_CASE("sst: a member that announced no SST region is suspected, not a crash",
          "[sst][hostile]") {
  const auto reports = push_to_forged_peer({});
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].node == 2);
  CHECK(reports[0].reason == st::SuspicionReason::unknown_region);
  CHECK_THAT(reports[0].detail,
             Catch::StartsWith("node 2 announced no SST region for view 5 (region " +
                               std::to_string(sst::Sst::region_id(kEpoch)) + "): write of ["));
}

TEST_CASE("sst: a member whose SST region is too small is suspected, not a crash",
          "[sst][hostile]") {
  const auto reports = push_to_forged_peer({st::RegionDescriptor{sst::Sst::region_id(kEpoch), 8}});
  REQUIRE(reports.size() == 1);
  CHECK(reports[0].node == 2);
  CHECK(reports[0].reason == st::SuspicionReason::unknown_region);
  CHECK_THAT(reports[0].detail,
             Catch::StartsWith("node 2 announced its SST region for view 5 with 8 bytes; the "
                               "view's layout needs "));
}
