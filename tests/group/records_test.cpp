// Participant and topic records from a faulty or hostile member, through the whole stack in
// the simulator: a record that does not decode, that names another member's participant or
// topic, or a retirement of another member's topic is dropped (and reported), and what the
// others show of the domain — DCPSParticipant, DCPSTopic — and their traffic are untouched.
#include <cstddef>
#include <iostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ShapeType.hpp"
#include "dcps/entities.hpp"
#include "dcps/le.hpp"
#include "dcps/wire.hpp"
#include "discovery/records.hpp"
#include "group/engine.hpp"
#include "group/sim_runtime.hpp"
#include "psm_test_support.hpp"
#include "sim_stack.hpp"
#include "temp_dir.hpp"

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
                  "offset 0, this node reads 2 to 6") != std::string::npos);
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

// Refresh messages (docs/storage.md, "Refresh") from a member that sends nonsense: each is
// dropped, named, and changes no history; a well-formed request from a member whose history is
// whole only sends it the same history again.
TEST_CASE("records: bad refresh messages change no history", "[records][refresh]") {
  SimStack stack(sim::Config{}, 3);
  dds::pub::qos::DataWriterQos wq;
  wq << pol::Reliability::Reliable() << pol::Durability::TransientLocal()
     << pol::History::KeepLast(100);
  dds::topic::Topic<ShapeType> topic(stack.participant(0), "Kept");
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(stack.participant(0)), topic, wq);
  auto write = [&](int from, int to) {
    for (int i = from; i < to; ++i)
      writer.write(ShapeType("RED", i, i, 1));
  };
  auto all_keep = [&](std::size_t n) {
    return stack.run_until([&] {
      for (std::size_t i = 0; i < 3; ++i)
        if (stack.retained(i, "Kept").size() != n) return false;
      return true;
    });
  };
  write(0, 20);
  REQUIRE(all_keep(20));
  const auto kept = stack.retained(0, "Kept");
  const std::uint64_t topic_id = dcps::topic_id("Kept");
  auto state = [&](std::uint64_t epoch, std::uint32_t piece, std::uint32_t pieces, std::uint32_t n,
                   std::size_t extra) {
    std::vector<std::byte> p;
    dcps::put_le(p, epoch, 8);
    dcps::put_le(p, topic_id, 8);
    dcps::put_le(p, piece, 4);
    dcps::put_le(p, pieces, 4);
    dcps::put_le(p, n, 4);
    for (std::uint32_t i = 0; i < std::min<std::uint32_t>(n, 2); ++i)
      dcps::put_le(p, 1, 4);
    p.resize(p.size() + extra, std::byte{0x5a});
    return p;
  };
  const auto from3 = dcps::make_guid(3, 0);
  const auto epoch = stack.view(0).epoch;
  std::string said;
  {
    CerrCapture cerr;
    stack.forge(2, builtin(dcps::SampleKind::refresh_request, from3),
                std::vector<std::byte>(5, std::byte{1}));
    stack.forge(2, builtin(dcps::SampleKind::refresh_state, from3),
                std::vector<std::byte>(10, std::byte{1}));
    stack.forge(2, builtin(dcps::SampleKind::refresh_state, from3), state(epoch, 5, 2, 1, 8));
    stack.forge(2, builtin(dcps::SampleKind::refresh_state, from3), state(epoch, 0, 1, 1000, 0));
    // Cut at another boundary, and sent in another member's name: dropped.
    stack.forge(2, builtin(dcps::SampleKind::refresh_state, from3), state(epoch + 7, 0, 1, 1, 64));
    stack.forge(2, builtin(dcps::SampleKind::refresh_state, dcps::make_guid(1, 0)),
                state(epoch, 0, 1, 1, 64));
    REQUIRE(stack.run_until([&] { return stack.malformed(0) >= 1 && stack.malformed(1) >= 1; }));
    (void)stack.run_until([] { return false; }, std::chrono::milliseconds(50));
    said = cerr.text();
  }
  CHECK(said.find("dropped a refresh_request message from node 3: not a list of topic ids") !=
        std::string::npos);
  CHECK(said.find("dropped a refresh_state message from node 3: shorter than its 28-byte head") !=
        std::string::npos);
  CHECK(said.find("piece 5 of 2 for 1 members") != std::string::npos);
  CHECK(said.find("for 1000 members") != std::string::npos);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(stack.retained(i, "Kept") == kept);
    CHECK(stack.history_whole(i));
    CHECK(stack.refreshes(i) == 0);
  }
  // A well-formed request from member 3: the next boundary sends it the history it has.
  std::vector<std::byte> ask;
  dcps::put_le(ask, topic_id, 8);
  stack.forge(2, builtin(dcps::SampleKind::refresh_request, from3), ask);
  REQUIRE(stack.run_until([&] { return stack.refreshes(2) == 1 && stack.history_whole(2); }));
  CHECK(stack.view(0).epoch > epoch);
  write(20, 30);
  REQUIRE(stack.run_until([&] {
    return stack.retained(0, "Kept") != kept &&
           stack.retained(2, "Kept") == stack.retained(0, "Kept") &&
           stack.retained(1, "Kept") == stack.retained(0, "Kept");
  }));
  CHECK(stack.refreshes(0) == 0);
  CHECK(stack.refreshes(1) == 0);
  // Every member asks at once: nobody holds the history whole to send it. Nobody waits any
  // more past the next boundary, each says so, nothing is held back, and no view change
  // follows another (no member asks again).
  const auto whole = stack.retained(0, "Kept");
  {
    CerrCapture cerr;
    const auto before = stack.view(0).epoch;
    for (std::size_t i = 0; i < 3; ++i)
      stack.forge(i,
                  builtin(dcps::SampleKind::refresh_request,
                          dcps::make_guid(static_cast<std::uint32_t>(i + 1), 0)),
                  ask);
    REQUIRE(stack.run_until([&] { return stack.view(0).epoch > before; }));
    (void)stack.run_until([] { return false; }, std::chrono::milliseconds(200));
    const auto settled = stack.view(0).epoch;
    (void)stack.run_until([] { return false; }, std::chrono::seconds(1));
    CHECK(stack.view(0).epoch == settled);
    said = cerr.text();
  }
  CHECK(said.find("no member holds the whole history of retained topic") != std::string::npos);
  write(30, 35);
  REQUIRE(stack.run_until([&] {
    for (std::size_t i = 0; i < 3; ++i)
      if (stack.retained(i, "Kept").size() != whole.size() + 5 || !stack.history_whole(i))
        return false;
    return true;
  }));
  CHECK(stack.retained(1, "Kept") == stack.retained(0, "Kept"));
  CHECK(stack.retained(2, "Kept") == stack.retained(0, "Kept"));
}

// The joining state's refresh records (kind 8: a member waiting for a retained history, 12
// bytes; kind 9: a history with a hole at the leader, 8 bytes) of the wrong size are dropped,
// naming what was wrong, and the participant starts with the rest.
TEST_CASE("records: refresh records of the wrong size in the joining state are dropped, named",
          "[records][refresh]") {
  sim::Network net{sim::Config{}};
  net.add_node(1);
  spindle::group::LayoutSettings settings;
  const auto view = spindle::group::first_view({spindle::group::Member{1, "sim", 0}}, settings);
  auto engine = std::make_unique<spindle::group::Engine>(
      view, net.node(1), std::make_unique<spindle::group::SimRuntime>(net, 1),
      std::chrono::milliseconds(0), 0, settings);
  std::vector<std::byte> state;
  auto put = [&](std::uint8_t kind, std::size_t n) {
    state.push_back(std::byte{kind});
    for (int i = 0; i < 4; ++i)
      state.push_back(static_cast<std::byte>((n >> (8 * i)) & 0xff));
    state.resize(state.size() + n, std::byte{0x11});
  };
  put(8, 5);
  put(9, 12);
  const spindle::testing::TempDir logs("spindle-records-logs");
  std::string said;
  {
    CerrCapture cerr;
    auto core = std::make_shared<dcps::Participant>(0, dds::domain::qos::DomainParticipantQos(),
                                                    std::move(engine), state,
                                                    spindle::storage::LogSettings{logs.path()});
    dds::domain::DomainParticipant participant(core);
    said = cerr.text();
    CHECK(core->history_whole());
    participant.close();
  }
  CHECK(said.find("a record of the joining state was dropped: a refresh record of 5 bytes") !=
        std::string::npos);
  CHECK(said.find("a record of the joining state was dropped: a refresh record of 12 bytes") !=
        std::string::npos);
}

// Repair messages (docs/dcps.md, "Repair") are checked whole before any reader sees one: a
// request that is no list of topics, a piece too short or of a repair that never started, a
// repair whose floors or messages do not decode, and one that carries another member's writer's
// changes are dropped and named, and no reader takes anything from them. A well-formed request
// is answered, and a reader that already has every latest change takes nothing more.
TEST_CASE("records: bad repair messages reach no reader", "[records][repair]") {
  SimStack stack(sim::Config{}, 3);
  dds::pub::qos::DataWriterQos wq;
  wq << pol::Reliability::Reliable() << pol::History::KeepLast(1);
  dds::sub::qos::DataReaderQos rq;
  rq << pol::Reliability::Reliable() << pol::History::KeepAll();
  std::vector<dds::topic::Topic<ShapeType>> topics;
  for (std::size_t i = 0; i < 3; ++i)
    topics.emplace_back(stack.participant(i), "Fix");
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(stack.participant(0)), topics[0], wq);
  std::vector<dds::sub::DataReader<ShapeType>> readers;
  for (std::size_t i = 1; i < 3; ++i)
    readers.emplace_back(dds::sub::Subscriber(stack.participant(i)), topics[i], rq);
  REQUIRE(
      stack.run_until([&] { return writer.publication_matched_status().current_count() == 2; }));
  writer.write(ShapeType("RED", 1, 1, 1));
  std::size_t took[2] = {0, 0};
  auto take = [&] {
    for (std::size_t r = 0; r < 2; ++r)
      for (const auto& x : readers[r].take())
        if (x.info().valid()) ++took[r];
  };
  REQUIRE(stack.run_until([&] {
    take();
    return took[0] == 1 && took[1] == 1;
  }));
  const std::uint64_t topic_id = dcps::topic_id("Fix");
  const std::uint64_t writer_guid = writer.instance_handle().value();
  const std::uint64_t reader_guid = readers[0].instance_handle().value();
  // One piece for node 2 (member 2), `piece` of `pieces`, with `bytes`.
  auto piece = [&](std::uint32_t at, std::uint32_t pieces, const std::vector<std::byte>& bytes) {
    std::vector<std::byte> p;
    dcps::put_le(p, stack.view(0).epoch, 8);
    dcps::put_le(p, topic_id, 8);
    dcps::put_le(p, at, 4);
    dcps::put_le(p, pieces, 4);
    dcps::put_le(p, 1, 4);
    dcps::put_le(p, 2, 4);
    p.insert(p.end(), bytes.begin(), bytes.end());
    return p;
  };
  // A repair's bytes: a floor of 0 for member 2's reader and writer `w`, then one data message
  // of `w` numbered 9 (kind `kind`).
  auto repair = [&](std::uint64_t w, dcps::SampleKind kind) {
    std::vector<std::byte> b;
    dcps::put_le(b, 1, 4);
    dcps::put_le(b, reader_guid, 8);
    dcps::put_le(b, w, 8);
    dcps::put_le(b, 0, 8);
    dcps::SampleHeader h;
    h.kind = kind;
    h.topic = kind == dcps::SampleKind::data ? topic_id : 0;
    h.writer = w;
    h.seq = 9;
    const std::vector<std::byte> payload(8, std::byte{0});
    dcps::put_le(b, sizeof h + payload.size(), 4);
    dcps::put_le(b, 1, 8);  // its place: view 1, subgroup 0, order 0
    dcps::put_le(b, 0, 4);
    dcps::put_le(b, 0, 8);
    const auto head = std::as_bytes(std::span(&h, 1));
    b.insert(b.end(), head.begin(), head.end());
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
  };
  const auto from3 = dcps::make_guid(3, 0);
  const auto fix = dcps::SampleKind::repair;
  std::string said;
  {
    CerrCapture cerr;
    stack.forge(2, builtin(dcps::SampleKind::repair_request, from3),
                std::vector<std::byte>(5, std::byte{1}));
    stack.forge(2, builtin(fix, from3), std::vector<std::byte>(10, std::byte{1}));
    stack.forge(2, builtin(fix, from3), piece(1, 2, repair(writer_guid, dcps::SampleKind::data)));
    std::vector<std::byte> many;
    dcps::put_le(many, 1000, 4);
    stack.forge(2, builtin(fix, from3), piece(0, 1, many));
    stack.forge(2, builtin(fix, from3),
                piece(0, 1, repair(dcps::make_guid(3, 7), dcps::SampleKind::announce_writer)));
    // Member 1's writer's change, sent by member 3: not its own.
    stack.forge(2, builtin(fix, from3), piece(0, 1, repair(writer_guid, dcps::SampleKind::data)));
    // In member 1's name, from member 3.
    stack.forge(2, builtin(fix, dcps::make_guid(1, 0)),
                piece(0, 1, repair(writer_guid, dcps::SampleKind::data)));
    (void)stack.run_until([] { return false; }, std::chrono::milliseconds(50));
    said = cerr.text();
  }
  INFO(said);
  CHECK(said.find("dropped a repair_request message from node 3: not a list of topic ids") !=
        std::string::npos);
  CHECK(said.find("dropped a repair message from node 3: shorter than its 28-byte head") !=
        std::string::npos);
  CHECK(said.find("piece 1 of a repair that did not start here") != std::string::npos);
  CHECK(said.find("1000 floors do not fit a repair of") != std::string::npos);
  CHECK(said.find("is a announce_writer, not a change of an instance") != std::string::npos);
  CHECK(said.find("a message of writer " + std::to_string(writer_guid) + " on topic " +
                  std::to_string(topic_id) + " is not node 3's") != std::string::npos);
  // The one in member 1's name never reaches the handler: the Router drops it as malformed.
  CHECK(stack.malformed(1) >= 1);
  take();
  CHECK(took[0] == 1);
  CHECK(stack.repairs(1) == 0);
  // A well-formed request in member 3's name: member 1 answers it, and member 3's reader,
  // which has the writer's latest change already, takes nothing more.
  std::vector<std::byte> ask;
  dcps::put_le(ask, topic_id, 8);
  stack.forge(2, builtin(dcps::SampleKind::repair_request, from3), ask);
  (void)stack.run_until([] { return false; }, std::chrono::milliseconds(200));
  take();
  CHECK(took[1] == 1);
  CHECK(stack.repairs(2) == 0);
  // The stream goes on.
  writer.write(ShapeType("RED", 2, 2, 1));
  REQUIRE(stack.run_until([&] {
    take();
    return took[0] == 2 && took[1] == 2;
  }));
}
