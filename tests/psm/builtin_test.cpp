// The built-in topics (DDS-PSM-Cxx §7.5.4-5, DCPS §2.2.5) as an application reads them:
// dds::sub::builtin_subscriber and its DCPSParticipant, DCPSTopic, DCPSPublication and
// DCPSSubscription readers, with two participants of the domain in this process; the
// matched_*_data functions. Only standard `dds::` names are used.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "Sequence.hpp"
#include "ShapeType.hpp"
#include "psm_test_support.hpp"

namespace {

using psm_test::alive;
using psm_test::builtin_reader;
using psm_test::close_quietly;
using psm_test::eventually;

using namespace std::chrono_literals;
namespace pol = dds::core::policy;
using dds::topic::ParticipantBuiltinTopicData;
using dds::topic::PublicationBuiltinTopicData;
using dds::topic::SubscriptionBuiltinTopicData;
using dds::topic::TopicBuiltinTopicData;

template <class T>
bool disposed(dds::sub::DataReader<T>& r, const dds::topic::BuiltinTopicKey& key) {
  for (const auto& s : r.read())
    if (s.data().key() == key &&
        s.info().state().instance_state() == dds::sub::status::InstanceState::not_alive_disposed())
      return true;
  return false;
}

dds::core::ByteSeq bytes(std::initializer_list<std::uint8_t> b) {
  return dds::core::ByteSeq(b);
}

// Two participants: `a` writes "Square" (user, group and topic data, a partition), `b`
// reads it.
struct Domain {
  Domain() : a(dds::domain::default_id(), participant_qos({5})), b(dds::domain::default_id()) {}
  ~Domain() {
    close_quietly(a);
    close_quietly(b);
  }
  static dds::domain::qos::DomainParticipantQos participant_qos(dds::core::ByteSeq user) {
    dds::domain::qos::DomainParticipantQos q;
    q << pol::UserData(user);
    return q;
  }
  dds::domain::DomainParticipant a;
  dds::domain::DomainParticipant b;
};

dds::topic::qos::TopicQos topic_qos() {
  dds::topic::qos::TopicQos q;
  q << pol::TopicData(bytes({7, 7}));
  return q;
}

}  // namespace

TEST_CASE("the built-in subscriber has the four readers and is the same on each call",
          "[builtin]") {
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  auto sub = dds::sub::builtin_subscriber(dp);
  for (const char* name : {"DCPSParticipant", "DCPSTopic", "DCPSPublication", "DCPSSubscription"}) {
    std::vector<dds::sub::AnyDataReader> found;
    dds::sub::find<dds::sub::AnyDataReader>(sub, name, std::back_inserter(found));
    CHECK(found.size() == 1);
  }
  CHECK(dds::sub::builtin_subscriber(dp) == sub);
  // A built-in reader asked for with the wrong type is not found.
  std::vector<dds::sub::DataReader<TopicBuiltinTopicData>> wrong;
  CHECK(dds::sub::find<dds::sub::DataReader<TopicBuiltinTopicData>>(
            sub, "DCPSPublication", std::back_inserter(wrong)) == 0);
  // This participant is known, with its user data.
  auto parts = builtin_reader<ParticipantBuiltinTopicData>(dp, "DCPSParticipant");
  CHECK(eventually([&] { return !alive(parts, [](const auto&) { return true; }).empty(); }));
}

TEST_CASE("publications and subscriptions show names, types and QoS, as history and live",
          "[builtin]") {
  Domain d;
  // Endpoints made before the built-in subscriber: its history.
  dds::topic::Topic<ShapeType> ta(d.a, "Square", topic_qos());
  dds::pub::qos::PublisherQos pq;
  pq << pol::Partition("left") << pol::GroupData(bytes({9}));
  dds::pub::Publisher pub(d.a, pq);
  dds::pub::qos::DataWriterQos wq;
  wq << pol::UserData(bytes({1, 2})) << pol::Reliability::Reliable() << pol::OwnershipStrength(3);
  dds::pub::DataWriter<ShapeType> writer(pub, ta, wq);

  auto pubs = builtin_reader<PublicationBuiltinTopicData>(d.b, "DCPSPublication");
  auto subs = builtin_reader<SubscriptionBuiltinTopicData>(d.b, "DCPSSubscription");
  auto topics = builtin_reader<TopicBuiltinTopicData>(d.b, "DCPSTopic");
  auto parts = builtin_reader<ParticipantBuiltinTopicData>(d.b, "DCPSParticipant");
  const auto square = [](const auto& x) { return x.topic_name() == "Square"; };
  REQUIRE(eventually([&] { return alive(pubs, square).size() == 1; }));
  const auto p = alive(pubs, square).front();
  CHECK(p.type_name() == "ShapeType");
  CHECK(p.user_data().value() == bytes({1, 2}));
  CHECK(p.group_data().value() == bytes({9}));
  CHECK(p.topic_data().value() == bytes({7, 7}));
  CHECK(p.partition().name() == dds::core::StringSeq{"left"});
  CHECK(p.reliability().kind() == pol::ReliabilityKind::RELIABLE);
  CHECK(p.ownership_strength().value() == 3);
  CHECK(p.key().value()[0] != 0);

  // The topic, and both participants, a's with its user data.
  REQUIRE(eventually([&] {
    return alive(topics, [](const auto& t) { return t.name() == "Square"; }).size() == 1;
  }));
  const auto t = alive(topics, [](const auto& x) { return x.name() == "Square"; }).front();
  CHECK(t.type_name() == "ShapeType");
  CHECK(t.topic_data().value() == bytes({7, 7}));
  REQUIRE(eventually([&] { return alive(parts, [](const auto&) { return true; }).size() == 2; }));
  // A participant's user data, its own and a remote one's (its participant record).
  auto own = builtin_reader<ParticipantBuiltinTopicData>(d.a, "DCPSParticipant");
  const auto five = [](const auto& x) { return x.user_data().value() == bytes({5}); };
  REQUIRE(eventually([&] { return alive(own, five).size() == 1; }));
  CHECK(p.participant_key() == alive(own, five).front().key());
  REQUIRE(eventually([&] { return alive(parts, five).size() == 1; }));
  CHECK(alive(parts, five).front().key() == p.participant_key());

  // A reader made now shows live, and the writer and the reader see each other's data.
  dds::topic::Topic<ShapeType> tb(d.b, "Square", topic_qos());
  dds::sub::qos::SubscriberQos sq;
  sq << pol::Partition("left") << pol::GroupData(bytes({4}));
  dds::sub::Subscriber sub(d.b, sq);
  dds::sub::qos::DataReaderQos rq;
  rq << pol::UserData(bytes({3})) << pol::Reliability::Reliable();
  dds::sub::DataReader<ShapeType> reader(sub, tb, rq);
  REQUIRE(eventually([&] { return alive(subs, square).size() == 1; }));
  const auto s = alive(subs, square).front();
  CHECK(s.type_name() == "ShapeType");
  CHECK(s.user_data().value() == bytes({3}));
  CHECK(s.group_data().value() == bytes({4}));
  CHECK(s.topic_data().value() == bytes({7, 7}));
  CHECK(s.partition().name() == dds::core::StringSeq{"left"});

  REQUIRE(eventually([&] { return writer.publication_matched_status().current_count() == 1; }));
  REQUIRE(eventually([&] { return reader.subscription_matched_status().current_count() == 1; }));
  const auto sd = dds::pub::matched_subscription_data(writer, reader.instance_handle());
  CHECK(sd.user_data().value() == bytes({3}));
  CHECK(sd.key() == s.key());
  const auto pd = dds::sub::matched_publication_data(reader, writer.instance_handle());
  CHECK(pd.user_data().value() == bytes({1, 2}));
  CHECK(pd.key() == p.key());
  CHECK(dds::sub::matched_publications(reader).size() == 1);
  // Not matched with that handle.
  CHECK_THROWS_AS(dds::sub::matched_publication_data(reader, reader.instance_handle()),
                  dds::core::InvalidArgumentError);

  // A closed writer's instance is disposed.
  const auto key = p.key();
  writer.close();
  CHECK(eventually([&] { return disposed(pubs, key); }));
  reader.close();
  CHECK(eventually([&] { return disposed(subs, s.key()); }));
  // No endpoint uses "Square" any more, but both Topics do; it goes with the last of them.
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(disposed(topics, t.key()));
  ta.close();
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(disposed(topics, t.key()));
  tb.close();
  CHECK(eventually([&] { return disposed(topics, t.key()); }));
}

namespace {
class Counting : public dds::sub::NoOpDataReaderListener<PublicationBuiltinTopicData> {
 public:
  void on_data_available(dds::sub::DataReader<PublicationBuiltinTopicData>& r) override {
    for (const auto& s : r.take())
      if (s.info().valid() && s.data().topic_name() == "Circle") ++circles;
  }
  std::atomic<int> circles{0};
};
}  // namespace

TEST_CASE("a listener on a built-in reader hears a new publication", "[builtin]") {
  Domain d;
  Counting listener;
  auto pubs = builtin_reader<PublicationBuiltinTopicData>(d.b, "DCPSPublication");
  pubs.listener(&listener, dds::core::status::StatusMask::data_available());
  dds::topic::Topic<ShapeType> topic(d.a, "Circle");
  dds::pub::Publisher pub(d.a);
  dds::pub::DataWriter<ShapeType> writer(pub, topic);
  CHECK(eventually([&] { return listener.circles.load() == 1; }));
  pubs.listener(nullptr, dds::core::status::StatusMask::none());
}

TEST_CASE("a participant that leaves is disposed in DCPSParticipant", "[builtin]") {
  dds::domain::DomainParticipant a(dds::domain::default_id());
  auto parts = builtin_reader<ParticipantBuiltinTopicData>(a, "DCPSParticipant");
  dds::topic::BuiltinTopicKey key;
  {
    dds::domain::DomainParticipant b(dds::domain::default_id());
    REQUIRE(eventually([&] { return alive(parts, [](const auto&) { return true; }).size() == 2; }));
    const auto self = alive(parts, [](const auto& x) { return x.user_data().value().empty(); });
    REQUIRE(self.size() == 2);
    // b's key: the one that is not a's.
    for (const auto& p : self)
      if (p.key().value()[0] != static_cast<std::int32_t>(a.instance_handle().value() >> 32))
        key = p.key();
    b.close();
  }
  CHECK(eventually([&] { return disposed(parts, key); }));
}

TEST_CASE("a remote participant's user data shows, and its change too", "[builtin]") {
  Domain d;
  auto parts = builtin_reader<ParticipantBuiltinTopicData>(d.b, "DCPSParticipant");
  const auto key_a = [&](const auto& x) {
    return x.key().value()[0] == static_cast<std::int32_t>(d.a.instance_handle().value() >> 32);
  };
  REQUIRE(eventually([&] {
    const auto a = alive(parts, key_a);
    return a.size() == 1 && a.front().user_data().value() == bytes({5});
  }));
  auto q = d.a.qos();
  q << pol::UserData(bytes({6, 6, 6}));
  d.a.qos(q);
  CHECK(eventually([&] {
    const auto a = alive(parts, key_a);
    return a.size() == 1 && a.front().user_data().value() == bytes({6, 6, 6});
  }));
  // The same at a participant that joins now (the joining state carries the record).
  dds::domain::DomainParticipant c(dds::domain::default_id());
  auto parts_c = builtin_reader<ParticipantBuiltinTopicData>(c, "DCPSParticipant");
  CHECK(eventually([&] {
    const auto a = alive(parts_c, key_a);
    return a.size() == 1 && a.front().user_data().value() == bytes({6, 6, 6});
  }));
  CHECK(eventually([&] { return alive(parts_c, [](const auto&) { return true; }).size() == 3; }));
  close_quietly(c);
}

TEST_CASE("a topic with no endpoints shows in DCPSTopic with its own QoS", "[builtin]") {
  Domain d;
  dds::topic::qos::TopicQos q = topic_qos();
  q << pol::Durability::TransientLocal() << pol::Reliability::Reliable()
    << pol::Deadline(dds::core::Duration(4, 0));
  dds::topic::Topic<ShapeType> lonely(d.a, "Lonely", q);
  auto topics = builtin_reader<TopicBuiltinTopicData>(d.b, "DCPSTopic");
  const auto named = [](const auto& x) { return x.name() == "Lonely"; };
  REQUIRE(eventually([&] { return alive(topics, named).size() == 1; }));
  auto t = alive(topics, named).front();
  CHECK(t.type_name() == "ShapeType");
  CHECK(t.topic_data().value() == bytes({7, 7}));
  CHECK(t.durability().kind() == pol::DurabilityKind::TRANSIENT_LOCAL);
  CHECK(t.reliability().kind() == pol::ReliabilityKind::RELIABLE);
  CHECK(t.deadline().period() == dds::core::Duration(4, 0));

  // A changed topic QoS is announced again.
  q << pol::TopicData(bytes({8}));
  lonely.qos(q);
  REQUIRE(eventually([&] {
    const auto now = alive(topics, named);
    return now.size() == 1 && now.front().topic_data().value() == bytes({8});
  }));

  // dds::topic::discover finds it at b, and b's own Topic is made for it.
  const auto found = dds::topic::discover<dds::topic::Topic<ShapeType>>(
      d.b, "Lonely", dds::core::Duration::from_secs(10));
  REQUIRE(found != dds::core::null);
  CHECK(found.domain_participant() == d.b);

  // The instance goes with the last Topic of the name.
  const auto key = t.key();
  lonely.close();
  std::this_thread::sleep_for(100ms);
  CHECK_FALSE(disposed(topics, key));
  dds::topic::Topic<ShapeType>(found).close();
  CHECK(eventually([&] { return disposed(topics, key); }));
}

TEST_CASE("discover and discover_all list the domain's topics", "[builtin]") {
  Domain d;
  dds::topic::Topic<ShapeType> square(d.a, "Square");
  dds::topic::Topic<ShapeType> circle(d.a, "Circle");
  dds::topic::Topic<Bench::Sequence> seq(d.a, "Seq");
  dds::topic::Topic<ShapeType> mine(d.b, "Mine");
  // Topic<T>: every topic of the domain with T's type, each as a Topic of b.
  std::vector<dds::topic::Topic<ShapeType>> shapes;
  REQUIRE(eventually([&] {
    shapes.clear();
    return dds::topic::discover_all<dds::topic::Topic<ShapeType>>(d.b,
                                                                  std::back_inserter(shapes)) == 3;
  }));
  std::vector<std::string> names;
  for (const auto& t : shapes) {
    names.push_back(t.name());
    CHECK(t.domain_participant() == d.b);
  }
  CHECK(names == std::vector<std::string>{"Circle", "Mine", "Square"});
  // At most max_size of them, into a forward iterator.
  std::vector<dds::topic::Topic<ShapeType>> two(2, dds::topic::Topic<ShapeType>(dds::core::null));
  CHECK(dds::topic::discover<dds::topic::Topic<ShapeType>>(d.b, two.begin(), 2) == 2);
  CHECK(two[0].name() == "Circle");
  CHECK(two[1].name() == "Mine");
  std::vector<dds::topic::Topic<Bench::Sequence>> seqs;
  CHECK(eventually([&] {
    seqs.clear();
    return dds::topic::discover_all<dds::topic::Topic<Bench::Sequence>>(
               d.b, std::back_inserter(seqs)) == 1;
  }));
  // AnyTopic and TopicDescription: every topic whose type this program uses (all four here).
  std::vector<dds::topic::AnyTopic> any;
  CHECK(dds::topic::discover_all<dds::topic::AnyTopic>(d.b, std::back_inserter(any)) == 4);
  std::vector<dds::topic::TopicDescription> descriptions;
  CHECK(dds::topic::discover_all<dds::topic::TopicDescription>(
            d.b, std::back_inserter(descriptions)) == 4);
  CHECK(descriptions.front().name() == "Circle");
  CHECK(descriptions[2].type_name() == "Bench::Sequence");
  // By name, untyped: a topic only another participant had.
  dds::topic::Topic<ShapeType> only_a(d.a, "OnlyA");
  const auto found =
      dds::topic::discover<dds::topic::AnyTopic>(d.b, "OnlyA", dds::core::Duration::from_secs(10));
  REQUIRE(found != dds::core::null);
  CHECK(found.type_name() == "ShapeType");
  CHECK(found.domain_participant() == d.b);
  CHECK(dds::topic::discover<dds::topic::TopicDescription>(
            d.b, "Nowhere", dds::core::Duration::from_millisecs(20)) == dds::core::null);
}

TEST_CASE("a Topic of another type elsewhere is an inconsistent topic, endpoints or not",
          "[builtin]") {
  Domain d;
  dds::topic::Topic<ShapeType> shapes(d.a, "Clash");
  dds::topic::Topic<Bench::Sequence> sequences(d.b, "Clash");
  CHECK(eventually([&] { return shapes.inconsistent_topic_status().total_count() == 1; }));
  CHECK(eventually([&] { return sequences.inconsistent_topic_status().total_count() == 1; }));
  // Neither find nor discover gives a topic of another type.
  CHECK(dds::topic::find<dds::topic::Topic<ShapeType>>(d.b, "Clash") == dds::core::null);
  CHECK(dds::topic::discover<dds::topic::Topic<ShapeType>>(
            d.b, "Clash", dds::core::Duration::from_millisecs(50)) == dds::core::null);
}

TEST_CASE("a Topic of another type announced before the local one is inconsistent too",
          "[builtin]") {
  Domain d;
  auto topics = builtin_reader<TopicBuiltinTopicData>(d.b, "DCPSTopic");
  dds::topic::Topic<ShapeType> shapes(d.a, "Early");
  // b knows a's topic before it makes its own of another type.
  REQUIRE(eventually([&] {
    return !alive(topics, [](const TopicBuiltinTopicData& t) {
              return t.name() == "Early";
            }).empty();
  }));
  dds::topic::Topic<Bench::Sequence> sequences(d.b, "Early");
  CHECK(eventually([&] { return sequences.inconsistent_topic_status().total_count() == 1; }));
  CHECK(eventually([&] { return shapes.inconsistent_topic_status().total_count() == 1; }));
  // Once per (topic, type): a repeat of a's announcement does not count again.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(sequences.inconsistent_topic_status().total_count() == 1);
}
