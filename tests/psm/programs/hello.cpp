// Porting program 1, "hello world", written only against the ISO C++ PSM (<dds/dds.hpp> and
// the idlc-generated type; CMakeLists.txt refuses vendor names here). Two processes of one
// domain:
//   hello publisher   waits until its writer matched a reader, writes "Hello World", waits
//                     until the reader acknowledged it, exits 0
//   hello subscriber  waits until its reader matched a writer, then on a WaitSet with a
//                     ReadCondition for new data; exits 0 once it took "Hello World"
// The domain is whatever the participant finds (SPINDLE_CONFIG in the tests). Every wait is
// bounded; a line "FAIL why" and exit 1 otherwise.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <dds/dds.hpp>

#include "porting.hpp"

namespace {

const auto kPatience = dds::core::Duration::from_secs(30);
constexpr const char* kTopic = "HelloWorldTopic";
constexpr const char* kMessage = "Hello World";

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(EXIT_FAILURE);
}

// Blocks on a WaitSet until `matched()` holds, re-checking whenever the entity's status
// condition (its *_MATCHED status) triggers.
template <typename Entity, typename Matched>
void wait_for_match(const Entity& entity, const dds::core::status::StatusMask& status,
                    Matched matched) {
  dds::core::cond::StatusCondition condition(entity);
  condition.enabled_statuses(status);
  dds::core::cond::WaitSet waitset;
  waitset += condition;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(kPatience.sec());
  while (!matched()) {
    if (std::chrono::steady_clock::now() > give_up) fail("no match");
    try {
      waitset.wait(dds::core::Duration::from_millisecs(500));
    } catch (const dds::core::TimeoutError&) {
      // Look again; the deadline above bounds the wait.
    }
  }
}

int publish(dds::domain::DomainParticipant& participant,
            dds::topic::Topic<Porting::Greeting>& topic) {
  dds::pub::Publisher publisher(participant);
  dds::pub::qos::DataWriterQos qos = publisher.default_datawriter_qos();
  qos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<Porting::Greeting> writer(publisher, topic, qos);
  wait_for_match(writer, dds::core::status::StatusMask::publication_matched(),
                 [&] { return writer.publication_matched_status().current_count() > 0; });
  writer.write(Porting::Greeting(1, kMessage));
  writer.wait_for_acknowledgments(kPatience);
  std::cout << "published " << kMessage << std::endl;
  return EXIT_SUCCESS;
}

int subscribe(dds::domain::DomainParticipant& participant,
              dds::topic::Topic<Porting::Greeting>& topic) {
  dds::sub::Subscriber subscriber(participant);
  dds::sub::qos::DataReaderQos qos = subscriber.default_datareader_qos();
  qos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Porting::Greeting> reader(subscriber, topic, qos);
  wait_for_match(reader, dds::core::status::StatusMask::subscription_matched(),
                 [&] { return reader.subscription_matched_status().current_count() > 0; });

  // Any unread sample, whatever its instance's state: the publisher exits right after its
  // greeting is acknowledged, and its writer then disposes the instance (autodispose) —
  // often before this thread looks, and new_data() selects alive instances only.
  const dds::sub::status::DataState unread(dds::sub::status::SampleState::not_read(),
                                           dds::sub::status::ViewState::any(),
                                           dds::sub::status::InstanceState::any());
  dds::sub::cond::ReadCondition has_data(reader, unread);
  dds::core::cond::WaitSet waitset;
  waitset += has_data;
  try {
    waitset.wait(kPatience);
  } catch (const dds::core::TimeoutError&) {
    fail("no greeting within " + std::to_string(kPatience.sec()) + " s");
  }
  for (const auto& sample : reader.select().state(unread).take()) {
    if (!sample.info().valid()) continue;
    if (sample.data().message() != kMessage) fail("got '" + sample.data().message() + "'");
    std::cout << "received " << sample.data().message() << std::endl;
    return EXIT_SUCCESS;
  }
  fail("the ReadCondition triggered but take() returned no valid sample");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role != "publisher" && role != "subscriber") fail("usage: hello publisher|subscriber");
  try {
    dds::domain::DomainParticipant participant(dds::domain::default_id());
    dds::topic::Topic<Porting::Greeting> topic(participant, kTopic);
    return role == "publisher" ? publish(participant, topic) : subscribe(participant, topic);
  } catch (const dds::core::Exception& e) {
    fail(e.what());
  }
}
