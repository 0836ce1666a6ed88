// Porting program 3, a throughput stream, written only against the ISO C++ PSM
// (<dds/dds.hpp> and the idlc-generated type; CMakeLists.txt refuses vendor names here).
// Two processes of one domain, topic "Throughput", RELIABLE and KEEP_ALL on both sides:
//   throughput writer [SECONDS] [BYTES]  waits until its writer matched, streams samples of
//                     BYTES payload bytes (64 by default), numbered from 0, for SECONDS
//                     (1.5 by default), then an end marker (end = TRUE, seq = the number
//                     written) and waits until the reader acknowledged everything; prints
//                     what it wrote and the rate
//   throughput reader counts samples in DataReaderListener::on_data_available (take),
//                     checking that each writer's numbers come without gap or reordering
//                     and that the payload is intact; at the end marker it prints the count
//                     and samples/s, and exits 0 if nothing was lost
// Every wait is bounded; a line "FAIL why" and exit 1 otherwise.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <dds/dds.hpp>

#include "porting.hpp"

namespace {

using Porting::Chunk;
using Clock = std::chrono::steady_clock;
const auto kPatience = dds::core::Duration::from_secs(30);
constexpr const char* kTopic = "Throughput";

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(EXIT_FAILURE);
}

std::uint8_t payload_byte(std::uint64_t seq, std::size_t i) {
  return static_cast<std::uint8_t>((seq * 31 + i) & 0xff);
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
  const auto give_up = Clock::now() + std::chrono::seconds(kPatience.sec());
  while (!matched()) {
    if (Clock::now() > give_up) fail("no match");
    try {
      waitset.wait(dds::core::Duration::from_millisecs(500));
    } catch (const dds::core::TimeoutError&) {
      // Look again; the deadline above bounds the wait.
    }
  }
}

// What the reader saw: the listener (dispatcher thread) writes it under mu, the main thread
// reads it once `ended` (or the patience ran out).
class Counter : public dds::sub::NoOpDataReaderListener<Chunk> {
 public:
  void on_data_available(dds::sub::DataReader<Chunk>& reader) override {
    std::lock_guard lock(mu);
    for (const auto& sample : reader.take()) {
      if (!sample.info().valid()) continue;
      const Chunk& c = sample.data();
      auto& next = next_seq[c.writer_id()];
      if (count == 0) first = Clock::now();
      if (c.end()) {
        if (c.seq() != next)
          note("writer " + std::to_string(c.writer_id()) + " wrote " + std::to_string(c.seq()) +
               " samples, " + std::to_string(next) + " arrived");
        last = Clock::now();
        ended = true;
        cv.notify_all();
        continue;
      }
      if (c.seq() != next)
        note("writer " + std::to_string(c.writer_id()) + ": sample " + std::to_string(c.seq()) +
             " where " + std::to_string(next) + " was due");
      for (std::size_t i = 0; i < c.payload().size(); ++i)
        if (c.payload()[i] != payload_byte(c.seq(), i)) {
          note("sample " + std::to_string(c.seq()) + ": payload byte " + std::to_string(i));
          break;
        }
      next = c.seq() + 1;
      ++count;
    }
  }

  std::mutex mu;
  std::condition_variable cv;
  std::map<std::uint32_t, std::uint64_t> next_seq;  // per writer
  std::uint64_t count = 0;
  Clock::time_point first, last;
  bool ended = false;
  std::vector<std::string> errors;

 private:
  void note(std::string error) {
    if (errors.size() < 10) errors.push_back(std::move(error));
  }
};

int read() {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Chunk> topic(participant, kTopic);
  dds::sub::Subscriber subscriber(participant);
  dds::sub::qos::DataReaderQos qos = subscriber.default_datareader_qos();
  qos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  Counter counter;
  dds::sub::DataReader<Chunk> reader(subscriber, topic, qos, &counter,
                                     dds::core::status::StatusMask::data_available());
  wait_for_match(reader, dds::core::status::StatusMask::subscription_matched(),
                 [&] { return reader.subscription_matched_status().current_count() > 0; });
  std::cout << "matched" << std::endl;
  {
    std::unique_lock lock(counter.mu);
    if (!counter.cv.wait_for(lock, std::chrono::seconds(2 * kPatience.sec()),
                             [&] { return counter.ended; }))
      fail("no end marker; " + std::to_string(counter.count) + " samples arrived");
  }
  reader.listener(nullptr, dds::core::status::StatusMask::none());
  std::lock_guard lock(counter.mu);
  for (const auto& e : counter.errors)
    std::cout << "ERROR " << e << std::endl;
  const double seconds = std::chrono::duration<double>(counter.last - counter.first).count();
  std::cout << "received " << counter.count << " samples in " << seconds
            << " s: " << static_cast<std::uint64_t>(static_cast<double>(counter.count) / seconds)
            << " samples/s" << std::endl;
  return counter.errors.empty() ? EXIT_SUCCESS : EXIT_FAILURE;
}

int write(double seconds, std::size_t bytes) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Chunk> topic(participant, kTopic);
  dds::pub::Publisher publisher(participant);
  dds::pub::qos::DataWriterQos qos = publisher.default_datawriter_qos();
  // A full ring (the reader behind) blocks the writer until the reader catches up.
  qos << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
      << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<Chunk> writer(publisher, topic, qos);
  wait_for_match(writer, dds::core::status::StatusMask::publication_matched(),
                 [&] { return writer.publication_matched_status().current_count() > 0; });
  std::cout << "matched" << std::endl;

  constexpr std::uint32_t kWriter = 7;
  Chunk sample(kWriter, 0, false, std::vector<std::uint8_t>(bytes));
  const auto start = Clock::now();
  const auto stop = start + std::chrono::duration<double>(seconds);
  std::uint64_t seq = 0;
  while (Clock::now() < stop) {
    // Check the clock once every 64 samples.
    for (int k = 0; k < 64; ++k, ++seq) {
      sample.seq(seq);
      for (std::size_t i = 0; i < bytes; ++i)
        sample.payload()[i] = payload_byte(seq, i);
      writer.write(sample);
    }
  }
  const double took = std::chrono::duration<double>(Clock::now() - start).count();
  writer.write(Chunk(kWriter, seq, true, {}));
  writer.wait_for_acknowledgments(kPatience);
  std::cout << "wrote " << seq << " samples of " << bytes << " bytes in " << took
            << " s: " << static_cast<std::uint64_t>(static_cast<double>(seq) / took) << " samples/s"
            << std::endl;
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  if (role != "writer" && role != "reader")
    fail("usage: throughput writer [SECONDS] [BYTES] | throughput reader");
  try {
    if (role == "reader") return read();
    return write(argc > 2 ? std::stod(argv[2]) : 1.5,
                 argc > 3 ? static_cast<std::size_t>(std::stoul(argv[3])) : 64);
  } catch (const dds::core::Exception& e) {
    fail(e.what());
  }
}
