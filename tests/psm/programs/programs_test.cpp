// The porting programs (docs/porting.md) across processes: each pair — hello publisher and
// subscriber, ping and pong, throughput writer and reader — runs as two processes of one
// domain over tcp and over shm (SPINDLE_CONFIG names the transport, the join port is the
// test's own), and must exit 0; the best-effort check stops its reader process with SIGSTOP
// and drives the writer, then continues it: what the best-effort writer dropped meanwhile
// counts as lost at its reader. The programs' figures (round-trip median, samples/s) go to
// stdout.
// Every wait is bounded.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "process.hpp"
#include "scoped_config.hpp"
#include "transports.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string program(const std::string& name) {
  return tst::self_dir() + "/psm_program_" + name;
}

// The shared-memory namespace of this run over `transport`.
std::string shm_namespace(const std::string& transport) {
  return "porting-" + std::to_string(::getpid()) + "-" + transport;
}

// SPINDLE_CONFIG for one run: the transport, a shared-memory namespace of this run, and
// `engine` settings if any.
tst::ScopedDomainConfig domain(const std::string& transport, const std::string& engine = "") {
  std::string settings =
      "transport: " + transport + ", shm: {namespace: " + shm_namespace(transport) + "}";
  if (!engine.empty()) settings += ", engine: {" + engine + "}";
  return tst::ScopedDomainConfig(settings);
}

// Every line `p` prints until it closes its output (or `deadline`), each echoed to our
// stdout under `tag`, and its exit status.
struct Outcome {
  std::vector<std::string> lines;
  int status = -1;
};
Outcome finish(tst::Process& p, const std::string& tag, tst::Deadline deadline) {
  Outcome o;
  while (auto line = p.read_line(deadline)) {
    std::cout << "  [" << tag << "] " << *line << std::endl;
    o.lines.push_back(*line);
  }
  o.status = p.wait(deadline);
  return o;
}

// Two programs of one pair: `first` starts first (the side that waits), `second` after it;
// both must exit 0 and print a line starting with their `expect` word.
void run_pair(const std::string& name, const std::vector<std::string>& first,
              const std::vector<std::string>& second, const std::string& first_expect,
              const std::string& second_expect, std::chrono::seconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  std::vector<std::string> a{program(name)};
  a.insert(a.end(), first.begin(), first.end());
  std::vector<std::string> b{program(name)};
  b.insert(b.end(), second.begin(), second.end());
  tst::Process pa(a);
  tst::Process pb(b);
  // The second side ends first in every pair (it waits for acknowledgments, the first only
  // for what it receives): read it first so that a failure of either shows.
  const auto ob = finish(pb, second[0], deadline);
  const auto oa = finish(pa, first[0], deadline);
  const auto has = [](const Outcome& o, const std::string& word) {
    for (const auto& l : o.lines)
      if (l.rfind(word, 0) == 0) return true;
    return false;
  };
  CHECK(oa.status == 0);
  CHECK(ob.status == 0);
  CHECK(has(oa, first_expect));
  CHECK(has(ob, second_expect));
}

void hello(const std::string& transport) {
  const auto config = domain(transport);
  std::cout << "hello over " << transport << std::endl;
  run_pair("hello", {"subscriber"}, {"publisher"}, "received Hello World", "published Hello World");
}

void pingpong(const std::string& transport) {
  const auto config = domain(transport);
  std::cout << "ping-pong over " << transport << std::endl;
  run_pair("pingpong", {"pong"}, {"ping", "200"}, "echoed 210", "round trips 200");
}

void throughput(const std::string& transport) {
  const auto config = domain(transport);
  std::cout << "throughput over " << transport << std::endl;
  run_pair("throughput", {"reader"}, {"writer", "1.5", "64"}, "received", "wrote");
}

// The reader process is stopped once matched, so it never takes or acknowledges anything.
// The suspicion timeout is raised well above the test's writes (default 1 s) so that the
// stopped member stays in the view throughout: a writer that waited for it would show.
void best_effort(const std::string& transport) {
  const auto config = domain(transport, "suspicion_timeout: 20s");
  std::cout << "best effort over " << transport << std::endl;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  // The writer first: it founds the domain and stays in it when the reader is killed.
  tst::Process writer({program("best_effort"), "writer"});
  REQUIRE(writer.read_line(deadline) == std::optional<std::string>("joined"));
  tst::Process reader({program("best_effort"), "reader"});
  REQUIRE(reader.read_line(deadline) == std::optional<std::string>("ready"));
  REQUIRE(writer.read_line(deadline) == std::optional<std::string>("matched"));
  REQUIRE(::kill(reader.pid(), SIGSTOP) == 0);
  writer.send("go");
  const auto best = writer.read_line(deadline);
  std::cout << "  [writer] " << best.value_or("(nothing)") << std::endl;
  const auto reliable = writer.read_line(deadline);
  std::cout << "  [writer] " << reliable.value_or("(nothing)") << std::endl;
  CHECK(best.value_or("").rfind("best_effort 20000 samples in", 0) == 0);
  CHECK(reliable.value_or("").rfind("reliable timeout after", 0) == 0);
  // The reader runs again; one more best-effort sample shows it where the stream went on.
  // Its process listened (a best-effort reader holds no one, docs/dev/smc.md "Listeners"): the
  // writer never waited for it and wrote past it, so it takes what was left in its ring
  // and the last sample, and counts as lost (SAMPLE_LOST) what the writer sent and it
  // missed. What the writer dropped itself (its ring full for a moment: it writes 20,000
  // samples in a few milliseconds) before the first sample this reader took carries no
  // number the reader can see: received + lost is at most 20,001, and how much of it the
  // reader can count depends on how the two processes were scheduled (on a loaded machine
  // as little as a third) — but what it counts lost outweighs what it took.
  REQUIRE(::kill(reader.pid(), SIGCONT) == 0);
  writer.send("last");
  reader.send("report");
  const auto report = reader.read_line(deadline);
  std::cout << "  [reader] " << report.value_or("(nothing)") << std::endl;
  std::uint64_t received = 0;
  std::uint64_t lost = 0;
  REQUIRE(std::sscanf(report.value_or("").c_str(), "best_effort received %lu lost %lu", &received,
                      &lost) == 2);
  CHECK(lost > 0);
  CHECK(received + lost <= 20001);
  if (transport == "shm") {
    // Over shm the writer's slots are rewritten in place while the reader is stopped: it
    // finds the ring as the writer left it, and most of the stream went by.
    CHECK(received < 20001 / 2);
    CHECK(lost > received);
  }
  // Over tcp the frames sent to the stopped process wait in its kernel's socket buffers (a
  // few MiB: the whole stream here), and once it runs its protocol thread reads them in
  // chunks and delivers between chunks (docs/transport-tcp.md, "Who reads a stream"): how
  // many ring states it sees depends on scheduling (10,535 of 20,001 once on two busy
  // cores). That the writer was never held is the 20,000 writes above, done while the
  // reader was stopped.
  const auto writer_done = finish(writer, "writer", deadline);
  CHECK(writer_done.status == 0);
  CHECK(reader.wait(deadline) == 0);
  // The killed reader left nothing named in /dev/shm (its segments were memfds).
  const std::string prefix = shm_namespace(transport) + ".";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev/shm", ec))
    CHECK(entry.path().filename().string().rfind(prefix, 0) != 0);
}

}  // namespace

TEST_CASE("hello world: a publisher process and a subscriber process over tcp", "[hello][tcp]") {
  hello("tcp");
}
TEST_CASE("hello world: a publisher process and a subscriber process over shm", "[hello][shm]") {
  hello("shm");
}
TEST_CASE("ping-pong: 200 round trips, every reply in order, over tcp", "[pingpong][tcp]") {
  pingpong("tcp");
}
TEST_CASE("ping-pong: 200 round trips, every reply in order, over shm", "[pingpong][shm]") {
  pingpong("shm");
}
TEST_CASE("throughput: a reliable KEEP_ALL stream, nothing lost or reordered, over tcp",
          "[throughput][tcp]") {
  throughput("tcp");
}
TEST_CASE("throughput: a reliable KEEP_ALL stream, nothing lost or reordered, over shm",
          "[throughput][shm]") {
  throughput("shm");
}
TEST_CASE(
    "best effort: a writer never blocks on a stopped reader process, a reliable one times out",
    "[best_effort]") {
  for (const auto& transport : tst::available_transports()) {
    INFO("transport " << transport);
    best_effort(transport);
  }
}
