// hosts_node as a user's program on this host runs it with no domain file: no SPINDLE_CONFIG,
// an empty config home and working directory (transport auto: members on this host meet over
// shared memory). For the single-host tests beside hosts_test (shm_crash, shm_footprint).
//
// Threading: from the test's thread.
#pragma once

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "process.hpp"
#include "temp_dir.hpp"

namespace spindle::testing {

// hosts_node `args`, with no domain file at all, or with only `settings` (inline YAML in
// SPINDLE_CONFIG, no members: it still finds the domain as with none). Its empty directory is
// removed when the test exits.
inline std::unique_ptr<Process> local_node(std::vector<std::string> args,
                                           const std::string& settings = {}) {
  static const TempDir dir("spindle-localnode");
  const std::string empty = dir.path().string();
  std::vector<std::string> a{"/usr/bin/env"};
  if (settings.empty()) {
    a.insert(a.end(), {"-u", "SPINDLE_CONFIG"});
  } else {
    a.push_back("SPINDLE_CONFIG=" + settings);
  }
  a.insert(a.end(), {"XDG_CONFIG_HOME=" + empty, "HOME=" + empty, "/bin/sh", "-c",
                     "cd \"$0\" && exec \"$@\"", empty, self_dir() + "/hosts_node"});
  a.insert(a.end(), args.begin(), args.end());
  return std::make_unique<Process>(a);
}

// The next line of `p` starting with `word` (the lines before it echoed to stderr, tagged);
// nullopt at the deadline, EOF or a FAIL line.
inline std::optional<std::string> expect_line(Process& p, const std::string& tag,
                                              const std::string& word,
                                              std::chrono::steady_clock::time_point deadline) {
  while (auto line = p.read_line(deadline)) {
    if (line->rfind(word, 0) == 0) return line;
    std::cerr << tag << ": " << *line << '\n';
    if (line->rfind("FAIL", 0) == 0) return std::nullopt;
  }
  std::cerr << tag << ": no '" << word << "' line\n";
  return std::nullopt;
}

}  // namespace spindle::testing
