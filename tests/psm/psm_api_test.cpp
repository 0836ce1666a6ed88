// The ISO C++ PSM as application code uses it: everything here is spelled with standard
// `dds::` names from <dds/dds.hpp> (no `spindle::`), plus the idlc-generated ShapeType.
// It follows the shapes of the usual DDS C++ example programs — hello world, a listener,
// a throughput-style WaitSet loop, QoS composition — so that a name a typical program uses
// but Spindle DDS lacks or spells differently fails to compile here. Each case also runs,
// in a one-member domain of this process (SPINDLE_CONFIG is set by the test).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "ShapeType.hpp"
#include "psm_test_support.hpp"

namespace {

using psm_test::eventually;

using namespace std::chrono_literals;

// Closes a matched writer and reader and gives the participant's threads time to process
// their retirement before the test drops its references. Today a discovery record handled
// while the application drops its last reference can leave that last reference to the
// protocol thread, which then cannot tear the participant down (it would join itself).
void retire(dds::pub::AnyDataWriter writer, dds::sub::AnyDataReader reader) {
  for (dds::core::Entity e : {dds::core::Entity(reader), dds::core::Entity(writer)}) {
    try {
      e.close();
    } catch (const dds::core::AlreadyClosedError&) {
      // the test closed it
    }
  }
  std::this_thread::sleep_for(50ms);
}

// The entities of one test: a participant with one topic, a writer and a reader.
struct Shapes {
  explicit Shapes(const dds::sub::qos::DataReaderQos& rqos = dds::sub::qos::DataReaderQos(),
                  dds::sub::DataReaderListener<ShapeType>* listener = nullptr,
                  const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::none())
      : participant(dds::domain::default_id()),
        topic(participant, "Square"),
        publisher(participant),
        subscriber(participant),
        writer(publisher, topic),
        reader(subscriber, topic, rqos, listener, mask) {}
  ~Shapes() { retire(writer, reader); }
  Shapes(const Shapes&) = delete;
  Shapes& operator=(const Shapes&) = delete;

  void matched() const {
    dds::pub::DataWriter<ShapeType> w = writer;
    dds::sub::DataReader<ShapeType> r = reader;
    REQUIRE(eventually([&] {
      return w.publication_matched_status().current_count() > 0 &&
             r.subscription_matched_status().current_count() > 0;
    }));
  }

  dds::domain::DomainParticipant participant;
  dds::topic::Topic<ShapeType> topic;
  dds::pub::Publisher publisher;
  dds::sub::Subscriber subscriber;
  dds::pub::DataWriter<ShapeType> writer;
  dds::sub::DataReader<ShapeType> reader;
};

dds::sub::qos::DataReaderQos reliable_keep_all() {
  dds::sub::qos::DataReaderQos rqos;
  rqos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return rqos;
}

}  // namespace

TEST_CASE("psm: hello world — write, poll take() and iterate the LoanedSamples", "[psm]") {
  Shapes s(reliable_keep_all());
  s.matched();

  ShapeType msg("RED", 10, 20, 30);
  s.writer.write(msg);
  s.writer << ShapeType("BLUE", 1, 2, 3);

  std::vector<std::string> colors;
  REQUIRE(eventually([&] {
    dds::sub::LoanedSamples<ShapeType> samples;
    samples = s.reader.take();
    if (samples.length() > 0) {
      dds::sub::LoanedSamples<ShapeType>::const_iterator it;
      for (it = samples.begin(); it < samples.end(); ++it) {
        const ShapeType& data = it->data();
        const dds::sub::SampleInfo& info = it->info();
        if (info.valid()) colors.push_back(data.color());
      }
    }
    return colors.size() == 2;
  }));
  std::sort(colors.begin(), colors.end());
  CHECK(colors == std::vector<std::string>{"BLUE", "RED"});

  std::ostringstream printed;
  printed << msg;  // idlc generates operator<<
  CHECK(!printed.str().empty());
}

namespace {

class ShapeListener : public dds::sub::NoOpDataReaderListener<ShapeType> {
 public:
  void on_data_available(dds::sub::DataReader<ShapeType>& reader) override {
    for (const auto& sample : reader.take())
      if (sample.info().valid()) ++received;
  }
  void on_subscription_matched(dds::sub::DataReader<ShapeType>&,
                               const dds::core::status::SubscriptionMatchedStatus& st) override {
    matched = st.current_count();
  }
  std::atomic<int> received{0};
  std::atomic<int> matched{0};
};

// Every callback spelled out, as programs that derive from the abstract listener do.
class FullListener : public dds::sub::DataReaderListener<ShapeType> {
 public:
  void on_requested_deadline_missed(
      dds::sub::DataReader<ShapeType>&,
      const dds::core::status::RequestedDeadlineMissedStatus&) override {}
  void on_requested_incompatible_qos(
      dds::sub::DataReader<ShapeType>&,
      const dds::core::status::RequestedIncompatibleQosStatus&) override {}
  void on_sample_rejected(dds::sub::DataReader<ShapeType>&,
                          const dds::core::status::SampleRejectedStatus&) override {}
  void on_liveliness_changed(dds::sub::DataReader<ShapeType>&,
                             const dds::core::status::LivelinessChangedStatus&) override {}
  void on_data_available(dds::sub::DataReader<ShapeType>&) override { ++calls; }
  void on_subscription_matched(dds::sub::DataReader<ShapeType>&,
                               const dds::core::status::SubscriptionMatchedStatus&) override {}
  void on_sample_lost(dds::sub::DataReader<ShapeType>&,
                      const dds::core::status::SampleLostStatus&) override {}
  std::atomic<int> calls{0};
};

class WriterListener : public dds::pub::NoOpDataWriterListener<ShapeType> {
 public:
  void on_publication_matched(dds::pub::DataWriter<ShapeType>&,
                              const dds::core::status::PublicationMatchedStatus& st) override {
    matched = st.current_count();
  }
  std::atomic<int> matched{0};
};

class ParticipantListener : public dds::domain::NoOpDomainParticipantListener {};

}  // namespace

TEST_CASE("psm: listeners on the reader, the writer and the participant", "[psm]") {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  ParticipantListener pl;
  participant.listener(&pl, dds::core::status::StatusMask::none());
  dds::topic::Topic<ShapeType> topic(participant, "Square");
  dds::sub::Subscriber subscriber(participant);

  // The listener comes with the reader, before any writer exists: it hears the match.
  ShapeListener listener;
  dds::core::status::StatusMask mask = dds::core::status::StatusMask::data_available();
  mask << dds::core::status::StatusMask::subscription_matched();
  dds::sub::DataReader<ShapeType> reader(subscriber, topic, reliable_keep_all(), &listener, mask);

  dds::pub::Publisher publisher(participant);
  dds::pub::DataWriter<ShapeType> writer(publisher, topic);
  WriterListener wl;
  writer.listener(&wl, dds::core::status::StatusMask::publication_matched());
  CHECK(writer.listener() == &wl);
  CHECK(eventually([&] { return listener.matched > 0; }));
  CHECK(eventually([&] { return writer.publication_matched_status().current_count() > 0; }));

  for (int i = 0; i < 10; ++i)
    writer.write(ShapeType("GREEN", i, i, 5));
  CHECK(eventually([&] { return listener.received == 10; }));

  reader.listener(nullptr, dds::core::status::StatusMask::none());
  CHECK(reader.listener() == nullptr);

  FullListener full;
  reader.listener(&full, dds::core::status::StatusMask::data_available());
  writer.write(ShapeType("GREEN", 0, 0, 5));
  CHECK(eventually([&] { return full.calls > 0; }));
  reader.listener(nullptr, dds::core::status::StatusMask::none());
  writer.listener(nullptr, dds::core::status::StatusMask::none());
  participant.listener(nullptr, dds::core::status::StatusMask::none());
  retire(writer, reader);
}

TEST_CASE("psm: a throughput-style WaitSet loop with status, read and guard conditions", "[psm]") {
  Shapes s(reliable_keep_all());

  // Wait for a reader the way programs do: a StatusCondition on PUBLICATION_MATCHED.
  dds::core::cond::StatusCondition matched = dds::core::cond::StatusCondition(s.writer);
  matched.enabled_statuses(dds::core::status::StatusMask::publication_matched());
  dds::core::cond::WaitSet match_ws;
  match_ws.attach_condition(matched);
  bool found = s.writer.publication_matched_status().current_count() > 0;
  while (!found) {
    dds::core::cond::WaitSet::ConditionSeq conds = match_ws.wait(dds::core::Duration::from_secs(5));
    for (const auto& c : conds)
      if (c == matched) found = s.writer.publication_matched_status().current_count() > 0;
  }
  match_ws.detach_condition(matched);

  constexpr int kSamples = 200;
  std::thread producer([&] {
    ShapeType shape("YELLOW", 0, 0, 10);
    for (int i = 0; i < kSamples; ++i) {
      shape.x(i);
      s.writer.write(shape);
    }
  });

  dds::core::cond::WaitSet waitset;
  dds::core::cond::StatusCondition data(s.reader);
  data.enabled_statuses(dds::core::status::StatusMask::data_available());
  dds::core::cond::GuardCondition terminated;
  waitset += data;
  waitset += terminated;
  std::map<dds::core::InstanceHandle, int> next;  // per writer, the x expected next
  int total = 0;
  bool out_of_order = false;
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (!terminated.trigger_value() && std::chrono::steady_clock::now() < until) {
    dds::core::cond::WaitSet::ConditionSeq conditions;
    try {
      conditions = waitset.wait(dds::core::Duration::from_millisecs(100));
    } catch (const dds::core::TimeoutError&) {
      continue;
    }
    for (const auto& c : conditions) {
      if (c != data) continue;
      for (const auto& sample : s.reader.take()) {
        if (!sample.info().valid()) continue;
        auto& expected = next[sample.info().publication_handle()];
        out_of_order = out_of_order || sample.data().x() != expected;
        expected = sample.data().x() + 1;
        if (++total == kSamples) terminated.trigger_value(true);
      }
    }
  }
  producer.join();
  CHECK(total == kSamples);
  CHECK_FALSE(out_of_order);
  waitset -= terminated;
  CHECK(waitset.conditions().size() == 1);

  // A ReadCondition with a handler, run by dispatch(); a GuardCondition with one too.
  int dispatched = 0;
  dds::sub::cond::ReadCondition rc(s.reader, dds::sub::status::DataState::new_data(),
                                   [&](dds::sub::DataReader<ShapeType>& r) {
                                     dispatched += static_cast<int>(r.take().length());
                                   });
  dds::core::cond::WaitSet dispatcher;
  dispatcher += rc;
  s.writer.write(ShapeType("YELLOW", 1, 1, 1));
  dispatcher.dispatch(dds::core::Duration::from_secs(5));
  CHECK(dispatched == 1);
  CHECK(rc.state_filter() == dds::sub::status::DataState::new_data());

  bool guard_ran = false;
  dds::core::cond::GuardCondition guard;
  guard.handler([&guard_ran] { guard_ran = true; });
  dispatcher += guard;
  guard.trigger_value(true);
  dispatcher.dispatch(dds::core::Duration::zero());
  CHECK(guard_ran);
}

TEST_CASE("psm: QoS composed with << from the policies' named constructors", "[psm]") {
  using namespace dds::core::policy;
  dds::topic::qos::TopicQos tqos;
  tqos << Reliability::Reliable(dds::core::Duration::from_secs(10)) << History::KeepAll()
       << ResourceLimits(100) << Durability::TransientLocal()
       << Deadline(dds::core::Duration::infinite()) << LatencyBudget(dds::core::Duration::zero())
       << Liveliness::Automatic() << DestinationOrder::SourceTimestamp() << Ownership::Shared()
       << Lifespan(dds::core::Duration::infinite()) << TransportPriority(0)
       << TopicData(dds::core::ByteSeq{1, 2});
  tqos.policy(Durability::Volatile());

  dds::pub::qos::PublisherQos pqos;
  pqos << Partition("ping") << Presentation::TopicAccessScope(false, true)
       << GroupData(dds::core::ByteSeq{}) << EntityFactory::AutoEnable();
  dds::sub::qos::SubscriberQos sqos;
  sqos.policy(Partition(dds::core::StringSeq{"pong", "p*"}));
  sqos << Presentation::InstanceAccessScope() << EntityFactory::ManuallyEnable();

  dds::pub::qos::DataWriterQos wqos(tqos);  // copies what a topic QoS shares
  wqos << WriterDataLifecycle::AutoDisposeUnregisteredInstances() << OwnershipStrength(10)
       << UserData(dds::core::ByteSeq{7}) << Liveliness::ManualByParticipant()
       << Reliability(ReliabilityKind::Type::RELIABLE, dds::core::Duration::from_millisecs(50));
  wqos << WriterDataLifecycle::ManuallyDisposeUnregisteredInstances();

  dds::sub::qos::DataReaderQos rqos;
  rqos = tqos;
  rqos.policy(Reliability(ReliabilityKind::Type::RELIABLE, dds::core::Duration::from_secs(10)));
  rqos.policy(History(HistoryKind::Type::KEEP_LAST, 4));
  rqos << TimeBasedFilter(dds::core::Duration::from_millisecs(0))
       << ReaderDataLifecycle::NoAutoPurgeDisposedSamples()
       << ReaderDataLifecycle::AutoPurgeDisposedSamples(dds::core::Duration::from_secs(1))
       << Liveliness::ManualByTopic(dds::core::Duration::from_secs(2)) << Ownership::Exclusive()
       << DestinationOrder::ReceptionTimestamp()
       << ResourceLimits(dds::core::LENGTH_UNLIMITED, 16, 8) << Reliability::BestEffort()
       << Durability::Volatile() << History::KeepLast(4);

  Reliability r;
  wqos >> r;
  CHECK(r.kind() == ReliabilityKind::RELIABLE);
  CHECK(r.max_blocking_time() == dds::core::Duration(0, 50'000'000));
  CHECK(rqos.policy<History>().depth() == 4);
  CHECK(rqos.policy<History>().kind() == HistoryKind::KEEP_LAST);
  CHECK(wqos.policy<OwnershipStrength>().value() == 10);
  CHECK(tqos.policy<Durability>().kind() == DurabilityKind::VOLATILE);
  CHECK(sqos.policy<Partition>().name().size() == 2);
  CHECK(policy_id<Reliability>::value != policy_id<History>::value);
  CHECK(policy_name<Reliability>::name() == "Reliability");

  // Entity defaults, and QoS applied to an entity.
  dds::domain::DomainParticipant participant(dds::domain::default_id(),
                                             dds::domain::qos::DomainParticipantQos());
  dds::topic::qos::TopicQos def = participant.default_topic_qos();
  participant.default_topic_qos(def);
  dds::topic::Topic<ShapeType> topic(participant, "Circle", tqos);
  dds::pub::Publisher publisher(participant, pqos);
  publisher.default_datawriter_qos(wqos);
  dds::pub::DataWriter<ShapeType> writer(publisher, topic);
  CHECK(writer.qos().policy<OwnershipStrength>().value() == 10);
  writer << wqos.policy(OwnershipStrength(20));
  CHECK(writer.qos().policy<OwnershipStrength>().value() == 20);
  dds::sub::qos::DataReaderQos from_topic = topic.qos();
  CHECK(from_topic.policy<History>().kind() == HistoryKind::KEEP_ALL);

  // The throughput-reader shape: KEEP_ALL (depth unused) bounded by ResourceLimits.
  dds::sub::qos::DataReaderQos tp;
  tp.policy(Reliability(ReliabilityKind::Type::RELIABLE, dds::core::Duration::from_secs(10)));
  tp.policy(History(HistoryKind::Type::KEEP_ALL, 0));
  tp.policy(ResourceLimits(1000));
  dds::sub::Subscriber subscriber(participant, dds::sub::qos::SubscriberQos());
  dds::sub::DataReader<ShapeType> reader(subscriber, topic, tp, nullptr,
                                         dds::core::status::StatusMask::none());
  CHECK(reader.qos().policy<ResourceLimits>().max_samples() == 1000);
  retire(writer, reader);
}

TEST_CASE("psm: statuses, instances, selectors and entity navigation", "[psm]") {
  Shapes s(reliable_keep_all());
  s.matched();

  // Every status getter.
  dds::core::status::PublicationMatchedStatus pm = s.writer.publication_matched_status();
  CHECK(pm.current_count() == 1);
  CHECK(pm.total_count() >= 1);
  (void)pm.total_count_change();
  (void)pm.current_count_change();
  (void)pm.last_subscription_handle();
  CHECK(s.writer.offered_deadline_missed_status().total_count() == 0);
  CHECK(s.writer.offered_incompatible_qos_status().total_count() == 0);
  CHECK(s.writer.liveliness_lost_status().total_count() == 0);
  dds::core::status::SubscriptionMatchedStatus sm = s.reader.subscription_matched_status();
  CHECK(sm.current_count() == 1);
  (void)sm.last_publication_handle();
  dds::core::status::LivelinessChangedStatus lc = s.reader.liveliness_changed_status();
  (void)lc.alive_count();
  (void)lc.not_alive_count();
  CHECK(s.reader.sample_lost_status().total_count() == 0);
  dds::core::status::SampleRejectedStatus rej = s.reader.sample_rejected_status();
  CHECK(rej.total_count() == 0);
  CHECK(rej.last_reason() == dds::core::status::SampleRejectedState::not_rejected());
  CHECK(s.reader.requested_deadline_missed_status().total_count() == 0);
  dds::core::status::RequestedIncompatibleQosStatus riq =
      s.reader.requested_incompatible_qos_status();
  CHECK(riq.policies().empty());
  (void)riq.last_policy_id();
  CHECK(s.topic.inconsistent_topic_status().total_count() == 0);
  (void)s.reader.status_changes();
  CHECK(s.writer.matched_subscriptions().size() == 1);
  CHECK(s.reader.matched_publications().size() == 1);

  // Instances: register, write with the handle, look up, dispose.
  ShapeType red("RED", 0, 0, 1);
  dds::core::InstanceHandle h = s.writer.register_instance(red);
  CHECK_FALSE(h.is_nil());
  CHECK(s.writer.lookup_instance(red) == h);
  s.writer.write(red, h);
  s.writer.write(ShapeType("BLUE", 0, 0, 1), s.participant.current_time());
  for (int i = 1; i <= 3; ++i)
    s.writer.write(ShapeType("RED", i, i, 1));
  ShapeType key;
  s.writer.key_value(key, h);
  CHECK(key.color() == "RED");

  // read() leaves the samples in the reader, marked READ.
  REQUIRE(eventually([&] { return s.reader.read().length() == 5; }));
  // Selectors: only the RED instance, at most two samples.
  const dds::core::InstanceHandle rh = s.reader.lookup_instance(red);
  REQUIRE_FALSE(rh.is_nil());
  dds::sub::DataReader<ShapeType>::Selector selector(s.reader);
  selector.instance(rh).max_samples(2);
  dds::sub::LoanedSamples<ShapeType> two = selector.read();
  CHECK(two.length() == 2);
  for (const auto& sample : two) {
    CHECK(sample.data().color() == "RED");
    CHECK(sample.info().instance_handle() == rh);
    CHECK(sample.info().state().instance_state() == dds::sub::status::InstanceState::alive());
    CHECK(sample.info().state().sample_state() == dds::sub::status::SampleState::read());
    CHECK(sample.info().timestamp().sec() > 0);
  }
  // Nothing is new until the next write; then exactly that sample.
  CHECK(s.reader.select().state(dds::sub::status::DataState::new_data()).take().length() == 0);
  dds::sub::cond::ReadCondition fresh_data(s.reader, dds::sub::status::DataState::new_data());
  dds::core::cond::WaitSet ws;
  ws += fresh_data;
  s.writer.write(ShapeType("RED", 4, 4, 1));
  ws.wait(dds::core::Duration::from_secs(5));
  dds::sub::LoanedSamples<ShapeType> fresh =
      s.reader.select().state(dds::sub::status::DataState::new_data()).take();
  REQUIRE(fresh.length() == 1);
  CHECK(fresh.begin()->data().x() == 4);
  auto rest = s.reader.select()
                  .state(dds::sub::status::DataState(dds::sub::status::SampleState::read(),
                                                     dds::sub::status::ViewState::any(),
                                                     dds::sub::status::InstanceState::any()))
                  .take();
  CHECK(rest.length() == 5);
  dds::sub::LoanedSamples<ShapeType> moved = dds::sub::move(rest);
  CHECK(moved.length() == 5);

  s.writer.dispose_instance(h);
  REQUIRE(eventually([&] {
    for (const auto& sample : s.reader.take())
      if (!sample.info().valid() && sample.info().state().instance_state() ==
                                        dds::sub::status::InstanceState::not_alive_disposed())
        return true;
    return false;
  }));
  s.writer.unregister_instance(h);

  // Navigation between entities.
  CHECK(s.topic.name() == "Square");
  CHECK_FALSE(s.topic.type_name().empty());
  CHECK(s.reader.topic_description().name() == "Square");
  CHECK(s.writer.topic() == s.topic);
  CHECK(s.writer.publisher() == s.publisher);
  CHECK(s.reader.subscriber().participant() == s.participant);
  CHECK(s.participant.domain_id() == 0);  // default_id() stands for the file's domain
  CHECK(s.participant.contains_entity(s.writer.instance_handle()));
  dds::pub::AnyDataWriter any_writer = s.writer;
  dds::sub::AnyDataReader any_reader = s.reader;
  CHECK(any_writer.topic_name() == any_reader.topic_name());
  s.writer.wait_for_acknowledgments(dds::core::Duration::from_secs(5));
  s.publisher.wait_for_acknowledgments(dds::core::Duration::from_secs(5));
  s.reader.wait_for_historical_data(dds::core::Duration::from_secs(1));
}

TEST_CASE("psm: samples copied into containers, and topics found by name", "[psm]") {
  Shapes s(reliable_keep_all());
  s.matched();
  for (int i = 0; i < 6; ++i)
    s.writer.write(ShapeType("ORANGE", i, 0, 1));
  REQUIRE(eventually([&] { return s.reader.read().length() == 6; }));

  std::vector<dds::sub::Sample<ShapeType>> first(4);
  CHECK(s.reader.read(first.begin(), 4) == 4);
  CHECK(first[3].data().x() == 3);
  std::vector<dds::sub::Sample<ShapeType>> all;
  CHECK(s.reader.take(std::back_inserter(all)) == 6);
  CHECK(all.size() == 6);
  CHECK(s.reader.take(first.begin(), 4) == 0);

  auto found = dds::topic::find<dds::topic::Topic<ShapeType>>(s.participant, "Square");
  CHECK(found == s.topic);
  dds::topic::AnyTopic any = dds::topic::find<dds::topic::AnyTopic>(s.participant, "Square");
  CHECK(any.name() == "Square");
  CHECK(dds::topic::find<dds::topic::Topic<ShapeType>>(s.participant, "Hexagon") ==
        dds::core::null);
}

TEST_CASE("psm: time, durations and errors as dds::core exceptions", "[psm]") {
  CHECK(dds::core::Duration::from_secs(1.5) == dds::core::Duration(1, 500'000'000));
  CHECK(dds::core::Duration::from_millisecs(100) < dds::core::Duration::infinite());
  CHECK(dds::core::Duration::zero() + dds::core::Duration::from_microsecs(5) ==
        dds::core::Duration(0, 5000));
  CHECK(dds::core::Duration(std::chrono::milliseconds(250)).to_millisecs() == 250);
  const dds::core::Time t(10, 5);
  CHECK(t.sec() == 10);
  CHECK(t.nanosec() == 5u);
  CHECK(t + dds::core::Duration(1, 0) == dds::core::Time(11, 5));
  CHECK_THROWS_AS(dds::core::Duration(-1, 0), dds::core::InvalidArgumentError);

  dds::pub::DataWriter<ShapeType> nil = dds::core::null;
  CHECK(nil.is_nil());
  CHECK(nil == dds::core::null);
  CHECK_THROWS_AS(nil.write(ShapeType()), dds::core::NullReferenceError);

  Shapes s;
  // Nothing triggers: wait() times out.
  dds::core::cond::WaitSet ws;
  dds::core::cond::GuardCondition never;
  ws += never;
  CHECK_THROWS_AS(ws.wait(dds::core::Duration::from_millisecs(10)), dds::core::TimeoutError);

  // Contradicting policies, a closed entity, a catch of the common base.
  dds::pub::qos::DataWriterQos bad;
  bad << dds::core::policy::History::KeepLast(10)
      << dds::core::policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED,
                                           5);
  CHECK_THROWS_AS(dds::pub::DataWriter<ShapeType>(s.publisher, s.topic, bad),
                  dds::core::InconsistentPolicyError);
  CHECK_THROWS_AS(dds::core::QosProvider("no-such-file.yaml"), dds::core::InvalidArgumentError);
  s.writer.close();
  bool caught = false;
  try {
    s.writer.write(ShapeType());
  } catch (const dds::core::AlreadyClosedError&) {
    caught = true;
  } catch (const dds::core::Exception& e) {
    FAIL("unexpected DDS error: " << e.what());
  }
  CHECK(caught);
  try {
    throw dds::core::PreconditionNotMetError("x");
  } catch (const dds::core::Exception& e) {
    CHECK(std::string(e.what()) == "x");
  }
  CHECK_THROWS_AS(throw dds::core::Error("e"), std::exception);
}

TEST_CASE("psm: QosProvider profiles feed every entity", "[psm]") {
  dds::core::QosProvider qp("atomic.yaml", "atomic");
  dds::domain::DomainParticipant participant(dds::domain::default_id(), qp.participant_qos());
  dds::topic::Topic<ShapeType> topic(participant, "Triangle", qp.topic_qos());
  dds::pub::Publisher publisher(participant, qp.publisher_qos());
  dds::sub::Subscriber subscriber(participant, qp.subscriber_qos());
  dds::pub::DataWriter<ShapeType> writer(publisher, topic, qp.datawriter_qos("atomic"));
  dds::sub::DataReader<ShapeType> reader(subscriber, topic, qp.datareader_qos());
  CHECK(reader.qos().policy<dds::core::policy::Reliability>().kind() ==
        dds::core::policy::ReliabilityKind::RELIABLE);
  retire(writer, reader);
}

// ----------------------------------------------------------------- core value types (#23)

#ifndef OMG_DDS_OWNERSHIP_SUPPORT
#error "OMG_DDS_OWNERSHIP_SUPPORT: exclusive ownership is supported and must say so"
#endif
#ifndef OMG_DDS_PERSISTENCE_SUPPORT
#error "OMG_DDS_PERSISTENCE_SUPPORT: TRANSIENT/PERSISTENT durability is supported"
#endif
#ifndef OMG_DDS_CONTENT_SUBSCRIPTION_SUPPORT
#error "OMG_DDS_CONTENT_SUBSCRIPTION_SUPPORT: ContentFilteredTopic and QueryCondition are supported"
#endif
#ifdef OMG_DDS_MULTI_TOPIC_SUPPORT
#error "OMG_DDS_MULTI_TOPIC_SUPPORT: MultiTopic is not supported and must not be claimed"
#endif

TEST_CASE("core: Duration and Time from whole seconds, and Duration arithmetic", "[core]") {
  const dds::core::Duration five(5);
  CHECK(five.sec() == 5);
  CHECK(five.nanosec() == 0);
  CHECK(dds::core::Time(7).sec() == 7);
  CHECK(dds::core::Time(7).nanosec() == 0);
  CHECK(dds::core::Time(7, 5).nanosec() == 5);

  auto d = dds::core::Duration::from_millisecs(1500);
  d *= 2;
  CHECK(d == dds::core::Duration(3));
  CHECK(d / 4 == dds::core::Duration::from_millisecs(750));
  CHECK(dds::core::Duration(1) / 3 == dds::core::Duration(0, 333'333'333));
  CHECK((dds::core::Duration::infinite() / 7).is_infinite());
  CHECK_THROWS_AS(d / 0, dds::core::InvalidArgumentError);
  // A product past the largest span saturates to infinite, like a sum.
  auto big = dds::core::Duration(1'000'000'000);
  big *= 1'000'000'000'000ULL;
  CHECK(big.is_infinite());
  CHECK_THROWS_AS(dds::core::Duration(-1), dds::core::InvalidArgumentError);
}

TEST_CASE("core: dds::core::null is the nil InstanceHandle", "[core]") {
  dds::core::InstanceHandle h = dds::core::null;
  CHECK(h.is_nil());
  CHECK(h == dds::core::null);
  CHECK(h == dds::core::InstanceHandle::nil());
  const dds::core::InstanceHandle some(42);
  CHECK(some != dds::core::null);
  h = some;
  CHECK_FALSE(h == dds::core::null);
  h = dds::core::null;
  CHECK(h.is_nil());
}

#ifdef OMG_DDS_OWNERSHIP_SUPPORT
TEST_CASE("core: code guarded by OMG_DDS_OWNERSHIP_SUPPORT gets ownership", "[core]") {
  // Portable programs set ownership only under the macro: it must be there, and work.
  dds::pub::qos::DataWriterQos q;
  q << dds::core::policy::Ownership::Exclusive() << dds::core::policy::OwnershipStrength(7);
  CHECK(q.policy<dds::core::policy::OwnershipStrength>().value() == 7);
  CHECK(q.policy<dds::core::policy::Ownership>().kind() ==
        dds::core::policy::OwnershipKind::EXCLUSIVE);
}
#endif
