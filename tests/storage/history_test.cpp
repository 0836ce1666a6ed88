// storage::History (runtime/src/storage/history.hpp): the retained history of one topic —
// depth per (writer, instance) or per instance, lifecycle changes kept after the samples,
// the limits on samples and instances, a writer going, restoring a transferred history.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "storage/history.hpp"

namespace spindle::storage {
namespace {

KeyHash key(std::uint8_t k) {
  KeyHash h{};
  h[0] = k;
  return h;
}

std::vector<std::byte> bytes(const std::string& s) {
  std::vector<std::byte> out;
  for (char c : s)
    out.push_back(static_cast<std::byte>(c));
  return out;
}

// Every entry as "writer:key:kind:text", oldest first.
std::vector<std::string> dump(const History& h) {
  std::vector<std::string> out;
  for (const auto& e : h.snapshot()) {
    std::string text;
    for (auto b : e.message)
      text.push_back(static_cast<char>(b));
    // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on a + chain.
    std::string line = std::to_string(e.writer);
    line += ':';
    line += std::to_string(e.key[0]);
    line += ':';
    line += std::to_string(static_cast<int>(e.kind));
    line += ':';
    line += text;
    out.push_back(std::move(line));
  }
  return out;
}

WriterTerms local(std::int32_t depth) {
  WriterTerms t;
  t.depth = depth;
  return t;
}

WriterTerms service(std::int32_t depth) {
  WriterTerms t;
  t.per_writer = false;
  t.outlives_writer = true;
  t.depth = depth;
  return t;
}

TEST_CASE("depth per writer and instance, in arrival order", "[history]") {
  History h;
  h.add_writer(1, local(2));
  h.add_writer(2, local(2));
  for (int i = 1; i <= 3; ++i) {
    REQUIRE(h.retain(1, key(7), ChangeKind::data,
                     bytes(std::string(1, 'a').append(std::to_string(i)))));
    REQUIRE(h.retain(2, key(7), ChangeKind::data,
                     bytes(std::string(1, 'b').append(std::to_string(i)))));
  }
  CHECK(dump(h) == std::vector<std::string>{"1:7:1:a2", "2:7:1:b2", "1:7:1:a3", "2:7:1:b3"});
  CHECK(h.stats().evicted == 2);
  CHECK(h.stats().instances == 2);  // (writer, instance) slots
}

TEST_CASE("an unknown writer's message is not kept", "[history]") {
  History h;
  CHECK_FALSE(h.retain(9, key(1), ChangeKind::data, bytes("x")));
  CHECK(dump(h).empty());
}

TEST_CASE("lifecycle changes follow the samples, new data drops them", "[history]") {
  History h;
  h.add_writer(1, local(2));
  (void)h.retain(1, key(1), ChangeKind::data, bytes("d1"));
  (void)h.retain(1, key(1), ChangeKind::data, bytes("d2"));
  (void)h.retain(1, key(1), ChangeKind::dispose, bytes("x1"));
  (void)h.retain(1, key(1), ChangeKind::dispose, bytes("x2"));  // replaces the first
  (void)h.retain(1, key(1), ChangeKind::unregister, bytes("u"));
  CHECK(dump(h) == std::vector<std::string>{"1:1:1:d1", "1:1:1:d2", "1:1:2:x2", "1:1:3:u"});
  (void)h.retain(1, key(1), ChangeKind::data, bytes("d3"));  // lives again
  CHECK(dump(h) == std::vector<std::string>{"1:1:1:d2", "1:1:1:d3"});
}

TEST_CASE("TRANSIENT_LOCAL goes with its writer, TRANSIENT stays", "[history]") {
  History h;
  h.add_writer(1, local(5));
  h.add_writer(2, service(5));
  (void)h.retain(1, key(1), ChangeKind::data, bytes("a"));
  (void)h.retain(2, key(1), ChangeKind::data, bytes("b"));
  h.retire(1);
  h.retire(2);
  CHECK(dump(h) == std::vector<std::string>{"2:1:1:b"});
  // Late messages of a gone writer: kept when its history outlives it, else not.
  CHECK_FALSE(h.retain(1, key(1), ChangeKind::data, bytes("a2")));
  CHECK(h.retain(2, key(1), ChangeKind::data, bytes("b2")));
  CHECK(dump(h) == std::vector<std::string>{"2:1:1:b", "2:1:1:b2"});
}

// A member that halted retires every other member's writers; when it rejoins, the state
// announces the live ones again, and their messages from then on are kept.
TEST_CASE("a retired writer announced again is kept again", "[history]") {
  History h;
  h.add_writer(1, local(5));
  (void)h.retain(1, key(1), ChangeKind::data, bytes("a"));
  h.retire(1);
  CHECK_FALSE(h.retain(1, key(1), ChangeKind::data, bytes("b")));
  h.add_writer(1, local(5));
  CHECK(h.retain(1, key(1), ChangeKind::data, bytes("c")));
  CHECK(dump(h) == std::vector<std::string>{"1:1:1:c"});
}

TEST_CASE("TRANSIENT keeps the instance's last samples whoever wrote them", "[history]") {
  History h;
  h.add_writer(1, service(2));
  h.add_writer(2, service(2));
  (void)h.retain(1, key(3), ChangeKind::data, bytes("a"));
  (void)h.retain(2, key(3), ChangeKind::data, bytes("b"));
  (void)h.retain(1, key(3), ChangeKind::data, bytes("c"));
  CHECK(dump(h) == std::vector<std::string>{"2:3:1:b", "1:3:1:c"});
}

TEST_CASE("max_samples drops the oldest, max_instances the stalest instance", "[history]") {
  History h;
  auto t = local(kUnlimited);
  t.max_samples = 3;
  h.add_writer(1, t);
  for (int i = 1; i <= 5; ++i)
    (void)h.retain(1, key(static_cast<std::uint8_t>(i % 2)), ChangeKind::data,
                   bytes(std::to_string(i)));
  CHECK(dump(h) == std::vector<std::string>{"1:1:1:3", "1:0:1:4", "1:1:1:5"});

  History g;
  auto u = local(kUnlimited);
  u.max_instances = 2;
  g.add_writer(1, u);
  (void)g.retain(1, key(1), ChangeKind::data, bytes("a"));
  (void)g.retain(1, key(2), ChangeKind::data, bytes("b"));
  (void)g.retain(1, key(1), ChangeKind::data, bytes("c"));
  (void)g.retain(1, key(3), ChangeKind::data, bytes("d"));  // instance 2 is the stalest
  CHECK(dump(g) == std::vector<std::string>{"1:1:1:a", "1:1:1:c", "1:3:1:d"});
  CHECK(g.stats().instances == 2);
  CHECK(g.stats().bytes == 3);
}

TEST_CASE("a restored history continues where the sender's left off", "[history]") {
  History a;
  a.add_writer(1, local(3));
  for (int i = 1; i <= 4; ++i)
    (void)a.retain(1, key(1), ChangeKind::data, bytes(std::to_string(i)));
  History b;
  b.add_writer(1, local(3));
  for (auto& e : a.snapshot())
    b.restore(std::move(e));
  CHECK(dump(b) == dump(a));
  (void)a.retain(1, key(1), ChangeKind::data, bytes("5"));
  (void)b.retain(1, key(1), ChangeKind::data, bytes("5"));
  CHECK(dump(b) == dump(a));
  CHECK(b.snapshot().back().seq == a.snapshot().back().seq);
}

}  // namespace
}  // namespace spindle::storage
