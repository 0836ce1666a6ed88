// A network partition between real processes over tcp, in network namespaces this test
// creates: three members, each in a namespace of its own, wired to one bridge by a veth
// pair, all three writing one topic. Mid-stream the bridge port of member 2 goes down —
// nothing reaches it or comes from it, no connection is reset (a cable pulled, not a crash).
// The majority (members 0 and 1) must remove it and go on: both take every sample of
// both their writers, in one order, and member 2's samples as the same FIFO prefix. The
// minority (member 2) must halt by itself within the suspicion timeout — its next write
// fails naming the members it lost (exit 3) — having taken a prefix of the majority's
// sequence (no split brain).
//
// The witness (docs/membership.md, "Witness"): two members on two "hosts" (namespaces) and
// a `spindle witness` on a third, all three in the domain file. The link of one member goes
// down mid-stream: it halts (1 of 3 is no majority), while the other member, keeping the
// witness, goes on alone with every sample of its own writer — a two-member domain that
// survives the loss of either member, with never two primaries.
//
// The namespaces: this process becomes root of a user namespace of its own (unprivileged
// user namespaces), with its own network and mount namespaces; `ip netns` names one per
// member under a private /run. Where that is not allowed (no user namespaces, no `ip`)
// the test is skipped (exit 77) and says why.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "member_log.hpp"
#include "namespaces.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kMembers = 3;
constexpr std::uint32_t kCutOff = 2;  // the member the partition isolates
constexpr std::uint64_t kSamples = 2000;

using tst::ip_tool;

bool run(const std::string& command) {
  return tst::run_quietly(command);
}

// The namespaces (namespaces.hpp), and a bridge in them the members' namespaces hang on.
std::string enter_namespaces() {
  if (auto why = tst::enter_namespaces(); !why.empty()) return why;
  const auto ip = ip_tool();
  if (!run(ip + " link add br0 type bridge") || !run(ip + " link set br0 up"))
    return "cannot create a bridge in the new network namespace";
  return {};
}

std::string address(std::uint32_t member) {
  return "10.77.0." + std::to_string(member + 1);
}

// Member i's namespace "m<i>", wired to the bridge through "h<i>" (its port on the bridge).
bool wire(std::uint32_t i, std::string& why) {
  const auto ns = "m" + std::to_string(i);
  const auto inner = "v" + std::to_string(i);
  const auto port = "h" + std::to_string(i);
  const auto ip = ip_tool();
  const auto in_ns = ip + " netns exec " + ns + " " + ip;
  for (const auto& c :
       {ip + " netns add " + ns, ip + " link add " + inner + " type veth peer name " + port,
        ip + " link set " + inner + " netns " + ns, ip + " link set " + port + " master br0",
        ip + " link set " + port + " up", in_ns + " addr add " + address(i) + "/24 dev " + inner,
        in_ns + " link set " + inner + " up", in_ns + " link set lo up"}) {
    if (!run(c)) {
      why = "'" + c + "' failed";
      return false;
    }
  }
  return true;
}

// A scratch folder `name`, members first..last each in its namespace on the bridge, and the
// domain file listing them (tcp, port 7700 on each member's address); the file's path.
fs::path prepare(const std::string& name, std::uint32_t first, std::uint32_t last) {
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string why;
  for (std::uint32_t i = first; i <= last; ++i) {
    const bool wired = wire(i, why);
    INFO(why);
    REQUIRE(wired);
  }
  const auto file = dir / "domain.yaml";
  std::ofstream out(file);
  out << "# Written by group_partition_test.\nversion: 1\ndomain_id: 0\ntransport: tcp\n"
      << "members:\n";
  for (std::uint32_t i = first; i <= last; ++i)
    out << "  - {id: " << i << ", host: " << address(i) << ", port: 7700}\n";
  out << "engine: {window_size: 64, slot_size: 256, connect_timeout: 10s}\n";
  return file;
}

using Log = tst::MemberLog;

bool is_prefix(const Log& a, const Log& of) {
  return a.size() <= of.size() && std::equal(a.begin(), a.end(), of.begin());
}

}  // namespace

TEST_CASE("partition: the minority halts, the majority goes on in one order", "[partition]") {
  ::signal(SIGPIPE, SIG_IGN);
  const auto file = prepare("spindle-partition-" + std::to_string(::getpid()), 0, kMembers - 1);
  const auto dir = file.parent_path();
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  std::vector<std::unique_ptr<tst::Process>> procs;
  for (std::uint32_t i = 0; i < kMembers; ++i) {
    // `ip netns exec m<i>` runs it in member i's namespace.
    auto argv = tst::group_member_argv(file, dir / ("log" + std::to_string(i)), kSamples, kMembers,
                                       kMembers, true);
    argv.insert(argv.begin(), {ip_tool(), "netns", "exec", "m" + std::to_string(i)});
    argv.insert(argv.end(), {"--node", std::to_string(i)});
    procs.push_back(std::make_unique<tst::Process>(argv));
  }
  auto expect = [&](std::uint32_t i, const std::string& word) {
    const auto line = tst::next_report(*procs[i], deadline);
    INFO("member " << i << " said '" << line.value_or("(nothing)") << "'");
    CHECK((line && line->rfind(word, 0) == 0));
    return line.value_or("");
  };
  for (std::uint32_t i = 0; i < kMembers; ++i)
    expect(i, "ready");
  for (auto& p : procs)
    p->send("go");
  std::this_thread::sleep_for(300ms);  // mid-stream
  REQUIRE(run(ip_tool() + " link set h" + std::to_string(kCutOff) + " down"));
  const auto halted = expect(kCutOff, "halted");
  CHECK(halted.find("lost contact with 2 of the 3 members") != std::string::npos);
  for (std::uint32_t i = 0; i < kMembers; ++i)
    if (i != kCutOff) procs[i]->send("expect 0 1");
  for (std::uint32_t i = 0; i < kMembers; ++i)
    if (i != kCutOff) expect(i, "done");
  for (std::uint32_t i = 0; i < kMembers; ++i)
    if (i != kCutOff) procs[i]->send("exit");
  for (std::uint32_t i = 0; i < kMembers; ++i) {
    INFO("member " << i);
    CHECK(procs[i]->wait(deadline) == (i == kCutOff ? 3 : 0));
  }
  const Log a = tst::read_member_log(dir / "log0").samples;
  const Log b = tst::read_member_log(dir / "log1").samples;
  const Log c = tst::read_member_log(dir / ("log" + std::to_string(kCutOff))).samples;
  CHECK(a == b);
  std::map<std::uint32_t, std::uint64_t> next;
  bool fifo = true;
  for (const auto& [w, s] : a)
    fifo = fifo && s == next[w]++;
  CHECK(fifo);
  CHECK(next[0] == kSamples);
  CHECK(next[1] == kSamples);
  CHECK(next[kCutOff] < kSamples);  // cut off mid-stream
  INFO("the cut-off member took " << c.size() << " samples, the majority " << a.size());
  CHECK(is_prefix(c, a));
  if (a == b && is_prefix(c, a)) fs::remove_all(dir);
}

TEST_CASE("witness: of two members and a witness, the one cut off halts, the other goes on",
          "[witness]") {
  ::signal(SIGPIPE, SIG_IGN);
  // Namespaces m3, m4 (the members) and m5 (the witness), beside the other test's.
  constexpr std::uint32_t kFirst = 3;
  constexpr std::uint32_t kWitness = 5;
  const auto file = prepare("spindle-witness-" + std::to_string(::getpid()), kFirst, kWitness);
  const auto dir = file.parent_path();
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  tst::Process witness({ip_tool(), "netns", "exec", "m" + std::to_string(kWitness), "env",
                        "SPINDLE_CONFIG=" + file.string(),
                        "SPINDLE_NODE_ID=" + std::to_string(kWitness), SPINDLE_WITNESS, "witness"});
  std::vector<std::unique_ptr<tst::Process>> procs;
  for (std::uint32_t i = kFirst; i < kWitness; ++i) {
    // Each member writes and reads; the witness has no endpoint, so 2 readers, 2 writers.
    auto argv =
        tst::group_member_argv(file, dir / ("log" + std::to_string(i)), kSamples, 2, 2, true);
    argv.insert(argv.begin(), {ip_tool(), "netns", "exec", "m" + std::to_string(i)});
    argv.insert(argv.end(), {"--node", std::to_string(i)});
    procs.push_back(std::make_unique<tst::Process>(argv));
  }
  auto expect = [&](std::size_t k, const std::string& word) {
    const auto line = tst::next_report(*procs[k], deadline);
    INFO("member " << kFirst + k << " said '" << line.value_or("(nothing)") << "'");
    CHECK((line && line->rfind(word, 0) == 0));
    return line.value_or("");
  };
  const auto said = witness.read_line(deadline);
  INFO("the witness said '" << said.value_or("(nothing)") << "'");
  REQUIRE((said && said->rfind("witness: a member of domain 0", 0) == 0));
  expect(0, "ready");
  expect(1, "ready");
  for (auto& p : procs)
    p->send("go");
  std::this_thread::sleep_for(300ms);  // mid-stream
  REQUIRE(run(ip_tool() + " link set h" + std::to_string(kFirst + 1) + " down"));
  const auto halted = expect(1, "halted");
  CHECK(halted.find("lost contact with 2 of the 3 members") != std::string::npos);
  // The other member keeps the witness: a majority of 2 of 3; it goes on with its own
  // writer's samples, every one of them.
  procs[0]->send("expect " + std::to_string(kFirst));
  expect(0, "done");
  procs[0]->send("exit");
  CHECK(procs[0]->wait(deadline) == 0);
  CHECK(procs[1]->wait(deadline) == 3);
  ::kill(witness.pid(), SIGTERM);
  CHECK(witness.wait(deadline) == 0);
  const Log a = tst::read_member_log(dir / ("log" + std::to_string(kFirst))).samples;
  const Log b = tst::read_member_log(dir / ("log" + std::to_string(kFirst + 1))).samples;
  std::map<std::uint32_t, std::uint64_t> next;
  for (const auto& [w, s] : a)
    CHECK(s == next[w]++);
  CHECK(next[kFirst] == kSamples);
  CHECK(next[kFirst + 1] < kSamples);  // cut off mid-stream
  INFO("the cut-off member took " << b.size() << " samples, the other " << a.size());
  CHECK(is_prefix(b, a));
  fs::remove_all(dir);
}

int main(int argc, char* argv[]) {
  if (const auto why = enter_namespaces(); !why.empty()) {
    std::cout << "SKIPPED: a partition needs network namespaces: " << why << "\n";
    return 77;  // CTest: skipped
  }
  return Catch::Session().run(argc, argv);
}
