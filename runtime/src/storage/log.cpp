// The durable log (log.hpp, docs/log-format.md): recovery at open, appends and retention,
// readers, verify() and the log's identity, on the file format and parser of log_format.hpp.
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

#include "storage/log_format.hpp"

namespace spindle::storage {

namespace fs = std::filesystem;

using namespace format;  // the file format and parser (log_format.hpp)

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
      bool newest = i + 1 == numbers.size();
      const std::uint64_t n = numbers[i];
      const fs::path p = seg_path(n);
      auto file = std::make_shared<detail::File>(open_file(p, O_RDWR, "open"), p);
      std::vector<Damage> skipped;
      std::vector<Damage> cut;    // torn tails cut before the last scan
      std::vector<Damage> aside;  // corruption set aside before the last scan
      Loaded ld;
      for (;;) {
        FileSource src(file->fd, p, file_size(file->fd, p, "open"));
        skipped.clear();
        ld = load_segment(src, idx_path(n), n, newest, prev, opt.index_interval,
                          opt.skip_damage ? &skipped : nullptr);
        // A stretch skipped was resynchronised over the whole file; cutting the file (a torn
        // tail, or corruption set aside) can make another record the place to resynchronise
        // (one whose span reached past the cut now reaches the end). The cursors and
        // verify() read the cut file, so the records counted are those of a scan of the cut
        // file: cut, then scan again (each cut shortens the file, so this ends).
        if (skipped.empty() || !ld.scan.damage || !ld.scan.header_ok) break;
        if (ld.scan.damage->torn) {
          truncate_to(file->fd, p, ld.scan.damage->offset, "open");
          cut.push_back(std::move(*ld.scan.damage));
          continue;
        }
        // Without repair open() fails below; from the segment's start the whole of it goes.
        if (!opt.repair || ld.scan.damage->offset <= kSegmentHeaderBytes) break;
        Damage d = std::move(*ld.scan.damage);
        set_aside(numbers, i, d.offset, d);
        aside.push_back(std::move(d));
        newest = true;  // the later segments went with it
      }
      // Stretches skipped (skip_damage): left in place, listed; readers skip them too.
      if (pending_after && !report.damage.empty())
        report.damage.back().after = ld.scan.first ? ld.scan.first : ld.scan.last;
      pending_after = false;
      for (auto& d : skipped) {
        pending_after = !d.after;
        report.damage.push_back(std::move(d));
      }
      for (auto& d : aside)
        report.damage.push_back(std::move(d));
      for (auto& d : cut)
        report.damage.push_back(std::move(d));
      if (!aside.empty()) {
        ld.index_changed = true;
        if (ld.index_why.empty()) ld.index_why = "segment cut by repair";
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
