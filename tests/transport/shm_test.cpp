// Shared-memory transport specifics: no segment has a name, a SIGKILLed node leaves nothing
// (while a peer that mapped its memory keeps reading it), named segments of earlier versions
// are reclaimed at start, a node id is one live process's, only the same user gets a
// segment, and peers whose domain or must-agree settings differ refuse each other with both
// values named.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/shm.hpp>

#include "../smc/die_with_parent.hpp"

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
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
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

// The start of this process's mapping whose line in /proc/self/maps contains `what`.
std::optional<const void*> mapping(const std::string& what) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(what) == std::string::npos) continue;
    std::uintptr_t lo = 0;
    std::istringstream(line) >> std::hex >> lo;
    return reinterpret_cast<const void*>(lo);
  }
  return std::nullopt;
}

// A pid no process has: a child's, reaped.
std::uint64_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return static_cast<std::uint64_t>(pid);
}

// A named segment as versions up to 2 made them: header (`version`, `kind`, owner `pid`,
// ready) and a payload of 4224 bytes.
void make_named(const std::string& name, std::uint32_t version, std::uint32_t kind,
                std::uint64_t pid) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  REQUIRE(fd >= 0);
  constexpr std::size_t kBytes = 64 + 4224;
  REQUIRE(::ftruncate(fd, kBytes) == 0);
  void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  REQUIRE(p != MAP_FAILED);
  auto* b = static_cast<unsigned char*>(p);
  const std::uint32_t ready = 1;
  const std::uint64_t payload = 4224;
  std::memcpy(b, "SPNDLSHM", 8);
  std::memcpy(b + 8, &version, 4);
  std::memcpy(b + 12, &kind, 4);
  std::memcpy(b + 16, &pid, 8);
  std::memcpy(b + 24, &payload, 8);
  std::memcpy(b + 32, &ready, 4);
  ::munmap(p, kBytes);
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

TEST_CASE("shm: a transport names nothing in /dev/shm, and its socket goes with it", "[shm]") {
  const auto prefix = unique_prefix("clean");
  {
    st::ShmTransport t(st::ShmConfig{1, prefix});
    (void)t.create_region(1, 4096);
    (void)t.create_region(2, 1 << 20);
    CHECK(segments(prefix).empty());
    CHECK(st::ShmTransport::live_nodes(prefix) == std::vector<st::NodeId>{1});
  }
  CHECK(segments(prefix).empty());
  CHECK(st::ShmTransport::live_nodes(prefix).empty());
}

TEST_CASE("shm: a SIGKILLed node leaves nothing, and a peer that mapped its region still reads it",
          "[shm][failure]") {
  const auto prefix = unique_prefix("killed");
  const std::vector<st::NodeAddress> members{{1, "", 0}, {5, "", 0}};
  int up[2];
  REQUIRE(::pipe(up) == 0);
  const pid_t parent = ::getpid();
  const pid_t owner = ::fork();
  REQUIRE(owner >= 0);
  if (owner == 0) {
    spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
    ::close(up[0]);
    st::ShmTransport t(st::ShmConfig{5, prefix});
    auto bytes = t.create_region(1, 4096).bytes;
    std::memset(bytes.data(), 0x6B, bytes.size());
    const char ok = t.connect(members, 1, 5s) == st::Status::ok ? 1 : 0;
    (void)::write(up[1], &ok, 1);
    ::pause();
    ::_exit(0);
  }
  ::close(up[1]);
  {
    st::ShmTransport t(st::ShmConfig{1, prefix});
    (void)t.create_region(1, 4096);
    REQUIRE(t.connect(members, 1, 5s) == st::Status::ok);
    char ok = 0;
    REQUIRE(::read(up[0], &ok, 1) == 1);
    REQUIRE(ok == 1);
    CHECK(st::ShmTransport::live_nodes(prefix) == std::vector<st::NodeId>{1, 5});
    CHECK(segments(prefix).empty());
    ::kill(owner, SIGKILL);
    int status = 0;
    ::waitpid(owner, &status, 0);
    CHECK(st::ShmTransport::live_nodes(prefix) == std::vector<st::NodeId>{1});
    CHECK(segments(prefix).empty());
    // Our mapping of node 5's region, found by its memfd's name, still holds what it wrote.
    const std::string memfd = "/memfd:" + prefix + ".n5.r1 ";
    auto region = mapping(memfd);
    REQUIRE(region);
    const auto* b = reinterpret_cast<const unsigned char*>(*region);
    // A region's payload starts after its header page (docs/transport-shm.md).
    for (std::size_t i = 4096; i < 4096 + 4096; ++i)
      if (b[i] != 0x6B) FAIL("byte " << i << " of node 5's region reads " << int{b[i]});
    t.disconnect();
    CHECK_FALSE(mapping(memfd));  // unmapped: the kernel frees it now
  }
  ::close(up[0]);
  CHECK(st::ShmTransport::live_nodes(prefix).empty());
}

TEST_CASE("shm: named segments of an earlier version whose owner is gone are unlinked at start",
          "[shm]") {
  const auto prefix = unique_prefix("stale");
  const auto dead = dead_pid();
  make_named("/" + prefix + ".n5", 2, 1, dead);
  make_named("/" + prefix + ".n5.r1", 2, 2, dead);
  make_named("/" + prefix + ".n7", 2, 1, static_cast<std::uint64_t>(::getpid()));  // alive
  REQUIRE(segments(prefix).size() == 3);
  {
    st::ShmTransport t(st::ShmConfig{5, prefix});
    CHECK(segments(prefix) == std::vector<std::string>{prefix + ".n7"});
  }
  ::shm_unlink(("/" + prefix + ".n7").c_str());
}

TEST_CASE("shm: a sweep of every prefix unlinks dead owners' segments, and only theirs", "[shm]") {
  const auto dead_prefix = unique_prefix("sweep-dead");
  const auto live_prefix = unique_prefix("sweep-live");
  const auto dead = dead_pid();
  make_named("/" + dead_prefix + ".n5", 2, 1, dead);
  make_named("/" + dead_prefix + ".n5.r1", 2, 2, dead);
  make_named("/" + live_prefix + ".n5", 2, 1, static_cast<std::uint64_t>(::getpid()));
  CHECK(st::ShmTransport::reclaim_all_stale() >= 2);
  CHECK(segments(dead_prefix).empty());
  CHECK(segments(live_prefix).size() == 1);  // its owner still runs
  ::shm_unlink(("/" + live_prefix + ".n5").c_str());
}

TEST_CASE("shm: a node id owned by a live process is refused with a clear message", "[shm]") {
  const auto prefix = unique_prefix("live");
  const pid_t owner = spawn_owner(prefix);
  try {
    st::ShmTransport t(st::ShmConfig{5, prefix});
    FAIL("a second owner of node 5 was accepted");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("in use by live process " + std::to_string(owner)) &&
                             Catch::Contains("(is this node id taken?)"));
  }
  ::kill(owner, SIGKILL);
  int status = 0;
  ::waitpid(owner, &status, 0);
  CHECK(segments(prefix).empty());
  st::ShmTransport t(st::ShmConfig{5, prefix});  // its id is free again at once
}

TEST_CASE("shm: a process of another user gets nothing from a node's socket", "[shm]") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root, to become another user");
    return;
  }
  const auto prefix = unique_prefix("cred");
  st::ShmTransport t(st::ShmConfig{1, prefix});
  (void)t.create_region(1, 4096);
  // Each child asks for node 1's control segment the raw way, as `uid`, and exits with what
  // it got: 0 an fd, 1 an answer without one, 2 nothing (the connection was dropped).
  // Everything the child needs is made before fork(): it runs beside our threads' heap.
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string name = prefix + ".n1";
  std::memcpy(addr.sun_path + 1, name.data(), name.size());
  const auto len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  const std::string want = "/" + name;
  auto ask_as = [&](uid_t uid) {
    const pid_t parent = ::getpid();
    const pid_t child = ::fork();
    if (child == 0) {
      spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
      if (uid != 0 && ::setuid(uid) != 0) ::_exit(3);
      const int s = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
      if (::connect(s, reinterpret_cast<sockaddr*>(&addr), len) != 0) ::_exit(4);
      (void)::send(s, want.data(), want.size(), MSG_NOSIGNAL);
      char status = 0;
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
      iovec iov{&status, 1};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      const auto n = ::recvmsg(s, &msg, 0);
      if (n != 1) ::_exit(2);
      ::_exit(CMSG_FIRSTHDR(&msg) != nullptr ? 0 : 1);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  CHECK(ask_as(0) == 0);      // the same user: the fd
  CHECK(ask_as(65534) == 2);  // nobody: dropped unanswered
}

namespace {

// Nodes 1 and 2 under one prefix connect to each other; returns each side's result and
// the detail of the suspicion it raised (empty if none).
struct Refusal {
  st::Status status = st::Status::ok;
  st::SuspicionReason reason = st::SuspicionReason::connection_lost;
  std::string detail;
};

// Connects nodes 1 (ta) and 2 (tb) in view 1 at once, each waiting up to 2 s for the other;
// their statuses.
std::pair<st::Status, st::Status> connect_both(st::ShmTransport& ta, st::ShmTransport& tb,
                                               std::uint64_t epoch = 1) {
  const std::vector<st::NodeAddress> members{{1, "", 0}, {2, "", 0}};
  auto fa = std::async(std::launch::async, [&] { return ta.connect(members, epoch, 2s); });
  auto fb = std::async(std::launch::async, [&] { return tb.connect(members, epoch, 2s); });
  return {fa.get(), fb.get()};
}

// How many mappings of this process show memfd `name` (its segment's name, no slash), with
// permissions `perms` if given ("r--s": a peer's row mapped in place).
int mappings_of(const std::string& name, const std::string& perms = {}) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  int n = 0;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, p;
    in >> range >> p;
    if (line.find("/memfd:" + name + " ") != std::string::npos && (perms.empty() || p == perms))
      ++n;
  }
  return n;
}

std::pair<Refusal, Refusal> connect_pair(st::ShmConfig a, st::ShmConfig b) {
  st::ShmTransport ta(std::move(a)), tb(std::move(b));
  (void)ta.create_region(1, 4096);
  (void)tb.create_region(1, 4096);
  const auto [sa, sb] = connect_both(ta, tb);
  auto result = [](st::ShmTransport& t, st::Status s) {
    Refusal r{s, {}, {}};
    std::vector<st::Event> ev;
    t.poll(ev);
    for (auto& e : ev) {
      if (auto* sp = std::get_if<st::Suspicion>(&e)) {
        r.reason = sp->reason;
        r.detail = sp->detail;
      }
    }
    return r;
  };
  auto out = std::pair(result(ta, sa), result(tb, sb));
  ta.disconnect();
  tb.disconnect();
  return out;
}

}  // namespace

TEST_CASE("shm: peers of different domains refuse each other, naming both", "[shm][handshake]") {
  const auto prefix = unique_prefix("domain");
  st::ShmConfig a{1, prefix};
  st::ShmConfig b{2, prefix};
  b.domain_id = 3;
  const auto [ra, rb] = connect_pair(a, b);
  CHECK(ra.status == st::Status::peer_suspected);
  CHECK(ra.reason == st::SuspicionReason::mismatch);
  CHECK(ra.detail == "node 2 is in domain 3, this node in domain 0");
  CHECK(rb.status == st::Status::peer_suspected);
  CHECK(rb.detail == "node 1 is in domain 0, this node in domain 3");
  CHECK(segments(prefix).empty());
}

TEST_CASE("shm: a must-agree setting that differs is refused, naming both values",
          "[shm][handshake]") {
  const auto prefix = unique_prefix("settings");
  st::ShmConfig a{1, prefix};
  a.must_agree = {{"protocol", "1"}, {"engine.slot_size", "1024"}};
  st::ShmConfig b{2, prefix};
  b.must_agree = {{"protocol", "1"}, {"engine.slot_size", "2048"}};
  const auto [ra, rb] = connect_pair(a, b);
  CHECK(ra.status == st::Status::peer_suspected);
  CHECK(ra.reason == st::SuspicionReason::mismatch);
  CHECK(ra.detail == "engine.slot_size: node 2 has 2048, this node 1024");
  CHECK(rb.detail == "engine.slot_size: node 1 has 1024, this node 2048");

  b.must_agree = {{"protocol", "1"}};
  const auto [rc, rd] = connect_pair(a, b);
  CHECK(rc.detail == "engine.slot_size: node 2 does not state it, this node has 1024");
  CHECK(rd.detail == "engine.slot_size: node 1 has 1024, this node does not state it");

  b.must_agree = a.must_agree;
  const auto [re, rf] = connect_pair(a, b);
  CHECK(re.status == st::Status::ok);
  CHECK(rf.status == st::Status::ok);
}

TEST_CASE("shm: must-agree settings that cannot be stored are refused at start",
          "[shm][handshake]") {
  st::ShmConfig a{1, unique_prefix("toolong")};
  a.must_agree = {{"", "x"}};
  CHECK_THROWS_WITH(st::ShmTransport(a),
                    "shm: must_agree setting '': name must be 1..255 bytes and value at most 255");
}

TEST_CASE("shm: a peer of another segment layout version is refused, naming both",
          "[shm][handshake]") {
  const auto prefix = unique_prefix("version");
  st::ShmTransport t(st::ShmConfig{1, prefix});
  (void)t.create_region(1, 4096);
  // Node 2's CONTROL as version 1 named it: header, then a payload without the settings.
  const std::string name = "/" + prefix + ".n2";
  make_named(name, 1, 1, static_cast<std::uint64_t>(::getpid()));
  const std::vector<st::NodeAddress> members{{1, "", 0}, {2, "", 0}};
  CHECK(t.connect(members, 1, 1s) == st::Status::peer_suspected);
  std::vector<st::Event> ev;
  t.poll(ev);
  REQUIRE(ev.size() == 1);
  const auto& s = std::get<st::Suspicion>(ev[0]);
  CHECK(s.reason == st::SuspicionReason::mismatch);
  CHECK(s.detail == "node 2 uses shm segment layout version 1, this node version 4");
  ::shm_unlink(name.c_str());
}

TEST_CASE("shm: must-agree settings larger than the control segment holds are refused",
          "[shm][handshake]") {
  st::ShmConfig a{1, unique_prefix("big")};
  for (int i = 0; i < 20; ++i)
    a.must_agree.push_back({std::to_string(i) + "s", std::string(250, 'v')});
  CHECK_THROWS_WITH(st::ShmTransport(a), Catch::StartsWith("shm: must_agree settings take ") &&
                                             Catch::EndsWith(" bytes, more than 4096"));
}

namespace {

// Forks a child that connects `config` as a member of view 1 of `members` and waits until
// told to go (or is killed); returns once it has connected. go() lets it exit (destroying
// its transport), wait() reaps it.
class ConnectedPeer {
 public:
  ConnectedPeer(const st::ShmConfig& config, const std::vector<st::NodeAddress>& members) {
    int up[2], down[2];  // child -> parent: connected; parent -> child: you may go
    REQUIRE(::pipe(up) == 0);
    REQUIRE(::pipe(down) == 0);
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
      ::close(up[0]);
      ::close(down[1]);
      {
        st::ShmTransport t(config);
        (void)t.create_region(1, 4096);
        const char ok = t.connect(members, 1, 5s) == st::Status::ok ? 1 : 0;
        (void)::write(up[1], &ok, 1);
        char go = 0;
        (void)::read(down[0], &go, 1);
      }
      ::_exit(0);
    }
    ::close(up[1]);
    ::close(down[0]);
    go_fd_ = down[1];
    up_fd_ = up[0];
  }
  ~ConnectedPeer() {
    ::close(up_fd_);
    ::close(go_fd_);
    if (!reaped_) ::kill(pid_, SIGKILL);  // a test that failed midway
    wait();
  }
  ConnectedPeer(const ConnectedPeer&) = delete;
  ConnectedPeer& operator=(const ConnectedPeer&) = delete;

  // True once the child connected view 1 (call after connecting the parent's side).
  bool connected() {
    char ok = 0;
    return ::read(up_fd_, &ok, 1) == 1 && ok == 1;
  }
  void go() {
    const char go = 1;
    REQUIRE(::write(go_fd_, &go, 1) == 1);
  }
  void wait() {
    if (reaped_) return;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    reaped_ = true;
  }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int up_fd_ = -1;
  int go_fd_ = -1;
  bool reaped_ = false;
};

}  // namespace

TEST_CASE("shm: a peer whose process exits is suspected at once, not at the next check",
          "[shm][failure]") {
  // Monitor period 5 s and no silence timeout: only the peer's exit itself (its pidfd) can
  // explain a suspicion within a second.
  const auto prefix = unique_prefix("exit");
  const std::vector<st::NodeAddress> members{{1, "", 0}, {2, "", 0}};
  auto config = [&](st::NodeId id) {
    st::ShmConfig c{id, prefix};
    c.heartbeat_interval = 5s;
    c.suspicion_timeout = 0ms;
    return c;
  };
  ConnectedPeer peer(config(2), members);
  st::ShmTransport t(config(1));
  (void)t.create_region(1, 4096);
  REQUIRE(t.connect(members, 1, 5s) == st::Status::ok);
  REQUIRE(peer.connected());
  std::this_thread::sleep_for(50ms);  // the monitor is asleep in its 5 s period
  const auto killed = std::chrono::steady_clock::now();
  ::kill(peer.pid(), SIGKILL);
  std::optional<st::Suspicion> seen;
  std::vector<st::Event> ev;
  while (!seen && std::chrono::steady_clock::now() - killed < 3s) {
    t.wait(t.activity(), 10ms);
    ev.clear();
    t.poll(ev);
    for (auto& e : ev)
      if (auto* s = std::get_if<st::Suspicion>(&e)) seen = *s;
  }
  const auto after = std::chrono::steady_clock::now() - killed;
  peer.wait();
  REQUIRE(seen);
  CHECK(seen->peer == 2);
  CHECK(seen->reason == st::SuspicionReason::connection_lost);
  CHECK(seen->detail.find("is gone") != std::string::npos);
  CHECK(after < 1s);
  t.disconnect();
  CHECK(segments(prefix).empty());  // the killed peer left nothing
}

TEST_CASE("shm: connecting a view whose member exited meanwhile does not wait the timeout",
          "[shm][failure]") {
  // Node 2 is in view 1 and exits before view 2: view 2's connect must suspect it at once
  // (its process is gone), not wait for it for the whole connect timeout.
  const auto prefix = unique_prefix("gone");
  const std::vector<st::NodeAddress> members{{1, "", 0}, {2, "", 0}};
  ConnectedPeer peer(st::ShmConfig{2, prefix}, members);
  st::ShmTransport t(st::ShmConfig{1, prefix});
  (void)t.create_region(1, 4096);
  REQUIRE(t.connect(members, 1, 5s) == st::Status::ok);
  REQUIRE(peer.connected());
  peer.go();
  peer.wait();
  t.disconnect();
  const auto start = std::chrono::steady_clock::now();
  CHECK(t.connect(members, 2, 5s) == st::Status::peer_suspected);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  std::vector<st::Event> ev;
  t.poll(ev);
  bool named = false;
  for (auto& e : ev)
    if (auto* s = std::get_if<st::Suspicion>(&e))
      named = named || (s->peer == 2 && s->detail.find("is gone") != std::string::npos);
  CHECK(named);
  t.disconnect();
}

// Rows belong to their owners. A peer writes straight into our mapping, so shm checks on the
// writer's side: a write outside this node's grant never leaves (Status::invalid), and
// nothing of it reaches the peer's memory (docs/transport-shm.md, "Who may write what").
TEST_CASE("shm: a write outside the writer's own row is refused before it is copied",
          "[shm][rows]") {
  const auto prefix = unique_prefix("rows");
  st::ShmTransport ta(st::ShmConfig{1, prefix});
  st::ShmTransport tb(st::ShmConfig{2, prefix});
  const std::vector<st::WriteGrant> rows{{1, {{0, 1024}}}, {2, {{1024, 1024}}}};
  auto a = ta.create_region(7, 4096).bytes;
  auto b = tb.create_region(7, 4096).bytes;
  ta.restrict_writes(7, rows);
  tb.restrict_writes(7, rows);
  REQUIRE(connect_both(ta, tb) == std::pair(st::Status::ok, st::Status::ok));
  std::memset(b.data(), 0x5A, 4096);
  CHECK(tb.write(1, 7, 1024, 7, 1024, 64) == st::Status::ok);       // its own row
  CHECK(tb.write(1, 7, 512, 7, 512, 8) == st::Status::invalid);     // node 1's row
  CHECK(tb.write(1, 7, 2040, 7, 2040, 16) == st::Status::invalid);  // past its row's end
  const st::WriteOp ops[] = {{7, 1100, 7, 1100, 8}, {7, 0, 7, 0, 8}, {7, 1200, 7, 1200, 8}};
  const auto batch = tb.write_batch(1, ops);
  CHECK(batch.posted == 1);
  CHECK(batch.status == st::Status::invalid);
  CHECK(a[1024] == std::byte{0x5A});
  CHECK(a[1100] == std::byte{0x5A});
  for (std::size_t i = 0; i < 1024; ++i)
    if (a[i] != std::byte{0}) FAIL("node 1's row written at " << i);
  CHECK(a[1200] == std::byte{0});
  CHECK_THROWS_AS(ta.restrict_writes(7, rows), std::logic_error);  // connected
  ta.disconnect();
  tb.disconnect();
}

TEST_CASE(
    "shm: rows in place are read where their owner stored them; a write of one copies "
    "nothing and wakes the peer",
    "[shm][rows]") {
  const auto prefix = unique_prefix("inplace");
  st::ShmTransport ta(st::ShmConfig{1, prefix});
  st::ShmTransport tb(st::ShmConfig{2, prefix});
  constexpr std::size_t kRow = st::kRowAlign;
  const std::vector<st::WriteGrant> rows{{1, {{0, kRow}}}, {2, {{kRow, 2 * kRow}}}};
  auto a = ta.create_region(7, 3 * kRow).bytes;
  auto b = tb.create_region(7, 3 * kRow).bytes;
  ta.share_rows(7, rows);
  tb.share_rows(7, rows);
  // Rows not on page boundaries keep copies.
  const std::vector<st::WriteGrant> ragged{{1, {{0, 100}}}, {2, {{100, 100}}}};
  auto ca = ta.create_region(8, 4096).bytes;
  auto cb = tb.create_region(8, 4096).bytes;
  ta.share_rows(8, ragged);
  tb.share_rows(8, ragged);
  REQUIRE(connect_both(ta, tb) == std::pair(st::Status::ok, st::Status::ok));

  // Node 1's stores show in node 2's region at once, before any write().
  std::memset(a.data(), 0x11, kRow);
  for (std::size_t i = 0; i < kRow; ++i)
    if (b[i] != std::byte{0x11}) FAIL("node 2 reads " << int(b[i]) << " at " << i);
  std::memset(b.data() + kRow, 0x22, 2 * kRow);
  CHECK(a[kRow] == std::byte{0x22});
  CHECK(a[3 * kRow - 1] == std::byte{0x22});
  // A write of one's own row copies nothing and rings the peer's doorbell; one outside it is
  // refused as before.
  const auto ticket = tb.activity();
  CHECK(ta.write(2, 7, 0, 7, 0, kRow) == st::Status::ok);
  CHECK(tb.activity() != ticket);
  CHECK(ta.write(2, 7, kRow, 7, kRow, 8) == st::Status::invalid);
  // The peer's row is mapped read-only from its owner's segment, and only that row.
  {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    int rows_of_1 = 0, rows_of_2 = 0;
    while (std::getline(maps, line)) {
      std::uintptr_t lo = 0, hi = 0;
      char dash = 0;
      std::string perms;
      std::istringstream in(line);
      in >> std::hex >> lo >> dash >> hi >> perms;
      if (line.find("/memfd:" + prefix + ".n1.r7 ") != std::string::npos && perms == "r--s") {
        CHECK(hi - lo == kRow);
        CHECK(lo == reinterpret_cast<std::uintptr_t>(b.data()));
        ++rows_of_1;
      }
      if (line.find("/memfd:" + prefix + ".n2.r7 ") != std::string::npos && perms == "r--s") {
        CHECK(hi - lo == 2 * kRow);
        CHECK(lo == reinterpret_cast<std::uintptr_t>(a.data() + kRow));
        ++rows_of_2;
      }
    }
    CHECK(rows_of_1 == 1);
    CHECK(rows_of_2 == 1);
  }

  // Region 8 keeps copies: a store shows at the peer only once written.
  std::memset(ca.data(), 0x33, 100);
  CHECK(cb[0] == std::byte{0});
  CHECK(ta.write(2, 8, 0, 8, 0, 100) == st::Status::ok);
  CHECK(cb[0] == std::byte{0x33});
  CHECK(cb[99] == std::byte{0x33});

  // Disconnected, each region still reads the peer's row as it left it (as a copy would),
  // from its own memory: the peer's segment is no longer mapped here, and what the peer
  // stores from now on does not show.
  ta.disconnect();
  tb.disconnect();
  CHECK(b[0] == std::byte{0x11});
  CHECK(a[kRow] == std::byte{0x22});
  CHECK(a[0] == std::byte{0x11});  // its own row
  std::memset(a.data(), 0x44, kRow);
  CHECK(b[0] == std::byte{0x11});
  CHECK(b[kRow - 1] == std::byte{0x11});
  // Neither row is mapped in place any more (read-only, shared): each segment is mapped by
  // its owner alone.
  CHECK(mappings_of(prefix + ".n1.r7", "r--s") == 0);
  CHECK(mappings_of(prefix + ".n2.r7", "r--s") == 0);
  CHECK(mappings_of(prefix + ".n1.r7") >= 1);
}

// Rows kept mapped (Transport::keep_rows_mapped; RDMC's senders' buffers, which loans read
// after the view): past disconnect the peer's row stays the peer's memory, mapped here, until
// the region is retired; row_in_place() names the rows read in place while connected.
TEST_CASE(
    "shm: rows kept mapped stay the peer's past disconnect until retired, and "
    "row_in_place names the rows read in place",
    "[shm][rows]") {
  const auto prefix = unique_prefix("keep");
  st::ShmTransport ta(st::ShmConfig{1, prefix});
  auto tb = std::make_unique<st::ShmTransport>(st::ShmConfig{2, prefix});
  constexpr std::size_t kRow = st::kRowAlign;
  const std::vector<st::WriteGrant> rows{{1, {{0, kRow}}}, {2, {{kRow, kRow}}}};
  auto a = ta.create_rows_region(7, 2 * kRow, rows).bytes;
  auto b = tb->create_rows_region(7, 2 * kRow, rows).bytes;
  (void)ta.create_region(8, 4096);
  (void)tb->create_region(8, 4096);
  CHECK(ta.keeps_rows_in_place());
  ta.keep_rows_mapped(7);  // node 1 only: node 2 keeps copies of node 1's row
  REQUIRE(connect_both(ta, *tb) == std::pair(st::Status::ok, st::Status::ok));
  CHECK(ta.row_in_place(2, 7));
  CHECK(tb->row_in_place(1, 7));
  CHECK_FALSE(ta.row_in_place(2, 8));                         // no rows declared
  CHECK_FALSE(ta.row_in_place(3, 7));                         // no such peer
  CHECK_THROWS_AS(ta.keep_rows_mapped(7), std::logic_error);  // connected
  std::memset(a.data(), 0x11, kRow);
  std::memset(b.data() + kRow, 0x22, kRow);
  CHECK(b[0] == std::byte{0x11});
  CHECK(a[kRow] == std::byte{0x22});

  ta.disconnect();
  tb->disconnect();
  CHECK_FALSE(ta.row_in_place(2, 7));
  // Node 1 still maps node 2's row: node 2's stores show; node 2 copied node 1's row.
  std::memset(b.data() + kRow, 0x33, kRow);
  std::memset(a.data(), 0x44, kRow);
  CHECK(a[kRow] == std::byte{0x33});
  CHECK(b[0] == std::byte{0x11});
  CHECK(mappings_of(prefix + ".n2.r7", "r--s") == 1);
  CHECK(mappings_of(prefix + ".n1.r7", "r--s") == 0);
  // Node 2 gone, its region with it: the row reads as node 2 left it, its memory alive
  // while mapped here.
  tb.reset();
  CHECK(a[kRow] == std::byte{0x33});
  CHECK(a[2 * kRow - 1] == std::byte{0x33});
  // Retired: the view is over here too, and the row is no longer mapped.
  ta.retire_region(7);
  CHECK(mappings_of(prefix + ".n2.r7", "r--s") == 0);
}

// Transport::place_blocks: a block lands where the placer says (no posted receive used); one
// it has no place for takes the oldest posted receive; a placer's owner alone clears it.
TEST_CASE("shm: blocks land where the block placer says, the others in posted receives",
          "[shm][blocks]") {
  const auto prefix = unique_prefix("place");
  st::ShmTransport ta(st::ShmConfig{1, prefix});
  st::ShmTransport tb(st::ShmConfig{2, prefix});
  auto a = ta.create_region(5, 4096).bytes;
  auto b = tb.create_region(5, 4096).bytes;
  REQUIRE(connect_both(ta, tb) == std::pair(st::Status::ok, st::Status::ok));
  // Node 2 places blocks with an odd immediate at 1024 + 256 * immediate; the rest go to its
  // one posted receive at 0.
  int owner = 0;
  int asked = 0;
  tb.place_blocks(&owner, [&](st::NodeId peer, std::uint32_t imm, std::uint32_t length) {
    ++asked;
    CHECK(peer == 1);
    CHECK(length == 64);
    return imm % 2 == 1 ? std::optional(st::BlockPlace{5, 1024 + 256 * std::uint64_t{imm}})
                        : std::nullopt;
  });
  REQUIRE(tb.post_receive(1, 5, 0, 128) == st::Status::ok);
  // Polls node 2 until `n` blocks came (or `limit` passed).
  const auto take = [&tb](std::size_t n, std::chrono::milliseconds limit = 5s) {
    std::vector<st::BlockReceived> got;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
      std::vector<st::Event> events;
      tb.poll(events);
      for (const auto& e : events)
        if (const auto* r = std::get_if<st::BlockReceived>(&e)) got.push_back(*r);
      if (got.size() < n) std::this_thread::sleep_for(1ms);
    }
    return got;
  };
  for (std::uint32_t imm : {1u, 2u, 3u}) {
    std::memset(a.data() + 64 * imm, static_cast<int>(0x10 * imm), 64);
    REQUIRE(ta.send_block(2, 5, 64 * imm, 64, imm) == st::Status::ok);
  }
  auto got = take(3);
  REQUIRE(got.size() == 3);
  CHECK(asked == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    const std::uint32_t imm = got[k].immediate;
    CHECK(imm == k + 1);  // in the order sent
    CHECK(got[k].placed == (imm % 2 == 1));
    CHECK(got[k].offset == (imm % 2 == 1 ? 1024 + 256 * imm : 0));
    CHECK(b[got[k].offset] == std::byte(0x10 * imm));
    CHECK(b[got[k].offset + 63] == std::byte(0x10 * imm));
  }
  // Cleared by someone else: still placing (no receive is posted now).
  int other = 0;
  tb.place_blocks(&other, nullptr);
  REQUIRE(ta.send_block(2, 5, 64, 64, 5) == st::Status::ok);
  got = take(1);
  REQUIRE(got.size() == 1);
  CHECK(got[0].placed);
  CHECK(got[0].offset == 1024 + 256 * 5);
  // Cleared by its owner: a block waits for a posted receive.
  tb.place_blocks(&owner, nullptr);
  REQUIRE(ta.send_block(2, 5, 64, 64, 7) == st::Status::ok);
  CHECK(take(1, 200ms).empty());
  REQUIRE(tb.post_receive(1, 5, 128, 128) == st::Status::ok);
  got = take(1);
  REQUIRE(got.size() == 1);
  CHECK(got[0].immediate == 7);
  CHECK(!got[0].placed);
  CHECK(got[0].offset == 128);
  CHECK(asked == 4);
  ta.disconnect();
  tb.disconnect();
}

// A region made with its rows declared (create_rows_region, as the SST makes its own): its
// owner never maps the segment whole, only the header page and its own row, and the rows are
// in place as with create_region() then share_rows().
TEST_CASE("shm: a region made with its rows maps only the owner's row of it", "[shm][rows]") {
  const auto prefix = unique_prefix("rowsmade");
  st::ShmTransport ta(st::ShmConfig{1, prefix});
  st::ShmTransport tb(st::ShmConfig{2, prefix});
  constexpr std::size_t kRow = st::kRowAlign;
  const std::vector<st::WriteGrant> rows{{1, {{0, kRow}}}, {2, {{kRow, 3 * kRow}}}};
  auto a = ta.create_rows_region(7, 4 * kRow, rows).bytes;
  // Mapped of node 1's segment: the header page and row 0, nothing of row 1.
  {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    std::uint64_t mapped = 0;
    while (std::getline(maps, line)) {
      if (line.find("/memfd:" + prefix + ".n1.r7 ") == std::string::npos) continue;
      std::uintptr_t lo = 0, hi = 0;
      char dash = 0;
      std::istringstream in(line);
      in >> std::hex >> lo >> dash >> hi;
      mapped += hi - lo;
    }
    CHECK(mapped == 4096 + kRow);
  }
  auto b = tb.create_rows_region(7, 4 * kRow, rows).bytes;
  REQUIRE(connect_both(ta, tb) == std::pair(st::Status::ok, st::Status::ok));
  std::memset(a.data(), 0x21, kRow);
  CHECK(b[kRow - 1] == std::byte{0x21});  // in place: seen before any write()
  std::memset(b.data() + kRow, 0x42, 3 * kRow);
  CHECK(a[4 * kRow - 1] == std::byte{0x42});
  CHECK(ta.write(2, 7, 0, 7, 0, kRow) == st::Status::ok);
  CHECK(ta.write(2, 7, kRow, 7, kRow, 8) == st::Status::invalid);  // node 2's row
  ta.disconnect();
  tb.disconnect();
  // Rows that cannot be in place are made as create_region() makes them: copies.
  const std::vector<st::WriteGrant> ragged{{1, {{0, 100}}}, {2, {{100, 100}}}};
  CHECK(ta.create_rows_region(8, 4096, ragged).bytes.size() == 4096);
}

// A view that ended: its region's memory goes while the node is connected to the next view
// (Transport::retire_region), and a peer that still has the region of that view does not
// map it (RegionEntry flag kRetired): it connects to the next view all the same.
TEST_CASE("shm: a retired region is unmapped at once, and a peer connects without it",
          "[shm][rows]") {
  const auto prefix = unique_prefix("retire");
  st::ShmTransport ta(st::ShmConfig{1, prefix});
  st::ShmTransport tb(st::ShmConfig{2, prefix});
  constexpr std::size_t kRow = st::kRowAlign;
  const std::vector<st::WriteGrant> rows{{1, {{0, kRow}}}, {2, {{kRow, kRow}}}};
  auto a7 = ta.create_region(7, 2 * kRow).bytes;
  (void)tb.create_region(7, 2 * kRow);
  ta.share_rows(7, rows);
  tb.share_rows(7, rows);
  REQUIRE(connect_both(ta, tb, 1) == std::pair(st::Status::ok, st::Status::ok));
  std::memset(a7.data(), 0x11, kRow);
  ta.disconnect();
  tb.disconnect();
  // The next view: region 9 on both sides; node 2 still has region 7, node 1 retires it as
  // soon as it is connected.
  auto a9 = ta.create_region(9, 2 * kRow).bytes;
  auto b9 = tb.create_region(9, 2 * kRow).bytes;
  ta.share_rows(9, rows);
  tb.share_rows(9, rows);
  auto fa = std::async(std::launch::async, [&] {
    const std::vector<st::NodeAddress> members{{1, "", 0}, {2, "", 0}};
    const auto s = ta.connect(members, 2, 2s);
    ta.retire_region(7);
    return s;
  });
  std::this_thread::sleep_for(50ms);  // node 1 is connected (waiting) or retired already
  const std::vector<st::NodeAddress> members{{1, "", 0}, {2, "", 0}};
  CHECK(tb.connect(members, 2, 2s) == st::Status::ok);
  CHECK(fa.get() == st::Status::ok);
  CHECK(mappings_of(prefix + ".n1.r7") == 0);  // nobody maps node 1's region 7 any more
  CHECK(mappings_of(prefix + ".n1.r9") >= 1);
  // The retired range stays addressable, and the next view works as before.
  CHECK(a7[0] == std::byte{0});
  std::memset(a9.data(), 0x55, kRow);
  CHECK(b9[0] == std::byte{0x55});
  CHECK(ta.write(2, 9, 0, 9, 0, kRow) == st::Status::ok);
  ta.disconnect();
  tb.disconnect();
  ta.release_region(7);
  CHECK_NOTHROW(ta.release_region(9));
}

// Shared memory is memory: segments are memfds, charged to the memory cgroup, whatever
// /dev/shm's size. A segment the process cannot give the memory to is refused when it is
// made, with the bytes it needs, the room there is, what bounds it and the fix (issue 62),
// instead of a process killed later by the OOM killer when traffic touches the pages.
TEST_CASE("shm: a segment larger than the memory this process may use is refused, saying why",
          "[shm][memory]") {
  const auto room = st::ShmTransport::memory_room();
  INFO(room.bound);
  CHECK(room.bytes > 0);
  CHECK_FALSE(room.bound.empty());
  st::ShmTransport t(st::ShmConfig{1, unique_prefix("room")});
  const std::size_t huge = std::size_t{1} << 50;  // a PiB
  try {
    (void)t.create_region(7, huge);
    FAIL("a region of a PiB was made");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("needs " + std::to_string(huge) + " bytes of shared memory") !=
          std::string::npos);
    CHECK(what.find("this process may use") != std::string::npos);
    CHECK(what.find("docker run --memory") != std::string::npos);
    CHECK(what.find("engine.rdmc_buffer_size") != std::string::npos);
  }
  // Nothing of it stays: the next region is made as usual.
  CHECK(t.create_region(8, 4096).bytes.size() == 4096);
  // A region of rows in place needs only its own row: one larger than the room in all is
  // made where our row fits (RDMC's senders' buffers: every writer's space, each held by
  // its owner), and refused where our row does not.
  const std::size_t page = st::kRowAlign;
  const std::size_t beyond = (room.bytes / page + 1) * page + (std::size_t{1} << 30);
  const std::vector<st::WriteGrant> small_row{{1, {{0, page}}}, {2, {{page, beyond}}}};
  CHECK(t.create_rows_region(9, page + beyond, small_row).bytes.size() == page + beyond);
  const std::vector<st::WriteGrant> big_row{{2, {{0, page}}}, {1, {{page, beyond}}}};
  try {
    (void)t.create_rows_region(10, page + beyond, big_row);
    FAIL("a region whose own row is larger than the room was made");
  } catch (const std::runtime_error& e) {
    CHECK_THAT(e.what(), Catch::Contains("needs " + std::to_string(beyond) + " bytes"));
  }
}
