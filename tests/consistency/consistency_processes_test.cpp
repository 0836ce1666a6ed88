// The consistency guarantees as a user meets them (issue 31): consistency_node processes of
// one domain on loopback, with no domain file (SPINDLE_CONFIG names only the transport, a
// shared-memory namespace of this run and the test's own join port), over tcp and shm:
//
//   order      two writers (instances 1 and 2) and two readers of a keyed topic, both sides
//              asking for order with Presentation TOPIC scope + ordered_access: both readers'
//              take() sequences are identical, across instances, and complete.
//   survivor   a publisher and its only subscriber: the subscriber is SIGKILLed; the
//              publisher goes on writing (a dead process on this host is no partition), and a
//              new subscriber joins it and receives.
//   rejoin     a publisher and two subscribers; one subscriber is stopped (SIGSTOP) past
//              the suspicion timeout, left behind, removed, continued: it halts, rejoins by
//              itself, takes the stream again and counts what went by as SAMPLE_LOST.
//   coherent   a writer of coherent sets (TOPIC scope) and two readers with coherent and
//              ordered access; the writer is SIGKILLed in the middle of a set: both readers
//              took the same sequence of whole sets, and nothing of the set left open.
//   group      a GROUP-scope publisher (coherent, ordered) writes two topics in sets of six
//              alternating between them; two readers read inside begin/end_access in the
//              order dds::sub::find lists the readers: both read the publisher's sequence
//              across the two topics, each set within one access.
//   first      a reader process, then a writer process that writes at once after creating
//              its writer (no wait for the match): the sample arrives.
//   persistent a process writes 3 instances with PERSISTENT durability and exits; a later
//              process's PERSISTENT reader gets all 3 with no domain file (it adopts the
//              exited process's logs), and so does a reader that joins it (state transfer).
//   client_order   the order check with one reader an external client (role: client) whose
//              relay is the other reader's process: both take() the same sequence.
//   client_faults  a publisher that relays for a client subscriber, and a member subscriber:
//              the client is stopped past the suspicion timeout, then continued, then killed;
//              the publisher never waits on it (its longest write stays short), the member
//              subscriber loses nothing, the client takes on after its pause, and a new client
//              is served after the crash.
//   client_failover  a client subscriber with two relays in its list, each a member
//              subscriber: its relay is killed; it connects through the other and takes the
//              stream on, in order, counting what went by in SAMPLE_LOST.
//   client_join_port  a client with no relay named: the leader relays for it through the join
//              port; the leader is killed, and the client goes on through the next leader.
//   refresh    a TRANSIENT_LOCAL publisher (a retained topic) and two subscribers; one is
//              stopped for 0.6 s (past the lag bound, under the suspicion timeout): the
//              publisher's longest write stays short (nobody holds it), both take the last
//              sample, and a late reader in each process then takes the whole history, in
//              order: the stopped one's member got what it missed (docs/storage.md, "Refresh").
//   rejoin_history the refresh scenario with the subscriber stopped 1.5 s, past the suspicion
//              timeout: it is removed and rejoins by itself, and its late reader still takes
//              the whole history (its member keeps the writer's messages again after the
//              rejoin's state transfer).
//   repair     a RELIABLE KEEP_LAST 1 publisher of 40 instances and two such subscribers;
//              one is stopped (past the lag bound, under the suspicion timeout) while every
//              instance is written four times and then instance 1 alone 200 times, so its ring
//              keeps none of the others' latest: once it runs again, with nothing more written,
//              read() shows every instance's latest there too (docs/dcps.md, "Repair").
//   client_repair  the same with the publisher an external client relayed by the steady
//              subscriber's process: the client keeps its writer's changes and answers the
//              repair request through its relay.
//   client_refresh the refresh scenario with the stopped subscriber relaying for a client
//              subscriber: the relay's history is refreshed, the client connects again, and
//              a late reader in each of the three takes the whole history.
//
// Every wait is bounded.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "process.hpp"
#include "scoped_config.hpp"
#include "temp_dir.hpp"
#include "transports.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string node() {
  return tst::self_dir() + "/consistency_node";
}

std::string shm_namespace(const std::string& transport) {
  return "consistency-" + std::to_string(::getpid()) + "-" + transport;
}

// SPINDLE_CONFIG for one run: the transport and a shared-memory namespace of this run.
tst::ScopedDomainConfig domain(const std::string& transport, const std::string& more = "") {
  return tst::ScopedDomainConfig("transport: " + transport +
                                 ", shm: {namespace: " + shm_namespace(transport) + "}" + more);
}

// Nothing of the run is named in /dev/shm, killed processes included (segments are memfds).
void check_nothing_left(const std::string& transport) {
  const std::string prefix = shm_namespace(transport) + ".";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev/shm", ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) FAIL("left: " << entry.path());
}

// The next line of `p` that does not start with "got"/"wrote" progress (echoed), or nullopt.
std::optional<std::string> line_of(tst::Process& p, const std::string& tag,
                                   tst::Deadline deadline) {
  auto line = p.read_line(deadline);
  if (line) std::cout << "  [" << tag << "] " << *line << std::endl;
  return line;
}

// Reads lines of `p` until one starts with `word`; false at EOF or deadline.
bool expect(tst::Process& p, const std::string& tag, const std::string& word,
            tst::Deadline deadline) {
  while (auto line = line_of(p, tag, deadline))
    if (line->rfind(word, 0) == 0) return true;
  return false;
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void order(const std::string& transport) {
  const auto config = domain(transport);
  const tst::TempDir dir("spindle-order");
  constexpr std::uint64_t kPerWriter = 3000;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  const auto log_a = (dir.path() / "reader-a.log").string();
  const auto log_b = (dir.path() / "reader-b.log").string();
  const std::string total = std::to_string(2 * kPerWriter);
  tst::Process reader_a({node(), "ordered-reader", total, log_a});
  REQUIRE(expect(reader_a, "reader a", "ready", deadline));
  tst::Process reader_b({node(), "ordered-reader", total, log_b});
  REQUIRE(expect(reader_b, "reader b", "ready", deadline));
  tst::Process writer_1({node(), "ordered-writer", "1", std::to_string(kPerWriter), "2"});
  tst::Process writer_2({node(), "ordered-writer", "2", std::to_string(kPerWriter), "2"});
  CHECK(expect(writer_1, "writer 1", "wrote", deadline));
  CHECK(expect(writer_2, "writer 2", "wrote", deadline));
  CHECK(expect(reader_a, "reader a", "done " + total, deadline));
  CHECK(expect(reader_b, "reader b", "done " + total, deadline));
  CHECK(writer_1.wait(deadline) == 0);
  CHECK(writer_2.wait(deadline) == 0);
  CHECK(reader_a.wait(deadline) == 0);
  CHECK(reader_b.wait(deadline) == 0);

  const std::string a = slurp(log_a);
  const std::string b = slurp(log_b);
  // Complete and per-writer in order at each reader ...
  for (const auto* log : {&a, &b}) {
    std::istringstream in(*log);
    std::uint64_t next[3] = {0, 0, 0};
    std::uint32_t source = 0;
    std::uint64_t seq = 0;
    std::uint64_t n = 0;
    bool interleaved = false;
    std::uint32_t last = 0;
    while (in >> source >> seq) {
      REQUIRE((source == 1 || source == 2));
      REQUIRE(seq == next[source]);
      ++next[source];
      interleaved = interleaved || (last != 0 && last != source);
      last = source;
      ++n;
    }
    CHECK(n == 2 * kPerWriter);
    // The writers ran at once: a reader grouping by instance would show one switch only.
    INFO("samples from both writers are interleaved in take() order");
    CHECK(interleaved);
  }
  // ... and the same sequence at both.
  CHECK(a == b);
}

// SPINDLE_CONFIG for an external client relayed by the member on `port`.
tst::ScopedDomainConfig client_of(std::uint16_t port) {
  return tst::ScopedDomainConfig(
      "role: client, relays: [{host: 127.0.0.1, port: " + std::to_string(port) + "}]");
}

// A process of `argv` whose SPINDLE_CONFIG is `settings` (in scope while it starts).
std::unique_ptr<tst::Process> spawn(const std::vector<std::string>& argv,
                                    const tst::ScopedDomainConfig& /*settings*/) {
  return std::make_unique<tst::Process>(argv);
}

void client_order(const std::string& transport) {
  const tst::TempDir dir("spindle-client-order");
  constexpr std::uint64_t kPerWriter = 2000;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  const auto log_a = (dir.path() / "member.log").string();
  const auto log_b = (dir.path() / "client.log").string();
  const std::string total = std::to_string(2 * kPerWriter);
  const auto port = tst::free_loopback_port();
  std::unique_ptr<tst::Process> member;
  std::unique_ptr<tst::Process> client;
  {
    const auto config = domain(transport, ", client_port: " + std::to_string(port));
    member = std::make_unique<tst::Process>(
        std::vector<std::string>{node(), "ordered-reader", total, log_a});
  }
  REQUIRE(expect(*member, "member reader", "ready", deadline));
  {
    const auto config = client_of(port);
    client = std::make_unique<tst::Process>(
        std::vector<std::string>{node(), "ordered-reader", total, log_b});
  }
  REQUIRE(expect(*client, "client reader", "ready", deadline));
  const auto config = domain(transport);
  tst::Process writer_1({node(), "ordered-writer", "1", std::to_string(kPerWriter), "2"});
  tst::Process writer_2({node(), "ordered-writer", "2", std::to_string(kPerWriter), "2"});
  CHECK(expect(writer_1, "writer 1", "wrote", deadline));
  CHECK(expect(writer_2, "writer 2", "wrote", deadline));
  CHECK(expect(*client, "client reader", "done " + total, deadline));
  CHECK(expect(*member, "member reader", "done " + total, deadline));
  CHECK(client->wait(deadline) == 0);
  CHECK(member->wait(deadline) == 0);
  CHECK(writer_1.wait(deadline) == 0);
  CHECK(writer_2.wait(deadline) == 0);
  const std::string a = slurp(log_a);
  const std::string b = slurp(log_b);
  CHECK(std::count(b.begin(), b.end(), '\n') == 2 * kPerWriter);
  CHECK(a == b);  // the client took the members' total order
  check_nothing_left(transport);
}

void client_faults(const std::string& transport) {
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  const auto port = tst::free_loopback_port();
  std::unique_ptr<tst::Process> publisher;
  {
    const auto config = domain(transport, ", client_port: " + std::to_string(port));
    publisher =
        std::make_unique<tst::Process>(std::vector<std::string>{node(), "stream-publisher", "7"});
  }
  REQUIRE(expect(*publisher, "publisher", "started", deadline));
  std::unique_ptr<tst::Process> steady;
  {
    const auto config = domain(transport);
    steady = std::make_unique<tst::Process>(
        std::vector<std::string>{node(), "stream-subscriber", "1000000"});
  }
  REQUIRE(expect(*steady, "member subscriber", "got", deadline));
  {
    const auto config = client_of(port);
    tst::Process paused({node(), "stream-subscriber", "1000000"});
    REQUIRE(expect(paused, "client subscriber", "got", deadline));
    // Stopped past the suspicion timeout (1 s): a member would be removed; a client is not
    // even waited for.
    REQUIRE(::kill(paused.pid(), SIGSTOP) == 0);
    std::this_thread::sleep_for(1500ms);
    REQUIRE(::kill(paused.pid(), SIGCONT) == 0);
    for (int i = 0; i < 3; ++i) {
      const auto line = line_of(paused, "client subscriber", deadline);
      REQUIRE(line.has_value());
      REQUIRE(line->rfind("FAIL", 0) != 0);
    }
    CHECK(expect(paused, "client subscriber", "got", deadline));
    // Then it crashes: the member goes on, the publisher too.
    REQUIRE(::kill(paused.pid(), SIGKILL) == 0);
    CHECK(paused.wait(deadline) == 128 + SIGKILL);
  }
  {
    const auto config = client_of(port);
    tst::Process next({node(), "stream-subscriber", "50"});
    CHECK(expect(next, "next client", "done", deadline));
    CHECK(next.wait(deadline) == 0);
  }
  std::optional<std::string> finished;
  while (auto line = line_of(*publisher, "publisher", deadline)) {
    REQUIRE(line->rfind("error", 0) != 0);
    if (line->rfind("finished", 0) == 0) {
      finished = line;
      break;
    }
  }
  REQUIRE(finished.has_value());
  std::uint64_t wrote = 0;
  double longest_ms = 0;
  REQUIRE(std::sscanf(finished->c_str(), "finished %lu (longest write %lf ms)", &wrote,
                      &longest_ms) == 2);
  INFO("the publisher's longest write took " << longest_ms << " ms");
  CHECK(longest_ms < 500);  // it never waited out the client's 1.5 s pause
  CHECK(publisher->wait(deadline) == 0);
  // The member subscriber lost nothing: no SAMPLE_LOST line, in order throughout.
  ::kill(steady->pid(), SIGTERM);
  while (auto line = line_of(*steady, "member subscriber", std::chrono::steady_clock::now() + 2s)) {
    CHECK(line->rfind("lost", 0) != 0);
    CHECK(line->rfind("FAIL", 0) != 0);
  }
  (void)steady->wait(deadline);
  check_nothing_left(transport);
}

// A stream-subscriber client after its relay went: ten more progress lines, none a failure
// (the subscriber fails on a sample out of order or taken twice).
void takes_on(tst::Process& client, tst::Deadline deadline) {
  std::uint64_t got_lines = 0;
  while (got_lines < 10) {
    const auto line = line_of(client, "client", deadline);
    REQUIRE(line.has_value());
    REQUIRE(line->rfind("FAIL", 0) != 0);
    if (line->rfind("got", 0) == 0) ++got_lines;
  }
}

void client_failover(const std::string& transport) {
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  const auto config = domain(transport);
  tst::Process publisher({node(), "stream-publisher", "8"});
  REQUIRE(expect(publisher, "publisher", "started", deadline));
  const std::uint16_t ports[2] = {tst::free_loopback_port(), tst::free_loopback_port()};
  std::vector<std::unique_ptr<tst::Process>> relays;
  for (const auto port : ports) {
    const auto relay_config = domain(transport, ", client_port: " + std::to_string(port));
    relays.push_back(std::make_unique<tst::Process>(
        std::vector<std::string>{node(), "stream-subscriber", "1000000"}));
    REQUIRE(expect(*relays.back(), "relay", "got", deadline));
  }
  std::unique_ptr<tst::Process> client;
  {
    const tst::ScopedDomainConfig client_config(
        "role: client, relays: [{host: 127.0.0.1, port: " + std::to_string(ports[0]) +
        "}, {host: 127.0.0.1, port: " + std::to_string(ports[1]) + "}]");
    client = std::make_unique<tst::Process>(
        std::vector<std::string>{node(), "stream-subscriber", "1000000"});
  }
  REQUIRE(expect(*client, "client", "got", deadline));
  REQUIRE(::kill(relays[0]->pid(), SIGKILL) == 0);
  CHECK(relays[0]->wait(deadline) == 128 + SIGKILL);
  // It takes the stream on through the other relay.
  takes_on(*client, deadline);
  CHECK(expect(publisher, "publisher", "finished", deadline));
  CHECK(publisher.wait(deadline) == 0);
  ::kill(client->pid(), SIGTERM);
  ::kill(relays[1]->pid(), SIGTERM);
  (void)client->wait(deadline);
  (void)relays[1]->wait(deadline);
  check_nothing_left(transport);
}

void client_join_port(const std::string& transport) {
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  const auto config = domain(transport);
  // The first member leads (it holds the join port); the publisher leads after it.
  tst::Process leader({node(), "stream-subscriber", "1000000"});
  REQUIRE(expect(leader, "leader", "ready", deadline));
  tst::Process publisher({node(), "stream-publisher", "8"});
  REQUIRE(expect(publisher, "publisher", "started", deadline));
  std::unique_ptr<tst::Process> client;
  {
    const tst::ScopedDomainConfig client_config("role: client");
    client = std::make_unique<tst::Process>(
        std::vector<std::string>{node(), "stream-subscriber", "1000000"});
  }
  REQUIRE(expect(*client, "client", "got", deadline));
  REQUIRE(::kill(leader.pid(), SIGKILL) == 0);
  CHECK(leader.wait(deadline) == 128 + SIGKILL);
  takes_on(*client, deadline);
  CHECK(expect(publisher, "publisher", "finished", deadline));
  CHECK(publisher.wait(deadline) == 0);
  ::kill(client->pid(), SIGTERM);
  (void)client->wait(deadline);
  check_nothing_left(transport);
}

void survivor(const std::string& transport) {
  const auto config = domain(transport);
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  tst::Process publisher({node(), "stream-publisher", "5"});
  REQUIRE(expect(publisher, "publisher", "started", deadline));
  {
    tst::Process first({node(), "stream-subscriber", "1000000"});
    REQUIRE(expect(first, "subscriber 1", "got", deadline));
    REQUIRE(::kill(first.pid(), SIGKILL) == 0);
    CHECK(first.wait(deadline) == 128 + SIGKILL);
  }
  // Past detection and the view change, the publisher still writes: what it printed so far
  // is drained (no error among it), then fresh progress lines must follow.
  std::this_thread::sleep_for(2s);
  while (auto line = line_of(publisher, "publisher", std::chrono::steady_clock::now() + 150ms))
    REQUIRE(line->rfind("error", 0) != 0);
  for (int i = 0; i < 4; ++i) {
    const auto line = line_of(publisher, "publisher", deadline);
    REQUIRE(line.has_value());
    REQUIRE(line->rfind("wrote", 0) == 0);
  }
  tst::Process second({node(), "stream-subscriber", "50"});
  CHECK(expect(second, "subscriber 2", "done", deadline));
  CHECK(second.wait(deadline) == 0);
  CHECK(expect(publisher, "publisher", "finished", deadline));
  CHECK(publisher.wait(deadline) == 0);
  check_nothing_left(transport);
}

void rejoin(const std::string& transport) {
  const auto config = domain(transport);
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  tst::Process publisher({node(), "stream-publisher", "8"});
  REQUIRE(expect(publisher, "publisher", "started", deadline));
  tst::Process steady({node(), "stream-subscriber", "1000000"});
  REQUIRE(expect(steady, "subscriber 1", "got", deadline));
  tst::Process paused({node(), "stream-subscriber", "1000000"});
  REQUIRE(expect(paused, "subscriber 2", "got", deadline));
  // Stopped for twice the suspicion timeout: the other two (a majority) remove it.
  REQUIRE(::kill(paused.pid(), SIGSTOP) == 0);
  std::this_thread::sleep_for(2500ms);
  REQUIRE(::kill(paused.pid(), SIGCONT) == 0);
  // It finds itself removed, halts, rejoins, and reports the gap, then takes on.
  std::optional<std::string> lost;
  while (auto line = line_of(paused, "subscriber 2", deadline)) {
    REQUIRE(line->rfind("FAIL", 0) != 0);
    if (line->rfind("lost ", 0) == 0) {
      lost = line;
      break;
    }
  }
  REQUIRE(lost.has_value());
  std::uint64_t count = 0;
  std::uint64_t got = 0;
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  REQUIRE(std::sscanf(lost->c_str(), "lost %lu got %lu first %lu last %lu", &count, &got, &first,
                      &last) == 4);
  CHECK(count > 0);
  // Every sample since its first is taken or counted lost. The count may run ahead of what
  // it took: a gap is counted when the sample after it is delivered, and that sample may be
  // taken only after the line is printed (left behind first, a KEEP_LAST writer's reader
  // catches up from its ring before it is removed: docs/dev/smc.md).
  CHECK(got + count >= last - first + 1);
  CHECK(expect(paused, "subscriber 2", "got", deadline));  // the stream goes on
  CHECK(expect(publisher, "publisher", "finished", deadline));
  CHECK(publisher.wait(deadline) == 0);
  ::kill(steady.pid(), SIGTERM);
  ::kill(paused.pid(), SIGTERM);
  (void)steady.wait(deadline);
  (void)paused.wait(deadline);
  check_nothing_left(transport);
}

// `stop`: 0.6 s leaves the subscriber behind (past the lag bound); 1.5 s, past the suspicion
// timeout, removes it, and it rejoins by itself (the state transfer brings the history, and
// its member keeps the writer's messages again from there: rejoin_history).
void refresh(const std::string& transport, std::chrono::milliseconds stop) {
  const auto config = domain(transport);
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  constexpr int kCount = 1500;
  tst::Process steady({node(), "kept-subscriber", std::to_string(kCount)});
  REQUIRE(expect(steady, "subscriber 1", "ready", deadline));
  tst::Process paused({node(), "kept-subscriber", std::to_string(kCount)});
  REQUIRE(expect(paused, "subscriber 2", "ready", deadline));
  tst::Process publisher({node(), "kept-publisher", std::to_string(kCount), "2"});
  REQUIRE(expect(publisher, "publisher", "matched", deadline));
  REQUIRE(expect(paused, "subscriber 2", "got", deadline));
  REQUIRE(::kill(paused.pid(), SIGSTOP) == 0);
  std::this_thread::sleep_for(stop);
  REQUIRE(::kill(paused.pid(), SIGCONT) == 0);
  std::optional<std::string> finished;
  while (auto line = line_of(publisher, "publisher", deadline)) {
    if (line->rfind("finished", 0) == 0) {
      finished = line;
      break;
    }
  }
  REQUIRE(finished.has_value());
  int written = 0;
  long longest = 0;
  REQUIRE(std::sscanf(finished->c_str(), "finished %d longest %ld", &written, &longest) == 2);
  CHECK(written == kCount);
  CHECK(longest < 400);  // the stopped member was left behind, not waited for
  REQUIRE(expect(steady, "subscriber 1", "done", deadline));
  REQUIRE(expect(paused, "subscriber 2", "done", deadline));
  // The stopped member asks for the history it missed at the next view boundary.
  std::this_thread::sleep_for(1s);
  steady.send("late");
  paused.send("late");
  const std::string whole = "history " + std::to_string(kCount) + " first 0 last " +
                            std::to_string(kCount - 1) + " consecutive";
  auto history = [&](tst::Process& p, const std::string& tag) {
    while (auto line = line_of(p, tag, deadline))
      if (line->rfind("history", 0) == 0 || line->rfind("FAIL", 0) == 0) return *line;
    return std::string("no history line");
  };
  CHECK(history(steady, "subscriber 1") == whole);
  CHECK(history(paused, "subscriber 2") == whole);
  publisher.send("quit");
  CHECK(publisher.wait(deadline) == 0);
  CHECK(steady.wait(deadline) == 0);
  CHECK(paused.wait(deadline) == 0);
  check_nothing_left(transport);
}

// A client whose relay is left behind on a retained topic: the relay's history is refreshed
// at the next view boundary, and the client's copy, which missed what the relay missed, is
// made whole by connecting again (the welcome carries the relay's history).
void client_refresh(const std::string& transport) {
  const auto port = tst::free_loopback_port();
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  constexpr int kCount = 1500;
  const std::string count = std::to_string(kCount);
  const std::vector<std::string> subscriber{node(), "kept-subscriber", count};
  const auto steady = spawn(subscriber, domain(transport));
  REQUIRE(expect(*steady, "subscriber 1", "ready", deadline));
  const auto relay = spawn(subscriber, domain(transport, ", client_port: " + std::to_string(port)));
  REQUIRE(expect(*relay, "relay", "ready", deadline));
  const auto client = spawn(subscriber, client_of(port));
  REQUIRE(expect(*client, "client", "ready", deadline));
  const auto config = domain(transport);
  tst::Process publisher({node(), "kept-publisher", count, "2"});
  REQUIRE(expect(publisher, "publisher", "matched", deadline));
  REQUIRE(expect(*relay, "relay", "got", deadline));
  REQUIRE(::kill(relay->pid(), SIGSTOP) == 0);
  std::this_thread::sleep_for(600ms);
  REQUIRE(::kill(relay->pid(), SIGCONT) == 0);
  REQUIRE(expect(publisher, "publisher", "finished", deadline));
  REQUIRE(expect(*steady, "subscriber 1", "done", deadline));
  REQUIRE(expect(*relay, "relay", "done", deadline));
  REQUIRE(expect(*client, "client", "done", deadline));
  // The relay's refresh, then the client's reconnection.
  std::this_thread::sleep_for(1500ms);
  const std::string whole =
      "history " + count + " first 0 last " + std::to_string(kCount - 1) + " consecutive";
  auto history = [&](tst::Process& p, const std::string& tag) {
    p.send("late");
    while (auto line = line_of(p, tag, deadline))
      if (line->rfind("history", 0) == 0 || line->rfind("FAIL", 0) == 0) return *line;
    return std::string("no history line");
  };
  // The client first: a process exits once it said its history, and the relay serves the
  // client's late reader.
  CHECK(history(*client, "client") == whole);
  CHECK(history(*steady, "subscriber 1") == whole);
  CHECK(history(*relay, "relay") == whole);
  publisher.send("quit");
  CHECK(publisher.wait(deadline) == 0);
  CHECK(steady->wait(deadline) == 0);
  CHECK(relay->wait(deadline) == 0);
  CHECK(client->wait(deadline) == 0);
  check_nothing_left(transport);
}

// `client`: the publisher is an external client whose relay is the steady subscriber's
// process, so that its changes are kept in the client and repaired through that relay.
void repair(const std::string& transport, bool client) {
  const auto port = tst::free_loopback_port();
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  const std::vector<std::string> shape{"40", "5", "200"};  // instances, rounds, filler
  // A process of `role` under `settings` (SPINDLE_CONFIG while it starts).
  auto start = [&](const std::string& role, const tst::ScopedDomainConfig& settings) {
    std::vector<std::string> a{node(), role};
    a.insert(a.end(), shape.begin(), shape.end());
    return spawn(a, settings);
  };
  const auto steady_process =
      start("latest-subscriber",
            domain(transport, client ? ", client_port: " + std::to_string(port) : ""));
  auto& steady = *steady_process;
  REQUIRE(expect(steady, "subscriber 1", "ready", deadline));
  const auto paused_process = start("latest-subscriber", domain(transport));
  auto& paused = *paused_process;
  REQUIRE(expect(paused, "subscriber 2", "ready", deadline));
  const auto publisher_process =
      start("latest-publisher", client ? client_of(port) : domain(transport));
  auto& publisher = *publisher_process;
  REQUIRE(expect(publisher, "publisher", "matched", deadline));
  REQUIRE(expect(steady, "subscriber 1", "got", deadline));
  REQUIRE(expect(paused, "subscriber 2", "got", deadline));
  const auto stopped = std::chrono::steady_clock::now();
  REQUIRE(::kill(paused.pid(), SIGSTOP) == 0);
  publisher.send("go");
  const bool finished = expect(publisher, "publisher", "finished", deadline);
  std::this_thread::sleep_until(stopped + 600ms);
  REQUIRE(::kill(paused.pid(), SIGCONT) == 0);
  REQUIRE(finished);
  auto outcome = [&](tst::Process& p, const std::string& tag) {
    while (auto line = line_of(p, tag, deadline))
      if (*line == "whole" || line->rfind("stale", 0) == 0 || line->rfind("FAIL", 0) == 0)
        return *line;
    return std::string("no outcome");
  };
  CHECK(outcome(steady, "subscriber 1") == "whole");
  CHECK(outcome(paused, "subscriber 2") == "whole");
  publisher.send("quit");
  steady.send("quit");
  paused.send("quit");
  CHECK(publisher.wait(deadline) == 0);
  CHECK(steady.wait(deadline) == 0);
  CHECK(paused.wait(deadline) == 0);
  check_nothing_left(transport);
}

void coherent(const std::string& transport) {
  const auto config = domain(transport);
  const tst::TempDir dir("spindle-coherent");
  constexpr std::uint64_t kSize = 20;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  const auto log_a = (dir.path() / "reader-a.log").string();
  const auto log_b = (dir.path() / "reader-b.log").string();
  tst::Process reader_a({node(), "coherent-reader", log_a});
  REQUIRE(expect(reader_a, "reader a", "ready", deadline));
  tst::Process reader_b({node(), "coherent-reader", log_b});
  REQUIRE(expect(reader_b, "reader b", "ready", deadline));
  std::uint64_t open_set = 0;
  {
    tst::Process writer({node(), "coherent-writer", std::to_string(kSize), "2"});
    REQUIRE(expect(writer, "writer", "set 5", deadline));
    // Killed with set N open: half of it written, the rest not yet.
    for (;;) {
      const auto line = line_of(writer, "writer", deadline);
      REQUIRE(line.has_value());
      if (line->rfind("half ", 0) == 0) {
        REQUIRE(::kill(writer.pid(), SIGKILL) == 0);
        open_set = std::stoull(line->substr(5));
        break;
      }
    }
    CHECK(writer.wait(deadline) == 128 + SIGKILL);
  }
  // The survivors remove the writer (at once on this host) and deliver up to the ragged edge.
  std::this_thread::sleep_for(1500ms);
  reader_a.send("finish");
  reader_b.send("finish");
  CHECK(expect(reader_a, "reader a", "done", deadline));
  CHECK(expect(reader_b, "reader b", "done", deadline));
  CHECK(reader_a.wait(deadline) == 0);
  CHECK(reader_b.wait(deadline) == 0);
  const std::string a = slurp(log_a);
  const std::string b = slurp(log_b);
  CHECK(a == b);
  // Whole sets, one after another, the open one absent.
  std::istringstream in(a);
  std::uint64_t set = 0;
  std::uint64_t seq = 0;
  std::uint64_t expect_set = 1;
  std::uint64_t k = 0;
  while (in >> set >> seq) {
    REQUIRE(set == expect_set);
    REQUIRE(seq == set * 1000 + k);
    if (++k == kSize) {
      k = 0;
      ++expect_set;
    }
  }
  INFO("the readers took " << expect_set - 1 << " whole sets; set " << open_set
                           << " was open at the kill");
  CHECK(k == 0);  // no part of a set
  CHECK(expect_set - 1 >= 5);
  CHECK(expect_set <= open_set);  // nothing of the open set
  check_nothing_left(transport);
}

void group(const std::string& transport) {
  const auto config = domain(transport);
  const tst::TempDir dir("spindle-group");
  constexpr std::uint64_t kSets = 400;
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  const auto log_a = (dir.path() / "reader-a.log").string();
  const auto log_b = (dir.path() / "reader-b.log").string();
  const std::string total = std::to_string(kSets * 6);
  tst::Process reader_a({node(), "group-reader", total, log_a});
  REQUIRE(expect(reader_a, "reader a", "ready", deadline));
  tst::Process reader_b({node(), "group-reader", total, log_b});
  REQUIRE(expect(reader_b, "reader b", "ready", deadline));
  tst::Process writer({node(), "group-writer", std::to_string(kSets), "2"});
  CHECK(expect(writer, "writer", "wrote", deadline));
  CHECK(expect(reader_a, "reader a", "done " + total, deadline));
  CHECK(expect(reader_b, "reader b", "done " + total, deadline));
  CHECK(writer.wait(deadline) == 0);
  CHECK(reader_a.wait(deadline) == 0);
  CHECK(reader_b.wait(deadline) == 0);
  std::vector<std::string> sequences;
  for (const auto& log : {log_a, log_b}) {
    std::istringstream in(slurp(log));
    std::string line;
    std::string sequence;
    std::uint64_t next = 0;  // the k-th sample written: set = k / 6 + 1, seq = set * 10 + k % 6
    std::uint64_t set_in_access = 0;
    std::uint64_t accesses = 0;
    while (std::getline(in, line)) {
      if (line == "|") {
        ++accesses;
        continue;
      }
      std::istringstream fields(line);
      std::string topic;
      std::uint64_t set = 0;
      std::uint64_t seq = 0;
      fields >> topic >> set >> seq;
      const auto want_set = next / 6 + 1;
      const auto k = next % 6;
      INFO(log << ": sample " << next << " is '" << line << "'");
      REQUIRE(set == want_set);
      REQUIRE(seq == set * 10 + k);
      REQUIRE(topic == (k % 2 == 0 ? "A" : "B"));
      // A set is read within one access.
      if (k == 0) set_in_access = accesses;
      REQUIRE(accesses == set_in_access);
      sequence += line + "\n";
      ++next;
    }
    CHECK(next == kSets * 6);
    sequences.push_back(sequence);
  }
  CHECK(sequences[0] == sequences[1]);
}

void first(const std::string& transport) {
  const auto config = domain(transport);
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  tst::Process reader({node(), "first-reader"});
  REQUIRE(expect(reader, "reader", "ready", deadline));
  tst::Process writer({node(), "first-writer"});
  CHECK(expect(writer, "writer", "wrote", deadline));
  CHECK(expect(reader, "reader", "got 7", deadline));
  CHECK(writer.wait(deadline) == 0);
  CHECK(reader.wait(deadline) == 0);
}

void persistent(const std::string& transport) {
  // Logs of this run only: an empty state directory, as on a fresh machine.
  const tst::TempDir logs("spindle-persistent");
  const auto config = domain(transport, ", storage: {log_dir: '" + logs.path().string() + "'}");
  const auto deadline = std::chrono::steady_clock::now() + 90s;
  {
    tst::Process writer({node(), "persistent-writer", "3"});
    CHECK(expect(writer, "writer", "wrote 3", deadline));
    CHECK(writer.wait(deadline) == 0);
  }
  // A later process, alone: it founds the domain and takes over the exited one's logs.
  tst::Process first({node(), "persistent-reader", "3", "stay"});
  CHECK(expect(first, "reader 1", "got 3", deadline));
  // One that joins the running domain gets the same history in its state transfer.
  tst::Process second({node(), "persistent-reader", "3"});
  CHECK(expect(second, "reader 2", "got 3", deadline));
  CHECK(second.wait(deadline) == 0);
  first.send("exit");
  CHECK(first.wait(deadline) == 0);
  // And a process after both: the home passed on, the history with it.
  tst::Process third({node(), "persistent-reader", "3"});
  CHECK(expect(third, "reader 3", "got 3", deadline));
  CHECK(third.wait(deadline) == 0);
}

}  // namespace

TEST_CASE("first: a sample written right after the writer is created arrives, over tcp",
          "[first][tcp]") {
  first("tcp");
}
TEST_CASE("first: a sample written right after the writer is created arrives, over shm",
          "[first][shm]") {
  first("shm");
}
TEST_CASE(
    "persistent: a later process reads what an exited one wrote, with no domain file, "
    "over tcp",
    "[persistent][tcp]") {
  persistent("tcp");
}
TEST_CASE(
    "persistent: a later process reads what an exited one wrote, with no domain file, "
    "over shm",
    "[persistent][shm]") {
  persistent("shm");
}
TEST_CASE("rejoin: a subscriber removed while stopped rejoins by itself, over tcp",
          "[rejoin][tcp]") {
  rejoin("tcp");
}
TEST_CASE("rejoin: a subscriber removed while stopped rejoins by itself, over shm",
          "[rejoin][shm]") {
  rejoin("shm");
}
TEST_CASE("repair: a reliable reader left behind gets every instance's latest, over tcp",
          "[repair][tcp]") {
  repair("tcp", false);
}
TEST_CASE("repair: a reliable reader left behind gets every instance's latest, over shm",
          "[repair][shm]") {
  repair("shm", false);
}
TEST_CASE("client_refresh: a client whose relay was left behind gets the whole history, over tcp",
          "[client_refresh][tcp]") {
  client_refresh("tcp");
}
TEST_CASE("client_refresh: a client whose relay was left behind gets the whole history, over shm",
          "[client_refresh][shm]") {
  client_refresh("shm");
}
TEST_CASE("client_repair: a reliable reader left behind gets a client writer's latest, over tcp",
          "[client_repair][tcp]") {
  repair("tcp", true);
}
TEST_CASE("client_repair: a reliable reader left behind gets a client writer's latest, over shm",
          "[client_repair][shm]") {
  repair("shm", true);
}
TEST_CASE("refresh: a member left behind on a retained topic gets its history again, over tcp",
          "[refresh][tcp]") {
  refresh("tcp", 600ms);
}
TEST_CASE("refresh: a member left behind on a retained topic gets its history again, over shm",
          "[refresh][shm]") {
  refresh("shm", 600ms);
}
TEST_CASE("rejoin_history: a member removed and rejoined keeps a retained topic whole, over tcp",
          "[rejoin_history][tcp]") {
  refresh("tcp", 1500ms);
}
TEST_CASE("rejoin_history: a member removed and rejoined keeps a retained topic whole, over shm",
          "[rejoin_history][shm]") {
  refresh("shm", 1500ms);
}
TEST_CASE("coherent: a writer killed mid-set leaves no part of it, over tcp", "[coherent][tcp]") {
  coherent("tcp");
}
TEST_CASE("coherent: a writer killed mid-set leaves no part of it, over shm", "[coherent][shm]") {
  coherent("shm");
}
TEST_CASE("group: a GROUP publisher's two topics are read in its order, sets whole, over tcp",
          "[group][tcp]") {
  group("tcp");
}
TEST_CASE("group: a GROUP publisher's two topics are read in its order, sets whole, over shm",
          "[group][shm]") {
  group("shm");
}
TEST_CASE("order: two keyed writers, two ordered readers take the same sequence, over tcp",
          "[order][tcp]") {
  order("tcp");
}
TEST_CASE("order: two keyed writers, two ordered readers take the same sequence, over shm",
          "[order][shm]") {
  order("shm");
}
TEST_CASE("survivor: a publisher goes on when its only subscriber is killed, over tcp",
          "[survivor][tcp]") {
  survivor("tcp");
}
TEST_CASE("survivor: a publisher goes on when its only subscriber is killed, over shm",
          "[survivor][shm]") {
  survivor("shm");
}

TEST_CASE("client_order: a client reader takes the members' total order, over tcp",
          "[client_order][tcp]") {
  client_order("tcp");
}
TEST_CASE("client_order: a client reader takes the members' total order, over shm",
          "[client_order][shm]") {
  client_order("shm");
}
TEST_CASE("client_faults: a client's pause and crash hold nobody, over tcp",
          "[client_faults][tcp]") {
  client_faults("tcp");
}
TEST_CASE("client_faults: a client's pause and crash hold nobody, over shm",
          "[client_faults][shm]") {
  client_faults("shm");
}
TEST_CASE("client_failover: a client whose relay dies goes on through another, over tcp",
          "[client_failover][tcp]") {
  client_failover("tcp");
}
TEST_CASE("client_failover: a client whose relay dies goes on through another, over shm",
          "[client_failover][shm]") {
  client_failover("shm");
}
TEST_CASE("client_join_port: a client with no relay named goes through the leader, and the next",
          "[client_join_port][tcp]") {
  client_join_port("tcp");
}
TEST_CASE(
    "client_join_port: a client with no relay named goes through the leader, and the next, "
    "over shm",
    "[client_join_port][shm]") {
  client_join_port("shm");
}
