// The auto transport: shared memory between members whose segments meet on this host, tcp
// to the others, in one view; one region and one wake-up source whichever way a write came;
// a node without room in /dev/shm reaches everyone over tcp, and they it.
#include <unistd.h>

#include <array>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <spindle/transport/auto.hpp>

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr st::RegionId kRegion = 7;
constexpr std::size_t kRegionBytes = 4096;

std::string prefix(const char* what) {
  return std::string("spindle-autotest-") + what + "-" + std::to_string(::getpid());
}

std::unique_ptr<st::AutoTransport> make(st::NodeId id, const std::string& ns,
                                        std::uint64_t min_shm_free = 0) {
  st::AutoConfig c;
  c.tcp.self = st::NodeAddress{id, "127.0.0.1", 0};
  c.tcp.heartbeat_interval = 50ms;
  c.tcp.suspicion_timeout = 2000ms;
  c.shm.name_prefix = ns;
  c.min_shm_free = min_shm_free;
  auto t = std::make_unique<st::AutoTransport>(c);
  (void)t->create_region(kRegion, kRegionBytes);
  return t;
}

// Connects every transport to the view of all of them, side by side (as members do).
void connect_all(const std::vector<st::AutoTransport*>& ts) {
  std::vector<st::NodeAddress> view;
  for (auto* t : ts)
    view.push_back(st::NodeAddress{t->self(), "127.0.0.1", t->port()});
  std::vector<std::future<st::Status>> done;
  for (auto* t : ts)
    done.push_back(std::async(std::launch::async, [t, &view] { return t->connect(view, 1, 5s); }));
  for (auto& d : done)
    REQUIRE(d.get() == st::Status::ok);
}

// Writes `word` at `offset` of `from`'s region into `to`'s, and waits (bounded) until `to`
// sees it, proving the write woke `to`'s one wake-up source.
void write_and_see(st::AutoTransport& from, st::AutoTransport& to, std::uint64_t offset,
                   std::uint64_t word) {
  auto mine = from.local_region(kRegion);
  REQUIRE(mine);
  std::memcpy(mine->bytes.data() + offset, &word, sizeof word);
  const auto ticket = to.activity();
  REQUIRE(from.write(to.self(), kRegion, offset, kRegion, offset, sizeof word) == st::Status::ok);
  auto theirs = to.local_region(kRegion);
  REQUIRE(theirs);
  const auto deadline = Clock::now() + 5s;
  std::uint64_t seen = 0;
  while (Clock::now() < deadline) {
    std::memcpy(&seen, theirs->bytes.data() + offset, sizeof seen);
    if (seen == word) break;
    to.wait(ticket, 100ms);
  }
  CHECK(seen == word);
  CHECK(to.activity() != ticket);
}

}  // namespace

TEST_CASE("auto: same-host pairs over shared memory, the others over tcp, in one view", "[auto]") {
  const auto near = prefix("near");
  const auto far = prefix("far");
  // a and b share a namespace (they see each other's segments); c lives in another one,
  // as a member on another host would.
  auto a = make(1, near);
  auto b = make(2, near);
  auto c = make(3, far);
  REQUIRE(a->shm_unavailable().empty());
  CHECK(a->kind() == "auto");
  connect_all({a.get(), b.get(), c.get()});

  CHECK(a->over_shm(2));
  CHECK(b->over_shm(1));
  CHECK_FALSE(a->over_shm(3));
  CHECK_FALSE(b->over_shm(3));
  CHECK_FALSE(c->over_shm(1));
  CHECK_FALSE(c->over_shm(2));
  CHECK(a->remote_region(2, kRegion));
  CHECK(a->remote_region(3, kRegion));

  // Into one region from both sides: b over shared memory, c over tcp.
  write_and_see(*b, *a, 0, 0x1111);
  write_and_see(*c, *a, 64, 0x2222);
  write_and_see(*a, *b, 128, 0x3333);
  write_and_see(*a, *c, 192, 0x4444);
  write_and_see(*c, *b, 256, 0x5555);

  // A new view re-splits; the old one's routes are gone meanwhile.
  for (auto* t : {a.get(), b.get(), c.get()})
    t->disconnect();
  CHECK_FALSE(a->over_shm(2));
  std::vector<st::NodeAddress> view{{1, "127.0.0.1", a->port()}, {2, "127.0.0.1", b->port()}};
  auto fa = std::async(std::launch::async, [&] { return a->connect(view, 2, 5s); });
  CHECK(b->connect(view, 2, 5s) == st::Status::ok);
  CHECK(fa.get() == st::Status::ok);
  CHECK(a->over_shm(2));
  write_and_see(*a, *b, 320, 0x6666);
}

TEST_CASE("auto: a node without room in /dev/shm reaches everyone over tcp, and they it",
          "[auto]") {
  const auto ns = prefix("full");
  auto a = make(1, ns);
  // More free space than any /dev/shm has: b's shm half never starts.
  auto b = make(2, ns, ~std::uint64_t{0});
  CHECK(b->shm_unavailable().find("/dev/shm") != std::string::npos);
  INFO(b->shm_unavailable());
  connect_all({a.get(), b.get()});
  CHECK_FALSE(a->over_shm(2));
  CHECK_FALSE(b->over_shm(1));
  write_and_see(*a, *b, 0, 0x7777);
  write_and_see(*b, *a, 64, 0x8888);
}

TEST_CASE("auto: a peer whose process is gone is not taken for a same-host one", "[auto]") {
  const auto ns = prefix("gone");
  auto a = make(1, ns);
  auto b = make(2, ns);
  CHECK(a->over_shm(2) == false);  // nothing connected yet
  b.reset();                       // its segments go with it
  auto b2 = make(2, prefix("elsewhere"));
  connect_all({a.get(), b2.get()});
  CHECK_FALSE(a->over_shm(2));
  write_and_see(*a, *b2, 0, 0x9999);
}
