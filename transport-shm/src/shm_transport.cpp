// Shared-memory transport implementation (model and threading: <spindle/transport/shm.hpp>;
// segment layout: segment.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <spindle/transport/doorbell.hpp>
#include <spindle/transport/forwarding_impl.hpp>
#include <spindle/transport/shm.hpp>

#include "segment.hpp"
#include "transport/aligned_buffer.hpp"
#include "transport/event_queue.hpp"
#include "transport/private_copy.hpp"
#include "transport/write_grants.hpp"

namespace spindle::transport {

using namespace shm;
using Clock = std::chrono::steady_clock;

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

// Asks for transparent huge pages on a mapping of at least one huge page. Large SST regions
// are copied through in full on every lap of their rings, by several processes per CPU: with
// 4 KiB pages their translations outgrow the TLB (shm, 4 members all sending, window 150:
// atomic/raw 0.41-0.46 with 4 KiB pages, 0.61 with 2 MiB ones). Effective only where shmem
// THP allows it (memfds: /sys/kernel/mm/transparent_hugepage/shmem_enabled "advise" or more;
// see docs/transport-shm.md); elsewhere the advice is ignored, and so is a kernel without THP.
void advise_huge_pages(void* p, std::size_t len) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  if (len >= kHugePage) (void)::madvise(p, len, MADV_HUGEPAGE);
}

bool process_alive(std::uint64_t pid) {
  if (pid == 0 || pid > static_cast<std::uint64_t>(INT32_MAX)) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The abstract unix socket on which node `id` under `prefix` serves its segments: a leading
// NUL, so no file backs it and the kernel drops the name with the process's last descriptor.
std::string socket_name(const std::string& prefix, NodeId id) {
  return std::string(1, '\0') + prefix + ".n" + std::to_string(id);
}

// `name` as a socket address; false if it does not fit.
bool socket_address(const std::string& name, sockaddr_un& addr, socklen_t& len) {
  addr = sockaddr_un{};
  addr.sun_family = AF_UNIX;
  if (name.size() > sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, name.data(), name.size());
  len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size());
  return true;
}

// Whether a process of these credentials may have our segments, or hand us its own: the same
// effective user, or root.
bool trusted(const ucred& cred) {
  return cred.uid == ::geteuid() || cred.uid == 0;
}

void set_timeout(int fd, std::chrono::milliseconds t) {
  timeval tv{static_cast<time_t>(t.count() / 1000),
             static_cast<suseconds_t>(t.count() % 1000 * 1000)};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A connected SOCK_SEQPACKET socket to `name` whose server is trusted(); -1 if there is none
// (nobody bound it: absent, or in another network namespace) or it is not to be trusted.
int dial(const std::string& name, ucred* server = nullptr) {
  sockaddr_un addr{};
  socklen_t len = 0;
  if (!socket_address(name, addr, len)) return -1;
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  set_timeout(fd, std::chrono::milliseconds(1000));
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 ||
      ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || !trusted(cred)) {
    ::close(fd);
    return -1;
  }
  if (server != nullptr) *server = cred;
  return fd;
}

// Replies of a segment server: one status byte, with the segment's fd (SCM_RIGHTS) if found.
constexpr char kFound = 0;
constexpr char kAbsent = 1;

// Asks the server on `socket` for the fd of segment `name`; -1 if it has none (yet) or does
// not answer.
int request_fd(const std::string& socket, const std::string& name) {
  const int s = dial(socket);
  if (s < 0) return -1;
  int fd = -1;
  if (::send(s, name.data(), name.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(name.size())) {
    char status = kAbsent;
    iovec iov{&status, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    if (::recvmsg(s, &msg, MSG_CMSG_CLOEXEC) == 1) {
      for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
            c->cmsg_len == CMSG_LEN(sizeof(int))) {
          std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        }
      }
      if (status != kFound && fd >= 0) {
        ::close(fd);
        fd = -1;
      }
    }
  }
  ::close(s);
  return fd;
}

// The fds of the segments this transport has published, as its server hands them out. The
// owning Segment adds its fd when published and removes it before it closes it.
class SegmentRegistry {
 public:
  void add(const std::string& name, int fd) {
    std::lock_guard lock(mu_);
    fds_[name] = fd;
  }
  // Only while `fd` is what it serves: a newer segment of the same name (the next view's
  // ring) stays.
  void remove(const std::string& name, int fd) {
    std::lock_guard lock(mu_);
    const auto it = fds_.find(name);
    if (it != fds_.end() && it->second == fd) fds_.erase(it);
  }
  // A duplicate of `name`'s fd (the caller closes it), or -1.
  int dup(const std::string& name) const {
    std::lock_guard lock(mu_);
    const auto it = fds_.find(name);
    return it == fds_.end() ? -1 : ::fcntl(it->second, F_DUPFD_CLOEXEC, 0);
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, int> fds_;
};

// Reads one unsigned number from `path` ("max" and absent files give nothing).
std::optional<std::uint64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || !std::isdigit(static_cast<unsigned char>(word[0])))
    return std::nullopt;
  try {
    return std::stoull(word);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string mib(std::uint64_t bytes) {
  return std::to_string((bytes + (1u << 19)) >> 20) + " MiB";
}

// The room under this process's memory cgroup, the tightest of its levels (v2, or v1's
// memory controller); nothing where no level has a limit or cgroups are not mounted.
std::optional<ShmTransport::MemoryRoom> cgroup_room() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::string base, path, limit_file, usage_file;
  while (std::getline(self, line)) {
    const auto a = line.find(':');
    const auto b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    if (controllers == "memory" || (controllers.find("memory") != std::string::npos &&
                                    controllers.find(',') != std::string::npos)) {
      base = "/sys/fs/cgroup/" + controllers;
      path = line.substr(b + 1);
      limit_file = "memory.limit_in_bytes";
      usage_file = "memory.usage_in_bytes";
      break;
    }
    if (line.starts_with("0::") && base.empty()) {
      base = "/sys/fs/cgroup";
      path = line.substr(b + 1);
      limit_file = "memory.max";
      usage_file = "memory.current";
    }
  }
  if (base.empty()) return std::nullopt;
  // Inside a cgroup namespace the path may not be under our mount: start at the mount.
  std::string dir = base + path;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) dir = base;
  std::optional<ShmTransport::MemoryRoom> tightest;
  for (;;) {
    const auto limit = read_number(dir + "/" + limit_file);
    const auto usage = read_number(dir + "/" + usage_file);
    if (limit && usage && *limit < (std::uint64_t{1} << 62)) {
      const std::uint64_t room = *limit > *usage ? *limit - *usage : 0;
      if (!tightest || room < tightest->bytes) {
        const std::string name = dir.size() > base.size() ? dir.substr(base.size()) : "/";
        tightest =
            ShmTransport::MemoryRoom{room, "the memory cgroup " + name + " (limit " + mib(*limit) +
                                               ", " + mib(*usage) + " in use)"};
      }
    }
    if (dir.size() <= base.size()) break;
    dir.erase(dir.rfind('/'));
    if (dir.size() < base.size()) dir = base;
  }
  return tightest;
}

// A mapped segment. One we own is a sealed memfd whose fd we keep (and serve once published);
// the kernel frees its memory when the last fd and mapping of it are gone, whoever's.
class Segment {
 public:
  Segment() = default;
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;
  ~Segment() {
    if (registry_ != nullptr) registry_->remove(name_, fd_);
    if (base_ != nullptr) ::munmap(base_, len_);
    if (fd_ >= 0) ::close(fd_);
  }

  // Creates segment `name` as a memfd, sized and sealed. Throws with an actionable message.
  // With `only` (a REGION whose rows are in place: create_rows_region), the process maps of
  // the memfd only the header page and that range of the payload, its own row; the rest of
  // its range is private memory from the start (what share_rows() makes of it otherwise).
  static std::unique_ptr<Segment> create(SegmentRegistry& registry, const std::string& name,
                                         SegmentKind kind, std::size_t payload,
                                         const ByteRange* only = nullptr) {
    // Shared memory is memory (a memfd, not a file of /dev/shm): where the process may not
    // have what this segment can come to use, it says so now, not with the OOM killer later.
    // With rows in place that is its own row: the others are its peers' memory (or pages of
    // its own that only a tcp peer's writes touch).
    const std::size_t needs = only != nullptr ? only->length : payload;
    if (const auto room = ShmTransport::memory_room(); needs > room.bytes) {
      throw std::runtime_error(
          "shm: segment " + name.substr(1) + " needs " + std::to_string(needs) +
          " bytes of shared memory, and this process may use " + std::to_string(room.bytes) +
          " more (" + room.bound +
          "); give it more memory (a container's limit: docker run --memory), or reserve less "
          "(engine.rdmc_buffer_size for unbounded types; engine.window_size and "
          "engine.slot_size for every member's row)");
    }
    // The name shows in /proc/<pid>/maps as "/memfd:<name> (deleted)"; nothing else uses it.
    const int fd = ::memfd_create(name.c_str() + 1, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) throw std::runtime_error("shm: cannot create " + name + ": " + errno_text());
    auto seg = std::make_unique<Segment>();
    seg->name_ = name;
    seg->fd_ = fd;
    seg->offset_ = payload_offset(kind);
    seg->len_ = seg->offset_ + payload;
    if (::ftruncate(fd, static_cast<off_t>(seg->len_)) != 0) {
      throw std::runtime_error("shm: cannot size " + name + " to " + std::to_string(seg->len_) +
                               " bytes: " + errno_text());
    }
    // A peer may map it at once and for as long as it likes: its size never changes.
    (void)::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
    void* p = MAP_FAILED;
    if (only == nullptr) {
      p = ::mmap(nullptr, seg->len_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) advise_huge_pages(p, seg->len_);
    } else {
      p = ::mmap(nullptr, seg->len_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      auto* at = static_cast<std::byte*>(p);
      const auto row = static_cast<off_t>(seg->offset_ + only->offset);
      if (p != MAP_FAILED &&
          (::mmap(at, seg->offset_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) != at ||
           ::mmap(at + row, only->length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                  row) != at + row)) {
        ::munmap(p, seg->len_);
        p = MAP_FAILED;
      }
    }
    if (p == MAP_FAILED) throw std::runtime_error("shm: cannot map " + name + ": " + errno_text());
    seg->base_ = static_cast<std::byte*>(p);
    seg->registry_ = &registry;
    auto* h = new (seg->base_) SegmentHeader{};
    h->version = kVersion;
    h->kind = kind;
    h->owner_pid = static_cast<std::uint64_t>(::getpid());
    h->payload_bytes = payload;
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(h->magic, kMagic, sizeof kMagic);
    return seg;
  }

  // Maps segment `name` of the node serving `socket`; nullptr if absent, not yet ready, or not
  // ours.
  static std::unique_ptr<Segment> open(const std::string& socket, const std::string& name,
                                       SegmentKind kind) {
    return map(request_fd(socket, name), name, kind, true);
  }

  // Maps a named segment of an earlier version (/dev/shm/<name>), to reclaim it or to name
  // its version; nullptr as open().
  static std::unique_ptr<Segment> open_named(const std::string& name, SegmentKind kind,
                                             bool require_ready) {
    return map(::shm_open(name.c_str(), O_RDWR, 0600), name, kind, require_ready);
  }

  // Ours, published: from now on our server hands it to peers that ask.
  void publish() {
    header()->ready.store(1, std::memory_order_release);
    if (registry_ != nullptr) registry_->add(name_, fd_);
  }
  [[nodiscard]] SegmentHeader* header() const {
    return std::launder(reinterpret_cast<SegmentHeader*>(base_));
  }
  [[nodiscard]] std::byte* payload() const { return base_ + offset_; }
  [[nodiscard]] std::size_t payload_size() const { return header()->payload_bytes; }

  // Maps bytes [offset, offset + length) of the payload of region `name`, served on
  // `socket`, read-only over `at` (a page-aligned address in one of our mappings, which it
  // replaces): a peer's row in place. False, with `at` untouched, if the segment is absent,
  // not a ready region of `payload` bytes, or the range is not within it.
  static bool map_range(const std::string& socket, const std::string& name, std::size_t payload,
                        std::size_t offset, std::size_t length, std::byte* at) {
    const int fd = request_fd(socket, name);
    if (fd < 0) return false;
    bool ok = false;
    struct stat st {};
    if (::fstat(fd, &st) == 0 &&
        static_cast<std::size_t>(st.st_size) == kRegionPayloadOffset + payload &&
        offset + length <= payload) {
      void* head = ::mmap(nullptr, kHeaderBytes, PROT_READ, MAP_SHARED, fd, 0);
      if (head != MAP_FAILED) {
        const auto* h = std::launder(reinterpret_cast<const SegmentHeader*>(head));
        ok = is(*h, SegmentKind::region) && ready(*h) && h->payload_bytes == payload;
        ::munmap(head, kHeaderBytes);
      }
      if (ok) {
        void* p = ::mmap(at, length, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
                         static_cast<off_t>(kRegionPayloadOffset + offset));
        ok = p == at;
      }
    }
    ::close(fd);
    return ok;
  }

  // Ours: maps our own bytes [offset, offset + length) of the payload over them again (what
  // map_range() replaced).
  void restore(std::size_t offset, std::size_t length) {
    (void)::mmap(payload() + offset, length, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_,
                 static_cast<off_t>(offset_ + offset));
  }

  // Ours: a peer's row mapped in place over [offset, offset + length) of the payload
  // (map_range) becomes private memory holding what it holds now: a view we left keeps
  // reading as it ended, and the peer's segment is no longer mapped here, so the kernel can
  // free it once its owner is done with it.
  void detach_row(std::size_t offset, std::size_t length) {
    keep_private_copy(payload() + offset, length);
  }

  // Ours, retired (Transport::retire_region): our server stops handing it out, its fd goes,
  // and our mapping of it, with the peers' rows mapped in place over it, becomes anonymous
  // zero pages (the range stays ours until the destructor unmaps it). The kernel frees the
  // segment once no peer maps it either.
  void retire() {
    if (retired_.exchange(true)) return;
    if (registry_ != nullptr) registry_->remove(name_, fd_);
    registry_ = nullptr;
    (void)::mmap(base_, len_, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  [[nodiscard]] bool retired() const noexcept { return retired_.load(std::memory_order_acquire); }

  // Ours: bytes [offset, offset + length) of the payload become private memory of this
  // process, zero-filled: no other process can map or touch that part of the segment.
  void keep_private(std::size_t offset, std::size_t length) {
    (void)::mmap(payload() + offset, length, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  }

 private:
  static std::size_t payload_offset(SegmentKind kind) {
    return kind == SegmentKind::region ? kRegionPayloadOffset : kHeaderBytes;
  }
  // A Spindle segment of `kind` (its magic written last by its creator).
  static bool is(const SegmentHeader& h, SegmentKind kind) {
    return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.kind == kind;
  }
  // Its creator published it (rdy, acquire).
  static bool ready(const SegmentHeader& h) { return h.ready.load(std::memory_order_acquire) == 1; }

  // Maps `fd` (closing it): nullptr if -1, too small, or not a ready segment of `kind`.
  static std::unique_ptr<Segment> map(int fd, const std::string& name, SegmentKind kind,
                                      bool require_ready) {
    if (fd < 0) return nullptr;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < kHeaderBytes) {
      ::close(fd);
      return nullptr;
    }
    auto seg = std::make_unique<Segment>();
    seg->name_ = name;
    seg->len_ = static_cast<std::size_t>(st.st_size);
    void* p = ::mmap(nullptr, seg->len_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return nullptr;
    advise_huge_pages(p, seg->len_);
    seg->base_ = static_cast<std::byte*>(p);
    const SegmentHeader* h = seg->header();
    if (!is(*h, kind)) return nullptr;
    seg->offset_ = payload_offset(kind);
    if (require_ready && (!ready(*h) || h->payload_bytes + seg->offset_ > seg->len_)) {
      return nullptr;
    }
    return seg;
  }

  std::string name_;
  std::byte* base_ = nullptr;
  std::size_t len_ = 0;
  std::size_t offset_ = kHeaderBytes;    // of the payload (payload_offset())
  int fd_ = -1;                          // ours: the memfd
  SegmentRegistry* registry_ = nullptr;  // ours: where publish() serves it from
  std::atomic<bool> retired_{false};     // ours: retire() ran (read by the monitor)
};

std::size_t pad8(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}

// The must-agree settings as the control segment holds them (segment.hpp). Throws
// std::invalid_argument when they do not fit.
std::vector<std::byte> encode_settings(const std::vector<AgreedSetting>& settings) {
  std::vector<std::byte> out;
  for (const auto& st : settings) {
    if (st.name.empty() || st.name.size() > 255 || st.value.size() > 255)
      throw std::invalid_argument("shm: must_agree setting '" + st.name +
                                  "': name must be 1..255 bytes and value at most 255");
    out.push_back(static_cast<std::byte>(st.name.size()));
    out.push_back(static_cast<std::byte>(st.value.size()));
    for (char ch : st.name + st.value)
      out.push_back(static_cast<std::byte>(ch));
  }
  if (out.size() > kMaxSettingsBytes)
    throw std::invalid_argument("shm: must_agree settings take " + std::to_string(out.size()) +
                                " bytes, more than " + std::to_string(kMaxSettingsBytes));
  return out;
}

// Reads a peer's settings back; entries cut short are dropped (the comparison then names
// the setting as missing).
std::vector<AgreedSetting> decode_settings(const ControlData& c) {
  std::vector<AgreedSetting> out;
  const std::size_t n = std::min<std::size_t>(c.settings_bytes, kMaxSettingsBytes);
  std::size_t at = 0;
  while (n - at >= 2) {
    const std::size_t name_len = static_cast<std::uint8_t>(c.settings[at]);
    const std::size_t value_len = static_cast<std::uint8_t>(c.settings[at + 1]);
    at += 2;
    if (n - at < name_len + value_len) break;
    const char* p = reinterpret_cast<const char*>(c.settings + at);
    out.push_back(AgreedSetting{std::string(p, name_len), std::string(p + name_len, value_len)});
    at += name_len + value_len;
  }
  return out;
}

}  // namespace

class shm_detail::Impl {
 public:
  struct Posted {
    RegionId region;
    std::uint64_t offset;
    std::uint32_t capacity;
  };

  struct Peer {
    NodeId id = 0;
    std::unique_ptr<Segment> control;
    std::map<RegionId, std::unique_ptr<Segment>> regions;
    // Regions whose rows are in place (share_rows, on both sides): the peer's row, mapped
    // read-only over that range of our region; its other bytes are not mapped here.
    std::map<RegionId, ByteRange> in_place;
    // Blocks to the peer: its ring, which it made at its first receive posted for us in this
    // view; mapped at our first send_block() after that (the sender's credits say it exists).
    std::unique_ptr<Segment> out_ring;
    // Blocks from the peer: ours, made at our first post_receive() for it in this view; none
    // while nothing is expected from it (docs/transport-shm.md).
    std::unique_ptr<Segment> in_ring;
    std::atomic<bool> receiving{false};  // in_ring is made (release), for drain_rings()
    std::atomic<bool> suspected{false};
    std::mutex mu;  // out_ring; posted; in_ring and its receive side
    std::deque<Posted> posted;
    std::uint64_t last_heartbeat = 0;
    Clock::time_point heartbeat_seen = Clock::now();
    pid_t pid = 0;
    // A member joining with this view: connect() leaves it to the monitor, which maps it
    // (until `deadline`) and then sets `ready`. Until then nothing but the monitor touches
    // its segments; the data path refuses it with retry.
    bool background = false;
    Clock::time_point deadline{};
    std::atomic<bool> ready{true};

    ControlData* ctl() const {
      return std::launder(reinterpret_cast<ControlData*>(control->payload()));
    }
  };

  explicit Impl(ShmConfig cfg) : cfg_(std::move(cfg)) {
    if (cfg_.name_prefix.empty() || cfg_.name_prefix.find('/') != std::string::npos) {
      throw std::invalid_argument("shm: name prefix must be non-empty and contain no '/'");
    }
    const auto settings = encode_settings(cfg_.must_agree);
    reclaim_stale_named(cfg_.name_prefix + ".n");  // names an earlier version left
    listen_ = listen_on(socket_name(cfg_.name_prefix, cfg_.self));
    try {
      control_ =
          Segment::create(registry_, name(cfg_.self), SegmentKind::control, sizeof(ControlData));
      auto* c = new (control_->payload()) ControlData{};
      c->domain = cfg_.domain_id;
      c->settings_bytes = static_cast<std::uint32_t>(settings.size());
      if (!settings.empty()) std::memcpy(c->settings, settings.data(), settings.size());
      control_->publish();
      doorbell_.emplace(&ctl()->doorbell, true);
      wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      serve_stop_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (wake_fd_ < 0 || serve_stop_ < 0) {
        throw std::runtime_error(std::string("shm: cannot create an eventfd: ") +
                                 std::strerror(errno));
      }
    } catch (...) {
      for (const int fd : {listen_, wake_fd_, serve_stop_})
        if (fd >= 0) ::close(fd);
      throw;
    }
    monitor_ = std::thread([this] { monitor(); });
    server_ = std::thread([this] { serve(); });
  }

  ~Impl() {
    disconnect();
    {
      std::lock_guard lock(monitor_mu_);
      stop_ = true;
    }
    wake_monitor();
    monitor_.join();
    const std::uint64_t one = 1;
    (void)!::write(serve_stop_, &one, sizeof one);
    server_.join();
    ::close(serve_stop_);
    ::close(wake_fd_);
  }

  // Binds and listens on our abstract socket. Bound already: a live process (of this network
  // namespace) is this node; its pid is in the error.
  int listen_on(const std::string& socket) const {
    sockaddr_un addr{};
    socklen_t len = 0;
    if (!socket_address(socket, addr, len)) {
      throw std::invalid_argument("shm: name prefix '" + cfg_.name_prefix +
                                  "' is too long for a "
                                  "socket name (at most " +
                                  std::to_string(sizeof addr.sun_path - 12) + " bytes)");
    }
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error("shm: cannot create a socket: " + errno_text());
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EADDRINUSE) {
        ucred owner{};
        const int s = dial(socket, &owner);
        if (s >= 0) ::close(s);
        throw std::runtime_error("shm: node " + std::to_string(cfg_.self) + " under prefix '" +
                                 cfg_.name_prefix + "' is in use by live process " +
                                 (s >= 0 ? std::to_string(owner.pid) : std::string("?")) +
                                 " (is this node id taken?)");
      }
      throw std::runtime_error("shm: cannot bind socket @" + socket.substr(1) + ": " +
                               std::strerror(err));
    }
    if (::listen(fd, 64) != 0) {
      const std::string why = errno_text();
      ::close(fd);
      throw std::runtime_error("shm: cannot listen on socket @" + socket.substr(1) + ": " + why);
    }
    return fd;
  }

  // ------------------------------------------------------------------ server thread
  // Hands our published segments to peers: a peer connects, sends a segment's name and gets
  // {kFound, its fd} or {kAbsent}. A peer of another user (SO_PEERCRED; root excepted) is
  // dropped unanswered. One request per connection, one connection at a time: each is a
  // few system calls, and a peer that does not send within 200 ms is dropped.
  void serve() {
    for (;;) {
      pollfd fds[2] = {{serve_stop_, POLLIN, 0}, {listen_, POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
      if ((fds[0].revents & POLLIN) != 0) break;
      if ((fds[1].revents & POLLIN) == 0) continue;
      const int c = ::accept4(listen_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ucred cred{};
      socklen_t cred_len = sizeof cred;
      if (::getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0 && trusted(cred)) {
        set_timeout(c, std::chrono::milliseconds(200));
        char request[256];
        const ssize_t n = ::recv(c, request, sizeof request, 0);
        const int fd =
            n > 0 ? registry_.dup(std::string(request, static_cast<std::size_t>(n))) : -1;
        char status = fd >= 0 ? kFound : kAbsent;
        iovec iov{&status, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        if (fd >= 0) {
          msg.msg_control = control;
          msg.msg_controllen = sizeof control;
          cmsghdr* cm = CMSG_FIRSTHDR(&msg);
          cm->cmsg_level = SOL_SOCKET;
          cm->cmsg_type = SCM_RIGHTS;
          cm->cmsg_len = CMSG_LEN(sizeof(int));
          std::memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        }
        if (n > 0) (void)::sendmsg(c, &msg, MSG_NOSIGNAL);
        if (fd >= 0) ::close(fd);
      }
      ::close(c);
    }
    ::close(listen_);
  }

  std::string name(NodeId id) const { return "/" + cfg_.name_prefix + ".n" + std::to_string(id); }
  std::string region_name(NodeId id, RegionId r) const {
    return name(id) + ".r" + std::to_string(r);
  }
  std::string ring_name(NodeId from, NodeId to) const {
    return name(from) + ".b" + std::to_string(to);
  }
  ControlData* ctl() const {
    return std::launder(reinterpret_cast<ControlData*>(control_->payload()));
  }

  // `lead`: the start of the names looked at; empty: every name (only Spindle segments,
  // known by their header, are ever unlinked).
  static std::size_t reclaim_stale_named(const std::string& lead) {
    std::size_t n = 0;
    DIR* d = ::opendir("/dev/shm");
    if (d == nullptr) return 0;
    while (dirent* e = ::readdir(d)) {
      const std::string file = e->d_name;
      if (file == "." || file == ".." || file.rfind(lead, 0) != 0) continue;
      const std::string seg = "/" + file;
      for (auto kind : {SegmentKind::control, SegmentKind::region, SegmentKind::ring}) {
        auto s = Segment::open_named(seg, kind, false);
        if (!s) continue;
        if (!process_alive(s->header()->owner_pid)) {
          ::shm_unlink(seg.c_str());
          ++n;
        }
        break;
      }
    }
    ::closedir(d);
    return n;
  }

  // ------------------------------------------------------------------ control plane
  LocalRegion create_region(RegionId id, std::size_t size) {
    return add_region(id, size, nullptr, 0);
  }

  // Makes and publishes region `id` with table flags `flags`; `only`: Segment::create's.
  LocalRegion add_region(RegionId id, std::size_t size, const ByteRange* only,
                         std::uint32_t flags) {
    if (connected_) throw std::logic_error("shm: create_region while connected; disconnect first");
    if (regions_.contains(id))
      throw std::invalid_argument("shm: region " + std::to_string(id) + " exists");
    auto* c = ctl();
    if (c->region_count >= kMaxRegions) throw std::runtime_error("shm: more than 256 regions");
    auto seg =
        Segment::create(registry_, region_name(cfg_.self, id), SegmentKind::region, size, only);
    seg->publish();
    c->regions[c->region_count] = RegionEntry{id, flags, size};
    ++c->region_count;
    auto* bytes = seg->payload();
    regions_.emplace(id, std::move(seg));
    return LocalRegion{id, {bytes, size}};
  }

  // Sets `bit` in region `id`'s entry of our table, atomically: a peer may be reading it.
  void flag_entry(RegionId id, std::uint32_t bit) {
    auto* c = ctl();
    for (std::uint32_t i = 0; i < std::min(c->region_count, kMaxRegions); ++i)
      if (c->regions[i].id == id)
        std::atomic_ref(c->regions[i].flags).fetch_or(bit, std::memory_order_release);
  }

  // Peers read the region table only while connected at our epoch (map_regions), and we
  // change it only while disconnected: the last entry fills the hole.
  void release_region(RegionId id) {
    if (connected_) throw std::logic_error("shm: release_region while connected; disconnect first");
    const auto it = regions_.find(id);
    if (it == regions_.end()) return;
    auto* c = ctl();
    const std::uint32_t count = std::min(c->region_count, kMaxRegions);
    for (std::uint32_t i = 0; i < count; ++i) {
      if (c->regions[i].id != id) continue;
      c->regions[i] = c->regions[count - 1];
      c->region_count = count - 1;
      break;
    }
    regions_.erase(it);  // unmaps and unlinks the segment
    grants_.release(id);
    rows_.erase(id);
    held_rows_.erase(id);
  }

  // The memory of a region no view uses any more goes now (Segment::retire), while we are
  // connected to a later view; its entry in the table goes with release_region(), at the
  // next disconnect (peers read the table only while connected at our epoch, and skip an
  // entry of a view they are not in).
  void retire_region(RegionId id) {
    const auto it = regions_.find(id);
    if (it == regions_.end()) return;
    flag_entry(id, kRetired);  // first: a peer that finds the segment gone sees why, and skips it
    it->second->retire();
  }

  void restrict_writes(RegionId id, std::span<const WriteGrant> grants) {
    if (connected_)
      throw std::logic_error("shm: restrict_writes while connected; disconnect first");
    const auto it = regions_.find(id);
    if (it == regions_.end())
      throw std::invalid_argument("shm: restrict_writes: no region " + std::to_string(id));
    grants_.restrict(id, it->second->payload_size(), grants);
    rows_.erase(id);
  }

  // create_region() and share_rows() in one: where the rows can be in place, the segment is
  // never mapped whole here, not even for the moment between the two.
  LocalRegion create_rows_region(RegionId id, std::size_t size, std::span<const WriteGrant> rows) {
    auto by_owner = rows_in_place(rows, size);
    if (!by_owner || !by_owner->contains(cfg_.self)) {
      auto region = create_region(id, size);
      share_rows(id, rows);
      return region;
    }
    const ByteRange own = by_owner->at(cfg_.self);
    auto region = add_region(id, size, &own, kRowsInPlace);
    grants_.restrict(id, size, rows);
    rows_[id] = std::move(*by_owner);
    return region;
  }

  // Rows in place (docs/transport-shm.md): each row is kept once, in its owner's segment; a
  // peer that declared the same maps it over that range of its own region at connect, and
  // our writes of our row to it copy nothing. Rows not aligned to kRowAlign keep copies.
  void share_rows(RegionId id, std::span<const WriteGrant> rows) {
    restrict_writes(id, rows);
    auto by_owner = rows_in_place(rows, regions_.at(id)->payload_size());
    if (!by_owner) return;
    // Only our row is in the segment: a peer on this host reads it there, and no process
    // maps the rest of it, so it never takes memory. The other rows are this process's own
    // memory until a peer's row is mapped over them (connect), or for the tcp half's peers.
    auto& seg = *regions_.at(id);
    for (const auto& [owner, b] : *by_owner)
      if (owner != cfg_.self) seg.keep_private(b.offset, b.length);
    rows_[id] = std::move(*by_owner);
    flag_entry(id, kRowsInPlace);
  }

  [[nodiscard]] bool keeps_rows_in_place() const noexcept { return true; }
  // A peer's row is in place once map_regions() mapped it, which it did before the peer
  // became ready (connect, or the monitor for a member joining in the background).
  [[nodiscard]] bool row_in_place(NodeId peer, RegionId id) const {
    const auto* p = find(peer);
    return p != nullptr && p->ready.load(std::memory_order_acquire) && p->in_place.contains(id);
  }
  void keep_rows_mapped(RegionId id) {
    if (connected_)
      throw std::logic_error("shm: keep_rows_mapped while connected; disconnect first");
    if (rows_.contains(id)) held_rows_.insert(id);
  }

  Status connect(std::span<const NodeAddress> members, std::uint64_t epoch,
                 std::chrono::milliseconds timeout) {
    if (connected_) disconnect();
    const auto deadline = Clock::now() + timeout;
    std::map<NodeId, std::unique_ptr<Peer>> peers;
    // No rings yet: a ring is made by its receiver when it first expects a block
    // (post_receive), so a view with no blocks between two members costs them none.
    for (const auto& m : members) {
      if (m.id == cfg_.self) continue;
      auto p = std::make_unique<Peer>();
      p->id = m.id;
      p->deadline = give_up_on(m, Clock::now(), deadline);
      // A member joining with this view holds nobody: the monitor connects to it in the
      // background (connecting(), PeerConnected).
      p->background = m.connect_within.count() > 0;
      peers.emplace(m.id, std::move(p));
    }
    ctl()->epoch.store(epoch, std::memory_order_release);
    Status result = Status::ok;
    std::vector<Suspicion> missing;
    for (auto& [id, p] : peers) {
      Attempt a = attempt(*p, epoch, &last_pids_);
      if (p->background) {
        // One look now; the monitor takes it from here (until its deadline).
        if (a.state == Attempt::waiting) {
          p->ready.store(false, std::memory_order_release);
          continue;
        }
      } else {
        while (a.state == Attempt::waiting && Clock::now() < p->deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          a = attempt(*p, epoch, &last_pids_);
        }
      }
      if (a.state != Attempt::connected) {
        result = Status::peer_suspected;
        p->suspected = true;
        missing.push_back(failed(*p, a, epoch));
        continue;
      }
      adopt(*p, Clock::now());
      last_pids_[id] = p->pid;
    }
    // A peer we refused refuses us as soon as it looks at our control segment, but it may
    // not have looked yet: stay (until the deadline) until every peer we refused has, so
    // that each side's error names the difference instead of one side's timing out.
    while (ctl()->refused_by.load(std::memory_order_acquire) <
               refusals_.load(std::memory_order_relaxed) &&
           Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    {
      std::lock_guard lock(monitor_mu_);
      peers_ = std::move(peers);
      epoch_ = epoch;
      connected_ = true;
    }
    wake_monitor();  // it watches the new peers' processes from now on
    for (auto& s : missing)
      push_event(std::move(s));
    return result;
  }

  // Why a peer's control segment is refused although it is well formed: another layout
  // version, another domain, or a must-agree setting that differs. Empty when they agree.
  std::string mismatch(NodeId id, const Segment& control) const {
    const std::string who = "node " + std::to_string(id);
    const auto version = control.header()->version;
    if (version != kVersion || control.payload_size() < sizeof(ControlData)) {
      return who + " uses shm segment layout version " + std::to_string(version) +
             ", this node version " + std::to_string(kVersion);
    }
    const auto* c = std::launder(reinterpret_cast<const ControlData*>(control.payload()));
    std::string out;
    auto add = [&](const std::string& s) { out += (out.empty() ? "" : "; ") + s; };
    if (c->domain != cfg_.domain_id) {
      add(who + " is in domain " + std::to_string(c->domain) + ", this node in domain " +
          std::to_string(cfg_.domain_id));
    }
    const auto theirs = decode_settings(*c);
    for (const auto& mine : cfg_.must_agree) {
      auto it = std::find_if(theirs.begin(), theirs.end(),
                             [&](const AgreedSetting& t) { return t.name == mine.name; });
      if (it == theirs.end()) {
        add(mine.name + ": " + who + " does not state it, this node has " + mine.value);
      } else if (it->value != mine.value) {
        add(mine.name + ": " + who + " has " + it->value + ", this node " + mine.value);
      }
    }
    for (const auto& t : theirs) {
      if (std::none_of(cfg_.must_agree.begin(), cfg_.must_agree.end(),
                       [&](const AgreedSetting& m) { return m.name == t.name; })) {
        add(t.name + ": " + who + " has " + t.value + ", this node does not state it");
      }
    }
    return out;
  }

  // One look at a peer's segments for view `epoch` (connect(), and the monitor for a
  // member joining in the background): connected once its control segment, its ring to us
  // and its regions are mapped. `known`: the peers' processes as last connected (the
  // control thread's; the monitor has none).
  struct Attempt {
    enum State : std::uint8_t { waiting, connected, refused, gone } state = waiting;
    std::string why;  // refused: the difference
    pid_t pid = 0;    // gone: its process
  };
  Attempt attempt(Peer& p, std::uint64_t epoch, const std::map<NodeId, pid_t>* known) {
    if (!p.control) {
      p.control =
          Segment::open(socket_name(cfg_.name_prefix, p.id), name(p.id), SegmentKind::control);
      // A peer of an earlier version has a named control segment instead: name its version.
      if (!p.control) p.control = Segment::open_named(name(p.id), SegmentKind::control, true);
      if (p.control) {
        auto refused = mismatch(p.id, *p.control);
        if (!refused.empty()) return {Attempt::refused, std::move(refused), 0};
      }
    }
    // A member of the last view that exited meanwhile (it left or crashed while we
    // changed views) is known by its pid; a member we can map, by its segment's. Its
    // process exited: it will never join (no need to wait).
    pid_t owner = 0;
    if (p.control) {
      owner = static_cast<pid_t>(p.control->header()->owner_pid);
    } else if (known != nullptr) {
      const auto it = known->find(p.id);
      if (it != known->end()) owner = it->second;
    }
    if (owner != 0 && !process_alive(static_cast<std::uint64_t>(owner)))
      return {Attempt::gone, {}, owner};
    if (p.control && p.ctl()->epoch.load(std::memory_order_acquire) == epoch && map_regions(p))
      return {Attempt::connected, {}, 0};
    return {};
  }

  // A peer attempt() connected: its process, and its heartbeat as of `now`.
  void adopt(Peer& p, Clock::time_point now) {
    p.pid = static_cast<pid_t>(p.control->header()->owner_pid);
    p.last_heartbeat = p.ctl()->heartbeat.load(std::memory_order_relaxed);
    p.heartbeat_seen = now;
  }

  // Why attempt() did not connect `p` in time, as its suspicion. A refusal is told to the
  // peer (it refuses us too: the comparison is symmetric), so that it may wait for us
  // before it leaves.
  Suspicion failed(Peer& p, const Attempt& a, std::uint64_t epoch) {
    const std::string who = "node " + std::to_string(p.id);
    switch (a.state) {
      case Attempt::refused:
        if (p.control->header()->version == kVersion) {
          p.ctl()->refused_by.fetch_add(1, std::memory_order_release);
          refusals_.fetch_add(1, std::memory_order_relaxed);
        }
        return Suspicion{p.id, SuspicionReason::mismatch, a.why};
      case Attempt::gone:
        return Suspicion{p.id, SuspicionReason::connection_lost,
                         who + " (pid " + std::to_string(a.pid) + ") is gone"};
      default:
        return Suspicion{p.id, SuspicionReason::connect_timeout,
                         who + " did not join view " + std::to_string(epoch) +
                             " under shm prefix '" + cfg_.name_prefix + "' in time" +
                             (p.control ? std::string()
                                        : " (no process of this user serves socket @" +
                                              socket_name(cfg_.name_prefix, p.id).substr(1) +
                                              " in this network namespace)")};
    }
  }

  // Maps the peer's regions: its row in place where both of us declared the rows of a region
  // (share_rows) alike, else the whole region, which our writes copy into.
  bool map_regions(Peer& p) {
    const auto* c = p.ctl();
    const std::uint32_t count = std::min(c->region_count, kMaxRegions);
    // An entry's flags change while we look (the peer retires a region): read atomically.
    const auto flags = [&](std::uint32_t i) {
      return std::atomic_ref(const_cast<std::uint32_t&>(c->regions[i].flags))
          .load(std::memory_order_acquire);
    };
    const auto retired = [&](std::uint32_t i) { return (flags(i) & kRetired) != 0; };
    for (std::uint32_t i = 0; i < count; ++i) {
      const RegionEntry e{c->regions[i].id, flags(i), c->regions[i].size};
      if ((e.flags & kRetired) != 0) continue;  // an ended view's, its memory gone
      if (p.regions.contains(e.id) || p.in_place.contains(e.id)) continue;
      // A region we have none of (another view's: the peer made the next one, or keeps the
      // last): nothing of ours is written there, so it is not mapped (writes name one region
      // id on both sides).
      const auto mine = regions_.find(e.id);
      if (mine == regions_.end() || mine->second->retired()) continue;
      // A region where we may write nothing (restrict_writes with no grant of ours, as the
      // declaration is the same on both sides): nothing of ours goes there, and nothing reads
      // it one-sidedly (an RDMC pool: blocks arrive through the rings), so it is not mapped.
      if (grants_.restricted(e.id) && grants_.ranges(cfg_.self, e.id).empty()) continue;
      auto& ours = *mine->second;
      const ByteRange* row = nullptr;  // the peer's, where we keep rows in place here
      if (const auto rows = rows_.find(e.id); rows != rows_.end()) {
        if (const auto it = rows->second.find(p.id); it != rows->second.end()) row = &it->second;
      }
      if (row != nullptr && (e.flags & kRowsInPlace) != 0 && ours.payload_size() == e.size) {
        if (!Segment::map_range(socket_name(cfg_.name_prefix, p.id), region_name(p.id, e.id),
                                e.size, row->offset, row->length, ours.payload() + row->offset)) {
          if (retired(i)) continue;  // retired since we looked
          return false;
        }
        p.in_place.emplace(e.id, *row);
        continue;
      }
      auto seg = Segment::open(socket_name(cfg_.name_prefix, p.id), region_name(p.id, e.id),
                               SegmentKind::region);
      if (!seg || seg->payload_size() != e.size) {
        if (retired(i)) continue;  // retired since we looked
        return false;
      }
      // Rows in place here but not there: the peer copies its row into our segment, so our
      // mapping of that row must be the segment's again.
      if (row != nullptr) ours.restore(row->offset, row->length);
      p.regions.emplace(e.id, std::move(seg));
    }
    return true;
  }

  void disconnect() {
    if (!connected_) return;
    // A region whose rows are in place belongs to the view we leave: a peer connecting to the
    // next one while it still has the same region does not map our row of it.
    auto* c = ctl();
    for (std::uint32_t i = 0; i < std::min(c->region_count, kMaxRegions); ++i)
      if ((c->regions[i].flags & kRowsInPlace) != 0)
        std::atomic_ref(c->regions[i].flags).fetch_or(kRetired, std::memory_order_release);
    c->epoch.store(0, std::memory_order_release);
    std::map<NodeId, std::unique_ptr<Peer>> old;
    {
      std::lock_guard lock(monitor_mu_);
      old = std::move(peers_);
      peers_.clear();
      connected_ = false;
    }
    // Wake peers sleeping on us so their monitors notice at once.
    for (auto& [id, p] : old) {
      if (p->control) Doorbell(&p->ctl()->doorbell, true).ring();
    }
    // The rows of the view we leave stay as they ended, in our own memory: a peer's segment
    // of that view is not kept here while we build and connect the next one. Those of a
    // region kept mapped (keep_rows_mapped) stay the peer's until we retire or release it.
    for (auto& [id, p] : old) {
      for (const auto& [rid, row] : p->in_place) {
        const auto it = regions_.find(rid);
        if (it != regions_.end() && !it->second->retired() && !held_rows_.contains(rid))
          it->second->detach_row(row.offset, row.length);
      }
    }
    old.clear();  // unmaps; our rings are unlinked
    events_.clear();
  }

  // ------------------------------------------------------------------ data plane
  Peer* find(NodeId id) const {
    auto it = peers_.find(id);  // peers_ only changes in connect/disconnect (see header)
    return it == peers_.end() ? nullptr : it->second.get();
  }

  Status write(NodeId peer, RegionId local, std::uint64_t loff, RegionId remote, std::uint64_t roff,
               std::size_t len) {
    const WriteOp op{local, loff, remote, roff, len};
    return write_batch(peer, std::span<const WriteOp>(&op, 1)).status;
  }

  // copy() per op, in order, then one ring of the peer's doorbell for all of them: a ring
  // is a locked add on a line in the peer's segment, and the peer only needs one to wake up.
  WriteBatchResult write_batch(NodeId peer, std::span<const WriteOp> ops) {
    WriteBatchResult r;
    Peer* p = find(peer);
    for (const auto& op : ops) {
      r.status = copy(p, op);
      if (r.status != Status::ok) break;
      ++r.posted;
    }
    if (r.posted > 0) Doorbell(&p->ctl()->doorbell, true).ring();
    return r;
  }

  // One write's bytes into the peer's region (`p` as find() gave it), ordered after the
  // earlier ones. Our own side is checked before the peer.
  Status copy(Peer* p, const WriteOp& op) {
    auto src = regions_.find(op.local);
    if (src == regions_.end() ||
        !in_bounds(op.local_offset, op.length, src->second->payload_size())) {
      return Status::invalid;
    }
    if (p == nullptr || p->suspected.load(std::memory_order_relaxed)) return Status::peer_suspected;
    if (!p->ready.load(std::memory_order_acquire)) return Status::retry;  // joining: connecting()
    if (p->in_place.contains(op.remote)) {
      // Our row in place: the peer reads the bytes where we stored them. The grant keeps the
      // write to our own row; nothing is copied, and the doorbell wakes the peer.
      const auto& own = regions_.at(op.remote);
      if (!in_bounds(op.remote_offset, op.length, own->payload_size()) ||
          !grants_.allows(cfg_.self, op.remote, op.remote_offset, op.length))
        return Status::invalid;
      return Status::ok;
    }
    auto dst = p->regions.find(op.remote);
    if (dst == p->regions.end() ||
        !in_bounds(op.remote_offset, op.length, dst->second->payload_size())) {
      return Status::invalid;
    }
    // Rows belong to their owners: the view's grant of self() says where we may write in
    // every member's copy. The peer cannot check (it sees only bytes change), so this
    // catches a buggy writer, not a hostile process (docs/transport-shm.md).
    if (!grants_.allows(cfg_.self, op.remote, op.remote_offset, op.length)) return Status::invalid;
    // Earlier writes happen-before this one's bytes (the contract's per-peer order).
    std::atomic_thread_fence(std::memory_order_release);
    std::memcpy(dst->second->payload() + op.remote_offset, src->second->payload() + op.local_offset,
                op.length);
#if defined(__x86_64__)
    // glibc copies large blocks with non-temporal stores, which x86 does not order with
    // later stores; the fence keeps "data before guard" true for them too.
    if (op.length >= (std::size_t{64} << 10)) __builtin_ia32_sfence();
#endif
    return Status::ok;
  }

  Status send_block(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t length,
                    std::uint32_t immediate) {
    auto src = regions_.find(local);
    if (src == regions_.end() || !in_bounds(offset, length, src->second->payload_size())) {
      return Status::invalid;
    }
    if (length > cfg_.ring_bytes / 2 - 8) return Status::invalid;
    Peer* p = find(peer);
    if (p == nullptr || p->suspected.load(std::memory_order_relaxed)) return Status::peer_suspected;
    if (!p->ready.load(std::memory_order_acquire)) return Status::retry;
    {
      std::lock_guard lock(p->mu);
      if (!p->out_ring) {
        // The peer's ring for us: it made it when it posted the receive this block is for.
        auto ring = Segment::open(socket_name(cfg_.name_prefix, peer), ring_name(cfg_.self, peer),
                                  SegmentKind::ring);
        if (!ring || ring->payload_size() < kRingDataOffset) return Status::retry;
        const auto* r = std::launder(reinterpret_cast<const RingData*>(ring->payload()));
        if (r->epoch != epoch_ || r->capacity != ring->payload_size() - kRingDataOffset)
          return Status::retry;  // a ring of an earlier view, still served: not posted yet
        if (length > r->capacity / 2 - 8) return Status::invalid;
        p->out_ring = std::move(ring);
      }
      auto* ring = std::launder(reinterpret_cast<RingData*>(p->out_ring->payload()));
      std::byte* data = p->out_ring->payload() + kRingDataOffset;
      const std::uint64_t cap = ring->capacity;
      std::uint64_t head = ring->head.load(std::memory_order_relaxed);
      const std::uint64_t tail = ring->tail.load(std::memory_order_acquire);
      const std::size_t need = 8 + pad8(length);
      const std::uint64_t at = head % cap;
      const std::uint64_t to_end = cap - at;
      const std::uint64_t total = need <= to_end ? need : to_end + need;
      if (cap - (head - tail) < total) return Status::retry;
      if (need > to_end) {
        const std::uint32_t marker = kWrapMarker;
        if (to_end >= 4) std::memcpy(data + at, &marker, 4);
        head += to_end;
      }
      std::byte* rec = data + head % cap;
      std::memcpy(rec, &length, 4);
      std::memcpy(rec + 4, &immediate, 4);
      std::memcpy(rec + 8, src->second->payload() + offset, length);
      ring->head.store(head + need, std::memory_order_release);
    }
    Doorbell(&p->ctl()->doorbell, true).ring();
    push_event(BlockSent{peer, immediate});
    return Status::ok;
  }

  Status post_receive(NodeId peer, RegionId local, std::uint64_t offset, std::uint32_t capacity) {
    auto dst = regions_.find(local);
    if (dst == regions_.end() || !in_bounds(offset, capacity, dst->second->payload_size())) {
      return Status::invalid;
    }
    Peer* p = find(peer);
    if (p == nullptr || p->suspected.load()) return Status::peer_suspected;
    if (!p->ready.load(std::memory_order_acquire)) return Status::retry;
    std::lock_guard lock(p->mu);
    if (!p->in_ring) {
      // The first block we expect from the peer in this view: our ring for it, which the
      // peer maps at its first send.
      auto ring = Segment::create(registry_, ring_name(peer, cfg_.self), SegmentKind::ring,
                                  kRingDataOffset + cfg_.ring_bytes);
      auto* r = new (ring->payload()) RingData{};
      r->capacity = cfg_.ring_bytes;
      r->epoch = epoch_;
      ring->publish();
      p->in_ring = std::move(ring);
      p->receiving.store(true, std::memory_order_release);
    }
    p->posted.push_back(Posted{local, offset, capacity});
    return Status::ok;
  }

  // Zero-copy receive of blocks (Transport::place_blocks): asked for each record before it
  // takes a posted receive.
  void place_blocks(const void* owner, BlockPlacer placer) {
    std::lock_guard lock(placer_mu_);
    if (!placer) {
      if (owner != placer_owner_) return;
      placer_owner_ = nullptr;
      placer_.reset();
      return;
    }
    placer_owner_ = owner;
    placer_ = std::make_shared<const BlockPlacer>(std::move(placer));
  }

  // Moves ring records where the block placer says, or into posted receives.
  void drain_rings() {
    std::shared_ptr<const BlockPlacer> placer;
    bool looked = false;  // for the placer: only once a ring has something
    for (auto& [id, p] : peers_) {
      if (!p->ready.load(std::memory_order_acquire) ||
          !p->receiving.load(std::memory_order_acquire) ||
          p->suspected.load(std::memory_order_relaxed))
        continue;
      auto* ring = std::launder(reinterpret_cast<RingData*>(p->in_ring->payload()));
      // Nothing arrived (the usual case, checked on every poll): no lock.
      if (ring->head.load(std::memory_order_acquire) == ring->tail.load(std::memory_order_relaxed))
        continue;
      if (!std::exchange(looked, true)) {
        std::lock_guard lock(placer_mu_);
        placer = placer_;
      }
      std::unique_lock lock(p->mu);
      const std::byte* data = p->in_ring->payload() + kRingDataOffset;
      const std::uint64_t cap = ring->capacity;
      bool freed = false;
      while (placer || !p->posted.empty()) {
        std::uint64_t tail = ring->tail.load(std::memory_order_relaxed);
        const std::uint64_t head = ring->head.load(std::memory_order_acquire);
        if (tail == head) break;
        std::uint32_t length = 0, imm = 0;
        const std::uint64_t to_end = cap - tail % cap;
        if (to_end < 8) {
          tail += to_end;
        } else {
          std::memcpy(&length, data + tail % cap, 4);
          if (length == kWrapMarker) tail += to_end;
        }
        if (tail == head) {
          ring->tail.store(tail, std::memory_order_release);
          break;
        }
        std::memcpy(&length, data + tail % cap, 4);
        std::memcpy(&imm, data + tail % cap + 4, 4);
        if (length > cap / 2 || 8 + pad8(length) > head - tail) {
          lock.unlock();
          suspect(*p, SuspicionReason::malformed_frame,
                  "ring record length " + std::to_string(length));
          break;
        }
        std::optional<BlockPlace> at;
        if (placer) {
          at = (*placer)(id, imm, length);
          if (at) {
            const auto r = regions_.find(at->region);
            if (r == regions_.end() || !in_bounds(at->offset, length, r->second->payload_size()))
              at.reset();
          }
        }
        bool placed = true;
        if (!at) {
          if (p->posted.empty()) break;
          const Posted dst = p->posted.front();
          if (length > dst.capacity) {
            lock.unlock();
            suspect(*p, SuspicionReason::block_overflow,
                    "block of " + std::to_string(length) + " bytes > posted receive of " +
                        std::to_string(dst.capacity));
            break;
          }
          p->posted.pop_front();
          at = BlockPlace{dst.region, dst.offset};
          placed = false;
        }
        std::memcpy(regions_.at(at->region)->payload() + at->offset, data + tail % cap + 8, length);
        ring->tail.store(tail + 8 + pad8(length), std::memory_order_release);
        freed = true;
        push_event(BlockReceived{id, at->region, at->offset, length, imm, placed});
      }
      if (freed) Doorbell(&p->ctl()->doorbell, true).ring();  // the sender may have room now
    }
  }

  std::size_t poll(std::vector<Event>& out) {
    drain_rings();
    return events_.drain(out);
  }

  [[nodiscard]] NodeId self() const noexcept {
    return cfg_.self;
  }
  [[nodiscard]] std::uint64_t activity() const noexcept {
    return doorbell_->ticket();
  }
  void wait(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    doorbell_->wait(static_cast<std::uint32_t>(ticket), timeout);
  }
  void notify() noexcept {
    doorbell_->ring_all();
  }
  void wait_quiet(std::uint64_t ticket, std::chrono::nanoseconds timeout) {
    doorbell_->wait_quiet(static_cast<std::uint32_t>(ticket), timeout);
  }
  void arm_waiter(bool armed) noexcept {
    doorbell_->arm(armed);
  }

  bool connecting(NodeId peer) const {
    const auto* p = find(peer);
    return p != nullptr && !p->ready.load(std::memory_order_acquire) && !p->suspected.load();
  }
  std::optional<RegionDescriptor> remote_region(NodeId peer, RegionId id) const {
    const auto* p = find(peer);
    if (p == nullptr || !p->ready.load(std::memory_order_acquire)) return std::nullopt;
    if (p->in_place.contains(id))
      return RegionDescriptor{id, regions_.at(id)->payload_size(), 0, 0};
    const auto it = p->regions.find(id);
    if (it == p->regions.end()) return std::nullopt;
    return RegionDescriptor{id, it->second->payload_size(), 0, 0};
  }
  std::optional<LocalRegion> local_region(RegionId id) const {
    const auto it = regions_.find(id);
    if (it == regions_.end()) return std::nullopt;
    return LocalRegion{id, {it->second->payload(), it->second->payload_size()}};
  }

  void push_event(Event e) {
    events_.push(std::move(e));
    doorbell_->ring();
  }

  void suspect(Peer& p, SuspicionReason reason, std::string detail) {
    if (p.suspected.exchange(true)) return;
    push_event(Suspicion{p.id, reason, std::move(detail)});
  }

  // ------------------------------------------------------------------ monitor thread
  void wake_monitor() noexcept {
    const std::uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
  }

  // Every heartbeat_interval, and at once when a peer's process exits (its pidfd becomes
  // readable) or we are woken: bump our heartbeat, check each peer's epoch, process and
  // (with a suspicion timeout) heartbeat. The pidfds are the monitor's own: it opens and
  // closes them here, so none is closed while it polls.
  void monitor() {
    std::map<pid_t, int> pidfds;  // peer process -> pidfd (-1: none to be had)
    std::set<pid_t> exited;       // their pidfd said so
    auto due = Clock::now();
    std::unique_lock lock(monitor_mu_);
    while (!stop_) {
      ctl()->heartbeat.fetch_add(1, std::memory_order_relaxed);
      std::set<pid_t> watch;
      bool joining = false;  // a member joining in the background: look again soon
      if (connected_) {
        const auto now = Clock::now();
        // Woken half a suspicion timeout late: we were starved, so stalls we measured are
        // ours. Restart the peers' clocks instead of suspecting them.
        const bool we_stalled = now - due > cfg_.suspicion_timeout / 2;
        for (auto& [id, p] : peers_) {
          if (p->suspected.load()) continue;
          if (!p->ready.load(std::memory_order_relaxed)) {  // ours to connect (connect())
            const Attempt a = attempt(*p, epoch_, nullptr);
            if (a.state == Attempt::waiting && now < p->deadline) {
              joining = true;
              continue;
            }
            if (a.state != Attempt::connected) {
              auto why = failed(*p, a, epoch_);
              suspect(*p, why.reason, std::move(why.detail));
              continue;
            }
            adopt(*p, now);
            p->ready.store(true, std::memory_order_release);
            push_event(PeerConnected{id});
          }
          if (!p->control) continue;
          const auto* c = p->ctl();
          const std::uint64_t hb = c->heartbeat.load(std::memory_order_relaxed);
          if (c->epoch.load(std::memory_order_acquire) != epoch_) {
            suspect(*p, SuspicionReason::peer_left,
                    "node " + std::to_string(id) + " left the view");
          } else if (exited.contains(p->pid) ||
                     !process_alive(static_cast<std::uint64_t>(p->pid))) {
            suspect(*p, SuspicionReason::connection_lost,
                    "node " + std::to_string(id) + " (pid " + std::to_string(p->pid) + ") is gone");
          } else if (hb != p->last_heartbeat || we_stalled) {
            p->last_heartbeat = hb;
            p->heartbeat_seen = now;
          } else if (cfg_.suspicion_timeout.count() > 0 &&
                     now - p->heartbeat_seen > cfg_.suspicion_timeout) {
            suspect(*p, SuspicionReason::heartbeat_timeout,
                    "no heartbeat from node " + std::to_string(id) + " for " +
                        std::to_string(cfg_.suspicion_timeout.count()) + " ms");
          }
          if (!p->suspected.load()) watch.insert(p->pid);
        }
      }
      // Watch exactly the live peers' processes.
      for (auto it = pidfds.begin(); it != pidfds.end();) {
        if (watch.contains(it->first)) {
          ++it;
          continue;
        }
        if (it->second >= 0) ::close(it->second);
        exited.erase(it->first);
        it = pidfds.erase(it);
      }
      std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}};
      std::vector<pid_t> pids{0};
      bool gone = false;  // a process exited before we could watch it: look again at once
      for (const pid_t pid : watch) {
        auto [it, fresh] = pidfds.try_emplace(pid, -1);
        if (fresh) {
          it->second = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
          if (it->second < 0 && errno == ESRCH) {
            exited.insert(pid);
            gone = true;
          }
        }
        if (it->second < 0) continue;  // no pidfd (old kernel): kill(pid, 0) each period
        fds.push_back({it->second, POLLIN, 0});
        pids.push_back(pid);
      }
      due = Clock::now() + cfg_.heartbeat_interval;
      const int wait_ms =
          gone      ? 0
          : joining ? 1
                    : static_cast<int>(std::max<std::int64_t>(1, cfg_.heartbeat_interval.count()));
      lock.unlock();
      if (::poll(fds.data(), fds.size(), wait_ms) > 0) {
        std::uint64_t drained = 0;
        if ((fds[0].revents & POLLIN) != 0) (void)!::read(wake_fd_, &drained, sizeof drained);
        for (std::size_t i = 1; i < fds.size(); ++i)
          if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) exited.insert(pids[i]);
      }
      lock.lock();
    }
    for (auto& [pid, fd] : pidfds)
      if (fd >= 0) ::close(fd);
  }

  ShmConfig cfg_;
  SegmentRegistry registry_;  // before every Segment of ours: they remove themselves from it
  int listen_ = -1;           // our abstract socket (the server thread closes it)
  int serve_stop_ = -1;       // eventfd: stops the server thread
  std::thread server_;
  std::atomic<std::uint64_t> refusals_{0};  // peers we refused over our lifetime
  std::unique_ptr<Segment> control_;
  std::optional<Doorbell> doorbell_;
  std::map<RegionId, std::unique_ptr<Segment>> regions_;  // changed only while disconnected
  WriteGrants grants_;  // as regions_: changed only while disconnected
  // Regions whose rows are in place (share_rows): each member's row. As regions_.
  std::map<RegionId, std::map<NodeId, ByteRange>> rows_;
  std::set<RegionId> held_rows_;  // of rows_: peers' rows stay mapped past disconnect. As rows_

  std::mutex placer_mu_;  // placer_owner_, placer_
  const void* placer_owner_ = nullptr;
  std::shared_ptr<const BlockPlacer> placer_;  // place_blocks()
  std::mutex monitor_mu_;                      // peers_ (writes), connected_, epoch_, stop_
  int wake_fd_ = -1;                           // eventfd: wakes the monitor (new peers, stop)
  std::map<NodeId, pid_t> last_pids_;  // peers' processes as last connected (control thread)
  std::map<NodeId, std::unique_ptr<Peer>> peers_;
  std::uint64_t epoch_ = 0;
  bool connected_ = false;
  bool stop_ = false;
  std::thread monitor_;

  EventQueue events_;
};

template class Forwarding<shm_detail::Impl>;

ShmTransport::ShmTransport(ShmConfig config)
    : Forwarding(std::make_unique<shm_detail::Impl>(std::move(config))) {}
ShmTransport::~ShmTransport() = default;
std::size_t ShmTransport::reclaim_stale(const std::string& prefix) {
  return shm_detail::Impl::reclaim_stale_named(prefix + ".n");
}
std::size_t ShmTransport::reclaim_all_stale() {
  return shm_detail::Impl::reclaim_stale_named("");
}
ShmTransport::MemoryRoom ShmTransport::memory_room() {
  MemoryRoom host{~std::uint64_t{0}, "the host (MemAvailable)"};
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib) {
    std::getline(meminfo, unit);
    if (key == "MemAvailable:") {
      host.bytes = kib * 1024;
      host.bound = "the host (MemAvailable " + mib(host.bytes) + ")";
      break;
    }
  }
  const auto cg = cgroup_room();
  return cg && cg->bytes < host.bytes ? *cg : host;
}

std::vector<NodeId> ShmTransport::live_nodes(const std::string& prefix) {
  // Lines: "Num RefCount Protocol Flags Type St Inode Path"; an abstract name's NUL shows as '@'.
  std::set<NodeId> ids;
  std::ifstream in("/proc/net/unix");
  std::string line;
  const std::string lead = "@" + prefix + ".n";
  while (std::getline(in, line)) {
    const auto at = line.rfind(' ');
    if (at == std::string::npos || line.compare(at + 1, lead.size(), lead) != 0) continue;
    const std::string id = line.substr(at + 1 + lead.size());
    if (id.empty() || id.size() > 10 || !std::all_of(id.begin(), id.end(), ::isdigit)) continue;
    const auto v = std::stoull(id);
    if (v <= std::numeric_limits<NodeId>::max()) ids.insert(static_cast<NodeId>(v));
  }
  return {ids.begin(), ids.end()};
}
DoorbellData* ShmTransport::doorbell() const noexcept {
  return &impl().ctl()->doorbell;
}

}  // namespace spindle::transport
