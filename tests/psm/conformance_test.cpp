// Behaviour the DDS specification and the ISO C++ PSM (DDS-PSM-Cxx 1.0) require of the
// standard API, written from the specifications: listener lifetime, closing entities,
// conditions and WaitSets, exceptions, and QoS that is either honoured or refused. Every
// case uses standard `dds::` names only, in a one-member domain of this process.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "ShapeType.hpp"
#include "psm_test_support.hpp"

namespace {

using psm_test::close_quietly;
using psm_test::eventually;

using namespace std::chrono_literals;
using dds::core::status::StatusMask;

ShapeType shape(const std::string& color, int32_t x) {
  ShapeType s;
  s.color(color);
  s.x(x);
  return s;
}

struct World {
  World()
      : participant(dds::domain::default_id()),
        topic(participant, "Circle"),
        publisher(participant),
        subscriber(participant),
        writer(publisher, topic),
        reader(subscriber, topic) {
    REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  }
  ~World() {
    close_quietly(reader);
    close_quietly(writer);
    std::this_thread::sleep_for(20ms);
    close_quietly(participant);
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  dds::domain::DomainParticipant participant;
  dds::topic::Topic<ShapeType> topic;
  dds::pub::Publisher publisher;
  dds::sub::Subscriber subscriber;
  dds::pub::DataWriter<ShapeType> writer;
  dds::sub::DataReader<ShapeType> reader;
};

// Counts its calls; a call after `retired` is set is a violation.
class Counting : public dds::sub::NoOpDataReaderListener<ShapeType> {
 public:
  void on_data_available(dds::sub::DataReader<ShapeType>& r) override {
    if (retired.load()) late.fetch_add(1);
    calls.fetch_add(1);
    std::this_thread::sleep_for(200us);  // long enough to be caught in progress
    (void)r.take();
  }
  std::atomic<int> calls{0};
  std::atomic<bool> retired{false};
  static inline std::atomic<int> late{0};
};

class CountingAny : public dds::sub::NoOpSubscriberListener {
 public:
  void on_data_on_readers(dds::sub::Subscriber&) override {
    if (retired.load()) late.fetch_add(1);
    calls.fetch_add(1);
    std::this_thread::sleep_for(200us);
  }
  std::atomic<int> calls{0};
  std::atomic<bool> retired{false};
  static inline std::atomic<int> late{0};
};

}  // namespace

TEST_CASE("a listener is never called once removed, replaced or its entity closed",
          "[conformance][listener]") {
  World w;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int32_t i = 0; !stop.load(); ++i) {
      w.writer.write(shape("RED", i));
      if (i % 16 == 0) std::this_thread::sleep_for(100us);
    }
  });
  int called = 0;
  for (int round = 0; round < 60; ++round) {
    auto l = std::make_unique<Counting>();
    w.reader.listener(l.get(), StatusMask::data_available());
    std::this_thread::sleep_for(2ms);
    if (round % 2 == 0) {
      w.reader.listener(nullptr, StatusMask::none());
    } else {
      Counting other;  // replaced: the old one must not run again either
      w.reader.listener(&other, StatusMask::data_available());
      l->retired = true;
      l.reset();
      w.reader.listener(nullptr, StatusMask::none());
      continue;
    }
    l->retired = true;
    called += l->calls.load() > 0 ? 1 : 0;
    l.reset();  // destroyed at once: a late call would use freed memory (ASan)
  }
  // The subscriber's DATA_ON_READERS listener likewise.
  for (int round = 0; round < 30; ++round) {
    auto l = std::make_unique<CountingAny>();
    w.subscriber.listener(l.get(), StatusMask::data_on_readers());
    std::this_thread::sleep_for(2ms);
    w.subscriber.listener(nullptr, StatusMask::none());
    l->retired = true;
    l.reset();
  }
  stop = true;
  writer.join();
  std::this_thread::sleep_for(20ms);
  CHECK(called > 0);  // the listeners did hear the stream
  CHECK(Counting::late.load() == 0);
  CHECK(CountingAny::late.load() == 0);
}

TEST_CASE("closing a reader with a listener stops its calls before close returns",
          "[conformance][listener]") {
  World w;
  auto l = std::make_unique<Counting>();
  w.reader.listener(l.get(), StatusMask::data_available());
  for (int32_t i = 0; i < 200; ++i)
    w.writer.write(shape("BLUE", i));
  w.reader.close();
  l->retired = true;
  const int before = Counting::late.load();
  l.reset();
  std::this_thread::sleep_for(20ms);
  CHECK(Counting::late.load() == before);
}

TEST_CASE("DATA_AVAILABLE is no longer a changed status once the listener ran",
          "[conformance][listener]") {
  World w;
  class Once : public dds::sub::NoOpDataReaderListener<ShapeType> {
   public:
    void on_data_available(dds::sub::DataReader<ShapeType>&) override { calls.fetch_add(1); }
    std::atomic<int> calls{0};
  } l;
  w.reader.listener(&l, StatusMask::data_available());
  w.writer.write(shape("GREEN", 1));
  REQUIRE(eventually([&] { return l.calls.load() == 1; }));
  std::this_thread::sleep_for(5ms);
  CHECK_FALSE((w.reader.status_changes() & StatusMask::data_available()).any());
  CHECK(w.reader.read().length() == 1);  // the data is still there
  w.reader.listener(nullptr, StatusMask::none());
}

TEST_CASE("Topic::close refuses while writers or readers use the topic", "[conformance][close]") {
  World w;
  CHECK_THROWS_AS(w.topic.close(), dds::core::PreconditionNotMetError);
  CHECK_THROWS_WITH(w.topic.close(),
                    Catch::Contains("'Circle'") && Catch::Contains("1 writer(s) and 1 reader(s)"));
  w.writer.write(shape("RED", 7));  // both still work
  REQUIRE(eventually([&] { return w.reader.read().length() == 1; }));
  w.writer.close();
  CHECK_THROWS_AS(w.topic.close(), dds::core::PreconditionNotMetError);  // the reader
  w.reader.close();
  w.topic.close();
  CHECK_THROWS_AS(w.topic.close(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(dds::pub::DataWriter<ShapeType>(w.publisher, w.topic),
                  dds::core::AlreadyClosedError);
  // The name is free again.
  dds::topic::Topic<ShapeType> again(w.participant, "Circle");
  CHECK(again != w.topic);
}

TEST_CASE("a closed entity throws AlreadyClosedError from every operation",
          "[conformance][close]") {
  World w;
  dds::pub::NoOpDataWriterListener<ShapeType> wl;
  w.writer.listener(&wl, StatusMask::all());
  w.writer.close();
  CHECK_THROWS_AS(w.writer.close(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.listener(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.qos(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.publication_matched_status(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.offered_deadline_missed_status(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.wait_for_acknowledgments(dds::core::Duration::from_millisecs(10)),
                  dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.status_changes(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.writer.instance_handle(), dds::core::AlreadyClosedError);

  w.reader.close();
  CHECK_THROWS_AS(w.reader.close(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.reader.listener(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.reader.qos(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.reader.subscription_matched_status(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.reader.sample_lost_status(), dds::core::AlreadyClosedError);

  w.publisher.close();
  CHECK_THROWS_AS(w.publisher.close(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.publisher.qos(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.publisher.listener(), dds::core::AlreadyClosedError);
  w.subscriber.close();
  CHECK_THROWS_AS(w.subscriber.qos(), dds::core::AlreadyClosedError);

  w.participant.close();
  CHECK_THROWS_AS(w.participant.close(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.participant.qos(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.participant.listener(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(w.topic.qos(), dds::core::AlreadyClosedError);  // closed with its participant
  // Its name too, through any of its references.
  CHECK_THROWS_AS(w.topic.name(), dds::core::AlreadyClosedError);
  const dds::topic::TopicDescription description = w.topic;
  CHECK_THROWS_AS(description.type_name(), dds::core::AlreadyClosedError);
  CHECK_THROWS_AS(description.domain_participant(), dds::core::AlreadyClosedError);
}

TEST_CASE("DATA_AVAILABLE is never left set for data a take already returned",
          "[conformance][status]") {
  World w;
  dds::sub::cond::ReadCondition unread(w.reader, dds::sub::status::DataState::new_data());
  dds::core::cond::WaitSet ws;
  ws += unread;
  // Each round: one sample, taken as soon as the condition wakes us. The status must not
  // be set afterwards by the arrival of the very sample taken (a false trigger).
  int stale = 0;
  for (int i = 0; i < 300; ++i) {
    w.writer << shape("GREEN", i);
    REQUIRE_NOTHROW(ws.wait(dds::core::Duration::from_secs(10)));
    std::size_t got = 0;
    while (got == 0)
      got = w.reader.take().length();
    REQUIRE(got == 1);
    std::this_thread::sleep_for(std::chrono::microseconds(200));  // a late set lands here
    if ((w.reader.status_changes() & StatusMask::data_available()).any()) ++stale;
    (void)w.reader.take();  // nothing: a next round starts clean either way
  }
  CHECK(stale == 0);
}

TEST_CASE("a condition's handler runs from dispatch only while it is triggered",
          "[conformance][cond]") {
  dds::core::cond::GuardCondition guard;
  int calls = 0;
  guard.handler([&] { ++calls; });
  guard.dispatch();
  CHECK(calls == 0);
  guard.trigger_value(true);
  guard.dispatch();
  CHECK(calls == 1);

  dds::core::cond::WaitSet ws;
  dds::core::cond::GuardCondition idle;
  int idle_calls = 0;
  idle.handler([&] { ++idle_calls; });
  ws += guard;
  ws += idle;
  ws.dispatch(dds::core::Duration::from_millisecs(100));
  CHECK(calls == 2);
  CHECK(idle_calls == 0);  // attached, not triggered
}

TEST_CASE("a closed reader's conditions leave the WaitSets they were attached to",
          "[conformance][cond]") {
  World w;
  dds::core::cond::WaitSet ws;
  dds::sub::cond::ReadCondition rc(w.reader, dds::sub::status::DataState::any());
  dds::core::cond::StatusCondition sc(w.reader);
  dds::core::cond::GuardCondition guard;
  ws += rc;
  ws += sc;
  ws += guard;
  CHECK(ws.conditions().size() == 3);
  w.reader.close();
  const auto left = ws.conditions();
  REQUIRE(left.size() == 1);
  CHECK(left[0] == guard);
  CHECK_FALSE(rc.trigger_value());
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(20)), dds::core::TimeoutError);
}

TEST_CASE("a string over its IDL bound is a dds::core exception naming member and bound",
          "[conformance][errors]") {
  World w;
  std::string what;
  try {
    w.writer.write(shape(std::string(200, 'x'), 1));
  } catch (const dds::core::Exception& e) {
    what = e.what();
  }
  CHECK_THAT(what, Catch::Contains("ShapeType.color") && Catch::Contains("200") &&
                       Catch::Contains("bound of 128"));
}

TEST_CASE("EntityFactory autoenable_created_entities=false creates disabled entities",
          "[conformance][qos]") {
  World w;
  dds::pub::qos::PublisherQos pq = w.participant.default_publisher_qos();
  pq << dds::core::policy::EntityFactory::ManuallyEnable();
  dds::pub::Publisher pub(w.participant, pq);
  dds::pub::DataWriter<ShapeType> writer(pub, w.topic);
  CHECK_THROWS_AS(writer.write(shape("PURPLE", 1)), dds::core::NotEnabledError);
  std::this_thread::sleep_for(50ms);
  CHECK(w.reader.subscription_matched_status().current_count() == 1);  // not announced
  writer.enable();
  REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  writer.write(shape("PURPLE", 2));
  REQUIRE(eventually([&] { return w.reader.read().length() == 1; }));
  writer.close();

  // A participant that does not autoenable: its publisher starts disabled, and a writer
  // of a disabled publisher cannot be enabled before it.
  dds::domain::qos::DomainParticipantQos dq = w.participant.qos();
  dq << dds::core::policy::EntityFactory::ManuallyEnable();
  w.participant.qos(dq);
  dds::pub::Publisher off(w.participant);
  dds::pub::DataWriter<ShapeType> blocked(off, w.topic);
  CHECK_THROWS_AS(blocked.write(shape("PINK", 1)), dds::core::NotEnabledError);
  CHECK_THROWS_AS(blocked.enable(), dds::core::PreconditionNotMetError);
  CHECK_THROWS_WITH(blocked.enable(), Catch::Contains("publisher is not enabled"));
  off.enable();  // its own EntityFactory autoenables: its writers are enabled with it
  REQUIRE(eventually([&] { return blocked.publication_matched_status().current_count() == 1; }));
  blocked.write(shape("PINK", 2));
  blocked.close();
}

TEST_CASE("Presentation of every scope, ordered and coherent, is honoured, not refused",
          "[conformance][qos]") {
  World w;
  using P = dds::core::policy::Presentation;
  for (const auto& p : {P::InstanceAccessScope(true, true), P::TopicAccessScope(true, false),
                        P::TopicAccessScope(false, true), P::GroupAccessScope(true, true),
                        P::GroupAccessScope(false, true), P::GroupAccessScope(true, false)}) {
    dds::pub::qos::PublisherQos pq = w.participant.default_publisher_qos();
    pq << p;
    dds::pub::Publisher pub(w.participant, pq);
    CHECK(pub.qos().policy<P>().access_scope() == p.access_scope());
    CHECK(pub.qos().policy<P>().coherent_access() == p.coherent_access());
    dds::sub::qos::SubscriberQos sq = w.participant.default_subscriber_qos();
    sq << p;
    dds::sub::Subscriber sub(w.participant, sq);
    CHECK(sub.qos().policy<P>().ordered_access() == p.ordered_access());
  }
  // Ending an access that is not open is refused.
  {
    dds::sub::CoherentAccess access(w.subscriber);
    access.end();
    CHECK_THROWS_AS(access.end(), dds::core::PreconditionNotMetError);
  }
}
