// A participant of the multi-host tests (hosts_test.cpp), written against the ISO C++ PSM
// only, as an application on one of the hosts would be. It takes its domain file as every
// participant does (SPINDLE_CONFIG, or none at all), reports on stdout, line by line, and
// waits for the test's word on stdin where it says so. Every wait is bounded.
//
//   publisher <samples> <readers> [<pace ms>]
//                                   ShapeType on "Square": once `readers` readers matched,
//                                   writes `samples` samples of one instance (x = 0, 1, ...),
//                                   `pace` ms apart (default 0), and disposes it; "matched",
//                                   then "wrote <n>"; stays until "exit"
//   subscriber <samples>            "ready"; takes until it has every sample, in order, and
//                                   the dispose: "got <n> disposed" (or "FAIL ..."); stays
//                                   until "exit"
//   stream <readers>                writes a sample every 2 ms once `readers` matched
//                                   ("matched"), until "stop": then "wrote <n>"; until "exit"
//   listen                          "ready"; takes the stream: "first <x>" at its first
//                                   sample, and on each "report": "took <n> last <x> gap <ms>"
//                                   (n samples in order, the longest time between two);
//                                   until "exit"
//   count <seconds>                 "participants <n>": the other participants the built-in
//                                   DCPSParticipant reader shows after `seconds`; until "exit"
//
// Before the role: --topic NAME (default Square) and --color TEXT (the publisher's and
// subscriber's color, default BLUE).
//
// Exit status: 0, or 1 with a "FAIL <why>" line (an exception on the way, a wait that ran out).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <thread>

#include <dds/dds.hpp>

#include "ShapeType.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// --topic and --color (main()).
std::string topic_name = "Square";
std::string color = "BLUE";

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

// Waits until done(); past `patience` fails with what() (said then, as it stands).
template <class Done, class What>
void wait_until(Done done, What what, std::chrono::seconds patience) {
  const auto give_up = Clock::now() + patience;
  while (!done()) {
    if (Clock::now() > give_up) fail(what());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void wait_for(const std::string& word) {
  std::string line;
  while (std::getline(std::cin, line))
    if (line == word) return;
}

dds::sub::qos::DataReaderQos reliable(const dds::sub::Subscriber& s) {
  auto q = s.default_datareader_qos();
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return q;
}

int publisher(long samples, int readers, int pace_ms) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<ShapeType> topic(participant, topic_name);
  dds::pub::Publisher pub(participant);
  auto q = pub.default_datawriter_qos();
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(5))
    << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<ShapeType> writer(pub, topic, q);
  wait_until([&] { return writer.publication_matched_status().current_count() >= readers; },
             [&] { return "no " + std::to_string(readers) + " readers matched"; },
             std::chrono::seconds(60));
  std::cout << "matched" << std::endl;
  ShapeType shape(color, 0, 0, 30);
  for (long i = 0; i < samples; ++i) {
    shape.x(static_cast<std::int32_t>(i));
    shape.y(static_cast<std::int32_t>(2 * i));
    writer.write(shape);
    if (pace_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pace_ms));
  }
  writer.dispose_instance(writer.lookup_instance(shape));
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(20));
  std::cout << "wrote " << samples << std::endl;
  wait_for("exit");
  return 0;
}

int subscriber(long samples) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<ShapeType> topic(participant, topic_name);
  dds::sub::Subscriber sub(participant);
  dds::sub::DataReader<ShapeType> reader(sub, topic, reliable(sub));
  std::cout << "ready" << std::endl;
  long next = 0;
  bool disposed = false;
  wait_until(
      [&] {
        for (const auto& s : reader.take()) {
          // The dispose comes on the samples still unread, or alone as an invalid sample.
          disposed = disposed || s.info().state().instance_state() ==
                                     dds::sub::status::InstanceState::not_alive_disposed();
          if (!s.info().valid()) continue;
          if (s.data().x() != next || s.data().y() != 2 * next || s.data().color() != color)
            fail("sample " + std::to_string(next) + " came as x " + std::to_string(s.data().x()));
          ++next;
        }
        return next == samples && disposed;
      },
      [&] {
        return "took " + std::to_string(next) + " of " + std::to_string(samples) + " samples" +
               (disposed ? " and the dispose" : ", no dispose");
      },
      std::chrono::seconds(90));
  std::cout << "got " << next << " disposed" << std::endl;
  wait_for("exit");
  return 0;
}

int stream(int readers) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<ShapeType> topic(participant, topic_name);
  dds::pub::Publisher pub(participant);
  auto q = pub.default_datawriter_qos();
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(5));
  dds::pub::DataWriter<ShapeType> writer(pub, topic, q);
  wait_until([&] { return writer.publication_matched_status().current_count() >= readers; },
             [&] { return "no " + std::to_string(readers) + " readers matched"; },
             std::chrono::seconds(60));
  std::cout << "matched" << std::endl;
  std::atomic<bool> stop{false};
  std::thread words([&] {
    wait_for("stop");
    stop = true;
  });
  std::int32_t n = 0;
  ShapeType shape("RED", 0, 0, 10);
  while (!stop) {
    shape.x(n);
    try {
      writer.write(shape);
      ++n;
    } catch (const dds::core::Exception& e) {
      // A view change or a halt: the write is not counted; it goes on.
      (void)e;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  words.join();
  std::cout << "wrote " << n << std::endl;
  wait_for("exit");
  return 0;
}

int listen() {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<ShapeType> topic(participant, topic_name);
  dds::sub::Subscriber sub(participant);
  dds::sub::DataReader<ShapeType> reader(sub, topic, reliable(sub));
  std::cout << "ready" << std::endl;
  std::atomic<int> reports{0};  // asked for and not yet answered: each "report" is answered
  std::atomic<bool> done{false};
  std::thread words([&] {
    std::string line;
    while (std::getline(std::cin, line) && line != "exit")
      if (line == "report") ++reports;
    done = true;
  });
  long took = 0;
  std::int32_t last = -1;
  bool ordered = true;
  auto at = Clock::now();
  auto gap = Clock::duration::zero();
  while (!done) {
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      const auto now = Clock::now();
      if (last < 0) {
        std::cout << "first " << s.data().x() << std::endl;
      } else {
        gap = std::max(gap, now - at);
        ordered = ordered && s.data().x() > last;
      }
      at = now;
      last = s.data().x();
      ++took;
    }
    for (; reports > 0; --reports) {
      std::cout << "took " << took << " last " << last << " gap "
                << std::chrono::duration_cast<std::chrono::milliseconds>(gap).count()
                << (ordered ? "" : " disordered") << std::endl;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  words.join();
  return 0;
}

int count(int seconds) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  std::vector<dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>> found;
  dds::sub::find<dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>>(
      dds::sub::builtin_subscriber(participant), "DCPSParticipant", std::back_inserter(found));
  if (found.empty()) fail("no built-in DCPSParticipant reader");
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  std::set<dds::core::InstanceHandle> others;
  for (const auto& s : found.front().read())
    if (s.info().valid() &&
        s.info().state().instance_state() == dds::sub::status::InstanceState::alive())
      others.insert(s.info().instance_handle());
  std::cout << "participants " << others.size() << std::endl;
  wait_for("exit");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Options before the role: shift them off.
  while (argc > 2 && (std::string(argv[1]) == "--topic" || std::string(argv[1]) == "--color")) {
    (std::string(argv[1]) == "--topic" ? topic_name : color) = argv[2];
    argc -= 2;
    argv += 2;
  }
  const std::string role = argc > 1 ? argv[1] : "";
  auto arg = [&](int i) {
    if (i >= argc) fail(role + ": missing argument " + std::to_string(i));
    return std::string(argv[i]);
  };
  try {
    if (role == "publisher")
      return publisher(std::stol(arg(2)), std::stoi(arg(3)), argc > 4 ? std::stoi(arg(4)) : 0);
    if (role == "subscriber") return subscriber(std::stol(arg(2)));
    if (role == "stream") return stream(std::stoi(arg(2)));
    if (role == "listen") return listen();
    if (role == "count") return count(std::stoi(arg(2)));
  } catch (const std::exception& e) {
    fail(role + ": " + e.what());
  }
  fail("unknown role '" + role + "'");
}
