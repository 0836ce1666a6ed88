// Porting program 2, a ping-pong round trip, written only against the ISO C++ PSM
// (<dds/dds.hpp> and the idlc-generated type; CMakeLists.txt refuses vendor names here).
// Two processes of one domain:
//   pingpong pong       echoes every sample of topic "Ping" on topic "Pong" from a
//                       DataReaderListener (on_data_available); leaves when the ping side
//                       disposes its instance, once its echoes are acknowledged
//   pingpong ping [N]   waits until both its endpoints matched, then N times (200 by default,
//                       after 10 not measured): writes a Ping with the time and waits on a
//                       WaitSet with a ReadCondition for the echo, which must be the sample
//                       just sent (every reply, in order); prints the median round trip,
//                       disposes its instance and leaves
// Both wait for their endpoints to match first. Every wait is bounded; a line "FAIL why"
// and exit 1 otherwise.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

#include <dds/dds.hpp>

#include "porting.hpp"

namespace {

using Porting::Ping;
using Clock = std::chrono::steady_clock;
const auto kPatience = dds::core::Duration::from_secs(30);
constexpr std::uint64_t kWarmUp = 10;
constexpr std::uint32_t kSession = 1;

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(EXIT_FAILURE);
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
          .count());
}

// Blocks on a WaitSet until the writer and the reader both matched a peer.
void wait_for_matches(dds::pub::DataWriter<Ping>& writer, dds::sub::DataReader<Ping>& reader) {
  dds::core::cond::StatusCondition writer_matched(writer);
  writer_matched.enabled_statuses(dds::core::status::StatusMask::publication_matched());
  dds::core::cond::StatusCondition reader_matched(reader);
  reader_matched.enabled_statuses(dds::core::status::StatusMask::subscription_matched());
  dds::core::cond::WaitSet waitset;
  waitset += writer_matched;
  waitset += reader_matched;
  const auto give_up = Clock::now() + std::chrono::seconds(kPatience.sec());
  while (writer.publication_matched_status().current_count() == 0 ||
         reader.subscription_matched_status().current_count() == 0) {
    if (Clock::now() > give_up) fail("the endpoints did not match");
    try {
      waitset.wait(dds::core::Duration::from_millisecs(500));
    } catch (const dds::core::TimeoutError&) {
      // Look again; the deadline above bounds the wait.
    }
  }
}

dds::pub::qos::DataWriterQos writer_qos(const dds::pub::Publisher& publisher) {
  dds::pub::qos::DataWriterQos qos = publisher.default_datawriter_qos();
  qos << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(5))
      << dds::core::policy::History::KeepAll();
  return qos;
}

dds::sub::qos::DataReaderQos reader_qos(const dds::sub::Subscriber& subscriber) {
  dds::sub::qos::DataReaderQos qos = subscriber.default_datareader_qos();
  qos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return qos;
}

// The pong side's listener: echoes each ping from the dispatcher thread and notes when the
// ping side disposed its instance (the end of the session).
class Echo : public dds::sub::NoOpDataReaderListener<Ping> {
 public:
  explicit Echo(dds::pub::DataWriter<Ping> writer) : writer_(std::move(writer)) {}

  void on_data_available(dds::sub::DataReader<Ping>& reader) override {
    try {
      for (const auto& sample : reader.take()) {
        if (sample.info().valid()) {
          writer_.write(sample.data());
          ++echoed_;
        } else if (sample.info().state().instance_state() ==
                   dds::sub::status::InstanceState::not_alive_disposed()) {
          finish("");
        }
      }
    } catch (const dds::core::Exception& e) {
      finish(std::string("echo: ") + e.what());
    }
  }

  // Waits (bounded) for the end of the session; the error, or "" when it ended well.
  std::string wait_for_end() {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, std::chrono::seconds(2 * kPatience.sec()), [&] { return ended_; }))
      return "the ping side never disposed its instance";
    return error_;
  }

  [[nodiscard]] std::uint64_t echoed() const { return echoed_.load(); }

 private:
  void finish(const std::string& error) {
    std::lock_guard lock(mu_);
    ended_ = true;
    if (error_.empty()) error_ = error;
    cv_.notify_all();
  }

  dds::pub::DataWriter<Ping> writer_;
  std::atomic<std::uint64_t> echoed_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool ended_ = false;
  std::string error_;
};

int pong(dds::domain::DomainParticipant& participant) {
  dds::topic::Topic<Ping> ping_topic(participant, "Ping");
  dds::topic::Topic<Ping> pong_topic(participant, "Pong");
  dds::pub::Publisher publisher(participant);
  dds::sub::Subscriber subscriber(participant);
  dds::pub::DataWriter<Ping> writer(publisher, pong_topic, writer_qos(publisher));
  Echo echo(writer);
  dds::sub::DataReader<Ping> reader(subscriber, ping_topic, reader_qos(subscriber), &echo,
                                    dds::core::status::StatusMask::data_available());
  wait_for_matches(writer, reader);
  std::cout << "matched" << std::endl;
  const auto error = echo.wait_for_end();
  reader.listener(nullptr, dds::core::status::StatusMask::none());
  if (!error.empty()) fail(error);
  writer.wait_for_acknowledgments(kPatience);
  std::cout << "echoed " << echo.echoed() << std::endl;
  return EXIT_SUCCESS;
}

int ping(dds::domain::DomainParticipant& participant, std::uint64_t round_trips) {
  dds::topic::Topic<Ping> ping_topic(participant, "Ping");
  dds::topic::Topic<Ping> pong_topic(participant, "Pong");
  dds::pub::Publisher publisher(participant);
  dds::sub::Subscriber subscriber(participant);
  dds::pub::DataWriter<Ping> writer(publisher, ping_topic, writer_qos(publisher));
  dds::sub::DataReader<Ping> reader(subscriber, pong_topic, reader_qos(subscriber));
  wait_for_matches(writer, reader);
  std::cout << "matched" << std::endl;

  dds::sub::cond::ReadCondition has_reply(reader, dds::sub::status::DataState::new_data());
  dds::core::cond::WaitSet waitset;
  waitset += has_reply;
  const dds::core::InstanceHandle instance = writer.register_instance(Ping(kSession, 0, 0));
  std::vector<double> rtt_us;
  for (std::uint64_t seq = 0; seq < kWarmUp + round_trips; ++seq) {
    writer.write(Ping(kSession, seq, now_ns()), instance);
    bool replied = false;
    while (!replied) {
      try {
        waitset.wait(dds::core::Duration::from_secs(5));
      } catch (const dds::core::TimeoutError&) {
        fail("no reply to ping " + std::to_string(seq) + " within 5 s");
      }
      for (const auto& sample : reader.take()) {
        if (!sample.info().valid()) continue;
        if (replied || sample.data().seq() != seq || sample.data().session() != kSession)
          fail("reply " + std::to_string(sample.data().seq()) + " while waiting for " +
               std::to_string(seq));
        replied = true;
        if (seq >= kWarmUp)
          rtt_us.push_back(static_cast<double>(now_ns() - sample.data().sent_ns()) / 1000.0);
      }
    }
  }
  writer.dispose_instance(instance);
  writer.wait_for_acknowledgments(kPatience);

  std::sort(rtt_us.begin(), rtt_us.end());
  const auto at = [&](double q) {
    return rtt_us[static_cast<std::size_t>(q * static_cast<double>(rtt_us.size() - 1))];
  };
  std::cout << "round trips " << rtt_us.size() << " median_us " << at(0.5) << " p90_us " << at(0.9)
            << " max_us " << rtt_us.back() << std::endl;
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role != "ping" && role != "pong") fail("usage: pingpong ping [N] | pingpong pong");
  const std::uint64_t round_trips = argc > 2 ? std::stoull(argv[2]) : 200;
  if (round_trips == 0) fail("N must be at least 1");
  try {
    dds::domain::DomainParticipant participant(dds::domain::default_id());
    return role == "ping" ? ping(participant, round_trips) : pong(participant);
  } catch (const dds::core::Exception& e) {
    fail(e.what());
  }
}
