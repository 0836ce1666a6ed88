// DCPS behaviour, single participant: listeners fire once per event, with the right
// counts, on the right entity — the reader's own listener before the subscriber's before
// the participant's, DATA_ON_READERS before DATA_AVAILABLE — and only for the statuses in
// their mask. Public API only.
#include "api_fixture.hpp"

namespace dcps_api {
namespace {

using dds::core::status::StatusMask;

TEST_CASE("on_data_available fires once per delivered sample batch", "[listeners]") {
  Recorder rec;  // outlives the participant, whose listener thread calls it
  Participant p;
  auto reader = p.reader();
  reader.listener(&rec, StatusMask::data_available());
  auto writer = p.writer();
  wait_matched(writer, reader);

  deliver(writer, flight(1, 1));
  REQUIRE(eventually([&] { return rec.count("reader.data_available") == 1; }));
  CHECK(stays([&] { return rec.count("reader.data_available") == 1; }));
  CHECK(reader.take().length() == 1);

  deliver(writer, flight(1, 2));
  REQUIRE(eventually([&] { return rec.count("reader.data_available") == 2; }));
  CHECK(stays([&] { return rec.total() == 2; }));
}

TEST_CASE("on_publication_matched and on_subscription_matched report counts as peers come and go",
          "[listeners]") {
  Recorder wrec, rrec;
  Participant p;
  // The listeners are given at creation, so they hear the very first match.
  Reader reader(p.sub, p.topic, reader_qos(), &rrec, StatusMask::subscription_matched());
  Writer writer(p.pub, p.topic, writer_qos(), &wrec, StatusMask::publication_matched());
  REQUIRE(eventually([&] {
    return wrec.count("writer.publication_matched") == 1 &&
           rrec.count("reader.subscription_matched") == 1;
  }));
  auto pm = wrec.publication_matched();
  check_matched(pm, 1, 1, 1, 1);
  auto sm = rrec.subscription_matched();
  CHECK(sm.current_count() == 1);
  CHECK(sm.total_count() == 1);
  CHECK(sm.last_publication_handle() == writer.instance_handle());

  // A second reader: one more call, counts 2/2.
  Reader second = p.reader();
  REQUIRE(eventually([&] { return wrec.count("writer.publication_matched") == 2; }));
  pm = wrec.publication_matched();
  CHECK(pm.current_count() == 2);
  CHECK(pm.total_count() == 2);
  CHECK(pm.current_count_change() == 1);
  CHECK(pm.last_subscription_handle() == second.instance_handle());

  // It goes: current back to 1, total stays 2.
  second.close();
  REQUIRE(eventually([&] { return wrec.count("writer.publication_matched") == 3; }));
  pm = wrec.publication_matched();
  check_matched(pm, 1, -1, 2, 0);

  // The writer goes: the reader hears it once.
  writer.close();
  REQUIRE(eventually([&] { return rrec.count("reader.subscription_matched") == 2; }));
  sm = rrec.subscription_matched();
  CHECK(sm.current_count() == 0);
  CHECK(sm.current_count_change() == -1);
  CHECK(sm.total_count() == 1);
  CHECK(stays([&] { return wrec.total() == 3 && rrec.total() == 2; }));
}

TEST_CASE(
    "DATA_AVAILABLE goes to the reader's listener, else the subscriber's, else the "
    "participant's",
    "[listeners]") {
  Recorder on_reader, on_sub, on_dp;
  Participant p;
  const auto mask = StatusMask::data_available();
  p.dp.listener(&on_dp, mask);
  p.sub.listener(&on_sub, mask);
  auto [reader, writer] = p.matched_pair();

  SECTION("the reader's own listener first") {
    reader.listener(&on_reader, mask);
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_reader.count("reader.data_available") == 1; }));
    CHECK(stays([&] { return on_sub.total() == 0 && on_dp.total() == 0; }));
  }
  SECTION("the subscriber's when the reader has none") {
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_sub.count("any.data_available") == 1; }));
    CHECK(on_sub.readers() == std::vector<dds::core::InstanceHandle>{reader.instance_handle()});
    CHECK(stays([&] { return on_reader.total() == 0 && on_dp.total() == 0; }));
  }
  SECTION("the participant's when neither listens") {
    p.sub.listener(nullptr, StatusMask::none());
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_dp.count("any.data_available") == 1; }));
    CHECK(on_dp.readers() == std::vector<dds::core::InstanceHandle>{reader.instance_handle()});
    CHECK(stays([&] { return on_reader.total() == 0 && on_sub.total() == 0; }));
  }
  SECTION("a listener whose mask lacks DATA_AVAILABLE passes it on") {
    reader.listener(&on_reader, StatusMask::subscription_matched());
    p.sub.listener(&on_sub, StatusMask::sample_lost());
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_dp.count("any.data_available") == 1; }));
    CHECK(stays([&] { return on_reader.total() == 0 && on_sub.total() == 0; }));
  }
}

TEST_CASE("DATA_ON_READERS takes precedence over DATA_AVAILABLE; notify_datareaders passes it on",
          "[listeners]") {
  Recorder on_reader, on_sub, on_dp;
  Participant p;
  auto reader = p.reader();
  reader.listener(&on_reader, StatusMask::data_available());
  auto writer = p.writer();
  wait_matched(writer, reader);

  SECTION("the subscriber's on_data_on_readers, not the reader's on_data_available") {
    p.sub.listener(&on_sub, StatusMask::data_on_readers());
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_sub.count("any.data_on_readers") == 1; }));
    CHECK(stays([&] { return on_reader.total() == 0 && on_sub.total() == 1; }));
  }
  SECTION("the participant's on_data_on_readers when the subscriber has no listener") {
    p.dp.listener(&on_dp, StatusMask::data_on_readers());
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_dp.count("any.data_on_readers") == 1; }));
    CHECK(stays([&] { return on_reader.total() == 0 && on_dp.total() == 1; }));
  }
  SECTION("notify_datareaders() from on_data_on_readers calls the reader's listener") {
    on_sub.on_readers_action = [](dds::sub::Subscriber& s) { s.notify_datareaders(); };
    p.sub.listener(&on_sub, StatusMask::data_on_readers());
    deliver(writer, flight(1, 1));
    REQUIRE(eventually([&] { return on_reader.count("reader.data_available") == 1; }));
    CHECK(on_sub.count("any.data_on_readers") == 1);
    CHECK(reader.take().length() == 1);
  }
}

TEST_CASE("a writer listener with an empty mask leaves PUBLICATION_MATCHED to the publisher's",
          "[listeners]") {
  Recorder on_writer, on_pub;
  Participant p;
  p.pub.listener(&on_pub, StatusMask::publication_matched());
  Writer writer(p.pub, p.topic, writer_qos(), &on_writer, StatusMask::none());
  auto reader = p.reader();
  REQUIRE(eventually([&] { return on_pub.count("any.publication_matched") == 1; }));
  CHECK(on_pub.publication_matched().current_count() == 1);
  CHECK(stays([&] { return on_writer.total() == 0 && on_pub.total() == 1; }));
  // Heard by a listener, the status is not left pending.
  CHECK_FALSE((writer.status_changes() & StatusMask::publication_matched()).any());
}

TEST_CASE("SUBSCRIPTION_MATCHED goes to the subscriber's listener, else the participant's",
          "[listeners]") {
  Recorder on_sub, on_dp;
  Participant p;
  p.dp.listener(&on_dp, StatusMask::subscription_matched() | StatusMask::publication_matched());
  SECTION("the subscriber's") {
    p.sub.listener(&on_sub, StatusMask::subscription_matched());
    auto [reader, writer] = p.matched_pair();
    REQUIRE(eventually([&] { return on_sub.count("any.subscription_matched") == 1; }));
    REQUIRE(eventually([&] { return on_dp.count("any.publication_matched") == 1; }));
    CHECK(on_sub.subscription_matched().current_count() == 1);
    CHECK(stays([&] { return on_sub.total() == 1 && on_dp.total() == 1; }));
  }
  SECTION("the participant's") {
    auto [reader, writer] = p.matched_pair();
    REQUIRE(eventually([&] { return on_dp.count("any.subscription_matched") == 1; }));
    REQUIRE(eventually([&] { return on_dp.count("any.publication_matched") == 1; }));
    CHECK(stays([&] { return on_sub.total() == 0 && on_dp.total() == 2; }));
  }
}

TEST_CASE("incompatible QoS calls each side's listener once, with the policy id", "[listeners]") {
  Recorder on_writer, on_reader;
  Participant p;
  auto rq = reader_qos();
  rq << spindle::policy::Consistency::Atomic();
  auto wq = writer_qos();
  wq << spindle::policy::Consistency::Unordered();
  Reader reader(p.sub, p.topic, rq, &on_reader, StatusMask::requested_incompatible_qos());
  Writer writer(p.pub, p.topic, wq, &on_writer, StatusMask::offered_incompatible_qos());
  const auto id = dds::core::policy::policy_id<spindle::policy::Consistency>::value;
  REQUIRE(eventually([&] {
    return on_writer.count("writer.offered_incompatible_qos") == 1 &&
           on_reader.count("reader.requested_incompatible_qos") == 1;
  }));
  CHECK(on_writer.last_policy() == id);
  CHECK(on_reader.last_policy() == id);
  CHECK(stays([&] { return on_writer.total() == 1 && on_reader.total() == 1; }));
}

TEST_CASE("SAMPLE_REJECTED calls the reader's listener once per rejected sample", "[listeners]") {
  Recorder rec;
  Participant p;
  auto rq = reader_qos(policy::History::KeepAll());
  rq << policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED, 1);
  Reader reader(p.sub, p.topic, rq, &rec, StatusMask::sample_rejected());
  auto writer = p.writer();
  wait_matched(writer, reader);
  deliver_series(writer, 1, 4);
  REQUIRE(eventually([&] { return rec.count("reader.sample_rejected") == 3; }));
  CHECK(rec.last_total() == 3);
  CHECK(stays([&] { return rec.total() == 3; }));
  // Heard by the listener, the status is not also left pending.
  CHECK_FALSE((reader.status_changes() & StatusMask::sample_rejected()).any());
}

TEST_CASE("deadline misses go to the participant's listener when no other listens", "[listeners]") {
  Recorder on_dp;
  Participant p;
  p.dp.listener(&on_dp,
                StatusMask::requested_deadline_missed() | StatusMask::offered_deadline_missed());
  auto [reader, writer] =
      p.matched_pair_with(policy::Deadline(dds::core::Duration::from_millisecs(50)));
  deliver(writer, flight(1, 1));
  REQUIRE(eventually([&] {
    return on_dp.count("any.requested_deadline_missed") >= 1 &&
           on_dp.count("any.offered_deadline_missed") >= 1;
  }));
}

}  // namespace
}  // namespace dcps_api
