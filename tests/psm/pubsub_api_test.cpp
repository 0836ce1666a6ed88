// The topic, publication and subscription API of the ISO C++ PSM (DDS-PSM-Cxx 1.0 §7.5),
// written from the specification: the write and read forms, instances, the manipulators,
// find, ContentFilteredTopic and QueryCondition with their parameters and errors. Standard
// `dds::` names only, in a one-member domain of this process.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <iostream>
#include <iterator>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "ShapeType.hpp"
#include "avionics.hpp"
#include "psm_test_support.hpp"

namespace {

using psm_test::eventually;

using namespace std::chrono_literals;
using dds::sub::status::DataState;

ShapeType shape(const std::string& color, int32_t x, int32_t size = 10) {
  ShapeType s;
  s.color(color);
  s.x(x);
  s.shapesize(size);
  return s;
}

std::vector<int32_t> xs(const dds::sub::LoanedSamples<ShapeType>& samples) {
  std::vector<int32_t> out;
  for (const auto& s : samples)
    if (s.info().valid()) out.push_back(s->data().x());
  return out;
}

dds::sub::qos::DataReaderQos keep_all(const dds::sub::Subscriber& sub) {
  auto q = sub.default_datareader_qos();
  q << dds::core::policy::History::KeepAll();
  return q;
}

struct World {
  World()
      : participant(dds::domain::default_id()),
        topic(participant, "Square"),
        publisher(participant),
        subscriber(participant),
        writer(publisher, topic),
        reader(subscriber, topic, keep_all(subscriber)) {
    REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  }
  ~World() {
    psm_test::close_quietly(reader);
    psm_test::close_quietly(writer);
    std::this_thread::sleep_for(20ms);
    participant.close();
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Waits until the reader holds `n` samples in any state.
  void await(std::uint32_t n) {
    REQUIRE(eventually([&] { return reader.select().read().length() >= n; }));
  }

  dds::domain::DomainParticipant participant;
  dds::topic::Topic<ShapeType> topic;
  dds::pub::Publisher publisher;
  dds::sub::Subscriber subscriber;
  dds::pub::DataWriter<ShapeType> writer;
  dds::sub::DataReader<ShapeType> reader;
};

}  // namespace

TEST_CASE("every write form of DataWriter<T>", "[psm][pub]") {
  World w;
  const dds::core::Time t(100, 5);
  std::vector<ShapeType> batch{shape("RED", 1), shape("RED", 2)};
  w.writer.write(batch.begin(), batch.end());
  w.writer.write(batch.begin(), batch.end(), t);
  const auto red = w.writer.lookup_instance(shape("RED", 0));
  std::vector<dds::core::InstanceHandle> handles{red, red};
  w.writer.write(batch.begin(), batch.end(), handles.begin(), handles.end());
  w.writer << std::make_pair(shape("RED", 3), t);
  w.writer << std::make_pair(shape("RED", 4), red);
  w.writer.write(dds::topic::TopicInstance<ShapeType>(red, shape("RED", 5)));
  w.await(9);
  const auto got = w.reader.read();
  CHECK(xs(got) == std::vector<int32_t>{1, 2, 1, 2, 1, 2, 3, 4, 5});
  CHECK(got[2].info().timestamp() == t);
  CHECK(got[6].info().timestamp() == t);
  // A handle of another instance is refused.
  CHECK_THROWS_AS(w.writer << std::make_pair(shape("BLUE", 1), red),
                  dds::core::PreconditionNotMetError);
}

TEST_CASE("instances by key with a timestamp, and key_value by handle", "[psm][pub]") {
  World w;
  w.writer.write(shape("GREEN", 1));
  const auto h = w.writer.lookup_instance(shape("GREEN", 0));
  CHECK(w.writer.key_value(h).color() == "GREEN");
  dds::topic::TopicInstance<ShapeType> ti;
  w.writer.key_value(ti, h);
  CHECK(ti.handle() == h);
  CHECK(static_cast<const ShapeType&>(ti).color() == "GREEN");
  w.await(1);
  const auto rh = w.reader.read()[0].info().instance_handle();
  const dds::topic::TopicInstance<ShapeType> ri = w.reader.key_value(rh);
  CHECK(ri.sample().color() == "GREEN");
  CHECK(ri.handle() == rh);
  const dds::core::Time when(200, 0);
  w.writer.dispose_instance(shape("GREEN", 0), when);
  REQUIRE(
      eventually([&] { return w.reader.select().state(DataState::any()).read().length() == 2; }));
  const auto s = w.reader.read();
  CHECK_FALSE(s[1].info().valid());
  CHECK(s[1].info().timestamp() == when);
  w.writer.unregister_instance(shape("GREEN", 0), dds::core::Time(201, 0));
  CHECK_THROWS_AS(w.writer.dispose_instance(shape("NONE", 0), when),
                  dds::core::PreconditionNotMetError);
}

TEST_CASE("QoS in and out with << and >>; typed entities from untyped ones", "[psm][pub][sub]") {
  World w;
  dds::pub::qos::DataWriterQos wq;
  w.writer >> wq;
  CHECK(wq == w.writer.qos());
  dds::sub::qos::DataReaderQos rq;
  w.reader >> rq;
  CHECK(rq == w.reader.qos());
  dds::topic::qos::TopicQos tq;
  w.topic >> tq;
  CHECK(tq == w.topic.qos());

  dds::pub::AnyDataWriter any_w = w.writer;
  CHECK(any_w.get<ShapeType>() == w.writer);
  dds::sub::AnyDataReader any_r = w.reader;
  CHECK(any_r.get<ShapeType>() == w.reader);
  dds::topic::AnyTopic any_t = w.topic;
  CHECK(dds::topic::Topic<ShapeType>(any_t) == w.topic);
  CHECK(dds::topic::Topic<ShapeType>(dds::core::Entity(w.topic)) == w.topic);
  CHECK_THROWS_AS(dds::topic::Topic<ShapeType>(dds::core::Entity(w.writer)),
                  dds::core::IllegalOperationError);

  dds::topic::TopicDescription td = w.topic;
  CHECK(td.name() == "Square");
  CHECK(td.type_name() == "ShapeType");
  CHECK(w.reader.topic_description().name() == "Square");
  // A Topic is a TopicDescription, and a TopicDescription converts back to one.
  dds::topic::TopicDescription from_reader = w.reader.topic_description();
  CHECK(dds::topic::Topic<ShapeType>(dds::core::Entity(from_reader)) == w.topic);
  CHECK(dds::topic::TopicDescription(dds::core::Entity(w.topic)) == td);
  CHECK_THROWS_AS(dds::topic::TopicDescription(dds::core::Entity(w.writer)),
                  dds::core::IllegalOperationError);
  static_assert(dds::topic::is_topic_type<ShapeType>::value);
  CHECK(dds::topic::topic_type_name<ShapeType>::value() == "ShapeType");

  // The (participant, name, type name) constructor: the IDL name, or a clear refusal.
  dds::topic::Topic<ShapeType> named(w.participant, "Named", "ShapeType");
  CHECK(named.type_name() == "ShapeType");
  CHECK_THROWS_AS(dds::topic::Topic<ShapeType>(w.participant, "Other", "Shape"),
                  dds::core::UnsupportedError);
  CHECK_THROWS_WITH(dds::topic::Topic<ShapeType>(w.participant, "Other", "Shape"),
                    Catch::Contains("type name 'Shape' is not the IDL name of its type, "
                                    "'ShapeType'"));
  dds::topic::NoOpTopicListener<ShapeType> tl;
  named.listener(&tl, dds::core::status::StatusMask::all());
  CHECK(named.listener() == &tl);
  named.listener(nullptr, dds::core::status::StatusMask::none());
  CHECK(named.listener() == nullptr);
}

TEST_CASE("find writers and readers of a topic", "[psm][pub][sub]") {
  World w;
  std::vector<dds::pub::DataWriter<ShapeType>> writers;
  CHECK(dds::pub::find<dds::pub::DataWriter<ShapeType>>(w.publisher, "Square",
                                                        std::back_inserter(writers)) == 1);
  REQUIRE(writers.size() == 1);
  CHECK(writers[0] == w.writer);
  std::vector<dds::sub::AnyDataReader> readers(3, dds::core::null);
  CHECK(dds::sub::find<dds::sub::AnyDataReader>(w.subscriber, "Square", readers.begin(), 3) == 1);
  CHECK(readers[0] == w.reader);
  std::vector<dds::sub::DataReader<ShapeType>> none;
  CHECK(dds::sub::find<dds::sub::DataReader<ShapeType>>(w.subscriber, "Nothing",
                                                        std::back_inserter(none)) == 0);
  w.writer.write(shape("RED", 1));
  w.await(1);
  std::vector<dds::sub::AnyDataReader> holding;
  CHECK(dds::sub::find<dds::sub::AnyDataReader>(w.subscriber, DataState::any(),
                                                std::back_inserter(holding)) == 1);
}

TEST_CASE("the manipulator form of read and take", "[psm][sub]") {
  World w;
  for (int32_t i = 1; i <= 5; ++i)
    w.writer.write(shape("RED", i));
  w.await(5);
  dds::sub::LoanedSamples<ShapeType> samples;
  w.reader >> dds::sub::read >> dds::sub::max_samples(2) >> samples;
  CHECK(xs(samples) == std::vector<int32_t>{1, 2});
  w.reader >> dds::sub::take >> dds::sub::max_samples(3) >> samples;
  CHECK(xs(samples) == std::vector<int32_t>{1, 2, 3});
  w.reader >> samples;  // reads by default
  CHECK(xs(samples) == std::vector<int32_t>{4, 5});
  const DataState unread(dds::sub::status::SampleState::not_read(),
                         dds::sub::status::ViewState::any(),
                         dds::sub::status::InstanceState::any());
  w.reader >> dds::sub::state(unread) >> samples;
  CHECK(samples.length() == 0);
  const auto h = w.reader.lookup_instance(shape("RED", 0));
  w.reader >> dds::sub::take >> dds::sub::instance(h) >> samples;
  CHECK(samples.length() == 2);
  dds::sub::SharedSamples<ShapeType> shared(w.reader.read());
  CHECK(shared.length() == 0);
}

TEST_CASE("default_filter_state narrows read() and take()", "[psm][sub]") {
  World w;
  w.writer.write(shape("RED", 1));
  w.await(1);
  (void)w.reader.read();
  w.reader.default_filter_state(DataState::new_data());
  CHECK(w.reader.default_filter_state() == DataState::new_data());
  CHECK(w.reader.read().length() == 0);
  w.writer.write(shape("RED", 2));
  REQUIRE(eventually([&] { return w.reader.read().length() == 1; }));
  w.reader.default_filter_state(DataState::any());
  CHECK(w.reader.take().length() == 2);
}

TEST_CASE("copying reads through a Selector into iterators", "[psm][sub]") {
  World w;
  for (int32_t i = 1; i <= 3; ++i)
    w.writer.write(shape("RED", i));
  w.await(3);
  std::vector<dds::sub::Sample<ShapeType>> out(2);
  CHECK(w.reader.select().read(out.begin(), 2) == 2);
  CHECK(out[1].data().x() == 2);
  std::vector<dds::sub::Sample<ShapeType>> all;
  CHECK(w.reader.select().take(std::back_inserter(all)) == 3);
}

TEST_CASE("a ContentFilteredTopic's reader keeps what passes its filter", "[psm][filter]") {
  World w;
  dds::topic::Filter filter("x > %0 AND color LIKE 'R%'", std::vector<std::string>{"10"});
  dds::topic::ContentFilteredTopic<ShapeType> cft(w.topic, "BigReds", filter);
  CHECK(cft.filter_expression() == "x > %0 AND color LIKE 'R%'");
  CHECK(cft.topic() == w.topic);
  CHECK(cft.name() == "BigReds");
  dds::sub::DataReader<ShapeType> filtered(w.subscriber, cft, keep_all(w.subscriber));
  CHECK(filtered.topic_description().name() == "BigReds");
  REQUIRE(eventually([&] { return w.writer.publication_matched_status().current_count() == 2; }));
  w.writer.write(shape("RED", 5));
  w.writer.write(shape("RED", 50));
  w.writer.write(shape("BLUE", 60));
  w.writer.write(shape("ROSE", 70));
  w.await(4);
  REQUIRE(eventually([&] { return filtered.read().length() == 2; }));
  CHECK(xs(filtered.read()) == std::vector<int32_t>{50, 70});
  // New parameters apply to what arrives next.
  const std::vector<std::string> p{"100"};
  cft.filter_parameters(p.begin(), p.end());
  CHECK(cft.filter_parameters() == p);
  w.writer.write(shape("RED", 99));
  w.writer.write(shape("RED", 101));
  REQUIRE(eventually([&] { return filtered.read().length() == 3; }));
  CHECK(xs(filtered.read()) == std::vector<int32_t>{50, 101, 70});  // by instance: RED, ROSE
  // A parameter that does not fit its use is refused and changes nothing.
  const std::vector<std::string> bad{"big"};
  CHECK_THROWS_AS(cft.filter_parameters(bad.begin(), bad.end()), dds::core::InvalidArgumentError);
  CHECK(cft.filter_parameters() == p);
  filtered.close();
}

TEST_CASE("a bad filter expression is an InvalidArgumentError naming the column", "[psm][filter]") {
  World w;
  const auto message = [&](const std::string& expr) {
    try {
      dds::topic::ContentFilteredTopic<ShapeType> cft(w.topic, "Bad", dds::topic::Filter(expr));
    } catch (const dds::core::InvalidArgumentError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(message("x >> 3"), Catch::Contains("column 4"));
  CHECK_THAT(message("nosuch = 1"), Catch::Contains("column 1") && Catch::Contains("nosuch"));
  CHECK_THAT(message("x = %2"), Catch::Contains("%2"));
  CHECK_THAT(message("color = 'RED"), Catch::Contains("column 9"));
  CHECK(message("x > 1 ORDER BY x") != "accepted");  // ORDER BY belongs to queries
  CHECK(message("x BETWEEN 1 AND 5 OR NOT color = 'RED'") == "accepted");
}

TEST_CASE("Query and QueryCondition select by content, with ORDER BY", "[psm][filter]") {
  World w;
  for (int32_t i : {30, 10, 50, 20, 40})
    w.writer.write(shape(i < 35 ? "RED" : "BLUE", i));
  w.await(5);
  dds::sub::Query q(w.reader, "x >= %0 ORDER BY x", std::vector<std::string>{"20"});
  CHECK(q.expression() == "x >= %0 ORDER BY x");
  CHECK(q.parameters_length() == 1);
  CHECK(xs(w.reader.select().content(q).read()) == std::vector<int32_t>{20, 30, 40, 50});
  dds::sub::LoanedSamples<ShapeType> samples;
  w.reader >> dds::sub::content(q) >> dds::sub::max_samples(10) >> samples;
  CHECK(samples.length() == 4);

  dds::sub::cond::QueryCondition qc(dds::sub::Query(w.reader, "color = 'BLUE'"), DataState::any());
  CHECK(qc.trigger_value());
  dds::core::cond::WaitSet ws;
  ws += qc;
  CHECK(ws.wait(dds::core::Duration::from_secs(1)).size() == 1);
  CHECK(xs(w.reader.select().condition(qc).take()) == std::vector<int32_t>{50, 40});
  CHECK_FALSE(qc.trigger_value());  // the blue ones were taken
  const std::vector<std::string> p{"RED"};
  dds::sub::cond::QueryCondition by_param(dds::sub::Query(w.reader, "color = %0", p),
                                          DataState::any());
  CHECK(by_param.trigger_value());
  CHECK(by_param.parameters() == p);
  const std::vector<std::string> green{"GREEN"};
  by_param.parameters(green.begin(), green.end());
  CHECK_FALSE(by_param.trigger_value());
  CHECK_THROWS_AS(dds::sub::Query(w.reader, "x >"), dds::core::InvalidArgumentError);
  CHECK_THROWS_AS(dds::sub::Query(w.reader, "no_such_member = 1"), dds::core::InvalidArgumentError);

  // A Query may get its parameters after its expression; they are checked when it is used.
  dds::sub::Query later(w.reader, "x > %0 AND color = %1");
  CHECK(later.parameters_length() == 0);
  CHECK_THROWS_WITH(w.reader.select().content(later).read(),
                    Catch::Contains("parameter %0 is not given"));
  later.add_parameter("25");
  later.add_parameter("RED");
  CHECK(xs(w.reader.select().content(later).read()) == std::vector<int32_t>{30});
  // Once used, a parameter that does not fit is refused at once.
  const std::vector<std::string> not_a_number{"many", "RED"};
  CHECK_THROWS_AS(later.parameters(not_a_number.begin(), not_a_number.end()),
                  dds::core::InvalidArgumentError);
  CHECK(later.parameters() == std::vector<std::string>{"25", "RED"});
  dds::sub::Query incomplete(w.reader, "x > %0");
  CHECK_THROWS_AS(dds::sub::cond::QueryCondition(incomplete, DataState::any()),
                  dds::core::InvalidArgumentError);
}

TEST_CASE("coherent sets and suspended publication keep their contract", "[psm][pub][sub]") {
  World w;
  {
    dds::pub::CoherentSet set(w.publisher);
    w.writer.write(shape("RED", 1));
    set.end();
    CHECK_THROWS_AS(set.end(), dds::core::PreconditionNotMetError);
  }
  {
    dds::pub::SuspendedPublication suspended(w.publisher);
    w.writer.write(shape("RED", 2));
    suspended.resume();
  }
  {
    dds::sub::CoherentAccess access(w.subscriber);
    w.await(2);
    CHECK(w.reader.read().length() == 2);
    access.end();
  }
}

// Coherent sets (docs/dcps.md, "Coherent sets"): with coherent_access, what a writer writes
// in a set reaches its readers all at once, at end(), or not at all.
TEST_CASE("a coherent set reaches the reader whole, at its end", "[psm][pub][sub]") {
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<ShapeType> topic(dp, "CoherentSquare");
  dds::pub::qos::PublisherQos pq;
  pq << dds::core::policy::Presentation::TopicAccessScope(true, true);
  dds::pub::Publisher pub(dp, pq);
  dds::sub::qos::SubscriberQos sq;
  sq << dds::core::policy::Presentation::TopicAccessScope(true, true);
  dds::sub::Subscriber sub(dp, sq);
  dds::pub::qos::DataWriterQos wq = pub.default_datawriter_qos();
  wq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<ShapeType> writer(pub, topic, wq);
  dds::sub::DataReader<ShapeType> reader(sub, topic, keep_all(sub));
  REQUIRE(writer.publication_matched_status().current_count() == 1);
  {
    dds::pub::CoherentSet set(pub);
    writer.write(shape("RED", 1));
    writer.write(shape("BLUE", 2));
    {
      dds::pub::CoherentSet inner(pub);  // nested: the outer end publishes
      writer.write(shape("RED", 3));
    }
    writer.dispose_instance(writer.lookup_instance(shape("BLUE", 0)));
    std::this_thread::sleep_for(50ms);
    CHECK(reader.select().read().length() == 0);  // nothing before the end
    set.end();
  }
  REQUIRE(eventually([&] { return reader.select().read().length() > 0; }));
  // All at once: the three samples and the dispose in one go.
  auto all = reader.select().read();
  CHECK(all.length() == 3);
  std::size_t disposed = 0;
  for (const auto& s : all)
    if (s.info().state().instance_state() == dds::sub::status::InstanceState::not_alive_disposed())
      ++disposed;
  CHECK(disposed == 1);
  // Outside a set, writes go one by one as before.
  writer.write(shape("GREEN", 4));
  REQUIRE(eventually([&] { return reader.select().read().length() == 4; }));
}

TEST_CASE("conversions by copy, find by topic, Query as a reference, discover", "[psm][topic]") {
  World w;
  dds::core::cond::Condition c = dds::sub::cond::ReadCondition(w.reader, DataState::any());
  dds::sub::cond::ReadCondition rc = c;
  dds::sub::DataReader<ShapeType> r = rc.data_reader();
  CHECK(r == w.reader);
  dds::pub::AnyDataWriter aw = w.writer;
  dds::pub::DataWriter<ShapeType> tw = aw;
  CHECK(tw == w.writer);
  CHECK(w.writer.topic_description().name() == "Square");
  std::vector<dds::sub::DataReader<ShapeType>> readers;
  CHECK(dds::sub::find<dds::sub::DataReader<ShapeType>>(w.subscriber, w.topic,
                                                        std::back_inserter(readers)) == 1);

  dds::sub::Query none(dds::core::null);
  CHECK(none == dds::core::null);
  CHECK_THROWS_AS(none.expression(), dds::core::NullReferenceError);
  dds::sub::Query q(w.reader, "x > %0 AND x < %1", std::vector<std::string>{"1", "5"});
  CHECK(std::vector<std::string>(q.begin(), q.end()) == std::vector<std::string>{"1", "5"});

  // A topic that only another participant of the domain has.
  dds::domain::DomainParticipant other(dds::domain::default_id());
  dds::topic::Topic<ShapeType> elsewhere(other, "Elsewhere");
  dds::pub::Publisher other_pub(other);
  dds::pub::DataWriter<ShapeType> other_writer(other_pub, elsewhere);
  const auto found = dds::topic::discover<dds::topic::Topic<ShapeType>>(
      w.participant, "Elsewhere", dds::core::Duration::from_secs(10));
  REQUIRE(found != dds::core::null);
  CHECK(found.name() == "Elsewhere");
  CHECK(found.domain_participant() == w.participant);
  CHECK(dds::topic::discover<dds::topic::Topic<ShapeType>>(
            w.participant, "Nowhere", dds::core::Duration::from_millisecs(50)) == dds::core::null);
  other_writer.close();
  std::this_thread::sleep_for(20ms);
  other.close();
}

TEST_CASE("a union is a topic type (keyless), and a non-topic type is named Undefined",
          "[psm][topic]") {
  static_assert(dds::topic::is_topic_type<Avionics::NavFix>::value);
  CHECK(dds::topic::topic_type_name<Avionics::NavFix>::value() == "Avionics::NavFix");
  static_assert(!dds::topic::is_topic_type<int>::value);
  CHECK(dds::topic::topic_type_name<int>::value() == "Undefined");

  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Avionics::NavFix> topic(dp, "Fix");
  dds::sub::Subscriber sub(dp);
  dds::sub::DataReader<Avionics::NavFix> reader(sub, topic, keep_all(sub));
  dds::pub::Publisher pub(dp);
  dds::pub::DataWriter<Avionics::NavFix> writer(pub, topic);
  REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  Avionics::NavFix gps;
  Avionics::Position here;
  here.latitude_deg(48.5);
  gps.position(here);
  gps._d(Avionics::NavSource::INERTIAL);
  Avionics::NavFix ils;
  ils.deviation_dots({0.5F, -1.25F});
  writer << gps << ils;
  std::vector<Avionics::NavFix> got;
  REQUIRE(eventually([&] {
    for (const auto& s : reader.take())
      if (s.info().valid()) got.push_back(s.data());
    return got.size() == 2;
  }));
  CHECK(got[0]._d() == Avionics::NavSource::INERTIAL);
  CHECK(got[0].position().latitude_deg() == 48.5);
  CHECK(got[1]._d() == Avionics::NavSource::ILS);
  CHECK(got[1].deviation_dots()[1] == -1.25F);
  writer.close();
  reader.close();
}

// A reader of the writer's own participant has the sample when write() returns, wherever no
// other process holds a place in the topic's order (docs/dcps.md, "Your own samples"): as
// Cyclone DDS, Fast DDS and Connext hand a sample to a local reader, so programs that write
// and read at once behave the same. Every consistency level; a sole member's message is
// stable at once.
TEST_CASE("a reader of the writer's own participant has the sample when write() returns",
          "[psm][pub][sub][own]") {
  namespace sp = spindle::policy;
  const auto level = GENERATE(0, 1, 2, 3);
  const sp::Consistency consistency[] = {sp::Consistency::Unordered(), sp::Consistency::Atomic(),
                                         sp::Consistency::Volatile(),
                                         sp::Consistency::LoggedNoFsync()};
  const char* names[] = {"unordered", "atomic", "volatile", "logged"};
  INFO("consistency " << names[level]);
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  // A logged topic keeps its log across runs (XDG_STATE_HOME, set by CTest under the build
  // tree): a name of this run's own, so that no earlier run's history comes back.
  dds::topic::Topic<ShapeType> topic(participant, std::string("Own_") + names[level] + "_" +
                                                      std::to_string(::getpid()) + "_" +
                                                      std::to_string(std::time(nullptr)));
  dds::pub::Publisher pub(participant);
  dds::sub::Subscriber sub(participant);
  auto wq = pub.default_datawriter_qos();
  wq << consistency[level];
  auto rq = sub.default_datareader_qos();
  rq << dds::core::policy::History::KeepLast(64) << consistency[level];
  dds::pub::DataWriter<ShapeType> writer(pub, topic, wq);
  dds::sub::DataReader<ShapeType> reader(sub, topic, rq);
  REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  const auto start = std::chrono::steady_clock::now();
  for (int32_t i = 0; i < 50; ++i) {
    writer.write(shape("RED", i));
    const auto got = xs(reader.take());
    REQUIRE(got == std::vector<int32_t>{i});  // at once: no sleep, no wait
  }
  std::cout << names[level] << ": a write and the take of its sample, "
            << std::chrono::duration_cast<std::chrono::microseconds>(
                   std::chrono::steady_clock::now() - start)
                       .count() /
                   50
            << " us each (mean of 50)\n";
  writer.dispose_instance(writer.lookup_instance(shape("RED", 0)));
  const auto after = reader.take();
  REQUIRE(after.length() == 1);
  CHECK(after[0].info().state().instance_state() ==
        dds::sub::status::InstanceState::not_alive_disposed());
}
