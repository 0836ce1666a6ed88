// DCPS behaviour, single participant: WaitSets wake up for a ReadCondition (a sample
// arrives), a StatusCondition (a writer matches) and a GuardCondition set from another
// thread, dispatch handlers, and time out with TimeoutError when nothing triggers.
// Public API only.
#include <future>

#include "api_fixture.hpp"

namespace dcps_api {
namespace {

using dds::core::cond::Condition;
using dds::core::cond::GuardCondition;
using dds::core::cond::StatusCondition;
using dds::core::cond::WaitSet;
using dds::sub::cond::ReadCondition;

bool contains(const WaitSet::ConditionSeq& seq, const Condition& c) {
  for (const auto& x : seq)
    if (x == c) return true;
  return false;
}

TEST_CASE("a ReadCondition wakes a WaitSet when a sample arrives", "[waitset]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  ReadCondition has_data(reader, status::DataState::new_data());
  WaitSet ws;
  ws += has_data;
  CHECK_FALSE(has_data.trigger_value());

  auto later = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(50ms);
    writer.write(flight(1, 1));
  });
  const auto woke = ws.wait(dds::core::Duration::from_secs(5));
  later.get();
  REQUIRE(woke.size() == 1);
  CHECK(woke[0] == has_data);
  CHECK(has_data.trigger_value());
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{1});
  CHECK_FALSE(has_data.trigger_value());
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(20)), dds::core::TimeoutError);
}

TEST_CASE("a StatusCondition on SUBSCRIPTION_MATCHED wakes a WaitSet when a writer appears",
          "[waitset]") {
  Participant p;
  auto reader = p.reader();
  StatusCondition sc(reader);
  sc.enabled_statuses(dds::core::status::StatusMask::subscription_matched());
  WaitSet ws;
  ws += sc;
  CHECK_FALSE(sc.trigger_value());

  Writer writer = dds::core::null;
  auto later = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(50ms);
    writer = p.writer();
  });
  const auto woke = ws.wait(dds::core::Duration::from_secs(5));
  later.get();
  CHECK(contains(woke, sc));
  CHECK(StatusCondition(reader) == sc);
  const auto matched = reader.subscription_matched_status();
  CHECK(matched.current_count() == 1);
  CHECK(matched.current_count_change() == 1);
  // Reading the status cleared its flag, and with it the trigger.
  CHECK_FALSE(sc.trigger_value());
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(20)), dds::core::TimeoutError);
}

TEST_CASE("a GuardCondition set from another thread wakes a WaitSet", "[waitset]") {
  GuardCondition guard;
  WaitSet ws;
  ws += guard;
  const auto start = Clock::now();
  auto later = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(50ms);
    guard.trigger_value(true);
  });
  const auto woke = ws.wait(dds::core::Duration::from_secs(5));
  later.get();
  CHECK(Clock::now() - start >= 40ms);
  REQUIRE(woke.size() == 1);
  CHECK(woke[0] == guard);
  guard.trigger_value(false);
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(20)), dds::core::TimeoutError);
}

TEST_CASE("WaitSet::wait throws TimeoutError after its timeout when nothing triggers",
          "[waitset]") {
  Participant p;
  auto reader = p.reader();
  ReadCondition has_data(reader, status::DataState::any());
  GuardCondition guard;
  WaitSet ws;
  ws += has_data;
  ws += guard;
  const auto start = Clock::now();
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(100)), dds::core::TimeoutError);
  const auto waited = Clock::now() - start;
  CHECK(waited >= 95ms);
  CHECK(waited < 3s);
  CHECK(ws.conditions().size() == 2);
  CHECK(ws.detach_condition(guard));
  CHECK_FALSE(ws.detach_condition(guard));
}

TEST_CASE("WaitSet::dispatch runs the handler of the condition that triggered", "[waitset]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  int taken = 0;
  int guarded = 0;
  ReadCondition has_data(reader, status::DataState::new_data(),
                         [&](Reader& r) { taken += static_cast<int>(r.take().length()); });
  GuardCondition guard([&] { ++guarded; });
  WaitSet ws;
  ws += has_data;
  ws += guard;
  deliver(writer, flight(1, 1), flight(1, 2));
  ws.dispatch(dds::core::Duration::from_secs(5));
  CHECK(taken == 2);
  CHECK(guarded == 0);
  guard.trigger_value(true);
  ws.dispatch(dds::core::Duration::from_secs(5));
  CHECK(guarded == 1);
  CHECK(taken == 2);
}

}  // namespace
}  // namespace dcps_api
