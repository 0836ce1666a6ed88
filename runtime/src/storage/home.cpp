// Log homes and their adoption (see home.hpp).
#include "storage/home.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <system_error>
#include <utility>
#include <vector>

namespace spindle::storage {

namespace fs = std::filesystem;

namespace {

constexpr const char* kOwner = "OWNER";

// Takes `dir`/OWNER without waiting; the descriptor, or -1 if another process holds it (or
// it cannot be made).
int try_own(const fs::path& dir) {
  const int fd = ::open((dir / kOwner).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The newest write time of anything in a home's topic directories, and whether it holds a
// log at all.
bool newest_log(const fs::path& home, fs::file_time_type& newest) {
  std::error_code ec;
  bool any = false;
  for (const auto& topic : fs::directory_iterator(home, ec)) {
    if (!topic.is_directory(ec)) continue;
    for (const auto& file : fs::directory_iterator(topic.path(), ec)) {
      if (!file.is_regular_file(ec) || file.path().filename() == "LOCK") continue;
      any = true;
      const auto t = fs::last_write_time(file.path(), ec);
      if (!ec) newest = std::max(newest, t);
    }
  }
  return any;
}

}  // namespace

LogHome LogHome::claim(const LogSettings& settings, std::uint32_t domain_id, std::uint32_t node,
                       bool adopt) {
  LogHome h;
  h.path_ = node_log_dir(settings, domain_id, node);
  if (!adopt) return h;
  const fs::path domain_dir = h.path_.parent_path();
  std::error_code ec;
  struct Candidate {
    fs::file_time_type newest;
    fs::path dir;
  };
  std::vector<Candidate> orphans;
  for (const auto& e : fs::directory_iterator(domain_dir, ec)) {
    const auto name = e.path().filename().string();
    if (name.rfind("node-", 0) != 0 || !e.is_directory(ec) || e.path() == h.path_) continue;
    fs::file_time_type newest = fs::file_time_type::min();
    if (newest_log(e.path(), newest)) orphans.push_back({newest, e.path()});
  }
  std::sort(orphans.begin(), orphans.end(),
            [](const Candidate& a, const Candidate& b) { return a.newest > b.newest; });
  for (const auto& o : orphans) {
    const int fd = try_own(o.dir);
    if (fd < 0) continue;  // its process lives (or another one adopted it just now)
    h.path_ = o.dir;
    h.owner_fd_ = fd;
    h.adopted_ = true;
    break;
  }
  return h;
}

LogHome::~LogHome() {
  if (owner_fd_ >= 0) ::close(owner_fd_);  // releases the lock
}

LogHome::LogHome(LogHome&& other) noexcept
    : id_(other.id_),
      path_(std::move(other.path_)),
      owner_fd_(std::exchange(other.owner_fd_, -1)),
      adopted_(other.adopted_) {}

LogHome& LogHome::operator=(LogHome&& other) noexcept {
  if (this != &other) {
    if (owner_fd_ >= 0) ::close(owner_fd_);
    id_ = other.id_;
    path_ = std::move(other.path_);
    owner_fd_ = std::exchange(other.owner_fd_, -1);
    adopted_ = other.adopted_;
  }
  return *this;
}

fs::path LogHome::topic_dir(const std::string& topic) const {
  return path_ / topic_log_dir({}, 0, 0, topic).filename();
}

bool LogHome::hold(std::string& error) {
  if (owner_fd_ >= 0) return true;
  std::error_code ec;
  fs::create_directories(path_, ec);
  if (ec) {
    error = "cannot create " + path_.string() + ": " + ec.message();
    return false;
  }
  owner_fd_ = try_own(path_);
  if (owner_fd_ < 0) {
    error = path_.string() + "/" + kOwner + " is held by another process (" + std::strerror(errno) +
            ")";
    return false;
  }
  return true;
}

std::optional<std::uint64_t> LogHome::id(std::string& error) {
  if (id_) return id_;
  const fs::path p = path_ / "HOME";
  auto parse = [&](const std::string& text) -> std::optional<std::uint64_t> {
    // "0x" and 16 hex digits, a newline.
    if (text.size() < 18 || text.compare(0, 2, "0x") != 0) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = 2; i < 18; ++i) {
      const char c = text[i];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      v = v << 4 | static_cast<std::uint64_t>(d);
    }
    return v;
  };
  auto read = [&]() -> std::optional<std::string> {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    char buf[64] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
  };
  if (const auto text = read()) {
    id_ = parse(*text);
    if (!id_) error = p.string() + " is not a home id (\"0x\" and 16 hex digits)";
    return id_;
  }
  if (errno != ENOENT) {
    error = "cannot read " + p.string() + ": " + std::strerror(errno);
    return std::nullopt;
  }
  // A new home (or one from before ids): a random id, written whole to a file of this
  // process and linked as HOME, so that a crash leaves no half id and, should two processes
  // make it at once (the same fixed node id twice), one id wins and both read it.
  std::error_code ec;
  fs::create_directories(path_, ec);
  std::random_device rd;
  const std::uint64_t v = std::uint64_t{rd()} << 32 | rd();
  char text[20];
  std::snprintf(text, sizeof text, "0x%016llx\n", static_cast<unsigned long long>(v));
  const fs::path tmp = path_ / ("HOME.tmp." + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const bool written = fd >= 0 && ::write(fd, text, 19) == 19 && ::fsync(fd) == 0;
  int err = errno;
  if (fd >= 0) ::close(fd);
  const bool linked = written && (::link(tmp.c_str(), p.c_str()) == 0 || errno == EEXIST);
  if (written && !linked) err = errno;
  ::unlink(tmp.c_str());
  if (!linked) {
    error = "cannot write " + p.string() + ": " + std::strerror(err);
    return std::nullopt;
  }
  const auto text_now = read();
  id_ = text_now ? parse(*text_now) : std::nullopt;
  if (!id_) error = "cannot read back " + p.string();
  return id_;
}

}  // namespace spindle::storage
