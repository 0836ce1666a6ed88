// One member process of the chaos test (chaos_test.cpp): a participant of the domain that
// the hostile peers go after, streaming "Chunks" of 10 KB (atomic, the default
// consistency). It reads commands on stdin and answers on stdout, one line each:
//
//   publisher SIZE READERS  once READERS readers matched ("matched"), writes a chunk of SIZE
//                           bytes every 5 ms (reliable, KEEP_ALL, blocking up to 10 s),
//                           "wrote K" every 100; on "stop": waits for every acknowledgment
//                           and says "acked K longest_write_ms W", exits 0; "error WHAT" and
//                           exit 3 if a write throws
//   subscriber              a reliable KEEP_ALL reader; "ready" once created; takes every
//                           millisecond and checks the chunks come in order with no gap
//                           ("FAIL ..." and exit 1 otherwise); on "report" says "report got K
//                           first F last S gap_ms G lost L members M halted H rejoins R
//                           self N port P joined_in J" (G: the longest time between two chunks
//                           since the last report; H: halted now, R: times it halted and got
//                           back in; N, P: its node id and transport port; J: the view it
//                           joined, its first), on "view" says "view
//                           EPOCH ID:PORT ID:PORT ...", on "quit" exits 0
//   half-dead               a subscriber that, on "stall", stops receiving and delivering
//                           while its heartbeat goes on (group::Engine::stall_deliveries, the
//                           fault the simulator injects), says "stalled", and once the domain
//                           removed it, "evicted after MS ms"
//   forger                  a subscriber that, on "forge OWNER VICTIM", writes "OWNER
//                           suspects VICTIM" into OWNER's SST row at every other member
//                           (group::Engine::forge_suspicion; the row check refuses it), says
//                           "forged N" (writes posted), and once the domain removed it,
//                           "evicted after MS ms"
//   logger RECORDS          a subscriber that also logs the topic "Journal" (PERSISTENT,
//                           docs/storage.md): writes RECORDS numbered records of 64 bytes
//                           there and waits until every member acknowledged them, then takes
//                           its history (up to 20 s) before "ready"; its reports add "journal
//                           T journal_lost L" (records taken, SAMPLE_LOST of its reader)
//
// Everything it waits for is bounded.
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include <dds/dds.hpp>

#include "chaos.hpp"
#include "dcps/entities.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Chaos::Chunk;
constexpr auto kPatience = std::chrono::seconds(60);

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

// A line from stdin if one is waiting (never blocks).
std::optional<std::string> command() {
  pollfd p{0, POLLIN, 0};
  if (::poll(&p, 1, 0) <= 0) return std::nullopt;
  std::string line;
  if (!std::getline(std::cin, line)) return std::string("quit");
  return line;
}

spindle::group::Engine& engine(const dds::domain::DomainParticipant& dp) {
  return std::static_pointer_cast<spindle::dcps::Participant>(dp.core_ptr())->engine();
}

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

int publisher(std::size_t size, std::int32_t readers) {
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Chunk> topic(dp, "Chunks");
  dds::pub::qos::DataWriterQos q;
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
    << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<Chunk> writer(dds::pub::Publisher(dp), topic, q);
  const auto give_up = Clock::now() + kPatience;
  while (writer.publication_matched_status().current_count() < readers) {
    if (Clock::now() > give_up) fail("publisher: readers did not match");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::cout << "matched" << std::endl;
  Chunk c;
  c.data(std::vector<std::uint8_t>(size, 0x5a));
  std::uint64_t k = 0;
  Clock::duration longest{};
  try {
    for (;;) {
      if (const auto cmd = command(); cmd && (*cmd == "stop" || *cmd == "quit")) break;
      c.seq(++k);
      const auto before = Clock::now();
      writer.write(c);
      longest = std::max(longest, Clock::now() - before);
      if (k % 100 == 0) std::cout << "wrote " << k << std::endl;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    writer.wait_for_acknowledgments(dds::core::Duration::from_secs(30));
  } catch (const dds::core::Exception& e) {
    std::cout << "error " << e.what() << std::endl;
    return 3;
  }
  std::cout << "acked " << k << " longest_write_ms " << ms(longest) << std::endl;
  return 0;
}

// The logged topic "Journal" of a logger (docs/storage.md): a PERSISTENT writer that keeps
// everything, and a reader that takes the whole history.
struct Journal {
  dds::topic::Topic<Chunk> topic;
  dds::sub::DataReader<Chunk> reader;
  std::uint64_t taken = 0;

  explicit Journal(dds::domain::DomainParticipant& dp)
      : topic(dp, "Journal"), reader(dds::sub::Subscriber(dp), topic, reader_qos()) {}
  static dds::sub::qos::DataReaderQos reader_qos() {
    dds::sub::qos::DataReaderQos q;
    q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll()
      << dds::core::policy::Durability::Persistent()
      << dds::core::policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED,
                                           dds::core::LENGTH_UNLIMITED);
    return q;
  }
  // Writes `count` numbered records of 64 bytes and waits until every member logged them.
  void write(dds::domain::DomainParticipant& dp, std::uint64_t count) {
    dds::pub::qos::DataWriterQos q;
    dds::core::policy::DurabilityService ds;
    ds.history_kind(dds::core::policy::HistoryKind::KEEP_ALL)
        .max_samples(1'000'000)
        .max_samples_per_instance(1'000'000);
    q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
      << dds::core::policy::History::KeepAll() << dds::core::policy::Durability::Persistent() << ds;
    dds::pub::DataWriter<Chunk> writer(dds::pub::Publisher(dp), topic, q);
    Chunk c;
    c.data(std::vector<std::uint8_t>(64, 0x4a));
    for (std::uint64_t k = 1; k <= count; ++k) {
      c.seq(k);
      writer.write(c);
    }
    writer.wait_for_acknowledgments(dds::core::Duration::from_secs(30));
  }
  void take() {
    for (const auto& s : reader.take())
      if (s.info().valid()) ++taken;
  }
};

int subscriber(const std::string& role, std::uint64_t journal_records) {
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Chunk> topic(dp, "Chunks");
  dds::sub::qos::DataReaderQos q;
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Chunk> reader(dds::sub::Subscriber(dp), topic, q);
  // Each view change it saw after its first added one to the epoch.
  const auto joined_in = engine(dp).view().epoch + 1 - engine(dp).stats().views;
  std::optional<Journal> journal;
  if (role == "logger") {
    journal.emplace(dp);
    if (journal_records > 0) journal->write(dp, journal_records);
    journal->reader.wait_for_historical_data(dds::core::Duration::from_secs(20));
  }
  std::cout << "ready" << std::endl;
  std::uint64_t got = 0, first = 0, last = 0;
  std::optional<Clock::time_point> previous;
  Clock::duration gap{};
  std::optional<Clock::time_point> stalled;
  bool evicted = false;
  for (;;) {
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      const auto seq = s.data().seq();
      // Once removed (half-dead, forger), it got back in as a new member: chunks were missed.
      if (got > 0 && seq != last + 1 && !evicted)
        fail("subscriber: chunk " + std::to_string(seq) + " after " + std::to_string(last));
      if (got == 0) first = seq;
      last = seq;
      ++got;
      const auto now = Clock::now();
      if (previous) gap = std::max(gap, now - *previous);
      previous = now;
    }
    if (stalled && !evicted && (!engine(dp).halted().empty() || engine(dp).stats().rejoins > 0)) {
      evicted = true;
      std::cout << "evicted after " << ms(Clock::now() - *stalled) << " ms" << std::endl;
    }
    if (const auto cmd = command()) {
      if (*cmd == "quit") return 0;
      if (*cmd == "stall" && role == "half-dead") {
        engine(dp).stall_deliveries();
        stalled = Clock::now();
        std::cout << "stalled" << std::endl;
      } else if (cmd->rfind("forge ", 0) == 0 && role == "forger") {
        std::istringstream in(cmd->substr(6));
        spindle::group::NodeId owner = 0, victim = 0;
        in >> owner >> victim;
        stalled = Clock::now();
        std::cout << "forged " << engine(dp).forge_suspicion(owner, victim) << std::endl;
      } else if (*cmd == "report") {
        auto& e = engine(dp);
        const auto v = e.view();
        const auto self = v.rank_of(e.node());
        std::cout << "report got " << got << " first " << first << " last " << last << " gap_ms "
                  << ms(gap) << " lost " << reader.sample_lost_status().total_count() << " members "
                  << v.members.size() << " halted " << (e.halted().empty() ? 0 : 1) << " rejoins "
                  << e.stats().rejoins << " self " << e.node() << " port "
                  << (self ? v.members[*self].port : 0) << " joined_in " << joined_in;
        if (journal) {
          journal->take();
          std::cout << " journal " << journal->taken << " journal_lost "
                    << journal->reader.sample_lost_status().total_count();
        }
        std::cout << std::endl;
        gap = {};
      } else if (*cmd == "view") {
        const auto v = engine(dp).view();
        std::cout << "view " << v.epoch;
        for (const auto& m : v.members)
          std::cout << ' ' << m.id << ':' << m.port;
        std::cout << std::endl;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  try {
    if (role == "publisher" && argc == 4)
      return publisher(std::stoul(argv[2]), static_cast<std::int32_t>(std::stoi(argv[3])));
    if (role == "subscriber" || role == "half-dead" || role == "forger") return subscriber(role, 0);
    if (role == "logger" && argc == 3) return subscriber(role, std::stoull(argv[2]));
  } catch (const std::exception& e) {
    std::cout << "FAIL " << role << ": " << e.what() << std::endl;
    return 1;
  }
  std::cerr << "usage: chaos_member publisher SIZE READERS | subscriber | half-dead | forger | "
               "logger RECORDS\n";
  return 2;
}
