// A member of a live domain for the `spindle status` tests: `status_peer publish TOPIC` writes
// ShapeType samples RELIABLE at a rate that grows by 20 samples/s every second from 20 (so that
// two rates measured a second apart differ), `status_peer read TOPIC` reads them RELIABLE (a
// member that holds its subgroup's ring, so `spindle status` shows its lag). Each says
// "node N" on stdout once it joined, the reader "reading" once a sample came, and both run
// until killed.
#include <chrono>
#include <cstring>
#include <iostream>
#include <string>
#include <thread>

#include <dds/dds.hpp>
#include <spindle/domain_status.hpp>

#include "ShapeType.hpp"

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[1], "publish") != 0 && std::strcmp(argv[1], "read") != 0)) {
    std::cerr << "usage: status_peer publish|read TOPIC" << std::endl;
    return 2;
  }
  using Clock = std::chrono::steady_clock;
  dds::domain::DomainParticipant dp(0);
  std::cout << "node " << spindle::domain_status(dp).self << std::endl;
  dds::topic::Topic<ShapeType> topic(dp, argv[2]);
  if (std::strcmp(argv[1], "publish") == 0) {
    dds::pub::qos::DataWriterQos q = topic.qos();
    // A view change (the status command joining, its readers laid out) may hold writes for a
    // while on a loaded machine: wait for it rather than give up.
    q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(30));
    dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(dp), topic, q);
    const auto start = Clock::now();
    std::uint64_t written = 0;
    for (;;) {
      // Samples due by now: the integral of 20 * (1 + whole seconds) samples/s.
      const double t = std::chrono::duration<double>(Clock::now() - start).count();
      const auto whole = static_cast<std::uint64_t>(t);
      const auto due = static_cast<std::uint64_t>(
          20.0 * (static_cast<double>(whole * (whole + 1)) / 2.0 +
                  (static_cast<double>(whole) + 1.0) * (t - static_cast<double>(whole))));
      for (; written < due; ++written)
        writer.write(ShapeType("BLUE", static_cast<int>(written % 1000), 1, 30));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  dds::sub::qos::DataReaderQos q = topic.qos();
  q << dds::core::policy::Reliability::Reliable();
  dds::sub::DataReader<ShapeType> reader(dds::sub::Subscriber(dp), topic, q);
  bool said = false;
  for (;;) {
    if (!reader.take().empty() && !said) {
      said = true;
      std::cout << "reading" << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}
