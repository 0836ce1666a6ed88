// SMC with real threads: several application threads reserve and commit in one ring at
// once while the predicate thread sends, receives and delivers (the lock-free path; run
// under TSan too). Two members in one process over the tcp transport on loopback.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "test_node.hpp"
#include "transports.hpp"

namespace sg = spindle::group;
namespace tst = spindle::testing;
using namespace std::chrono_literals;

namespace {
struct Rec {
  std::uint32_t sender;
  std::uint64_t index;
  std::int64_t seq;
  std::uint32_t thread;
  std::uint32_t n;
};
}  // namespace

TEST_CASE("smc threads: concurrent reserve/commit from many application threads",
          "[smc][threads]") {
  const auto kinds = tst::available_transports();
  if (kinds.empty()) {
    WARN("no threaded transport built; skipped");
    return;
  }
  const std::string kind = kinds.front();
  for (auto ordering : {sg::Ordering::atomic, sg::Ordering::unordered}) {
    auto a = tst::make_transport(kind, 1, "thr" + std::to_string(::getpid()));
    auto b = tst::make_transport(kind, 2, "thr" + std::to_string(::getpid()));
    sg::View g;
    g.members = {sg::Member{1, "127.0.0.1", a.port}, sg::Member{2, "127.0.0.1", b.port}};
    g.subgroups = {sg::Subgroup{"t", {1, 2}, {1, 2}, 8, 64, ordering}};
    g.knobs.heartbeat_interval = 0ms;
    tst::TestNode na(*a.transport, g, spindle::sst::steady_clock(), 1, false);
    tst::TestNode nb(*b.transport, g, spindle::sst::steady_clock(), 1, false);
    std::vector<Rec> logs[2];
    auto recorder = [](std::vector<Rec>& out) {
      return [&out](std::uint32_t, std::span<const spindle::smc::Message> batch) {
        for (const auto& m : batch) {
          Rec r{m.sender, m.index, m.seq, 0, 0};
          std::memcpy(&r.thread, m.payload.data(), 4);
          std::memcpy(&r.n, m.payload.data() + 4, 4);
          out.push_back(r);
        }
      };
    };
    na.on_batch = recorder(logs[0]);
    nb.on_batch = recorder(logs[1]);
    std::thread connect_b(
        [&] { REQUIRE(nb.sst().connect(10'000ms) == spindle::transport::Status::ok); });
    REQUIRE(na.sst().connect(10'000ms) == spindle::transport::Status::ok);
    connect_b.join();
    na.loop().start();
    nb.loop().start();
    constexpr std::uint32_t kThreads = 4, kPerThread = 1500;
    std::vector<std::thread> apps;
    std::atomic<bool> timed_out{false};
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    for (std::uint32_t t = 0; t < kThreads + 1; ++t) {
      tst::TestNode* node = t < kThreads ? &na : &nb;
      apps.emplace_back([&, t, node] {
        for (std::uint32_t n = 0; n < kPerThread; ++n) {
          for (;;) {
            auto r = node->smc().reserve(0, 8);
            if (r.status == spindle::smc::ReserveStatus::ok) {
              std::memcpy(r.data, &t, 4);
              std::memcpy(r.data + 4, &n, 4);
              node->smc().commit(0, r, 8);
              break;
            }
            if (std::chrono::steady_clock::now() > deadline) {
              timed_out = true;
              return;
            }
            std::this_thread::yield();
          }
        }
      });
    }
    for (auto& th : apps)
      th.join();
    const std::uint64_t total = (kThreads + 1) * kPerThread;
    while ((na.delivered(0) < total || nb.delivered(0) < total) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(1ms);
    na.loop().stop();
    nb.loop().stop();
    REQUIRE_FALSE(timed_out);
    REQUIRE(logs[0].size() == total);
    REQUIRE(logs[1].size() == total);
    for (auto& log : logs) {
      std::uint64_t next[3] = {0, 0, 0};
      std::vector<std::int64_t> last(kThreads + 1, -1);
      for (const auto& r : log) {
        REQUIRE(r.index == next[r.sender]);  // per-sender FIFO, no gap, no duplicate
        ++next[r.sender];
        REQUIRE(r.thread <= kThreads);
        REQUIRE(static_cast<std::int64_t>(r.n) > last[r.thread]);  // each thread's order
        last[r.thread] = r.n;
      }
    }
    if (ordering == sg::Ordering::atomic) {
      for (std::size_t k = 0; k < total; ++k) {
        REQUIRE(logs[0][k].sender == logs[1][k].sender);
        REQUIRE(logs[0][k].index == logs[1][k].index);
        REQUIRE(logs[0][k].seq == logs[1][k].seq);
      }
    }
    a.transport->disconnect();
    b.transport->disconnect();
  }
}

TEST_CASE("smc threads: idle predicate threads sleep instead of spinning", "[smc][idle]") {
  const auto kinds = tst::available_transports();
  if (kinds.empty()) {
    WARN("no threaded transport built; skipped");
    return;
  }
  for (const auto& kind : kinds) {
    INFO("transport " << kind);
    auto a = tst::make_transport(kind, 1, "idle" + std::to_string(::getpid()));
    auto b = tst::make_transport(kind, 2, "idle" + std::to_string(::getpid()));
    sg::View g;
    g.members = {sg::Member{1, "127.0.0.1", a.port}, sg::Member{2, "127.0.0.1", b.port}};
    g.subgroups = {sg::Subgroup{"t", {1, 2}, {1, 2}, 16, 256, sg::Ordering::atomic}};
    tst::TestNode na(*a.transport, g, spindle::sst::steady_clock(), 1, false);
    tst::TestNode nb(*b.transport, g, spindle::sst::steady_clock(), 1, false);
    std::thread connect_b(
        [&] { REQUIRE(nb.sst().connect(10'000ms) == spindle::transport::Status::ok); });
    REQUIRE(na.sst().connect(10'000ms) == spindle::transport::Status::ok);
    connect_b.join();
    na.loop().start();
    nb.loop().start();
    // Some traffic, then silence.
    na.plan(0, tst::SendPlan{50, 0ns, 0});
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    while ((nb.delivered(0) < 50 || !na.sending_done()) &&
           std::chrono::steady_clock::now() < deadline) {
      (void)na.send_some();
      std::this_thread::sleep_for(100us);
    }
    REQUIRE(nb.delivered(0) == 50);
    std::this_thread::sleep_for(50ms);
    const auto cpu = [] {
      timespec ts{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
    };
    const auto c0 = cpu();
    std::this_thread::sleep_for(500ms);
    const auto used = cpu() - c0;
    // A commit after the silence is still picked up (within a sleep slice).
    na.plan(0, tst::SendPlan{60, 0ns, 0});
    while (nb.delivered(0) < 60 && std::chrono::steady_clock::now() < deadline) {
      (void)na.send_some();
      std::this_thread::sleep_for(100us);
    }
    CHECK(nb.delivered(0) == 60);
    na.loop().stop();
    nb.loop().stop();
    // Two predicate threads (plus the transport's own threads) over 500 ms of silence.
    CHECK(used < 100ms);
    CHECK(na.loop().stats().sleeps > 10);
    a.transport->disconnect();
    b.transport->disconnect();
  }
}

namespace {
// Two members on the first threaded transport, connected, loops not started.
struct Pair {
  explicit Pair(const std::string& tag, sg::Knobs knobs, std::uint32_t window) {
    const auto kind = tst::available_transports().front();
    a = tst::make_transport(kind, 1, tag + std::to_string(::getpid()));
    b = tst::make_transport(kind, 2, tag + std::to_string(::getpid()));
    g.members = {sg::Member{1, "127.0.0.1", a.port}, sg::Member{2, "127.0.0.1", b.port}};
    g.subgroups = {sg::Subgroup{"t", {1, 2}, {1, 2}, window, 64, sg::Ordering::atomic}};
    g.knobs = knobs;
    na = std::make_unique<tst::TestNode>(*a.transport, g, spindle::sst::steady_clock(), 1, false);
    nb = std::make_unique<tst::TestNode>(*b.transport, g, spindle::sst::steady_clock(), 1, false);
    std::thread connect_b(
        [&] { REQUIRE(nb->sst().connect(10'000ms) == spindle::transport::Status::ok); });
    REQUIRE(na->sst().connect(10'000ms) == spindle::transport::Status::ok);
    connect_b.join();
  }
  ~Pair() {
    na->loop().stop();
    nb->loop().stop();
    a.transport->disconnect();
    b.transport->disconnect();
  }
  tst::Made a, b;
  sg::View g;
  std::unique_ptr<tst::TestNode> na, nb;
};
}  // namespace

TEST_CASE("smc threads: a commit wakes a dozing predicate thread at once", "[smc][idle]") {
  if (tst::available_transports().empty()) {
    WARN("no threaded transport built; skipped");
    return;
  }
  // Long sleep slices: without the wake-up a commit after a silence would wait for one.
  sg::Knobs knobs;
  knobs.idle_spin = 100us;
  knobs.sleep_slice = 1000ms;
  knobs.heartbeat_interval = 0ms;
  Pair p("doze", knobs, 16);
  p.na->loop().start();
  p.nb->loop().start();
  for (std::uint64_t round = 1; round <= 5; ++round) {
    // Both loops doze by now, with slices of 400 ms and more: without the wake-up the
    // commit would wait for one to end.
    std::this_thread::sleep_for(1000ms);
    const auto start = std::chrono::steady_clock::now();
    auto r = p.na->smc().reserve(0, 8);
    REQUIRE(r.status == spindle::smc::ReserveStatus::ok);
    p.na->smc().commit(0, r, 8);
    while (p.nb->delivered(0) < round && std::chrono::steady_clock::now() - start < 5s)
      std::this_thread::sleep_for(100us);
    const auto took = std::chrono::steady_clock::now() - start;
    INFO("round " << round << ": delivered after "
                  << std::chrono::duration_cast<std::chrono::microseconds>(took).count() << " us");
    REQUIRE(p.nb->delivered(0) == round);
    CHECK(took < 50ms);
  }
}

TEST_CASE("smc threads: reserve_wait sleeps on a full ring until slots are freed",
          "[smc][backpressure]") {
  if (tst::available_transports().empty()) {
    WARN("no threaded transport built; skipped");
    return;
  }
  sg::Knobs knobs;
  knobs.heartbeat_interval = 0ms;
  constexpr std::uint32_t kWindow = 4;
  Pair p("full", knobs, kWindow);
  // Nobody runs the predicate threads yet: nothing is sent, nothing freed.
  for (std::uint32_t i = 0; i < kWindow; ++i) {
    auto r = p.na->smc().reserve(0, 8);
    REQUIRE(r.status == spindle::smc::ReserveStatus::ok);
    p.na->smc().commit(0, r, 8);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto full = p.na->smc().reserve_wait(0, 8, t0 + 50ms);
  CHECK(full.status == spindle::smc::ReserveStatus::full);
  CHECK(std::chrono::steady_clock::now() - t0 >= 50ms);
  // A writer blocked with a long deadline wakes as soon as deliveries free the ring.
  std::atomic<bool> got{false};
  std::chrono::steady_clock::duration waited{};
  std::thread writer([&] {
    const auto start = std::chrono::steady_clock::now();
    auto r = p.na->smc().reserve_wait(0, 8, start + 20s);
    waited = std::chrono::steady_clock::now() - start;
    if (r.status == spindle::smc::ReserveStatus::ok) {
      p.na->smc().commit(0, r, 8);
      got = true;
    }
  });
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(got.load());
  p.na->loop().start();
  p.nb->loop().start();
  writer.join();
  CHECK(got.load());
  CHECK(waited < 10s);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (p.nb->delivered(0) < kWindow + 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(1ms);
  CHECK(p.nb->delivered(0) == kWindow + 1);
}
