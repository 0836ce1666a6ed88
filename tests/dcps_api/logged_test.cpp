// DCPS behaviour: the `logged` level (docs/storage.md). A writer that offers PERSISTENT
// durability (or consistency LOGGED) appends every sample to its topic's durable log at each
// member before readers get it; a participant that restarts with its node id recovers the
// log and hands the history to late readers; a log that cannot be written (the file size
// limit, as on a full disk) gives the writer an OutOfResourcesError while the participant
// goes on with its other topics; a damaged record costs its samples (SAMPLE_LOST), not the
// log nor the live stream; a log copied in from another node's home is not replayed. Public API
// only (plus setenv, fork and setrlimit).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>

#include "api_fixture.hpp"
#include "die_with_parent.hpp"
#include "scoped_config.hpp"
#include "temp_dir.hpp"

namespace dcps_api {
namespace {

using spindle::testing::ScopedDomainConfig;
namespace fs = std::filesystem;

using spindle::testing::TempDir;

dds::pub::qos::DataWriterQos logged_writer() {
  auto q = writer_qos();
  policy::DurabilityService ds;
  ds.history_kind(policy::HistoryKind::KEEP_LAST).history_depth(3);
  q << policy::Durability::Persistent() << ds;
  return q;
}

dds::sub::qos::DataReaderQos logged_reader() {
  auto q = reader_qos(policy::History::KeepAll());
  q << policy::Durability::Persistent();
  return q;
}

std::vector<std::pair<std::uint32_t, std::uint64_t>> sorted_take(Reader& r) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out;
  for (const auto& s : r.take())
    if (s.info().valid()) out.emplace_back(s.data().aircraft_id(), s.data().timestamp_ns());
  std::sort(out.begin(), out.end());
  return out;
}

// The settings of a node that keeps its id across restarts, with its logs in `dir`.
std::string node_settings(const fs::path& dir) {
  return "node: {id: 4242}, storage: {log_dir: '" + dir.string() + "'}";
}

TEST_CASE("logged samples survive a restart of their member", "[logged]") {
  TempDir logs;
  const ScopedDomainConfig config(node_settings(logs.path()));
  {
    Participant p;
    auto w = p.writer(logged_writer());
    for (std::uint64_t i = 1; i <= 5; ++i)
      for (std::uint32_t a = 1; a <= 2; ++a)
        w.write(flight(a, 10 * a + i));
    flush(w);
    // A reader that was there sees the samples: they were appended first.
    auto r = p.reader(logged_reader());
    r.wait_for_historical_data(dds::core::Duration::from_secs(10));
    CHECK(sorted_take(r).size() == 6);
  }
  // The log is where the domain file says, one directory per topic.
  const auto dir = logs.path() / "domain-0" / "node-4242" / "FlightState";
  REQUIRE(fs::is_directory(dir));
  CHECK(std::any_of(fs::directory_iterator(dir), fs::directory_iterator(),
                    [](const fs::directory_entry& e) { return e.path().extension() == ".seg"; }));

  // The same node again: its log is recovered, and a late reader gets the last 3 of each
  // instance, though no writer of them lives.
  Participant again;
  auto r = again.reader(logged_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  CHECK(sorted_take(r) == std::vector<std::pair<std::uint32_t, std::uint64_t>>{
                              {1, 13}, {1, 14}, {1, 15}, {2, 23}, {2, 24}, {2, 25}});
}

TEST_CASE("a torn log tail is cut and the rest recovered", "[logged]") {
  TempDir logs;
  const ScopedDomainConfig config(node_settings(logs.path()));
  {
    Participant p;
    auto w = p.writer(logged_writer());
    for (std::uint64_t i = 1; i <= 4; ++i)
      w.write(flight(1, i));
    flush(w);
  }
  // A crash in the middle of an append: the last record loses its end.
  const auto dir = logs.path() / "domain-0" / "node-4242" / "FlightState";
  fs::path segment;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".seg") segment = e.path();
  REQUIRE(!segment.empty());
  fs::resize_file(segment, fs::file_size(segment) - 20);

  Participant again;
  auto r = again.reader(logged_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  // The torn record was the last one: the dispose and unregister the writer sent as it
  // closed (then samples 2, 3, 4 remain), or, if those never reached the log, sample 4.
  const auto got = sorted_take(r);
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> lifecycle_torn{{1, 2}, {1, 3}, {1, 4}};
  const std::vector<std::pair<std::uint32_t, std::uint64_t>> sample_torn{{1, 1}, {1, 2}, {1, 3}};
  CHECK((got == lifecycle_torn || got == sample_torn));
}

namespace {

// The only segment of the topic's log of node 4242 under `logs`.
fs::path only_segment(const fs::path& logs) {
  const auto dir = logs / "domain-0" / "node-4242" / "FlightState";
  fs::path segment;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".seg") segment = e.path();
  return segment;
}

dds::pub::qos::DataWriterQos keep_all_logged_writer() {
  auto q = logged_writer();
  policy::DurabilityService ds;
  ds.history_kind(policy::HistoryKind::KEEP_ALL)
      .max_samples(100'000)
      .max_samples_per_instance(100'000);
  q << ds;
  return q;
}

dds::sub::qos::DataReaderQos unlimited_logged_reader() {
  auto q = logged_reader();
  q << policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED,
                              dds::core::LENGTH_UNLIMITED);
  return q;
}

std::set<std::uint64_t> take_seqs(Reader& r) {
  std::set<std::uint64_t> out;
  for (const auto& s : r.take())
    if (s.info().valid()) out.insert(s.data().timestamp_ns());
  return out;
}

}  // namespace

TEST_CASE("a damaged log record costs its samples, not the log", "[logged]") {
  // The case: 63 bytes overwritten at 90 % of a segment, then the member restarts.
  TempDir logs;
  const ScopedDomainConfig config(node_settings(logs.path()));
  constexpr std::uint64_t n = 3000;
  {
    Participant p;
    auto w = p.writer(keep_all_logged_writer());
    for (std::uint64_t i = 1; i <= n; ++i)
      w.write(flight(1, i));
    flush(w);
  }
  const auto segment = only_segment(logs.path());
  REQUIRE(!segment.empty());
  {
    std::fstream f(segment, std::ios::in | std::ios::out | std::ios::binary);
    const auto size = static_cast<std::streamoff>(fs::file_size(segment));
    f.seekp(size * 9 / 10);
    const std::string garbage(63, '\x5a');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }

  Participant again;
  auto r = again.reader(unlimited_logged_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(20));
  const auto history = take_seqs(r);
  // Every intact record before and after the damage: the first samples, the latest ones, and
  // one gap where the damage was.
  REQUIRE(!history.empty());
  CHECK(*history.begin() == 1);
  CHECK(*history.rbegin() == n);
  const std::uint64_t missing = n - history.size();
  CHECK(missing >= 1);
  CHECK(missing <= 3);  // 63 bytes touch at most three records of ~100 bytes
  std::uint64_t gaps = 0;
  for (auto it = history.begin(); std::next(it) != history.end(); ++it)
    gaps += *std::next(it) != *it + 1 ? 1U : 0U;
  CHECK(gaps == 1);
  // The reader is told what it lost.
  CHECK(r.sample_lost_status().total_count() == static_cast<std::int32_t>(missing));

  // The topic keeps its log and its live stream: a writer now reaches the reader in full.
  auto w = again.writer(keep_all_logged_writer());
  wait_matched(w, r);
  constexpr std::uint64_t live = 500;
  for (std::uint64_t i = 1; i <= live; ++i)
    w.write(flight(1, n + i));
  flush(w);
  std::set<std::uint64_t> got;
  CHECK(eventually(
      [&] {
        for (const auto s : take_seqs(r))
          got.insert(s);
        return got.size() == live;
      },
      10'000ms));
  CHECK(got.size() == live);
  // A late reader after the restart gets the same history, the live samples, and the same
  // SAMPLE_LOST.
  auto late = again.reader(unlimited_logged_reader());
  late.wait_for_historical_data(dds::core::Duration::from_secs(20));
  CHECK(take_seqs(late).size() == history.size() + live);
  CHECK(late.sample_lost_status().total_count() == static_cast<std::int32_t>(missing));
}

TEST_CASE("a log copied from another node's home is refused", "[logged]") {
  TempDir logs;
  {
    const ScopedDomainConfig config(node_settings(logs.path()));
    Participant p;
    auto w = p.writer(logged_writer());
    for (std::uint64_t i = 1; i <= 5; ++i)
      w.write(flight(1, i));
    flush(w);
  }
  // Node 4343 finds node 4242's log in its home: not its own, so not replayed.
  const auto from = logs.path() / "domain-0" / "node-4242" / "FlightState";
  const auto into = logs.path() / "domain-0" / "node-4343" / "FlightState";
  fs::create_directories(into.parent_path());
  fs::copy(from, into, fs::copy_options::recursive);
  fs::remove(into / "LOCK");
  const ScopedDomainConfig config("node: {id: 4343}, storage: {log_dir: '" + logs.path().string() +
                                  "'}");
  Participant other;
  auto r = other.reader(logged_reader());
  r.wait_for_historical_data(dds::core::Duration::from_secs(10));
  CHECK(take_seqs(r).empty());
  // Set aside whole, and the topic has a log of its own: its live stream is delivered.
  CHECK(fs::is_directory(into.string() + ".foreign"));
  auto w = other.writer(logged_writer());
  wait_matched(w, r);
  for (std::uint64_t i = 1; i <= 3; ++i)
    w.write(flight(1, 100 + i));
  flush(w);
  std::set<std::uint64_t> got;
  CHECK(eventually([&] {
    for (const auto s : take_seqs(r))
      got.insert(s);
    return got.size() == 3;
  }));
}

TEST_CASE("SIGKILL mid-stream loses nothing a reader delivered", "[logged]") {
  TempDir logs;
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
    // The child writes and reads a logged topic (fsync before each delivery) and tells the
    // parent every sample its reader delivered, until it is killed.
    ::close(pipe_fds[0]);
    try {
      const ScopedDomainConfig config(node_settings(logs.path()));
      Participant p;
      auto wq = logged_writer();
      policy::DurabilityService ds;
      ds.history_kind(policy::HistoryKind::KEEP_ALL)
          .max_samples(100'000)
          .max_samples_per_instance(100'000);
      wq << ds;
      auto r = p.reader(logged_reader());
      auto w = p.writer(wq);
      wait_matched(w, r);
      for (std::uint64_t i = 1; i < 1'000'000; ++i) {
        w.write(flight(1, i));
        for (const auto& s : r.take()) {
          if (!s.info().valid()) continue;
          const auto seq = s.data().timestamp_ns();
          if (::write(pipe_fds[1], &seq, sizeof seq) != sizeof seq) ::_exit(2);
        }
      }
    } catch (...) {
    }
    ::_exit(3);
  }
  ::close(pipe_fds[1]);
  // Kill it once its reader delivered a few hundred samples.
  std::vector<std::uint64_t> delivered;
  std::uint64_t seq = 0;
  while (delivered.size() < 300 && ::read(pipe_fds[0], &seq, sizeof seq) == sizeof seq)
    delivered.push_back(seq);
  ::kill(child, SIGKILL);
  while (::read(pipe_fds[0], &seq, sizeof seq) == sizeof seq)  // what it said before it died
    delivered.push_back(seq);
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(delivered.size() >= 300);

  // Its node again: every sample its reader delivered is in the recovered log.
  const ScopedDomainConfig config(node_settings(logs.path()));
  Participant again;
  auto rq = logged_reader();
  rq << policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED,
                               dds::core::LENGTH_UNLIMITED);
  auto r = again.reader(rq);
  r.wait_for_historical_data(dds::core::Duration::from_secs(20));
  std::set<std::uint64_t> recovered;
  for (const auto& s : r.take())
    if (s.info().valid()) recovered.insert(s.data().timestamp_ns());
  std::size_t missing = 0;
  for (auto d : delivered)
    missing += recovered.contains(d) ? 0U : 1U;
  INFO("delivered " << delivered.size() << ", recovered " << recovered.size());
  CHECK(missing == 0);
  CHECK(recovered.size() >= delivered.size());
}

TEST_CASE("a log that cannot grow fails its writer, not the participant", "[logged]") {
  TempDir logs;
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
    // The child: a file size limit stands for a full disk (EFBIG instead of a signal). It
    // bounds shared-memory segments too (they are files): over tcp only the log meets it.
    int code = 0;
    try {
      const ScopedDomainConfig config(node_settings(logs.path()) + ", transport: tcp");
      std::signal(SIGXFSZ, SIG_IGN);
      rlimit limit{};
      limit.rlim_cur = limit.rlim_max = 256 * 1024;
      ::setrlimit(RLIMIT_FSIZE, &limit);
      Participant p;
      auto w = p.writer(logged_writer());
      auto plain = p.writer(writer_qos());  // an atomic writer of the same participant
      bool failed = false;
      for (std::uint64_t i = 0; i < 100'000 && !failed; ++i) {
        try {
          w.write(flight(static_cast<std::uint32_t>(i % 50), i));
        } catch (const dds::core::OutOfResourcesError& e) {
          failed = std::string(e.what()).find("durable log") != std::string::npos;
          if (!failed) code = 3;
        }
      }
      if (!failed && code == 0) code = 4;
      // The participant goes on: another topic's writer still delivers.
      dds::topic::Topic<FlightState> other(p.dp, "Other");
      dds::pub::DataWriter<FlightState> ow(p.pub, other, writer_qos());
      dds::sub::DataReader<FlightState> orr(p.sub, other, reader_qos());
      if (!eventually([&] { return ow.publication_matched_status().current_count() == 1; }))
        code = code == 0 ? 5 : code;
      ow.write(flight(1, 1));
      if (!eventually([&] { return orr.read().length() == 1; })) code = code == 0 ? 6 : code;
      (void)plain;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 7;
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  // 3: another error than the log's; 4: no error at all; 5, 6: the other topic stopped;
  // 7: the participant failed.
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace dcps_api
