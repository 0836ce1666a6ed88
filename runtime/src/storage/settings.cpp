// Log locations (see settings.hpp).
#include "storage/settings.hpp"

#include <unistd.h>

#include <cstdlib>

namespace spindle::storage {

std::filesystem::path default_log_dir() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state == '/')
    return std::filesystem::path(state) / "spindle" / "logs";
  if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/')
    return std::filesystem::path(home) / ".local" / "state" / "spindle" / "logs";
  return std::filesystem::temp_directory_path() / ("spindle-logs-" + std::to_string(::getuid()));
}

std::filesystem::path topic_log_dir(const LogSettings& settings, std::uint32_t domain_id,
                                    std::uint32_t node, const std::string& topic) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string name;
  for (std::size_t i = 0; i < topic.size(); ++i) {
    const auto c = static_cast<unsigned char>(topic[i]);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || (c == '.' && i > 0);
    if (plain) {
      name.push_back(static_cast<char>(c));
    } else {
      name.push_back('%');
      name.push_back(kHex[c >> 4]);
      name.push_back(kHex[c & 15]);
    }
  }
  return node_log_dir(settings, domain_id, node) / name;
}

std::filesystem::path node_log_dir(const LogSettings& settings, std::uint32_t domain_id,
                                   std::uint32_t node) {
  const auto root =
      settings.log_dir.empty() ? default_log_dir() : std::filesystem::path(settings.log_dir);
  return root / ("domain-" + std::to_string(domain_id)) / ("node-" + std::to_string(node));
}

}  // namespace spindle::storage
