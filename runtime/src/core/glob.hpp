// Wildcard patterns: `many` matches any run of characters, `one` one character, anything else
// itself (no escapes). Shell-style names ('*', '?': glob_match) serve the topic patterns of
// the permissions document (security/permissions.hpp) and the gateway's allow and deny lists
// (interop/gateway/config.hpp); SQL LIKE ('%', '_') serves content filters
// (filter/expression.cpp).
//
// Threading: pure functions.
#pragma once

#include <string_view>

namespace spindle::core {

// Greedy, with one backtrack point: linear in practice, O(|name| * |pattern|) at worst,
// never exponential. A wildcard character in the pattern is always a wildcard.
[[nodiscard]] inline bool wildcard_match(std::string_view pattern, std::string_view name, char many,
                                         char one) noexcept {
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == many) {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && (pattern[p] == one || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == many)
    ++p;
  return p == pattern.size();
}

[[nodiscard]] inline bool glob_match(std::string_view pattern, std::string_view name) noexcept {
  return wildcard_match(pattern, name, '*', '?');
}

}  // namespace spindle::core
