// A "hello world" written only against the ISO C++ PSM (DDS-PSM-Cxx): no vendor names,
// just <dds/dds.hpp> and the IDL-generated type — the shape of the classic DDS helloworld
// publisher and subscriber, here as two threads around one participant. The publisher
// waits until its writer matched a reader, then writes; the subscriber takes in a loop,
// skipping samples whose info() is not valid. Any ISO C++ PSM implementation should
// compile and run it unchanged (CMakeLists.txt refuses vendor names in this file).
// Exits 0 when the subscriber got every message in order, 1 otherwise; every wait is
// bounded.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <dds/dds.hpp>

#include "ShapeType.hpp"

namespace {

constexpr int kMessages = 10;
constexpr auto kPatience = std::chrono::seconds(10);

bool publish(dds::domain::DomainParticipant& participant, dds::topic::Topic<ShapeType>& topic) {
  dds::pub::Publisher publisher(participant);
  dds::pub::DataWriter<ShapeType> writer(publisher, topic);
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  std::cout << "=== [Publisher] Waiting for subscriber." << std::endl;
  while (writer.publication_matched_status().current_count() == 0) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 0; i < kMessages; ++i) {
    ShapeType msg("RED", i, 2 * i, 30);
    std::cout << "=== [Publisher] Write sample " << i << "." << std::endl;
    writer.write(msg);
  }
  // Stay until the reader had everything.
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(10));
  return true;
}

bool subscribe(dds::sub::DataReader<ShapeType>& reader) {
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  int expected = 0;
  while (expected < kMessages) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    dds::sub::LoanedSamples<ShapeType> samples = reader.take();
    for (auto it = samples.begin(); it != samples.end(); ++it) {
      const ShapeType& msg = it->data();
      const dds::sub::SampleInfo& info = it->info();
      if (!info.valid()) continue;
      std::cout << "=== [Subscriber] Message received: color " << msg.color() << ", x " << msg.x()
                << std::endl;
      if (msg.color() != "RED" || msg.x() != expected || msg.y() != 2 * expected) return false;
      ++expected;
    }
    if (samples.length() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace

int main() {
  try {
    dds::domain::DomainParticipant participant(dds::domain::default_id());
    dds::topic::Topic<ShapeType> topic(participant, "Square");
    dds::sub::Subscriber subscriber(participant);
    dds::sub::qos::DataReaderQos rqos = subscriber.default_datareader_qos();
    rqos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    dds::sub::DataReader<ShapeType> reader(subscriber, topic, rqos);

    bool published = false;
    std::thread publisher([&] {
      try {
        published = publish(participant, topic);
      } catch (const dds::core::Exception& e) {
        std::cerr << "=== [Publisher] " << e.what() << std::endl;
      }
    });
    const bool received = subscribe(reader);
    publisher.join();
    std::cout << (published && received ? "=== Done." : "=== FAILED.") << std::endl;
    return published && received ? EXIT_SUCCESS : EXIT_FAILURE;
  } catch (const dds::core::Exception& e) {
    std::cerr << "=== [Error] " << e.what() << std::endl;
    return EXIT_FAILURE;
  }
}
