// The sample header of every DCPS message in an SMC slot (runtime/src/dcps/wire.hpp): what
// parse() accepts, and the exact reason it gives for each kind of bad slot — a slot is
// written by another process, so nothing in it is trusted.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "dcps/repair.hpp"
#include "dcps/retained.hpp"
#include "dcps/wire.hpp"

namespace dcps = spindle::dcps;

namespace {

std::vector<std::byte> slot(const dcps::SampleHeader& h, std::size_t payload = 0) {
  std::vector<std::byte> out(sizeof h + payload, std::byte{0x5a});
  std::memcpy(out.data(), &h, sizeof h);
  return out;
}

std::string reject(const std::vector<std::byte>& bytes) {
  std::string error;
  CHECK_FALSE(dcps::parse(bytes, error).has_value());
  return error;
}

constexpr std::uint64_t kWriter = dcps::make_guid(1, 2);  // a writer a keeper keeps

dcps::SampleHeader data_header() {
  dcps::SampleHeader h;
  h.kind = dcps::SampleKind::data;
  h.topic = dcps::topic_id("FlightState");
  h.writer = dcps::make_guid(3, 7);
  return h;
}

}  // namespace

TEST_CASE("wire: a well-formed slot splits into header and payload", "[dcps][wire]") {
  const auto bytes = slot(data_header(), 10);
  std::string error;
  const auto p = dcps::parse(bytes, error);
  REQUIRE(p.has_value());
  CHECK(p->header.kind == dcps::SampleKind::data);
  CHECK(p->payload.size() == 10);
  CHECK(dcps::guid_node(p->header.writer) == 3);
  // Builtin messages have topic 0 and may have no payload.
  dcps::SampleHeader left;
  left.kind = dcps::SampleKind::participant_left;
  CHECK(dcps::parse(slot(left), error).has_value());
  for (const auto kind : {dcps::SampleKind::announce_participant, dcps::SampleKind::announce_topic,
                          dcps::SampleKind::retire_topic}) {
    dcps::SampleHeader h;
    h.kind = kind;
    INFO(dcps::to_string(kind));
    CHECK(dcps::parse(slot(h), error).has_value());
  }
  CHECK(dcps::to_string(dcps::SampleKind::announce_topic) == "announce_topic");
  // A topic id is never 0 (that is the builtin topic).
  CHECK(dcps::topic_id("") != 0);
  CHECK(dcps::topic_id("a") != dcps::topic_id("b"));
}

TEST_CASE("wire: every kind of bad slot is refused with its reason", "[dcps][wire]") {
  const auto good = slot(data_header());
  CHECK(reject(std::vector<std::byte>(good.begin(), good.begin() + 55)) ==
        "message of 55 bytes is shorter than the 56-byte sample header");

  auto h = data_header();
  h.magic = 0x1234;
  CHECK(reject(slot(h)) == "bad magic 4660 (not a Spindle DDS sample)");

  h = data_header();
  h.version = 9;
  CHECK(reject(slot(h)) == "sample format version 9, this node reads 2");

  h = data_header();
  h.kind = static_cast<dcps::SampleKind>(200);
  CHECK(reject(slot(h)) == "unknown sample kind 200");
  h.kind = static_cast<dcps::SampleKind>(33);  // past permissions
  CHECK(reject(slot(h)) == "unknown sample kind 33");
  h = data_header();  // with a topic id
  h.kind = dcps::SampleKind::announce_topic;
  CHECK(reject(slot(h)) == "builtin message with a topic id");

  h = data_header();
  h.topic = 0;
  CHECK(reject(slot(h)) == "sample without a topic id");

  h = data_header();
  h.kind = dcps::SampleKind::announce_writer;
  CHECK(reject(slot(h)) == "builtin message with a topic id");
}

// A coherent set (wire.hpp, kind coherent_set): its messages back to back, each checked as a
// slot is; one bad message refuses the whole set, naming it.
TEST_CASE("wire: a coherent set splits into its messages, and a bad one refuses it",
          "[dcps][wire]") {
  std::vector<std::byte> set;
  const std::vector<std::byte> payload(5, std::byte{7});
  dcps::append_to_set(set, data_header(), payload);
  auto dispose = data_header();
  dispose.kind = dcps::SampleKind::dispose;
  dcps::append_to_set(set, dispose, {});
  std::vector<dcps::ParsedSample> out;
  std::string error;
  REQUIRE(dcps::parse_set(set, out, error));
  REQUIRE(out.size() == 2);
  CHECK(out[0].header.kind == dcps::SampleKind::data);
  CHECK(out[0].payload.size() == 5);
  CHECK(out[1].header.kind == dcps::SampleKind::dispose);
  CHECK(out[1].payload.empty());
  // The outer message is a sample kind of its own.
  auto outer = data_header();
  outer.kind = dcps::SampleKind::coherent_set;
  CHECK(dcps::parse(slot(outer, set.size()), error).has_value());
  CHECK(dcps::to_string(dcps::SampleKind::coherent_set) == "coherent_set");

  auto refused = [&](const std::vector<std::byte>& bytes) {
    std::string why;
    CHECK_FALSE(dcps::parse_set(bytes, out, why));
    return why;
  };
  CHECK(refused(std::vector<std::byte>(set.begin(), set.begin() + 2)) ==
        "coherent set message 0 at offset 0: truncated length");
  CHECK(refused(std::vector<std::byte>(set.begin(), set.end() - 1)) ==
        "coherent set message 1 at offset 65: length 56 runs past the set's end");
  auto bad = set;
  bad[4] = std::byte{0};  // the first message's magic
  CHECK(refused(bad).rfind("coherent set message 0 at offset 0: bad magic", 0) == 0);
  std::vector<std::byte> nested;
  dcps::append_to_set(nested, outer, {});
  CHECK(refused(nested) ==
        "coherent set message 0 at offset 0: a coherent_set message inside a coherent set");
  std::vector<std::byte> builtin;
  dcps::SampleHeader left;
  left.kind = dcps::SampleKind::participant_left;
  dcps::append_to_set(builtin, left, {});
  CHECK(refused(builtin) ==
        "coherent set message 0 at offset 0: a participant_left message inside a coherent set");
  CHECK(dcps::parse_set({}, out, error));  // an empty set: nothing to deliver
  CHECK(out.empty());
}

// A retained entry in the state transfer (dcps/retained.hpp, docs/membership.md kind 4): it
// comes from the leader over the join connection, so it is checked like a slot.
TEST_CASE("a retained entry round-trips, and a bad one says why", "[wire]") {
  spindle::storage::Entry e;
  e.seq = 7;
  e.writer = dcps::make_guid(3, 2);
  e.key[0] = 9;
  e.kind = spindle::storage::ChangeKind::dispose;
  e.message = slot(data_header(), 5);
  std::vector<std::byte> bytes;
  dcps::encode_entry(42, e, bytes);
  std::uint64_t topic = 0;
  std::string error;
  const auto back = dcps::decode_entry(bytes, topic, error);
  REQUIRE(back.has_value());
  CHECK(topic == 42);
  CHECK(*back == e);

  auto short_entry = bytes;
  short_entry.resize(10);
  CHECK_FALSE(dcps::decode_entry(short_entry, topic, error).has_value());
  CHECK(error == "a retained entry of 10 bytes is shorter than 41");
  auto bad_kind = bytes;
  bad_kind[40] = std::byte{9};
  CHECK_FALSE(dcps::decode_entry(bad_kind, topic, error).has_value());
  CHECK(error == "a retained entry has change kind 9 (1..3)");
  auto bad_message = bytes;
  bad_message.resize(41 + 5);
  CHECK_FALSE(dcps::decode_entry(bad_message, topic, error).has_value());
  CHECK(error.rfind("a retained entry's message does not parse: ", 0) == 0);
}

// Repair (docs/dcps.md, "Repair"): a member keeps its RELIABLE KEEP_LAST writers' latest
// `depth` changes per instance, each with its place in the total order; a dispose or an
// unregister drops the instance's earlier changes, and an instance last unregistered goes
// after the keeper's bound. What it keeps round-trips through a repair's bytes.
TEST_CASE("repair: the latest changes per instance are kept, and round-trip", "[wire][repair]") {
  using Clock = dcps::KeptSamples::Clock;
  dcps::KeptSamples kept(std::chrono::seconds(2));
  kept.keep(kWriter, 2);
  std::uint64_t seq = 0;
  std::int64_t order = 0;
  std::vector<std::vector<std::byte>> slots;  // the messages' bytes outlive on_sample
  auto deliver = [&](dcps::SampleKind kind, std::uint8_t key, std::uint64_t writer = kWriter) {
    auto h = data_header();
    h.kind = kind;
    h.writer = writer;
    h.key[0] = key;
    h.seq = ++seq;
    slots.push_back(slot(h, 4));
    std::string error;
    auto p = dcps::parse(slots.back(), error);
    REQUIRE(p);
    p->epoch = 7;
    p->subgroup = 3;
    p->order = ++order;
    kept.on_sample(*p, 1);
  };
  for (int i = 0; i < 3; ++i)
    deliver(dcps::SampleKind::data, 1);                       // seq 1..3: keeps 2, 3
  deliver(dcps::SampleKind::data, 2);                         // 4
  deliver(dcps::SampleKind::data, 9, dcps::make_guid(1, 3));  // not kept: no such writer
  deliver(dcps::SampleKind::data, 3);                         // 6
  deliver(dcps::SampleKind::dispose, 3);                      // 7: drops 6
  deliver(dcps::SampleKind::data, 4);                         // 8
  deliver(dcps::SampleKind::unregister, 4);                   // 9: drops 8
  CHECK(kept.instances() == 4);
  std::vector<std::byte> messages;
  CHECK(kept.append_to(messages) == 5);
  const std::vector<dcps::RepairFloor> floors{{dcps::make_guid(2, 5), kWriter, 1}};
  std::vector<std::byte> bytes;
  dcps::encode_repair(floors, messages, bytes);
  dcps::Repair r;
  std::string error;
  REQUIRE(dcps::decode_repair(bytes, r, error));
  CHECK(r.floors == floors);
  std::vector<std::uint64_t> seqs;
  for (const auto& m : r.messages) {
    seqs.push_back(m.header.seq);
    CHECK(m.epoch == 7);
    CHECK(m.subgroup == 3);
    CHECK(m.order == static_cast<std::int64_t>(m.header.seq));
    CHECK(m.payload.size() == 4);
  }
  std::sort(seqs.begin(), seqs.end());
  CHECK(seqs == std::vector<std::uint64_t>{2, 3, 4, 7, 9});
  // The unregistered instance goes after the bound; the others stay.
  kept.forget_unregistered(Clock::now() + std::chrono::seconds(1));
  CHECK(kept.instances() == 4);
  kept.forget_unregistered(Clock::now() + std::chrono::seconds(3));
  CHECK(kept.instances() == 3);
  // The writer goes: nothing of it is kept.
  CHECK(kept.forget(kWriter));
  messages.clear();
  CHECK(kept.append_to(messages) == 0);
}

TEST_CASE("repair: bytes that do not decode say where and what", "[wire][repair]") {
  dcps::Repair r;
  std::string error;
  auto fails = [&](const std::vector<std::byte>& bytes) {
    error.clear();
    CHECK_FALSE(dcps::decode_repair(bytes, r, error));
    return error;
  };
  CHECK(fails({std::byte{1}}) == "a repair of 1 bytes has no floor count");
  CHECK(fails({std::byte{2}, std::byte{0}, std::byte{0}, std::byte{0}}) ==
        "2 floors do not fit a repair of 4 bytes");
  std::vector<std::byte> cut{std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}, std::byte{1}};
  CHECK(fails(cut) == "a cut message length at byte 4");
  std::vector<std::byte> past{std::byte{0},   std::byte{0}, std::byte{0}, std::byte{0},
                              std::byte{200}, std::byte{0}, std::byte{0}, std::byte{0}};
  past.resize(past.size() + 20 + 10);
  CHECK(fails(past) == "a message of 200 bytes at byte 8 runs past the end");
  // A message that is no sample.
  std::vector<std::byte> junk{std::byte{0},  std::byte{0}, std::byte{0}, std::byte{0},
                              std::byte{10}, std::byte{0}, std::byte{0}, std::byte{0}};
  junk.resize(junk.size() + 20 + 10);
  CHECK(fails(junk).rfind("the message at byte 28: message of 10 bytes is shorter", 0) == 0);
}
