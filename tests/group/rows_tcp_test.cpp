// Rows belong to their owners, end to end over real TCP (docs/membership.md): four view
// engines on 127.0.0.1 in this process, each with its own TcpTransport and protocol
// threads. Member 4 writes "member 2 suspects member 3" into every other member's copy of
// member 2's SST row (member 2's own included), through its transport as any write. They refuse it
// and suspect member 4: the next view is {1, 2, 3} — member 3, the accused, stays — nobody halts,
// and the stream goes on. Before the rule, member 3 was the one suspected.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/tcp.hpp>

#include "group/engine.hpp"
#include "group/layout.hpp"
#include "group/thread_runtime.hpp"
#include "smc/smc.hpp"
#include "sst/layout.hpp"
#include "sst/sst.hpp"

namespace group = spindle::group;
namespace sst = spindle::sst;
namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint32_t kMembers = 4;
constexpr st::RegionId kForgery = 0xF0F0;  // member 4's staging for the forged bytes
const group::Channel kChannel{7, group::Ordering::atomic};

std::vector<group::ChannelDemand> demand() {
  return {group::ChannelDemand{kChannel, "T", {1, 2, 3, 4}, {1, 2, 3, 4}, {0}, 0, 0}};
}

// What one engine delivered and which views it installed (protocol thread -> test thread).
struct Recorder final : group::EngineClient {
  std::mutex mu;
  std::vector<std::string> messages;
  std::string halted;
  void on_deliver(std::span<const spindle::smc::Message> batch) override {
    std::lock_guard lock(mu);
    for (const auto& m : batch)
      messages.emplace_back(reinterpret_cast<const char*>(m.payload.data()), m.payload.size());
  }
  void on_member_lost(group::NodeId, bool, const std::string&) override {}
  void on_view(const group::View&) override {}
  void on_halt(const std::string& why) override {
    std::lock_guard lock(mu);
    halted = why;
  }
  group::Demand layout_demand() override { return {0, demand()}; }
  bool has(const std::string& m) {
    std::lock_guard lock(mu);
    return std::find(messages.begin(), messages.end(), m) != messages.end();
  }
};

template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

void publish(group::Engine& e, const std::string& text) {
  auto loan = e.reserve(kChannel, text.size(), Clock::now() + 5s);
  std::memcpy(loan.data, text.data(), text.size());
  e.commit(loan, text.size(), Clock::now() + 5s);
}

}  // namespace

TEST_CASE(
    "engine over tcp: a forged write into another member's row evicts the forger, and "
    "the member it accuses stays",
    "[rows]") {
  std::vector<std::unique_ptr<st::TcpTransport>> transports;
  std::vector<group::Member> members;
  for (group::NodeId id = 1; id <= kMembers; ++id) {
    transports.push_back(
        std::make_unique<st::TcpTransport>(st::TcpConfig{st::NodeAddress{id, "127.0.0.1", 0}}));
    members.push_back(group::Member{id, "127.0.0.1", transports.back()->port()});
  }
  st::TcpTransport* forger = transports[3].get();
  auto staging = forger->create_region(kForgery, 64).bytes;
  group::LayoutSettings s;
  s.window_size = 8;
  group::View view = group::first_view(members, s);
  view.subgroups = group::layout(members, demand(), s);

  // Each engine connects in its constructor: build them side by side.
  std::vector<std::unique_ptr<group::Engine>> engines(kMembers);
  {
    std::vector<std::thread> builders;
    for (std::uint32_t i = 0; i < kMembers; ++i) {
      builders.emplace_back([&, i] {
        engines[i] = std::make_unique<group::Engine>(
            view, std::move(transports[i]), std::make_unique<group::ThreadRuntime>(), 10s, 0, s);
      });
    }
    for (auto& b : builders)
      b.join();
  }
  Recorder rec[kMembers];
  for (std::uint32_t i = 0; i < kMembers; ++i)
    engines[i]->start(rec[i]);
  const auto all_have = [&](const std::string& m, std::uint32_t n) {
    for (std::uint32_t i = 0; i < n; ++i)
      if (!rec[i].has(m)) return false;
    return true;
  };
  publish(*engines[0], "before");
  REQUIRE(eventually([&] { return all_have("before", kMembers); }, 10s));

  // Member 4 forges "member 2 suspects member 3" in its view's SST region.
  const group::View v = engines[3]->view();
  const sst::SstLayout layout(v);
  const std::size_t at = layout.control(*v.rank_of(2)) + offsetof(sst::ControlRow, suspected);
  const std::uint64_t accuse = std::uint64_t{1} << *v.rank_of(3);
  std::memcpy(staging.data(), &accuse, sizeof accuse);
  const auto region = sst::Sst::region_id(v.epoch);
  for (group::NodeId victim : {1u, 2u, 3u})
    CHECK(forger->write(victim, kForgery, 0, region, at, 8) == st::Status::ok);

  const auto without_forger = [&](std::uint32_t i) {
    const auto w = engines[i]->view();
    return w.members.size() == 3 && !w.rank_of(4) && w.rank_of(1) && w.rank_of(2) && w.rank_of(3);
  };
  REQUIRE(
      eventually([&] { return without_forger(0) && without_forger(1) && without_forger(2); }, 15s));
  for (std::uint32_t i = 0; i < 3; ++i) {
    INFO("member " << i + 1);
    CHECK(engines[i]->halted().empty());
  }
  // The stream goes on, and the accused member still writes.
  publish(*engines[0], "after");
  publish(*engines[2], "from 3");
  CHECK(eventually([&] { return all_have("after", 3) && all_have("from 3", 3); }, 10s));
  for (auto& e : engines)
    e->stop();
}
