// DCPS behaviour, single participant: the time-driven policies with short periods —
// DEADLINE missed (offered and requested), manual LIVELINESS lost and regained, LIFESPAN
// expiry — and exclusive OWNERSHIP between two writers of different strength. Periods are
// short and every wait bounded; "did not happen" checks allow generous margins for a
// loaded two-core machine. Public API only.
#include "api_fixture.hpp"

namespace dcps_api {
namespace {

using dds::core::Duration;
using IS = status::InstanceState;

TEST_CASE("a silent instance misses its deadline on the writer and on the reader", "[timing]") {
  Participant p;
  auto [reader, writer] = p.matched_pair_with(policy::Deadline(Duration::from_millisecs(50)));
  deliver(writer, flight(8, 1));
  const auto wh = writer.lookup_instance(flight(8, 0));
  const auto rh = reader.lookup_instance(flight(8, 0));

  REQUIRE(eventually([&] {
    return writer.offered_deadline_missed_status().total_count() >= 2 &&
           reader.requested_deadline_missed_status().total_count() >= 2;
  }));
  const auto offered = writer.offered_deadline_missed_status();
  CHECK(offered.last_instance_handle() == wh);
  const auto requested = reader.requested_deadline_missed_status();
  CHECK(requested.last_instance_handle() == rh);
}

TEST_CASE("an instance written faster than its deadline never misses it", "[timing]") {
  Participant p;
  // A write every 20 ms against a 1 s deadline: only a stall of a second (a loaded machine
  // under the sanitizers has shown 400 ms) could miss it.
  auto [reader, writer] =
      p.matched_pair_with(policy::Deadline(Duration::from_secs(1)), policy::History::KeepLast(1));
  for (std::uint64_t i = 0; i < 60; ++i) {
    writer.write(flight(8, i));
    std::this_thread::sleep_for(20ms);
  }
  CHECK(writer.offered_deadline_missed_status().total_count() == 0);
  CHECK(reader.requested_deadline_missed_status().total_count() == 0);
}

TEST_CASE("a manual-liveliness writer that stays silent loses liveliness; asserting revives it",
          "[timing][liveliness]") {
  Participant p;
  auto [reader, writer] =
      p.matched_pair_with(policy::Liveliness::ManualByTopic(Duration::from_millisecs(100)));
  deliver(writer, flight(9, 1));

  REQUIRE(eventually([&] { return writer.liveliness_lost_status().total_count() >= 1; }));
  REQUIRE(eventually([&] {
    const auto s = reader.liveliness_changed_status();
    return s.alive_count() == 0 && s.not_alive_count() == 1;
  }));
  // The writer's instance has no live writer left.
  const auto got = reader.read();
  REQUIRE(got.length() >= 1);
  CHECK(got[got.length() - 1].info().state().instance_state() == IS::not_alive_no_writers());

  writer.assert_liveliness();
  REQUIRE(eventually([&] {
    const auto s = reader.liveliness_changed_status();
    return s.alive_count() == 1 && s.not_alive_count() == 0;
  }));
  const auto lost = writer.liveliness_lost_status();
  CHECK(lost.total_count() >= 1);
}

TEST_CASE("MANUAL_BY_PARTICIPANT liveliness is kept by asserting the participant",
          "[timing][liveliness]") {
  Participant p;
  auto wq = writer_qos();
  wq << policy::Liveliness::ManualByParticipant(Duration::from_millisecs(300));
  auto writer = p.writer(wq);
  auto reader = p.reader();
  wait_matched(writer, reader);
  writer.write(flight(9, 1));
  for (int i = 0; i < 20; ++i) {
    p.dp.assert_liveliness();
    std::this_thread::sleep_for(30ms);
  }
  CHECK(writer.liveliness_lost_status().total_count() == 0);
  REQUIRE(eventually([&] { return writer.liveliness_lost_status().total_count() == 1; }));
}

TEST_CASE("a sample expires from the reader after its writer's lifespan", "[timing]") {
  Participant p;
  auto wq = writer_qos();
  wq << policy::Lifespan(Duration::from_millisecs(300));
  auto reader = p.reader();
  auto writer = p.writer(wq);
  auto forever = p.writer();
  wait_matched(writer, reader, 1, 2);
  wait_matched(forever, reader, 1, 2);
  writer.write(flight(1, 1));
  forever.write(flight(2, 2));
  flush(writer);
  CHECK(reader.read().length() == 2);
  REQUIRE(eventually([&] { return seqs(reader.read()) == std::vector<std::uint64_t>{2}; }));
}

TEST_CASE("exclusive ownership keeps the strongest writer's samples until it goes", "[ownership]") {
  Participant p;
  auto exclusive = [](std::int32_t strength) {
    auto q = writer_qos();
    q << policy::Ownership::Exclusive() << policy::OwnershipStrength(strength);
    return q;
  };
  auto rq = reader_qos();
  rq << policy::Ownership::Exclusive();
  auto reader = p.reader(rq);
  auto strong = p.writer(exclusive(20));
  auto weak = p.writer(exclusive(10));
  wait_matched(strong, reader, 1, 2);
  wait_matched(weak, reader, 1, 2);

  strong.write(flight(1, 100, "STRONG"));
  for (std::uint64_t i = 1; i <= 5; ++i) {
    weak.write(flight(1, i, "WEAK"));
    strong.write(flight(1, 100 + i, "STRONG"));
  }
  flush(weak);
  const auto got = reader.take();
  CHECK(seqs(got) == std::vector<std::uint64_t>{100, 101, 102, 103, 104, 105});
  for (const auto& s : got)
    CHECK(s.info().publication_handle() == strong.instance_handle());

  // The owner goes: the weaker writer takes over.
  strong.close();
  deliver(weak, flight(1, 6, "WEAK"));
  REQUIRE(eventually([&] { return seqs(reader.read()).size() == 1; }));
  const auto after = reader.take();
  CHECK(seqs(after) == std::vector<std::uint64_t>{6});
  for (const auto& s : after)
    if (s.info().valid()) CHECK(s.info().publication_handle() == weak.instance_handle());
}

// DESTINATION_ORDER BY_SOURCE_TIMESTAMP: an update older than the instance's latest never
// reaches the application, and the reader counts it lost (SAMPLE_LOST, DCPS 2.2.4.1).
TEST_CASE("a sample dropped by BY_SOURCE_TIMESTAMP order counts as lost", "[timing]") {
  Participant p;
  auto [reader, writer] = p.matched_pair_with(policy::DestinationOrder::SourceTimestamp());
  writer.write(flight(7, 1), dds::core::Time(100, 0));
  writer.write(flight(7, 2), dds::core::Time(50, 0));  // older: dropped at the reader
  writer.write(flight(8, 3), dds::core::Time(60, 0));  // another instance: kept
  writer.write(flight(7, 4), dds::core::Time(40, 0));  // older again
  flush(writer);
  CHECK(seqs(reader.take()) == std::vector<std::uint64_t>{1, 3});
  const auto lost = reader.sample_lost_status();
  CHECK(lost.total_count() == 2);
  CHECK(lost.total_count_change() == 2);
  CHECK(reader.sample_lost_status().total_count_change() == 0);
}

}  // namespace
}  // namespace dcps_api
