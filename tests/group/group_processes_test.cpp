// Membership across real processes on loopback, once per built transport (tcp, shm).
//
// Failures: 4 members each reading one topic, 3 of them writing to it, while one member is
// SIGKILLed mid-stream (a writer; the leader; a reader only), SIGSTOPped for less than the
// suspicion timeout, or leaves cleanly. The survivors must go on (writes never fail), take
// every sample of every live writer, and hold identical sequences; a killed writer's
// samples are a FIFO prefix of its stream at every survivor.
//
// Joins (domain files without a member list: participants find each other through the
// domain's join port): participants started in any order with no node ids find each other;
// a participant that starts mid-stream, one that restarts after a SIGKILL, and one that
// starts after the founder left receive the stream from their join point on — a suffix of
// everyone else's sequence. Every wait is bounded.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "member_log.hpp"
#include "process.hpp"
#include "transports.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

enum class Fault { kill, stop_briefly, stop_long, leave };

struct Scenario {
  std::uint32_t members = 4;
  std::uint32_t writers = 3;  // members 0..writers-1 write
  std::uint32_t victim = 1;   // the member the fault hits
  Fault fault = Fault::kill;
  std::uint64_t samples = 1500;
};

using tst::read_member_log;

std::vector<std::string> run(const Scenario& sc, const std::string& kind) {
  ::signal(SIGPIPE, SIG_IGN);  // a killed member's stdin is a closed pipe
  std::vector<std::string> errors;
  const std::string name = "spindle-group-" + std::to_string(::getpid()) + "-" + kind;
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  const auto file = dir / "domain.yaml";
  {
    std::ofstream out(file);
    out << "# Written by group_processes_test.\nversion: 1\ndomain_id: 0\ntransport: " << kind
        << "\nshm: {namespace: " << name << "}\nmembers:\n";
    for (std::uint32_t i = 0; i < sc.members; ++i)
      out << "  - {id: " << i << ", host: 127.0.0.1, port: " << tst::free_loopback_port() << "}\n";
    out << "engine: {window_size: 64, slot_size: 256, connect_timeout: 10s}\n";
  }
  std::vector<std::unique_ptr<tst::Process>> procs;
  for (std::uint32_t i = 0; i < sc.members; ++i) {
    auto argv = tst::group_member_argv(file, dir / ("log" + std::to_string(i)), sc.samples,
                                       sc.members, sc.writers, i < sc.writers);
    argv.insert(argv.end(), {"--node", std::to_string(i)});
    procs.push_back(std::make_unique<tst::Process>(argv));
  }
  auto expect = [&](std::uint32_t i, const std::string& word) {
    const auto line = tst::next_report(*procs[i], deadline);
    if (!line || line->rfind(word, 0) != 0)
      errors.push_back("member " + std::to_string(i) + ": expected '" + word + "', got '" +
                       line.value_or("(nothing)") + "'");
  };
  for (std::uint32_t i = 0; i < sc.members; ++i)
    expect(i, "ready");
  if (!errors.empty()) return errors;
  for (auto& p : procs)
    p->send("go");
  std::this_thread::sleep_for(250ms);  // mid-stream
  const pid_t victim = procs[sc.victim]->pid();
  bool gone = false;
  switch (sc.fault) {
    case Fault::kill:
      ::kill(victim, SIGKILL);
      gone = true;
      break;
    case Fault::stop_briefly:
      ::kill(victim, SIGSTOP);
      std::this_thread::sleep_for(300ms);  // under the 1 s suspicion timeout
      ::kill(victim, SIGCONT);
      break;
    case Fault::stop_long:
      // Past the suspicion timeout: the others remove it and go on; it resumes (below)
      // once they are done, and must find out and say so.
      ::kill(victim, SIGSTOP);
      gone = true;
      break;
    case Fault::leave:
      procs[sc.victim]->send("leave");
      gone = true;
      break;
  }
  std::string live;
  for (std::uint32_t w = 0; w < sc.writers; ++w)
    if (!gone || w != sc.victim) {
      live += ' ';
      live += std::to_string(w);
    }
  for (std::uint32_t i = 0; i < sc.members; ++i)
    if (!gone || i != sc.victim) procs[i]->send("expect" + live);
  for (std::uint32_t i = 0; i < sc.members; ++i)
    if (!gone || i != sc.victim) expect(i, "done");
  if (sc.fault == Fault::stop_long) {
    ::kill(victim, SIGCONT);
    expect(sc.victim, "halted");  // its next write fails, naming why; it exits 3
  }
  for (std::uint32_t i = 0; i < sc.members; ++i)
    if (!(gone && i == sc.victim)) procs[i]->send("exit");
  for (std::uint32_t i = 0; i < sc.members; ++i) {
    const int st = procs[i]->wait(deadline);
    if (sc.fault == Fault::stop_long && i == sc.victim) {
      if (st != 3)
        errors.push_back("member " + std::to_string(i) + ", removed while stopped, exited with " +
                         std::to_string(st) + " instead of 3 (a failed write)");
      continue;
    }
    if (st != 0 && !(sc.fault == Fault::kill && i == sc.victim))
      errors.push_back("member " + std::to_string(i) + " exited with " + std::to_string(st));
  }
  if (!errors.empty()) return errors;

  std::vector<tst::ReadLog> logs;
  for (std::uint32_t i = 0; i < sc.members; ++i)
    logs.push_back(read_member_log(dir / ("log" + std::to_string(i))));
  const std::uint32_t ref = sc.victim == 0 ? 1 : 0;
  for (std::uint32_t i = 0; i < sc.members; ++i) {
    if (gone && i == sc.victim) continue;
    if (logs[i].samples != logs[ref].samples)
      errors.push_back("member " + std::to_string(i) + " took another sequence than member " +
                       std::to_string(ref) + " (" + std::to_string(logs[i].samples.size()) +
                       " vs " + std::to_string(logs[ref].samples.size()) + " samples)");
    if (sc.fault == Fault::stop_briefly && logs[i].view_changes != 0)
      errors.push_back("member " + std::to_string(i) + " saw a view change for a short pause");
  }
  std::map<std::uint32_t, std::uint64_t> next;
  for (const auto& [w, s] : logs[ref].samples) {
    if (s != next[w]) {
      errors.push_back("writer " + std::to_string(w) + ": sample " + std::to_string(s) + " where " +
                       std::to_string(next[w]) + " was due");
      break;
    }
    ++next[w];
  }
  for (std::uint32_t w = 0; w < sc.writers; ++w) {
    if (gone && w == sc.victim) continue;
    if (next[w] != sc.samples)
      errors.push_back("writer " + std::to_string(w) + ": " + std::to_string(next[w]) + " of " +
                       std::to_string(sc.samples) + " samples taken");
  }
  UNSCOPED_INFO(kind << ": " << logs[ref].samples.size() << " samples in the survivors' sequence");
  if (errors.empty()) fs::remove_all(dir);
  return errors;
}

// ------------------------------------------------------------------------------ joins

enum class Join { any_order, late, restart, after_founder_left };

std::vector<std::string> run_join(Join variant, const std::string& kind) {
  ::signal(SIGPIPE, SIG_IGN);
  std::vector<std::string> errors;
  const std::string name = "spindle-join-" + std::to_string(::getpid()) + "-" + kind;
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  const auto file = dir / "domain.yaml";
  {
    // No members: every participant joins through the join port (or founds the domain).
    std::ofstream out(file);
    out << "# Written by group_processes_test.\nversion: 1\ndomain_id: 7\ntransport: " << kind
        << "\njoin_port: " << tst::free_loopback_port() << "\nshm: {namespace: " << name
        << "}\nengine: {window_size: 64, slot_size: 256, connect_timeout: 10s}\n";
  }
  const std::uint32_t writers = 2;  // tags 1 and 2
  std::vector<std::unique_ptr<tst::Process>> procs;
  auto spawn = [&](std::uint32_t tag, bool writer, std::uint32_t members, bool with_id) {
    auto argv = tst::group_member_argv(file, dir / ("log" + std::to_string(procs.size())), 2000,
                                       members, writers, writer);
    argv.insert(argv.end(), {"--tag", std::to_string(tag)});
    if (with_id) argv.insert(argv.end(), {"--node", std::to_string(tag)});
    procs.push_back(std::make_unique<tst::Process>(argv));
  };
  auto expect = [&](std::size_t i, const std::string& word) {
    const auto line = tst::next_report(*procs[i], deadline);
    if (!line || line->rfind(word, 0) != 0)
      errors.push_back("process " + std::to_string(i) + ": expected '" + word + "', got '" +
                       line.value_or("(nothing)") + "'");
  };
  // Three at first: the two writers and a reader (tag 3); with no ids in `any_order`,
  // started newest first.
  const bool ids = variant != Join::any_order;
  for (std::uint32_t tag : {3u, 2u, 1u}) {
    spawn(tag, tag <= writers, 3, ids);
    std::this_thread::sleep_for(100ms);
  }
  for (std::size_t i = 0; i < 3; ++i)
    expect(i, "ready");
  if (!errors.empty()) return errors;
  for (auto& p : procs)
    p->send("go");
  std::this_thread::sleep_for(300ms);  // mid-stream
  std::size_t gone = SIZE_MAX;         // a process that is not there at the end
  switch (variant) {
    case Join::any_order:
      break;
    case Join::late:
      spawn(4, false, 4, true);
      break;
    case Join::restart:
      ::kill(procs[0]->pid(), SIGKILL);  // the reader, tag 3
      (void)procs[0]->wait(deadline);
      gone = 0;
      spawn(3, false, 3, true);
      break;
    case Join::after_founder_left:
      procs[0]->send("leave");  // the founder (first started): the reader, tag 3
      (void)procs[0]->wait(deadline);
      gone = 0;
      spawn(4, false, 3, true);
      break;
  }
  const bool joined = procs.size() > 3;
  if (joined) {
    expect(3, "ready");
    procs[3]->send("go");
  }
  for (std::size_t i = 0; i < 3; ++i)
    if (i != gone) procs[i]->send("expect 1 2");
  for (std::size_t i = 0; i < 3; ++i)
    if (i != gone) expect(i, "done");
  if (joined) {
    std::this_thread::sleep_for(500ms);  // the last samples reach the joiner too
    procs[3]->send("expect");
    expect(3, "done");
  }
  for (std::size_t i = 0; i < procs.size(); ++i)
    if (i != gone) procs[i]->send("exit");
  for (std::size_t i = 0; i < procs.size(); ++i) {
    const int st = procs[i]->wait(deadline);
    if (st != 0 && i != gone)
      errors.push_back("process " + std::to_string(i) + " exited with " + std::to_string(st));
  }
  if (!errors.empty()) return errors;
  // The writers (processes 1 and 2) hold the whole sequence; everyone else the same, or —
  // a joiner — a suffix of it.
  const auto ref = read_member_log(dir / "log1").samples;
  for (std::size_t i = 0; i < procs.size(); ++i) {
    if (i == gone) continue;
    const auto mine = read_member_log(dir / ("log" + std::to_string(i))).samples;
    if (i == 3) {
      if (mine.empty() || mine.size() > ref.size() ||
          !std::equal(mine.begin(), mine.end(),
                      ref.end() - static_cast<std::ptrdiff_t>(mine.size())))
        errors.push_back("the joiner's " + std::to_string(mine.size()) +
                         " samples are not the end of the others' sequence");
    } else if (mine != ref) {
      errors.push_back("process " + std::to_string(i) + " took another sequence than process 1");
    }
  }
  std::map<std::uint32_t, std::uint64_t> per_writer;
  for (const auto& [w, seq] : ref)
    ++per_writer[w];
  if (per_writer[1] != 2000 || per_writer[2] != 2000)
    errors.push_back("process 1 took " + std::to_string(per_writer[1]) + " and " +
                     std::to_string(per_writer[2]) + " samples of the two writers, not 2000 each");
  UNSCOPED_INFO(kind << ": " << ref.size() << " samples in the sequence");
  if (errors.empty()) fs::remove_all(dir);
  return errors;
}

// Runs `run(transport)` on every built transport; each error it returns fails the check.
template <class Run>
void on_every_transport(Run run) {
  for (const auto& kind : tst::available_transports()) {
    INFO("transport " << kind);
    const auto errors = run(kind);
    for (const auto& e : errors)
      UNSCOPED_INFO(e);
    CHECK(errors.empty());
  }
}

void run_join_everywhere(Join variant) {
  on_every_transport([&](const std::string& kind) { return run_join(variant, kind); });
}

void run_everywhere(const Scenario& sc) {
  on_every_transport([&](const std::string& kind) { return run(sc, kind); });
}

}  // namespace

TEST_CASE("processes: SIGKILL of a writer mid-stream; the survivors go on in one order",
          "[processes][kill]") {
  run_everywhere(Scenario{.victim = 1});
}

TEST_CASE("processes: SIGKILL of the leader mid-stream", "[processes][kill]") {
  run_everywhere(Scenario{.victim = 0});
}

TEST_CASE("processes: SIGKILL of a reader that does not write", "[processes][kill]") {
  run_everywhere(Scenario{.victim = 3});
}

TEST_CASE("processes: a SIGSTOP shorter than the suspicion timeout changes no view",
          "[processes][stop]") {
  run_everywhere(Scenario{.victim = 2, .fault = Fault::stop_briefly});
}

TEST_CASE(
    "processes: a writer SIGSTOPped past the suspicion timeout is removed; the others go "
    "on, and it says so once it resumes",
    "[processes][stop]") {
  run_everywhere(Scenario{.victim = 1, .fault = Fault::stop_long});
}

TEST_CASE("processes: a member that leaves cleanly mid-stream", "[processes][leave]") {
  run_everywhere(Scenario{.victim = 2, .fault = Fault::leave});
}

TEST_CASE("processes: with no member list and no ids, participants find each other",
          "[processes][join]") {
  run_join_everywhere(Join::any_order);
}

TEST_CASE("processes: a participant that starts mid-stream receives from its join point on",
          "[processes][join]") {
  run_join_everywhere(Join::late);
}

TEST_CASE("processes: a SIGKILLed participant restarts with its id and rejoins",
          "[processes][join]") {
  run_join_everywhere(Join::restart);
}

TEST_CASE("processes: after the founder left, a newcomer still finds the domain",
          "[processes][join]") {
  run_join_everywhere(Join::after_founder_left);
}

TEST_CASE("processes: a joiner whose settings differ, or whose id is taken, is refused by name",
          "[processes][join]") {
  ::signal(SIGPIPE, SIG_IGN);
  const auto dir = fs::temp_directory_path() / ("spindle-refuse-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto port = tst::free_loopback_port();
  auto config = [&](const std::string& name, std::uint32_t slot, std::uint32_t domain) {
    const auto file = dir / name;
    std::ofstream out(file);
    out << "version: 1\ndomain_id: " << domain << "\ntransport: tcp\njoin_port: " << port
        << "\nengine: {slot_size: " << slot << ", connect_timeout: 1s}\n";
    return file.string();
  };
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  auto member = [&](const std::string& file, std::uint32_t node) {
    return std::make_unique<tst::Process>(std::vector<std::string>{
        tst::self_dir() + "/group_member", "--config", file, "--node", std::to_string(node),
        "--log", (dir / ("log" + std::to_string(node))).string(), "--members", "1", "--writers",
        "0", "--timeout-ms", "20000"});
  };
  auto founder = member(config("a.yaml", 256, 4), 1);
  REQUIRE(founder->read_line(deadline).value_or("").rfind("ready", 0) == 0);
  auto slot = member(config("b.yaml", 512, 4), 2);
  CHECK(slot->read_line(deadline).value_or("") ==
        "FAIL domain 4 refused node 2 (contact 127.0.0.1:" + std::to_string(port) +
            "): engine.slot_size: node 2 has 512, this domain 256");
  auto domain = member(config("c.yaml", 256, 5), 3);
  // Another domain id means another default port, but join_port names this one: refused.
  CHECK(domain->read_line(deadline).value_or("") ==
        "FAIL domain 5 refused node 3 (contact 127.0.0.1:" + std::to_string(port) +
            "): node 3 is in domain 5, this domain is 4");
  auto twin = member(config("a2.yaml", 256, 4), 1);
  CHECK(twin->read_line(deadline).value_or("") ==
        "FAIL domain 4 refused node 1 (contact 127.0.0.1:" + std::to_string(port) +
            "): node id 1 is already a member; give each participant its own (SPINDLE_NODE_ID)");
  founder->send("go");
  founder->send("exit");
  CHECK(founder->wait(deadline) == 0);
  fs::remove_all(dir);
}
