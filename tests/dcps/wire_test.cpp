// The sample header of every DCPS message in an SMC slot (runtime/src/dcps/wire.hpp): what
// parse() accepts, and the exact reason it gives for each kind of bad slot — a slot is
// written by another process, so nothing in it is trusted.
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

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
  // A topic id is never 0 (that is the builtin topic).
  CHECK(dcps::topic_id("") != 0);
  CHECK(dcps::topic_id("a") != dcps::topic_id("b"));
}

TEST_CASE("wire: every kind of bad slot is refused with its reason", "[dcps][wire]") {
  const auto good = slot(data_header());
  CHECK(reject(std::vector<std::byte>(good.begin(), good.begin() + 47)) ==
        "message of 47 bytes is shorter than the 48-byte sample header");

  auto h = data_header();
  h.magic = 0x1234;
  CHECK(reject(slot(h)) == "bad magic 4660 (not a Spindle DDS sample)");

  h = data_header();
  h.version = 9;
  CHECK(reject(slot(h)) == "sample format version 9, this node reads 1");

  h = data_header();
  h.kind = static_cast<dcps::SampleKind>(200);
  CHECK(reject(slot(h)) == "unknown sample kind 200");

  h = data_header();
  h.topic = 0;
  CHECK(reject(slot(h)) == "sample without a topic id");

  h = data_header();
  h.kind = dcps::SampleKind::announce_writer;
  CHECK(reject(slot(h)) == "builtin message with a topic id");
}
