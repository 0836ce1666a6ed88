// DCPS behaviour, single participant: the errors the API promises — a sample larger than
// RDMC's buffer space (one larger than a slot arrives), a topic name reused with another type, a
// topic of another participant, inconsistent QoS, a closed entity, a null entity — and the Spindle
// consistency policy: an `unordered` topic delivers too. Public API only (plus setenv for the
// domain file, as an application's launcher would).
#include <cstdlib>
#include <string>
#include <vector>

#include "Sequence.hpp"
#include "api_fixture.hpp"
#include "scoped_config.hpp"
#include "transports.hpp"

namespace dcps_api {
namespace {

using spindle::testing::ScopedDomainConfig;

// Sample `seq` of writer 1 with `size` payload bytes that differ from sample to sample and
// along the payload.
Bench::Sequence sample(std::uint32_t seq, std::size_t size) {
  Bench::Sequence s;
  s.writer_id(1);
  s.seq(seq);
  std::vector<std::uint8_t> bytes(size);
  for (std::size_t i = 0; i < size; ++i)
    bytes[i] = static_cast<std::uint8_t>(seq * 29 + i * 5 + i / 4096);
  s.payload(std::move(bytes));
  return s;
}

TEST_CASE("a sample larger than a slot arrives whole; past the RDMC buffer space it is refused",
          "[errors]") {
  dds::domain::DomainParticipant dp = dds::core::null;
  {
    const ScopedDomainConfig config(
        "engine: {slot_size: 512, rdmc_block_size: 4096, rdmc_buffer_size: 1048576}");
    dp = dds::domain::DomainParticipant(dds::domain::default_id());
  }
  dds::topic::Topic<Bench::Sequence> topic(dp, "Sequence");
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);
  dds::sub::DataReader<Bench::Sequence> reader(sub, topic, reader_qos());
  dds::pub::DataWriter<Bench::Sequence> writer(pub, topic, writer_qos());
  wait_matched(writer, reader);

  Bench::Sequence huge = sample(1, 2u << 20);
  try {
    writer.write(huge);
    FAIL("a 2 MiB sample went into 1 MiB of RDMC buffer space");
  } catch (const dds::core::PreconditionNotMetError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("largest sample") != std::string::npos);
    CHECK(what.find("engine.rdmc_buffer_size") != std::string::npos);
  }
  // The failed write registered nothing (closing the writer later has nothing to send).
  CHECK(writer.lookup_instance(huge).is_nil());
  // Small and large samples of one writer, in the order written, byte for byte.
  const std::vector<std::size_t> sizes{100, 4096, 300'000, 10, 1'000'000, 600};
  for (std::uint32_t i = 0; i < sizes.size(); ++i)
    writer.write(sample(i + 2, sizes[i]));
  flush(writer);
  const auto got = reader.take();
  REQUIRE(got.length() == sizes.size());
  for (std::uint32_t i = 0; i < sizes.size(); ++i) {
    CHECK(got[i].data().seq() == i + 2);
    CHECK(got[i].data().payload() == sample(i + 2, sizes[i]).payload());
  }
  // This domain's slots differ from the next test's: close it now (the participant may
  // outlive its last reference for a moment, while an upcall held it, and its join port
  // would answer the next test's participant with a refusal).
  dp.close();
}

// An unbounded type's RDMC space starts at 16 samples of 64 KiB (docs/dev/rdmc.md, "Under
// DCPS"): a writer that writes a larger sample asks for more and waits for the view that
// gives it, so every sample arrives, in order, with nothing set by hand but the domain's
// ceiling. A BEST_EFFORT writer's sample waits for that view too, rather than being dropped.
TEST_CASE("an unbounded type's RDMC space grows with its samples, none lost on the way",
          "[errors][rdmc]") {
  dds::domain::DomainParticipant dp = dds::core::null;
  {
    const ScopedDomainConfig config("engine: {rdmc_buffer_size: 67108864}");
    dp = dds::domain::DomainParticipant(dds::domain::default_id());
  }
  dds::topic::Topic<Bench::Sequence> topic(dp, "Growing");
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);
  {
    dds::sub::DataReader<Bench::Sequence> reader(sub, topic, reader_qos());
    dds::pub::DataWriter<Bench::Sequence> writer(pub, topic, writer_qos());
    wait_matched(writer, reader);
    const std::vector<std::size_t> sizes{100, 200'000, 3'000'000, 10, 20'000'000, 600, 150'000};
    for (std::uint32_t i = 0; i < sizes.size(); ++i)
      writer.write(sample(i, sizes[i]));
    flush(writer);
    const auto got = reader.take();
    REQUIRE(got.length() == sizes.size());
    for (std::uint32_t i = 0; i < sizes.size(); ++i) {
      CHECK(got[i].data().seq() == i);
      CHECK(got[i].data().payload() == sample(i, sizes[i]).payload());
    }
  }
  dds::topic::Topic<Bench::Sequence> quick(dp, "GrowingBestEffort");
  dds::sub::qos::DataReaderQos rq;
  rq << policy::Reliability::BestEffort() << policy::History::KeepAll();
  dds::pub::qos::DataWriterQos wq;
  wq << policy::Reliability::BestEffort();
  dds::sub::DataReader<Bench::Sequence> reader(sub, quick, rq);
  dds::pub::DataWriter<Bench::Sequence> writer(pub, quick, wq);
  wait_matched(writer, reader);
  writer.write(sample(1, 5'000'000));
  writer.write(sample(2, 50));
  REQUIRE(eventually([&] { return reader.read().length() == 2; }));
  const auto got = reader.take();
  CHECK(got[0].data().payload() == sample(1, 5'000'000).payload());
  CHECK(got[1].data().seq() == 2);
  dp.close();
}

TEST_CASE("an endpoint whose discovery record does not fit a slot is refused, naming the fix",
          "[errors]") {
  dds::domain::DomainParticipant dp = dds::core::null;
  {
    const ScopedDomainConfig config("engine: {slot_size: 64}");
    dp = dds::domain::DomainParticipant(dds::domain::default_id());
  }
  dds::topic::Topic<FlightState> topic(dp, "FlightState");
  dds::sub::Subscriber sub(dp);
  // Slots never go below 512 bytes (room for an ordinary record); 2 KiB of user data do not
  // fit that.
  auto qos = reader_qos();
  qos << dds::core::policy::UserData(dds::core::ByteSeq(2048, 0x42));
  try {
    Reader reader(sub, topic, qos);
    FAIL("a reader with 2 KiB of user data was announced in a 512-byte slot");
  } catch (const dds::core::PreconditionNotMetError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("DataReader of topic 'FlightState'") != std::string::npos);
    CHECK(what.find("discovery record") != std::string::npos);
    CHECK(what.find("engine.slot_size") != std::string::npos);
  }
  // The participant is still usable.
  CHECK_NOTHROW(dds::pub::Publisher(dp));
  dp.close();  // before the next test founds the domain again (see the first test)
}

TEST_CASE("a participant or topic whose record does not fit a slot is refused, naming the fix",
          "[errors]") {
  const ScopedDomainConfig config("engine: {slot_size: 64}");
  const auto refused = [](const dds::core::PreconditionNotMetError& e, const std::string& who) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find(who + ": its discovery record") != std::string::npos);
    CHECK(what.find("engine.slot_size") != std::string::npos);
  };
  const dds::core::ByteSeq big(2048, 0x42);
  dds::domain::qos::DomainParticipantQos heavy;
  heavy << dds::core::policy::UserData(big);
  try {
    dds::domain::DomainParticipant refused_dp(dds::domain::default_id(), heavy);
    FAIL("a participant with 2 KiB of user data was announced in a 512-byte slot");
  } catch (const dds::core::PreconditionNotMetError& e) {
    refused(e, "DomainParticipant");
  }

  dds::domain::DomainParticipant dp(dds::domain::default_id());
  // A QoS change whose record does not fit is refused, and the old QoS stays.
  try {
    dp.qos(heavy);
    FAIL("a participant QoS with 2 KiB of user data was announced in a 512-byte slot");
  } catch (const dds::core::PreconditionNotMetError& e) {
    refused(e, "DomainParticipant");
  }
  CHECK(dp.qos().policy<dds::core::policy::UserData>().value().empty());

  dds::topic::qos::TopicQos topic_heavy;
  topic_heavy << dds::core::policy::TopicData(big);
  try {
    dds::topic::Topic<FlightState> t(dp, "Heavy", topic_heavy);
    FAIL("a topic with 2 KiB of topic data was announced in a 512-byte slot");
  } catch (const dds::core::PreconditionNotMetError& e) {
    refused(e, "Topic 'Heavy'");
  }
  dds::topic::Topic<FlightState> light(dp, "Light");
  try {
    light.qos(topic_heavy);
    FAIL("a topic QoS with 2 KiB of topic data was announced in a 512-byte slot");
  } catch (const dds::core::PreconditionNotMetError& e) {
    refused(e, "Topic 'Light'");
  }
  CHECK(light.qos().policy<dds::core::policy::TopicData>().value().empty());
  dp.close();  // before the next test founds the domain again (see the first test)
}

TEST_CASE("a second topic of the same name with another type is refused", "[errors]") {
  Participant p;
  try {
    dds::topic::Topic<Bench::Sequence> clash(p.dp, "FlightState");
    FAIL("two types under one topic name");
  } catch (const dds::core::PreconditionNotMetError& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("FlightState") != std::string::npos);
  }
  // The same name and type gives the same topic.
  dds::topic::Topic<FlightState> again(p.dp, "FlightState");
  CHECK(again.name() == p.topic.name());
  CHECK(again.type_name() == p.topic.type_name());
}

TEST_CASE("a writer or reader on another participant's topic is refused, naming the entity",
          "[errors]") {
  Participant p;
  // Another domain, on a join port of its own (this test's port belongs to domain 0).
  dds::domain::DomainParticipant other = dds::core::null;
  {
    const ScopedDomainConfig config("join_port: " +
                                    std::to_string(spindle::testing::free_loopback_port()));
    other = dds::domain::DomainParticipant(p.dp.domain_id() + 1);
  }
  dds::topic::Topic<FlightState> foreign(other, "FlightState");
  auto refusal = [](auto create) {
    try {
      create();
    } catch (const dds::core::PreconditionNotMetError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(refusal([&] { Writer w(p.pub, foreign, writer_qos()); }) ==
        "DataWriter: the topic belongs to another participant");
  CHECK(refusal([&] { Reader r(p.sub, foreign, reader_qos()); }) ==
        "DataReader: the topic belongs to another participant");
  other.close();
}

TEST_CASE("inconsistent QoS is refused with InconsistentPolicyError", "[errors]") {
  Participant p;
  SECTION("history depth above max_samples_per_instance") {
    auto q = reader_qos(policy::History::KeepLast(5));
    q << policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED, 2);
    CHECK_THROWS_AS(p.reader(q), dds::core::InconsistentPolicyError);
  }
  SECTION("a deadline shorter than the time-based filter") {
    auto q = reader_qos();
    q << policy::Deadline(dds::core::Duration::from_millisecs(10))
      << policy::TimeBasedFilter(dds::core::Duration::from_millisecs(100));
    CHECK_THROWS_AS(p.reader(q), dds::core::InconsistentPolicyError);
  }
  SECTION("a zero lease on a writer") {
    auto q = writer_qos();
    q << policy::Liveliness::ManualByTopic(dds::core::Duration::zero());
    CHECK_THROWS_AS(p.writer(q), dds::core::InconsistentPolicyError);
  }
  SECTION("set on an existing reader, which keeps its QoS") {
    auto reader = p.reader();
    auto q = reader.qos();
    q << policy::Deadline(dds::core::Duration::from_millisecs(10))
      << policy::TimeBasedFilter(dds::core::Duration::from_millisecs(100));
    CHECK_THROWS_AS(reader.qos(q), dds::core::InconsistentPolicyError);
    CHECK(reader.qos().policy<policy::Deadline>().period().is_infinite());
  }
}

TEST_CASE("a closed entity refuses to be used with AlreadyClosedError", "[errors]") {
  Participant p;
  auto reader = p.reader();
  auto writer = p.writer();
  SECTION("a writer") {
    writer.close();
    CHECK_THROWS_AS(writer.write(flight(1, 1)), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(writer.register_instance(flight(1, 1)), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(writer.assert_liveliness(), dds::core::AlreadyClosedError);
  }
  SECTION("a reader") {
    reader.close();
    CHECK_THROWS_AS(reader.take(), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(reader.read(), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(dds::core::cond::StatusCondition(reader), dds::core::AlreadyClosedError);
  }
  SECTION("a publisher, and the writers it contained") {
    p.pub.close();
    CHECK_THROWS_AS(p.writer(), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(writer.write(flight(1, 1)), dds::core::AlreadyClosedError);
  }
  SECTION("a participant, and everything it contained") {
    p.dp.close();
    CHECK_THROWS_AS(dds::pub::Publisher(p.dp), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(dds::topic::Topic<FlightState>(p.dp, "Other"), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(writer.write(flight(1, 1)), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(reader.take(), dds::core::AlreadyClosedError);
    CHECK_THROWS_AS(p.reader(), dds::core::AlreadyClosedError);
  }
}

TEST_CASE("a null entity refuses to be used with NullReferenceError", "[errors]") {
  dds::domain::DomainParticipant dp = dds::core::null;
  Writer writer = dds::core::null;
  Reader reader = dds::core::null;
  dds::core::cond::WaitSet ws = dds::core::null;
  CHECK(dp.is_nil());
  CHECK_THROWS_AS(dds::pub::Publisher(dp), dds::core::NullReferenceError);
  CHECK_THROWS_AS(dds::topic::Topic<FlightState>(dp, "T"), dds::core::NullReferenceError);
  CHECK_THROWS_AS(writer.write(flight(1, 1)), dds::core::NullReferenceError);
  CHECK_THROWS_AS(reader.take(), dds::core::NullReferenceError);
  CHECK_THROWS_AS(reader.instance_handle(), dds::core::NullReferenceError);
  CHECK_THROWS_AS(dds::sub::cond::ReadCondition(reader, status::DataState::any()),
                  dds::core::NullReferenceError);
  CHECK_THROWS_AS(dds::core::cond::StatusCondition(writer), dds::core::NullReferenceError);
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(1)), dds::core::NullReferenceError);
}

TEST_CASE("an unordered topic delivers every sample in each writer's order", "[consistency]") {
  Participant p;
  auto wq = writer_qos();
  wq << spindle::policy::Consistency::Unordered();
  auto rq = reader_qos();
  rq << spindle::policy::Consistency::Unordered();
  auto reader = p.reader(rq);
  auto w1 = p.writer(wq);
  auto w2 = p.writer(wq);
  wait_matched(w1, reader, 1, 2);
  wait_matched(w2, reader, 1, 2);
  for (std::uint64_t i = 0; i < 200; ++i) {
    w1.write(flight(1, i));
    w2.write(flight(2, 1000 + i));
  }
  flush(w1);
  std::vector<std::uint64_t> from1, from2;
  for (const auto& s : reader.take()) {
    REQUIRE(s.info().valid());
    (s.data().aircraft_id() == 1 ? from1 : from2).push_back(s.data().timestamp_ns());
  }
  REQUIRE(from1.size() == 200);
  REQUIRE(from2.size() == 200);
  for (std::uint64_t i = 0; i < 200; ++i) {
    CHECK(from1[i] == i);
    CHECK(from2[i] == 1000 + i);
  }
}

}  // namespace
}  // namespace dcps_api

namespace dcps_api {
namespace {

TEST_CASE("a participant that cannot reach a listed member says which, and how to fix it",
          "[errors]") {
  // Member 1 is listed but never starts (nothing listens on its port).
  const std::string yaml = "node: {id: 0}, members: [{id: 0, host: 127.0.0.1, port: " +
                           std::to_string(spindle::testing::free_loopback_port()) +
                           "}, {id: 1, host: 127.0.0.1, port: " +
                           std::to_string(spindle::testing::free_loopback_port()) +
                           "}], engine: {connect_timeout: 300ms}";
  const ScopedDomainConfig config(yaml);
  try {
    dds::domain::DomainParticipant dp(dds::domain::default_id());
    FAIL("a participant joined without member 1");
  } catch (const dds::core::Error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("node 0 could not reach every member over auto within 300 ms") !=
          std::string::npos);
    CHECK(what.find("members: 1 (127.0.0.1:") != std::string::npos);
    CHECK(what.find("SPINDLE_CONFIG / SPINDLE_NODE_ID") != std::string::npos);
  }
}

}  // namespace
}  // namespace dcps_api
