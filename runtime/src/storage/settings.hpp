// spindle::storage::LogSettings: where and how the durable logs of `logged` topics are kept
// (the domain file's `storage` section, docs/storage.md). Each node keeps its own logs, one
// directory per topic:
//
//   <log_dir>/domain-<domain id>/node-<node id>/<topic name, escaped>/   (storage/log.hpp)
//
// so a participant that restarts with its node id finds its logs again.
//
// Threading: a value type.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>

namespace spindle::storage {

struct LogSettings {
  std::string log_dir;  // empty: default_log_dir()
  std::uint64_t segment_bytes = std::uint64_t{64} << 20;
  std::uint64_t retain_bytes = 0;          // 0: no limit
  std::chrono::nanoseconds retain_age{0};  // 0: no limit
  // The node id is random (no domain file): adopt an orphaned home of the domain (home.hpp).
  // Not a domain-file key: create_participant sets it.
  bool adopt_orphans = false;
  friend bool operator==(const LogSettings&, const LogSettings&) = default;
};

// $XDG_STATE_HOME/spindle/logs, else $HOME/.local/state/spindle/logs, else
// <temp dir>/spindle-logs-<uid>.
[[nodiscard]] std::filesystem::path default_log_dir();
// The directory of one node's logs in one domain: <log_dir>/domain-<id>/node-<id>.
[[nodiscard]] std::filesystem::path node_log_dir(const LogSettings& settings,
                                                 std::uint32_t domain_id, std::uint32_t node);
// A topic's log directory under `settings` for one node of one domain. Topic names keep
// letters, digits, '-', '_' and '.'; any other byte becomes %XX (a leading '.' too).
[[nodiscard]] std::filesystem::path topic_log_dir(const LogSettings& settings,
                                                  std::uint32_t domain_id, std::uint32_t node,
                                                  const std::string& topic);

}  // namespace spindle::storage
