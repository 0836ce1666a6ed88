// Child processes for multi-process SMC tests and the benchmark: spawn with stdin/stdout
// piped, read lines with a deadline, kill and reap on destruction. Every wait is bounded.
//
// Threading: used from one thread (the test's or the benchmark coordinator's).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "die_with_parent.hpp"

namespace spindle::testing {

using Deadline = std::chrono::steady_clock::time_point;

// Its child dies with it (die_with_parent), and its destructor kills and reaps it.
class Process {
 public:
  explicit Process(const std::vector<std::string>& argv);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  // The next line from the child's stdout, or nullopt at EOF or deadline.
  std::optional<std::string> read_line(Deadline deadline);
  void send(const std::string& line);
  // Exit status, 128 + signal, or -1 if the deadline passed (the child is then killed).
  int wait(Deadline deadline);
  [[nodiscard]] pid_t pid() const noexcept { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  std::string buffer_;
  bool reaped_ = false;
  int status_ = -1;
};

// Waits for every child (bounded by `deadline`); a message for each that did not exit 0.
std::vector<std::string> wait_all(const std::vector<std::unique_ptr<Process>>& procs,
                                  Deadline deadline);

// The path of the running executable (to spawn helpers that sit beside it).
std::string self_dir();

}  // namespace spindle::testing
