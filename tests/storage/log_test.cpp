// The durable log (storage/log.hpp): records round-trip across segments and reopening, in
// strictly increasing order; a cursor seeks by order; retention drops whole old segments;
// a lost or damaged index is rebuilt with the same results; a tail torn at any byte is cut
// back to exactly the records before it, with a report naming file, offset and bytes;
// corruption followed by more data is refused (or set aside by repair, nothing deleted);
// bogus lengths allocate nothing; a write that fails for lack of space (RLIMIT_FSIZE,
// EFBIG) leaves every acknowledged record intact. The [tool] cases run spindle-log.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <boost/crc.hpp>
#include <catch2/catch.hpp>

#include "die_with_parent.hpp"
#include "storage/home.hpp"
#include "storage/log.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;
namespace st = spindle::storage;
using st::Order;

namespace {

// A directory of its own under the system's temporary directory, removed at the end.
using spindle::testing::TempDir;

fs::path seg(const fs::path& dir, std::uint64_t n, const char* ext = ".seg") {
  std::string s = std::to_string(n);
  return dir / (std::string(20 - s.size(), '0') + s + ext);
}

std::vector<std::byte> payload(std::uint64_t i, std::size_t size) {
  std::vector<std::byte> p(size);
  for (std::size_t j = 0; j < size; ++j)
    p[j] = static_cast<std::byte>((i * 31 + j * 7) & 0xff);
  return p;
}

Order order_of(std::uint64_t i) {
  return {1 + i / 50, i % 50};
}  // a view change every 50
std::size_t size_of(std::uint64_t i) {
  return (i * 37) % 300;
}

void append_range(st::Log& log, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t i = from; i < to; ++i)
    log.append(order_of(i), static_cast<std::uint16_t>(1 + i % 2), payload(i, size_of(i)));
}

struct Got {
  Order order;
  std::uint16_t kind;
  std::vector<std::byte> payload;
  std::uint64_t segment, offset;
};

std::vector<Got> read_all(st::Cursor c, std::size_t limit = 1'000'000) {
  std::vector<Got> out;
  while (out.size() < limit) {
    auto r = c.next();
    if (!r) break;
    out.push_back(
        {r->order, r->kind, {r->payload.begin(), r->payload.end()}, r->segment, r->offset});
  }
  return out;
}

// Records i in [from, to) as append_range wrote them, in order.
// The orders a cursor reads, to its end.
std::vector<Order> orders_of(st::Cursor c) {
  std::vector<Order> out;
  while (auto rec = c.next())
    out.push_back(rec->order);
  return out;
}

void check_range(const std::vector<Got>& got, std::uint64_t from, std::uint64_t to) {
  REQUIRE(got.size() == to - from);
  for (std::uint64_t i = from; i < to; ++i) {
    const auto& g = got[i - from];
    REQUIRE(g.order == order_of(i));
    REQUIRE(g.kind == 1 + i % 2);
    REQUIRE(g.payload == payload(i, size_of(i)));
  }
}

std::vector<char> read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& p, const std::vector<char>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(b.data(), static_cast<std::streamsize>(b.size()));
}

void flip(const fs::path& p, std::uint64_t offset) {
  auto b = read_file(p);
  REQUIRE(offset < b.size());
  b[offset] = static_cast<char>(b[offset] ^ 0x5a);
  write_file(p, b);
}

std::uint32_t crc32c(const char* p, std::size_t n) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> c;
  c.process_bytes(p, n);
  return c.checksum();
}

void put32(std::vector<char>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[at + static_cast<std::size_t>(i)] = static_cast<char>(v >> (8 * i));
}

st::LogOptions options(const fs::path& dir) {
  st::LogOptions o;
  o.dir = dir;
  o.segment_bytes = 4096;
  o.index_interval = 512;
  return o;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("round trip", "[log]") {
  TempDir t;
  {
    st::RecoveryReport r;
    auto log = st::Log::open(options(t.path()), &r);
    CHECK_FALSE(r.damaged());
    CHECK(log.records() == 0);
    append_range(log, 0, 300);
    CHECK(log.segments() > 5);
    CHECK(log.records() == 300);
    CHECK(log.last() == order_of(299));
    check_range(read_all(log.read()), 0, 300);
    log.sync();
    CHECK(log.durable() == order_of(299));
  }
  st::RecoveryReport r;
  auto log = st::Log::open(options(t.path()), &r);
  INFO(r.to_string());
  CHECK_FALSE(r.damaged());
  CHECK(r.index_rebuilt.empty());
  CHECK(r.records == 300);
  CHECK(r.first == order_of(0));
  CHECK(r.last == order_of(299));
  CHECK(log.bytes() == r.bytes);
  check_range(read_all(log.read()), 0, 300);
  append_range(log, 300, 400);
  check_range(read_all(log.read()), 0, 400);
  check_range(read_all(st::read_log(t.path())), 0, 400);
  // Empty payloads and a payload larger than a segment.
  log.append({900, 0}, 7, {});
  log.append({900, 1}, 8, payload(5, 20000));
  auto got = read_all(log.read({900, 0}));
  REQUIRE(got.size() == 2);
  CHECK(got[0].payload.empty());
  CHECK(got[1].payload == payload(5, 20000));
  CHECK(st::verify(t.path()).clean());
}

TEST_CASE("batch append", "[log]") {
  TempDir t;
  auto log = st::Log::open(options(t.path()));
  std::vector<std::vector<std::byte>> payloads;
  std::vector<st::AppendItem> items;
  for (std::uint64_t i = 0; i < 200; ++i)
    payloads.push_back(payload(i, size_of(i)));
  for (std::uint64_t i = 0; i < 200; ++i)
    items.push_back({order_of(i), static_cast<std::uint16_t>(1 + i % 2), payloads[i]});
  log.append(items);
  CHECK(log.segments() > 3);
  check_range(read_all(log.read()), 0, 200);
  // A batch with an order out of place is refused whole.
  std::vector<st::AppendItem> bad = {{{100, 0}, 1, {}}, {{99, 0}, 1, {}}};
  CHECK_THROWS_AS(log.append(bad), st::LogError);
  CHECK(log.records() == 200);
}

TEST_CASE("seek", "[log]") {
  TempDir t;
  auto log = st::Log::open(options(t.path()));
  append_range(log, 0, 400);
  for (std::uint64_t i = 0; i < 400; i += 7) {
    auto got = read_all(log.read(order_of(i)), 1);
    REQUIRE(got.size() == 1);
    CHECK(got[0].order == order_of(i));
  }
  // Between records: the next one; before all: the first; after all: nothing.
  auto got = read_all(log.read({2, 49}), 1);  // order_of(99) = {2, 49}
  REQUIRE(got.size() == 1);
  CHECK(got[0].order == (Order{2, 49}));
  got = read_all(log.read({3, 1000}), 1);
  REQUIRE(got.size() == 1);
  CHECK(got[0].order == (Order{4, 0}));
  check_range(read_all(log.read({0, 0})), 0, 400);
  CHECK(read_all(log.read({1000, 0})).empty());
  std::uint64_t seen = 0;
  CHECK(log.for_each(order_of(390), [&](const st::RecordView& r) {
    CHECK(r.order == order_of(390 + seen));
    return ++seen < 5;
  }) == 5);
}

TEST_CASE("order is monotonic", "[log]") {
  TempDir t;
  {
    auto log = st::Log::open(options(t.path()));
    log.append({5, 5}, 1, payload(0, 10));
    try {
      log.append({5, 5}, 1, payload(0, 10));
      FAIL("an equal order was accepted");
    } catch (const st::LogError& e) {
      CHECK(contains(e.what(), "5:5 is not after the last record 5:5"));
    }
    CHECK_THROWS_AS(log.append({4, 9}, 1, {}), st::LogError);
    CHECK(log.records() == 1);
    log.append({5, 6}, 1, {});
    log.append({6, 0}, 1, {});
  }
  auto log = st::Log::open(options(t.path()));
  CHECK(log.last() == (Order{6, 0}));
  CHECK_THROWS_AS(log.append({5, 7}, 1, {}), st::LogError);
  CHECK(log.records() == 3);
}

TEST_CASE("retention by size", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.retain_bytes = 3 * 4096;
  auto log = st::Log::open(o);
  append_range(log, 0, 400);
  const auto before = log.segments();
  log.apply_retention(std::chrono::system_clock::now());
  CHECK(log.segments() < before);
  CHECK(log.bytes() <= o.retain_bytes);
  CHECK(log.bytes() > o.retain_bytes - 4096);
  const auto got = read_all(log.read());
  REQUIRE(!got.empty());
  const std::uint64_t first = 400 - got.size();
  check_range(got, first, 400);
  CHECK_FALSE(fs::exists(seg(t.path(), 1)));
  CHECK_FALSE(fs::exists(seg(t.path(), 1, ".idx")));
  CHECK(log.records() == got.size());
}

TEST_CASE("retention by age", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.retain_age = std::chrono::hours(1);
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 300);
    const auto segments = log.segments();
    const auto now = std::chrono::system_clock::now();
    log.apply_retention(now);
    CHECK(log.segments() == segments);
    log.apply_retention(now + std::chrono::minutes(59));
    CHECK(log.segments() == segments);
    log.apply_retention(now + std::chrono::hours(2));
    CHECK(log.segments() == 1);  // never the active one
    const auto got = read_all(log.read());
    CHECK(log.records() == got.size());
    check_range(got, 300 - got.size(), 300);
  }
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  CHECK_FALSE(r.damaged());
  CHECK(r.segments == 1);
}

TEST_CASE("index rebuilt", "[log]") {
  TempDir t;
  {
    auto log = st::Log::open(options(t.path()));
    append_range(log, 0, 400);
  }
  auto probe = [&](st::Log& log) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t i = 0; i < 400; i += 13) {
      auto got = read_all(log.read(order_of(i)));
      out.push_back(got.size());
      CHECK(got.front().order == order_of(i));
    }
    return out;
  };
  std::vector<std::uint64_t> want;
  {
    auto log = st::Log::open(options(t.path()));
    want = probe(log);
  }
  fs::remove(seg(t.path(), 1, ".idx"));
  fs::remove(seg(t.path(), 3, ".idx"));
  flip(seg(t.path(), 2, ".idx"), 30);   // inside the first entry
  flip(seg(t.path(), 4, ".idx"), 100);  // a later entry
  fs::resize_file(seg(t.path(), 5, ".idx"), 50);
  write_file(seg(t.path(), 6, ".idx"), std::vector<char>(200, 'x'));
  // An index naming records past the end of its segment: the segment lost its tail.
  {
    st::RecoveryReport r;
    auto log = st::Log::open(options(t.path()), &r);
    INFO(r.to_string());
    CHECK_FALSE(r.damaged());
    CHECK(r.index_rebuilt.size() == 6);
    CHECK(probe(log) == want);
    check_range(read_all(log.read()), 0, 400);
  }
  const auto v = st::verify(t.path());
  INFO(v.to_string());
  CHECK(v.clean());
  CHECK(v.notes.empty());
  st::RecoveryReport r;
  auto log = st::Log::open(options(t.path()), &r);
  CHECK(r.index_rebuilt.empty());
}

TEST_CASE("index past the end", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.segment_bytes = 1 << 20;
  o.index_interval = 64;
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 100);
    all = read_all(log.read());
  }
  // The segment loses its last 50 records at a record boundary; the index still names them.
  fs::resize_file(seg(t.path(), 1), all[50].offset);
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  CHECK_FALSE(r.damaged());
  CHECK(r.index_rebuilt.size() == 1);
  check_range(read_all(log.read()), 0, 50);
  check_range(read_all(log.read(order_of(30))), 30, 50);
  log.append(order_of(50), 1, payload(50, size_of(50)));
  check_range(read_all(log.read(order_of(40))), 40, 51);
}

TEST_CASE("torn tail", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.segment_bytes = 1 << 20;
  const fs::path orig = t.path() / "orig";
  std::vector<Got> all;
  {
    o.dir = orig;
    auto log = st::Log::open(o);
    append_range(log, 0, 20);
    log.append(order_of(20), 3, payload(20, 100));
    all = read_all(log.read());
  }
  const std::uint64_t last = all.back().offset;
  const auto bytes = read_file(seg(orig, 1));
  REQUIRE(bytes.size() == last + 144);  // 40 + 100 + 4 padding
  for (std::uint64_t cut = last + 1; cut < bytes.size(); ++cut) {
    const fs::path d = t.path() / ("cut" + std::to_string(cut));
    fs::create_directories(d);
    write_file(seg(d, 1), std::vector<char>(bytes.begin(), bytes.begin() + static_cast<long>(cut)));
    o.dir = d;
    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    INFO("cut at " << cut << ": " << r.to_string());
    REQUIRE(r.damage.size() == 1);
    const auto& dmg = r.damage[0];
    CHECK(dmg.torn);
    CHECK(dmg.file == seg(d, 1));
    CHECK(dmg.offset == last);
    CHECK(dmg.bytes == cut - last);
    CHECK(dmg.records == std::optional<std::uint64_t>(1));
    CHECK(dmg.problem == (cut - last < 40 ? st::Problem::short_header : st::Problem::short_record));
    CHECK(contains(r.to_string(), seg(d, 1).string() + " at offset " + std::to_string(last)));
    CHECK(contains(r.to_string(), std::to_string(cut - last) + " bytes"));
    CHECK(fs::file_size(seg(d, 1)) == last);
    check_range(read_all(log.read()), 0, 20);
    CHECK(log.last() == order_of(19));
    log.append(order_of(20), 3, payload(20, 100));
    REQUIRE(read_all(log.read()).size() == 21);
    fs::remove_all(d);
  }
  // The last record whole but with a bad CRC and nothing after it: torn too.
  {
    const fs::path d = t.path() / "badcrc";
    fs::create_directories(d);
    auto b = bytes;
    b[last + 60] = static_cast<char>(b[last + 60] ^ 1);
    write_file(seg(d, 1), b);
    o.dir = d;
    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    REQUIRE(r.damage.size() == 1);
    CHECK(r.damage[0].torn);
    CHECK(r.damage[0].problem == st::Problem::bad_crc);
    CHECK(log.records() == 20);
  }
}

TEST_CASE("torn segment header", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.segment_bytes = 2048;
  const fs::path orig = t.path() / "orig";
  std::vector<Got> all;
  {
    o.dir = orig;
    auto log = st::Log::open(o);
    append_range(log, 0, 40);
    all = read_all(log.read());
  }
  const std::uint64_t newest = all.back().segment;
  REQUIRE(newest >= 2);
  std::uint64_t before = 0;  // records in the older segments
  while (all[before].segment < newest)
    ++before;
  const auto bytes = read_file(seg(orig, newest));
  std::vector<std::vector<char>> cases;
  for (std::size_t cut = 0; cut < 32; ++cut)
    cases.emplace_back(bytes.begin(), bytes.begin() + static_cast<long>(cut));
  cases.emplace_back(32, '\0');
  cases.emplace_back(4096, '\0');  // written as zeros by a crash
  for (const auto& c : cases) {
    const fs::path d = t.path() / "case";
    fs::remove_all(d);
    fs::copy(orig, d);
    write_file(seg(d, newest), c);
    o.dir = d;
    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    INFO("size " << c.size() << ": " << r.to_string());
    REQUIRE(r.damage.size() == 1);
    CHECK(r.damage[0].torn);
    CHECK(r.damage[0].file == seg(d, newest));
    CHECK(r.damage[0].offset == 0);
    CHECK(r.damage[0].bytes == c.size());
    CHECK(fs::file_size(seg(d, newest)) == 32);
    check_range(read_all(log.read()), 0, before);
    log.append(order_of(before), static_cast<std::uint16_t>(1 + before % 2),
               payload(before, size_of(before)));
    check_range(read_all(log.read()), 0, before + 1);
  }
  // Only the header: a clean, empty segment.
  const fs::path d = t.path() / "header-only";
  fs::copy(orig, d);
  write_file(seg(d, newest), std::vector<char>(bytes.begin(), bytes.begin() + 32));
  o.dir = d;
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  CHECK_FALSE(r.damaged());
  CHECK(log.records() == before);
}

TEST_CASE("corruption", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.segment_bytes = 1 << 20;
  o.index_interval = 1 << 20;  // open() checks from the last index entry: here, all of it
  const fs::path orig = t.path() / "orig";
  std::vector<Got> all;
  {
    o.dir = orig;
    auto log = st::Log::open(o);
    append_range(log, 0, 30);
    all = read_all(log.read());
  }
  const auto bytes = read_file(seg(orig, 1));
  // A payload byte, a header byte, and the CRC field of record 10.
  for (const std::uint64_t within : {std::uint64_t{45}, std::uint64_t{17}, std::uint64_t{1}}) {
    const std::uint64_t at = all[10].offset;
    const fs::path d = t.path() / "case";
    fs::remove_all(d);
    fs::copy(orig, d);
    flip(seg(d, 1), at + within);
    o.dir = d;
    o.repair = false;
    try {
      auto log = st::Log::open(o);
      FAIL("corruption was accepted");
    } catch (const st::LogError& e) {
      INFO(e.what());
      CHECK(e.offset() == at);
      CHECK(e.file() == seg(d, 1));
      CHECK(contains(e.what(), seg(d, 1).string()));
      CHECK(contains(e.what(), "at offset " + std::to_string(at)));
      CHECK(contains(e.what(), within == 17 ? "bad header" : "bad crc"));
    }
    CHECK(fs::file_size(seg(d, 1)) == bytes.size());  // nothing changed
    const auto v = st::verify(d);
    INFO(v.to_string());
    CHECK_FALSE(v.clean());
    REQUIRE(v.damage.size() == 1);
    CHECK(v.damage[0].offset == at);
    CHECK(v.damage[0].bytes == all[11].offset - at);
    CHECK(v.records == 29);
    o.repair = true;
    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    INFO(r.to_string());
    REQUIRE(r.damage.size() == 1);
    const auto& dmg = r.damage[0];
    CHECK_FALSE(dmg.torn);
    CHECK(dmg.offset == at);
    CHECK(dmg.bytes == bytes.size() - at);
    CHECK(dmg.records == std::optional<std::uint64_t>(20));
    REQUIRE(dmg.set_aside.size() == 1);
    const auto aside = read_file(dmg.set_aside[0]);
    CHECK(dmg.set_aside[0].string().ends_with(".seg@" + std::to_string(at) + ".corrupt"));
    auto expect = std::vector<char>(bytes.begin() + static_cast<long>(at), bytes.end());
    expect[within] = static_cast<char>(expect[within] ^ 0x5a);
    CHECK(aside == expect);
    check_range(read_all(log.read()), 0, 10);
    log.append(order_of(10), 1, payload(10, size_of(10)));
    check_range(read_all(log.read()), 0, 11);
  }
  // Past the last index entry open() finds it; before it, readers and verify() do.
  {
    const fs::path d = t.path() / "indexed";
    o.dir = d;
    o.index_interval = 256;
    o.repair = false;
    std::vector<Got> recs;
    {
      auto log = st::Log::open(o);
      append_range(log, 0, 30);
      recs = read_all(log.read());
    }
    flip(seg(d, 1), recs[2].offset + 45);
    auto log = st::Log::open(o);
    CHECK_THROWS_AS(read_all(log.read()), st::LogError);
    CHECK(read_all(log.read(order_of(3))).size() == 27);
    CHECK(st::verify(d).damage.size() == 1);
  }
}

TEST_CASE("corruption in an older segment", "[log]") {
  TempDir t;
  auto o = options(t.path());
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 200);
    all = read_all(log.read());
  }
  REQUIRE(all.back().segment >= 4);
  // The last record of segment 2, so that nothing after it in the file is valid: still
  // corruption, since later segments follow.
  std::size_t k = 0;
  while (all[k + 1].segment <= 2)
    ++k;
  fs::remove(seg(t.path(), 2, ".idx"));  // so that open() scans all of segment 2
  flip(seg(t.path(), 2), all[k].offset + 42);
  CHECK_THROWS_AS(st::Log::open(o), st::LogError);
  o.repair = true;
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].file == seg(t.path(), 2));
  CHECK(r.damage[0].offset == all[k].offset);
  CHECK(r.damage[0].set_aside.size() == all.back().segment - 1);
  for (std::uint64_t n = 3; n <= all.back().segment; ++n) {
    CHECK_FALSE(fs::exists(seg(t.path(), n)));
    CHECK(fs::exists(seg(t.path(), n).string() + "@0.corrupt"));
  }
  check_range(read_all(log.read()), 0, k);
  append_range(log, k, k + 100);
  check_range(read_all(log.read()), 0, k + 100);
}

TEST_CASE("missing segment", "[log]") {
  TempDir t;
  auto o = options(t.path());
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 200);
  }
  fs::remove(seg(t.path(), 3));
  try {
    st::Log::open(o);
    FAIL("a gap was accepted");
  } catch (const st::LogError& e) {
    CHECK(contains(e.what(), "missing"));
    CHECK(e.file() == seg(t.path(), 4));
  }
  CHECK_FALSE(st::verify(t.path()).clean());
  o.repair = true;
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  CHECK(r.damage.size() == 1);
  CHECK(log.segments() == 2);
}

TEST_CASE("bogus length", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.segment_bytes = 1 << 20;
  o.index_interval = 1 << 20;
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 10);
    all = read_all(log.read());
  }
  const auto bytes = read_file(seg(t.path(), 1));
  // Length 0xfffffff0 with a header CRC to match (so that the length itself is judged), in
  // a middle record and in the last one.
  auto forge = [&](std::uint64_t at, std::uint32_t length) {
    auto b = bytes;
    put32(b, at + 8, length);
    put32(b, at + 4, crc32c(b.data() + at + 8, 32));
    return b;
  };
  for (const std::uint32_t length : {0xfffffff0u, st::kMaxPayload, 16u}) {
    write_file(seg(t.path(), 1), forge(all[4].offset, length));
    o.repair = false;
    try {
      st::Log::open(o);
      FAIL("a bogus length was accepted");
    } catch (const st::LogError& e) {
      CHECK(e.offset() == all[4].offset);
      CHECK(contains(e.what(), length == 16u               ? "bad crc"
                               : length == st::kMaxPayload ? "short record"
                                                           : "bad length"));
    }
    auto b = forge(all[9].offset, length);
    write_file(seg(t.path(), 1), b);
    CHECK(st::verify(t.path()).damage.size() == 1);
    CHECK_THROWS_AS(read_all(st::read_log(t.path())), st::LogError);
    const auto c = st::check_segment(std::as_bytes(std::span(b.data(), b.size())), 1, true);
    CHECK(c.records == 9);
    REQUIRE(c.damage);
    CHECK(c.damage->torn);
    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    REQUIRE(r.damage.size() == 1);
    CHECK(r.damage[0].torn);
    CHECK(r.damage[0].offset == all[9].offset);
    CHECK(log.records() == 9);
    log.append(order_of(9), 2, payload(9, size_of(9)));
  }
  // The same length without a matching header CRC: a bad header.
  auto b = bytes;
  put32(b, all[4].offset + 8, 0xfffffff0u);
  write_file(seg(t.path(), 1), b);
  try {
    st::Log::open(o);
    FAIL("a bad header was accepted");
  } catch (const st::LogError& e) {
    CHECK(contains(e.what(), "bad header"));
  }
}

namespace {

// A whole record as the log encodes it (docs/log-format.md), CRCs computed by Boost.CRC.
std::vector<char> encode_record(Order order, std::uint16_t kind, const std::vector<char>& body) {
  std::vector<char> r((40 + body.size() + 7) & ~std::size_t{7}, 0);
  put32(r, 8, static_cast<std::uint32_t>(body.size()));
  r[12] = static_cast<char>(kind & 0xff);
  r[13] = static_cast<char>(kind >> 8);
  for (int i = 0; i < 8; ++i) {
    r[16 + static_cast<std::size_t>(i)] = static_cast<char>(order.view >> (8 * i));
    r[24 + static_cast<std::size_t>(i)] = static_cast<char>(order.seq >> (8 * i));
  }
  std::copy(body.begin(), body.end(), r.begin() + 40);
  put32(r, 4, crc32c(r.data() + 8, 32));
  put32(r, 0, crc32c(r.data() + 4, r.size() - 4));
  return r;
}

// A log of `n` records in one segment, the record at about `fraction` of it overwritten with
// `bytes` bytes of garbage from 13 bytes into it. Returns every record as written and the
// first (k) and one past the last (j) record the damage touches.
struct Damaged {
  std::vector<Got> all;
  std::size_t k = 0, j = 0;
  std::uint64_t at = 0;  // offset of record k
};
Damaged damage_middle(const st::LogOptions& o, std::uint64_t n, double fraction,
                      std::size_t bytes) {
  Damaged d;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, n);
    d.all = read_all(log.read());
  }
  auto b = read_file(seg(o.dir, 1));
  const auto target = static_cast<std::uint64_t>(static_cast<double>(b.size()) * fraction);
  while (d.k + 1 < d.all.size() && d.all[d.k + 1].offset <= target)
    ++d.k;
  d.at = d.all[d.k].offset;
  const std::uint64_t from = d.at + 13, to = from + bytes;
  for (std::uint64_t p = from; p < to && p < b.size(); ++p)
    b[p] = static_cast<char>(0xA5 ^ (p * 131));
  write_file(seg(o.dir, 1), b);
  d.j = d.k;
  while (d.j < d.all.size() && d.all[d.j].offset < to)
    ++d.j;
  return d;
}

// The records of `all` but [k, j).
void check_all_but(const std::vector<Got>& got, std::uint64_t n, std::size_t k, std::size_t j) {
  REQUIRE(got.size() == n - (j - k));
  std::size_t g = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    if (i >= k && i < j) continue;
    INFO("record " << i);
    REQUIRE(got[g].order == order_of(i));
    REQUIRE(got[g].payload == payload(i, size_of(i)));
    ++g;
  }
}

}  // namespace

TEST_CASE("a damaged record in the middle of a segment is skipped", "[log]") {
  TempDir t;
  auto o = options(t.path() / "topic");
  o.segment_bytes = 1 << 20;
  o.skip_damage = true;
  constexpr std::uint64_t n = 1000;
  // The index lets open() check only the segment's end (index_interval 512): the cursor finds
  // the damage as it replays; without an index entry past it (1 MiB) open() finds it.
  for (const std::uint64_t interval : {std::uint64_t{512}, std::uint64_t{1} << 20}) {
    INFO("index interval " << interval);
    fs::remove_all(o.dir);
    o.index_interval = interval;
    const Damaged d = damage_middle(o, n, 0.9, 63);
    REQUIRE(d.j > d.k);
    REQUIRE(d.j < n);
    const std::uint64_t bytes = d.all[d.j].offset - d.at;

    // verify() and the loader skip the same stretch: file, offset, bytes, orders around it.
    const auto v = st::verify(o.dir);
    INFO(v.to_string());
    CHECK(v.records == n - (d.j - d.k));
    REQUIRE(v.damage.size() == 1);
    CHECK(v.damage[0].skipped);
    CHECK(v.damage[0].file == seg(o.dir, 1));
    CHECK(v.damage[0].offset == d.at);
    CHECK(v.damage[0].bytes == bytes);
    CHECK(v.damage[0].before == std::optional<Order>(order_of(d.k - 1)));
    CHECK(v.damage[0].after == std::optional<Order>(order_of(d.j)));

    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    INFO(r.to_string());
    const auto got = read_all(log.read());
    check_all_but(got, n, d.k, d.j);  // every intact record, before and after the damage
    // The report (open() found it) or the cursor (it replays) names the stretch.
    auto cursor = log.read();
    while (cursor.next()) {
    }
    REQUIRE(cursor.skipped().size() == 1);
    const auto& s = cursor.skipped()[0];
    CHECK(s.file == seg(o.dir, 1));
    CHECK(s.offset == d.at);
    CHECK(s.bytes == bytes);
    CHECK(s.before == std::optional<Order>(order_of(d.k - 1)));
    CHECK(s.after == std::optional<Order>(order_of(d.j)));
    CHECK(contains(s.to_string(), seg(o.dir, 1).string() + " at offset " + std::to_string(d.at)));
    CHECK(contains(s.to_string(), "skipped: " + std::to_string(bytes) + " bytes"));
    if (interval > 1024) {
      REQUIRE(r.damage.size() == 1);
      CHECK(r.damage[0].skipped);
      CHECK(r.damage[0].offset == d.at);
      CHECK(r.damage[0].bytes == bytes);
    }
    // The damaged bytes stay where they are, and the log goes on.
    CHECK(v.damage[0].to_string() == s.to_string());
    log.append({1000, 1}, 1, payload(1, 10));
    const auto more = read_all(log.read());
    CHECK(more.size() == got.size() + 1);
    CHECK(more.back().order == Order{1000, 1});
    // read_log() skipping damage agrees; without, it stops at the damage.
    CHECK(read_all(st::read_log(o.dir, {}, true)).size() == more.size());
    CHECK_THROWS_AS(read_all(st::read_log(o.dir)), st::LogError);
  }
}

TEST_CASE("a damaged segment header is skipped", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.skip_damage = true;
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 200);
    all = read_all(log.read());
  }
  REQUIRE(all.back().segment >= 4);
  fs::remove(seg(t.path(), 2, ".idx"));  // so that open() reads segment 2 whole
  flip(seg(t.path(), 2), 3);             // its magic
  const auto v = st::verify(t.path());
  INFO(v.to_string());
  REQUIRE(v.damage.size() == 1);
  CHECK(v.damage[0].offset == 0);
  CHECK(v.damage[0].bytes == 32);
  CHECK(v.records == 200);
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].skipped);
  CHECK(r.damage[0].file == seg(t.path(), 2));
  CHECK(r.damage[0].offset == 0);
  check_range(read_all(log.read()), 0, 200);  // only the header was hit: no record lost
  append_range(log, 200, 210);
  check_range(read_all(log.read()), 0, 210);
}

TEST_CASE("a false resynchronisation is not accepted", "[log]") {
  TempDir t;
  auto o = options(t.path() / "topic");
  o.segment_bytes = 1 << 20;
  o.index_interval = 1 << 20;
  o.skip_damage = true;
  // Record 5's payload holds two well-formed records: one whose order is not after the last
  // good record (0:1), one whose order is (999:1) but that nothing after confirms (garbage
  // follows it). A reader that resynchronises inside record 5 must take neither.
  const auto behind = encode_record({0, 1}, 1, std::vector<char>(8, 'a'));
  const auto ahead = encode_record({999, 1}, 1, std::vector<char>(8, 'b'));
  std::vector<char> body(behind.begin(), behind.end());
  body.insert(body.end(), ahead.begin(), ahead.end());
  body.insert(body.end(), 48, static_cast<char>(0xAB));
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 5);
    log.append(order_of(5), 1, std::as_bytes(std::span(body.data(), body.size())));
    for (std::uint64_t i = 6; i < 20; ++i)
      log.append(order_of(i), static_cast<std::uint16_t>(1 + i % 2), payload(i, size_of(i)));
    all = read_all(log.read());
  }
  REQUIRE(all.size() == 20);
  flip(seg(o.dir, 1), all[5].offset + 17);  // record 5's header: its hcrc fails
  const auto v = st::verify(o.dir);
  INFO(v.to_string());
  REQUIRE(v.damage.size() == 1);
  CHECK(v.damage[0].offset == all[5].offset);
  CHECK(v.damage[0].bytes == all[6].offset - all[5].offset);
  CHECK(v.damage[0].after == std::optional<Order>(order_of(6)));
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].bytes == all[6].offset - all[5].offset);
  const auto orders = orders_of(log.read());
  std::vector<Order> want;
  for (std::uint64_t i = 0; i < 20; ++i)
    if (i != 5) want.push_back(order_of(i));
  CHECK(orders == want);
}

// Record 3 is damaged by a well-formed record image written into its payload, whose span
// reaches exactly to the end of the last good record; garbage follows (a torn tail). The
// scan resynchronises at record 4 (the image's end is followed by garbage); repair then cuts
// the garbage off, after which the image reaches the new end of the file. The cursors and
// verify() must still take records 4 to 9, as the scan did, not the image over them.
TEST_CASE("a resynchronisation holds after repair cuts the tail", "[log]") {
  TempDir t;
  auto o = options(t.path() / "topic");
  o.segment_bytes = 1 << 20;
  o.index_interval = 1 << 20;
  o.skip_damage = true;
  o.repair = true;
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    for (std::uint64_t i = 0; i < 10; ++i)
      log.append(order_of(i), 1, payload(i, i == 3 ? 200 : 24));
    all = read_all(log.read());
  }
  REQUIRE(all.size() == 10);
  const auto file = seg(o.dir, 1);
  auto bytes = read_file(file);
  const std::size_t end = bytes.size();
  const std::size_t at = all[3].offset + 48;  // inside record 3's payload, 8-aligned
  const std::size_t span = end - at;
  // The image: its header, then the bytes that lie there (the rest of record 3, then 4-9).
  put32(bytes, at + 8, static_cast<std::uint32_t>(span - 40));
  bytes[at + 12] = 1;
  bytes[at + 13] = 0;
  bytes[at + 14] = 0;
  bytes[at + 15] = 0;
  for (int i = 0; i < 8; ++i) {
    bytes[at + 16 + static_cast<std::size_t>(i)] = static_cast<char>(i == 0 ? 100 : 0);
    bytes[at + 24 + static_cast<std::size_t>(i)] = static_cast<char>(i == 0 ? 1 : 0);
    bytes[at + 32 + static_cast<std::size_t>(i)] = 0;
  }
  put32(bytes, at + 4, crc32c(bytes.data() + at + 8, 32));
  put32(bytes, at, crc32c(bytes.data() + at + 4, span - 4));
  bytes.insert(bytes.end(), 100, static_cast<char>(0xAB));  // a torn tail
  write_file(file, bytes);
  fs::remove(seg(o.dir, 1, ".idx"));
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  std::vector<Order> want;
  for (std::uint64_t i = 0; i < 10; ++i)
    if (i != 3) want.push_back(order_of(i));
  const auto orders = orders_of(log.read());
  CHECK(orders == want);
  CHECK(log.records() == want.size());
  CHECK(st::verify(o.dir).records == want.size());
}

// The segment header is damaged, so the scan resynchronises from the start. A record image
// written over record 0 spans records 1-9, and a torn record header (its length past the end
// of the file) follows it: before the cut the image is followed by a later record and is
// where the scan resynchronises; once repair has cut the torn header off, the image reaches
// the end and records 1-9 are the ones to take. open() counts what the cursors then read
// (found by the log_record fuzzer).
TEST_CASE("a resynchronisation is made again after repair cuts the tail", "[log]") {
  TempDir t;
  auto o = options(t.path() / "topic");
  o.segment_bytes = 1 << 20;
  o.index_interval = 1 << 20;
  o.skip_damage = true;
  o.repair = true;
  std::vector<Got> all;
  {
    auto log = st::Log::open(o);
    for (std::uint64_t i = 0; i < 10; ++i)
      log.append(order_of(i), 1, payload(i, 24));
    all = read_all(log.read());
  }
  REQUIRE(all.size() == 10);
  const auto file = seg(o.dir, 1);
  auto bytes = read_file(file);
  const std::size_t end = bytes.size();
  // A record header at `at`: length, kind 1, order (view, seq), time 1; header CRC, and the
  // record CRC over `span` bytes when the record lies whole in the file.
  auto header = [&](std::size_t at, std::uint32_t length, std::uint64_t view, std::uint64_t seq) {
    std::memset(bytes.data() + at + 4, 0, 36);
    put32(bytes, at + 8, length);
    bytes[at + 12] = 1;
    for (int i = 0; i < 8; ++i) {
      const auto k = static_cast<std::size_t>(i);
      bytes[at + 16 + k] = static_cast<char>((view >> (8 * i)) & 0xff);
      bytes[at + 24 + k] = static_cast<char>((seq >> (8 * i)) & 0xff);
    }
    bytes[at + 32] = 1;
    put32(bytes, at + 4, crc32c(bytes.data() + at + 8, 32));
    if (at + 40 + length <= bytes.size())
      put32(bytes, at, crc32c(bytes.data() + at + 4, 36 + length));
  };
  const std::size_t at = all[0].offset;
  REQUIRE(at == 32);
  header(at, static_cast<std::uint32_t>(end - at - 40), 0, 7);  // the image, over 0-9
  bytes.resize(end + 56, static_cast<char>(0xAB));
  header(end, 1 << 16, 9, 0);  // torn: 65536 bytes said, 16 there
  bytes[8] = 9;                // the segment header, damaged
  write_file(file, bytes);
  fs::remove(seg(o.dir, 1, ".idx"));
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  std::vector<Order> want;
  for (std::uint64_t i = 1; i < 10; ++i)
    want.push_back(order_of(i));
  CHECK(orders_of(log.read()) == want);
  CHECK(log.records() == want.size());
  CHECK(r.records == want.size());
  CHECK(st::verify(o.dir).records == want.size());
  CHECK(fs::file_size(file) == end);  // the torn header cut, nothing before it
}

TEST_CASE("a log of another domain or home is refused", "[log]") {
  TempDir t;
  auto o = options(t.path() / "topic");
  const st::LogIdentity mine{7, 0x1111222233334444};
  o.identity = mine;
  {
    auto log = st::Log::open(o);
    append_range(log, 0, 10);
  }
  CHECK(st::read_identity(o.dir) == std::optional<st::LogIdentity>(mine));
  { auto again = st::Log::open(o); }  // the same node (restart, or a home adopted whole)
  for (const st::LogIdentity other : {st::LogIdentity{8, mine.home}, st::LogIdentity{7, 0x99}}) {
    o.identity = other;
    try {
      auto log = st::Log::open(o);
      FAIL("a log of " << st::to_string(mine) << " was opened as " << st::to_string(other));
    } catch (const st::LogError& e) {
      INFO(e.what());
      CHECK(e.operation() == "identity");
      CHECK(e.file() == o.dir / "IDENTITY");
      CHECK(contains(e.what(), (o.dir / "IDENTITY").string()));
      CHECK(contains(e.what(), st::to_string(mine)));
      CHECK(contains(e.what(), st::to_string(other)));
    }
  }
  CHECK(st::read_identity(o.dir) == std::optional<st::LogIdentity>(mine));  // left as it was
  // A version-1 log (no IDENTITY): opened, with a note, and given this node's identity.
  fs::remove(o.dir / "IDENTITY");
  CHECK(contains(st::verify(o.dir).to_string(), "version-1"));
  o.identity = st::LogIdentity{8, 0x99};
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  CHECK(contains(r.identity_note, "version-1"));
  CHECK(log.records() == 10);
  CHECK(st::read_identity(o.dir) == o.identity);
  // A malformed IDENTITY is an error naming it.
  write_file(o.dir / "IDENTITY", {'x', '\n'});
  CHECK_THROWS_AS(st::read_identity(o.dir), st::LogError);
}

TEST_CASE("a home keeps its id across restart and adoption", "[log]") {
  TempDir t;
  st::LogSettings settings;
  settings.log_dir = t.path().string();
  std::string error;
  auto open_in = [&](st::LogHome& home) {
    const auto id = home.id(error);
    INFO(error);
    REQUIRE(id);
    auto o = options(home.topic_dir("FlightState"));
    o.identity = st::LogIdentity{3, *id};
    return st::Log::open(o);
  };
  std::uint64_t first = 0;
  {
    auto home = st::LogHome::claim(settings, 3, 11, false);
    REQUIRE(home.hold(error));
    auto log = open_in(home);
    append_range(log, 0, 3);
    first = *home.id(error);
  }
  {
    // The same fixed node id again: its home, its id, its log.
    auto home = st::LogHome::claim(settings, 3, 11, false);
    REQUIRE(home.hold(error));
    CHECK(home.id(error) == std::optional<std::uint64_t>(first));
    CHECK(open_in(home).records() == 3);
  }
  {
    // A random node id adopts the orphaned home, and with it the home's id: the log opens.
    auto home = st::LogHome::claim(settings, 3, 999, true);
    REQUIRE(home.adopted());
    CHECK(home.path() == t.path() / "domain-3" / "node-11");
    CHECK(home.id(error) == std::optional<std::uint64_t>(first));
    CHECK(open_in(home).records() == 3);
  }
  {
    // Another node's home has an id of its own: node 11's log copied into it is refused.
    auto home = st::LogHome::claim(settings, 3, 12, false);
    REQUIRE(home.hold(error));
    fs::copy(t.path() / "domain-3" / "node-11" / "FlightState", home.topic_dir("FlightState"));
    CHECK(home.id(error) != std::optional<std::uint64_t>(first));
    CHECK_THROWS_AS(open_in(home), st::LogError);
  }
}

TEST_CASE("parser on buffers", "[log]") {
  TempDir t;
  {
    auto log = st::Log::open(options(t.path()));
    append_range(log, 0, 20);
  }
  const auto bytes = read_file(seg(t.path(), 1));
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    auto b = bytes;
    const auto n = rng() % 4;
    for (unsigned k = 0; k < n; ++k)
      b[rng() % b.size()] = static_cast<char>(rng());
    if (round % 3 == 0) b.resize(rng() % b.size());
    const auto c = st::check_segment(std::as_bytes(std::span(b.data(), b.size())), 1, true);
    CHECK(c.good_end <= b.size());
    if (!c.damage) CHECK(c.good_end == b.size());
  }
}

TEST_CASE("disk full", "[log]") {
  TempDir t;
  auto o = options(t.path());
  o.segment_bytes = 1 << 20;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    spindle::testing::die_with_parent(parent);  // it dies with its parent, killed or not
    // The child: files may not grow past 40000 bytes; append until that fails.
    ::close(fds[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    int code = 0;
    std::uint64_t acked = 0;
    try {
      auto log = st::Log::open(o);
      const rlimit lim{40000, RLIM_INFINITY};
      if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(10);
      std::uint64_t i = 0;
      for (; i < 1000; ++i) {
        try {
          log.append(order_of(i), 1, payload(i, 1000));
          ++acked;
        } catch (const st::LogError& e) {
          code = e.sys_errno() == EFBIG ? 0 : 11;
          break;
        }
      }
      if (i == 1000) code = 12;
      // Still full: fails again, and the log stays as it was.
      try {
        log.append(order_of(i), 1, payload(i, 1000));
        code = 13;
      } catch (const st::LogError&) {
      }
      if (log.records() != acked) code = 14;
      // Room again: appends work.
      const rlimit more{RLIM_INFINITY, RLIM_INFINITY};
      if (::setrlimit(RLIMIT_FSIZE, &more) != 0) code = 15;
      log.append(order_of(i), 1, payload(i, 1000));
      ++acked;
      log.sync();
    } catch (...) {
      code = 16;
    }
    const auto w = ::write(fds[1], &acked, sizeof acked);
    ::_exit(w == sizeof acked ? code : 17);
  }
  ::close(fds[1]);
  std::uint64_t acked = 0;
  const auto got_bytes = ::read(fds[0], &acked, sizeof acked);
  ::close(fds[0]);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(got_bytes == sizeof acked);
  CHECK(acked > 30);
  CHECK(acked < 45);
  st::RecoveryReport r;
  auto log = st::Log::open(o, &r);
  INFO(r.to_string());
  CHECK_FALSE(r.damaged());
  const auto got = read_all(log.read());
  REQUIRE(got.size() == acked);
  for (std::uint64_t i = 0; i < acked; ++i) {
    CHECK(got[i].order == order_of(i));
    CHECK(got[i].payload == payload(i, 1000));
  }
  CHECK(st::verify(t.path()).clean());
}

TEST_CASE("read while appending", "[log]") {
  TempDir t;
  auto o = options(t.path());
  auto log = st::Log::open(o);
  constexpr std::uint64_t kRecords = 2000;
  std::atomic<bool> failed{false};
  std::thread reader([&] {
    auto c = log.read();
    std::uint64_t i = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (i < kRecords && std::chrono::steady_clock::now() < deadline) {
      auto r = c.next();
      if (!r) {
        std::this_thread::yield();
        continue;
      }
      if (r->order != order_of(i) || r->payload.size() != size_of(i)) failed = true;
      ++i;
    }
    if (i != kRecords) failed = true;
  });
  append_range(log, 0, kRecords);
  reader.join();
  CHECK_FALSE(failed);
}

TEST_CASE("open twice", "[log]") {
  TempDir t;
  auto log = st::Log::open(options(t.path()));
  // flock() locks belong to the open file description: a second open in this process
  // conflicts as one in another process would.
  CHECK_THROWS_AS(st::Log::open(options(t.path())), st::LogError);
}

TEST_CASE("find logs", "[log]") {
  TempDir t;
  for (const char* name : {"a", "b/c"}) {
    auto o = options(t.path() / name);
    auto log = st::Log::open(o);
    append_range(log, 0, 3);
  }
  fs::create_directories(t.path() / "empty");
  const auto logs = st::find_logs(t.path());
  REQUIRE(logs.size() == 2);
  CHECK(logs[0] == t.path() / "a");
  CHECK(logs[1] == t.path() / "b/c");
}

#ifdef SPINDLE_LOG_TOOL
namespace {
// Runs spindle-log with `args`; its exit status and output.
std::pair<int, std::string> tool(const std::string& args) {
  const std::string cmd = std::string(SPINDLE_LOG_TOOL) + " " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;)
    out.append(buf, n);
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}
}  // namespace

TEST_CASE("tool", "[tool]") {
  TempDir t;
  const fs::path dir = t.path() / "topic";
  std::vector<Got> all;
  {
    auto log = st::Log::open(options(dir));
    append_range(log, 0, 100);
    all = read_all(log.read());
  }
  auto [code, out] = tool("verify " + dir.string());
  INFO(out);
  CHECK(code == 0);
  CHECK(contains(out, "clean"));
  std::tie(code, out) = tool("list " + t.path().string());
  CHECK(code == 0);
  CHECK(contains(out, "100 records"));
  std::tie(code, out) = tool("dump " + dir.string() + " --from 2:10 --limit 3 --hex");
  CHECK(code == 0);
  CHECK(contains(out, "2:10 "));
  CHECK(contains(out, "2:12 "));
  CHECK_FALSE(contains(out, "2:13 "));
  const auto& victim = all[20];
  flip(seg(dir, victim.segment), victim.offset + 50);
  std::tie(code, out) = tool("verify " + dir.string());
  CHECK(code == 1);
  CHECK(contains(out, "offset " + std::to_string(victim.offset)));
  CHECK(contains(out, "bad crc"));
  // A record damaged in the middle of a segment: verify names the same stretch as the
  // loader skips (file, offset, bytes, the orders on both sides).
  const fs::path big = t.path() / "big";
  auto o = options(big);
  o.segment_bytes = 1 << 20;
  o.skip_damage = true;
  const Damaged d = damage_middle(o, 1000, 0.9, 63);
  std::tie(code, out) = tool("verify " + big.string());
  CHECK(code == 1);
  {
    auto log = st::Log::open(o);
    auto c = log.read();
    std::uint64_t records = 0;
    while (c.next())
      ++records;
    REQUIRE(c.skipped().size() == 1);
    const auto& s = c.skipped()[0];
    CHECK(s.offset == d.at);
    CHECK(contains(out, "damage: " + s.to_string()));
    CHECK(contains(out, "skipped: " + std::to_string(s.bytes) + " bytes"));
    CHECK(contains(out, std::to_string(records) + " records"));
    // dump stops at the damage; with --skip-damage it goes on as the loader does.
    std::tie(code, out) = tool("dump " + big.string());
    CHECK(code == 1);
    CHECK(contains(out, "at offset " + std::to_string(d.at)));
    std::tie(code, out) = tool("dump --skip-damage " + big.string());
    CHECK(code == 1);
    CHECK(contains(out, "skipped " + s.to_string()));
    CHECK(contains(out, st::to_string(order_of(999)) + " kind="));
  }
  std::tie(code, out) = tool("verify " + (t.path() / "nothing-here").string());
  CHECK(code == 2);
  std::tie(code, out) = tool("dump " + dir.string() + " --from nonsense");
  CHECK(code == 2);
}
#endif
