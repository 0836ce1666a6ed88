// The package test's program (tests/package/package_test.sh), built against the installed
// spindle-dev package, with CMake and with pkg-config. Only the standard DCPS API, the code
// spindle-idlc generated from greeting.idl and shapes.idl, and <spindle/version.hpp>.
//
//   package_app publish SECONDS   writes a PackageTest::Greeting to the topic
//                                 PackageGreetings every 50 ms for SECONDS
//   package_app loopback          writes Greetings until its own reader takes one (30 s at
//                                 most); exit status 0 when one came back intact
//   package_app shapes SECONDS    writes a ShapeType (shapes.idl) to the topic Square every
//                                 50 ms for SECONDS, as the shapes demo does
//
// Both load the atomic profile of the installed QoS profiles (SPINDLE_QOS_PATH).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <dds/dds.hpp>
#include <spindle/version.hpp>

#include "greeting.hpp"
#include "shapes.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kTopic = "PackageGreetings";

PackageTest::Greeting greeting(std::uint64_t serial) {
  PackageTest::Greeting g;
  g.id(7);
  g.serial(serial);
  g.text("hello from the package");
  return g;
}

int publish(double seconds) {
  dds::core::QosProvider qos("atomic.yaml", "atomic");
  dds::domain::DomainParticipant participant(dds::domain::default_id(), qos.participant_qos());
  dds::topic::Topic<PackageTest::Greeting> topic(participant, kTopic, qos.topic_qos());
  dds::pub::Publisher publisher(participant, qos.publisher_qos());
  dds::pub::DataWriter<PackageTest::Greeting> writer(publisher, topic, qos.datawriter_qos());
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  for (std::uint64_t serial = 0; Clock::now() < end; ++serial) {
    writer.write(greeting(serial));
    std::this_thread::sleep_for(50ms);
  }
  return EXIT_SUCCESS;
}

int shapes(double seconds) {
  dds::core::QosProvider qos("atomic.yaml", "atomic");
  dds::domain::DomainParticipant participant(dds::domain::default_id(), qos.participant_qos());
  dds::topic::Topic<ShapeType> topic(participant, "Square", qos.topic_qos());
  dds::pub::DataWriter<ShapeType> writer(dds::pub::Publisher(participant, qos.publisher_qos()),
                                         topic, qos.datawriter_qos());
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  for (std::int32_t x = 0; Clock::now() < end; x = (x + 5) % 250) {
    writer.write(ShapeType("BLUE", x, 2 * x, 30));
    std::this_thread::sleep_for(50ms);
  }
  return EXIT_SUCCESS;
}

int loopback() {
  std::cout << "package_app: Spindle DDS " << spindle::kVersion << std::endl;
  dds::core::QosProvider qos("atomic.yaml", "atomic");
  dds::domain::DomainParticipant participant(dds::domain::default_id(), qos.participant_qos());
  dds::topic::Topic<PackageTest::Greeting> topic(participant, kTopic, qos.topic_qos());
  dds::pub::DataWriter<PackageTest::Greeting> writer(dds::pub::Publisher(participant), topic,
                                                     qos.datawriter_qos());
  dds::sub::DataReader<PackageTest::Greeting> reader(dds::sub::Subscriber(participant), topic,
                                                     qos.datareader_qos());
  const auto end = Clock::now() + 30s;
  for (std::uint64_t serial = 0; Clock::now() < end; ++serial) {
    writer.write(greeting(serial));
    std::this_thread::sleep_for(50ms);
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      if (s.data().id() != 7 || s.data().text() != "hello from the package") {
        std::cerr << "package_app: took a sample that differs from those written" << std::endl;
        return EXIT_FAILURE;
      }
      std::cout << "package_app: took greeting #" << s.data().serial() << std::endl;
      return EXIT_SUCCESS;
    }
  }
  std::cerr << "package_app: took nothing in 30 s" << std::endl;
  return EXIT_FAILURE;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  try {
    if (mode == "publish" && argc == 3) return publish(std::stod(argv[2]));
    if (mode == "loopback" && argc == 2) return loopback();
    if (mode == "shapes" && argc == 3) return shapes(std::stod(argv[2]));
  } catch (const std::exception& e) {
    std::cerr << "package_app " << mode << ": " << e.what() << std::endl;
    return EXIT_FAILURE;
  }
  std::cerr << "usage: package_app publish SECONDS | loopback | shapes SECONDS" << std::endl;
  return 2;
}
