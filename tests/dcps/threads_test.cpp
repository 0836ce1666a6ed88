// Concurrency: a producer inserting delivery batches while a consumer takes through a
// WaitSet and other threads read, look up and count; conditions attached, detached,
// created and destroyed while their sources change. Meant for the sanitize preset
// (ASan/UBSan); a deadlock shows as the CTest timeout.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>
#include <vector>

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
using dds::core::cond::GuardCondition;
using dds::core::cond::StatusCondition;
using dds::core::cond::WaitSet;
using dds::sub::status::DataState;
using namespace spindle::dcps;
using namespace spindle::dcps::test;

TEST_CASE("concurrent insert, take and read lose and duplicate nothing", "[dcps][threads]") {
  constexpr int kInstances = 4;
  constexpr int kPerInstance = 5000;
  constexpr int kTotal = kInstances * kPerInstance;
  HistoryCacheConfig config;
  config.keep_all = true;
  auto cache = std::make_shared<HistoryCache>(config);
  FakeReader reader(cache);
  dds::sub::cond::ReadCondition rc(reader, DataState::any());
  GuardCondition done;
  WaitSet ws;
  ws += rc;
  ws += done;

  std::jthread producer([&] {
    std::vector<Change> batch;
    std::vector<InsertResult> results(16);
    for (int v = 0; v < kPerInstance; ++v) {
      for (int k = 0; k < kInstances; ++k)
        batch.push_back(data(k, v, 1, 1000 + v));
      if (batch.size() >= 16 || v + 1 == kPerInstance) {
        results.resize(batch.size());
        cache->insert_batch(batch, results);
        for (const auto& r : results)
          REQUIRE(r.outcome == InsertOutcome::accepted);
        batch.clear();
      }
    }
  });
  std::atomic<bool> stop{false};
  std::jthread browser([&] {
    while (!stop) {
      (void)read(*cache, select(DataState::any(), 8));
      (void)cache->lookup_instance(key_of(1));
      (void)cache->count_matching(DataState::new_data());
    }
  });

  std::map<int, int> next_value;
  int received = 0;
  while (received < kTotal) {
    REQUIRE_NOTHROW(ws.wait(Duration::from_secs(30)));
    for (const auto& s : take(*cache)) {
      REQUIRE(s.info().valid());
      REQUIRE(s.data().value == next_value[s.data().key]);  // in order, no gap, no duplicate
      ++next_value[s.data().key];
      ++received;
    }
  }
  stop = true;
  CHECK(received == kTotal);
  CHECK(cache->sample_count() == 0);
  CHECK_FALSE(rc.trigger_value());
}

TEST_CASE("conditions come and go while their sources change", "[dcps][threads]") {
  HistoryCacheConfig config;
  config.depth = 2;
  auto cache = std::make_shared<HistoryCache>(config);
  FakeReader reader(cache);
  dds::core::Entity entity(
      std::make_shared<spindle::detail::EntityDelegate>(dds::core::InstanceHandle(2)));
  StatusCondition sc(entity);
  GuardCondition guard;
  WaitSet ws;
  ws += guard;
  std::atomic<bool> stop{false};
  std::atomic<int> wakes{0};

  std::jthread source([&] {
    for (int v = 0; !stop; ++v) {
      (void)cache->insert(data(v % 3, v, 1, 1000 + v));
      (void)entity->statuses().sample_lost(1);
      if (v % 7 == 0) (void)take(*cache);
      if (v % 5 == 0) (void)entity->statuses().read<dds::core::status::SampleLostStatus>();
    }
  });
  std::jthread churn([&] {
    while (!stop) {
      dds::sub::cond::ReadCondition rc(reader, DataState::new_data());
      ws += rc;
      ws += sc;
      std::this_thread::yield();
      ws -= rc;
      ws -= sc;
      guard.trigger_value(true);
      guard.trigger_value(false);
    }
  });
  std::jthread waiter([&] {
    while (!stop) {
      try {
        wakes += static_cast<int>(ws.wait(Duration::from_millisecs(5)).size());
      } catch (const dds::core::TimeoutError&) {
      }
    }
  });
  std::this_thread::sleep_for(300ms);
  stop = true;
  guard.trigger_value(true);
  source.join();
  churn.join();
  waiter.join();
  CHECK(wakes.load() > 0);
}
