// Shell-style name patterns: '*' matches any run of characters, '?' one character, anything
// else itself. Topic patterns of the permissions document (security/permissions.hpp) and the
// gateway's allow and deny lists (interop/gateway/config.hpp) match this way.
//
// Threading: a pure function.
#pragma once

#include <string_view>

namespace spindle::core {

// Iterative, with one backtrack point: linear in practice, never exponential.
[[nodiscard]] inline bool glob_match(std::string_view pattern, std::string_view name) noexcept {
  std::size_t p = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

}  // namespace spindle::core
