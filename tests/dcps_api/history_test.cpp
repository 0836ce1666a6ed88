// DCPS behaviour, single participant: HISTORY (KEEP_LAST depth per instance, KEEP_ALL),
// RESOURCE_LIMITS with SAMPLE_REJECTED, and what read and take return — states,
// instance and next-instance selection, max_samples. Public API only.
#include <algorithm>

#include "api_fixture.hpp"

namespace dcps_api {
namespace {

TEST_CASE("KEEP_LAST n keeps the last n samples of each instance", "[history]") {
  Participant p;
  auto [reader, writer] = p.matched_pair(reader_qos(policy::History::KeepLast(3)));
  for (std::uint64_t i = 1; i <= 5; ++i) {
    writer.write(flight(1, i));
    writer.write(flight(2, 100 + i));
  }
  flush(writer);

  const auto a = reader.select().instance(reader.lookup_instance(flight(1, 0))).take();
  CHECK(seqs(a) == std::vector<std::uint64_t>{3, 4, 5});
  const auto b = reader.select().instance(reader.lookup_instance(flight(2, 0))).take();
  CHECK(seqs(b) == std::vector<std::uint64_t>{103, 104, 105});
  CHECK(reader.take().length() == 0);
}

TEST_CASE("KEEP_ALL keeps every sample while KEEP_LAST 1 keeps only the latest", "[history]") {
  Participant p;
  auto all = p.reader(reader_qos(policy::History::KeepAll()));
  auto last = p.reader(reader_qos(policy::History::KeepLast(1)));
  auto writer = p.writer();
  wait_matched(writer, all, 2);
  wait_matched(writer, last, 2);
  std::vector<std::uint64_t> written;
  for (std::uint64_t i = 1; i <= 20; ++i) {
    writer.write(flight(7, i));
    written.push_back(i);
  }
  flush(writer);
  CHECK(seqs(all.read()) == written);
  CHECK(seqs(last.read()) == std::vector<std::uint64_t>{20});
}

TEST_CASE("RESOURCE_LIMITS max_samples_per_instance rejects samples under KEEP_ALL",
          "[resource_limits]") {
  Participant p;
  auto q = reader_qos(policy::History::KeepAll());
  q << policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED, 2);
  auto [reader, writer] = p.matched_pair(q);
  deliver_series(writer, 3, 4);

  REQUIRE(eventually([&] {
    return (reader.status_changes() & dds::core::status::StatusMask::sample_rejected()).any();
  }));
  const auto rejected = reader.sample_rejected_status();
  CHECK(rejected.total_count() == 2);
  CHECK(rejected.total_count_change() == 2);
  CHECK(rejected.last_reason() ==
        dds::core::status::SampleRejectedState::rejected_by_samples_per_instance_limit());
  CHECK(rejected.last_instance_handle() == reader.lookup_instance(flight(3, 0)));
  // Reading the status reset its change field.
  CHECK(reader.sample_rejected_status().total_count_change() == 0);
  // The first two were kept; once taken, the instance has room again.
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{1, 2});
  deliver(writer, flight(3, 5));
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{5});
  CHECK(reader.sample_rejected_status().total_count() == 2);
}

TEST_CASE("RESOURCE_LIMITS max_instances and max_samples reject with their own reason",
          "[resource_limits]") {
  Participant p;
  auto by_instances = reader_qos(policy::History::KeepAll());
  by_instances << policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, 2,
                                         dds::core::LENGTH_UNLIMITED);
  auto by_samples = reader_qos(policy::History::KeepAll());
  by_samples << policy::ResourceLimits(3, dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED);
  auto r_instances = p.reader(by_instances);
  auto r_samples = p.reader(by_samples);
  auto writer = p.writer();
  wait_matched(writer, r_instances, 2);
  wait_matched(writer, r_samples, 2);
  for (std::uint32_t id = 1; id <= 3; ++id)
    writer.write(flight(id, id));
  deliver(writer, flight(1, 4));

  // Instances 1 and 2 fit; instance 3 does not (samples 1, 2 and 4 are kept).
  REQUIRE(eventually([&] { return r_instances.sample_rejected_status().total_count() == 1; }));
  CHECK(r_instances.sample_rejected_status().last_reason() ==
        dds::core::status::SampleRejectedState::rejected_by_instances_limit());
  auto kept = seqs(r_instances.take());
  std::sort(kept.begin(), kept.end());
  CHECK(kept == std::vector<std::uint64_t>{1, 2, 4});

  // Three samples in all: the fourth is rejected.
  REQUIRE(eventually([&] { return r_samples.sample_rejected_status().total_count() == 1; }));
  CHECK(r_samples.sample_rejected_status().last_reason() ==
        dds::core::status::SampleRejectedState::rejected_by_samples_limit());
  CHECK(r_samples.take().length() == 3);
}

TEST_CASE("read marks samples READ and keeps them; take removes them", "[read_take]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  deliver_series(writer, 1, 3);

  const auto first = reader.read();
  REQUIRE(first.length() == 3);
  for (const auto& s : first) {
    CHECK(s.info().valid());
    CHECK(s.info().state().sample_state() == status::SampleState::not_read());
    CHECK(s.info().state().view_state() == status::ViewState::new_view());
    CHECK(s.info().state().instance_state() == status::InstanceState::alive());
  }
  const auto second = reader.read();
  REQUIRE(second.length() == 3);
  for (const auto& s : second) {
    CHECK(s.info().state().sample_state() == status::SampleState::read());
    CHECK(s.info().state().view_state() == status::ViewState::not_new_view());
  }
  CHECK(reader.select().state(status::DataState::new_data()).read().length() == 0);

  deliver(writer, flight(1, 4));
  CHECK(seqs(reader.select().state(status::DataState::new_data()).take()) ==
        std::vector<std::uint64_t>{4});
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{1, 2, 3});
  CHECK(reader.take().length() == 0);
  CHECK(reader.read().length() == 0);
}

TEST_CASE("select().state() selects by sample, view and instance state", "[read_take]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  deliver(writer, flight(1, 1), flight(2, 2));
  // Seeing instance 1 makes it NOT_NEW; instance 2 stays NEW.
  CHECK(seqs(reader.select().instance(reader.lookup_instance(flight(1, 0))).read()) ==
        std::vector<std::uint64_t>{1});
  deliver(writer, flight(1, 3));

  const status::DataState new_view(status::SampleState::any(), status::ViewState::new_view(),
                                   status::InstanceState::any());
  CHECK(seqs(reader.select().state(new_view).read()) == std::vector<std::uint64_t>{2});
  const status::DataState not_new_unread(status::SampleState::not_read(),
                                         status::ViewState::not_new_view(),
                                         status::InstanceState::alive());
  CHECK(seqs(reader.select().state(not_new_unread).read()) == std::vector<std::uint64_t>{3});
  CHECK(seqs(reader.select().state(status::SampleState::read()).read()) ==
        std::vector<std::uint64_t>{1, 3, 2});
  CHECK(reader.select().state(status::InstanceState::not_alive_mask()).read().length() == 0);
}

TEST_CASE("select().instance(h) reads one instance; an unknown handle is an invalid argument",
          "[read_take]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  deliver(writer, flight(10, 1), flight(20, 2), flight(10, 3));
  const auto h = reader.lookup_instance(flight(10, 0));
  REQUIRE_FALSE(h.is_nil());
  const auto got = reader.select().instance(h).take();
  CHECK(seqs(got) == std::vector<std::uint64_t>{1, 3});
  for (const auto& s : got)
    CHECK(s.info().instance_handle() == h);
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{2});
  CHECK_THROWS_AS(reader.select().instance(dds::core::InstanceHandle(987654321)).read(),
                  dds::core::InvalidArgumentError);
}

TEST_CASE("select().next_instance(h) visits every instance once, in handle order", "[read_take]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  for (std::uint32_t id : {5u, 3u, 9u})
    for (std::uint64_t i = 0; i < 2; ++i)
      writer.write(flight(id, id * 10 + i));
  flush(writer);

  std::vector<dds::core::InstanceHandle> visited;
  std::vector<std::uint32_t> ids;
  dds::core::InstanceHandle h = dds::core::InstanceHandle::nil();
  for (int guard = 0; guard < 10; ++guard) {
    const auto got = reader.select().next_instance(h).read();
    if (got.length() == 0) break;
    CHECK(got.length() == 2);
    h = got[0].info().instance_handle();
    for (const auto& s : got)
      CHECK(s.info().instance_handle() == h);
    visited.push_back(h);
    ids.push_back(got[0].data().aircraft_id());
  }
  REQUIRE(visited.size() == 3);
  CHECK(std::is_sorted(visited.begin(), visited.end()));
  // Instances are created in arrival order, so handles follow it.
  CHECK(ids == std::vector<std::uint32_t>{5, 3, 9});
}

TEST_CASE("select().max_samples(n) returns at most n samples, oldest first", "[read_take]") {
  Participant p;
  auto [reader, writer] = p.matched_pair();
  deliver_series(writer, 1, 5);
  CHECK(seqs(reader.select().max_samples(2).read()) == std::vector<std::uint64_t>{1, 2});
  CHECK(seqs(reader.select().max_samples(2).take()) == std::vector<std::uint64_t>{1, 2});
  CHECK(seqs(reader.select().max_samples(10).take()) == std::vector<std::uint64_t>{3, 4, 5});
}

}  // namespace
}  // namespace dcps_api
