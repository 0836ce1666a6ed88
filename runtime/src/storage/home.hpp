// spindle::storage::LogHome: the directory a participant keeps its durable logs in, and its
// claim on it (docs/storage.md, "Durable identity").
//
//   <log_dir>/domain-<domain id>/
//     node-<id>/            a home: one log directory per topic, OWNER and HOME
//       OWNER               flock()ed by the process whose home it is, for its whole life
//       HOME                the home's id: "0x" and 16 hex digits, random, made with the
//                           home; each log in it carries it (storage/log.hpp, IDENTITY), so
//                           a log copied in from another home or domain is refused
//       <topic>/            segments, index, LOCK (storage/log.hpp)
//
// A participant with a fixed node id (domain file or SPINDLE_NODE_ID) has the home of that
// id, as before. One with a random id — every participant without a domain file — would
// otherwise start from an empty home each time and never see what earlier processes logged.
// So it adopts an orphaned home: one whose OWNER nobody holds (its process exited, however
// it ended) and which holds at least one log, the most recently written first. It then
// recovers and replays those logs as a restarted node does, and goes on appending to them:
// the home passes from process to process, and the newest one holds what the domain logged
// last (every member logs every retained topic). Two processes never adopt the same home: the
// OWNER lock decides. A participant that joins a running domain still takes the domain's
// history from the state transfer, which is newer (storage.md, "Restart").
//
// Threading: a value owned by one participant; not shared.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "storage/settings.hpp"

namespace spindle::storage {

class LogHome {
 public:
  LogHome() = default;
  // The home of `node` in `domain_id`; with `adopt`, an orphaned home of the domain if there
  // is one (its OWNER taken now), else that of `node`. Never throws: a home that cannot be
  // examined is left alone.
  static LogHome claim(const LogSettings& settings, std::uint32_t domain_id, std::uint32_t node,
                       bool adopt);
  ~LogHome();
  LogHome(LogHome&& other) noexcept;
  LogHome& operator=(LogHome&& other) noexcept;
  LogHome(const LogHome&) = delete;
  LogHome& operator=(const LogHome&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
  // True if this home was another process's (the participant replays it).
  [[nodiscard]] bool adopted() const noexcept { return adopted_; }
  // A topic's log directory in this home (the name escaped as topic_log_dir() does).
  [[nodiscard]] std::filesystem::path topic_dir(const std::string& topic) const;
  // Creates the home if needed and takes its OWNER (before the first log opens in it), so
  // that no other process adopts it while this one lives. False, with `error`, if it cannot.
  bool hold(std::string& error);
  // The home's id (HOME), made now if the home has none (a home from before ids). It travels
  // with the home: a participant that adopts the home, or restarts with its fixed node id,
  // finds the same id. nullopt, with `error`, if it cannot be read or made.
  std::optional<std::uint64_t> id(std::string& error);

 private:
  std::optional<std::uint64_t> id_;
  std::filesystem::path path_;
  int owner_fd_ = -1;
  bool adopted_ = false;
};

}  // namespace spindle::storage
