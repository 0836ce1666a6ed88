// Participant and topic records from a faulty or hostile member, through the whole stack in
// the simulator: a record that does not decode, that names another member's participant or
// topic, or a retirement of another member's topic is dropped (and reported), and what the
// others show of the domain — DCPSParticipant, DCPSTopic — and their traffic are untouched.
#include <cstddef>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ShapeType.hpp"
#include "dcps/wire.hpp"
#include "discovery/records.hpp"
#include "psm_test_support.hpp"
#include "sim_stack.hpp"

namespace sim = spindle::transport::sim;
namespace dcps = spindle::dcps;
namespace pol = dds::core::policy;
using spindle::testing::SimStack;

namespace {

using psm_test::alive;
using psm_test::builtin_reader;

// The user data DCPSParticipant shows for member `node` (empty when it shows none alive).
std::vector<dds::core::ByteSeq> user_data_of(
    dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>& r, std::uint32_t node) {
  std::vector<dds::core::ByteSeq> out;
  for (const auto& p : alive(
           r, [&](const auto& x) { return x.key().value()[0] == static_cast<std::int32_t>(node); }))
    out.push_back(p.user_data().value());
  return out;
}

// The topic data DCPSTopic shows for topic `name` while it is alive.
std::vector<dds::core::ByteSeq> topic_data_of(
    dds::sub::DataReader<dds::topic::TopicBuiltinTopicData>& r, const std::string& name) {
  std::vector<dds::core::ByteSeq> out;
  for (const auto& t : alive(r, [&](const auto& x) { return x.name() == name; }))
    out.push_back(t.topic_data().value());
  return out;
}

// What is written to std::cerr while it lives (then std::cerr is as it was).
class CerrCapture {
 public:
  CerrCapture() : was_(std::cerr.rdbuf(text_.rdbuf())) {}
  ~CerrCapture() { std::cerr.rdbuf(was_); }
  CerrCapture(const CerrCapture&) = delete;
  CerrCapture& operator=(const CerrCapture&) = delete;
  [[nodiscard]] std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* was_;
};

dcps::SampleHeader builtin(dcps::SampleKind kind, std::uint64_t writer) {
  dcps::SampleHeader h;
  h.kind = kind;
  h.writer = writer;
  return h;
}

}  // namespace

TEST_CASE("records: a member's bad or forged records change nothing elsewhere", "[records]") {
  SimStack stack(sim::Config{}, 3);
  // Member 1: a participant with user data and a topic with topic data.
  auto q = stack.participant(0).qos();
  q << pol::UserData(dds::core::ByteSeq{1});
  stack.participant(0).qos(q);
  dds::topic::qos::TopicQos tq;
  tq << pol::TopicData(dds::core::ByteSeq{7});
  dds::topic::Topic<ShapeType> topic(stack.participant(0), "Square", tq);
  const auto topic_guid = topic.instance_handle().value();

  auto parts = builtin_reader<dds::topic::ParticipantBuiltinTopicData>(stack.participant(1),
                                                                       "DCPSParticipant");
  auto topics =
      builtin_reader<dds::topic::TopicBuiltinTopicData>(stack.participant(1), "DCPSTopic");
  const auto as_before = [&] {
    return user_data_of(parts, 1) == std::vector<dds::core::ByteSeq>{{1}} &&
           topic_data_of(topics, "Square") == std::vector<dds::core::ByteSeq>{{7}};
  };
  REQUIRE(stack.run_until(as_before));

  // Member 3 forges: its own participant record claiming member 1's guid; a topic record
  // naming a topic of member 1; bytes that are no record; a retirement of member 1's topic.
  // Every member reports what it dropped (the simulator runs them on this thread).
  CerrCapture reports;
  spindle::discovery::ParticipantRecord fake_participant;
  fake_participant.guid = dcps::make_guid(1, 1);
  fake_participant.qos << pol::UserData(dds::core::ByteSeq{9});
  const auto p_bytes = spindle::discovery::encode(fake_participant);
  stack.forge(2, builtin(dcps::SampleKind::announce_participant, dcps::make_guid(3, 1)), p_bytes);

  spindle::discovery::TopicRecord fake_topic;
  fake_topic.guid = topic_guid;
  fake_topic.topic_name = "Square";
  fake_topic.type_name = "ShapeType";
  fake_topic.qos << pol::TopicData(dds::core::ByteSeq{9});
  const auto t_bytes = spindle::discovery::encode(fake_topic);
  stack.forge(2, builtin(dcps::SampleKind::announce_topic, dcps::make_guid(3, 99)), t_bytes);

  const std::vector<std::byte> junk(12, std::byte{0xee});
  stack.forge(2, builtin(dcps::SampleKind::announce_topic, dcps::make_guid(3, 98)), junk);
  stack.forge(2, builtin(dcps::SampleKind::announce_participant, dcps::make_guid(3, 1)), junk);

  // A retirement in member 1's name: the router drops it (its writer is not the sender's).
  const auto malformed_before = stack.malformed(1);
  stack.forge(2, builtin(dcps::SampleKind::retire_topic, topic_guid), {});
  REQUIRE(stack.run_until([&] { return stack.malformed(1) > malformed_before; }));

  (void)stack.run_until([] { return false; }, std::chrono::milliseconds(50));
  const auto said = reports.text();
  INFO(said);
  CHECK(said.find("dropped a announce_participant record from node 3: guid is not the sending "
                  "member's participant's") != std::string::npos);
  CHECK(said.find("dropped a announce_topic record from node 3: guid is not one of the sending "
                  "member's") != std::string::npos);
  CHECK(said.find("dropped a announce_topic record from node 3: topic record: version: 238 at "
                  "offset 0, this node reads 2") != std::string::npos);
  CHECK(said.find("dropped a announce_participant record from node 3: participant record: "
                  "version: 238") != std::string::npos);
  CHECK(as_before());
  // Member 3 itself is still shown with its own (empty) user data, once.
  CHECK(user_data_of(parts, 3) == std::vector<dds::core::ByteSeq>{{}});

  // And the domain still works: member 1 writes, member 2 reads.
  dds::topic::Topic<ShapeType> topic2(stack.participant(1), "Square");
  dds::pub::DataWriter<ShapeType> w(dds::pub::Publisher(stack.participant(0)), topic);
  dds::sub::qos::DataReaderQos rq;
  rq << pol::Reliability::Reliable();
  dds::sub::DataReader<ShapeType> r(dds::sub::Subscriber(stack.participant(1)), topic2, rq);
  REQUIRE(stack.run_until([&] { return w.publication_matched_status().current_count() == 1; }));
  w.write(ShapeType("RED", 1, 2, 3));
  CHECK(stack.run_until([&] { return r.read().length() == 1; }));
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(stack.halted(i).empty());
}

TEST_CASE(
    "records: an untyped discover of a topic whose type the program does not use is "
    "refused, naming the type",
    "[records]") {
  SimStack stack(sim::Config{}, 2);
  // Member 2's own topic, of a type no code of this program has: as another program's would be.
  spindle::discovery::TopicRecord ghost;
  ghost.guid = dcps::make_guid(2, 77);
  ghost.topic_name = "Ghost";
  ghost.type_name = "Elsewhere::Unknown";
  stack.forge(1, builtin(dcps::SampleKind::announce_topic, ghost.guid),
              spindle::discovery::encode(ghost));
  REQUIRE(stack.run_until([&] {
    for (const auto& t : stack.participant(0).core().discovered_topics())
      if (t.name == "Ghost") return true;
    return false;
  }));
  CHECK_THROWS_WITH(dds::topic::discover<dds::topic::AnyTopic>(stack.participant(0), "Ghost"),
                    "dds::topic::discover: topic 'Ghost' has type 'Elsewhere::Unknown', which this "
                    "program does not use: discover it as a Topic of that type");
  CHECK_THROWS_AS(dds::topic::discover<dds::topic::TopicDescription>(stack.participant(0), "Ghost"),
                  dds::core::UnsupportedError);
  // Typed, it is not of ShapeType: nothing.
  CHECK(dds::topic::discover<dds::topic::Topic<ShapeType>>(
            stack.participant(0), "Ghost", dds::core::Duration::zero()) == dds::core::null);
}
