// One participant process of the consistency checks (consistency_processes_test.cpp),
// written only against the ISO C++ PSM (<dds/dds.hpp> and the idlc-generated types;
// CMakeLists.txt refuses vendor names here). No domain file: the test names the transport
// and the join port in SPINDLE_CONFIG, as a user's environment would.
//
//   ordered-reader N FILE      a subscriber asking for order the standard way
//                              (Presentation TOPIC scope, ordered_access) and a reliable
//                              KEEP_ALL reader of "Events"; says "ready", takes (every
//                              20 ms) until it holds N samples, writes "source seq" per sample in
//                              the order take() returned them to FILE, says "done N"
//   ordered-writer SOURCE N R  a publisher with the same presentation; once R readers
//                              matched ("matched"), writes N samples of instance SOURCE,
//                              waits for every acknowledgment, says "wrote N"
//   stream-publisher SECONDS   writes a sample of "Stream" every 5 ms for SECONDS, saying
//                              "wrote K" every 50 samples; "error WHAT" and exit 3 if a
//                              write throws; "finished K" at the end
//   stream-subscriber N        reads "Stream"; says "ready", then "got K last S" every 10
//                              samples, "lost L got K first F last S" when SAMPLE_LOST
//                              changes;
//                              "done" once it has N
//   coherent-writer SIZE R     a publisher with coherent and ordered access (TOPIC scope);
//                              once R readers matched, writes coherent sets of SIZE samples
//                              of "Sets" (sample k of set n: seq n * 1000 + k, over 3
//                              instances), 1 ms apart; says "half N" in the middle of set N
//                              and "set N" after its end; forever (the test kills it)
//   coherent-reader FILE       a subscriber with coherent and ordered access; says "ready",
//                              takes every 20 ms, and on "finish" from stdin writes
//                              "set seq" per sample in take() order to FILE, says "done K"
//   group-writer SETS R        a publisher with GROUP scope, coherent and ordered access,
//                              and writers of "GroupA" and "GroupB"; once both matched R
//                              readers, writes SETS coherent sets of 6 samples alternating
//                              between the topics (seq = set * 10 + k), says "wrote SETS"
//   group-reader N FILE        a subscriber with the same presentation and readers of both
//                              topics; until it holds N samples, opens an access, takes one
//                              sample from each reader in the order dds::sub::find lists
//                              them, closes it; writes "topic set seq" per sample and "|"
//                              after each access to FILE, says "done N"
//   first-reader               a reader of "First"; says "ready", then "got SEQ" for the
//                              first sample it takes
//   first-writer               creates a writer of "First" and writes at once — no wait for
//                              a match, as ported programs do — then waits for the
//                              acknowledgments and says "wrote"
//   persistent-writer N        writes instances 1..N of "Persistent" (seq 100 + i) with
//                              PERSISTENT durability, waits for the acknowledgments, says
//                              "wrote N" and exits
//   persistent-reader N [stay] a PERSISTENT reader of "Persistent": says "got K" once it
//                              holds valid samples of K = N instances; with "stay", then
//                              waits for a line on stdin before it exits
//   kept-publisher N R         a TRANSIENT_LOCAL writer of "Kept" keeping N samples; once R
//                              readers matched ("matched"), writes seq 0..N-1 of one instance
//                              2 ms apart, says "finished N longest MS" (its longest write),
//                              and exits on a line from stdin (its history lives until then)
//   kept-subscriber N          a reliable TRANSIENT_LOCAL reader of "Kept"; says "ready", takes
//                              until seq N-1 came, says "done got K lost L"; on a line from
//                              stdin creates a late reader and says "history K first F last S
//                              consecutive|gaps" of what its member kept
//   latest-publisher I R F     a RELIABLE KEEP_LAST 1 writer of "Latest" (1 s blocking); once 2
//   readers
//                              matched ("matched"), writes seq 1 of instances 1..I; on a line
//                              from stdin writes rounds 2..R of every instance, then F more of
//                              instance 1 (seq R+1..R+F), says "finished", and exits on a line
//                              from stdin (its kept changes live until then)
//   latest-subscriber I R F    a RELIABLE KEEP_LAST 1 reader of "Latest"; says "ready", "got"
//                              once read() shows seq 1 of all I instances, then "whole" once it
//                              shows the latest of each (instance 1 at R+F, the others at R), or
//                              "stale K lost L" with K instances behind after 20 s, and exits on
//                              a line from stdin (it may relay for the publisher); a seq going
//                              back is a FAIL
// Every wait is bounded; "FAIL why" and exit 1 otherwise.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <dds/dds.hpp>

#include "consistency.hpp"

namespace {

using Consistency::Event;
using Clock = std::chrono::steady_clock;
constexpr auto kPatience = std::chrono::seconds(60);

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(EXIT_FAILURE);
}

template <typename Done>
void wait_until(Done done, const std::string& what) {
  const auto give_up = Clock::now() + kPatience;
  while (!done()) {
    if (Clock::now() > give_up) fail(what);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// The entities every role makes, as an application would: a publisher or subscriber with
// a Presentation (none: the defaults), a reliable KEEP_ALL reader, and a reliable writer
// that blocks up to 5 s (KEEP_ALL unless `keep_all` is false).
dds::pub::Publisher publisher_with(dds::domain::DomainParticipant& dp,
                                   const std::optional<dds::core::policy::Presentation>& p = {}) {
  dds::pub::qos::PublisherQos q = dp.default_publisher_qos();
  if (p) q << *p;
  return dds::pub::Publisher(dp, q);
}

dds::sub::Subscriber subscriber_with(dds::domain::DomainParticipant& dp,
                                     const std::optional<dds::core::policy::Presentation>& p = {}) {
  dds::sub::qos::SubscriberQos q = dp.default_subscriber_qos();
  if (p) q << *p;
  return dds::sub::Subscriber(dp, q);
}

template <class T>
dds::sub::DataReader<T> reliable_reader(dds::sub::Subscriber& sub, dds::topic::Topic<T>& topic) {
  dds::sub::qos::DataReaderQos q = sub.default_datareader_qos();
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  return dds::sub::DataReader<T>(sub, topic, q);
}

template <class T>
dds::pub::DataWriter<T> reliable_writer(dds::pub::Publisher& pub, dds::topic::Topic<T>& topic,
                                        bool keep_all = true, int blocking_s = 5) {
  dds::pub::qos::DataWriterQos q = pub.default_datawriter_qos();
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(blocking_s));
  if (keep_all) q << dds::core::policy::History::KeepAll();
  return dds::pub::DataWriter<T>(pub, topic, q);
}

dds::core::policy::Presentation ordered_topic() {
  return dds::core::policy::Presentation::TopicAccessScope(false, true);
}

int ordered_reader(std::uint64_t expected, const std::string& file) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Events");
  auto subscriber = subscriber_with(participant, ordered_topic());
  auto reader = reliable_reader(subscriber, topic);
  std::cout << "ready" << std::endl;
  // Takes every 20 ms, so that each take() finds samples of both instances: grouped by
  // instance, two readers' sequences would differ with the moments they took.
  std::ostringstream log;
  std::uint64_t got = 0;
  const auto give_up = Clock::now() + kPatience;
  while (got < expected) {
    if (Clock::now() > give_up)
      fail("ordered-reader: " + std::to_string(got) + " of " + std::to_string(expected) +
           " samples");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      log << s.data().source() << ' ' << s.data().seq() << '\n';
      ++got;
    }
  }
  std::ofstream(file) << log.str();
  std::cout << "done " << got << std::endl;
  return 0;
}

int ordered_writer(std::uint32_t source, std::uint64_t count, std::int32_t readers) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Events");
  auto publisher = publisher_with(participant, ordered_topic());
  auto writer = reliable_writer(publisher, topic);
  wait_until([&] { return writer.publication_matched_status().current_count() >= readers; },
             "ordered-writer: readers did not match");
  std::cout << "matched" << std::endl;
  for (std::uint64_t i = 0; i < count; ++i)
    writer.write(Event(source, i, 0));
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(30));
  std::cout << "wrote " << count << std::endl;
  return 0;
}

int stream_publisher(double seconds) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Stream");
  auto publisher = publisher_with(participant);
  // Reliable, blocking up to 20 s: a member that stops is removed within the suspicion
  // timeout, and the writes wait for that rather than fail. The checks that a write stays
  // short read "longest write" below; 5 s was once too short for the view change after a
  // subscriber left, on 2 loaded cores (docs/dev/status.md, "consistency.survivor").
  auto writer = reliable_writer(publisher, topic, false, 20);
  std::cout << "started" << std::endl;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(seconds));
  std::uint64_t k = 0;
  Clock::duration longest{};  // the longest write: a view change the writer waited for
  try {
    while (Clock::now() < end) {
      const auto before = Clock::now();
      writer.write(Event(1, k, 0));
      longest = std::max(longest, Clock::now() - before);
      if (++k % 50 == 0) std::cout << "wrote " << k << std::endl;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } catch (const dds::core::Exception& e) {
    std::cout << "error " << e.what() << std::endl;
    return 3;
  }
  std::cout << "finished " << k << " (longest write "
            << std::chrono::duration<double, std::milli>(longest).count() << " ms)" << std::endl;
  return 0;
}

int stream_subscriber(std::uint64_t wanted) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Stream");
  auto subscriber = subscriber_with(participant);
  auto reader = reliable_reader(subscriber, topic);
  std::cout << "ready" << std::endl;
  std::uint64_t got = 0;
  std::int32_t lost = 0;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  wait_until(
      [&] {
        for (const auto& s : reader.take()) {
          if (!s.info().valid()) continue;
          if (got > 0 && s.data().seq() <= last) fail("stream-subscriber: out of order");
          if (got == 0) first = s.data().seq();
          last = s.data().seq();
          if (++got % 10 == 0) std::cout << "got " << got << " last " << last << std::endl;
        }
        // SAMPLE_LOST: what went by while this process was out of the domain.
        const auto now_lost = reader.sample_lost_status().total_count();
        if (now_lost != lost) {
          lost = now_lost;
          std::cout << "lost " << lost << " got " << got << " first " << first << " last " << last
                    << std::endl;
        }
        return got >= wanted;
      },
      "stream-subscriber: too few samples");
  std::cout << "done" << std::endl;
  return 0;
}

dds::core::policy::Presentation coherent_topic() {
  return dds::core::policy::Presentation::TopicAccessScope(true, true);
}

int coherent_writer(std::uint32_t size, std::int32_t readers) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Sets");
  auto publisher = publisher_with(participant, coherent_topic());
  auto writer = reliable_writer(publisher, topic);
  wait_until([&] { return writer.publication_matched_status().current_count() >= readers; },
             "coherent-writer: readers did not match");
  std::cout << "matched" << std::endl;
  for (std::uint64_t set = 1;; ++set) {
    dds::pub::CoherentSet cs(publisher);
    for (std::uint32_t k = 0; k < size; ++k) {
      writer.write(Event(1 + k % 3, set * 1000 + k, set));
      if (k == size / 2) std::cout << "half " << set << std::endl;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    cs.end();
    std::cout << "set " << set << std::endl;
  }
}

int coherent_reader(const std::string& file) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Sets");
  auto subscriber = subscriber_with(participant, coherent_topic());
  auto reader = reliable_reader(subscriber, topic);
  std::cout << "ready" << std::endl;
  std::ostringstream log;
  std::uint64_t got = 0;
  auto take = [&] {
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      log << s.data().set() << ' ' << s.data().seq() << '\n';
      ++got;
    }
  };
  const auto give_up = Clock::now() + kPatience;
  for (;;) {
    if (Clock::now() > give_up) fail("coherent-reader: no 'finish'");
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, 20) > 0) break;  // "finish"
    take();
  }
  take();
  std::ofstream(file) << log.str();
  std::cout << "done " << got << std::endl;
  return 0;
}

dds::core::policy::Presentation coherent_group() {
  return dds::core::policy::Presentation::GroupAccessScope(true, true);
}

int group_writer(std::uint64_t sets, std::int32_t readers) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> a(participant, "GroupA");
  dds::topic::Topic<Consistency::Command> b(participant, "GroupB");
  auto publisher = publisher_with(participant, coherent_group());
  auto wa = reliable_writer(publisher, a);
  auto wb = reliable_writer(publisher, b);
  wait_until(
      [&] {
        return wa.publication_matched_status().current_count() >= readers &&
               wb.publication_matched_status().current_count() >= readers;
      },
      "group-writer: readers did not match");
  for (std::uint64_t set = 1; set <= sets; ++set) {
    dds::pub::CoherentSet cs(publisher);
    for (std::uint64_t k = 0; k < 6; ++k) {
      if (k % 2 == 0) {
        wa.write(Event(static_cast<std::uint32_t>(k), set * 10 + k, set));
      } else {
        wb.write(Consistency::Command(static_cast<std::uint32_t>(k), set * 10 + k, set));
      }
    }
    cs.end();
  }
  wa.wait_for_acknowledgments(dds::core::Duration::from_secs(30));
  wb.wait_for_acknowledgments(dds::core::Duration::from_secs(30));
  std::cout << "wrote " << sets << std::endl;
  return 0;
}

int group_reader(std::uint64_t expected, const std::string& file) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> a(participant, "GroupA");
  dds::topic::Topic<Consistency::Command> b(participant, "GroupB");
  auto subscriber = subscriber_with(participant, coherent_group());
  auto ra = reliable_reader(subscriber, a);
  auto rb = reliable_reader(subscriber, b);
  std::cout << "ready" << std::endl;
  std::ostringstream log;
  std::uint64_t got = 0;
  const auto give_up = Clock::now() + kPatience;
  while (got < expected) {
    if (Clock::now() > give_up) fail("group-reader: " + std::to_string(got) + " samples");
    {
      dds::sub::CoherentAccess access(subscriber);
      std::vector<dds::sub::AnyDataReader> order;
      dds::sub::find<dds::sub::AnyDataReader>(subscriber, dds::sub::status::DataState::any(),
                                              std::back_inserter(order));
      for (const auto& r : order) {
        if (r == dds::sub::AnyDataReader(ra)) {
          for (const auto& s : ra.select().max_samples(1).take())
            if (s.info().valid()) {
              log << "A " << s.data().set() << ' ' << s.data().seq() << '\n';
              ++got;
            }
        } else {
          for (const auto& s : rb.select().max_samples(1).take())
            if (s.info().valid()) {
              log << "B " << s.data().set() << ' ' << s.data().seq() << '\n';
              ++got;
            }
        }
      }
      access.end();
    }
    log << "|\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::ofstream(file) << log.str();
  std::cout << "done " << got << std::endl;
  return 0;
}

int first_reader() {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "First");
  auto subscriber = subscriber_with(participant);
  auto reader = reliable_reader(subscriber, topic);
  std::cout << "ready" << std::endl;
  std::optional<std::uint64_t> got;
  wait_until(
      [&] {
        for (const auto& s : reader.take())
          if (s.info().valid() && !got) got = s.data().seq();
        return got.has_value();
      },
      "first-reader: nothing arrived");
  std::cout << "got " << *got << std::endl;
  return 0;
}

int first_writer() {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "First");
  auto publisher = publisher_with(participant);
  const auto start = Clock::now();
  auto writer = reliable_writer(publisher, topic);
  const auto created = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  writer.write(Event(1, 7, 0));  // at once
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(10));
  std::cout << "wrote (the writer took " << created << " ms to create)" << std::endl;
  return 0;
}

int persistent_writer(std::uint32_t instances) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Persistent");
  dds::pub::Publisher publisher(participant);
  dds::pub::qos::DataWriterQos wq = publisher.default_datawriter_qos();
  wq << dds::core::policy::Durability::Persistent() << dds::core::policy::Reliability::Reliable();
  dds::pub::DataWriter<Event> writer(publisher, topic, wq);
  for (std::uint32_t i = 1; i <= instances; ++i)
    writer.write(Event(i, 100 + i, 0));
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(10));
  std::cout << "wrote " << instances << std::endl;
  return 0;
}

int persistent_reader(std::uint32_t instances, bool stay) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Persistent");
  dds::sub::Subscriber subscriber(participant);
  dds::sub::qos::DataReaderQos rq = subscriber.default_datareader_qos();
  rq << dds::core::policy::Durability::Persistent() << dds::core::policy::Reliability::Reliable()
     << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Event> reader(subscriber, topic, rq);
  reader.wait_for_historical_data(dds::core::Duration::from_secs(20));
  std::map<std::uint32_t, std::uint64_t> got;
  wait_until(
      [&] {
        for (const auto& s : reader.read())
          if (s.info().valid()) got[s.data().source()] = s.data().seq();
        return got.size() >= instances;
      },
      "persistent-reader: too few instances");
  for (const auto& [source, seq] : got)
    if (seq != 100 + source)
      fail("persistent-reader: instance " + std::to_string(source) + " holds " +
           std::to_string(seq));
  std::cout << "got " << got.size() << std::endl;
  if (stay) {
    std::string line;
    std::getline(std::cin, line);
  }
  return 0;
}

// A TRANSIENT_LOCAL writer and readers of "Kept" that keep all N samples of one instance.
dds::pub::DataWriter<Event> kept_writer(dds::pub::Publisher& pub, dds::topic::Topic<Event>& topic,
                                        std::int32_t depth) {
  dds::pub::qos::DataWriterQos q = pub.default_datawriter_qos();
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(1))
    << dds::core::policy::Durability::TransientLocal()
    << dds::core::policy::History::KeepLast(depth);
  return dds::pub::DataWriter<Event>(pub, topic, q);
}

dds::sub::DataReader<Event> kept_reader(dds::sub::Subscriber& sub, dds::topic::Topic<Event>& topic,
                                        std::int32_t depth) {
  dds::sub::qos::DataReaderQos q = sub.default_datareader_qos();
  q << dds::core::policy::Reliability::Reliable() << dds::core::policy::Durability::TransientLocal()
    << dds::core::policy::History::KeepLast(depth);
  return dds::sub::DataReader<Event>(sub, topic, q);
}

int kept_publisher(std::uint64_t count, std::int32_t readers) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Kept");
  dds::pub::Publisher publisher(participant);
  auto writer = kept_writer(publisher, topic, static_cast<std::int32_t>(count));
  wait_until([&] { return writer.publication_matched_status().current_count() >= readers; },
             "kept-publisher: readers did not match");
  std::cout << "matched" << std::endl;
  Clock::duration longest{};
  for (std::uint64_t k = 0; k < count; ++k) {
    const auto before = Clock::now();
    writer.write(Event(1, k, 0));
    longest = std::max(longest, Clock::now() - before);
    if ((k + 1) % 100 == 0) std::cout << "wrote " << k + 1 << std::endl;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::cout << "finished " << count << " longest "
            << std::chrono::duration_cast<std::chrono::milliseconds>(longest).count() << std::endl;
  std::string line;
  std::getline(std::cin, line);  // the history lives while its writer does
  return 0;
}

int kept_subscriber(std::uint64_t count) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Kept");
  dds::sub::Subscriber subscriber(participant);
  const auto depth = static_cast<std::int32_t>(count);
  auto reader = kept_reader(subscriber, topic, depth);
  std::cout << "ready" << std::endl;
  std::uint64_t got = 0;
  std::uint64_t last = 0;
  wait_until(
      [&] {
        for (const auto& s : reader.take()) {
          if (!s.info().valid()) continue;
          if (got > 0 && s.data().seq() <= last) fail("kept-subscriber: out of order");
          last = s.data().seq();
          if (++got % 100 == 0) std::cout << "got " << got << std::endl;
        }
        return got > 0 && last + 1 == count;
      },
      "kept-subscriber: the last sample never came");
  std::cout << "done got " << got << " lost " << reader.sample_lost_status().total_count()
            << std::endl;
  std::string line;
  std::getline(std::cin, line);
  // A late reader in this process: what its member keeps of the topic.
  auto late = kept_reader(subscriber, topic, depth);
  late.wait_for_historical_data(dds::core::Duration::from_secs(20));
  std::vector<std::uint64_t> history;
  const auto give_up = Clock::now() + std::chrono::seconds(5);
  while (history.size() < count && Clock::now() < give_up) {
    for (const auto& s : late.take())
      if (s.info().valid()) history.push_back(s.data().seq());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool ordered = true;
  for (std::size_t i = 1; i < history.size(); ++i)
    ordered = ordered && history[i] == history[i - 1] + 1;
  std::cout << "history " << history.size() << " first " << (history.empty() ? 0 : history.front())
            << " last " << (history.empty() ? 0 : history.back())
            << (ordered ? " consecutive" : " gaps") << std::endl;
  return 0;
}

// Repair (docs/dcps.md, "Repair"): the instances a stopped reader's ring no longer held come
// back from the writer once it runs again.
dds::core::policy::History latest_history() {
  return dds::core::policy::History::KeepLast(1);
}

int latest_publisher(std::uint32_t instances, std::uint64_t rounds, std::uint64_t filler) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Latest");
  dds::pub::Publisher publisher(participant);
  dds::pub::qos::DataWriterQos q = publisher.default_datawriter_qos();
  // It writes faster than a ring drains: a write waits up to the lag bound (100 ms) and the
  // time to see the lag, then the stopped member is left behind.
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(1))
    << latest_history();
  dds::pub::DataWriter<Event> writer(publisher, topic, q);
  wait_until([&] { return writer.publication_matched_status().current_count() >= 2; },
             "latest-publisher: readers did not match");
  std::cout << "matched" << std::endl;
  for (std::uint32_t i = 1; i <= instances; ++i)
    writer.write(Event(i, 1, 0));
  std::string line;
  std::getline(std::cin, line);
  std::uint64_t n = 0;
  auto write = [&](std::uint32_t source, std::uint64_t seq) {
    writer.write(Event(source, seq, 0));
    if (++n % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  for (std::uint64_t r = 2; r <= rounds; ++r)
    for (std::uint32_t i = 1; i <= instances; ++i)
      write(i, r);
  for (std::uint64_t k = 1; k <= filler; ++k)
    write(1, rounds + k);
  std::cout << "finished" << std::endl;
  std::getline(std::cin, line);
  return 0;
}

int latest_subscriber(std::uint32_t instances, std::uint64_t rounds, std::uint64_t filler) {
  dds::domain::DomainParticipant participant(dds::domain::default_id());
  dds::topic::Topic<Event> topic(participant, "Latest");
  dds::sub::Subscriber subscriber(participant);
  dds::sub::qos::DataReaderQos q = subscriber.default_datareader_qos();
  q << dds::core::policy::Reliability::Reliable() << latest_history();
  dds::sub::DataReader<Event> reader(subscriber, topic, q);
  std::cout << "ready" << std::endl;
  std::map<std::uint32_t, std::uint64_t> shown;
  auto look = [&] {
    for (const auto& s : reader.read()) {
      if (!s.info().valid()) continue;
      auto& v = shown[s.data().source()];
      if (s.data().seq() < v) {
        fail("latest-subscriber: an instance went back: instance " +
             std::to_string(s.data().source()) + " showed " + std::to_string(v) + ", now " +
             std::to_string(s.data().seq()) + " (source time " +
             std::to_string(s.info().timestamp().to_millisecs()) + " ms, lost " +
             std::to_string(reader.sample_lost_status().total_count()) + ")");
      }
      v = s.data().seq();
    }
  };
  auto behind = [&](std::uint64_t round, std::uint64_t first) {
    std::uint32_t k = 0;
    for (std::uint32_t i = 1; i <= instances; ++i) {
      const auto it = shown.find(i);
      if (it == shown.end() || it->second < (i == 1 ? first : round)) ++k;
    }
    return k;
  };
  wait_until(
      [&] {
        look();
        return behind(1, 1) == 0;
      },
      "latest-subscriber: the first round never came");
  std::cout << "got" << std::endl;
  const auto give_up = Clock::now() + std::chrono::seconds(20);
  bool whole = false;
  while (!whole && Clock::now() < give_up) {
    look();
    whole = behind(rounds, rounds + filler) == 0;
    if (!whole) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (whole) {
    std::cout << "whole" << std::endl;
  } else {
    std::cout << "stale " << behind(rounds, rounds + filler) << " lost "
              << reader.sample_lost_status().total_count() << std::endl;
  }
  std::string line;
  std::getline(std::cin, line);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  auto arg = [&](int i) -> std::string {
    if (i >= argc) fail(role + ": missing argument " + std::to_string(i));
    return argv[i];
  };
  try {
    if (role == "ordered-reader") return ordered_reader(std::stoull(arg(2)), arg(3));
    if (role == "ordered-writer") {
      return ordered_writer(static_cast<std::uint32_t>(std::stoul(arg(2))), std::stoull(arg(3)),
                            std::stoi(arg(4)));
    }
    if (role == "stream-publisher") return stream_publisher(std::stod(arg(2)));
    if (role == "stream-subscriber") return stream_subscriber(std::stoull(arg(2)));
    if (role == "coherent-writer") {
      return coherent_writer(static_cast<std::uint32_t>(std::stoul(arg(2))), std::stoi(arg(3)));
    }
    if (role == "coherent-reader") return coherent_reader(arg(2));
    if (role == "group-writer") return group_writer(std::stoull(arg(2)), std::stoi(arg(3)));
    if (role == "group-reader") return group_reader(std::stoull(arg(2)), arg(3));
    if (role == "first-reader") return first_reader();
    if (role == "first-writer") return first_writer();
    if (role == "persistent-writer") {
      return persistent_writer(static_cast<std::uint32_t>(std::stoul(arg(2))));
    }
    if (role == "kept-publisher") return kept_publisher(std::stoull(arg(2)), std::stoi(arg(3)));
    if (role == "kept-subscriber") return kept_subscriber(std::stoull(arg(2)));
    if (role == "latest-publisher" || role == "latest-subscriber") {
      const auto instances = static_cast<std::uint32_t>(std::stoul(arg(2)));
      const auto rounds = std::stoull(arg(3));
      const auto filler = std::stoull(arg(4));
      return role == "latest-publisher" ? latest_publisher(instances, rounds, filler)
                                        : latest_subscriber(instances, rounds, filler);
    }
    if (role == "persistent-reader") {
      return persistent_reader(static_cast<std::uint32_t>(std::stoul(arg(2))),
                               argc > 3 && std::string(argv[3]) == "stay");
    }
  } catch (const std::exception& e) {
    fail(role + ": " + e.what());
  }
  std::cerr << "usage: consistency_node ordered-reader N FILE | ordered-writer SOURCE N R |"
               " stream-publisher SECONDS | stream-subscriber N | coherent-writer SIZE R |"
               " coherent-reader FILE | group-writer SETS R | group-reader N FILE |"
               " first-reader | first-writer | persistent-writer N |"
               " persistent-reader N [stay] | kept-publisher N R | kept-subscriber N |"
               " latest-publisher I R F | latest-subscriber I R F\n";
  return 2;
}
