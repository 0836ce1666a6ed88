// A child process that runs one function and says what it returns on a pipe: for tests whose
// processes each report a verdict ("" when all went well). The child dies with its parent
// (die_with_parent) and leaves with _exit, running nothing of the parent's at exit.
//
// Threading: fork() before the parent starts threads of its own (a participant's): the child
// has only the forking thread.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "die_with_parent.hpp"

namespace spindle::testing {

class Forked {
 public:
  // Starts the child, which runs `body`; what body returns (or "threw: " and what it threw)
  // goes back on the pipe.
  explicit Forked(const std::function<std::string()>& body) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("Forked: pipe() failed");
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("Forked: fork() failed");
    if (pid_ == 0) {
      die_with_parent(parent);
      ::close(fds[0]);
      std::string what;
      try {
        what = body();
      } catch (const std::exception& e) {
        what = std::string("threw: ") + e.what();
      }
      const auto n = ::write(fds[1], what.data(), what.size());
      ::_exit(n == static_cast<ssize_t>(what.size()) ? 0 : 1);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~Forked() {
    if (out_ >= 0) (void)said();
  }
  Forked(const Forked&) = delete;
  Forked& operator=(const Forked&) = delete;

  // What the child said, once it ended (reaped here), and a note if it did not exit 0.
  std::string said() {
    if (out_ < 0) return said_;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(out_, buf, sizeof buf)) > 0)
      said_.append(buf, static_cast<std::size_t>(n));
    ::close(out_);
    out_ = -1;
    int status = 0;
    ::waitpid(pid_, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      said_ += " (exited abnormally, status " + std::to_string(status) + ")";
    return said_;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string said_;
};

}  // namespace spindle::testing
