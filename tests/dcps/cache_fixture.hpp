// Helpers for the history-cache tests: a keyed test type, Change builders, typed
// read/take through LoanedSamplesSink, and a manual clock.
//
// Threading: ManualClock may be advanced from one thread while the cache reads it from
// another (atomic); the rest is single-threaded test scaffolding.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/core/Entity.hpp>
#include <dds/core/Time.hpp>
#include <dds/sub/LoanedSamples.hpp>
#include <spindle/detail/entity_delegate.hpp>

#include "dcps/history_cache.hpp"

namespace spindle::dcps::test {

struct Msg {
  int key = 0;
  int value = 0;
};

inline KeyHash key_of(int k) {
  KeyHash h{};
  h[0] = static_cast<std::uint8_t>(k);
  h[1] = static_cast<std::uint8_t>(k >> 8);
  return h;
}

inline dds::core::Time ms(std::int64_t t) {
  return dds::core::Time::from_millisecs(static_cast<std::uint64_t>(t));
}

inline dds::core::InstanceHandle writer(std::uint64_t w) {
  return dds::core::InstanceHandle(w);
}

// A data change from `w` for instance `k` with source time `t_ms` (reception the same).
inline Change data(int k, int value, std::uint64_t w = 1, std::int64_t t_ms = 1000,
                   std::int32_t strength = 0) {
  Change c;
  c.key = key_of(k);
  c.kind = ChangeKind::data;
  c.data = std::make_shared<const Msg>(Msg{k, value});
  c.writer = writer(w);
  c.source_timestamp = ms(t_ms);
  c.reception_timestamp = ms(t_ms);
  c.ownership_strength = strength;
  return c;
}

inline Change dispose(int k, std::uint64_t w = 1, std::int64_t t_ms = 1000,
                      std::int32_t strength = 0) {
  Change c = data(k, 0, w, t_ms, strength);
  c.kind = ChangeKind::dispose;
  c.data = std::make_shared<const Msg>(Msg{k, -1});  // key fields only
  return c;
}

inline Change unregister(int k, std::uint64_t w = 1, std::int64_t t_ms = 1000) {
  Change c = data(k, 0, w, t_ms);
  c.kind = ChangeKind::unregister;
  c.data.reset();
  return c;
}

inline ReadSelection select(dds::sub::status::DataState state = dds::sub::status::DataState::any(),
                            std::int32_t max = kLengthUnlimited) {
  ReadSelection s;
  s.state = state;
  s.max_samples = max;
  return s;
}

inline dds::sub::LoanedSamples<Msg> read(HistoryCache& c, const ReadSelection& s = select()) {
  dds::sub::LoanedSamples<Msg> out;
  spindle::detail::LoanedSamplesSink<Msg> sink(out);
  REQUIRE(c.read(s, sink) == ReadStatus::ok);
  return out;
}

inline dds::sub::LoanedSamples<Msg> take(HistoryCache& c, const ReadSelection& s = select()) {
  dds::sub::LoanedSamples<Msg> out;
  spindle::detail::LoanedSamplesSink<Msg> sink(out);
  REQUIRE(c.take(s, sink) == ReadStatus::ok);
  return out;
}

// The values of the valid samples, in order.
inline std::vector<int> values(const dds::sub::LoanedSamples<Msg>& samples) {
  std::vector<int> out;
  for (const auto& s : samples) {
    if (s.info().valid()) out.push_back(s.data().value);
  }
  return out;
}

// What the entity layer's DataReader<T> offers ReadCondition: an Entity with the internal
// accessor to its history cache.
class FakeReader : public dds::core::Entity {
 public:
  explicit FakeReader(std::shared_ptr<HistoryCache> cache)
      : Entity(std::make_shared<spindle::detail::EntityDelegate>(dds::core::InstanceHandle(100))),
        cache_(std::move(cache)) {}
  [[nodiscard]] std::shared_ptr<HistoryCache> spindle_history_cache() const { return cache_; }

 private:
  std::shared_ptr<HistoryCache> cache_;
};

class ManualClock {
 public:
  explicit ManualClock(std::int64_t start_ms)
      : now_ms_(std::make_shared<std::atomic<std::int64_t>>(start_ms)) {}
  void set(std::int64_t t_ms) { now_ms_->store(t_ms); }
  HistoryCache::Clock clock() const {
    auto now = now_ms_;
    return [now] { return ms(now->load()); };
  }

 private:
  std::shared_ptr<std::atomic<std::int64_t>> now_ms_;
};

}  // namespace spindle::dcps::test
