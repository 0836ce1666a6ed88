// The durable log of the `logged` consistency level (DESIGN §8): one log per topic, the
// delivered messages in their total order, so that they can be replayed to late readers
// and after a restart. A log is a directory of segment files; the format is specified in
// docs/log-format.md, in brief (all integers little-endian):
//
//   <dir>/LOCK                      flock()ed by the process that has the log open
//   <dir>/00000000000000000001.seg  segments, named by a 20-digit number counting up
//   <dir>/00000000000000000001.idx  its sparse index (a cache: rebuilt when missing/wrong)
//   <dir>/<segment>@<offset>.corrupt  bytes set aside by a repair (never deleted)
//   <dir>/IDENTITY                  the domain and home the log belongs to (format 2)
//
//   segment   0        8        10       12       16                24       28       32
//             +--------+--------+--------+--------+-----------------+--------+--------+
//             | magic  |version |hdr size| flags  | segment number  |reserved| crc    |
//             |SPNDLSEG| u16 =1 | u16=32 | u32 =0 | u64             | u32 =0 | u32    |
//             +--------+--------+--------+--------+-----------------+--------+--------+
//             then records, back to back, each starting at a multiple of 8
//
//   record    0        4        8        12       14       16       24       32       40
//             +--------+--------+--------+--------+--------+--------+--------+--------+
//             | crc    | hcrc   | length | kind   | flags  | view   | seq    | time   |
//             | u32    | u32    | u32    | u16    | u16 =0 | u64    | u64    | i64 ns |
//             +--------+--------+--------+--------+--------+--------+--------+--------+
//             | payload: `length` bytes, then zeros up to a multiple of 8              |
//             +-----------------------------------------------------------------------+
//             crc  = CRC32C of bytes 4 .. end of the padding (everything after itself)
//             hcrc = CRC32C of bytes 8 .. 40 (the header alone: found again after damage)
//
//   index     a 24-byte header (magic SPNDLIDX, version, entry size, segment number), then
//             40-byte entries {view, seq, offset, ordinal, reserved, crc}: the first record
//             and then one record per `index_interval` bytes
//
// Errors. Everything read from disk is untrusted; a length is checked against the bytes
// really there (and kMaxPayload) before anything is allocated for it.
//  - open() verifies the newest segment from its last trusted index entry (and every
//    segment whose index is missing or wrong, in full). A bad record with nothing valid
//    after it in the newest segment is a torn tail: the file is truncated at it (a torn
//    segment header: the segment is written again, empty). A bad record followed by a valid
//    one, or anywhere in an older segment, a record out of order, or a missing segment is
//    corruption: open() throws LogError naming the file and offset, or with `repair` moves
//    everything from there on into `*.corrupt` files and opens the rest. With `skip_damage`
//    a damaged stretch that a valid record follows is skipped instead: open() and every
//    reader resynchronise at the next record whose header CRC and CRC check, whose order
//    follows the last good one and which the next header confirms (docs/log-format.md,
//    "Resynchronisation"); the bytes stay where they are and the report lists the stretch
//    (file, offset, bytes, the orders on both sides). The report says exactly what was
//    dropped, set aside or skipped.
//  - Identity: a log may carry the domain and the home it belongs to (IDENTITY, format 2);
//    open() with `identity` set refuses a log of another domain or home (LogError naming
//    the file and both identities) and writes the identity into a log that has none.
//  - A failed append (ENOSPC, EFBIG, EIO) throws LogError and cuts the file back to the end
//    of the last complete record: what was appended before stays intact, and a later
//    append may succeed once there is room.
//  - Readers check every record's CRC; a mismatch (the disk changed under us) throws, unless
//    the cursor skips damage (a log opened with `skip_damage`, read_log(dir, from, true)):
//    then it resynchronises as open() does and lists the stretch in skipped().
//
// Threading: a Log is owned by one thread, the appender, which calls append(), sync() and
// apply_retention(). Any thread may call last(), durable(), records(), bytes(), options()
// and read()/for_each(); a Cursor is used by one thread at a time and sees every record
// whose append() returned before its next() (it reads through its own buffer with pread;
// a segment that retention deletes stays readable through its open descriptor). Internally
// one mutex guards the segment table; it is held only to copy or update table entries,
// never across I/O that waits for the disk. One process opens a log at a time (LOCK);
// verify() and read_log() take no lock and change nothing.
#pragma once

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace spindle::storage {

// A record's place in the total order: the epoch of the view it was delivered in, then its
// position in that view's delivery order. Records are appended in strictly increasing order.
struct Order {
  std::uint64_t view = 0;
  std::uint64_t seq = 0;
  friend auto operator<=>(const Order&, const Order&) = default;
};
std::string to_string(Order o);  // "view:seq"

inline constexpr std::uint32_t kMaxPayload = 1u << 30;  // bytes of one record's payload
inline constexpr std::uint64_t kSegmentHeaderBytes = 32;
inline constexpr std::uint64_t kRecordHeaderBytes = 40;

// Whose log a log is: the domain it was written in and the home (storage/home.hpp) it lives
// in, a random 64-bit number given to the home when it was made. Kept in <dir>/IDENTITY.
struct LogIdentity {
  std::uint32_t domain = 0;
  std::uint64_t home = 0;
  friend bool operator==(const LogIdentity&, const LogIdentity&) = default;
};
std::string to_string(const LogIdentity& id);  // "domain 0, home 0x1234abcd..."

enum class SyncPolicy {
  every_append,  // append() returns once its records are on disk (fdatasync)
  periodic,      // append() syncs when `sync_period` has passed since the last sync
  never,         // only the caller's sync() (and the seal of a full segment)
};

struct LogOptions {
  std::filesystem::path dir;                              // created (with parents) if missing
  std::uint64_t segment_bytes = std::uint64_t{64} << 20;  // a segment is sealed past this
  std::uint64_t retain_bytes = 0;      // 0: no limit; else oldest sealed segments go past it
  std::chrono::seconds retain_age{0};  // 0: no limit; else sealed segments whose newest record
                                       // is older go
  bool repair = false;                 // open(): set corruption aside instead of throwing
  // open() and this log's cursors skip a damaged stretch that a valid record follows (in
  // order) instead of refusing it: the log keeps every intact record before and after.
  bool skip_damage = false;
  // Whose log this is; when set, open() refuses a log of another domain or home and writes
  // it into a log that has none (a version-1 log: RecoveryReport::identity_note says so).
  std::optional<LogIdentity> identity;
  SyncPolicy sync = SyncPolicy::never;
  std::chrono::milliseconds sync_period{100};
  std::uint64_t index_interval = std::uint64_t{64} << 10;  // bytes between index entries
};

// What is wrong at one place of a log.
enum class Problem {
  short_header,     // the file ends inside a segment or record header
  short_record,     // a record's length reaches past the end of the file
  bad_header,       // bad magic/version/number, header CRC mismatch, reserved bits set
  bad_length,       // a record length above kMaxPayload
  bad_crc,          // a record whose CRC does not match its bytes
  order_backwards,  // a record not after the one before it
  missing_segment,  // a gap in the segment numbers
};
const char* to_string(Problem p);

// One damaged place, and what open() did about it (or, from verify(), would do).
struct Damage {
  std::filesystem::path file;  // the segment
  std::uint64_t offset = 0;    // of the first bad byte (a record or segment header)
  Problem problem = Problem::bad_crc;
  std::string detail;       // e.g. "length 4294967295 above the maximum 1073741824"
  bool torn = false;        // a torn tail: nothing valid after it, truncated by open()
  std::uint64_t bytes = 0;  // bytes from `offset` dropped or set aside (verify: affected)
  std::optional<std::uint64_t> records;          // records among them, where known
  std::vector<std::filesystem::path> set_aside;  // repair: the *.corrupt files written
  // Skipped (skip_damage, and verify()): reading went on at offset + bytes, the next record
  // that resynchronises; `before` is the order of the last good record before the stretch,
  // `after` that of the first after it (nullopt: none yet, or the log's first record).
  bool skipped = false;
  std::optional<Order> before, after;
  std::string to_string() const;
};

// What open() found and did.
struct RecoveryReport {
  std::filesystem::path dir;
  std::uint64_t segments = 0;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::optional<Order> first, last;
  std::vector<Damage> damage;              // torn tails truncated, corruption set aside
  std::vector<std::string> index_rebuilt;  // "<file>: why" for each index written anew
  std::string identity_note;  // a log without IDENTITY that open() gave one (empty: none)
  bool damaged() const { return !damage.empty(); }
  std::string to_string() const;
};

// A segment as verify() saw it.
struct SegmentSummary {
  std::filesystem::path file;
  std::uint64_t number = 0;
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;  // valid records
  std::optional<Order> first, last;
  std::int64_t newest_ns = 0;  // append time of its newest record
};

struct VerifyReport {
  std::filesystem::path dir;
  std::vector<SegmentSummary> segments;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::optional<Order> first, last;
  std::vector<Damage> damage;               // every damaged place, in file order
  std::vector<std::string> index_problems;  // an index entry contradicting its segment
  std::vector<std::string> notes;           // missing index, *.corrupt files, ...
  std::optional<LogIdentity> identity;      // from IDENTITY (nullopt: none, a version-1 log)
  bool clean() const { return damage.empty() && index_problems.empty(); }
  std::string to_string() const;
};

// Every failure of the log: what() names the operation, the file, the offset where one
// applies and strerror(errno) for a system error (sys_errno() 0 for a bad argument or bad
// data).
class LogError : public std::runtime_error {
 public:
  LogError(std::string operation, std::filesystem::path file, std::optional<std::uint64_t> offset,
           int sys_errno, const std::string& detail);
  const std::string& operation() const { return operation_; }
  const std::filesystem::path& file() const { return file_; }
  std::optional<std::uint64_t> offset() const { return offset_; }
  int sys_errno() const { return errno_; }

 private:
  std::string operation_;
  std::filesystem::path file_;
  std::optional<std::uint64_t> offset_;
  int errno_;
};

// One record read back. `payload` is valid until the next call on the cursor it came from.
struct RecordView {
  Order order;
  std::uint16_t kind = 0;
  std::int64_t time_ns = 0;  // system_clock at append, ns since the epoch
  std::span<const std::byte> payload;
  std::uint64_t segment = 0;  // where it lies
  std::uint64_t offset = 0;
};

namespace detail {
struct Table;
}

// Reads records in order, from the first at or after a given Order to the end.
class Cursor {
 public:
  Cursor(Cursor&&) noexcept;
  Cursor& operator=(Cursor&&) noexcept;
  ~Cursor();
  // The next record, or nullopt when there is none yet (a later call sees later appends).
  // Throws LogError on a read error or a record that fails its check.
  std::optional<RecordView> next();
  // The damaged stretches this cursor skipped so far, in order (only when it skips damage).
  // The last one's `after` is filled in by the next() that returns the record after it.
  [[nodiscard]] const std::vector<Damage>& skipped() const;

 private:
  friend class Log;
  friend Cursor read_log(const std::filesystem::path&, Order, bool);
  struct State;
  explicit Cursor(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

struct AppendItem {
  Order order;
  std::uint16_t kind = 0;
  std::span<const std::byte> payload;
};

class Log {
 public:
  // Opens (creating if need be) and recovers the log in `options.dir`; see the header
  // comment for the rules. Throws LogError.
  static Log open(const LogOptions& options, RecoveryReport* report = nullptr);

  Log(Log&&) noexcept;
  Log& operator=(Log&&) noexcept;
  ~Log();  // syncs (best effort) unless the policy is `never`

  // Appends one record with one write. Throws LogError: order not after last(), payload
  // above kMaxPayload, or an I/O error (the log then ends at the record before).
  Order append(Order order, std::uint16_t kind, std::span<const std::byte> payload);
  // Appends several records, one write(2) per segment they land in. Checked as a whole
  // before anything is written; on an I/O error the records written completely before it
  // stay (last() tells which) and the exception is thrown.
  void append(std::span<const AppendItem> items);

  void sync();  // fdatasync of the active segment (and the directory when it changed)
  // Deletes sealed segments, oldest first, past retain_bytes or older than retain_age at
  // `now`. Never the active segment.
  void apply_retention(std::chrono::system_clock::time_point now);

  Order last() const;     // last appended ({} while the log has never held a record)
  Order durable() const;  // last synced (records found by open() count as synced)
  std::uint64_t records() const;
  std::uint64_t bytes() const;  // of all segment files
  std::uint64_t segments() const;
  const LogOptions& options() const;

  Cursor read(Order from = {}) const;
  // Calls f for each record from the first at or after `from` until f returns false or the
  // end; returns how many it visited.
  std::uint64_t for_each(Order from, const std::function<bool(const RecordView&)>& f) const;

 private:
  struct Impl;
  explicit Log(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Checks a log directory without changing it: every segment header, every record's CRC and
// order, and every index entry. Throws LogError only when the directory cannot be read.
VerifyReport verify(const std::filesystem::path& dir);

// Reads a log directory as it is now, without opening (locking, recovering) it: the records
// up to the first damage (where next() throws), or with `skip_damage` every intact record,
// resynchronising after damage as open() does (Cursor::skipped() lists the stretches).
Cursor read_log(const std::filesystem::path& dir, Order from = {}, bool skip_damage = false);

// The identity kept in a log directory (IDENTITY); nullopt when there is none. Throws
// LogError when the file exists but cannot be read or is malformed.
std::optional<LogIdentity> read_identity(const std::filesystem::path& dir);

// The log directories at or under `root` (those holding a *.seg file), sorted.
std::vector<std::filesystem::path> find_logs(const std::filesystem::path& root);

// The parser over one segment file's bytes, as open() and verify() apply it (the fuzz
// target's entry point): the header, then the records from the start until the first bad
// one, and whether that one is a torn tail (nothing valid after it).
struct SegmentCheck {
  bool header_ok = false;
  std::uint64_t records = 0;
  std::uint64_t good_end = 0;  // offset after the last good record (0: bad header)
  std::optional<Order> first, last;
  std::optional<Damage> damage;
};
SegmentCheck check_segment(std::span<const std::byte> file, std::uint64_t number, bool newest);

}  // namespace spindle::storage
