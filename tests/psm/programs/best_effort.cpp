// Porting check 4: a BEST_EFFORT writer never blocks on a reader that stopped, and a
// RELIABLE one does, up to its max_blocking_time — written only against the ISO C++ PSM
// (<dds/dds.hpp> and the idlc-generated type; CMakeLists.txt refuses vendor names here).
// Two processes of one domain, driven by the test (programs_test.cpp):
//   best_effort reader  a BEST_EFFORT reader of "BestEffortStream" and a RELIABLE KEEP_ALL
//                       reader of "ReliableStream"; says "ready" once both matched, then
//                       idles (the test stops it with SIGSTOP, later continues it); on
//                       "report" takes the best-effort stream up to the writer's last sample
//                       and says "best_effort received R lost L" (SAMPLE_LOST)
//   best_effort writer  a BEST_EFFORT writer and a RELIABLE writer (max_blocking_time
//                       100 ms, KEEP_ALL) of those topics; says "matched" once both matched,
//                       waits for "go" on stdin (the reader is stopped by then), then
//                         - writes 20000 samples best-effort: must not throw and must take
//                           less than 3 s in all ("best_effort N ms")
//                         - writes reliably until write() throws dds::core::TimeoutError,
//                           which must happen within 5000 writes ("reliable timeout after
//                           N writes, M ms")
//                         - on "last" (the reader runs again), one more best-effort sample,
//                           number 20000 ("last sent")
// Every wait is bounded; a line "FAIL why" and exit 1 otherwise.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include <dds/dds.hpp>

#include "porting.hpp"

namespace {

using Porting::Chunk;
using Clock = std::chrono::steady_clock;
constexpr auto kPatience = std::chrono::seconds(30);
const auto kPatienceDds = dds::core::Duration::from_secs(30);
constexpr std::uint64_t kBestEffortSamples = 20000;
constexpr auto kBestEffortBound = std::chrono::seconds(3);
constexpr std::uint64_t kReliableWriteBound = 5000;

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(EXIT_FAILURE);
}

// The next line on stdin, or "" at EOF or after kPatience.
std::string read_line() {
  const auto give_up = Clock::now() + kPatience;
  std::string line;
  char c = 0;
  while (Clock::now() < give_up) {
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    if (::read(0, &c, 1) != 1) return "";
    if (c == '\n') return line;
    line += c;
  }
  return "";
}

template <typename Matched>
void wait_until(Matched matched, const std::string& what) {
  const auto give_up = Clock::now() + kPatience;
  while (!matched()) {
    if (Clock::now() > give_up) fail(what);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int read() {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Chunk> best_effort_topic(participant, "BestEffortStream");
  dds::topic::Topic<Chunk> reliable_topic(participant, "ReliableStream");
  dds::sub::Subscriber subscriber(participant);
  dds::sub::qos::DataReaderQos qos = subscriber.default_datareader_qos();
  // KEEP_ALL: every sample delivered stays until taken, so that received + lost counts
  // every sample the writer sent.
  qos << dds::core::policy::Reliability::BestEffort() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Chunk> best_effort(subscriber, best_effort_topic, qos);
  qos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Chunk> reliable(subscriber, reliable_topic, qos);
  wait_until(
      [&] {
        return best_effort.subscription_matched_status().current_count() > 0 &&
               reliable.subscription_matched_status().current_count() > 0;
      },
      "the readers did not match");
  std::cout << "ready" << std::endl;
  // Stopped by the test from here on, then continued; on "report", the best-effort reader
  // takes everything up to the writer's last sample and tells what it got and what it
  // counted lost (SAMPLE_LOST): the samples the writer dropped while this process was
  // stopped. Leave on anything else, or after the patience.
  if (read_line() != "report") return EXIT_SUCCESS;
  std::uint64_t received = 0;
  bool last = false;
  wait_until(
      [&] {
        for (const auto& s : best_effort.take()) {
          if (!s.info().valid()) continue;
          ++received;
          last = last || s.data().seq() == kBestEffortSamples;
        }
        return last;
      },
      "the best-effort reader did not get the writer's last sample");
  std::cout << "best_effort received " << received << " lost "
            << best_effort.sample_lost_status().total_count() << std::endl;
  return EXIT_SUCCESS;
}

int write() {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Chunk> best_effort_topic(participant, "BestEffortStream");
  dds::topic::Topic<Chunk> reliable_topic(participant, "ReliableStream");
  dds::pub::Publisher publisher(participant);
  dds::pub::qos::DataWriterQos qos = publisher.default_datawriter_qos();
  qos << dds::core::policy::Reliability::BestEffort();
  dds::pub::DataWriter<Chunk> best_effort(publisher, best_effort_topic, qos);
  qos << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_millisecs(100))
      << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<Chunk> reliable(publisher, reliable_topic, qos);
  std::cout << "joined" << std::endl;
  wait_until(
      [&] {
        return best_effort.publication_matched_status().current_count() > 0 &&
               reliable.publication_matched_status().current_count() > 0;
      },
      "the writers did not match");
  std::cout << "matched" << std::endl;
  if (read_line() != "go") fail("expected go");

  Chunk sample(1, 0, false, std::vector<std::uint8_t>(64, 0x5a));
  auto start = Clock::now();
  for (std::uint64_t seq = 0; seq < kBestEffortSamples; ++seq) {
    sample.seq(seq);
    try {
      best_effort.write(sample);
    } catch (const dds::core::Exception& e) {
      fail("best-effort write " + std::to_string(seq) + " threw: " + e.what());
    }
  }
  const auto best_effort_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  std::cout << "best_effort " << kBestEffortSamples << " samples in " << best_effort_ms.count()
            << " ms" << std::endl;
  if (best_effort_ms > kBestEffortBound) fail("best-effort writes blocked");

  start = Clock::now();
  std::uint64_t written = 0;
  for (;; ++written) {
    if (written == kReliableWriteBound)
      fail("reliable: " + std::to_string(written) + " writes and no TimeoutError");
    sample.seq(written);
    try {
      reliable.write(sample);
    } catch (const dds::core::TimeoutError&) {
      break;
    }
  }
  const auto reliable_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  std::cout << "reliable timeout after " << written << " writes, " << reliable_ms.count() << " ms"
            << std::endl;
  // "last" (the reader runs again): one more best-effort sample once the ring has room, so
  // that the reader sees where the stream went on.
  if (read_line() != "last") return EXIT_SUCCESS;
  best_effort.wait_for_acknowledgments(kPatienceDds);
  sample.seq(kBestEffortSamples);
  best_effort.write(sample);
  best_effort.wait_for_acknowledgments(kPatienceDds);
  std::cout << "last sent" << std::endl;
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role != "writer" && role != "reader") fail("usage: best_effort writer|reader");
  try {
    return role == "writer" ? write() : read();
  } catch (const dds::core::Exception& e) {
    fail(e.what());
  }
}
