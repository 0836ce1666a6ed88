// Log homes and their adoption (see home.hpp).
#include "storage/home.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
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
    : path_(std::move(other.path_)),
      owner_fd_(std::exchange(other.owner_fd_, -1)),
      adopted_(other.adopted_) {}

LogHome& LogHome::operator=(LogHome&& other) noexcept {
  if (this != &other) {
    if (owner_fd_ >= 0) ::close(owner_fd_);
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

}  // namespace spindle::storage
