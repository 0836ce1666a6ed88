// The subscriber-side data model: DataState masks, SampleInfo, Sample and LoanedSamples
// (iteration as applications write it, sharing, moves). This executable also links one
// translation unit per DCPS header, which proves each compiles on its own.
#include <atomic>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/sub/LoanedSamples.hpp>
#include <dds/sub/SampleInfo.hpp>
#include <dds/sub/status/DataState.hpp>
#include <spindle/detail/recycle.hpp>
#include <spindle/detail/sample_sink.hpp>

using namespace dds::sub::status;
using dds::sub::LoanedSamples;
using dds::sub::SampleInfo;

namespace {

struct Text {
  std::string s;
};

// Fills a LoanedSamples<Text> as a history cache would.
LoanedSamples<Text> make_samples(int n) {
  LoanedSamples<Text> out;
  spindle::detail::LoanedSamplesSink<Text> sink(out);
  sink.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const SampleInfo info(
        dds::core::Time(i, 0), dds::core::Time(i, 5),
        DataState(SampleState::not_read(), ViewState::new_view(), InstanceState::alive()), {0, 0},
        {n - 1 - i, 0, 0}, true, dds::core::InstanceHandle(1), dds::core::InstanceHandle(2));
    Text t{std::to_string(i)};
    t.s.insert(0, 1, 's');  // not "s" + to_string(): GCC 12 -O3 false -Wrestrict (bug 105329)
    sink.push(std::make_shared<const Text>(std::move(t)), info);
  }
  return out;
}

}  // namespace

TEST_CASE("state bit values are the DCPS ones", "[dcps][model]") {
  CHECK(SampleState::read().to_ulong() == 1);
  CHECK(SampleState::not_read().to_ulong() == 2);
  CHECK(ViewState::new_view().to_ulong() == 1);
  CHECK(ViewState::not_new_view().to_ulong() == 2);
  CHECK(InstanceState::alive().to_ulong() == 1);
  CHECK(InstanceState::not_alive_disposed().to_ulong() == 2);
  CHECK(InstanceState::not_alive_no_writers().to_ulong() == 4);
  CHECK(InstanceState::not_alive_mask().to_ulong() == 6);
  CHECK(SampleState::any().to_ulong() == 0xffff);
}

TEST_CASE("DataState presets and matching", "[dcps][model]") {
  const DataState one(SampleState::not_read(), ViewState::new_view(), InstanceState::alive());
  CHECK(DataState::any().matches(one));
  CHECK(DataState().matches(one));
  CHECK(DataState::new_data().matches(one));
  CHECK(DataState::any_data().matches(one));
  CHECK(DataState::new_instance().matches(one));
  const DataState disposed(SampleState::read(), ViewState::not_new_view(),
                           InstanceState::not_alive_disposed());
  CHECK_FALSE(DataState::new_data().matches(disposed));
  CHECK_FALSE(DataState::any_data().matches(disposed));
  CHECK(DataState(InstanceState::not_alive_mask()).matches(disposed));
  CHECK(DataState::new_data().sample_state() == SampleState::not_read());
  CHECK(DataState::new_data().view_state() == ViewState::any());
  CHECK(DataState::new_instance().view_state() == ViewState::new_view());

  DataState built;
  built << SampleState::read() << InstanceState::alive();
  SampleState ss;
  built >> ss;
  CHECK(ss == SampleState::read());
  CHECK(built.instance_state() == InstanceState::alive());
  CHECK(built.view_state() == ViewState::any());
  built.view_state(ViewState::new_view());
  CHECK(built == DataState(SampleState::read(), ViewState::new_view(), InstanceState::alive()));
}

TEST_CASE("SampleInfo reports what it was built with", "[dcps][model]") {
  const SampleInfo info(dds::core::Time(5, 6), dds::core::Time(7, 8), DataState::new_data(), {2, 3},
                        {4, 5, 6}, false, dds::core::InstanceHandle(10),
                        dds::core::InstanceHandle(11));
  CHECK(info.timestamp() == dds::core::Time(5, 6));
  CHECK(info.reception_timestamp() == dds::core::Time(7, 8));
  CHECK(info.state() == DataState::new_data());
  CHECK(info.generation_count().disposed() == 2);
  CHECK(info.generation_count().no_writers() == 3);
  CHECK(info.rank().sample() == 4);
  CHECK(info.rank().generation() == 5);
  CHECK(info.rank().absolute_generation() == 6);
  CHECK_FALSE(info.valid());
  CHECK(info.instance_handle() == dds::core::InstanceHandle(10));
  CHECK(info.publication_handle() == dds::core::InstanceHandle(11));
  CHECK_FALSE(SampleInfo().timestamp().is_valid());
}

TEST_CASE("LoanedSamples iterate as applications write it", "[dcps][model]") {
  static_assert(
      std::is_same_v<std::iterator_traits<LoanedSamples<Text>::const_iterator>::iterator_category,
                     std::random_access_iterator_tag>);
  LoanedSamples<Text> samples;
  CHECK(samples.length() == 0);
  CHECK(samples.begin() == samples.end());
  samples = make_samples(3);
  REQUIRE(samples.length() == 3);

  std::string seen;
  for (const auto& s : samples)
    seen += s.data().s;
  CHECK(seen == "s0s1s2");

  int ranks = 0;
  for (LoanedSamples<Text>::const_iterator it = samples.begin(); it < samples.end(); ++it) {
    ranks += it->info().rank().sample();
  }
  CHECK(ranks == 3);
  CHECK((samples.begin() + 2)->data().s == "s2");
  CHECK(samples.end() - samples.begin() == 3);
  CHECK(samples.begin()->info().timestamp() == dds::core::Time(0, 0));
}

TEST_CASE("LoanedSamples move cheaply and copies share the data", "[dcps][model]") {
  auto a = make_samples(2);
  const Text* first = &a.begin()->data();
  LoanedSamples<Text> b = std::move(a);
  CHECK(&b.begin()->data() == first);  // no copy of T
  LoanedSamples<Text> c = b;
  CHECK(&c.begin()->data() == first);
  LoanedSamples<Text> d = dds::sub::move(c);
  CHECK(d.length() == 2);
  CHECK(&d[0].data() == first);
  CHECK(d[0].shared_data().use_count() == 2);  // b and d; c gave its share to d
}

TEST_CASE("an invalid sample without key data becomes a default T", "[dcps][model]") {
  LoanedSamples<Text> out;
  spindle::detail::LoanedSamplesSink<Text> sink(out);
  sink.push(nullptr, SampleInfo());
  REQUIRE(out.length() == 1);
  CHECK(out.begin()->data().s.empty());
  CHECK_FALSE(out.begin()->info().valid());
}

TEST_CASE("Sample holds data and info", "[dcps][model]") {
  dds::sub::Sample<Text> s(Text{"x"}, SampleInfo());
  CHECK(s.data().s == "x");
  s.data(Text{"y"});
  CHECK(s.data().s == "y");
  dds::sub::Sample<Text> empty;
  CHECK(empty.data().s.empty());
}

TEST_CASE("a take's vector is recycled: the next take finds it, emptied, with its capacity",
          "[dcps][model]") {
  const Text* first = nullptr;
  {
    auto samples = make_samples(40);
    REQUIRE(samples.length() == 40);
    first = &samples[0].data();
    // A copy shares the data objects and has a vector of its own.
    LoanedSamples<Text> copy = samples;
    CHECK(copy.length() == 40);
    CHECK(&copy[0].data() == first);
    CHECK(&copy[0] != &samples[0]);
    // A move leaves the source empty and usable.
    LoanedSamples<Text> moved = std::move(copy);
    CHECK(copy.length() == 0);  // NOLINT(bugprone-use-after-move): the PSM's moved-from state
    CHECK(copy.begin() == copy.end());
    CHECK(moved.length() == 40);
  }
  // Both vectors went back to the pool; the next takes reuse them without growing.
  auto again = make_samples(40);
  const auto* storage = &again[0];
  auto more = make_samples(3);
  CHECK(more.length() == 3);
  auto third = make_samples(40);
  CHECK(&third[0] != storage);  // two held at once: two vectors
  (void)first;
}

TEST_CASE("recycled blocks: each block put is got by exactly one thread; a full pool refuses",
          "[dcps][model]") {
  struct Key {};
  using Pool = spindle::detail::SlotPool<Key, 16>;
  auto& pool = Pool::instance();
  std::vector<std::unique_ptr<int>> blocks;
  for (int i = 0; i < 16; ++i) {
    blocks.push_back(std::make_unique<int>(i));
    REQUIRE(pool.put(blocks.back().get()));
  }
  int extra = 0;
  CHECK_FALSE(pool.put(&extra));  // full: the caller keeps (and frees) it
  // Four threads take and give back, many times: a block is never held by two at once.
  std::vector<std::atomic<int>> holders(16);
  std::atomic<bool> clash{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20000; ++round) {
        auto* p = static_cast<int*>(pool.get());
        if (p == nullptr) continue;
        auto& h = holders[static_cast<std::size_t>(*p)];
        if (h.fetch_add(1) != 0) clash = true;
        h.fetch_sub(1);
        if (!pool.put(p)) clash = true;  // there is always room for what was taken
      }
    });
  }
  for (auto& t : threads)
    t.join();
  CHECK_FALSE(clash);
  int count = 0;
  while (pool.get() != nullptr)
    ++count;
  CHECK(count == 16);
}

TEST_CASE("decoded samples come from recycled blocks", "[dcps][model]") {
  // As type_support<T>() decodes: one block for the sample and its count, from the pool of
  // blocks of that size; released, the next sample of that size lands in the same block.
  using Alloc = spindle::detail::PoolAllocator<Text>;
  auto a = std::allocate_shared<Text>(Alloc{}, Text{"hello"});
  const void* where = a.get();
  a.reset();
  auto b = std::allocate_shared<Text>(Alloc{}, Text{"again"});
  CHECK(static_cast<const void*>(b.get()) == where);
  CHECK(b->s == "again");
  // Several alive at once: distinct blocks.
  auto c = std::allocate_shared<Text>(Alloc{}, Text{"third"});
  CHECK(c.get() != b.get());
}
