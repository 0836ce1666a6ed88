// Reader history cache: HISTORY, RESOURCE_LIMITS, read vs take, sample/view/instance
// states across dispose/unregister/rebirth, invalid samples, ranks, instance iteration,
// DESTINATION_ORDER, OWNERSHIP, TIME_BASED_FILTER, LIFESPAN, READER_DATA_LIFECYCLE.
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "cache_fixture.hpp"

using namespace spindle::dcps;
using namespace spindle::dcps::test;
using dds::core::status::SampleRejectedState;
using dds::sub::status::DataState;
using dds::sub::status::InstanceState;
using dds::sub::status::SampleState;
using dds::sub::status::ViewState;

namespace {

HistoryCacheConfig keep_last(std::int32_t depth) {
  HistoryCacheConfig c;
  c.depth = depth;
  return c;
}

HistoryCacheConfig keep_all() {
  HistoryCacheConfig c;
  c.keep_all = true;
  return c;
}

HistoryCacheConfig exclusive() {
  HistoryCacheConfig c = keep_all();
  c.exclusive_ownership = true;
  return c;
}

}  // namespace

TEST_CASE("keep-last keeps the newest depth samples of each instance", "[dcps][cache]") {
  HistoryCache cache(keep_last(3));
  for (int v = 1; v <= 5; ++v) {
    const auto r = cache.insert(data(1, v));
    CHECK(r.outcome == InsertOutcome::accepted);
    CHECK(r.replaced == (v > 3));
    CHECK(r.data_available);
  }
  for (int v = 10; v <= 11; ++v)
    CHECK_FALSE(cache.insert(data(2, v)).replaced);
  CHECK(cache.sample_count() == 5);
  CHECK(values(read(cache)) == std::vector<int>{3, 4, 5, 10, 11});
}

TEST_CASE("keep-last depth 1 replaces the single sample in place", "[dcps][cache]") {
  HistoryCache cache(keep_last(1));
  for (int v = 1; v <= 100; ++v)
    REQUIRE(cache.insert(data(0, v)).outcome == InsertOutcome::accepted);
  CHECK(cache.sample_count() == 1);
  CHECK(values(take(cache)) == std::vector<int>{100});
  CHECK(cache.sample_count() == 0);
}

TEST_CASE("keep-all rejects at max_samples_per_instance with that reason", "[dcps][cache]") {
  auto config = keep_all();
  config.max_samples_per_instance = 2;
  HistoryCache cache(config);
  CHECK(cache.insert(data(1, 1)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2)).outcome == InsertOutcome::accepted);
  const auto r = cache.insert(data(1, 3));
  CHECK(r.outcome == InsertOutcome::rejected);
  CHECK(r.reject_reason == SampleRejectedState::rejected_by_samples_per_instance_limit());
  CHECK_FALSE(r.data_available);
  CHECK(cache.insert(data(2, 1)).outcome == InsertOutcome::accepted);  // other instance fine
  CHECK(values(read(cache)) == std::vector<int>{1, 2, 1});
  // Taking makes room again.
  (void)take(cache);
  CHECK(cache.insert(data(1, 3)).outcome == InsertOutcome::accepted);
}

TEST_CASE("keep-all rejects at max_samples with that reason", "[dcps][cache]") {
  auto config = keep_all();
  config.max_samples = 3;
  HistoryCache cache(config);
  CHECK(cache.insert(data(1, 1)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(2, 1)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(3, 1)).outcome == InsertOutcome::accepted);
  const auto r = cache.insert(data(1, 2));
  CHECK(r.outcome == InsertOutcome::rejected);
  CHECK(r.reject_reason == SampleRejectedState::rejected_by_samples_limit());
  CHECK(r.instance == cache.lookup_instance(key_of(1)));
  // A sample of a new instance is refused for the same reason and creates no instance.
  const auto r4 = cache.insert(data(4, 1));
  CHECK(r4.reject_reason == SampleRejectedState::rejected_by_samples_limit());
  CHECK(cache.instance_count() == 3);
  CHECK(cache.lookup_instance(key_of(4)).is_nil());
}

TEST_CASE("a new instance beyond max_instances is rejected with that reason", "[dcps][cache]") {
  for (bool all : {false, true}) {
    auto config = all ? keep_all() : keep_last(1);
    config.max_instances = 2;
    HistoryCache cache(config);
    CHECK(cache.insert(data(1, 1)).outcome == InsertOutcome::accepted);
    CHECK(cache.insert(data(2, 1)).outcome == InsertOutcome::accepted);
    const auto r = cache.insert(data(3, 1));
    CHECK(r.outcome == InsertOutcome::rejected);
    CHECK(r.reject_reason == SampleRejectedState::rejected_by_instances_limit());
    CHECK(cache.insert(data(1, 2)).outcome == InsertOutcome::accepted);  // existing: fine
    CHECK(cache.instance_count() == 2);
  }
}

TEST_CASE("keep-last with max_samples rejects a sample that would grow the cache",
          "[dcps][cache]") {
  auto config = keep_last(2);
  config.max_samples = 2;
  HistoryCache cache(config);
  CHECK(cache.insert(data(1, 1)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 3)).replaced);  // full instance: replaces, does not grow
  CHECK(cache.insert(data(2, 1)).reject_reason == SampleRejectedState::rejected_by_samples_limit());
}

TEST_CASE("read marks samples read and keeps them; take removes them", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  for (int v = 1; v <= 3; ++v)
    (void)cache.insert(data(1, v));

  auto first = read(cache);
  REQUIRE(first.length() == 3);
  for (const auto& s : first)
    CHECK(s.info().state().sample_state() == SampleState::not_read());
  auto second = read(cache);
  REQUIRE(second.length() == 3);
  for (const auto& s : second)
    CHECK(s.info().state().sample_state() == SampleState::read());
  CHECK(cache.sample_count() == 3);

  (void)cache.insert(data(1, 4));
  CHECK(values(read(cache, select(SampleState::not_read()))) == std::vector<int>{4});
  CHECK(values(take(cache, select(SampleState::read()))) == std::vector<int>{1, 2, 3, 4});
  CHECK(cache.sample_count() == 0);
  CHECK(take(cache).length() == 0);
}

TEST_CASE("take with a sample-state mask removes only the selected samples", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1));
  (void)cache.insert(data(1, 2));
  (void)read(cache);
  (void)cache.insert(data(1, 3));
  CHECK(values(take(cache, select(SampleState::not_read()))) == std::vector<int>{3});
  CHECK(values(read(cache)) == std::vector<int>{1, 2});
}

TEST_CASE("read returns the same data object to every reader of a sample", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  auto c = data(1, 7);
  const void* object = c.data.get();
  (void)cache.insert(std::move(c));
  auto a = read(cache);
  auto b = read(cache);
  CHECK(a[0].shared_data().get() == object);
  CHECK(b[0].shared_data().get() == object);
}

TEST_CASE("view state is NEW until the instance is accessed, per instance", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1));
  (void)cache.insert(data(2, 1));
  auto s1 = read(cache);
  REQUIRE(s1.length() == 2);
  CHECK(s1[0].info().state().view_state() == ViewState::new_view());
  CHECK(s1[1].info().state().view_state() == ViewState::new_view());
  (void)cache.insert(data(1, 2));
  (void)cache.insert(data(3, 1));
  auto s2 = read(cache, select(SampleState::not_read()));
  REQUIRE(s2.length() == 2);
  CHECK(s2[0].data().key == 1);
  CHECK(s2[0].info().state().view_state() == ViewState::not_new_view());
  CHECK(s2[1].data().key == 3);
  CHECK(s2[1].info().state().view_state() == ViewState::new_view());
  CHECK(read(cache, select(DataState::new_instance())).length() == 0);
}

TEST_CASE("dispose makes the instance NOT_ALIVE_DISPOSED; a new write starts a new generation",
          "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1, 1, 1000));
  (void)read(cache);
  const auto d = cache.insert(dispose(1, 1, 1001));
  CHECK(d.outcome == InsertOutcome::accepted);
  CHECK(d.data_available);

  auto after_dispose = read(cache, select(SampleState::read()));
  REQUIRE(after_dispose.length() == 1);
  CHECK(after_dispose[0].info().state().instance_state() == InstanceState::not_alive_disposed());

  (void)cache.insert(data(1, 2, 1, 1002));
  auto all = read(cache);
  REQUIRE(all.length() == 2);  // the invalid sample went away with the rebirth
  const auto& old_info = all[0].info();
  const auto& new_info = all[1].info();
  CHECK(new_info.state().instance_state() == InstanceState::alive());
  CHECK(new_info.state().view_state() == ViewState::new_view());  // NEW again after rebirth
  CHECK(old_info.generation_count().disposed() == 0);
  CHECK(new_info.generation_count().disposed() == 1);
  CHECK(new_info.generation_count().no_writers() == 0);
  CHECK(old_info.rank().absolute_generation() == 1);
  CHECK(new_info.rank().absolute_generation() == 0);
}

TEST_CASE("the last writer's unregister makes the instance NOT_ALIVE_NO_WRITERS", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1, /*writer*/ 1));
  (void)cache.insert(data(1, 2, /*writer*/ 2));
  (void)take(cache);

  const auto u1 = cache.insert(unregister(1, 1));
  CHECK(u1.outcome == InsertOutcome::accepted);
  CHECK_FALSE(u1.data_available);  // writer 2 still has it: still alive
  CHECK(cache.insert(unregister(1, 7)).outcome == InsertOutcome::ignored);  // never registered
  CHECK(cache.insert(unregister(9, 1)).outcome == InsertOutcome::ignored);  // unknown instance

  const auto u2 = cache.insert(unregister(1, 2, 1500));
  CHECK(u2.data_available);
  auto s = read(cache);  // (a take would let the cache reclaim the empty instance)
  REQUIRE(s.length() == 1);
  CHECK_FALSE(s[0].info().valid());
  CHECK(s[0].info().state().instance_state() == InstanceState::not_alive_no_writers());
  CHECK(s[0].info().publication_handle() == writer(2));
  CHECK(s[0].info().reception_timestamp() == ms(1500));

  // A writer coming back: alive again, no_writers generation 1.
  (void)cache.insert(data(1, 3, 3));
  auto back = read(cache);
  REQUIRE(back.length() == 1);
  CHECK(back[0].info().state().instance_state() == InstanceState::alive());
  CHECK(back[0].info().generation_count() == dds::sub::GenerationCount(0, 1));
}

TEST_CASE("an invalid sample surfaces a state change only when no unread sample is pending",
          "[dcps][cache]") {
  HistoryCache cache(keep_all());
  SECTION("unread sample pending: its SampleInfo carries the new state") {
    (void)cache.insert(data(1, 1));
    (void)cache.insert(dispose(1));
    auto s = read(cache);
    REQUIRE(s.length() == 1);
    CHECK(s[0].info().valid());
    CHECK(s[0].info().state().instance_state() == InstanceState::not_alive_disposed());
  }
  SECTION("everything read: an invalid, not-read sample follows the data") {
    (void)cache.insert(data(1, 1));
    (void)read(cache);
    (void)cache.insert(dispose(1, 1, 2000));
    auto unread = read(cache, select(SampleState::not_read()));
    REQUIRE(unread.length() == 1);
    CHECK_FALSE(unread[0].info().valid());
    CHECK(unread[0].info().timestamp() == ms(2000));
    CHECK(unread[0].data().key == 1);  // the key fields come with it
    CHECK(read(cache).length() == 2);
  }
  SECTION("everything taken: the invalid sample is the only one") {
    (void)cache.insert(data(1, 1));
    (void)take(cache);
    (void)cache.insert(dispose(1));
    auto s = take(cache);
    REQUIRE(s.length() == 1);
    CHECK_FALSE(s[0].info().valid());
    CHECK(cache.has_matching(DataState::any()) == false);
  }
}

TEST_CASE("a dispose of an unknown instance creates it disposed, with an invalid sample",
          "[dcps][cache]") {
  HistoryCache cache(keep_all());
  const auto r = cache.insert(dispose(5));
  CHECK(r.outcome == InsertOutcome::accepted);
  CHECK(r.data_available);
  CHECK(r.instance == cache.lookup_instance(key_of(5)));
  auto s = read(cache);
  REQUIRE(s.length() == 1);
  CHECK_FALSE(s[0].info().valid());
  CHECK(s[0].info().state().view_state() == ViewState::new_view());
  CHECK(s[0].info().state().instance_state() == InstanceState::not_alive_disposed());
  // A second dispose changes nothing visible.
  CHECK_FALSE(cache.insert(dispose(5)).data_available);
}

TEST_CASE("an invalid sample without key data reads as a default T", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  auto c = dispose(3);
  c.data.reset();
  (void)cache.insert(std::move(c));
  auto s = read(cache);
  REQUIRE(s.length() == 1);
  CHECK(s[0].data().key == 0);
  CHECK(cache.instance_key_data(s[0].info().instance_handle()) == nullptr);
}

TEST_CASE("ranks are computed over the returned collection", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  // Three generations of instance 1: A (gen 0), B (gen 1), C (gen 2).
  (void)cache.insert(data(1, 100));
  (void)cache.insert(dispose(1));
  (void)cache.insert(data(1, 200));
  (void)cache.insert(unregister(1));
  (void)cache.insert(data(1, 300));

  auto all = read(cache);
  REQUIRE(values(all) == std::vector<int>{100, 200, 300});
  CHECK(all[0].info().rank() == dds::sub::Rank(2, 2, 2));
  CHECK(all[1].info().rank() == dds::sub::Rank(1, 1, 1));
  CHECK(all[2].info().rank() == dds::sub::Rank(0, 0, 0));
  CHECK(all[1].info().generation_count() == dds::sub::GenerationCount(1, 0));
  CHECK(all[2].info().generation_count() == dds::sub::GenerationCount(1, 1));

  // Only the first two: the most recent in the collection is B, the most recent held is C.
  auto two = read(cache, select(DataState::any(), 2));
  REQUIRE(values(two) == std::vector<int>{100, 200});
  CHECK(two[0].info().rank() == dds::sub::Rank(1, 1, 2));
  CHECK(two[1].info().rank() == dds::sub::Rank(0, 0, 1));
}

TEST_CASE("next_instance visits instances in handle order, skipping non-matching ones",
          "[dcps][cache]") {
  HistoryCache cache(keep_all());
  for (int k : {3, 1, 2})
    (void)cache.insert(data(k, k * 10));
  (void)cache.insert(data(3, 31));
  const auto h3 = cache.lookup_instance(key_of(3));
  const auto h1 = cache.lookup_instance(key_of(1));
  const auto h2 = cache.lookup_instance(key_of(2));
  REQUIRE(h3 < h1);
  REQUIRE(h1 < h2);

  std::vector<std::vector<int>> visits;
  ReadSelection sel;
  sel.scope = ReadSelection::Scope::next_instance;
  for (;;) {
    auto s = read(cache, sel);
    if (s.length() == 0) break;
    visits.push_back(values(s));
    sel.instance = s[0].info().instance_handle();
  }
  CHECK(visits == std::vector<std::vector<int>>{{30, 31}, {10}, {20}});

  // Only unread samples: instance 1 gets a new one, the others have none.
  (void)cache.insert(data(1, 11));
  ReadSelection unread;
  unread.scope = ReadSelection::Scope::next_instance;
  unread.state = SampleState::not_read();
  auto first = read(cache, unread);
  CHECK(values(first) == std::vector<int>{11});
  unread.instance = h1;
  CHECK(read(cache, unread).length() == 0);
}

TEST_CASE("read_instance selects one instance; an unknown handle is bad_instance",
          "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1));
  (void)cache.insert(data(2, 2));
  ReadSelection sel;
  sel.scope = ReadSelection::Scope::instance;
  sel.instance = cache.lookup_instance(key_of(2));
  CHECK(values(read(cache, sel)) == std::vector<int>{2});

  sel.instance = dds::core::InstanceHandle(999);
  dds::sub::LoanedSamples<Msg> out;
  spindle::detail::LoanedSamplesSink<Msg> sink(out);
  CHECK(cache.read(sel, sink) == ReadStatus::bad_instance);
  sel.instance = dds::core::InstanceHandle::nil();
  CHECK(cache.take(sel, sink) == ReadStatus::bad_instance);
}

TEST_CASE("max_samples limits the collection across instances", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  for (int k = 1; k <= 3; ++k) {
    for (int v = 0; v < 3; ++v)
      (void)cache.insert(data(k, k * 10 + v));
  }
  CHECK(values(take(cache, select(DataState::any(), 4))) == std::vector<int>{10, 11, 12, 20});
  CHECK(values(take(cache, select(DataState::any(), 0))).empty());
  CHECK(cache.sample_count() == 5);
  auto rest = take(cache, select(DataState::any(), 100));
  CHECK(values(rest) == std::vector<int>{21, 22, 30, 31, 32});
  CHECK(rest[0].info().rank().sample() == 1);
}

TEST_CASE("view and instance state masks select instances", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1));
  (void)cache.insert(data(2, 2));
  (void)cache.insert(dispose(2));
  CHECK(values(read(cache, select(DataState::any_data()))) == std::vector<int>{1});
  CHECK(values(read(cache, select(InstanceState::not_alive_mask()))) == std::vector<int>{2});
  CHECK(read(cache,
             select(DataState(SampleState::any(), ViewState::new_view(), InstanceState::any())))
            .length() == 0);
}

TEST_CASE("BY_SOURCE_TIMESTAMP drops updates older than the instance's latest", "[dcps][cache]") {
  auto config = keep_all();
  config.by_source_timestamp = true;
  HistoryCache cache(config);
  CHECK(cache.insert(data(1, 1, 1, 2000)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2, 2, 1500)).outcome == InsertOutcome::out_of_order);
  CHECK(cache.insert(data(1, 3, 2, 2000)).outcome == InsertOutcome::accepted);  // equal: kept
  CHECK(cache.insert(dispose(1, 2, 1999)).outcome == InsertOutcome::out_of_order);
  CHECK(cache.insert(data(2, 4, 2, 1000)).outcome == InsertOutcome::accepted);  // per instance
  CHECK(values(read(cache)) == std::vector<int>{1, 3, 4});

  HistoryCache by_reception(keep_all());
  (void)by_reception.insert(data(1, 1, 1, 2000));
  CHECK(by_reception.insert(data(1, 2, 2, 1500)).outcome == InsertOutcome::accepted);
  CHECK(values(read(by_reception)) == std::vector<int>{1, 2});
}

TEST_CASE("exclusive ownership keeps only the strongest live writer's samples", "[dcps][cache]") {
  HistoryCache cache(exclusive());
  // writer 1 strength 10, writer 2 strength 5, writer 3 strength 20.
  CHECK(cache.insert(data(1, 1, 1, 1000, 10)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2, 2, 1001, 5)).outcome == InsertOutcome::not_owner);
  CHECK(cache.insert(data(1, 3, 3, 1002, 20)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 4, 1, 1003, 10)).outcome == InsertOutcome::not_owner);
  CHECK(cache.insert(dispose(1, 1, 1003, 10)).outcome == InsertOutcome::not_owner);
  // Ownership is per instance.
  CHECK(cache.insert(data(2, 5, 2, 1004, 5)).outcome == InsertOutcome::accepted);

  // The owner goes away: the strongest remaining registered writer (1) owns it.
  CHECK(cache.writer_lost(writer(3), ms(1005)) == 0);  // writer 1 still registered: alive
  CHECK(cache.insert(data(1, 6, 2, 1006, 5)).outcome == InsertOutcome::not_owner);
  CHECK(cache.insert(data(1, 7, 1, 1007, 10)).outcome == InsertOutcome::accepted);
  // The owner unregisters: the instance is up for grabs again.
  (void)cache.insert(unregister(1, 1));
  CHECK(cache.insert(data(1, 8, 2, 1008, 5)).outcome == InsertOutcome::accepted);
  CHECK(values(read(cache)) == std::vector<int>{1, 3, 7, 8, 5});
}

TEST_CASE("exclusive ownership breaks strength ties by the lower writer handle", "[dcps][cache]") {
  HistoryCache cache(exclusive());
  CHECK(cache.insert(data(1, 1, 5, 1000, 7)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2, 9, 1001, 7)).outcome == InsertOutcome::not_owner);
  CHECK(cache.insert(data(1, 3, 2, 1002, 7)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 4, 5, 1003, 7)).outcome == InsertOutcome::not_owner);
}

TEST_CASE("shared ownership keeps every writer's samples", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  CHECK(cache.insert(data(1, 1, 1, 1000, 10)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2, 2, 1001, 5)).outcome == InsertOutcome::accepted);
}

TEST_CASE("the time-based filter keeps one sample per minimum separation", "[dcps][cache]") {
  auto config = keep_all();
  config.minimum_separation = dds::core::Duration::from_millisecs(100);
  HistoryCache cache(config);
  CHECK(cache.insert(data(1, 1, 1, 1000)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 2, 1, 1050)).outcome == InsertOutcome::filtered);
  CHECK(cache.insert(data(1, 3, 1, 1099)).outcome == InsertOutcome::filtered);
  CHECK(cache.insert(data(1, 4, 1, 1100)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(2, 5, 1, 1101)).outcome == InsertOutcome::accepted);  // per instance
  // A dispose is never filtered, and a rebirth sample passes.
  CHECK(cache.insert(dispose(1, 1, 1120)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 6, 1, 1130)).outcome == InsertOutcome::accepted);
  CHECK(values(read(cache)) == std::vector<int>{1, 4, 6, 5});
}

TEST_CASE("lifespan expires samples on read and through expire()", "[dcps][cache]") {
  ManualClock clock(1000);
  auto config = keep_all();
  config.lifespan = dds::core::Duration::from_millisecs(500);
  HistoryCache cache(config, clock.clock());
  (void)cache.insert(data(1, 1, 1, 1000));
  (void)cache.insert(data(1, 2, 1, 1200));
  auto c = data(1, 3, 1, 1300);
  c.lifespan = dds::core::Duration::from_millisecs(100);  // the writer's shorter lifespan
  (void)cache.insert(std::move(c));
  CHECK(cache.next_expiry() == ms(1400));

  clock.set(1399);
  CHECK(values(read(cache)) == std::vector<int>{1, 2, 3});
  clock.set(1400);
  CHECK(values(read(cache)) == std::vector<int>{1, 2});
  clock.set(1500);
  CHECK(values(read(cache)) == std::vector<int>{2});
  CHECK(cache.next_expiry() == ms(1700));
  CHECK_FALSE(cache.expire(ms(1699)));
  CHECK(cache.expire(ms(1700)));
  CHECK(cache.sample_count() == 0);
  CHECK_FALSE(cache.next_expiry().is_valid());

  // A sample whose lifespan ran out before it arrived is not stored.
  auto late = data(1, 4, 1, 1000);
  late.reception_timestamp = ms(1500);
  CHECK(cache.insert(std::move(late)).outcome == InsertOutcome::expired);
  CHECK(cache.sample_count() == 0);
}

TEST_CASE("autopurge_disposed_samples_delay purges a disposed instance's samples",
          "[dcps][cache]") {
  ManualClock clock(1000);
  auto config = keep_all();
  config.autopurge_disposed_samples_delay = dds::core::Duration::from_millisecs(200);
  HistoryCache cache(config, clock.clock());
  (void)cache.insert(data(1, 1, 1, 1000));
  (void)cache.insert(data(1, 2, 1, 1010));
  (void)cache.insert(dispose(1, 1, 1100));
  (void)cache.insert(data(2, 3, 1, 1100));
  CHECK(cache.next_expiry() == ms(1300));
  clock.set(1299);
  CHECK(values(read(cache)) == std::vector<int>{1, 2, 3});
  clock.set(1300);
  CHECK(values(read(cache)) == std::vector<int>{3});
  // Writer 1 still has instance 1 registered: the (empty) instance stays...
  CHECK_FALSE(cache.lookup_instance(key_of(1)).is_nil());
  // ...until it unregisters.
  (void)cache.insert(unregister(1, 1, 1400));
  CHECK(cache.lookup_instance(key_of(1)).is_nil());
}

TEST_CASE("autopurge_nowriter_samples_delay removes an instance without writers", "[dcps][cache]") {
  ManualClock clock(1000);
  auto config = keep_all();
  config.autopurge_nowriter_samples_delay = dds::core::Duration::from_millisecs(50);
  HistoryCache cache(config, clock.clock());
  (void)cache.insert(data(1, 1, 1, 1000));
  (void)cache.insert(unregister(1, 1, 1000));
  CHECK(cache.writer_lost(writer(1), ms(1000)) == 0);  // nothing left to lose
  clock.set(1049);
  CHECK(read(cache).length() == 1);
  CHECK(cache.expire(ms(1050)));
  CHECK(cache.instance_count() == 0);
  CHECK(cache.lookup_instance(key_of(1)).is_nil());
}

TEST_CASE("a not-alive instance with nothing left is reclaimed", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1));
  (void)cache.insert(unregister(1));
  CHECK(cache.instance_count() == 1);
  (void)take(cache);
  CHECK(cache.instance_count() == 0);
  // The key comes back as a new instance with a new handle and fresh counts.
  const auto r = cache.insert(data(1, 2));
  auto s = read(cache);
  REQUIRE(s.length() == 1);
  CHECK(s[0].info().instance_handle() == r.instance);
  CHECK(s[0].info().generation_count() == dds::sub::GenerationCount(0, 0));
  CHECK(s[0].info().state().view_state() == ViewState::new_view());
}

TEST_CASE("writer_lost makes the instances it alone wrote NOT_ALIVE_NO_WRITERS", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1, 1));
  (void)cache.insert(data(2, 2, 1));
  (void)cache.insert(data(2, 3, 2));
  CHECK(cache.writer_lost(writer(1), ms(5000)) == 1);
  auto s = read(cache);
  REQUIRE(s.length() == 3);
  CHECK(s[0].info().state().instance_state() == InstanceState::not_alive_no_writers());
  CHECK(s[1].info().state().instance_state() == InstanceState::alive());
}

TEST_CASE("instance lookup by key and key data by handle", "[dcps][cache]") {
  HistoryCache cache(keep_last(1));
  CHECK(cache.lookup_instance(key_of(1)).is_nil());
  const auto r = cache.insert(data(1, 10));
  (void)cache.insert(data(1, 11));
  CHECK(cache.lookup_instance(key_of(1)) == r.instance);
  auto key = std::static_pointer_cast<const Msg>(cache.instance_key_data(r.instance));
  REQUIRE(key);
  CHECK(key->key == 1);
  CHECK(cache.instance_key_data(dds::core::InstanceHandle(77)) == nullptr);
}

TEST_CASE("insert_batch applies a delivery batch in order", "[dcps][cache]") {
  auto config = keep_all();
  config.max_samples_per_instance = 2;
  HistoryCache cache(config);
  std::vector<Change> batch;
  for (int v = 1; v <= 3; ++v)
    batch.push_back(data(1, v));
  batch.push_back(dispose(2));
  std::vector<InsertResult> results(batch.size());
  cache.insert_batch(batch, results);
  CHECK(results[0].outcome == InsertOutcome::accepted);
  CHECK(results[1].outcome == InsertOutcome::accepted);
  CHECK(results[2].outcome == InsertOutcome::rejected);
  CHECK(results[3].data_available);
  CHECK(values(read(cache)) == std::vector<int>{1, 2});

  std::vector<InsertResult> too_few(1);
  batch.assign(1, data(3, 1));
  batch.push_back(data(3, 2));
  CHECK_THROWS_AS(cache.insert_batch(batch, too_few), std::invalid_argument);
  CHECK(cache.lookup_instance(key_of(3)).is_nil());
}

TEST_CASE("state counts follow every transition", "[dcps][cache]") {
  HistoryCache cache(keep_all());
  (void)cache.insert(data(1, 1));
  (void)cache.insert(data(1, 2));
  CHECK(cache.count_matching(DataState::new_data()) == 2);
  CHECK(cache.count_matching(DataState::new_instance()) == 2);
  (void)read(cache, select(DataState::any(), 1));
  CHECK(cache.count_matching(SampleState::read()) == 1);
  CHECK(cache.count_matching(DataState::new_instance()) == 0);
  (void)cache.insert(dispose(1));
  CHECK(cache.count_matching(InstanceState::not_alive_disposed()) == 2);
  CHECK(cache.count_matching(DataState::any_data()) == 0);
  (void)take(cache);
  CHECK_FALSE(cache.has_matching(DataState::any()));
}

// PRESENTATION ordered access (TOPIC or GROUP scope): samples come out in the order they
// went in, across instances, not grouped by instance.
TEST_CASE("ordered access hands samples out in insertion order across instances", "[dcps][cache]") {
  HistoryCacheConfig config = keep_all();
  config.ordered = true;
  HistoryCache cache(config);
  // Instances 2, 1, 2, 3, 1 interleaved, as two writers' samples arrive.
  const std::vector<std::pair<int, int>> in{{2, 20}, {1, 10}, {2, 21}, {3, 30}, {1, 11}, {3, 31}};
  for (const auto& [k, v] : in)
    (void)cache.insert(data(k, v));

  auto first = read(cache, select(DataState::any(), 4));
  REQUIRE(values(first) == std::vector<int>{20, 10, 21, 30});
  // Ranks count within the collection, per instance: 20 has 21 after it, 10 nothing.
  CHECK(first[0].info().rank().sample() == 1);
  CHECK(first[1].info().rank().sample() == 0);
  CHECK(first[2].info().rank().sample() == 0);

  // The rest, then everything taken in one go keeps the same order.
  CHECK(values(read(cache, select(DataState::new_data()))) == std::vector<int>{11, 31});
  auto all = take(cache);
  CHECK(values(all) == std::vector<int>{20, 10, 21, 30, 11, 31});
  CHECK(cache.sample_count() == 0);

  // A dispose's invalid sample takes its place in the order too.
  (void)cache.insert(data(5, 50));
  (void)cache.insert(dispose(4));
  (void)cache.insert(data(6, 60));
  auto mixed = take(cache);
  REQUIRE(mixed.length() == 3);
  CHECK(mixed[0].data().value == 50);
  CHECK_FALSE(mixed[1].info().valid());
  CHECK(mixed[1].info().state().instance_state() == InstanceState::not_alive_disposed());
  CHECK(mixed[2].data().value == 60);
}

TEST_CASE("ordered access keeps grouped order for one instance and next_instance",
          "[dcps][cache]") {
  HistoryCacheConfig config = keep_all();
  config.ordered = true;
  HistoryCache cache(config);
  for (const auto& [k, v] : std::vector<std::pair<int, int>>{{2, 20}, {1, 10}, {2, 21}})
    (void)cache.insert(data(k, v));
  // Per-instance selections are that instance's samples, oldest first.
  const auto h2 = cache.lookup_instance(key_of(2));
  ReadSelection one = select();
  one.scope = ReadSelection::Scope::instance;
  one.instance = h2;
  CHECK(values(read(cache, one)) == std::vector<int>{20, 21});
  ReadSelection next = select();
  next.scope = ReadSelection::Scope::next_instance;
  CHECK(values(take(cache, next)) == std::vector<int>{20, 21});
  // A shared sequence orders samples across caches (a GROUP subscriber's readers).
  auto seq = std::make_shared<std::atomic<std::uint64_t>>(0);
  HistoryCache a(config, &dds::core::Time::now, seq);
  HistoryCache b(config, &dds::core::Time::now, seq);
  (void)a.insert(data(1, 1));
  (void)b.insert(data(1, 2));
  (void)a.insert(data(2, 3));
  CHECK(a.sequence_of(DataState::any(), 10) == std::vector<std::uint64_t>{1, 3});
  CHECK(b.sequence_of(DataState::any(), 10) == std::vector<std::uint64_t>{2});
  CHECK(a.sequence_of(DataState::any(), 1) == std::vector<std::uint64_t>{1});
}

// Repair (docs/dcps.md, "Repair"): a change numbered by its writer at or below the last one
// the instance applied from that writer is a duplicate, whichever of the stream and a repair
// brought it first; a newer one is applied. Per writer and instance.
TEST_CASE("a writer's change numbered at or below the instance's last is a duplicate",
          "[dcps][cache][repair]") {
  HistoryCache cache(keep_last(4));
  auto numbered = [](Change c, std::uint64_t seq) {
    c.writer_seq = seq;
    return c;
  };
  REQUIRE(cache.insert(numbered(data(1, 10), 5)).outcome == InsertOutcome::accepted);
  // The stream's copy of what a repair brought, and an older change of the same instance.
  CHECK(cache.insert(numbered(data(1, 10), 5)).outcome == InsertOutcome::duplicate);
  CHECK(cache.insert(numbered(data(1, 9), 3)).outcome == InsertOutcome::duplicate);
  // Another instance, another writer, and unnumbered changes are not compared.
  CHECK(cache.insert(numbered(data(2, 20), 3)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(numbered(data(1, 30, 2), 3)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 11)).outcome == InsertOutcome::accepted);
  // A dispose moves the writer's number on too: an older data change does not revive it.
  CHECK(cache.insert(numbered(dispose(1), 7)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(numbered(data(1, 12), 6)).outcome == InsertOutcome::duplicate);
  CHECK(cache.insert(numbered(data(1, 13), 8)).outcome == InsertOutcome::accepted);
  CHECK(values(take(cache)) == std::vector<int>{10, 30, 11, 13, 20});
}

// Repair across writers: a change placed before the latest one its instance applied, in the
// total order (view, then the subgroup's sequence within a view), is superseded, whichever
// writer wrote it; places in one view but of two subgroups do not compare.
TEST_CASE("a change placed before the instance's latest in the total order is superseded",
          "[dcps][cache][repair]") {
  HistoryCache cache(keep_last(4));
  auto placed = [](Change c, std::uint64_t epoch, std::uint32_t subgroup, std::int64_t order) {
    c.pos_epoch = epoch;
    c.pos_subgroup = subgroup;
    c.pos_order = order;
    return c;
  };
  REQUIRE(cache.insert(placed(data(1, 20, 2), 3, 1, 20)).outcome == InsertOutcome::accepted);
  // Writer 1's change of an earlier place (a repair that came after writer 2's): superseded.
  CHECK(cache.insert(placed(data(1, 10, 1), 3, 1, 10)).outcome == InsertOutcome::superseded);
  CHECK(cache.insert(placed(data(1, 11, 1), 2, 4, 99)).outcome == InsertOutcome::superseded);
  // Another subgroup in the same view, a later view, an unplaced change: applied.
  CHECK(cache.insert(placed(data(1, 30, 1), 3, 2, 5)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(placed(data(1, 40, 1), 4, 1, 0)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(data(1, 41, 3)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(placed(data(1, 42, 2), 3, 1, 21)).outcome == InsertOutcome::superseded);
  // Another instance has its own place.
  CHECK(cache.insert(placed(data(2, 50, 1), 3, 1, 1)).outcome == InsertOutcome::accepted);
  CHECK(values(take(cache)) == std::vector<int>{20, 30, 40, 41, 50});
  // Its participant halted and rejoins a domain that numbers its views afresh.
  cache.forget_places();
  CHECK(cache.insert(placed(data(1, 60, 2), 1, 0, 3)).outcome == InsertOutcome::accepted);
  CHECK(cache.insert(placed(data(1, 61, 2), 1, 0, 2)).outcome == InsertOutcome::superseded);
}
