// What the multi-process membership tests share about their group_member children: the
// command line that starts one, and its delivery log ("<writer> <seq>" per sample taken,
// "# matched ..." per view change its writer saw; see group_member.cpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "process.hpp"

namespace spindle::testing {

using MemberLog = std::vector<std::pair<std::uint32_t, std::uint64_t>>;

struct ReadLog {
  MemberLog samples;
  std::size_t view_changes = 0;  // "# matched" lines
};

inline ReadLog read_member_log(const std::filesystem::path& file) {
  ReadLog out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# matched", 0) == 0) {
      ++out.view_changes;
      continue;
    }
    std::istringstream f(line);
    std::uint32_t w = 0;
    std::uint64_t s = 0;
    if (f >> w >> s) out.samples.emplace_back(w, s);
  }
  return out;
}

// The child's next line other than the view changes it reports as they happen ("view
// …"), or nullopt at EOF or `deadline`.
inline std::optional<std::string> next_report(Process& p, Deadline deadline) {
  auto line = p.read_line(deadline);
  while (line && line->rfind("view ", 0) == 0)
    line = p.read_line(deadline);
  return line;
}

// group_member (beside this test) for `config`, logging to `log`, expecting `members`
// members and `writers` writers, writing `samples` samples every 500 us when `writer`.
inline std::vector<std::string> group_member_argv(const std::filesystem::path& config,
                                                  const std::filesystem::path& log,
                                                  std::uint64_t samples, std::uint32_t members,
                                                  std::uint32_t writers, bool writer) {
  std::vector<std::string> argv{self_dir() + "/group_member",
                                "--config",
                                config.string(),
                                "--log",
                                log.string(),
                                "--samples",
                                std::to_string(samples),
                                "--members",
                                std::to_string(members),
                                "--writers",
                                std::to_string(writers),
                                "--interval-us",
                                "500",
                                "--timeout-ms",
                                "90000"};
  if (writer) argv.emplace_back("--writer");
  return argv;
}

}  // namespace spindle::testing
