// The disk's own append speed, the reference the `logged` level is measured against
// (issue 22's benchmark): records of each size appended for a while in a directory on the
// disk under test, one line per figure in the format of /work/shared/peers:
//
//   peer=raw-append      plain write(2) of each record, no sync         (the page cache)
//   peer=raw-fdatasync   write(2) then fdatasync(2) of each record      (every sample)
//   peer=log-every       storage::Log: append then sync each record
//   peer=log-batch64     storage::Log: 64 appends, then one sync        (group commit)
//   peer=log-never       storage::Log: appends only
//
// metric=MBps and metric=rec_per_s, transport=disk, subs=0. Each run's files are removed.
//
//   storage_bench [--sizes 1024,10240] [--duration 2] [--dir /var/tmp]
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "storage/log.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Figure {
  double records = 0;
  double seconds = 0;
};

// Calls `one` (one record, returns false to stop) until `duration` passed.
Figure run_for(double duration, const std::function<bool()>& one) {
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration<double>(duration);
  Figure f;
  while (Clock::now() < until) {
    if (!one()) break;
    ++f.records;
  }
  f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return f;
}

void print(const std::string& peer, std::size_t size, const Figure& f) {
  const double per_s = f.records / f.seconds;
  std::cout << "peer=" << peer << " transport=disk size=" << size
            << " subs=0 metric=MBps value=" << per_s * static_cast<double>(size) / 1e6 << '\n'
            << "peer=" << peer << " transport=disk size=" << size
            << " subs=0 metric=rec_per_s value=" << per_s << std::endl;
}

Figure raw(const fs::path& file, std::size_t size, double duration, bool sync) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "open " + file.string());
  const std::vector<std::byte> record(size, std::byte{0x5a});
  const auto f = run_for(duration, [&] {
    if (::write(fd, record.data(), record.size()) != static_cast<ssize_t>(record.size()))
      throw std::system_error(errno, std::generic_category(), "write " + file.string());
    if (sync && ::fdatasync(fd) != 0)
      throw std::system_error(errno, std::generic_category(), "fdatasync " + file.string());
    return true;
  });
  ::close(fd);
  fs::remove(file);
  return f;
}

Figure logged(const fs::path& dir, std::size_t size, double duration, int sync_every) {
  spindle::storage::LogOptions o;
  o.dir = dir;
  o.sync = spindle::storage::SyncPolicy::never;
  Figure f;
  {
    auto log = spindle::storage::Log::open(o);
    const std::vector<std::byte> payload(size, std::byte{0x5a});
    std::uint64_t seq = 0;
    f = run_for(duration, [&] {
      log.append({1, ++seq}, 1, payload);
      if (sync_every > 0 && seq % static_cast<std::uint64_t>(sync_every) == 0) log.sync();
      return true;
    });
  }
  fs::remove_all(dir);
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes{1024, 10240};
  double duration = 2.0;
  std::string dir = "/var/tmp";
  CLI::App app{"The disk's append speed, raw and through the durable log (storage/log.hpp)"};
  app.add_option("--sizes", sizes, "Record sizes in bytes")
      ->delimiter(',')
      ->check(CLI::Range(std::size_t{1}, std::size_t{64} << 20))
      ->capture_default_str();
  app.add_option("--duration", duration, "Seconds per figure")
      ->check(CLI::Range(0.05, 600.0))
      ->capture_default_str();
  app.add_option("--dir", dir, "A directory on the disk under test (not tmpfs)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  const auto base = fs::path(dir) / ("spindle-storage-bench-" + std::to_string(::getpid()));
  try {
    fs::create_directories(base);
    for (auto size : sizes) {
      print("raw-append", size, raw(base / "raw", size, duration, false));
      print("raw-fdatasync", size, raw(base / "raw", size, duration, true));
      print("log-every", size, logged(base / "every", size, duration, 1));
      print("log-batch64", size, logged(base / "batch", size, duration, 64));
      print("log-never", size, logged(base / "never", size, duration, 0));
    }
  } catch (const std::exception& e) {
    std::cerr << "storage_bench: " << e.what() << '\n';
    std::error_code ec;
    fs::remove_all(base, ec);
    return 1;
  }
  fs::remove_all(base);
  return 0;
}
