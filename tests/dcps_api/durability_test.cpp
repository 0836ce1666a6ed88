// DCPS behaviour: DURABILITY and the `volatile` consistency level (docs/storage.md). A
// writer that offers TRANSIENT_LOCAL or more retains the last samples of each instance; a
// reader created later that asks for them receives them first, in order, then the live
// stream; TRANSIENT history outlives its writer; a participant that joins the domain later
// receives the history in the state transfer. Public API only.
#include <algorithm>

#include "api_fixture.hpp"

namespace dcps_api {
namespace {

dds::pub::qos::DataWriterQos durable_writer(
    const policy::Durability& d, const policy::History& h = policy::History::KeepLast(2)) {
  auto q = writer_qos();
  q << d << h;
  if (d.kind() == policy::DurabilityKind::TRANSIENT ||
      d.kind() == policy::DurabilityKind::PERSISTENT) {
    policy::DurabilityService ds;
    ds.history_kind(policy::HistoryKind::KEEP_LAST).history_depth(3);
    q << ds;
  }
  return q;
}

dds::sub::qos::DataReaderQos durable_reader(
    const policy::Durability& d = policy::Durability::TransientLocal()) {
  auto q = reader_qos(policy::History::KeepAll());
  q << d;
  return q;
}

// Every valid sample's (aircraft, seq) in the order taken.
std::vector<std::pair<std::uint32_t, std::uint64_t>> taken(Reader& r) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const auto& s : r.take())
    if (s.info().valid()) out.emplace_back(s.data().aircraft_id(), s.data().timestamp_ns());
  return out;
}

// Writes 5 samples to each of aircraft 1, 2, 3, interleaved; the sequence is 10*a + i.
void write_three(Writer& w) {
  for (std::uint64_t i = 1; i <= 5; ++i)
    for (std::uint32_t a = 1; a <= 3; ++a)
      w.write(flight(a, 10 * a + i));
  flush(w);
}

TEST_CASE("a late reader gets the last samples of each instance", "[durability]") {
  Participant p;
  auto w = p.writer(durable_writer(policy::Durability::TransientLocal()));
  write_three(w);

  auto r = p.reader(durable_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  // KEEP_LAST 2 per instance, in the order written.
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> history{{1, 14}, {2, 24}, {3, 34},
                                                                     {1, 15}, {2, 25}, {3, 35}};
  std::vector<std::pair<std::uint32_t, std::uint64_t>> got;
  REQUIRE(eventually([&] {
    for (auto s : taken(r))
      got.push_back(s);
    return got.size() >= history.size();
  }));
  std::sort(got.begin(), got.end());
  auto sorted = history;
  std::sort(sorted.begin(), sorted.end());
  CHECK(got == sorted);

  // Then the live stream, after the history.
  wait_matched(w, r);
  deliver(w, flight(1, 16));
  REQUIRE(eventually([&] { return r.read().length() > 0; }));
  CHECK(taken(r) == std::vector<std::pair<std::uint32_t, std::uint64_t>>{{1, 16}});
}

TEST_CASE("retained samples keep their source timestamps and order", "[durability]") {
  Participant p;
  auto w =
      p.writer(durable_writer(policy::Durability::TransientLocal(), policy::History::KeepLast(10)));
  const auto t0 = dds::core::Time::from_nanosecs(1'000'000'000);
  for (std::uint64_t i = 1; i <= 4; ++i)
    w.write(flight(9, i), t0 + dds::core::Duration::from_millisecs(i));
  flush(w);
  auto r = p.reader(durable_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  const auto samples = r.take();
  REQUIRE(seqs(samples) == std::vector<std::uint64_t>{1, 2, 3, 4});
  std::uint64_t i = 1;
  for (const auto& s : samples) {
    CHECK(s.info().timestamp() == t0 + dds::core::Duration::from_millisecs(i++));
    CHECK(s.info().state().view_state() == dds::sub::status::ViewState::new_view());
  }
}

TEST_CASE("a VOLATILE reader gets no history", "[durability]") {
  Participant p;
  auto w = p.writer(durable_writer(policy::Durability::TransientLocal()));
  write_three(w);
  auto r = p.reader(reader_qos());
  r.wait_for_historical_data(dds::core::Duration::from_secs(1));  // nothing to wait for
  wait_matched(w, r);
  CHECK(stays([&] { return r.read().length() == 0; }));
}

TEST_CASE("TRANSIENT_LOCAL history goes with its writer", "[durability]") {
  Participant p;
  {
    auto w = p.writer(durable_writer(policy::Durability::TransientLocal()));
    write_three(w);
    w.close();
  }
  auto witness = p.writer(durable_writer(policy::Durability::TransientLocal()));
  auto r = p.reader(durable_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  wait_matched(witness, r);
  CHECK(r.read().length() == 0);
}

TEST_CASE("TRANSIENT history outlives its writer", "[durability]") {
  Participant p;
  {
    auto w = p.writer(durable_writer(policy::Durability::Transient()));
    write_three(w);
    w.close();
  }
  auto r = p.reader(durable_reader(policy::Durability::Transient()));
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  // DURABILITY_SERVICE keeps the last 3 of each instance.
  auto got = taken(r);
  std::sort(got.begin(), got.end());
  CHECK(got ==
        std::vector<std::pair<std::uint32_t, std::uint64_t>>{
            {1, 13}, {1, 14}, {1, 15}, {2, 23}, {2, 24}, {2, 25}, {3, 33}, {3, 34}, {3, 35}});
}

TEST_CASE("a disposed instance is retained as disposed", "[durability]") {
  Participant p;
  auto w = p.writer(durable_writer(policy::Durability::TransientLocal()));
  deliver(w, flight(1, 1), flight(2, 2));
  w.dispose_instance(w.lookup_instance(flight(2, 0)));
  flush(w);
  auto r = p.reader(durable_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  const auto one = r.select().instance(r.lookup_instance(flight(1, 0))).read();
  REQUIRE(one.length() == 1);
  CHECK(one.begin()->info().state().instance_state() == dds::sub::status::InstanceState::alive());
  const auto two = r.select().instance(r.lookup_instance(flight(2, 0))).read();
  REQUIRE(two.length() >= 1);
  CHECK(two.begin()->info().state().instance_state() ==
        dds::sub::status::InstanceState::not_alive_disposed());
}

TEST_CASE("a participant that joins later gets the history", "[durability]") {
  Participant p;
  auto w = p.writer(durable_writer(policy::Durability::TransientLocal()));
  write_three(w);
  // A second participant of the domain: it joins through the join port, and the history
  // comes with the state transfer.
  dds::domain::DomainParticipant dp2(dds::domain::default_id());
  dds::topic::Topic<FlightState> topic2(dp2, "FlightState");
  dds::sub::Subscriber sub2(dp2);
  Reader r(sub2, topic2, durable_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  auto got = taken(r);
  std::sort(got.begin(), got.end());
  CHECK(got == std::vector<std::pair<std::uint32_t, std::uint64_t>>{
                   {1, 14}, {1, 15}, {2, 24}, {2, 25}, {3, 34}, {3, 35}});
  // A member that was there all along, with no reader while the samples went by, has them
  // too (the retained subgroup spans the domain).
  wait_matched(w, r);
  deliver(w, flight(7, 71));
  Reader r2(sub2, topic2, durable_reader());
  r2.wait_for_historical_data(dds::core::Duration::from_secs(10));
  REQUIRE(eventually([&] { return r.read().length() > 0; }));
  auto got2 = taken(r2);
  std::sort(got2.begin(), got2.end());
  CHECK(got2 == std::vector<std::pair<std::uint32_t, std::uint64_t>>{
                    {1, 14}, {1, 15}, {2, 24}, {2, 25}, {3, 34}, {3, 35}, {7, 71}});
  r2.close();
  r.close();
  dp2.close();
}

}  // namespace
}  // namespace dcps_api
