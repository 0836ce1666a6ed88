// libFuzzer target: arbitrary bytes as a segment file of the durable log (storage/log.hpp),
// through the buffer parser and, for some inputs, through open() on a real directory.
// Input layout:
//   byte 0      bit 0: parse as the newest segment (a bad tail may be torn)
//               bit 1: put the CRCs right first (record header and body CRCs, index entry
//                      CRCs), so that inputs reach the length, order and padding checks
//               bit 2: also open() it: write the segment (and an index, below) into a
//                      directory, open with repair, read everything back, verify()
//               bit 3: also open() it with skip_damage (and repair): the cursor reads to
//                      the end without throwing and verify() counts the same records
//   bytes 1-2   with bit 2: the index file's length L (little-endian, at most the rest)
//   then        with bit 2: L bytes of index file; the rest is the segment
// Properties checked: the parser stays within the input and its good prefix parses again
// to the same records with no damage; open(repair) always succeeds, never deletes what it
// cannot read (it sets it aside), and leaves a log that reads back whole; with no index,
// verify() then finds it clean. With an index, whose entries open() trusts, a cursor may
// count other records than open() did only where verify() reports the index.
//
// Threading: single-threaded (libFuzzer's).
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <vector>

#include <boost/crc.hpp>

#include "storage/log.hpp"

namespace st = spindle::storage;
namespace fs = std::filesystem;

namespace {

std::uint32_t crc32c(const std::uint8_t* p, std::size_t n) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> c;
  c.process_bytes(p, n);
  return c.checksum();
}
std::uint32_t get32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0] | p[1] << 8 | p[2] << 16) |
         static_cast<std::uint32_t>(p[3]) << 24;
}
void put32(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// Puts every CRC right that a writer would have computed (docs/log-format.md).
void fix_segment(std::vector<std::uint8_t>& b) {
  if (b.size() >= 32) put32(b.data() + 28, crc32c(b.data(), 28));
  std::size_t p = 32;
  for (int guard = 0; guard < 100000 && p + 40 <= b.size(); ++guard) {
    put32(b.data() + p + 4, crc32c(b.data() + p + 8, 32));
    const std::uint64_t span = (40 + std::uint64_t{get32(b.data() + p + 8)} + 7) & ~7ull;
    if (span > b.size() - p) break;
    put32(b.data() + p, crc32c(b.data() + p + 4, static_cast<std::size_t>(span) - 4));
    p += static_cast<std::size_t>(span);
  }
}
void fix_index(std::vector<std::uint8_t>& b) {
  for (std::size_t p = 24; p + 40 <= b.size(); p += 40)
    put32(b.data() + p + 36, crc32c(b.data() + p, 36));
}

void write(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A fresh directory under the temporary directory, removed with the object (libFuzzer may
// end the process without running atexit handlers, so nothing outlives one input).
struct WorkDir {
  fs::path path;
  WorkDir() {
    std::string t = (fs::temp_directory_path() / "spindle-log-fuzz-XXXXXX").string();
    if (::mkdtemp(t.data()) == nullptr) __builtin_trap();
    path = t;
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

void check_buffer(const std::vector<std::uint8_t>& seg, bool newest) {
  const auto bytes = std::as_bytes(std::span(seg.data(), seg.size()));
  const st::SegmentCheck c = st::check_segment(bytes, 1, newest);
  if (c.good_end > seg.size()) __builtin_trap();
  if (!c.damage && c.good_end != seg.size()) __builtin_trap();
  if (c.damage && c.damage->torn && !newest) __builtin_trap();
  if (!c.header_ok) return;
  // The good prefix alone is a clean segment with the same records.
  const st::SegmentCheck again = st::check_segment(bytes.first(c.good_end), 1, newest);
  if (again.damage || again.records != c.records || again.last != c.last) __builtin_trap();
}

void check_open(const std::vector<std::uint8_t>& seg, const std::vector<std::uint8_t>* idx) {
  const WorkDir work;
  const fs::path dir = work.path / "log";
  fs::create_directories(dir);
  write(dir / "00000000000000000001.seg", seg);
  if (idx) write(dir / "00000000000000000001.idx", *idx);
  st::LogOptions o;
  o.dir = dir;
  o.repair = true;
  o.segment_bytes = 4096;
  o.index_interval = 64;
  std::uint64_t records = 0;
  try {
    st::RecoveryReport r;
    auto log = st::Log::open(o, &r);
    records = log.records();
    (void)r.to_string();
    // Set aside, not deleted: the segment and its *.corrupt pieces hold every byte.
    std::uint64_t kept = 0;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() != ".idx" && e.path().filename() != "LOCK") kept += e.file_size();
    bool torn = false;
    for (const auto& d : r.damage)
      torn = torn || d.torn;
    if (!torn && kept < seg.size()) __builtin_trap();
    std::uint64_t n = 0;
    try {
      auto c = log.read();
      while (c.next())
        ++n;
      // A trusted index stands for the records before its last entry (its ordinal counts
      // them): one forged with valid CRCs can miscount them, and verify() must say so.
      if (n != records && (!idx || st::verify(dir).clean())) __builtin_trap();
    } catch (const st::LogError&) {
      if (!idx) __builtin_trap();  // a trusted index may hide damage before its last entry
    }
    const std::byte one[1] = {std::byte{1}};
    constexpr st::Order kTop{~0ull, ~0ull};
    if (log.records() == 0 || log.last() < kTop) {  // the log goes on after a repair
      log.append(kTop, 1, one);
      ++records;
    }
  } catch (const st::LogError&) {
    __builtin_trap();  // no I/O errors expected here: repair must cope with any bytes
  }
  if (!idx) {
    const st::VerifyReport v = st::verify(dir);
    if (!v.clean() || v.records != records) __builtin_trap();
  }
}

// skip_damage: open() (with repair for what cannot be resynchronised) takes any bytes, a
// cursor reads to the end without throwing, and verify() counts the records the loader
// returns: the loader and the tool resynchronise alike.
void check_skip(const std::vector<std::uint8_t>& seg) {
  const WorkDir work;
  const fs::path dir = work.path / "log";
  fs::create_directories(dir);
  write(dir / "00000000000000000001.seg", seg);
  st::LogOptions o;
  o.dir = dir;
  o.repair = true;
  o.skip_damage = true;
  o.segment_bytes = 4096;
  o.index_interval = std::uint64_t{1} << 20;  // open() checks every record, as the cursor does
  try {
    auto log = st::Log::open(o);
    auto c = log.read();
    std::uint64_t n = 0;
    while (c.next())
      ++n;
    if (n != log.records()) __builtin_trap();
    if (st::verify(dir).records != n) __builtin_trap();
  } catch (const st::LogError&) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t control = data[0];
  std::size_t pos = 1;
  std::vector<std::uint8_t> idx;
  bool has_idx = false;
  if ((control & 4) && size >= 3) {
    const std::size_t len = std::min<std::size_t>(data[1] | std::size_t{data[2]} << 8, size - 3);
    idx.assign(data + 3, data + 3 + len);
    has_idx = len > 0;
    pos = 3 + len;
  }
  std::vector<std::uint8_t> seg(data + pos, data + size);
  if (control & 2) {
    fix_segment(seg);
    fix_index(idx);
  }
  check_buffer(seg, control & 1);
  if (control & 4) check_open(seg, has_idx ? &idx : nullptr);
  if (control & 8) check_skip(seg);
  return 0;
}
