// Conditions and WaitSets: guard conditions, wake-ups from other threads, timeouts,
// dispatch and handlers, attach/detach, StatusCondition over an entity's status book, and
// ReadCondition over a reader's history cache.
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include <catch2/catch.hpp>
#include <dds/core/Entity.hpp>
#include <dds/core/cond/GuardCondition.hpp>
#include <dds/core/cond/StatusCondition.hpp>
#include <dds/core/cond/WaitSet.hpp>
#include <dds/sub/cond/ReadCondition.hpp>
#include <spindle/detail/entity_delegate.hpp>

#include "cache_fixture.hpp"

using namespace std::chrono_literals;
using dds::core::Duration;
using dds::core::cond::Condition;
using dds::core::cond::GuardCondition;
using dds::core::cond::StatusCondition;
using dds::core::cond::WaitSet;
using dds::core::status::StatusMask;
using dds::sub::cond::ReadCondition;
using dds::sub::status::DataState;
using dds::sub::status::SampleState;
using spindle::dcps::HistoryCache;
using spindle::dcps::HistoryCacheConfig;
using spindle::dcps::test::data;
using spindle::dcps::test::dispose;
using spindle::dcps::test::FakeReader;

namespace {

using Clock = std::chrono::steady_clock;

std::shared_ptr<HistoryCache> keep_all_cache() {
  HistoryCacheConfig config;
  config.keep_all = true;
  return std::make_shared<HistoryCache>(config);
}

dds::core::Entity make_entity() {
  return dds::core::Entity(
      std::make_shared<spindle::detail::EntityDelegate>(dds::core::InstanceHandle(7)));
}

// Runs `f` on another thread after `delay`.
std::jthread later(std::chrono::milliseconds delay, std::function<void()> f) {
  return std::jthread([delay, f = std::move(f)] {
    std::this_thread::sleep_for(delay);
    f();
  });
}

}  // namespace

TEST_CASE("GuardCondition copies refer to the same condition", "[dcps][cond]") {
  GuardCondition g;
  GuardCondition copy = g;
  GuardCondition other;
  CHECK(g == copy);
  CHECK_FALSE(g == other);
  CHECK_FALSE(g.trigger_value());
  copy.trigger_value(true);
  CHECK(g.trigger_value());
  Condition base = g;
  CHECK(base == g);
  CHECK(base.trigger_value());
  CHECK_THROWS_AS(Condition().trigger_value(), dds::core::NullReferenceError);
}

TEST_CASE("a WaitSet returns at once the conditions that are already true", "[dcps][cond]") {
  GuardCondition on;
  GuardCondition off;
  on.trigger_value(true);
  WaitSet ws;
  ws += on;
  ws += off;
  const auto triggered = ws.wait(Duration::from_millisecs(10));
  REQUIRE(triggered.size() == 1);
  CHECK(triggered[0] == on);
  WaitSet::ConditionSeq into{off, off, off};
  CHECK(&ws.wait(into, Duration::infinite()) == &into);
  CHECK(into.size() == 1);
}

TEST_CASE("a WaitSet wait times out with TimeoutError after the timeout", "[dcps][cond]") {
  GuardCondition g;
  WaitSet ws;
  ws.attach_condition(g);
  const auto start = Clock::now();
  CHECK_THROWS_AS(ws.wait(Duration::from_millisecs(50)), dds::core::TimeoutError);
  const auto waited = Clock::now() - start;
  CHECK(waited >= 50ms);
  CHECK(waited < 5s);
  WaitSet empty;
  CHECK_THROWS_AS(empty.wait(Duration::zero()), dds::core::TimeoutError);
  CHECK_THROWS_AS(empty.dispatch(Duration::from_millisecs(1)), dds::core::TimeoutError);
}

TEST_CASE("a GuardCondition set from another thread wakes the WaitSet promptly", "[dcps][cond]") {
  GuardCondition g;
  WaitSet ws;
  ws += g;
  std::atomic<std::int64_t> set_at{0};
  auto setter = later(50ms, [&] {
    set_at = Clock::now().time_since_epoch().count();
    g.trigger_value(true);
  });
  const auto start = Clock::now();
  const auto triggered = ws.wait(Duration::from_secs(30));
  const auto woke = Clock::now();
  REQUIRE(triggered.size() == 1);
  CHECK(triggered[0] == g);
  CHECK(woke - start >= 50ms);
  // Woken by the notification, not by the 30 s timeout.
  CHECK(woke.time_since_epoch().count() - set_at.load() <
        std::chrono::duration_cast<Clock::duration>(2s).count());
}

TEST_CASE("WaitSet::dispatch runs the handlers of the triggered conditions", "[dcps][cond]") {
  int plain = 0;
  int typed = 0;
  int base = 0;
  GuardCondition a([&] { ++plain; });
  GuardCondition b;
  b.handler([&](GuardCondition& self) {
    ++typed;
    self.trigger_value(false);  // the handler gets the condition itself
  });
  GuardCondition c;
  c.handler([&](Condition&) { ++base; });
  WaitSet ws;
  ws += a;
  ws += b;
  ws += c;
  a.trigger_value(true);
  b.trigger_value(true);
  ws.dispatch(Duration::from_secs(5));
  CHECK(plain == 1);
  CHECK(typed == 1);
  CHECK(base == 0);  // c was not triggered
  CHECK_FALSE(b.trigger_value());

  c.trigger_value(true);
  a.reset_handler();
  ws.dispatch();
  CHECK(plain == 1);
  CHECK(base == 1);
  c.dispatch();  // a condition dispatches its handler directly too
  CHECK(base == 2);
}

TEST_CASE("WaitSet attach, detach and conditions", "[dcps][cond]") {
  GuardCondition a;
  GuardCondition b;
  WaitSet ws;
  WaitSet same = ws;
  CHECK(ws == same);
  ws.attach_condition(a);
  ws.attach_condition(a);  // attaching twice keeps one entry
  same += b;
  auto conds = ws.conditions();
  REQUIRE(conds.size() == 2);
  CHECK(conds[0] == a);
  CHECK(conds[1] == b);
  CHECK(ws.detach_condition(a));
  CHECK_FALSE(ws.detach_condition(a));
  ws -= b;
  CHECK(ws.conditions().empty());
  CHECK_THROWS_AS(ws.attach_condition(Condition()), dds::core::NullReferenceError);
}

TEST_CASE("a detached condition no longer wakes the WaitSet", "[dcps][cond]") {
  GuardCondition g;
  WaitSet ws;
  ws += g;
  ws -= g;
  auto setter = later(10ms, [&] { g.trigger_value(true); });
  CHECK_THROWS_AS(ws.wait(Duration::from_millisecs(100)), dds::core::TimeoutError);
}

TEST_CASE("attaching a condition that is already true wakes a waiting thread", "[dcps][cond]") {
  GuardCondition g;
  g.trigger_value(true);
  WaitSet ws;
  auto attacher = later(30ms, [&] { ws += g; });
  const auto triggered = ws.wait(Duration::from_secs(30));
  REQUIRE(triggered.size() == 1);
  CHECK(triggered[0] == g);
}

TEST_CASE("only one thread may wait on a WaitSet at a time", "[dcps][cond]") {
  GuardCondition g;
  WaitSet ws;
  ws += g;
  // Whichever thread waits second is refused; each retries until the other holds the wait.
  std::jthread waiter([&] {
    for (;;) {
      try {
        (void)ws.wait(Duration::from_secs(30));
        return;
      } catch (const dds::core::PreconditionNotMetError&) {
        std::this_thread::yield();
      }
    }
  });
  bool refused = false;
  for (int attempt = 0; attempt < 1000 && !refused; ++attempt) {
    try {
      (void)ws.wait(Duration::from_millisecs(1));
    } catch (const dds::core::PreconditionNotMetError&) {
      refused = true;
    } catch (const dds::core::TimeoutError&) {
      std::this_thread::sleep_for(5ms);
    }
  }
  CHECK(refused);
  g.trigger_value(true);
}

TEST_CASE("a condition outliving its WaitSet is detached from it", "[dcps][cond]") {
  GuardCondition g;
  {
    WaitSet ws;
    ws += g;
  }
  g.trigger_value(true);  // must not touch the destroyed WaitSet (ASan checks)
  WaitSet fresh;
  fresh += g;
  CHECK(fresh.wait(Duration::zero()).size() == 1);
}

TEST_CASE("conditions convert back to their kind", "[dcps][cond]") {
  GuardCondition g;
  Condition c = g;
  CHECK(GuardCondition(c) == g);
  CHECK_THROWS_AS(StatusCondition(c), dds::core::IllegalOperationError);
  CHECK_THROWS_AS(ReadCondition(c), dds::core::IllegalOperationError);
}

TEST_CASE("an entity has one StatusCondition, triggered by its enabled statuses", "[dcps][cond]") {
  auto entity = make_entity();
  StatusCondition sc(entity);
  StatusCondition again(entity);
  CHECK(sc == again);
  CHECK(sc.enabled_statuses() == StatusMask::all());
  CHECK(sc.entity() == entity);
  CHECK_FALSE(sc.trigger_value());

  sc.enabled_statuses(StatusMask::data_available());
  auto& book = entity->statuses();
  (void)book.sample_lost(1);
  CHECK(entity.status_changes() == StatusMask::sample_lost());
  CHECK_FALSE(sc.trigger_value());  // not enabled
  book.set_changes(StatusMask::data_available());
  CHECK(sc.trigger_value());
  book.clear_changes(StatusMask::data_available());  // what read/take does
  CHECK_FALSE(sc.trigger_value());

  sc.enabled_statuses(StatusMask::data_available() | StatusMask::sample_lost());
  CHECK(sc.trigger_value());  // the pending sample_lost now counts
  (void)book.read<dds::core::status::SampleLostStatus>();
  CHECK_FALSE(sc.trigger_value());
}

TEST_CASE("a status raised on another thread wakes a WaitSet on the StatusCondition",
          "[dcps][cond]") {
  auto entity = make_entity();
  StatusCondition sc(entity);
  sc.enabled_statuses(StatusMask::subscription_matched());
  WaitSet ws;
  ws += sc;
  auto matcher = later(30ms, [&] {
    (void)entity->statuses().sample_lost(1);  // not enabled: no wake-up that returns
    (void)entity->statuses().subscription_matched(+1, dds::core::InstanceHandle(3));
  });
  const auto triggered = ws.wait(Duration::from_secs(30));
  REQUIRE(triggered.size() == 1);
  CHECK(triggered[0] == sc);
  CHECK(entity->statuses().read<dds::core::status::SubscriptionMatchedStatus>().current_count() ==
        1);
  CHECK_THROWS_AS(ws.wait(Duration::from_millisecs(20)), dds::core::TimeoutError);
}

TEST_CASE("a status consumed by a listener does not trigger the StatusCondition", "[dcps][cond]") {
  auto entity = make_entity();
  StatusCondition sc(entity);
  (void)entity->statuses().sample_lost(1, /*consume=*/true);
  CHECK_FALSE(sc.trigger_value());
}

TEST_CASE("a StatusCondition outlives its entity but no longer yields it", "[dcps][cond]") {
  StatusCondition sc(dds::core::null);
  {
    auto entity = make_entity();
    sc = StatusCondition(entity);
    int calls = 0;
    sc.handler([&](StatusCondition& self) { calls += self == sc ? 1 : 0; });
    sc.dispatch();  // untriggered: the handler does not run
    CHECK(calls == 0);
    entity->statuses().set_changes(dds::core::status::StatusMask::liveliness_lost());
    sc.dispatch();
    CHECK(calls == 1);
    sc.reset_handler();
  }
  CHECK_THROWS_AS(sc.entity(), dds::core::AlreadyClosedError);
  CHECK_FALSE(sc.trigger_value());
  auto closed = make_entity();
  closed.close();
  CHECK_THROWS_AS(StatusCondition(closed), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(StatusCondition(dds::core::Entity()), dds::core::NullReferenceError);
}

TEST_CASE("a ReadCondition triggers on insert and clears on take", "[dcps][cond]") {
  auto cache = keep_all_cache();
  FakeReader reader(cache);
  ReadCondition unread(reader, DataState::new_data());
  ReadCondition read_ones(reader, SampleState::read());
  CHECK(unread.state_filter() == DataState::new_data());
  CHECK(unread.data_reader<dds::core::Entity>() == reader);
  CHECK_FALSE(unread.trigger_value());

  (void)cache->insert(data(1, 1));
  CHECK(unread.trigger_value());
  CHECK_FALSE(read_ones.trigger_value());
  (void)spindle::dcps::test::read(*cache);
  CHECK_FALSE(unread.trigger_value());
  CHECK(read_ones.trigger_value());
  (void)spindle::dcps::test::take(*cache);
  CHECK_FALSE(read_ones.trigger_value());

  // Not-alive instances do not count for new_data().
  (void)cache->insert(dispose(2));
  CHECK_FALSE(unread.trigger_value());
  CHECK(ReadCondition(reader, DataState::any()).trigger_value());
}

TEST_CASE("a sample inserted on another thread wakes a WaitSet on a ReadCondition",
          "[dcps][cond]") {
  auto cache = keep_all_cache();
  FakeReader reader(cache);
  ReadCondition rc(reader, DataState::new_data());
  WaitSet ws;
  ws += rc;
  auto inserter = later(30ms, [&] { (void)cache->insert(data(1, 42)); });
  const auto triggered = ws.wait(Duration::from_secs(30));
  REQUIRE(triggered.size() == 1);
  CHECK(triggered[0] == rc);
  CHECK(spindle::dcps::test::values(spindle::dcps::test::take(*cache)) == std::vector<int>{42});
  CHECK_THROWS_AS(ws.wait(Duration::from_millisecs(20)), dds::core::TimeoutError);
}

TEST_CASE("a ReadCondition handler may take the reader", "[dcps][cond]") {
  auto cache = keep_all_cache();
  FakeReader reader(cache);
  std::vector<int> got;
  ReadCondition rc(reader, DataState::any(), [&](FakeReader& r) {
    got = spindle::dcps::test::values(spindle::dcps::test::take(*r.spindle_history_cache()));
  });
  int plain = 0;
  ReadCondition other(reader, DataState::any(), [&] { ++plain; });
  WaitSet ws;
  ws += rc;
  (void)cache->insert(data(1, 5));
  ws.dispatch(Duration::from_secs(5));
  CHECK(got == std::vector<int>{5});
  CHECK_FALSE(rc.trigger_value());
  other.dispatch();  // untriggered: the handler does not run
  CHECK(plain == 0);
  (void)cache->insert(data(1, 6));
  other.dispatch();
  CHECK(plain == 1);
}

TEST_CASE("a ReadCondition keeps its cache alive", "[dcps][cond]") {
  ReadCondition rc(dds::core::null);
  {
    auto cache = keep_all_cache();
    (void)cache->insert(data(1, 1));
    rc = ReadCondition(FakeReader(cache), DataState::any());
  }
  CHECK(rc.trigger_value());
}
