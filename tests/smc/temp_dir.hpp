// A scratch folder for one test, removed when it goes: unique within the process (pid and a
// counter), emptied first should a crashed earlier run with the same pid have left it.
//
// Threading: one test's thread.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace spindle::testing {

class TempDir {
 public:
  explicit TempDir(std::string_view prefix = "spindle-test") {
    static int counter = 0;
    path_ =
        std::filesystem::temp_directory_path() /
        (std::string(prefix) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter));
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  // Writes `text` to `name` (folders created) and returns the full path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

}  // namespace spindle::testing
