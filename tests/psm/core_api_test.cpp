// The ISO C++ PSM's reference machinery and domain-level API (DDS-PSM-Cxx 1.0), written
// from the specifications: WeakReference, polymorphic_cast and the checked conversions
// between entity and condition reference types; the process-wide default participant QoS;
// dds::domain::find; and the ignore operations (DCPS 2.2.2.2.1.14-17), including that an
// ignored writer's samples stop reaching a reader of another participant of this process.
// Only standard `dds::` names are used.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "ShapeType.hpp"
#include "avionics.hpp"
#include "psm_test_support.hpp"

namespace {

using psm_test::close_quietly;
using psm_test::eventually;

using namespace std::chrono_literals;
using dds::core::InvalidDowncastError;
using Writer = dds::pub::DataWriter<ShapeType>;
using Reader = dds::sub::DataReader<ShapeType>;

// `pred` holds at every check during `period` ("nothing more happens").
template <class Pred>
bool stays(Pred pred, std::chrono::milliseconds period = 300ms) {
  const auto until = std::chrono::steady_clock::now() + period;
  do {
    if (!pred()) return false;
    std::this_thread::sleep_for(5ms);
  } while (std::chrono::steady_clock::now() < until);
  return true;
}

ShapeType shape(const std::string& color, int32_t x) {
  ShapeType s;
  s.color(color);
  s.x(x);
  return s;
}

dds::sub::qos::DataReaderQos reliable_reader() {
  dds::sub::qos::DataReaderQos q;
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return q;
}

// One participant with a topic, a publisher, a subscriber, a writer and a reader.
struct Node {
  Node()
      : dp(dds::domain::default_id()),
        topic(dp, "Square"),
        pub(dp),
        sub(dp),
        writer(pub, topic),
        reader(sub, topic, reliable_reader()) {}
  ~Node() {
    close_quietly(reader);
    close_quietly(writer);
    close_quietly(dp);
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  dds::domain::DomainParticipant dp;
  dds::topic::Topic<ShapeType> topic;
  dds::pub::Publisher pub;
  dds::sub::Subscriber sub;
  Writer writer;
  Reader reader;
};

std::vector<int32_t> taken_x(Reader& r) {
  std::vector<int32_t> out;
  for (const auto& s : r.take())
    if (s.info().valid()) out.push_back(s.data().x());
  return out;
}

TEST_CASE("WeakReference locks while the object lives and expires after", "[core]") {
  dds::core::WeakReference<dds::core::cond::GuardCondition> none;
  CHECK(none.expired());
  CHECK(none.lock() == dds::core::null);

  dds::core::WeakReference<dds::core::cond::GuardCondition> weak;
  {
    dds::core::cond::GuardCondition guard;
    weak = guard;
    CHECK_FALSE(weak.expired());
    auto locked = weak.lock();
    CHECK(locked == guard);
    locked.trigger_value(true);
    CHECK(guard.trigger_value());
  }
  CHECK(weak.expired());
  CHECK(weak.lock() == dds::core::null);

  Node n;
  dds::core::WeakReference<Writer> weak_writer(n.writer);
  CHECK(weak_writer.lock() == n.writer);
  CHECK(weak_writer.lock().topic().name() == "Square");
  dds::core::WeakReference<dds::pub::Publisher> weak_pub;
  {
    dds::pub::Publisher extra(n.dp);
    weak_pub = extra;
    CHECK_FALSE(weak_pub.expired());
  }
  // The participant holds its publishers weakly: the last reference was the test's.
  CHECK(eventually([&] { return weak_pub.expired(); }));
  // A closed entity still referenced is not expired; using it says it is closed.
  dds::pub::Publisher closing(n.dp);
  dds::core::WeakReference<dds::pub::Publisher> weak_closed(closing);
  closing.close();
  CHECK_FALSE(weak_closed.expired());
  CHECK_THROWS_AS(weak_closed.lock().qos(), dds::core::AlreadyClosedError);
}

TEST_CASE("polymorphic_cast converts between entity kinds and refuses the wrong kind", "[core]") {
  Node n;
  const dds::core::Entity as_entity = n.writer;
  auto writer = dds::core::polymorphic_cast<Writer>(as_entity);
  CHECK(writer == n.writer);
  const dds::pub::AnyDataWriter any_writer = n.writer;
  CHECK(dds::core::polymorphic_cast<Writer>(any_writer) == n.writer);
  CHECK(dds::core::polymorphic_cast<dds::pub::AnyDataWriter>(as_entity) == n.writer);
  CHECK(dds::core::polymorphic_cast<dds::core::Entity>(n.reader) == n.reader);

  const dds::core::Entity reader_entity = n.reader;
  CHECK(dds::core::polymorphic_cast<Reader>(reader_entity) == n.reader);
  CHECK(dds::core::polymorphic_cast<dds::sub::AnyDataReader>(reader_entity) == n.reader);
  CHECK(dds::core::polymorphic_cast<dds::domain::DomainParticipant>(dds::core::Entity(n.dp)) ==
        n.dp);
  CHECK(dds::core::polymorphic_cast<dds::pub::Publisher>(dds::core::Entity(n.pub)) == n.pub);
  CHECK(dds::core::polymorphic_cast<dds::sub::Subscriber>(dds::core::Entity(n.sub)) == n.sub);
  CHECK(dds::core::polymorphic_cast<dds::topic::Topic<ShapeType>>(dds::core::Entity(n.topic)) ==
        n.topic);
  CHECK(dds::core::polymorphic_cast<dds::topic::AnyTopic>(dds::core::Entity(n.topic)) == n.topic);

  // Another kind of entity, or the right kind of another data type.
  CHECK_THROWS_AS(dds::core::polymorphic_cast<Writer>(reader_entity), InvalidDowncastError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::pub::AnyDataWriter>(reader_entity),
                  InvalidDowncastError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::domain::DomainParticipant>(as_entity),
                  InvalidDowncastError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::pub::Publisher>(dds::core::Entity(n.sub)),
                  InvalidDowncastError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::sub::Subscriber>(dds::core::Entity(n.pub)),
                  InvalidDowncastError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::topic::AnyTopic>(as_entity),
                  InvalidDowncastError);
  CHECK_THROWS_AS(
      dds::core::polymorphic_cast<dds::pub::DataWriter<Avionics::FlightState>>(as_entity),
      InvalidDowncastError);
  CHECK_THROWS_AS(
      dds::core::polymorphic_cast<dds::sub::DataReader<Avionics::FlightState>>(reader_entity),
      InvalidDowncastError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::topic::Topic<Avionics::FlightState>>(
                      dds::core::Entity(n.topic)),
                  InvalidDowncastError);
  // The error is also the std exception it is a kind of.
  CHECK_THROWS_AS(dds::core::polymorphic_cast<Writer>(reader_entity), std::runtime_error);

  // Null casts to null.
  const dds::core::Entity nothing = dds::core::null;
  CHECK(dds::core::polymorphic_cast<Writer>(nothing) == dds::core::null);
  CHECK(Reader(nothing) == dds::core::null);
}

TEST_CASE("references convert by copy-initialization and assignment, checked", "[core]") {
  Node n;
  const dds::core::Entity dp_entity = n.dp;
  dds::domain::DomainParticipant dp = dp_entity;
  CHECK(dp == n.dp);
  dp = dds::core::Entity(n.dp);
  CHECK(dp == n.dp);
  dds::pub::Publisher pub = dds::core::Entity(n.pub);
  CHECK(pub == n.pub);
  pub = dds::core::Entity(n.pub);
  dds::sub::Subscriber sub = dds::core::Entity(n.sub);
  CHECK(sub == n.sub);
  // A Topic from an AnyTopic, a TopicDescription or an Entity.
  const dds::topic::AnyTopic any_topic = n.topic;
  dds::topic::Topic<ShapeType> topic = any_topic;
  CHECK(topic == n.topic);
  const dds::topic::TopicDescription description = n.topic;
  topic = description;
  CHECK(topic == n.topic);
  topic = dds::core::Entity(n.topic);
  CHECK(topic == n.topic);
  Writer writer = dds::core::Entity(n.writer);
  CHECK(writer == n.writer);
  Reader reader = dds::core::Entity(n.reader);
  CHECK(reader == n.reader);
  dds::pub::AnyDataWriter any_writer = dds::core::Entity(n.writer);
  CHECK(any_writer == n.writer);
  dds::sub::AnyDataReader any_reader = dds::core::Entity(n.reader);
  CHECK(any_reader == n.reader);

  // The wrong kind, or the wrong data type, throws IllegalOperationError (as the
  // specification's reference conversions do; polymorphic_cast throws
  // InvalidDowncastError) and leaves the target as it was.
  CHECK_THROWS_AS(pub = dds::core::Entity(n.sub), dds::core::IllegalOperationError);
  CHECK(pub == n.pub);
  CHECK_THROWS_AS(dp = dds::core::Entity(n.writer), dds::core::IllegalOperationError);
  CHECK(dp == n.dp);
  CHECK_THROWS_AS(writer = dds::core::Entity(n.reader), dds::core::IllegalOperationError);
  CHECK(writer == n.writer);
  dds::topic::Topic<Avionics::FlightState> other(dds::core::null);
  CHECK_THROWS_AS(other = any_topic, dds::core::IllegalOperationError);
  CHECK(other == dds::core::null);
  // Null converts to null.
  sub = dds::core::Entity(dds::core::null);
  CHECK(sub == dds::core::null);
}

TEST_CASE("a Condition converts to its own kind of condition only", "[core][cond]") {
  Node n;
  dds::core::cond::StatusCondition status(n.reader);
  dds::core::cond::GuardCondition guard;
  dds::sub::cond::ReadCondition read(n.reader, dds::sub::status::DataState::any());
  const dds::core::cond::Condition as_status = status;
  const dds::core::cond::Condition as_guard = guard;
  const dds::core::cond::Condition as_read = read;

  CHECK(dds::core::cond::StatusCondition(as_status) == status);
  CHECK(dds::core::cond::GuardCondition(as_guard) == guard);
  CHECK(dds::sub::cond::ReadCondition(as_read) == read);
  CHECK(dds::core::polymorphic_cast<dds::core::cond::StatusCondition>(as_status) == status);
  CHECK(dds::core::polymorphic_cast<dds::sub::cond::ReadCondition>(as_read) == read);

  dds::core::cond::StatusCondition s2 = dds::core::null;
  s2 = as_status;
  CHECK(s2 == status);
  CHECK(s2.entity() == n.reader);
  dds::core::cond::GuardCondition g2;
  g2 = as_guard;
  CHECK(g2 == guard);
  dds::sub::cond::ReadCondition r2 = dds::core::null;
  r2 = as_read;
  CHECK(r2 == read);
  CHECK(r2.reader_entity() == n.reader);
  s2 = dds::core::null;
  CHECK(s2 == dds::core::null);

  CHECK_THROWS_AS(dds::core::cond::StatusCondition(as_guard), dds::core::IllegalOperationError);
  CHECK_THROWS_AS(dds::core::cond::GuardCondition(as_read), dds::core::IllegalOperationError);
  CHECK_THROWS_AS(dds::sub::cond::ReadCondition(as_status), dds::core::IllegalOperationError);
  CHECK_THROWS_AS(dds::core::polymorphic_cast<dds::core::cond::GuardCondition>(as_status),
                  InvalidDowncastError);
  CHECK_THROWS_AS(g2 = as_status, dds::core::IllegalOperationError);
  CHECK(g2 == guard);  // a refused assignment leaves the target as it was
  CHECK_THROWS_AS(r2 = as_guard, dds::core::IllegalOperationError);
  CHECK(dds::core::cond::StatusCondition(dds::core::cond::Condition(dds::core::null)) ==
        dds::core::null);
}

TEST_CASE("the default participant QoS applies to participants created without one", "[domain]") {
  using dds::domain::DomainParticipant;
  const auto initial = DomainParticipant::default_participant_qos();
  CHECK(initial == dds::domain::qos::DomainParticipantQos());

  dds::domain::qos::DomainParticipantQos q;
  q << dds::core::policy::UserData(dds::core::ByteSeq{1, 2, 3});
  DomainParticipant::default_participant_qos(q);
  CHECK(DomainParticipant::default_participant_qos() == q);
  {
    DomainParticipant dp(dds::domain::default_id());
    CHECK(dp.qos().policy<dds::core::policy::UserData>().value() == dds::core::ByteSeq{1, 2, 3});
    dp.close();
  }
  // Safe from several threads at once (each reads a whole value, never a torn one).
  std::atomic<bool> torn{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        if (t % 2 == 0) {
          DomainParticipant::default_participant_qos(i % 2 == 0 ? q : initial);
        } else {
          const auto now = DomainParticipant::default_participant_qos();
          if (!(now == q) && !(now == initial)) torn = true;
        }
      }
    });
  }
  for (auto& th : threads)
    th.join();
  CHECK_FALSE(torn.load());
  DomainParticipant::default_participant_qos(initial);
  CHECK(DomainParticipant::default_participant_qos() == initial);
}

TEST_CASE("find gives a live participant of the domain, or null", "[domain]") {
  CHECK(dds::domain::find(4242) == dds::core::null);  // no participant in that domain
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  CHECK(dds::domain::find(dp.domain_id()) == dp);
  CHECK(dds::domain::find(dds::domain::default_id()) == dp);
  CHECK(dds::domain::find(dp.domain_id() + 1) == dds::core::null);
  const auto id = dp.domain_id();
  dp.close();
  // A closed participant is no member of the domain any more.
  CHECK(dds::domain::find(id) == dds::core::null);
  {
    dds::domain::DomainParticipant gone(dds::domain::default_id());
    CHECK(dds::domain::find(gone.domain_id()) == gone);
  }
  // Nor is one whose last reference went away (the table is weak).
  CHECK(eventually([] { return dds::domain::find(dds::domain::default_id()) == dds::core::null; }));
}

TEST_CASE("ignore refuses handles it cannot mean and keeps unknown ones", "[domain][ignore]") {
  Node n;
  using dds::core::InvalidArgumentError;
  const dds::core::InstanceHandle nil = dds::core::null;
  CHECK_THROWS_AS(dds::domain::ignore(n.dp, nil), InvalidArgumentError);
  CHECK_THROWS_AS(dds::pub::ignore(n.dp, nil), InvalidArgumentError);
  CHECK_THROWS_AS(dds::sub::ignore(n.dp, nil), InvalidArgumentError);
  CHECK_THROWS_AS(dds::topic::ignore(n.dp, nil), InvalidArgumentError);
  CHECK_THROWS_AS(dds::domain::ignore(n.dp, n.dp.instance_handle()),
                  dds::core::PreconditionNotMetError);
  // Handles of another kind.
  CHECK_THROWS_AS(dds::domain::ignore(n.dp, n.writer.instance_handle()), InvalidArgumentError);
  CHECK_THROWS_AS(dds::pub::ignore(n.dp, n.reader.instance_handle()), InvalidArgumentError);
  CHECK_THROWS_AS(dds::sub::ignore(n.dp, n.writer.instance_handle()), InvalidArgumentError);
  // Handles nobody has (yet): kept, no error (they apply if such an entity appears).
  const dds::core::InstanceHandle unknown_participant((std::uint64_t{0x7ffffffe} << 32) | 1);
  const dds::core::InstanceHandle unknown_endpoint((std::uint64_t{0x7ffffffe} << 32) | 77);
  CHECK_NOTHROW(dds::domain::ignore(n.dp, unknown_participant));
  CHECK_NOTHROW(dds::pub::ignore(n.dp, unknown_endpoint));
  CHECK_NOTHROW(dds::sub::ignore(n.dp, unknown_endpoint));
  CHECK_NOTHROW(dds::topic::ignore(n.dp, n.topic.instance_handle()));
  std::vector<dds::core::InstanceHandle> several{unknown_participant, unknown_participant};
  CHECK_NOTHROW(dds::domain::ignore(n.dp, several.begin(), several.end()));
  // None of that touched this participant's own matches.
  CHECK(eventually([&] { return n.reader.subscription_matched_status().current_count() == 1; }));
  n.writer.write(shape("RED", 1));
  CHECK(eventually([&] { return n.reader.read().length() == 1; }));
  // A closed participant ignores nothing.
  n.dp.close();
  CHECK_THROWS_AS(dds::domain::ignore(n.dp, unknown_participant), dds::core::AlreadyClosedError);
}

TEST_CASE("an ignored publication stops reaching the readers of the ignoring participant",
          "[domain][ignore]") {
  Node a;  // writes
  Node b;  // reads: a's writer and b's own writer both match b's reader
  REQUIRE(eventually([&] { return b.reader.subscription_matched_status().current_count() == 2; }));
  a.writer.write(shape("RED", 1));
  REQUIRE(eventually([&] { return taken_x(b.reader) == std::vector<int32_t>{1}; }));

  dds::pub::ignore(b.dp, a.writer.instance_handle());
  REQUIRE(eventually([&] { return b.reader.subscription_matched_status().current_count() == 1; }));
  const auto matched = b.reader.matched_publications();
  CHECK(matched == dds::core::InstanceHandleSeq{b.writer.instance_handle()});
  a.writer.write(shape("RED", 2));
  b.writer.write(shape("BLUE", 3));
  // b's own writer still arrives; a's never again.
  std::vector<int32_t> got;
  const auto collect = [&] {
    const auto now = taken_x(b.reader);
    got.insert(got.end(), now.begin(), now.end());
  };
  REQUIRE(eventually([&] {
    collect();
    return std::find(got.begin(), got.end(), 3) != got.end();
  }));
  std::this_thread::sleep_for(300ms);
  collect();
  CHECK(got == std::vector<int32_t>{3});
  // a's own reader still has a's writer (ignoring is b's alone).
  CHECK(a.reader.subscription_matched_status().current_count() == 2);
  // Irreversible: a second ignore changes nothing, and it never matches again.
  dds::pub::ignore(b.dp, a.writer.instance_handle());
  CHECK(stays([&] { return b.reader.subscription_matched_status().current_count() == 1; }));
}

TEST_CASE("an ignored subscription is unmatched from the ignoring participant's writers",
          "[domain][ignore]") {
  Node a;
  Node b;
  REQUIRE(eventually([&] { return a.writer.publication_matched_status().current_count() == 2; }));
  dds::sub::ignore(a.dp, b.reader.instance_handle());
  REQUIRE(eventually([&] { return a.writer.publication_matched_status().current_count() == 1; }));
  CHECK(a.writer.matched_subscriptions() ==
        dds::core::InstanceHandleSeq{a.reader.instance_handle()});
}

TEST_CASE("an ignored participant's endpoints never match, present or future", "[domain][ignore]") {
  Node a;
  Node b;
  REQUIRE(eventually([&] { return b.reader.subscription_matched_status().current_count() == 2; }));
  dds::domain::ignore(b.dp, a.dp.instance_handle());
  REQUIRE(eventually([&] { return b.reader.subscription_matched_status().current_count() == 1; }));
  REQUIRE(eventually([&] { return b.writer.publication_matched_status().current_count() == 1; }));
  // A writer a creates afterwards is ignored too; a's own reader matches it.
  Writer later(a.pub, a.topic);
  REQUIRE(eventually([&] { return later.publication_matched_status().current_count() >= 1; }));
  later.write(shape("GREEN", 9));
  REQUIRE(eventually([&] {
    for (const auto& s : a.reader.read())
      if (s.info().valid() && s.data().x() == 9) return true;
    return false;
  }));
  CHECK(stays([&] { return b.reader.read().length() == 0; }));
  CHECK(b.reader.subscription_matched_status().current_count() == 1);
  close_quietly(later);
}

}  // namespace
