// Shared-memory transport specifics: segment names are cleaned up on exit, and segments
// left by a SIGKILLed process are reclaimed when the next transport starts.
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/shm.hpp>

namespace st = spindle::transport;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> segments(const std::string& prefix) {
  std::vector<std::string> out;
  DIR* d = ::opendir("/dev/shm");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    std::string f = e->d_name;
    if (f.rfind(prefix + ".", 0) == 0) out.push_back(f);
  }
  ::closedir(d);
  return out;
}

std::string unique_prefix(const char* what) {
  return std::string("spindle-shmtest-") + what + "-" + std::to_string(::getpid());
}

// Forks a child that owns node 5 with one region, reports on a pipe, then waits to die.
pid_t spawn_owner(const std::string& prefix) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    {
      st::ShmTransport t(st::ShmConfig{5, prefix});
      (void)t.create_region(1, 4096);
      char ok = 1;
      (void)::write(fds[1], &ok, 1);
      ::pause();
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  char ok = 0;
  REQUIRE(::read(fds[0], &ok, 1) == 1);
  ::close(fds[0]);
  return pid;
}

// The VmFlags of the mapping of this process that contains `addr` ("" if none).
std::string vm_flags(const void* addr) {
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {  // a mapping's first line
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

}  // namespace

TEST_CASE("shm: regions of a huge page or more are advised to use huge pages", "[shm]") {
  // Whether the kernel backs them with huge pages depends on the tmpfs behind /dev/shm;
  // the advice itself (VmFlags "hg") is ours to give, in every process that maps them.
  const auto prefix = unique_prefix("huge");
  st::ShmTransport t(st::ShmConfig{1, prefix});
  const auto big = t.create_region(1, std::size_t{4} << 20);
  const auto small = t.create_region(2, 4096);
  const auto big_flags = vm_flags(big.bytes.data());
  INFO(big_flags);
  REQUIRE_FALSE(big_flags.empty());
  CHECK(big_flags.find(" hg") != std::string::npos);
  const auto small_flags = vm_flags(small.bytes.data());
  INFO(small_flags);
  REQUIRE_FALSE(small_flags.empty());
  CHECK(small_flags.find(" hg") == std::string::npos);
}

TEST_CASE("shm: a transport removes its segments when destroyed", "[shm]") {
  const auto prefix = unique_prefix("clean");
  {
    st::ShmTransport t(st::ShmConfig{1, prefix});
    (void)t.create_region(1, 4096);
    (void)t.create_region(2, 1 << 20);
    CHECK(segments(prefix).size() == 3);
  }
  CHECK(segments(prefix).empty());
}

TEST_CASE("shm: segments of a SIGKILLed node are reclaimed at the next start", "[shm]") {
  const auto prefix = unique_prefix("stale");
  const pid_t owner = spawn_owner(prefix);
  CHECK(segments(prefix).size() == 2);
  ::kill(owner, SIGKILL);
  int status = 0;
  ::waitpid(owner, &status, 0);
  CHECK(segments(prefix).size() == 2);  // a crash leaves them behind
  {
    st::ShmTransport t(st::ShmConfig{5, prefix});  // same node id: reclaims and starts
    CHECK(segments(prefix).size() == 1);           // only its fresh control segment
  }
  CHECK(segments(prefix).empty());
}

TEST_CASE("shm: a node id owned by a live process is refused with a clear message", "[shm]") {
  const auto prefix = unique_prefix("live");
  const pid_t owner = spawn_owner(prefix);
  try {
    st::ShmTransport t(st::ShmConfig{5, prefix});
    FAIL("a second owner of node 5 was accepted");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("in use by live process " + std::to_string(owner)));
  }
  ::kill(owner, SIGKILL);
  int status = 0;
  ::waitpid(owner, &status, 0);
  CHECK(st::ShmTransport::reclaim_stale(prefix) == 2);
  CHECK(segments(prefix).empty());
}
