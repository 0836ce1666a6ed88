// The auto transport: shared memory between members that give the same host, tcp to the
// others, in one view (here "another host" is another loopback address); one region and one
// wake-up source whichever way a write came; members of one host that start at different
// times; a node without room in /dev/shm.
#include <unistd.h>

#include <array>
#include <cstring>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <variant>
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

constexpr const char* kHere = "127.0.0.1";
constexpr const char* kElsewhere = "127.0.0.2";

std::unique_ptr<st::AutoTransport> make(st::NodeId id, const std::string& ns,
                                        const char* host = kHere, std::uint64_t min_shm_free = 0) {
  st::AutoConfig c;
  c.tcp.self = st::NodeAddress{id, host, 0};
  c.tcp.heartbeat_interval = 50ms;
  c.tcp.suspicion_timeout = 2000ms;
  c.shm.name_prefix = ns;
  c.min_shm_free = min_shm_free;
  auto t = std::make_unique<st::AutoTransport>(c);
  (void)t->create_region(kRegion, kRegionBytes);
  return t;
}

st::NodeAddress address(const st::AutoTransport& t, const char* host) {
  return st::NodeAddress{t.self(), host, t.port()};
}

// Connects every transport to the view of all of them, side by side (as members do).
void connect_all(const std::vector<std::pair<st::AutoTransport*, const char*>>& ts) {
  std::vector<st::NodeAddress> view;
  for (auto [t, host] : ts)
    view.push_back(address(*t, host));
  std::vector<std::future<st::Status>> done;
  for (auto [t, host] : ts)
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
  const auto ns = prefix("mixed");
  // a and b give one host; c another, as a member on another host would.
  auto a = make(1, ns);
  auto b = make(2, ns);
  auto c = make(3, ns, kElsewhere);
  REQUIRE(a->shm_unavailable().empty());
  CHECK(a->kind() == "auto");
  // A region of rows (one page each): read in place between a and b only.
  constexpr st::RegionId kRows = 9;
  constexpr std::size_t kRow = st::kRowAlign;
  const std::vector<st::WriteGrant> rows{
      {1, {{0, kRow}}}, {2, {{kRow, kRow}}}, {3, {{2 * kRow, kRow}}}};
  for (auto* t : {a.get(), b.get(), c.get()}) {
    CHECK(t->keeps_rows_in_place());
    (void)t->create_rows_region(kRows, 3 * kRow, rows);
  }
  connect_all({{a.get(), kHere}, {b.get(), kHere}, {c.get(), kElsewhere}});
  CHECK(a->row_in_place(2, kRows));
  CHECK(b->row_in_place(1, kRows));
  CHECK_FALSE(a->row_in_place(3, kRows));
  CHECK_FALSE(c->row_in_place(1, kRows));
  CHECK_FALSE(a->row_in_place(2, kRegion));

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
  std::vector<st::NodeAddress> view{address(*a, kHere), address(*b, kHere)};
  auto fa = std::async(std::launch::async, [&] { return a->connect(view, 2, 5s); });
  CHECK(b->connect(view, 2, 5s) == st::Status::ok);
  CHECK(fa.get() == st::Status::ok);
  CHECK(a->over_shm(2));
  write_and_see(*a, *b, 320, 0x6666);
}

TEST_CASE("auto: members of one host that start apart still meet over shared memory", "[auto]") {
  // A domain file's members start together: one may connect before the other's segments
  // exist. The choice does not depend on who came first.
  const auto ns = prefix("late");
  auto a = make(1, ns);
  std::promise<st::NodeAddress> late;
  auto late_address = late.get_future().share();
  auto fa = std::async(std::launch::async, [&] {
    std::vector<st::NodeAddress> view{address(*a, kHere), late_address.get()};
    return a->connect(view, 1, 5s);
  });
  std::this_thread::sleep_for(200ms);  // a looks for b's segments before b exists
  auto b = make(2, ns);
  const std::vector<st::NodeAddress> view{address(*a, kHere), address(*b, kHere)};
  late.set_value(view[1]);
  CHECK(b->connect(view, 1, 5s) == st::Status::ok);
  CHECK(fa.get() == st::Status::ok);
  CHECK(a->over_shm(2));
  CHECK(b->over_shm(1));
  write_and_see(*a, *b, 0, 0x7777);
}

TEST_CASE("auto: a node without memory to share uses tcp; a same-host peer is told why", "[auto]") {
  const auto ns = prefix("full");
  // More memory than any host has: b's shm half never starts.
  auto b = make(2, ns, kHere, ~std::uint64_t{0});
  INFO(b->shm_unavailable());
  CHECK(b->shm_unavailable().find("shared memory: this process may use") != std::string::npos);
  CHECK(b->shm_unavailable().find("min_shm_free") != std::string::npos);
  // A peer of another host reaches it over tcp, as it reaches everyone.
  auto far = make(1, ns, kElsewhere);
  connect_all({{far.get(), kElsewhere}, {b.get(), kHere}});
  CHECK_FALSE(far->over_shm(2));
  CHECK_FALSE(b->over_shm(1));
  write_and_see(*far, *b, 0, 0x8888);
  write_and_see(*b, *far, 64, 0x9999);
  for (auto* t : {far.get(), b.get()})
    t->disconnect();
  // A peer of its host expects shared memory from it, waits, and names the prefix.
  auto near = make(3, ns);
  const std::vector<st::NodeAddress> view{address(*near, kHere), address(*b, kHere)};
  auto fb = std::async(std::launch::async, [&] { return b->connect(view, 2, 300ms); });
  CHECK(near->connect(view, 2, 300ms) == st::Status::peer_suspected);
  (void)fb.get();
  std::vector<st::Event> events;
  near->poll(events);
  bool named = false;
  for (const auto& e : events)
    if (const auto* s = std::get_if<st::Suspicion>(&e))
      named = named || (s->peer == 2 && s->detail.find(ns) != std::string::npos);
  CHECK(named);
}
