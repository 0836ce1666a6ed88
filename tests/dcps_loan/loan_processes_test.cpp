// Zero-copy receive across processes, over shm (the reader reads the writer's shared segment in
// place) and tcp (its copy of the writer's ring): a sample a reader process keeps lent
// (LoanedSamples) keeps its bytes while the writer process writes on; the writer gets the rest
// of its window and then waits (its max_blocking_time runs out: TimeoutError) rather than
// rewrite the held slot; once the loan returns, the writer goes on and the reader takes the
// rest whole. The same for a sample larger than a slot (LoanTest::Frame, 256 KiB), read in
// the reader's RDMC buffer: the held message keeps its RDMC group from moving on.
//
// Two processes, writer (node 0) and reader (node 1), talk on a second topic ("loan_step",
// one sample per step) to take turns:
//   reader: takes sample 0 and keeps it lent       -> step 1
//   writer: writes until a write times out         -> step 2 (sensor: how many it wrote)
//   reader: checks the lent bytes, lets them go    -> step 3
//   writer: writes the one that timed out          -> step 4
//   reader: takes the rest, checks them            -> its verdict on the pipe
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>

#include <catch2/catch.hpp>
#include <dds/dds.hpp>

#include "forked.hpp"
#include "loan_types.hpp"
#include "transports.hpp"

namespace fs = std::filesystem;
namespace tst = spindle::testing;
using namespace std::chrono_literals;
using LoanTest::Frame;
using LoanTest::Telemetry;

namespace {

constexpr std::uint32_t kWindow = 4;

double value(std::uint64_t seq, std::size_t k) {
  return static_cast<double>(seq * 8 + k) + 0.25;
}
std::uint8_t pixel(std::uint64_t seq, std::size_t k) {
  return static_cast<std::uint8_t>(seq * 29 + k * 3 + k / 1000);
}

void fill(Telemetry& s, std::uint64_t seq) {
  s.sensor(5);
  s.seq(seq);
  for (std::size_t k = 0; k < 8; ++k)
    s.values()[k] = value(seq, k);
}
void fill(Frame& f, std::uint64_t seq) {
  f.camera(5);
  f.seq(seq);
  for (std::size_t k = 0; k < f.pixels().size(); ++k)
    f.pixels()[k] = pixel(seq, k);
}

// "" when the sample holds sample `seq` whole, else what differs.
std::string check(const Telemetry& s, std::uint64_t seq) {
  if (s.sensor() != 5 || s.seq() != seq)
    return "sample " + std::to_string(seq) + " reads as sensor " + std::to_string(s.sensor()) +
           ", seq " + std::to_string(s.seq());
  for (std::size_t k = 0; k < 8; ++k)
    if (s.values()[k] != value(seq, k))
      return "sample " + std::to_string(seq) + " value " + std::to_string(k) + " changed";
  return "";
}
std::string check(const Frame& f, std::uint64_t seq) {
  if (f.camera() != 5 || f.seq() != seq)
    return "frame " + std::to_string(seq) + " reads as camera " + std::to_string(f.camera()) +
           ", seq " + std::to_string(f.seq());
  for (std::size_t k = 0; k < f.pixels().size(); ++k)
    if (f.pixels()[k] != pixel(seq, k))
      return "frame " + std::to_string(seq) + " pixel " + std::to_string(k) + " changed";
  return "";
}

// How many samples the writer gets past the one held. A slot's: the rest of its window. A
// frame's (larger than a slot): over tcp its RDMC group runs at most 16 messages
// (rdmc::kHeaders) past the oldest one a member holds, 15 past it; the 16th is written (its
// buffer space and its descriptor's slot taken) but waits to go, and so do the next three,
// whose descriptors take the rest of the window; the one after finds no slot. Over shm the
// reader holds the writer's own buffer (read in place): the writer's space, 16 frames, holds
// the held one and 15 past it, and the 16th finds no room.
template <class T, bool kShm>
constexpr std::uint32_t kPastHeld = std::is_same_v<T, Frame> ? (kShm ? 15 : 15 + kWindow)
                                                             : kWindow - 1;

template <class T>
struct Node {
  Node()
      : dp(dds::domain::default_id()),
        data(dp, "loan_data"),
        step(dp, "loan_step"),
        pub(dp),
        sub(dp) {}
  dds::domain::DomainParticipant dp;
  dds::topic::Topic<T> data;
  dds::topic::Topic<Telemetry> step;
  dds::pub::Publisher pub;
  dds::sub::Subscriber sub;

  dds::pub::qos::DataWriterQos writer_qos(dds::core::Duration blocking) const {
    return pub.default_datawriter_qos() << dds::core::policy::Reliability::Reliable(blocking)
                                        << dds::core::policy::History::KeepAll();
  }
  dds::sub::qos::DataReaderQos reader_qos() const {
    return sub.default_datareader_qos()
           << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  }
};

template <class Pred>
bool eventually(Pred pred, std::chrono::seconds limit = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// Every endpoint of both processes matched: the layout is settled, so no view change comes
// between the steps (a view change starts each writer's ring afresh: a loan of the view that
// ended holds that view's memory, not the writer).
template <class Data>
bool all_matched(Data& data, dds::pub::DataWriter<Telemetry>& steps,
                 dds::sub::DataReader<Telemetry>& theirs) {
  return eventually([&] {
    std::int32_t matched = 0;
    if constexpr (requires { data.publication_matched_status(); }) {
      matched = data.publication_matched_status().current_count();
    } else {
      matched = data.subscription_matched_status().current_count();
    }
    return matched == 1 && steps.publication_matched_status().current_count() == 2 &&
           theirs.subscription_matched_status().current_count() == 2;
  });
}

// Waits for step `n` on `r`; its sensor field, or nullopt after the limit.
std::optional<std::uint32_t> await_step(dds::sub::DataReader<Telemetry>& r, std::uint64_t n) {
  std::optional<std::uint32_t> got;
  (void)eventually([&] {
    for (const auto& s : r.take())
      if (s.info().valid() && s.data().seq() == n) got = s.data().sensor();
    return got.has_value();
  });
  return got;
}

void say_step(dds::pub::DataWriter<Telemetry>& w, std::uint64_t n, std::uint32_t detail = 0) {
  Telemetry s;
  s.sensor(detail);
  s.seq(n);
  w.write(s);
}

template <class T, bool kShm>
std::string writer_process() {
  Node<T> n;
  dds::pub::DataWriter<T> w(n.pub, n.data, n.writer_qos(dds::core::Duration::from_millisecs(300)));
  dds::pub::DataWriter<Telemetry> steps(n.pub, n.step,
                                        n.writer_qos(dds::core::Duration::from_secs(5)));
  dds::sub::DataReader<Telemetry> theirs(n.sub, n.step, n.reader_qos());
  if (!all_matched(w, steps, theirs)) return "writer: the reader did not match";
  T& first = w.loan_sample();
  fill(first, 0);
  w.write(first);
  if (!await_step(theirs, 1)) return "writer: the reader did not say it holds sample 0";
  std::uint32_t wrote = 0;
  std::uint64_t seq = 1;
  for (; seq < 4 * kPastHeld<T, kShm>; ++seq) {
    try {
      T& s = w.loan_sample();
      fill(s, seq);
      w.write(s);
      ++wrote;
    } catch (const dds::core::TimeoutError&) {
      break;
    }
  }
  say_step(steps, 2, wrote);
  if (!await_step(theirs, 3)) return "writer: the reader did not let its loan go";
  try {
    T& s = w.loan_sample();
    fill(s, seq);
    w.write(s);
  } catch (const dds::core::TimeoutError& e) {
    return std::string("writer: still held after the loan returned: ") + e.what();
  }
  say_step(steps, 4, static_cast<std::uint32_t>(seq));
  std::this_thread::sleep_for(500ms);  // the reader takes the rest while this member stays
  return "";
}

template <class T, bool kShm>
std::string reader_process() {
  Node<T> n;
  dds::sub::DataReader<T> r(n.sub, n.data, n.reader_qos());
  dds::pub::DataWriter<Telemetry> steps(n.pub, n.step,
                                        n.writer_qos(dds::core::Duration::from_secs(5)));
  dds::sub::DataReader<Telemetry> theirs(n.sub, n.step, n.reader_qos());
  if (!all_matched(r, steps, theirs)) return "reader: the writer did not match";
  dds::sub::LoanedSamples<T> held;
  if (!eventually([&] {
        held = r.take();
        return held.length() == 1;
      }))
    return "reader: sample 0 did not come";
  if (auto bad = check(held[0].data(), 0); !bad.empty()) return "reader: " + bad;
  say_step(steps, 1);
  const auto wrote = await_step(theirs, 2);
  if (!wrote) return "reader: the writer did not say how far it got";
  // The writer had the rest of its window and no more: the held slot stayed ours.
  if (*wrote != kPastHeld<T, kShm>)
    return "reader: the writer wrote " + std::to_string(*wrote) + " samples past the held one, " +
           "not " + std::to_string(kPastHeld<T, kShm>);
  if (auto bad = check(held[0].data(), 0); !bad.empty()) return "reader: while lent, " + bad;
  held = dds::sub::LoanedSamples<T>();
  say_step(steps, 3);
  const auto last = await_step(theirs, 4);
  if (!last) return "reader: the writer did not write on";
  std::uint64_t next = 1;
  std::string bad;
  dds::sub::LoanedSamples<T> kept;  // the batch with the last sample, lent on
  if (!eventually([&] {
        auto batch = r.take();
        for (const auto& s : batch) {
          if (!s.info().valid()) continue;
          if (bad.empty()) bad = check(s.data(), next);
          ++next;
        }
        if (batch.length() > 0) kept = std::move(batch);
        return next > *last;
      }))
    return "reader: took " + std::to_string(next - 1) + " of " + std::to_string(*last);
  if (!bad.empty()) return "reader: " + bad;
  // The writer's process ends while the last samples are lent: they stay intact (a frame
  // over shm is the writer's own buffer, still mapped here after its view and its process).
  if (!eventually([&] { return r.subscription_matched_status().current_count() == 0; }))
    return "reader: the writer did not leave";
  for (const auto& s : kept)
    if (s.info().valid())
      if (auto gone = check(s.data(), s.data().seq()); !gone.empty())
        return "reader: once the writer left, " + gone;
  return "";
}

// Runs the writer (node 0) and the reader (node 1) in processes of their own; what each said.
template <class T>
std::pair<std::string, std::string> run(const std::string& transport) {
  const std::string name = "spindle-loanproc-" + std::to_string(::getpid()) + "-" + transport;
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto file = dir / "domain.yaml";
  {
    std::ofstream out(file);
    out << "version: 1\ntransport: " << transport << "\nshm: {namespace: " << name
        << "}\nmembers:\n";
    for (int j = 0; j < 2; ++j)
      out << "  - {id: " << j << ", host: 127.0.0.1, port: " << tst::free_loopback_port() << "}\n";
    out << "engine: {window_size: " << kWindow << ", connect_timeout: 10s}\n";
  }
  const auto as = [&file](int node, std::string (*role)()) {
    return [&file, node, role] {
      ::setenv("SPINDLE_CONFIG", file.c_str(), 1);
      ::setenv("SPINDLE_NODE_ID", std::to_string(node).c_str(), 1);
      return role();
    };
  };
  const bool shm = transport == "shm";
  tst::Forked writer(as(0, shm ? writer_process<T, true> : writer_process<T, false>));
  tst::Forked reader(as(1, shm ? reader_process<T, true> : reader_process<T, false>));
  const std::pair<std::string, std::string> said{writer.said(), reader.said()};
  fs::remove_all(dir);
  return said;
}

}  // namespace

TEST_CASE("a sample lent in place in another process keeps its slot from its writer",
          "[dcps][loan][in_place][processes]") {
  for (const std::string transport : {"shm", "tcp"}) {
    const auto [writer, reader] = run<Telemetry>(transport);
    INFO(transport << ": writer: " << writer << "\nreader: " << reader);
    CHECK(writer.empty());
    CHECK(reader.empty());
  }
}

TEST_CASE("a sample larger than a slot lent in another process keeps its RDMC buffer",
          "[dcps][loan][in_place][processes][large]") {
  for (const std::string transport : {"shm", "tcp"}) {
    const auto [writer, reader] = run<Frame>(transport);
    INFO(transport << ": writer: " << writer << "\nreader: " << reader);
    CHECK(writer.empty());
    CHECK(reader.empty());
  }
}
