// The durable log's file format and the parser of untrusted bytes (docs/log-format.md; the
// layouts are drawn in log.hpp): encoding segment headers, records and index entries; reading
// a file through a bounded window; checking a record, a segment header, a whole segment from
// an index entry on; resynchronising after damage (resync(): what open(), cursors and
// verify() share); loading an index; and the system calls the log makes, each failure a
// LogError naming the file. Internal to storage: log.cpp (the Log, its cursors, read_log(),
// verify()) builds on it, as leveldb's log_reader/log_writer build on log_format.
//
// Threading: free functions of their arguments; a Source or Window is used by one thread at a
// time.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "storage/log.hpp"

namespace spindle::storage::format {

namespace fs = std::filesystem;

// ---- encoding -------------------------------------------------------------------------

inline constexpr std::array<char, 8> kSegmentMagic = {'S', 'P', 'N', 'D', 'L', 'S', 'E', 'G'};
inline constexpr std::array<char, 8> kIndexMagic = {'S', 'P', 'N', 'D', 'L', 'I', 'D', 'X'};
inline constexpr std::uint16_t kVersion = 1;  // of segments and indexes (IDENTITY: format 2)
inline constexpr std::uint64_t kIndexHeaderBytes = 24;
inline constexpr std::uint64_t kIndexEntryBytes = 40;
// The read buffer of scans and cursors.
inline constexpr std::size_t kWindowBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxDamage = 100;  // places verify() lists at most
inline constexpr int kMaxIov = 1020;            // below IOV_MAX (1024)

// CRC32C (Castagnoli), the standard values (log-format.md), by ISA-L.
std::uint32_t crc32c(const std::byte* p, std::size_t n);

// Little-endian integers at `p`.
void put16(std::byte* p, std::uint16_t v);
void put32(std::byte* p, std::uint32_t v);
void put64(std::byte* p, std::uint64_t v);
std::uint16_t get16(const std::byte* p);
std::uint32_t get32(const std::byte* p);
std::uint64_t get64(const std::byte* p);

// Bytes a record with `length` payload bytes takes: header, payload, padding to 8.
std::uint64_t record_span(std::uint64_t length);

std::array<std::byte, kSegmentHeaderBytes> encode_segment_header(std::uint64_t number);

// Fills the 40-byte header of a record; the payload and padding complete the CRC.
void encode_record_header(std::byte* h, Order order, std::uint16_t kind, std::int64_t time_ns,
                          std::span<const std::byte> payload);

struct IndexEntry {
  Order order;
  std::uint64_t offset = 0;
  std::uint64_t ordinal = 0;  // records before it in its segment
};

std::array<std::byte, kIndexHeaderBytes> encode_index_header(std::uint64_t number);

std::array<std::byte, kIndexEntryBytes> encode_index_entry(const IndexEntry& e);

std::string hex32(std::uint32_t v);  // "0x1f"

// The file name of segment (or index) `number`: 20 digits, zero padded, then `ext`.
std::string segment_name(std::uint64_t number, const char* ext);

// The number of a segment (or index) file name, or nullopt for any other name.
std::optional<std::uint64_t> parse_name(const std::string& name, const char* ext);

// ---- system calls ------------------------------------------------------------------------

// Each throws LogError naming `op`, the file (and offset) and strerror(errno) on failure.
[[noreturn]] void fail(const char* op, const fs::path& file, std::optional<std::uint64_t> offset,
                       int err, const std::string& detail = {});
int open_file(const fs::path& p, int flags, const char* op);  // O_CLOEXEC, EINTR retried
std::uint64_t file_size(int fd, const fs::path& p, const char* op);

// Writes all of `data` at `offset`; returns the bytes written before an error (errno set)
// or data.size().
std::size_t pwrite_all(int fd, std::span<const std::byte> data, std::uint64_t offset);

// pwritev of all of `iov` at `offset`, resuming after short writes; returns the bytes
// written (fewer than the total only on an error, with errno set).
std::uint64_t pwritev_all(int fd, std::vector<iovec>& iov, std::uint64_t offset);

void truncate_to(int fd, const fs::path& p, std::uint64_t size, const char* op);
void sync_fd(int fd, const fs::path& p, const char* op);  // fdatasync
// fsync of a directory; a file system that cannot sync directories (EINVAL) is let be.
void sync_dir(int dir_fd, const fs::path& p, const char* op);

// An owned file descriptor.
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
                                       RecordInfo& r);

// The whole record at `offset`: header, then the CRC over everything after the CRC field,
// read in window-sized pieces (nothing is allocated for the length).
std::optional<Bad> check_record(Window& w, std::uint64_t offset, std::uint64_t end, RecordInfo& r);

// The first offset after `from` (on the 8-byte grid records lie on) holding a whole valid
// record, if any.
std::optional<std::uint64_t> find_valid_after(Window& w, std::uint64_t from, std::uint64_t end);

// Where reading goes on after a bad record at `from` (docs/log-format.md,
// "Resynchronisation"): the first offset on the 8-byte grid after `from`, before `end`, that
// holds a whole valid record (header CRC, flags, length, record CRC) whose order is after
// `prev` (the last good record's), confirmed by what follows it: the end of the data, too few
// bytes for a header, or a header whose CRC checks and whose order is after the candidate's.
// A candidate that fails any of these is a false resynchronisation (a record-shaped stretch
// of a payload, an old record left over) and the scan goes on.
std::optional<std::uint64_t> resync(Window& w, std::uint64_t from, std::uint64_t end,
                                    std::optional<Order> prev);

// Records in a torn tail from `from`: each header found whole (CRC right) or cut short by the
// end of the file counts one. nullopt when a header in between is garbage.
std::optional<std::uint64_t> count_torn(Window& w, std::uint64_t from, std::uint64_t end);

// Whole valid records from `from` to the end (a bad stretch is skipped to the next valid
// record): how many records a set-aside piece holds besides the bad one.
std::uint64_t count_valid_from(Window& w, std::uint64_t from, std::uint64_t end);

// The 32-byte segment header: magic, CRC, version, size, flags, and the number (if given).
std::optional<Bad> check_segment_header(Window& w, std::uint64_t size,
                                        std::optional<std::uint64_t> number);

bool all_zero(Window& w, std::uint64_t size);  // the first `size` bytes

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

// A Damage at `bad` reaching to the end of the file.
Damage make_damage(const Source& src, const Bad& bad);

// With `skipped`, a bad record that is no torn tail and that a record resynchronises after
// (resync()) is skipped and listed there; so is one with nothing after it in an older
// segment (to the segment's end).
Scan scan_segment(const Source& src, Window& w, std::uint64_t number, bool newest,
                  std::uint64_t start, std::uint64_t ordinal, std::optional<Order> prev,
                  const std::function<void(const RecordInfo&, std::uint64_t)>& on_record,
                  std::vector<Damage>* skipped = nullptr);

// ---- index files ------------------------------------------------------------------------

struct IndexLoad {
  bool present = false;
  std::vector<IndexEntry> entries;
  std::string problem;  // why the entries stop before the end of the file (empty: they don't)
};

// The entries of an index file that are well formed and consistent with each other and
// with a segment of `segment_size` bytes, up to the first that is not.
IndexLoad load_index(const fs::path& p, std::uint64_t number, std::uint64_t segment_size);

// Whether the record header at the entry's offset is whole and carries the entry's order.
bool entry_matches(Window& w, std::uint64_t size, const IndexEntry& e);

// Writes a whole index file; false if that failed (it is a cache: open() rebuilds it).
bool write_index(const fs::path& p, std::uint64_t number, const std::vector<IndexEntry>& entries);

// A segment file's index, trusted entries only, and the segment scanned from the last of
// them: what open() and read_log() build their table from.
struct Loaded {
  Scan scan;
  std::vector<IndexEntry> index;  // trusted entries, then those the scan added
  bool index_changed = false;
  std::string index_why;
};

// `prev`: the last order of the segment before; `interval`: index_interval; `skipped` as
// scan_segment()'s.
Loaded load_segment(const Source& src, const fs::path& idx_path, std::uint64_t number, bool newest,
                    std::optional<Order> prev, std::uint64_t interval,
                    std::vector<Damage>* skipped = nullptr);

// A name for a file set aside that does not exist yet.
fs::path unique_path(const fs::path& base);

struct DirListing {
  std::vector<std::uint64_t> segments;  // sorted
  std::vector<std::uint64_t> indexes;
  std::vector<std::string> corrupt;  // *.corrupt files
};

// The segment, index and *.corrupt files of a log directory (other files are ignored).
DirListing list_dir(const fs::path& dir, const char* op);

std::int64_t to_ns(std::chrono::system_clock::time_point t);  // ns since the epoch

}  // namespace spindle::storage::format
