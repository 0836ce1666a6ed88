// `spindle ls`, `ps` and `why` against a live domain: this test's process holds the topics,
// writers and readers, the command runs as another process and joins the domain to look;
// its --json output is parsed back and checked against what the test created.
#include <unistd.h>

#include <array>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>
#include <spindle/types/dynamic_data.hpp>

#include "Sequence.hpp"
#include "ShapeType.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using spindle::types::Json;
namespace pol = dds::core::policy;

namespace {

// The command's whole output (stdout and stderr) and its exit status.
struct Run {
  std::string out;
  int status = -1;
};

Run run_spindle(const std::string& args) {
  tst::Process cmd(
      {"/bin/sh", "-c", std::string("exec ") + SPINDLE_COMMAND + " " + args + " 2>&1"});
  Run r;
  while (auto line = cmd.read_line(Clock::now() + 60s))
    r.out += *line + "\n";
  r.status = cmd.wait(Clock::now() + 30s);
  return r;
}

Json json_of(const Run& r) {
  INFO(r.out);
  REQUIRE(r.status == 0);
  return Json::parse(r.out);
}

const Json* find_by(const Json& list, const std::string& key, const Json& value) {
  for (const auto& e : list)
    if (e.contains(key) && e[key] == value) return &e;
  return nullptr;
}

std::string host_name() {
  std::array<char, 256> h{};
  REQUIRE(gethostname(h.data(), h.size() - 1) == 0);
  return h.data();
}

}  // namespace

TEST_CASE("spindle ls lists the topics with types, endpoints, partitions and QoS", "[ls]") {
  dds::domain::DomainParticipant dp(0);
  dds::topic::Topic<ShapeType> square(dp, "Square");
  dds::pub::qos::PublisherQos pq;
  pq << pol::Partition("left");
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(dp, pq), square);
  dds::sub::DataReader<ShapeType> reader(dds::sub::Subscriber(dp), square);
  dds::topic::Topic<Bench::Sequence> lonely(dp, "Lonely");

  const auto doc = json_of(run_spindle("ls --json --qos --wait 1 --domain 0"));
  INFO(doc.dump(2));
  const auto* t = find_by(doc["topics"], "name", "Square");
  REQUIRE(t != nullptr);
  CHECK((*t)["types"] == Json::array({"ShapeType"}));
  CHECK((*t)["partitions"] == Json::array({"\"\"", "\"left\""}));
  CHECK((*t)["consistency"] == Json::array({"atomic"}));
  REQUIRE((*t)["writers"].size() == 1);
  REQUIRE((*t)["readers"].size() == 1);
  const auto& w = (*t)["writers"][0];
  CHECK(w["node"] == dp.core().node_id());
  CHECK(w["qos"]["reliability.kind"] == "reliable");
  CHECK(w["publisher_qos"]["partition.names"] == "[\"left\"]");
  CHECK((*t)["readers"][0]["qos"].contains("history.kind"));
  // A Topic with no endpoint is listed too.
  const auto* l = find_by(doc["topics"], "name", "Lonely");
  REQUIRE(l != nullptr);
  CHECK((*l)["types"] == Json::array({"Bench::Sequence"}));
  CHECK((*l)["writers"].empty());

  const auto text = run_spindle("ls --wait 1 --domain 0");
  std::cout << text.out;  // as docs/tools.md shows it
  INFO(text.out);
  CHECK(text.status == 0);
  CHECK(text.out.find("TOPIC") != std::string::npos);
  CHECK(text.out.find("Square ") != std::string::npos);
  CHECK(text.out.find("ShapeType") != std::string::npos);
}

TEST_CASE("spindle ps names each participant's host, pid, process and role", "[ps]") {
  dds::domain::DomainParticipant dp(0);
  dds::topic::Topic<ShapeType> square(dp, "Square");
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(dp), square);

  const auto doc = json_of(run_spindle("ps --json --wait 1 --domain 0"));
  INFO(doc.dump(2));
  const auto* me = find_by(doc["participants"], "node", dp.core().node_id());
  REQUIRE(me != nullptr);
  CHECK((*me)["pid"] == getpid());
  CHECK((*me)["host"] == host_name());
  CHECK((*me)["process"] == "spindle_cli_test");
  CHECK((*me)["role"] == "member");
  CHECK((*me)["this_command"] == false);
  CHECK((*me)["writers"] == 1);
  CHECK((*me)["topics"] == 1);
  const auto* cmd = find_by(doc["participants"], "this_command", true);
  REQUIRE(cmd != nullptr);
  CHECK((*cmd)["process"] == "spindle");
  CHECK((*cmd)["pid"] != getpid());
  // A member with no Topic and no endpoint is a witness.
  dds::domain::DomainParticipant idle(0);
  const auto again = json_of(run_spindle("ps --json --wait 1 --domain 0"));
  const auto* w = find_by(again["participants"], "node", idle.core().node_id());
  REQUIRE(w != nullptr);
  CHECK((*w)["role"] == "witness");

  const auto text = run_spindle("ps --wait 1 --domain 0");
  std::cout << text.out;
  INFO(text.out);
  CHECK(text.out.find("spindle_cli_test") != std::string::npos);
  CHECK(text.out.find("(this command)") != std::string::npos);
}

TEST_CASE("spindle why names each rule a writer and a reader break", "[why]") {
  dds::domain::DomainParticipant dp(0);
  dds::topic::Topic<ShapeType> topic(dp, "Mismatched");
  dds::pub::qos::PublisherQos pq;
  pq << pol::Partition("a");
  dds::pub::qos::DataWriterQos wq = topic.qos();
  wq << pol::Reliability::BestEffort() << pol::Durability::Volatile()
     << pol::Deadline(dds::core::Duration::from_secs(2));
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(dp, pq), topic, wq);
  dds::sub::qos::SubscriberQos sq;
  sq << pol::Partition("b");
  dds::sub::qos::DataReaderQos rq = topic.qos();
  rq << pol::Reliability::Reliable() << pol::Durability::TransientLocal()
     << pol::Deadline(dds::core::Duration::from_secs(1));
  dds::sub::DataReader<ShapeType> reader(dds::sub::Subscriber(dp, sq), topic, rq);
  // Another participant's reader of another type under the same name.
  dds::domain::DomainParticipant other(0);
  dds::topic::Topic<Bench::Sequence> other_topic(other, "Mismatched");
  dds::sub::DataReader<Bench::Sequence> other_reader(dds::sub::Subscriber(other), other_topic);

  const auto doc = json_of(run_spindle("why Mismatched --json --wait 1 --domain 0"));
  INFO(doc.dump(2));
  CHECK(doc["writers"] == 1);
  CHECK(doc["readers"] == 2);
  REQUIRE(doc["pairs"].size() == 2);
  const auto* same_type = find_by(doc["pairs"], "reader_node", dp.core().node_id());
  REQUIRE(same_type != nullptr);
  CHECK((*same_type)["matched"] == false);
  std::vector<std::string> broken;
  for (const auto& c : (*same_type)["checks"])
    if (c["ok"] == false) broken.push_back(c["rule"]);
  CHECK(broken == std::vector<std::string>{"partition", "durability", "deadline", "reliability"});
  const auto* rel = find_by((*same_type)["checks"], "rule", "reliability");
  REQUIRE(rel != nullptr);
  CHECK((*rel)["offered"] == "best_effort");
  CHECK((*rel)["requested"] == "reliable");
  const auto* part = find_by((*same_type)["checks"], "rule", "partition");
  CHECK((*part)["offered"] == "[\"a\"]");
  CHECK((*part)["requested"] == "[\"b\"]");
  const auto* typed = find_by(doc["pairs"], "reader_node", other.core().node_id());
  REQUIRE(typed != nullptr);
  const auto* type = find_by((*typed)["checks"], "rule", "type");
  CHECK((*type)["ok"] == false);
  CHECK((*type)["offered"] == "ShapeType");
  CHECK((*type)["requested"] == "Bench::Sequence");

  // A pair that matches says so, and the table names the rules.
  dds::topic::Topic<ShapeType> fine(dp, "Fine");
  dds::pub::DataWriter<ShapeType> fine_writer(dds::pub::Publisher(dp), fine);
  dds::sub::DataReader<ShapeType> fine_reader(dds::sub::Subscriber(dp), fine);
  const auto ok = json_of(run_spindle("why Fine --json --wait 1 --domain 0"));
  REQUIRE(ok["pairs"].size() == 1);
  CHECK(ok["pairs"][0]["matched"] == true);
  const auto text = run_spindle("why Mismatched --wait 1 --domain 0");
  std::cout << text.out;
  INFO(text.out);
  CHECK(text.out.find("NO MATCH") != std::string::npos);
  CHECK(text.out.find("MISMATCH  reliability") != std::string::npos);

  const auto none = run_spindle("why Nowhere --wait 0.2 --domain 0");
  CHECK(none.status == 3);
  CHECK(none.out.find("no writer and no reader of 'Nowhere'") != std::string::npos);
}
