// An inline domain file (SPINDLE_CONFIG) for the participants a test creates while it is in
// scope. CTest gives every test a join port of its own (tests/CMakeLists.txt) so parallel
// tests never meet; this keeps that port unless the settings name one (and the test's log
// directory, SPINDLE_TEST_LOG_DIR, unless they name a storage section), and restores the
// previous SPINDLE_CONFIG when it goes out of scope.
//
// Threading: setenv is not thread-safe; use from the test's thread before participants exist.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace spindle::testing {

class ScopedDomainConfig {
 public:
  // settings: the keys after `version: 1`, e.g. "engine: {window_size: 4}".
  explicit ScopedDomainConfig(std::string_view settings) {
    if (const char* old = std::getenv("SPINDLE_CONFIG")) old_ = old;
    std::string yaml = "{version: 1";
    const char* port = std::getenv("SPINDLE_TEST_JOIN_PORT");
    if (port != nullptr && settings.find("join_port") == std::string_view::npos)
      yaml += std::string(", join_port: ") + port;
    const char* logs = std::getenv("SPINDLE_TEST_LOG_DIR");
    if (logs != nullptr && settings.find("storage") == std::string_view::npos)
      yaml += std::string(", storage: {log_dir: '") + logs + "'}";
    if (!settings.empty()) yaml += ", " + std::string(settings);
    yaml += "}";
    ::setenv("SPINDLE_CONFIG", yaml.c_str(), 1);
  }
  ~ScopedDomainConfig() {
    if (old_) {
      ::setenv("SPINDLE_CONFIG", old_->c_str(), 1);
    } else {
      ::unsetenv("SPINDLE_CONFIG");
    }
  }
  ScopedDomainConfig(const ScopedDomainConfig&) = delete;
  ScopedDomainConfig& operator=(const ScopedDomainConfig&) = delete;

 private:
  std::optional<std::string> old_;
};

}  // namespace spindle::testing
