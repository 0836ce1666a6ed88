// spindle-demo: the README's main job. Three participant processes on loopback join one
// domain over TCP (or shared memory). Two of them are redundant flight-management
// computers publishing the flight state of the same aircraft — one DDS instance, two
// writers — and all three read it with the `atomic` QoS profile. Each member takes every
// sample, digests their order and publishes a report on a second topic; every member
// checks that all three saw the same samples in the same order. The parent process prints
// the reports, throughput and latency, and exits 0 only if everything agreed.
//
//   spindle-demo [--samples N] [--transport tcp|shm]        (the parent: starts 3 members)
//   spindle-demo --member                                     (one member; env below)
//
// A member finds its domain file through SPINDLE_CONFIG and its id through SPINDLE_NODE_ID,
// as any Spindle DDS application does. Every wait is bounded. A member that fails (a peer
// died, a write timed out) says why on a FAIL line and exits 1 through its destructors, so
// its participant leaves cleanly; the parent names each member that failed or died and
// removes any shared-memory segments a killed member left behind.
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <dds/dds.hpp>

#include "avionics.hpp"
#include "demo_report.hpp"
#include "local_domain.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::uint32_t kMembers = 3;
constexpr std::uint32_t kWriters = 2;   // members 0 and 1
constexpr std::uint32_t kAircraft = 7;  // the one aircraft both computers report
constexpr auto kDeadline = 90s;

std::int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// FNV-1a over the (writer, sequence) pairs in the order a member took them.
struct Digest {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  void add(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ULL;
    }
  }
};

template <class Pred>
bool wait_until(Pred pred, Clock::time_point deadline) {
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// A member's failure: main() prints it on a FAIL line and exits 1. Thrown, not exit()ed, so
// the participant's destructor runs and its transport leaves nothing behind.
struct MemberFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void die(const std::string& why) {
  throw MemberFailure(why);
}

// ------------------------------------------------------------------------------- member
int member(std::uint64_t samples) {
  const auto deadline = Clock::now() + kDeadline;
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  const std::uint32_t me = dp.node_id();

  // The shipped `atomic` profile; the reader keeps every sample (the demo checks them all)
  // and a writer may wait longer for a full ring than an avionics loop would.
  dds::core::QosProvider profiles(std::string(SPINDLE_SOURCE_QOS_DIR) + "/atomic.yaml", "atomic");
  auto topic_qos = profiles.topic_qos();
  auto writer_qos = profiles.datawriter_qos();
  writer_qos << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10));
  auto reader_qos = profiles.datareader_qos();
  reader_qos << dds::core::policy::History::KeepAll()
             << dds::core::policy::ResourceLimits(dds::core::LENGTH_UNLIMITED,
                                                  dds::core::LENGTH_UNLIMITED,
                                                  dds::core::LENGTH_UNLIMITED);

  dds::topic::Topic<Avionics::FlightState> flight(dp, "FlightState", topic_qos);
  dds::topic::Topic<SpindleDemo::MemberReport> reports(dp, "DemoReport", topic_qos);
  dds::pub::Publisher pub(dp, profiles.publisher_qos());
  dds::sub::Subscriber sub(dp, profiles.subscriber_qos());
  dds::sub::DataReader<Avionics::FlightState> reader(sub, flight, reader_qos);
  dds::sub::DataReader<SpindleDemo::MemberReport> report_reader(sub, reports, reader_qos);
  dds::pub::DataWriter<SpindleDemo::MemberReport> report_writer(pub, reports, writer_qos);
  dds::pub::DataWriter<Avionics::FlightState> writer = dds::core::null;
  if (me < kWriters) writer = dds::pub::DataWriter<Avionics::FlightState>(pub, flight, writer_qos);

  // Everyone matched with everyone before the first sample: writers see 3 readers, readers
  // see 2 writers (their own process's included).
  const bool matched = wait_until(
      [&] {
        if (!writer.is_nil() && writer.publication_matched_status().current_count() < 3)
          return false;
        return reader.subscription_matched_status().current_count() == kWriters &&
               report_writer.publication_matched_status().current_count() == 3 &&
               report_reader.subscription_matched_status().current_count() == 3;
      },
      deadline);
  if (!matched) die("node " + std::to_string(me) + ": endpoints did not match in time");

  // The writers publish while every member takes, on a WaitSet woken by a ReadCondition.
  // A write that fails (a member died and the ring stayed full past the reliability
  // timeout) ends the publisher; the reader loop below reports it.
  std::mutex publish_mu;
  std::string publish_error;
  std::atomic<bool> publish_failed{false};
  std::jthread publisher;
  if (!writer.is_nil()) {
    publisher = std::jthread([&](const std::stop_token& stop) {
      Avionics::FlightState s;
      s.aircraft_id(kAircraft);
      s.callsign(me == 0 ? "FMS-A" : "FMS-B");
      s.phase(Avionics::FlightPhase::CRUISE);
      try {
        for (std::uint64_t i = 0; i < samples && !stop.stop_requested(); ++i) {
          s.timestamp_ns(static_cast<std::uint64_t>(wall_ns()));
          s.position(Avionics::Position(47.0 + 1e-6 * static_cast<double>(i), 8.5, 11000.0f));
          s.heading_deg(static_cast<float>(i % 360));
          s.ground_speed_mps(230.0f);
          s.vertical_speed_mps(static_cast<float>(i & 1));
          writer.write(s);
        }
      } catch (const std::exception& e) {
        std::lock_guard lock(publish_mu);
        publish_error = e.what();
        publish_failed = true;
      }
    });
  }
  // Stops and joins the publisher (any exit from here on), then reports its failure.
  auto check_publisher = [&] {
    if (!publish_failed) return;
    std::lock_guard lock(publish_mu);
    die("node " + std::to_string(me) + ": write failed: " + publish_error);
  };

  dds::core::cond::WaitSet ws;
  dds::sub::cond::ReadCondition has_data(reader, dds::sub::status::DataState::any());
  ws += has_data;
  Digest digest;
  std::vector<double> latency_us;
  latency_us.reserve(samples * kWriters);
  std::map<std::string, std::uint64_t> next_seq;  // per writer: samples must arrive in order
  std::uint64_t received = 0;
  std::int64_t first_ns = 0, last_ns = 0;
  const std::uint64_t expected = samples * kWriters;
  while (received < expected) {
    check_publisher();
    // A writer that left before we took all of its samples died: nothing more will come.
    if (reader.subscription_matched_status().current_count() <
        static_cast<std::int32_t>(kWriters)) {
      die("node " + std::to_string(me) + ": a writer left after " + std::to_string(received) +
          " of " + std::to_string(expected) + " samples (matched writers " +
          std::to_string(reader.subscription_matched_status().current_count()) + " of " +
          std::to_string(kWriters) + ")");
    }
    // A member that left will never report: the run cannot agree, say so now.
    if (report_writer.publication_matched_status().current_count() <
        static_cast<std::int32_t>(kMembers)) {
      die("node " + std::to_string(me) + ": a member left after " + std::to_string(received) +
          " of " + std::to_string(expected) + " samples (matched report readers " +
          std::to_string(report_writer.publication_matched_status().current_count()) + " of " +
          std::to_string(kMembers) + ")");
    }
    if (Clock::now() > deadline) {
      die("node " + std::to_string(me) + ": took " + std::to_string(received) + " of " +
          std::to_string(expected) + " samples before the deadline");
    }
    try {
      ws.wait(dds::core::Duration::from_millisecs(500));
    } catch (const dds::core::TimeoutError&) {
      continue;
    }
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      const auto now = wall_ns();
      const auto& d = s.data();
      const std::string who(d.callsign());
      // Per-writer FIFO: the writer's samples carry increasing timestamps.
      auto& seq = next_seq[who];
      ++seq;
      digest.add(who == "FMS-A" ? 1 : 2);
      digest.add(d.timestamp_ns());
      latency_us.push_back(static_cast<double>(now - static_cast<std::int64_t>(d.timestamp_ns())) /
                           1e3);
      if (first_ns == 0) first_ns = now;
      last_ns = now;
      ++received;
    }
  }
  if (publisher.joinable()) publisher.join();
  check_publisher();

  std::sort(latency_us.begin(), latency_us.end());
  auto pct = [&](double q) {
    return latency_us.empty() ? 0.0
                              : latency_us[static_cast<std::size_t>(
                                    q * static_cast<double>(latency_us.size() - 1))];
  };
  SpindleDemo::MemberReport mine;
  mine.node(me);
  mine.received(received);
  mine.order_digest(digest.h);
  const double secs = static_cast<double>(std::max<std::int64_t>(last_ns - first_ns, 1)) / 1e9;
  mine.samples_per_s(static_cast<double>(received) / secs);
  mine.latency_p50_us(pct(0.5));
  mine.latency_p99_us(pct(0.99));
  report_writer.write(mine);

  // Every member's report, as this member received them.
  std::map<std::uint32_t, SpindleDemo::MemberReport> all;
  const bool reported = wait_until(
      [&] {
        for (const auto& s : report_reader.take())
          if (s.info().valid()) all[s.data().node()] = s.data();
        return all.size() == kMembers;
      },
      deadline);
  if (!reported) die("node " + std::to_string(me) + ": reports missing");
  bool same = true;
  for (const auto& [node, r] : all)
    same = same && r.order_digest() == digest.h && r.received() == expected;
  std::cout << "REPORT node=" << me << " received=" << received << " digest=" << std::hex
            << digest.h << std::dec << " samples_per_s=" << mine.samples_per_s()
            << " p50_us=" << mine.latency_p50_us() << " p99_us=" << mine.latency_p99_us()
            << " all_agree=" << (same ? 1 : 0) << std::endl;
  // Leave together: nobody's participant goes while another still reads reports.
  std::this_thread::sleep_for(300ms);
  return same ? 0 : 2;
}

// ------------------------------------------------------------------------------- parent
std::string field(const std::string& line, const std::string& key) {
  const auto at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const auto start = at + key.size() + 2;
  return line.substr(start, line.find(' ', start) - start);
}

// How a member process ended, from pclose()'s status; empty if it exited 0.
std::string ending(int status) {
  if (status == -1) return "could not be waited for";
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "was killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    // popen's shell reports a command killed by a signal as 128 + the signal.
    const int code = WEXITSTATUS(status);
    if (code > 128 && code < 128 + NSIG)
      return "was killed by signal " + std::to_string(code - 128) + " (" + ::strsignal(code - 128) +
             ")";
    return "exited with status " + std::to_string(code);
  }
  return "";
}

int parent(std::uint64_t samples, const std::string& transport) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("spindle-demo-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto file = dir / "domain.yaml";
  const std::string shm_namespace = "spindle-demo-" + std::to_string(::getpid());
  spindle::tools::write_domain_file(file, {transport, kMembers, shm_namespace, 256, 1024,
                                           "Written by spindle-demo: three members on loopback."});
  std::cout << "Spindle DDS demo: 3 participants on loopback over " << transport << ", domain file "
            << file << "\n"
            << "  FMS-A (node 0) and FMS-B (node 1) publish Avionics::FlightState of aircraft "
            << kAircraft << ", " << samples << " samples each, QoS profile 'atomic'\n"
            << "  every node reads every sample and checks the order against the others\n"
            << std::flush;

  std::vector<FILE*> children;
  for (std::uint32_t i = 0; i < kMembers; ++i)
    children.push_back(
        spindle::tools::start_member(file, i, "--member --samples " + std::to_string(samples)));
  std::vector<std::string> lines;
  int failures = 0;
  for (std::size_t i = 0; i < children.size(); ++i) {
    FILE* f = children[i];
    char buf[1024];
    std::string report;
    while (std::fgets(buf, sizeof buf, f) != nullptr) {
      std::string l(buf);
      if (!l.empty() && l.back() == '\n') l.pop_back();
      if (l.rfind("REPORT", 0) == 0) report = l;
      if (l.rfind("FAIL", 0) == 0) std::cout << "  " << l << "\n";
    }
    const int status = ::pclose(f);
    if (const auto how = ending(status); !how.empty())
      std::cout << "  FAIL node " << i << " " << how << "\n";
    if (status != 0 || report.empty()) ++failures;
    lines.push_back(report);
  }
  fs::remove_all(dir);

  std::cout << "\n  node  received  order digest      samples/s   latency p50 µs   p99 µs\n";
  std::string digest;
  bool agree = failures == 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    if (l.empty()) {
      std::cout << "  " << i << "     (no report)\n";
      continue;
    }
    std::printf("  %-4s  %-8s  %-16s  %-10.0f  %-15.1f  %.1f\n", field(l, "node").c_str(),
                field(l, "received").c_str(), field(l, "digest").c_str(),
                std::stod(field(l, "samples_per_s")), std::stod(field(l, "p50_us")),
                std::stod(field(l, "p99_us")));
    if (digest.empty()) digest = field(l, "digest");
    agree = agree && field(l, "digest") == digest && field(l, "all_agree") == "1";
  }
  std::cout << "\n"
            << (agree ? "OK: every subscriber saw the same " + std::to_string(samples * kWriters) +
                            " samples in the same order"
                      : "FAILED: the members did not agree (see above)")
            << std::endl;
  return agree ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t samples = 20000;
  std::string transport = "tcp";
  bool is_member = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--member") {
      is_member = true;
    } else if (a == "--samples" && i + 1 < argc) {
      samples = std::stoull(argv[++i]);
    } else if (a == "--transport" && i + 1 < argc) {
      transport = argv[++i];
    } else {
      std::cerr << "usage: spindle-demo [--samples N] [--transport tcp|shm]\n";
      return 2;
    }
  }
  try {
    return is_member ? member(samples) : parent(samples, transport);
  } catch (const dds::core::Exception& e) {
    std::cout << "FAIL " << e.what() << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cout << "FAIL " << e.what() << std::endl;
    return 1;
  }
}
