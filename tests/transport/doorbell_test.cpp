// The doorbell's quiet sleep (Transport::wait_quiet, arm_waiter): a thread standing by for
// the protocol is not woken by peers' rings, is woken by a local ring_all() (notify()),
// and by rings again once a waiter is armed on its behalf.
#include <atomic>
#include <chrono>
#include <thread>

#include <catch2/catch.hpp>
#include <spindle/transport/doorbell.hpp>

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {
// Sleeps quietly on `bell` for up to `limit` while `ring` runs 20 ms later; how long the
// sleep took.
template <class Ring>
Clock::duration quiet_sleep(st::Doorbell& bell, std::chrono::milliseconds limit, Ring ring) {
  std::atomic<bool> asleep{false};
  Clock::duration took{};
  std::thread sleeper([&] {
    const auto ticket = bell.ticket();
    asleep.store(true);
    const auto start = Clock::now();
    bell.wait_quiet(ticket, limit);
    took = Clock::now() - start;
  });
  while (!asleep.load())
    std::this_thread::yield();
  std::this_thread::sleep_for(20ms);
  ring();
  sleeper.join();
  return took;
}
}  // namespace

TEST_CASE("doorbell: a quiet sleeper sleeps through rings, wakes on ring_all and when armed",
          "[doorbell]") {
  st::DoorbellData data;
  st::Doorbell bell(&data, false);
  // A peer's ring: nobody counted as waiting, so no wake-up call; it sleeps its full time.
  CHECK(quiet_sleep(bell, 300ms, [&] { bell.ring(); }) >= 250ms);
  // A local notify wakes every sleeper.
  CHECK(quiet_sleep(bell, 5s, [&] { bell.ring_all(); }) < 2s);
  // Armed on its behalf, a peer's ring wakes it; disarming balances the count.
  bell.arm(true);
  CHECK(quiet_sleep(bell, 5s, [&] { bell.ring(); }) < 2s);
  bell.arm(false);
  CHECK(data.waiters.load() == 0);
  // A ring between the ticket and the sleep: it returns at once, armed or not.
  const auto ticket = bell.ticket();
  bell.ring();
  const auto start = Clock::now();
  bell.wait_quiet(ticket, 5s);
  CHECK(Clock::now() - start < 2s);
}
