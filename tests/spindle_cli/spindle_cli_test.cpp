// `spindle subscribe` against a standard program's topic: the samples come out as JSON the
// test parses back, decoded from the type information discovery carries (no compiled types
// in the command); a topic nobody announces ends the wait with exit status 3.
#include <catch2/catch.hpp>
#include <dds/dds.hpp>
#include <spindle/types/dynamic_data.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ShapeType.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("spindle subscribe prints a topic's samples as JSON", "[subscribe]") {
  dds::domain::DomainParticipant dp(0);
  dds::topic::Topic<ShapeType> topic(dp, "Square");
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(dp), topic);
  tst::Process cmd({SPINDLE_COMMAND, "subscribe", "Square", "--json", "--count", "5", "--wait",
                    "60", "--domain", "0"});
  std::vector<spindle::types::Json> got;
  int x = 0;
  for (auto deadline = Clock::now() + 90s; got.size() < 5 && Clock::now() < deadline;) {
    writer.write(ShapeType("BLUE", x, 2 * x, 30),
                 dds::core::Time(1700000000, 1000u * static_cast<unsigned>(x)));
    ++x;
    if (auto line = cmd.read_line(Clock::now() + 50ms)) {
      INFO(*line);
      got.push_back(spindle::types::Json::parse(*line));
    }
  }
  REQUIRE(got.size() == 5);
  for (const auto& j : got) {
    INFO(j.dump());
    CHECK(j["topic"] == "Square");
    CHECK(j["valid"] == true);
    CHECK(j["state"] == "alive");
    const int v = j["value"]["x"].get<int>();
    CHECK(j["value"]["color"] == "BLUE");
    CHECK(j["value"]["y"] == 2 * v);
    CHECK(j["value"]["shapesize"] == 30);
    CHECK(j["source_timestamp"] == 1700000000LL * 1000000000LL + 1000LL * v);
  }
  CHECK(cmd.wait(Clock::now() + 30s) == 0);
}

TEST_CASE("spindle subscribe says so when no member announces the topic", "[subscribe]") {
  tst::Process cmd(
      {"/bin/sh", "-c",
       std::string("exec ") + SPINDLE_COMMAND + " subscribe Nowhere --wait 1 --domain 0 2>&1"});
  std::string out;
  while (auto line = cmd.read_line(Clock::now() + 30s))
    out += *line + "\n";
  CHECK(cmd.wait(Clock::now() + 30s) == 3);
  CHECK(out.find("announced topic 'Nowhere'") != std::string::npos);
}

TEST_CASE("spindle publish writes a JSON sample a compiled reader takes", "[publish]") {
  dds::domain::DomainParticipant dp(0);
  dds::topic::Topic<ShapeType> topic(dp, "Square");
  dds::sub::qos::DataReaderQos q = topic.qos();
  q << dds::core::policy::Reliability::Reliable();
  dds::sub::DataReader<ShapeType> reader(dds::sub::Subscriber(dp), topic, q);
  tst::Process cmd({SPINDLE_COMMAND, "publish", "Square",
                    R"({"color": "RED", "x": 7, "y": 8, "shapesize": 9})", "--wait", "60",
                    "--domain", "0"});
  std::vector<ShapeType> got;
  for (auto deadline = Clock::now() + 90s; got.empty() && Clock::now() < deadline;) {
    for (const auto& s : reader.take())
      if (s.info().valid()) got.push_back(s.data());
    std::this_thread::sleep_for(20ms);
  }
  REQUIRE(got.size() == 1);
  CHECK(got.front() == ShapeType("RED", 7, 8, 9));
  CHECK(cmd.wait(Clock::now() + 30s) == 0);

  // A sample that does not fit the type is refused, naming where and what.
  tst::Process bad({"/bin/sh", "-c",
                    std::string("exec ") + SPINDLE_COMMAND +
                        R"( publish Square '{"color": 5}' --wait 60 --domain 0 2>&1)"});
  std::string out;
  while (auto line = bad.read_line(Clock::now() + 60s))
    out += *line + "\n";
  INFO(out);
  CHECK(bad.wait(Clock::now() + 30s) == 2);
  CHECK(out.find("ShapeType.color") != std::string::npos);
}
