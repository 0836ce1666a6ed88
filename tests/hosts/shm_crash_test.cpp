// A crash frees its shared memory (issue 59): standard-API participants on one host with no
// domain file (transport auto: members meet over shared memory) leave nothing in /dev/shm and
// no socket behind, whether they end normally or by SIGKILL, and a member killed while
// samples flow costs the others nothing. Participants are hosts_node's publisher and
// subscribers of ShapeType on "Square". Run it where nothing else uses the default shm
// namespace ("spindle"): CTest runs it alone (RUN_SERIAL); tools/contained gives it a /dev/shm
// and a network namespace of its own.
#include <signal.h>
#include <sys/statvfs.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "local_node.hpp"
#include "process.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// What the participants could have left: names in /dev/shm of the default namespace, and
// shm sockets (@spindle.*) in this network namespace.
std::vector<std::string> leftovers() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/dev/shm", ec))
    if (e.path().filename().string().rfind("spindle", 0) == 0) out.push_back(e.path().string());
  std::ifstream unix_sockets("/proc/net/unix");
  std::string line;
  while (std::getline(unix_sockets, line))
    if (line.find(" @spindle.") != std::string::npos) out.push_back(line);
  return out;
}

// Shared memory of the whole machine (/proc/meminfo Shmem: memfds and tmpfs alike), bytes.
std::uint64_t shmem() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "Shmem:") return kb << 10;
  return 0;
}

std::uint64_t dev_shm_used() {
  struct statvfs st {};
  if (::statvfs("/dev/shm", &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_blocks - st.f_bfree) * st.f_frsize;
}

// Kills `p` (SIGKILL) and reaps it.
void kill_now(tst::Process& p) {
  ::kill(p.pid(), SIGKILL);
  CHECK(p.wait(Clock::now() + 10s) == 128 + SIGKILL);
}

}  // namespace

TEST_CASE("shm crash: a publisher and two subscribers SIGKILLed while samples flow leave nothing",
          "[shm_crash]") {
  const auto before = dev_shm_used();
  REQUIRE(leftovers().empty());
  const auto deadline = Clock::now() + 90s;
  auto sub1 = tst::local_node({"listen"});
  auto sub2 = tst::local_node({"listen"});
  REQUIRE(tst::expect_line(*sub1, "sub1", "ready", deadline));
  REQUIRE(tst::expect_line(*sub2, "sub2", "ready", deadline));
  auto pub = tst::local_node({"stream", "2"});
  REQUIRE(tst::expect_line(*pub, "pub", "matched", deadline));
  REQUIRE(tst::expect_line(*sub1, "sub1", "first", deadline));
  REQUIRE(tst::expect_line(*sub2, "sub2", "first", deadline));
  std::this_thread::sleep_for(200ms);  // samples flow
  const auto running = dev_shm_used();
  const auto shmem_running = shmem();
  for (auto* p : {pub.get(), sub1.get(), sub2.get()})
    kill_now(*p);
  std::this_thread::sleep_for(100ms);
  const auto after = dev_shm_used();
  std::cout << "shm crash: /dev/shm used " << before << " bytes before, " << running
            << " while running, " << after << " after the kills; machine Shmem " << shmem_running
            << " bytes while running, " << shmem() << " after" << std::endl;
  const auto left = leftovers();
  for (const auto& l : left)
    std::cerr << "left: " << l << '\n';
  CHECK(left.empty());
  CHECK(after <= before);
}

TEST_CASE(
    "shm crash: a subscriber SIGKILLed mid-stream costs the other nothing, and nothing is "
    "left",
    "[shm_crash]") {
  constexpr int kSamples = 1500;
  const auto before = dev_shm_used();
  REQUIRE(leftovers().empty());
  const auto deadline = Clock::now() + 150s;
  auto keep = tst::local_node({"subscriber", std::to_string(kSamples)});
  auto victim = tst::local_node({"subscriber", std::to_string(kSamples)});
  REQUIRE(tst::expect_line(*keep, "keep", "ready", deadline));
  REQUIRE(tst::expect_line(*victim, "victim", "ready", deadline));
  // 2 ms apart: 1,500 samples take 3 s or more, and the victim dies in the first half second.
  auto pub = tst::local_node({"publisher", std::to_string(kSamples), "2", "2"});
  REQUIRE(tst::expect_line(*pub, "pub", "matched", deadline));
  std::this_thread::sleep_for(300ms);
  kill_now(*victim);
  CHECK(tst::expect_line(*keep, "keep", "got " + std::to_string(kSamples) + " disposed", deadline));
  CHECK(tst::expect_line(*pub, "pub", "wrote " + std::to_string(kSamples), deadline));
  keep->send("exit");
  pub->send("exit");
  CHECK(keep->wait(deadline) == 0);
  CHECK(pub->wait(deadline) == 0);
  const auto after = dev_shm_used();
  std::cout << "shm crash: /dev/shm used " << before << " bytes before, " << after
            << " after the run" << std::endl;
  const auto left = leftovers();
  for (const auto& l : left)
    std::cerr << "left: " << l << '\n';
  CHECK(left.empty());
  CHECK(after <= before);
}
