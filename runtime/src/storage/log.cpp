// The durable log (log.hpp, docs/log-format.md): encoding, the parser of untrusted segment
// and index bytes, recovery at open, appends and retention, readers and verify().
#include "storage/log.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstring>
#include <iomanip>
#include <mutex>
#include <sstream>
#include <system_error>
#include <utility>

extern "C" {
#include <isa-l/crc.h>
}

namespace spindle::storage {

namespace fs = std::filesystem;

namespace {

// ---- encoding -------------------------------------------------------------------------

constexpr std::array<char, 8> kSegmentMagic = {'S', 'P', 'N', 'D', 'L', 'S', 'E', 'G'};
constexpr std::array<char, 8> kIndexMagic = {'S', 'P', 'N', 'D', 'L', 'I', 'D', 'X'};
constexpr std::uint16_t kVersion = 1;
constexpr std::uint64_t kIndexHeaderBytes = 24;
constexpr std::uint64_t kIndexEntryBytes = 40;
constexpr std::size_t kWindowBytes = std::size_t{1} << 20;  // read buffer of scans and cursors
constexpr std::size_t kMaxDamage = 100;                     // places verify() lists at most
constexpr int kMaxIov = 1020;                               // below IOV_MAX (1024)

// CRC32C (Castagnoli) by ISA-L's crc32_iscsi, which picks the machine's CRC instructions at
// run time (~20 GB/s here, against ~0.4 GB/s for a table): the standard values (initial and
// final xor 0xFFFFFFFF, reflected), as the tests check against Boost.CRC.
class Crc32c {
 public:
  void process_bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    while (n > 0) {
      const auto chunk = std::min<std::size_t>(n, std::size_t{1} << 30);
      // ISA-L takes a mutable pointer; it only reads.
      state_ = crc32_iscsi(const_cast<unsigned char*>(b), static_cast<int>(chunk), state_);
      b += chunk;
      n -= chunk;
    }
  }
  [[nodiscard]] std::uint32_t checksum() const { return ~state_; }

 private:
  std::uint32_t state_ = 0xFFFFFFFF;
};

std::uint32_t crc32c(const std::byte* p, std::size_t n) {
  Crc32c c;
  c.process_bytes(p, n);
  return c.checksum();
}

void put16(std::byte* p, std::uint16_t v) {
  for (int i = 0; i < 2; ++i)
    p[i] = static_cast<std::byte>(v >> (8 * i));
}
void put32(std::byte* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<std::byte>(v >> (8 * i));
}
void put64(std::byte* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = static_cast<std::byte>(v >> (8 * i));
}
std::uint16_t get16(const std::byte* p) {
  return static_cast<std::uint16_t>(std::to_integer<unsigned>(p[0]) |
                                    std::to_integer<unsigned>(p[1]) << 8);
}
std::uint32_t get32(const std::byte* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i)
    v = v << 8 | std::to_integer<std::uint32_t>(p[i]);
  return v;
}
std::uint64_t get64(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i)
    v = v << 8 | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

// Bytes a record with `length` payload bytes takes: header, payload, padding to 8.
std::uint64_t record_span(std::uint64_t length) {
  return (kRecordHeaderBytes + length + 7) & ~std::uint64_t{7};
}

std::array<std::byte, kSegmentHeaderBytes> encode_segment_header(std::uint64_t number) {
  std::array<std::byte, kSegmentHeaderBytes> h{};
  std::memcpy(h.data(), kSegmentMagic.data(), 8);
  put16(h.data() + 8, kVersion);
  put16(h.data() + 10, static_cast<std::uint16_t>(kSegmentHeaderBytes));
  put64(h.data() + 16, number);
  put32(h.data() + 28, crc32c(h.data(), 28));
  return h;
}

// Fills the 40-byte header of a record; the payload and padding complete the CRC.
void encode_record_header(std::byte* h, Order order, std::uint16_t kind, std::int64_t time_ns,
                          std::span<const std::byte> payload) {
  std::memset(h, 0, kRecordHeaderBytes);
  put32(h + 8, static_cast<std::uint32_t>(payload.size()));
  put16(h + 12, kind);
  put64(h + 16, order.view);
  put64(h + 24, order.seq);
  put64(h + 32, static_cast<std::uint64_t>(time_ns));
  put32(h + 4, crc32c(h + 8, 32));
  static constexpr std::array<std::byte, 8> kZeros{};
  Crc32c c;
  c.process_bytes(h + 4, kRecordHeaderBytes - 4);
  c.process_bytes(payload.data(), payload.size());
  c.process_bytes(kZeros.data(), record_span(payload.size()) - kRecordHeaderBytes - payload.size());
  put32(h, c.checksum());
}

struct IndexEntry {
  Order order;
  std::uint64_t offset = 0;
  std::uint64_t ordinal = 0;  // records before it in its segment
};

std::array<std::byte, kIndexHeaderBytes> encode_index_header(std::uint64_t number) {
  std::array<std::byte, kIndexHeaderBytes> h{};
  std::memcpy(h.data(), kIndexMagic.data(), 8);
  put16(h.data() + 8, kVersion);
  put16(h.data() + 10, static_cast<std::uint16_t>(kIndexEntryBytes));
  put64(h.data() + 16, number);
  return h;
}

std::array<std::byte, kIndexEntryBytes> encode_index_entry(const IndexEntry& e) {
  std::array<std::byte, kIndexEntryBytes> b{};
  put64(b.data(), e.order.view);
  put64(b.data() + 8, e.order.seq);
  put64(b.data() + 16, e.offset);
  put64(b.data() + 24, e.ordinal);
  put32(b.data() + 36, crc32c(b.data(), 36));
  return b;
}

std::string hex32(std::uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

std::string segment_name(std::uint64_t number, const char* ext) {
  std::string digits = std::to_string(number);
  return std::string(20 - std::min<std::size_t>(20, digits.size()), '0') + digits + ext;
}

// The number of a segment (or index) file name, or nullopt for any other name.
std::optional<std::uint64_t> parse_name(const std::string& name, const char* ext) {
  const std::size_t ext_len = std::strlen(ext);
  if (name.size() != 20 + ext_len || name.compare(20, ext_len, ext) != 0) return std::nullopt;
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < 20; ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    const auto d = static_cast<std::uint64_t>(name[i] - '0');
    if (n > (UINT64_MAX - d) / 10) return std::nullopt;
    n = n * 10 + d;
  }
  return n;
}

// ---- system calls ------------------------------------------------------------------------

[[noreturn]] void fail(const char* op, const fs::path& file, std::optional<std::uint64_t> offset,
                       int err, const std::string& detail = {}) {
  throw LogError(op, file, offset, err, detail);
}

int open_file(const fs::path& p, int flags, const char* op) {
  for (int tries = 0; tries < 100; ++tries) {
    const int fd = ::open(p.c_str(), flags | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EINTR) break;
  }
  fail(op, p, std::nullopt, errno);
}

std::uint64_t file_size(int fd, const fs::path& p, const char* op) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) fail(op, p, std::nullopt, errno);
  return static_cast<std::uint64_t>(st.st_size);
}

// Writes all of `data` at `offset`; returns the bytes written before an error (errno set)
// or data.size().
std::size_t pwrite_all(int fd, std::span<const std::byte> data, std::uint64_t offset) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pwrite(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return done;
    }
    if (n == 0) {  // no progress and no error: call it out of space
      errno = ENOSPC;
      return done;
    }
    done += static_cast<std::size_t>(n);
  }
  return done;
}

// pwritev of all of `iov` at `offset`, resuming after short writes; returns the bytes
// written (fewer than the total only on an error, with errno set).
std::uint64_t pwritev_all(int fd, std::vector<iovec>& iov, std::uint64_t offset) {
  std::uint64_t done = 0;
  std::size_t first = 0;
  while (first < iov.size()) {
    if (iov[first].iov_len == 0) {
      ++first;
      continue;
    }
    const ssize_t n = ::pwritev(fd, iov.data() + first, static_cast<int>(iov.size() - first),
                                static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return done;
    }
    if (n == 0) {
      errno = ENOSPC;
      return done;
    }
    auto left = static_cast<std::size_t>(n);
    done += left;
    while (left > 0 && first < iov.size()) {
      const std::size_t take = std::min(left, iov[first].iov_len);
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + take;
      iov[first].iov_len -= take;
      left -= take;
      if (iov[first].iov_len == 0) ++first;
    }
  }
  return done;
}

void truncate_to(int fd, const fs::path& p, std::uint64_t size, const char* op) {
  while (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    if (errno != EINTR) fail(op, p, size, errno, "truncate");
  }
}

void sync_fd(int fd, const fs::path& p, const char* op) {
  while (::fdatasync(fd) != 0) {
    if (errno != EINTR) fail(op, p, std::nullopt, errno, "fdatasync");
  }
}

void sync_dir(int dir_fd, const fs::path& p, const char* op) {
  while (::fsync(dir_fd) != 0) {
    if (errno != EINTR && errno != EINVAL)
      fail(op, p, std::nullopt, errno, "fsync of the directory");
    if (errno == EINVAL) return;  // a file system that cannot sync directories
  }
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd = std::exchange(o.fd, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

// ---- reading untrusted bytes -------------------------------------------------------------

// Bytes to parse: a file (pread) or a buffer. size() bounds every read.
class Source {
 public:
  virtual ~Source() = default;
  virtual std::uint64_t size() const = 0;
  // Up to dst.size() bytes at `offset` (fewer only at size()); throws LogError.
  virtual std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) const = 0;
  virtual const fs::path& path() const = 0;
};

class FileSource final : public Source {
 public:
  FileSource(int fd, fs::path p, std::uint64_t size) : fd_(fd), path_(std::move(p)), size_(size) {}
  std::uint64_t size() const override { return size_; }
  void set_size(std::uint64_t s) { size_ = s; }
  void set_fd(int fd, fs::path p, std::uint64_t size) {
    fd_ = fd;
    path_ = std::move(p);
    size_ = size;
  }
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) const override {
    if (offset >= size_) return 0;
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(dst.size(), size_ - offset));
    std::size_t done = 0;
    while (done < want) {
      const ssize_t n =
          ::pread(fd_, dst.data() + done, want - done, static_cast<off_t>(offset + done));
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("read", path_, offset + done, errno);
      }
      if (n == 0) break;  // the file is shorter than we were told: the rest reads as absent
      done += static_cast<std::size_t>(n);
    }
    return done;
  }
  const fs::path& path() const override { return path_; }

 private:
  int fd_;
  fs::path path_;
  std::uint64_t size_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::span<const std::byte> b) : bytes_(b), path_("<buffer>") {}
  std::uint64_t size() const override { return bytes_.size(); }
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> dst) const override {
    if (offset >= bytes_.size()) return 0;
    const std::size_t n = std::min<std::size_t>(dst.size(), bytes_.size() - offset);
    std::memcpy(dst.data(), bytes_.data() + offset, n);
    return n;
  }
  const fs::path& path() const override { return path_; }

 private:
  std::span<const std::byte> bytes_;
  fs::path path_;
};

// A read buffer over a Source: get() returns bytes [offset, offset + n), fewer at the end.
// The buffer grows to n when n is above its size: callers bound n by the source's size.
class Window {
 public:
  explicit Window(const Source& s) : src_(&s) {}
  void rebind(const Source& s) {
    src_ = &s;
    len_ = 0;
  }
  std::span<const std::byte> get(std::uint64_t offset, std::size_t n) {
    if (offset >= start_ && offset - start_ <= len_ && n <= len_ - (offset - start_))
      return {buf_.data() + (offset - start_), n};
    const std::uint64_t size = src_->size();
    if (offset >= size) return {};
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(std::max(n, kWindowBytes), size - offset));
    if (buf_.size() < want) buf_.resize(want);
    len_ = 0;
    len_ = src_->read_at(offset, {buf_.data(), want});
    start_ = offset;
    return {buf_.data(), std::min(n, len_)};
  }

 private:
  const Source* src_;
  std::vector<std::byte> buf_;
  std::uint64_t start_ = 0;
  std::size_t len_ = 0;
};

struct RecordInfo {
  Order order;
  std::uint16_t kind = 0;
  std::int64_t time_ns = 0;
  std::uint32_t length = 0;
  std::uint64_t offset = 0;
  std::uint64_t span = 0;
};

struct Bad {
  std::uint64_t offset = 0;
  Problem problem = Problem::bad_crc;
  std::string detail;
};

// The header of the record at `offset` (< end): its fields once the header CRC, the
// reserved bits and the length are right and the record fits before `end`.
std::optional<Bad> check_record_header(Window& w, std::uint64_t offset, std::uint64_t end,
                                       RecordInfo& r) {
  const std::uint64_t left = end - offset;
  if (left < kRecordHeaderBytes)
    return Bad{offset, Problem::short_header,
               "the file ends " + std::to_string(left) + " bytes into a 40-byte record header"};
  const auto h = w.get(offset, kRecordHeaderBytes);
  if (h.size() < kRecordHeaderBytes)
    return Bad{offset, Problem::short_header, "short read of a record header"};
  const std::uint32_t hcrc = get32(h.data() + 4);
  const std::uint32_t want = crc32c(h.data() + 8, 32);
  if (hcrc != want)
    return Bad{offset, Problem::bad_header,
               "record header CRC " + hex32(hcrc) + ", computed " + hex32(want)};
  if (get16(h.data() + 14) != 0)
    return Bad{offset, Problem::bad_header,
               "reserved record flags " + hex32(get16(h.data() + 14)) + " set"};
  r.length = get32(h.data() + 8);
  r.kind = get16(h.data() + 12);
  r.order = {get64(h.data() + 16), get64(h.data() + 24)};
  r.time_ns = static_cast<std::int64_t>(get64(h.data() + 32));
  r.offset = offset;
  if (r.length > kMaxPayload)
    return Bad{
        offset, Problem::bad_length,
        "length " + std::to_string(r.length) + " above the maximum " + std::to_string(kMaxPayload)};
  r.span = record_span(r.length);
  if (r.span > left)
    return Bad{offset, Problem::short_record,
               "record of " + std::to_string(r.span) + " bytes with " + std::to_string(left) +
                   " left in the file"};
  return std::nullopt;
}

// The whole record at `offset`: header, then the CRC over everything after the CRC field,
// read in window-sized pieces (nothing is allocated for the length).
std::optional<Bad> check_record(Window& w, std::uint64_t offset, std::uint64_t end, RecordInfo& r) {
  if (auto bad = check_record_header(w, offset, end, r)) return bad;
  const std::uint32_t stored = get32(w.get(offset, 4).data());
  Crc32c c;
  std::uint64_t pos = offset + 4;
  const std::uint64_t stop = offset + r.span;
  while (pos < stop) {
    const auto piece =
        w.get(pos, static_cast<std::size_t>(std::min<std::uint64_t>(kWindowBytes, stop - pos)));
    if (piece.empty()) return Bad{offset, Problem::short_record, "short read inside a record"};
    c.process_bytes(piece.data(), piece.size());
    pos += piece.size();
  }
  if (c.checksum() != stored)
    return Bad{offset, Problem::bad_crc,
               "record CRC " + hex32(stored) + ", computed " + hex32(c.checksum()) + " (order " +
                   to_string(r.order) + ", length " + std::to_string(r.length) + ")"};
  return std::nullopt;
}

// The first offset after `from` (on the 8-byte grid records lie on) holding a whole valid
// record, if any.
std::optional<std::uint64_t> find_valid_after(Window& w, std::uint64_t from, std::uint64_t end) {
  for (std::uint64_t p = (from + 8) & ~std::uint64_t{7}; p + kRecordHeaderBytes <= end; p += 8) {
    const auto h = w.get(p, kRecordHeaderBytes);
    if (h.size() < kRecordHeaderBytes) break;
    if (get16(h.data() + 14) != 0 || get32(h.data() + 8) > kMaxPayload) continue;
    if (get32(h.data() + 4) != crc32c(h.data() + 8, 32)) continue;
    RecordInfo r;
    if (!check_record(w, p, end, r)) return p;
  }
  return std::nullopt;
}

// Where reading goes on after a bad record at `from` (docs/log-format.md,
// "Resynchronisation"): the first offset on the 8-byte grid after `from`, before `end`, that
// holds a whole valid record (header CRC, flags, length, record CRC) whose order is after
// `prev` (the last good record's), confirmed by what follows it: the end of the data, too few
// bytes for a header, or a header whose CRC checks and whose order is after the candidate's.
// A candidate that fails any of these is a false resynchronisation (a record-shaped stretch
// of a payload, an old record left over) and the scan goes on.
std::optional<std::uint64_t> resync(Window& w, std::uint64_t from, std::uint64_t end,
                                    std::optional<Order> prev) {
  for (std::uint64_t p = (from + 8) & ~std::uint64_t{7}; p + kRecordHeaderBytes <= end; p += 8) {
    const auto h = w.get(p, kRecordHeaderBytes);
    if (h.size() < kRecordHeaderBytes) break;
    if (get16(h.data() + 14) != 0 || get32(h.data() + 8) > kMaxPayload) continue;
    if (get32(h.data() + 4) != crc32c(h.data() + 8, 32)) continue;
    RecordInfo r;
    if (check_record(w, p, end, r)) continue;
    if (prev && r.order <= *prev) continue;
    const std::uint64_t next = p + r.span;
    if (end - next < kRecordHeaderBytes) return p;
    RecordInfo n;
    const auto bad = check_record_header(w, next, end, n);
    if ((!bad || bad->problem == Problem::short_record) && n.order > r.order) return p;
  }
  return std::nullopt;
}

// Records in a torn tail from `from`: each header found whole (CRC right) or cut short by the
// end of the file counts one. nullopt when a header in between is garbage.
std::optional<std::uint64_t> count_torn(Window& w, std::uint64_t from, std::uint64_t end) {
  std::uint64_t n = 0;
  for (std::uint64_t p = from; p < end;) {
    ++n;
    if (end - p < kRecordHeaderBytes) break;
    RecordInfo r;
    const auto bad = check_record_header(w, p, end, r);
    if (bad && bad->problem != Problem::short_record) return std::nullopt;
    if (bad) break;
    p += r.span;
  }
  return n;
}

// Whole valid records from `from` to the end (a bad stretch is skipped to the next valid
// record): how many records a set-aside piece holds besides the bad one.
std::uint64_t count_valid_from(Window& w, std::uint64_t from, std::uint64_t end) {
  std::uint64_t n = 0;
  std::optional<std::uint64_t> p = from < end ? std::optional<std::uint64_t>(from) : std::nullopt;
  while (p) {
    RecordInfo r;
    if (!check_record(w, *p, end, r)) {
      ++n;
      const std::uint64_t next = *p + r.span;
      p = next < end ? std::optional<std::uint64_t>(next) : std::nullopt;
    } else {
      p = find_valid_after(w, *p, end);
    }
  }
  return n;
}

std::optional<Bad> check_segment_header(Window& w, std::uint64_t size,
                                        std::optional<std::uint64_t> number) {
  if (size < kSegmentHeaderBytes)
    return Bad{0, Problem::short_header,
               "the file ends " + std::to_string(size) + " bytes into the 32-byte segment header"};
  const auto h = w.get(0, kSegmentHeaderBytes);
  if (h.size() < kSegmentHeaderBytes) return Bad{0, Problem::short_header, "short read"};
  if (std::memcmp(h.data(), kSegmentMagic.data(), 8) != 0)
    return Bad{0, Problem::bad_header, "not a segment: bad magic"};
  const std::uint32_t crc = get32(h.data() + 28);
  if (crc != crc32c(h.data(), 28))
    return Bad{0, Problem::bad_header,
               "segment header CRC " + hex32(crc) + ", computed " + hex32(crc32c(h.data(), 28))};
  if (get16(h.data() + 8) != kVersion)
    return Bad{0, Problem::bad_header,
               "format version " + std::to_string(get16(h.data() + 8)) + ", this build reads 1"};
  if (get16(h.data() + 10) != kSegmentHeaderBytes || get32(h.data() + 12) != 0 ||
      get32(h.data() + 24) != 0)
    return Bad{0, Problem::bad_header, "unknown header size or flags"};
  if (number && get64(h.data() + 16) != *number)
    return Bad{0, Problem::bad_header,
               "segment number " + std::to_string(get64(h.data() + 16)) + " in the file of " +
                   std::to_string(*number)};
  return std::nullopt;
}

bool all_zero(Window& w, std::uint64_t size) {
  for (std::uint64_t p = 0; p < size;) {
    const auto piece =
        w.get(p, static_cast<std::size_t>(std::min<std::uint64_t>(kWindowBytes, size - p)));
    if (piece.empty()) return true;
    for (const std::byte b : piece)
      if (b != std::byte{0}) return false;
    p += piece.size();
  }
  return true;
}

// One segment parsed: its header, then records from `start` (an index entry's offset and
// ordinal, or the first record) to the first bad one, classified as torn or corruption.
struct Scan {
  bool header_ok = false;
  std::uint64_t records = 0;  // records in the segment up to good_end (ordinal based)
  std::uint64_t good_end = 0;
  std::optional<Order> first, last;  // of the records scanned
  std::int64_t newest_ns = 0;
  std::optional<Damage> damage;
};

Damage make_damage(const Source& src, const Bad& bad) {
  Damage d;
  d.file = src.path();
  d.offset = bad.offset;
  d.problem = bad.problem;
  d.detail = bad.detail;
  d.bytes = src.size() - bad.offset;
  return d;
}

// With `skipped`, a bad record that is no torn tail and that a record resynchronises after
// (resync()) is skipped and listed there; so is one with nothing after it in an older
// segment (to the segment's end).
Scan scan_segment(const Source& src, Window& w, std::uint64_t number, bool newest,
                  std::uint64_t start, std::uint64_t ordinal, std::optional<Order> prev,
                  const std::function<void(const RecordInfo&, std::uint64_t)>& on_record,
                  std::vector<Damage>* skipped = nullptr) {
  Scan s;
  const std::uint64_t size = src.size();
  std::uint64_t off = std::max(start, kSegmentHeaderBytes);
  if (auto bad = check_segment_header(w, size, number)) {
    Damage d = make_damage(src, *bad);
    d.torn = newest && (size < kSegmentHeaderBytes || all_zero(w, size));
    if (d.torn) d.records = 0;
    // Skipping damage, a bad header is one more stretch: the records after it are read from
    // where they resynchronise (the first record, when only the header was hit).
    const auto next = skipped && !d.torn && size > kSegmentHeaderBytes
                          ? resync(w, kSegmentHeaderBytes - 8, size, prev)
                          : std::nullopt;
    if (!next && !(skipped && !d.torn && !newest)) {
      s.damage = std::move(d);
      return s;
    }
    d.skipped = true;
    d.before = prev;
    d.bytes = next.value_or(size);
    if (next) {
      RecordInfo after;
      (void)check_record_header(w, *next, size, after);
      d.after = after.order;
    }
    skipped->push_back(std::move(d));
    off = next.value_or(size);
  }
  s.header_ok = true;
  s.records = ordinal;
  while (off < size) {
    RecordInfo r;
    auto bad = check_record(w, off, size, r);
    if (!bad && prev && r.order <= *prev)
      bad = Bad{off, Problem::order_backwards,
                "order " + to_string(r.order) + " is not after " + to_string(*prev)};
    if (bad && skipped &&
        !(bad->problem != Problem::order_backwards && newest && !find_valid_after(w, off, size))) {
      const auto next = resync(w, off, size, prev);
      if (next || !newest) {
        Damage d = make_damage(src, *bad);
        d.skipped = true;
        d.before = prev;
        d.bytes = next.value_or(size) - off;
        if (next) {
          RecordInfo after;
          (void)check_record_header(w, *next, size, after);
          d.after = after.order;
        }
        skipped->push_back(std::move(d));
        if (!next) break;
        off = *next;
        continue;
      }
    }
    if (bad) {
      Damage d = make_damage(src, *bad);
      if (bad->problem != Problem::order_backwards && newest && !find_valid_after(w, off, size)) {
        d.torn = true;
        d.records = count_torn(w, off, size);
      } else {
        // The bad record (or the out-of-order one, valid itself) and the valid ones after it.
        d.records =
            count_valid_from(w, off, size) + (bad->problem == Problem::order_backwards ? 0 : 1);
      }
      s.damage = std::move(d);
      break;
    }
    if (on_record) on_record(r, s.records);
    if (!s.first) s.first = r.order;
    s.last = prev = r.order;
    s.newest_ns = r.time_ns;
    ++s.records;
    off += r.span;
  }
  s.good_end = s.damage ? s.damage->offset : size;
  return s;
}

// ---- index files ------------------------------------------------------------------------

struct IndexLoad {
  bool present = false;
  std::vector<IndexEntry> entries;
  std::string problem;  // why the entries stop before the end of the file (empty: they don't)
};

// The entries of an index file that are well formed and consistent with each other and
// with a segment of `segment_size` bytes, up to the first that is not.
IndexLoad load_index(const fs::path& p, std::uint64_t number, std::uint64_t segment_size) {
  IndexLoad l;
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno != ENOENT) l.problem = std::string("cannot open: ") + std::strerror(errno);
    return l;
  }
  Fd guard(fd);
  l.present = true;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    l.problem = std::string("cannot stat: ") + std::strerror(errno);
    return l;
  }
  FileSource src(fd, p, static_cast<std::uint64_t>(st.st_size));
  Window w(src);
  const auto h = w.get(0, kIndexHeaderBytes);
  const auto want = encode_index_header(number);
  if (h.size() < kIndexHeaderBytes || std::memcmp(h.data(), want.data(), want.size()) != 0) {
    l.problem = "bad index header";
    return l;
  }
  for (std::uint64_t off = kIndexHeaderBytes; off < src.size(); off += kIndexEntryBytes) {
    const std::string where =
        "entry " + std::to_string(l.entries.size()) + " at byte " + std::to_string(off) + ": ";
    const auto b = w.get(off, kIndexEntryBytes);
    if (b.size() < kIndexEntryBytes) {
      l.problem = where + "the file ends inside it";
      break;
    }
    if (get32(b.data() + 36) != crc32c(b.data(), 36) || get32(b.data() + 32) != 0) {
      l.problem = where + "bad CRC";
      break;
    }
    const IndexEntry e{
        {get64(b.data()), get64(b.data() + 8)}, get64(b.data() + 16), get64(b.data() + 24)};
    if (l.entries.empty() && (e.offset != kSegmentHeaderBytes || e.ordinal != 0)) {
      l.problem = where + "the first entry is not the first record";
      break;
    }
    if (e.offset % 8 != 0 || e.offset >= segment_size ||
        (!l.entries.empty() &&
         (e.order <= l.entries.back().order || e.offset <= l.entries.back().offset ||
          e.ordinal <= l.entries.back().ordinal ||
          e.ordinal - l.entries.back().ordinal >
              (e.offset - l.entries.back().offset) / kRecordHeaderBytes))) {
      l.problem = where + "offset " + std::to_string(e.offset) + ", order " + to_string(e.order) +
                  " out of place";
      break;
    }
    l.entries.push_back(e);
  }
  return l;
}

// Whether the record header at the entry's offset is whole and carries the entry's order.
bool entry_matches(Window& w, std::uint64_t size, const IndexEntry& e) {
  RecordInfo r;
  if (e.offset >= size) return false;
  const auto bad = check_record_header(w, e.offset, size, r);
  return !bad && r.order == e.order;
}

// Writes a whole index file; false if that failed (it is a cache: open() rebuilds it).
bool write_index(const fs::path& p, std::uint64_t number, const std::vector<IndexEntry>& entries) {
  const int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  Fd guard(fd);
  std::vector<std::byte> b;
  b.reserve(kIndexHeaderBytes + entries.size() * kIndexEntryBytes);
  const auto h = encode_index_header(number);
  b.insert(b.end(), h.begin(), h.end());
  for (const auto& e : entries) {
    const auto eb = encode_index_entry(e);
    b.insert(b.end(), eb.begin(), eb.end());
  }
  return pwrite_all(fd, b, 0) == b.size();
}

// A segment file's index, trusted entries only, and the segment scanned from the last of
// them: what open() and read_log() build their table from.
struct Loaded {
  Scan scan;
  std::vector<IndexEntry> index;  // trusted entries, then those the scan added
  bool index_changed = false;
  std::string index_why;
};

Loaded load_segment(const Source& src, const fs::path& idx_path, std::uint64_t number, bool newest,
                    std::optional<Order> prev, std::uint64_t interval,
                    std::vector<Damage>* skipped = nullptr) {
  Loaded l;
  Window w(src);
  if (check_segment_header(w, src.size(), number)) {
    l.scan = scan_segment(src, w, number, newest, 0, 0, prev, {}, skipped);
    if (l.scan.header_ok) {  // skipped: its index cannot be trusted, a new one starts empty
      l.index_changed = true;
      l.index_why = "the segment header is damaged";
    }
    return l;
  }
  IndexLoad il = load_index(idx_path, number, src.size());
  std::size_t trusted = il.entries.size();
  while (trusted > 0 && !entry_matches(w, src.size(), il.entries[trusted - 1]))
    --trusted;
  l.index.assign(il.entries.begin(), il.entries.begin() + static_cast<std::ptrdiff_t>(trusted));
  if (!il.present) {
    l.index_why = "missing";
  } else if (!il.problem.empty()) {
    l.index_why = il.problem;
  } else if (trusted < il.entries.size()) {
    l.index_why = "entry " + std::to_string(trusted) + " does not match the segment";
  }
  l.index_changed = !l.index_why.empty();
  std::uint64_t start = kSegmentHeaderBytes, ordinal = 0;
  std::optional<Order> before = prev;
  if (!l.index.empty()) {
    if (prev && l.index.front().order <= *prev) {
      // The segment starts out of order with the one before: report it at its first record.
      l.scan.header_ok = true;
      Damage d = make_damage(src, Bad{kSegmentHeaderBytes, Problem::order_backwards,
                                      "first order " + to_string(l.index.front().order) +
                                          " is not after " + to_string(*prev)});
      d.records = count_valid_from(w, kSegmentHeaderBytes, src.size());
      l.scan.damage = std::move(d);
      l.scan.good_end = kSegmentHeaderBytes;
      l.index.clear();
      return l;
    }
    start = l.index.back().offset;
    ordinal = l.index.back().ordinal;
    before = l.index.size() >= 2 ? std::optional<Order>(l.index[l.index.size() - 2].order) : prev;
  }
  const std::size_t kept = l.index.size();
  auto add_entries = [&](const RecordInfo& r, std::uint64_t ord) {
    if (l.index.empty() ||
        (r.offset > l.index.back().offset && r.offset - l.index.back().offset >= interval))
      l.index.push_back({r.order, r.offset, ord});
  };
  const std::size_t skipped_before = skipped ? skipped->size() : 0;
  l.scan = scan_segment(src, w, number, newest, start, ordinal, before, add_entries, skipped);
  if (l.scan.damage && l.scan.damage->offset == start && start > kSegmentHeaderBytes) {
    // The record at the last trusted entry is itself bad: without the one before it the
    // segment's last order is unknown, so scan it all.
    l.index.clear();
    l.index_why = "its last entry names a bad record";
    if (skipped) skipped->resize(skipped_before);
    l.scan = scan_segment(src, w, number, newest, 0, 0, prev, add_entries, skipped);
  } else if (l.index.size() != kept && l.index_why.empty()) {
    l.index_why = "entries added for records past its end";
  }
  if (!l.index.empty() && l.index.front().offset == kSegmentHeaderBytes)
    l.scan.first = l.index.front().order;
  l.index_changed = !l.index_why.empty();
  return l;
}

// A name for a file set aside that does not exist yet.
fs::path unique_path(const fs::path& base) {
  std::error_code ec;
  if (!fs::exists(base, ec)) return base;
  for (int i = 1; i < 1000; ++i) {
    fs::path p = base;
    p += ".";  // two steps: GCC 12 warns falsely (-Wrestrict) on "." + std::to_string(i)
    p += std::to_string(i);
    if (!fs::exists(p, ec)) return p;
  }
  fail("repair", base, std::nullopt, EEXIST, "no free name for the set-aside file");
}

struct DirListing {
  std::vector<std::uint64_t> segments;  // sorted
  std::vector<std::uint64_t> indexes;
  std::vector<std::string> corrupt;  // *.corrupt files
};

DirListing list_dir(const fs::path& dir, const char* op) {
  DirListing l;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) fail(op, dir, std::nullopt, ec.value(), "list the directory");
  for (std::size_t guard = 0; it != fs::directory_iterator() && guard < 100'000'000; ++guard) {
    const std::string name = it->path().filename().string();
    if (auto n = parse_name(name, ".seg")) l.segments.push_back(*n);
    if (auto n = parse_name(name, ".idx")) l.indexes.push_back(*n);
    if (name.ends_with(".corrupt") || name.find(".corrupt.") != std::string::npos)
      l.corrupt.push_back(name);
    it.increment(ec);
    if (ec) fail(op, dir, std::nullopt, ec.value(), "list the directory");
  }
  std::sort(l.segments.begin(), l.segments.end());
  std::sort(l.indexes.begin(), l.indexes.end());
  std::sort(l.corrupt.begin(), l.corrupt.end());
  return l;
}

std::int64_t to_ns(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

}  // namespace

// ---- printing ----------------------------------------------------------------------------

std::string to_string(Order o) {
  return std::to_string(o.view) + ":" + std::to_string(o.seq);
}

const char* to_string(Problem p) {
  switch (p) {
    case Problem::short_header:
      return "short header";
    case Problem::short_record:
      return "short record";
    case Problem::bad_header:
      return "bad header";
    case Problem::bad_length:
      return "bad length";
    case Problem::bad_crc:
      return "bad crc";
    case Problem::order_backwards:
      return "order backwards";
    case Problem::missing_segment:
      return "missing segment";
  }
  return "?";
}

std::string Damage::to_string() const {
  std::ostringstream s;
  s << file.string() << " at offset " << offset << ": " << storage::to_string(problem);
  if (!detail.empty()) s << " (" << detail << ")";
  s << (torn ? "; torn tail: " : skipped ? "; skipped: " : "; corruption: ") << bytes << " bytes";
  if (skipped)
    s << " (offsets " << offset << " .. " << offset + bytes << ", between "
      << (before ? storage::to_string(*before) : std::string("the start")) << " and "
      << (after ? storage::to_string(*after) : std::string("the end")) << ")";
  if (records) s << ", " << *records << (*records == 1 ? " record" : " records");
  if (!set_aside.empty()) {
    s << " set aside in";
    for (const auto& p : set_aside)
      s << " " << p.filename().string();
  }
  return s.str();
}

namespace {
std::string range(const std::optional<Order>& first, const std::optional<Order>& last) {
  if (!first) return "none";
  return to_string(*first) + " .. " + to_string(last.value_or(*first));
}
}  // namespace

std::string RecoveryReport::to_string() const {
  std::ostringstream s;
  s << "log " << dir.string() << ": " << segments << " segments, " << records << " records ("
    << range(first, last) << "), " << bytes << " bytes";
  if (damage.empty()) s << ", no damage";
  for (const auto& d : damage)
    s << "\n  " << d.to_string();
  for (const auto& i : index_rebuilt)
    s << "\n  index rebuilt: " << i;
  if (!identity_note.empty()) s << "\n  identity: " << identity_note;
  return s.str();
}

std::string VerifyReport::to_string() const {
  std::ostringstream s;
  s << "log " << dir.string() << ": " << segments.size() << " segments, " << records << " records ("
    << range(first, last) << "), " << bytes << " bytes: " << (clean() ? "clean" : "DAMAGED");
  s << "\n  identity: "
    << (identity ? storage::to_string(*identity)
                 : std::string("none (a version-1 log, of unknown origin)"));
  for (const auto& seg : segments)
    s << "\n  " << seg.file.filename().string() << ": " << seg.records << " records ("
      << range(seg.first, seg.last) << "), " << seg.bytes << " bytes";
  for (const auto& d : damage)
    s << "\n  damage: " << d.to_string();
  for (const auto& i : index_problems)
    s << "\n  index: " << i;
  for (const auto& n : notes)
    s << "\n  note: " << n;
  return s.str();
}

LogError::LogError(std::string operation, std::filesystem::path file,
                   std::optional<std::uint64_t> offset, int sys_errno, const std::string& detail)
    : std::runtime_error([&] {
        std::string m = "log " + operation + " " + file.string();
        if (offset) m += " at offset " + std::to_string(*offset);
        if (!detail.empty()) m += ": " + detail;
        if (sys_errno != 0) m += std::string(": ") + std::strerror(sys_errno);
        return m;
      }()),
      operation_(std::move(operation)),
      file_(std::move(file)),
      offset_(offset),
      errno_(sys_errno) {}

// ---- the segment table readers share ----------------------------------------------------

namespace detail {

struct File {
  int fd = -1;
  fs::path path;
  File(int f, fs::path p) : fd(f), path(std::move(p)) {}
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() {
    if (fd >= 0) ::close(fd);
  }
};

struct Segment {
  std::uint64_t number = 0;
  std::shared_ptr<File> file;
  std::uint64_t size = 0;  // committed: header and complete records
  std::uint64_t records = 0;
  std::optional<Order> first, last;
  std::int64_t newest_ns = 0;
  std::vector<IndexEntry> index;
  std::optional<Damage> damage;  // read_log(): where a reader must stop
};

struct Table {
  bool skip_damage = false;  // set before the table is shared
  mutable std::mutex mu;     // guards everything below
  std::vector<Segment> segs;
  bool has_last = false;
  Order last, durable;
  std::uint64_t records = 0, bytes = 0;
};

}  // namespace detail

struct Cursor::State {
  std::shared_ptr<detail::Table> table;
  Order from;
  bool positioned = false;
  std::uint64_t number = 0;
  std::shared_ptr<detail::File> file;
  std::uint64_t offset = 0;
  std::uint64_t limit = 0;
  std::optional<Damage> damage;  // of the current segment, at its limit
  std::optional<Order> last;
  FileSource src{-1, {}, 0};
  Window win{src};
  std::vector<Damage> skipped;  // skip mode: the stretches skipped so far
  bool after_pending = false;   // the last one's `after` is the next record returned
  bool at_start = false;        // entered at the segment's first record: check its header

  void skip(const Bad& bad, std::uint64_t to) {
    Damage d;
    d.file = file->path;
    d.offset = bad.offset;
    d.problem = bad.problem;
    d.detail = bad.detail;
    d.skipped = true;
    d.before = last;
    d.bytes = to - bad.offset;
    skipped.push_back(std::move(d));
    after_pending = true;
    offset = to;
  }

  void enter(const detail::Segment& s, std::uint64_t off) {
    number = s.number;
    file = s.file;
    offset = off;
    limit = s.damage ? s.damage->offset : s.size;
    damage = s.damage;
    src.set_fd(file->fd, file->path, limit);
    win.rebind(src);
    at_start = off == kSegmentHeaderBytes;
  }
};

Cursor::Cursor(std::unique_ptr<State> s) : s_(std::move(s)) {}
Cursor::Cursor(Cursor&&) noexcept = default;
Cursor& Cursor::operator=(Cursor&&) noexcept = default;
Cursor::~Cursor() = default;

const std::vector<Damage>& Cursor::skipped() const {
  return s_->skipped;
}

std::optional<RecordView> Cursor::next() {
  State& s = *s_;
  if (!s.positioned) {
    std::lock_guard lock(s.table->mu);
    const auto& segs = s.table->segs;
    if (segs.empty()) return std::nullopt;
    std::size_t i = 0;
    for (std::size_t k = 0; k < segs.size(); ++k)
      if (segs[k].first && *segs[k].first <= s.from) i = k;
    std::uint64_t off = kSegmentHeaderBytes;
    for (const auto& e : segs[i].index)
      if (e.order <= s.from) off = e.offset;
    s.enter(segs[i], off);
    s.positioned = true;
  }
  for (;;) {
    if (s.offset >= s.limit) {
      if (s.damage && s.offset >= s.damage->offset)
        fail("read", s.file->path, s.damage->offset, 0,
             std::string(to_string(s.damage->problem)) + ": " + s.damage->detail);
      std::lock_guard lock(s.table->mu);
      const auto& segs = s.table->segs;
      const auto it = std::find_if(segs.begin(), segs.end(),
                                   [&](const detail::Segment& g) { return g.number >= s.number; });
      if (it == segs.end()) return std::nullopt;
      if (it->number == s.number) {
        const std::uint64_t limit = it->damage ? it->damage->offset : it->size;
        if (s.offset < limit) {
          s.limit = limit;
          s.src.set_size(limit);
        } else {
          const auto nx = it + 1;
          if (nx == segs.end()) return std::nullopt;
          s.enter(*nx, kSegmentHeaderBytes);
          continue;
        }
      } else {
        s.enter(*it, kSegmentHeaderBytes);  // the one we read was deleted: go on after it
        continue;
      }
    }
    if (s.at_start && s.table->skip_damage) {
      // A damaged segment header is skipped as open() and verify() skip it (scan_segment).
      s.at_start = false;
      if (const auto bad = check_segment_header(s.win, s.limit, s.number)) {
        s.skip(*bad, resync(s.win, kSegmentHeaderBytes - 8, s.limit, s.last).value_or(s.limit));
        continue;
      }
    }
    RecordInfo r;
    auto bad = check_record_header(s.win, s.offset, s.limit, r);
    if (!bad && r.order < s.from) {
      s.offset += r.span;  // before the start: its header is enough to step over it
      continue;
    }
    if (!bad) {
      s.win.get(s.offset, static_cast<std::size_t>(r.span));  // the whole record, read once
      bad = check_record(s.win, s.offset, s.limit, r);
    }
    if (!bad && s.last && r.order <= *s.last)
      bad = Bad{s.offset, Problem::order_backwards,
                "order " + to_string(r.order) + " is not after " + to_string(*s.last)};
    if (bad && s.table->skip_damage) {
      // Resynchronise as open() and verify() do; the stretch is reported, not thrown.
      s.skip(*bad, resync(s.win, s.offset, s.limit, s.last).value_or(s.limit));
      continue;
    }
    if (bad)
      fail("read", s.file->path, bad->offset, 0,
           std::string(to_string(bad->problem)) + ": " + bad->detail);
    const std::uint64_t at = s.offset;
    s.offset += r.span;
    s.last = r.order;
    if (s.after_pending) {
      s.skipped.back().after = r.order;
      s.after_pending = false;
    }
    return RecordView{r.order,  r.kind, r.time_ns, s.win.get(at + kRecordHeaderBytes, r.length),
                      s.number, at};
  }
}

// ---- the log ------------------------------------------------------------------------------

struct Log::Impl {
  LogOptions opt;
  std::shared_ptr<detail::Table> table = std::make_shared<detail::Table>();
  Fd dir_fd, lock_fd, idx_fd;
  std::uint64_t idx_bytes = 0;
  bool idx_ok = false;
  bool dir_dirty = false;
  bool tail_dirty = false;  // the active file may hold bytes past its committed size
  std::chrono::steady_clock::time_point last_sync = std::chrono::steady_clock::now();
  std::vector<std::byte> headers;
  std::vector<iovec> iov;

  fs::path seg_path(std::uint64_t n) const { return opt.dir / segment_name(n, ".seg"); }
  fs::path idx_path(std::uint64_t n) const { return opt.dir / segment_name(n, ".idx"); }
  detail::Segment& active() { return table->segs.back(); }  // appender thread only

  void open_active_index() {
    detail::Segment& a = active();
    idx_fd.reset();
    idx_ok = false;
    const int fd = ::open(idx_path(a.number).c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    idx_fd = Fd(fd);
    idx_bytes = kIndexHeaderBytes + a.index.size() * kIndexEntryBytes;
    idx_ok = true;
  }

  void add_index_entry(detail::Segment& a, const IndexEntry& e) {
    a.index.push_back(e);  // caller holds the table lock
    if (!idx_ok) return;
    const auto b = encode_index_entry(e);
    if (pwrite_all(idx_fd.fd, b, idx_bytes) != b.size()) {
      idx_ok = false;  // a cache: the next open() rebuilds it
      (void)::ftruncate(idx_fd.fd, static_cast<off_t>(idx_bytes));
      return;
    }
    idx_bytes += b.size();
  }

  // Creates segment `n` (empty: its header) and makes it the active one.
  void create_segment(std::uint64_t n) {
    const fs::path p = seg_path(n);
    const int fd = open_file(p, O_RDWR | O_CREAT | O_EXCL, "create segment");
    auto file = std::make_shared<detail::File>(fd, p);
    const auto h = encode_segment_header(n);
    if (pwrite_all(fd, h, 0) != h.size()) {
      const int err = errno;
      ::unlink(p.c_str());
      fail("create segment", p, 0, err, "write the header");
    }
    write_index(idx_path(n), n, {});
    dir_dirty = true;
    detail::Segment s;
    s.number = n;
    s.file = std::move(file);
    s.size = kSegmentHeaderBytes;
    {
      std::lock_guard lock(table->mu);
      table->segs.push_back(std::move(s));
      table->bytes += kSegmentHeaderBytes;
    }
    open_active_index();
  }

  void roll() {
    detail::Segment& a = active();
    sync_fd(a.file->fd, a.file->path, "seal segment");
    {
      std::lock_guard lock(table->mu);
      table->durable = table->last;
    }
    create_segment(a.number + 1);
  }

  void fix_tail() {
    if (!tail_dirty) return;
    detail::Segment& a = active();
    truncate_to(a.file->fd, a.file->path, a.size, "append");
    tail_dirty = false;
  }

  // The records items[i..j) were written at the end of the active segment.
  void commit(std::span<const AppendItem> items, std::int64_t now_ns) {
    std::lock_guard lock(table->mu);
    detail::Segment& a = active();
    for (const auto& it : items) {
      const std::uint64_t span = record_span(it.payload.size());
      if (a.index.empty() || a.size - a.index.back().offset >= opt.index_interval)
        add_index_entry(a, {it.order, a.size, a.records});
      a.size += span;
      ++a.records;
      if (!a.first) a.first = it.order;
      a.last = it.order;
      a.newest_ns = now_ns;
      table->records += 1;
      table->bytes += span;
      table->last = it.order;
      table->has_last = true;
    }
  }

  void append(std::span<const AppendItem> items) {
    if (items.empty()) return;
    std::optional<Order> prev;
    {
      std::lock_guard lock(table->mu);
      if (table->has_last) prev = table->last;
    }
    for (const auto& it : items) {
      if (it.payload.size() > kMaxPayload)
        fail("append", active().file->path, std::nullopt, 0,
             "payload of " + std::to_string(it.payload.size()) + " bytes above the maximum " +
                 std::to_string(kMaxPayload));
      if (prev && it.order <= *prev)
        fail("append", active().file->path, std::nullopt, 0,
             "order " + to_string(it.order) + " is not after the last record " + to_string(*prev));
      prev = it.order;
    }
    fix_tail();
    const std::int64_t now_ns = to_ns(std::chrono::system_clock::now());
    static constexpr std::array<std::byte, 8> kZeros{};
    std::size_t i = 0;
    while (i < items.size()) {
      if (active().records > 0 &&
          active().size + record_span(items[i].payload.size()) > opt.segment_bytes)
        roll();
      detail::Segment& a = active();
      std::size_t j = i;
      std::uint64_t end = a.size;
      while (j < items.size() && static_cast<int>(3 * (j - i)) + 3 <= kMaxIov &&
             (j == i || end + record_span(items[j].payload.size()) <= opt.segment_bytes)) {
        end += record_span(items[j].payload.size());
        ++j;
      }
      headers.resize((j - i) * kRecordHeaderBytes);
      iov.clear();
      for (std::size_t k = i; k < j; ++k) {
        std::byte* h = headers.data() + (k - i) * kRecordHeaderBytes;
        const auto& it = items[k];
        encode_record_header(h, it.order, it.kind, now_ns, it.payload);
        iov.push_back({h, kRecordHeaderBytes});
        // pwritev takes non-const bases; it only reads them.
        iov.push_back({const_cast<std::byte*>(it.payload.data()), it.payload.size()});
        const std::size_t pad =
            record_span(it.payload.size()) - kRecordHeaderBytes - it.payload.size();
        iov.push_back({const_cast<std::byte*>(kZeros.data()), pad});
      }
      const std::uint64_t want = end - a.size;
      const std::uint64_t wrote = pwritev_all(a.file->fd, iov, a.size);
      if (wrote < want) {
        const int err = errno;
        // Keep the records written whole; cut the rest.
        std::size_t whole = i;
        std::uint64_t done = 0;
        while (whole < j && done + record_span(items[whole].payload.size()) <= wrote) {
          done += record_span(items[whole].payload.size());
          ++whole;
        }
        commit(items.subspan(i, whole - i), now_ns);
        tail_dirty = true;
        try {
          fix_tail();
        } catch (const LogError&) {
          // tail_dirty stays set: the next append cuts the file first.
        }
        fail("append", a.file->path, a.size, err,
             "write of " + std::to_string(want) + " bytes stopped after " + std::to_string(wrote) +
                 "; the log ends at " + to_string(last_locked()));
      }
      commit(items.subspan(i, j - i), now_ns);
      i = j;
    }
    if (opt.sync == SyncPolicy::every_append) {
      sync();
    } else if (opt.sync == SyncPolicy::periodic &&
               std::chrono::steady_clock::now() - last_sync >= opt.sync_period) {
      sync();
    }
  }

  Order last_locked() const {
    std::lock_guard lock(table->mu);
    return table->last;
  }

  void sync() {
    detail::Segment& a = active();
    sync_fd(a.file->fd, a.file->path, "sync");
    if (dir_dirty) {
      sync_dir(dir_fd.fd, opt.dir, "sync");
      dir_dirty = false;
    }
    last_sync = std::chrono::steady_clock::now();
    std::lock_guard lock(table->mu);
    table->durable = table->last;
  }

  void apply_retention(std::chrono::system_clock::time_point now) {
    const std::int64_t age_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(opt.retain_age).count();
    const std::int64_t now_ns = to_ns(now);
    for (;;) {
      detail::Segment* oldest = nullptr;
      std::uint64_t total = 0;
      {
        std::lock_guard lock(table->mu);
        if (table->segs.size() < 2) return;
        oldest = &table->segs.front();
        total = table->bytes;
      }
      const bool too_old = opt.retain_age.count() > 0 &&
                           (oldest->records == 0 || oldest->newest_ns < now_ns - age_ns);
      const bool too_big = opt.retain_bytes > 0 && total > opt.retain_bytes;
      if (!too_old && !too_big) return;
      const fs::path p = oldest->file->path;
      if (::unlink(p.c_str()) != 0 && errno != ENOENT) fail("retention", p, std::nullopt, errno);
      ::unlink(idx_path(oldest->number).c_str());
      dir_dirty = true;
      std::lock_guard lock(table->mu);
      table->bytes -= oldest->size;
      table->records -= oldest->records;
      table->segs.erase(table->segs.begin());
    }
  }

  // ---- open ----

  // Moves segment `i` from `offset` on, and every later segment, into *.corrupt files.
  void set_aside(std::vector<std::uint64_t>& numbers, std::size_t i, std::uint64_t offset,
                 Damage& d) {
    for (std::size_t k = i; k < numbers.size(); ++k) {
      const fs::path p = seg_path(numbers[k]);
      const std::uint64_t from = k == i ? offset : 0;
      fs::path dest = p;
      dest += "@" + std::to_string(from) + ".corrupt";
      dest = unique_path(dest);
      if (from == 0) {
        if (::rename(p.c_str(), dest.c_str()) != 0)
          fail("repair", p, std::nullopt, errno, "rename");
      } else {
        Fd in(open_file(p, O_RDWR, "repair"));
        const std::uint64_t size = file_size(in.fd, p, "repair");
        Fd out(open_file(dest, O_WRONLY | O_CREAT | O_EXCL, "repair"));
        FileSource src(in.fd, p, size);
        std::vector<std::byte> buf(kWindowBytes);
        for (std::uint64_t pos = from; pos < size;) {
          const std::size_t n = src.read_at(pos, buf);
          if (n == 0) break;
          if (pwrite_all(out.fd, {buf.data(), n}, pos - from) != n)
            fail("repair", dest, pos - from, errno, "write");
          pos += n;
        }
        sync_fd(out.fd, dest, "repair");
        sync_dir(dir_fd.fd, opt.dir, "repair");
        truncate_to(in.fd, p, from, "repair");
        sync_fd(in.fd, p, "repair");
      }
      if (from == 0) ::unlink(idx_path(numbers[k]).c_str());
      d.set_aside.push_back(dest);
    }
    sync_dir(dir_fd.fd, opt.dir, "repair");
    numbers.resize(offset == 0 ? i : i + 1);
  }

  void corruption(std::vector<std::uint64_t>& numbers, std::size_t i, Damage d,
                  RecoveryReport& report) {
    if (!opt.repair)
      fail("open", d.file, d.offset, 0,
           std::string(to_string(d.problem)) + ": " + d.detail +
               " (followed by more data: corruption, not a torn write; open with repair to set "
               "it aside)");
    set_aside(numbers, i, d.offset, d);
    report.damage.push_back(std::move(d));
  }

  void recover(RecoveryReport& report) {
    DirListing l = list_dir(opt.dir, "open");
    for (const auto n : l.indexes)
      if (!std::binary_search(l.segments.begin(), l.segments.end(), n))
        ::unlink(idx_path(n).c_str());  // the cache of a segment that is gone
    std::vector<std::uint64_t> numbers = l.segments;
    for (std::size_t i = 1; i < numbers.size(); ++i) {
      if (numbers[i] == numbers[i - 1] + 1) continue;
      Damage d;
      d.file = seg_path(numbers[i]);
      d.problem = Problem::missing_segment;
      d.detail = "segments " + std::to_string(numbers[i - 1] + 1) + " to " +
                 std::to_string(numbers[i] - 1) + " are missing before it";
      for (std::size_t k = i; k < numbers.size(); ++k) {
        std::error_code ec;
        d.bytes += fs::file_size(seg_path(numbers[k]), ec);
      }
      corruption(numbers, i, std::move(d), report);
      break;
    }
    std::optional<Order> prev;
    bool pending_after = false;  // the last stretch skipped reaches its segment's end
    std::vector<detail::Segment> segs;
    for (std::size_t i = 0; i < numbers.size(); ++i) {
      const bool newest = i + 1 == numbers.size();
      const std::uint64_t n = numbers[i];
      const fs::path p = seg_path(n);
      auto file = std::make_shared<detail::File>(open_file(p, O_RDWR, "open"), p);
      FileSource src(file->fd, p, file_size(file->fd, p, "open"));
      std::vector<Damage> skipped;
      Loaded ld = load_segment(src, idx_path(n), n, newest, prev, opt.index_interval,
                               opt.skip_damage ? &skipped : nullptr);
      // Stretches skipped (skip_damage): left in place, listed; readers skip them too.
      if (pending_after && !report.damage.empty())
        report.damage.back().after = ld.scan.first ? ld.scan.first : ld.scan.last;
      pending_after = false;
      for (auto& d : skipped) {
        pending_after = !d.after;
        report.damage.push_back(std::move(d));
      }
      detail::Segment s;
      s.number = n;
      s.file = file;
      if (ld.scan.damage && ld.scan.damage->torn) {
        Damage d = std::move(*ld.scan.damage);
        if (!ld.scan.header_ok) {
          truncate_to(file->fd, p, 0, "open");
          const auto h = encode_segment_header(n);
          if (pwrite_all(file->fd, h, 0) != h.size()) fail("open", p, 0, errno, "rewrite header");
          ld.scan.good_end = kSegmentHeaderBytes;
          ld.index.clear();
          ld.index_changed = true;
          ld.index_why = "segment header rewritten";
        } else {
          truncate_to(file->fd, p, d.offset, "open");
        }
        report.damage.push_back(std::move(d));
      } else if (ld.scan.damage) {
        corruption(numbers, i, std::move(*ld.scan.damage), report);
        if (numbers.size() == i) break;  // the whole segment went
        ld.index_changed = ld.index_changed || ld.index_why.empty();
        if (ld.index_why.empty()) ld.index_why = "segment cut by repair";
      }
      s.size = ld.scan.good_end;
      s.records = ld.scan.records;
      s.first = ld.scan.first;
      s.last = ld.scan.last;
      s.newest_ns = ld.scan.newest_ns;
      s.index = std::move(ld.index);
      if (ld.index_changed) {
        write_index(idx_path(n), n, s.index);
        report.index_rebuilt.push_back(idx_path(n).filename().string() + ": " + ld.index_why);
      }
      if (s.last) prev = s.last;
      segs.push_back(std::move(s));
      if (numbers.size() == i + 1) break;  // repair cut the log here
    }
    {
      std::lock_guard lock(table->mu);
      table->skip_damage = opt.skip_damage;
      table->segs = std::move(segs);
      for (const auto& s : table->segs) {
        table->records += s.records;
        table->bytes += s.size;
        if (s.last) {
          table->last = *s.last;
          table->has_last = true;
        }
      }
    }
    if (table->segs.empty()) {
      // A new log, or repair set every segment aside: start again at the first number.
      create_segment(l.segments.empty() ? 1 : l.segments.front());
    } else {
      open_active_index();
    }
    sync_fd(active().file->fd, active().file->path, "open");
    sync_dir(dir_fd.fd, opt.dir, "open");
    dir_dirty = false;
    std::lock_guard lock(table->mu);
    table->durable = table->last;
    report.segments = table->segs.size();
    report.records = table->records;
    report.bytes = table->bytes;
    report.last = table->has_last ? std::optional<Order>(table->last) : std::nullopt;
    for (const auto& s : table->segs)
      if (s.first) {
        report.first = s.first;
        break;
      }
  }
};

Log::Log(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Log::Log(Log&&) noexcept = default;
Log& Log::operator=(Log&&) noexcept = default;
Log::~Log() {
  if (impl_ && impl_->opt.sync != SyncPolicy::never && !impl_->table->segs.empty()) {
    try {
      impl_->sync();
    } catch (const LogError&) {
      // Best effort: a destructor cannot report it.
    }
  }
}

// ---- identity ------------------------------------------------------------------------------

namespace {

constexpr const char* kIdentityFile = "IDENTITY";
constexpr const char* kIdentityMagic = "spindle-log-identity 2";

std::string hex64(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << std::setw(16) << std::setfill('0') << v;
  return s.str();
}

// Writes IDENTITY through a temporary file and a rename, then syncs the directory: it is
// either the old file or the whole new one.
void write_identity(const fs::path& dir, int dir_fd, const LogIdentity& id) {
  const fs::path p = dir / kIdentityFile;
  fs::path tmp = p;
  tmp += ".tmp";
  const std::string text = std::string(kIdentityMagic) + "\ndomain " + std::to_string(id.domain) +
                           "\nhome " + hex64(id.home) + "\n";
  {
    Fd fd(open_file(tmp, O_WRONLY | O_CREAT | O_TRUNC, "write identity"));
    if (pwrite_all(fd.fd, std::as_bytes(std::span(text.data(), text.size())), 0) != text.size())
      fail("write identity", tmp, std::nullopt, errno);
    sync_fd(fd.fd, tmp, "write identity");
  }
  if (::rename(tmp.c_str(), p.c_str()) != 0)
    fail("write identity", p, std::nullopt, errno, "rename");
  sync_dir(dir_fd, dir, "write identity");
}

bool has_segments(const fs::path& dir) {
  return !list_dir(dir, "open").segments.empty();
}

}  // namespace

std::string to_string(const LogIdentity& id) {
  return "domain " + std::to_string(id.domain) + ", home " + hex64(id.home);
}

std::optional<LogIdentity> read_identity(const std::filesystem::path& dir) {
  const fs::path p = dir / kIdentityFile;
  const int raw = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (raw < 0) {
    if (errno == ENOENT) return std::nullopt;
    fail("read identity", p, std::nullopt, errno);
  }
  Fd fd(raw);
  std::array<char, 256> buf{};
  FileSource src(fd.fd, p,
                 std::min<std::uint64_t>(buf.size(), file_size(fd.fd, p, "read identity")));
  const std::size_t n = src.read_at(0, std::as_writable_bytes(std::span(buf)));
  std::istringstream in(std::string(buf.data(), n));
  std::string magic, domain_key, home_key, home_hex;
  std::getline(in, magic);
  std::uint64_t domain = 0;
  in >> domain_key >> domain >> home_key >> home_hex;
  LogIdentity id;
  bool ok = magic == kIdentityMagic && in && domain_key == "domain" && home_key == "home" &&
            domain <= UINT32_MAX && home_hex.size() == 18 && home_hex.starts_with("0x");
  for (std::size_t i = 2; ok && i < home_hex.size(); ++i) {
    const char c = home_hex[i];
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    ok = d >= 0;
    id.home = id.home << 4 | static_cast<std::uint64_t>(ok ? d : 0);
  }
  if (!ok)
    fail("read identity", p, std::nullopt, 0,
         "not an identity file (expected \"" + std::string(kIdentityMagic) +
             "\", \"domain <id>\", \"home 0x<16 hex digits>\")");
  id.domain = static_cast<std::uint32_t>(domain);
  return id;
}

Log Log::open(const LogOptions& options, RecoveryReport* report) {
  auto impl = std::make_unique<Impl>();
  impl->opt = options;
  if (impl->opt.segment_bytes < kSegmentHeaderBytes + kRecordHeaderBytes)
    impl->opt.segment_bytes = kSegmentHeaderBytes + kRecordHeaderBytes;
  if (impl->opt.index_interval == 0) impl->opt.index_interval = 1;
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) fail("open", options.dir, std::nullopt, ec.value(), "create the directory");
  impl->dir_fd = Fd(open_file(options.dir, O_RDONLY | O_DIRECTORY, "open"));
  const fs::path lock_path = options.dir / "LOCK";
  impl->lock_fd = Fd(open_file(lock_path, O_RDWR | O_CREAT, "open"));
  if (::flock(impl->lock_fd.fd, LOCK_EX | LOCK_NB) != 0)
    fail("open", lock_path, std::nullopt, errno, "the log is open in another process");
  RecoveryReport local;
  RecoveryReport& r = report ? *report : local;
  r = RecoveryReport{};
  r.dir = options.dir;
  if (options.identity) {
    // Whose log this is: refuse another domain's or another home's, before anything changes.
    const auto found = read_identity(options.dir);
    if (found && *found != *options.identity)
      fail("identity", options.dir / kIdentityFile, std::nullopt, 0,
           "this log belongs to " + to_string(*found) + ", not to this node's " +
               to_string(*options.identity) +
               " (copied from another domain's directory or another node's home?)");
    if (!found) {
      if (has_segments(options.dir))
        r.identity_note = "no " + std::string(kIdentityFile) +
                          " (a version-1 log, of unknown origin): taken as " +
                          to_string(*options.identity);
      write_identity(options.dir, impl->dir_fd.fd, *options.identity);
    }
  }
  impl->recover(r);
  return Log(std::move(impl));
}

Order Log::append(Order order, std::uint16_t kind, std::span<const std::byte> payload) {
  const AppendItem item{order, kind, payload};
  impl_->append({&item, 1});
  return order;
}
void Log::append(std::span<const AppendItem> items) {
  impl_->append(items);
}
void Log::sync() {
  impl_->sync();
}
void Log::apply_retention(std::chrono::system_clock::time_point now) {
  impl_->apply_retention(now);
}

Order Log::last() const {
  std::lock_guard lock(impl_->table->mu);
  return impl_->table->last;
}
Order Log::durable() const {
  std::lock_guard lock(impl_->table->mu);
  return impl_->table->durable;
}
std::uint64_t Log::records() const {
  std::lock_guard lock(impl_->table->mu);
  return impl_->table->records;
}
std::uint64_t Log::bytes() const {
  std::lock_guard lock(impl_->table->mu);
  return impl_->table->bytes;
}
std::uint64_t Log::segments() const {
  std::lock_guard lock(impl_->table->mu);
  return impl_->table->segs.size();
}
const LogOptions& Log::options() const {
  return impl_->opt;
}

Cursor Log::read(Order from) const {
  auto s = std::make_unique<Cursor::State>();
  s->table = impl_->table;
  s->from = from;
  return Cursor(std::move(s));
}

std::uint64_t Log::for_each(Order from, const std::function<bool(const RecordView&)>& f) const {
  Cursor c = read(from);
  std::uint64_t n = 0;
  while (auto r = c.next()) {
    ++n;
    if (!f(*r)) break;
  }
  return n;
}

// ---- without opening ------------------------------------------------------------------------

Cursor read_log(const std::filesystem::path& dir, Order from, bool skip_damage) {
  auto table = std::make_shared<detail::Table>();
  table->skip_damage = skip_damage;
  const DirListing l = list_dir(dir, "read");
  std::optional<Order> prev;
  for (std::size_t i = 0; i < l.segments.size(); ++i) {
    const std::uint64_t n = l.segments[i];
    if (i > 0 && n != l.segments[i - 1] + 1) break;  // a reader stops at a gap
    const fs::path p = dir / segment_name(n, ".seg");
    auto file = std::make_shared<detail::File>(open_file(p, O_RDONLY, "read"), p);
    FileSource src(file->fd, p, file_size(file->fd, p, "read"));
    Loaded ld = load_segment(src, dir / segment_name(n, ".idx"), n, i + 1 == l.segments.size(),
                             prev, std::uint64_t{64} << 10);
    detail::Segment s;
    s.number = n;
    s.file = file;
    s.size = src.size();
    s.first = ld.scan.first;
    s.index = std::move(ld.index);
    // Skipping damage, the cursor resynchronises by itself: it reads the whole file.
    if (!skip_damage) s.damage = std::move(ld.scan.damage);
    if (ld.scan.last) prev = ld.scan.last;
    table->segs.push_back(std::move(s));
  }
  auto s = std::make_unique<Cursor::State>();
  s->table = std::move(table);
  s->from = from;
  return Cursor(std::move(s));
}

std::vector<std::filesystem::path> find_logs(const std::filesystem::path& root) {
  std::vector<fs::path> out;
  std::error_code ec;
  auto has_segment = [](const fs::path& d) {
    std::error_code e;
    for (fs::directory_iterator it(d, e); !e && it != fs::directory_iterator(); it.increment(e))
      if (parse_name(it->path().filename().string(), ".seg")) return true;
    return false;
  };
  if (has_segment(root)) out.push_back(root);
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (std::size_t guard = 0; !ec && it != fs::recursive_directory_iterator() && guard < 10'000'000;
       ++guard) {
    if (it->is_directory(ec) && !it->is_symlink(ec) && has_segment(it->path()))
      out.push_back(it->path());
    it.increment(ec);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

VerifyReport verify(const std::filesystem::path& dir) {
  VerifyReport v;
  v.dir = dir;
  const DirListing l = list_dir(dir, "verify");
  try {
    v.identity = read_identity(dir);
  } catch (const LogError& e) {
    v.notes.push_back(e.what());
  }
  for (const auto& c : l.corrupt)
    v.notes.push_back(c + ": bytes set aside by an earlier repair");
  for (const auto n : l.indexes)
    if (!std::binary_search(l.segments.begin(), l.segments.end(), n))
      v.notes.push_back(segment_name(n, ".idx") + ": index of no segment (open() removes it)");
  std::optional<Order> prev;
  bool pending_after = false;  // the last damage listed waits for the order after it
  auto add_damage = [&](Damage d) {
    if (v.damage.size() < kMaxDamage) v.damage.push_back(std::move(d));
  };
  for (std::size_t i = 0; i < l.segments.size(); ++i) {
    const std::uint64_t n = l.segments[i];
    const bool newest = i + 1 == l.segments.size();
    const fs::path p = dir / segment_name(n, ".seg");
    if (i > 0 && n != l.segments[i - 1] + 1) {
      Damage d;
      d.file = p;
      d.problem = Problem::missing_segment;
      d.detail = "segments " + std::to_string(l.segments[i - 1] + 1) + " to " +
                 std::to_string(n - 1) + " are missing before it";
      add_damage(std::move(d));
    }
    Fd fd(open_file(p, O_RDONLY, "verify"));
    FileSource src(fd.fd, p, file_size(fd.fd, p, "verify"));
    Window w(src);
    SegmentSummary sum;
    sum.file = p;
    sum.number = n;
    sum.bytes = src.size();
    v.bytes += src.size();
    IndexLoad il = load_index(dir / segment_name(n, ".idx"), n, src.size());
    std::size_t next_entry = 0;
    std::vector<Damage> skipped;
    bool damaged_here = false;
    const std::string idx_name = segment_name(n, ".idx");
    auto check_entries = [&](const RecordInfo& r, std::uint64_t ordinal) {
      for (; next_entry < il.entries.size() && il.entries[next_entry].offset <= r.offset;
           ++next_entry) {
        const IndexEntry& e = il.entries[next_entry];
        if (e.offset < r.offset) {
          v.index_problems.push_back(idx_name + ": entry " + std::to_string(next_entry) +
                                     " names offset " + std::to_string(e.offset) +
                                     ", where no record starts");
        } else if (e.order != r.order ||
                   (!damaged_here && skipped.empty() && e.ordinal != ordinal)) {
          v.index_problems.push_back(idx_name + ": entry " + std::to_string(next_entry) + " says " +
                                     to_string(e.order) + " (record " + std::to_string(e.ordinal) +
                                     ") at offset " + std::to_string(e.offset) +
                                     ", the segment has " + to_string(r.order) + " (record " +
                                     std::to_string(ordinal) + ")");
        }
      }
    };
    std::uint64_t start = 0;
    std::uint64_t ordinal = 0;
    for (std::size_t rounds = 0; rounds < kMaxDamage + 1; ++rounds) {
      // Damaged stretches that a record resynchronises after are skipped as open() with
      // skip_damage and the cursors skip them (resync()): the same offsets and bytes.
      skipped.clear();
      Scan s = scan_segment(src, w, n, newest, start, ordinal, prev, check_entries, &skipped);
      if (pending_after && s.first && !v.damage.empty()) v.damage.back().after = s.first;
      pending_after = false;
      for (auto& d : skipped) {
        pending_after = !d.after;  // skipped to the segment's end: the next one tells
        add_damage(std::move(d));
      }
      sum.records += s.records - ordinal;
      ordinal = s.records;
      if (s.first && !sum.first) sum.first = s.first;
      if (s.last) {
        sum.last = prev = s.last;
        sum.newest_ns = s.newest_ns;
      }
      if (!s.damage) break;
      damaged_here = true;
      pending_after = false;
      Damage d = std::move(*s.damage);
      if (!s.header_ok) {
        add_damage(std::move(d));
        break;
      }
      // Go on at the next valid record, so that every damaged place is listed.
      std::uint64_t next = src.size();
      if (d.problem == Problem::order_backwards) {
        RecordInfo r;
        (void)check_record(w, d.offset, src.size(), r);
        next = d.offset + r.span;
        d.records = 1;
      } else if (const auto valid = find_valid_after(w, d.offset, src.size())) {
        next = *valid;
      }
      if (next < src.size()) {
        d.bytes = next - d.offset;
        if (d.problem != Problem::order_backwards) d.records.reset();
        d.torn = false;
      }
      add_damage(std::move(d));
      if (next >= src.size()) break;
      start = next;
    }
    if (!il.present) {
      v.notes.push_back(idx_name + ": missing (open() rebuilds it)");
    } else if (!il.problem.empty()) {
      v.index_problems.push_back(idx_name + ": " + il.problem);
    }
    for (; next_entry < il.entries.size(); ++next_entry)
      v.index_problems.push_back(idx_name + ": entry " + std::to_string(next_entry) +
                                 " names offset " + std::to_string(il.entries[next_entry].offset) +
                                 ", past the last valid record");
    v.records += sum.records;
    if (sum.first && !v.first) v.first = sum.first;
    if (sum.last) v.last = sum.last;
    v.segments.push_back(std::move(sum));
  }
  return v;
}

SegmentCheck check_segment(std::span<const std::byte> file, std::uint64_t number, bool newest) {
  MemorySource src(file);
  Window w(src);
  Scan s = scan_segment(src, w, number, newest, 0, 0, std::nullopt, {});
  SegmentCheck c;
  c.header_ok = s.header_ok;
  c.records = s.records;
  c.good_end = s.header_ok ? s.good_end : 0;
  c.first = s.first;
  c.last = s.last;
  c.damage = std::move(s.damage);
  return c;
}

}  // namespace spindle::storage
