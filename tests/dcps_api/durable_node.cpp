// One participant process of the multi-process durability test (durable_processes_test.cpp).
// It joins (or founds) the domain of SPINDLE_CONFIG and plays one role:
//   writer  a TRANSIENT_LOCAL writer of "Durable" (KEEP_LAST 2): on "go" it writes 5 samples
//           to each of aircraft 1, 2 and 3 and says "written"
//   member  no endpoint at first; on "read" it creates a TRANSIENT_LOCAL reader, waits for
//           the history and says "got <aircraft:seq ...>" (sorted)
//   late    at once: a TRANSIENT_LOCAL reader, the history, "got ..." — a process that joins
//           after the samples were written
// Every role says "ready" once its participant is in the domain, and leaves on "exit".
// Every wait is bounded; "FAIL why" and exit 1 otherwise.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <dds/dds.hpp>

#include "avionics.hpp"

namespace {

using FlightState = Avionics::FlightState;
namespace policy = dds::core::policy;

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

void expect(const std::string& word) {
  std::string line;
  if (!std::getline(std::cin, line) || line != word) fail("expected " + word + ", got: " + line);
}

std::string history(dds::sub::DataReader<FlightState>& r) {
  r.wait_for_historical_data(dds::core::Duration::from_secs(20));
  std::vector<std::pair<std::uint32_t, std::uint64_t>> got;
  for (const auto& s : r.take())
    if (s.info().valid()) got.emplace_back(s.data().aircraft_id(), s.data().timestamp_ns());
  std::sort(got.begin(), got.end());
  std::string out = "got";
  for (const auto& [a, seq] : got) {
    // Piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on a + chain.
    out += ' ';
    out += std::to_string(a);
    out += ':';
    out += std::to_string(seq);
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  try {
    dds::domain::DomainParticipant dp(dds::domain::default_id());
    dds::topic::Topic<FlightState> topic(dp, "Durable");
    dds::sub::qos::DataReaderQos rq;
    rq << policy::Reliability::Reliable() << policy::History::KeepAll()
       << policy::Durability::TransientLocal();
    std::cout << "ready" << std::endl;
    if (role == "writer") {
      dds::pub::qos::DataWriterQos wq;
      wq << policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
         << policy::History::KeepLast(2) << policy::Durability::TransientLocal();
      dds::pub::DataWriter<FlightState> w(dds::pub::Publisher(dp), topic, wq);
      expect("go");
      for (std::uint64_t i = 1; i <= 5; ++i) {
        for (std::uint32_t a = 1; a <= 3; ++a) {
          FlightState s;
          s.aircraft_id(a);
          s.timestamp_ns(10 * a + i);
          s.callsign("DUR");
          w.write(s);
        }
      }
      w.wait_for_acknowledgments(dds::core::Duration::from_secs(10));
      std::cout << "written" << std::endl;
      expect("exit");
    } else if (role == "member") {
      expect("read");
      dds::sub::DataReader<FlightState> r(dds::sub::Subscriber(dp), topic, rq);
      std::cout << history(r) << std::endl;
      expect("exit");
    } else if (role == "late") {
      dds::sub::DataReader<FlightState> r(dds::sub::Subscriber(dp), topic, rq);
      std::cout << history(r) << std::endl;
      expect("exit");
    } else {
      fail("usage: dcps_durable_node writer|member|late");
    }
    dp.close();
  } catch (const std::exception& e) {
    fail(e.what());
  }
  return 0;
}
