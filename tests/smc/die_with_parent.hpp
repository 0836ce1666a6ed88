// A forked test child that must not outlive its test (the nothing-left-behind rule, issue
// 59): header-only, so that test programs that link no test library can use it too.
//
// Threading: call it in the child right after fork(), before anything else.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

namespace spindle::testing {

// In a child just forked by `parent` (its getpid() before the fork): SIGKILL when the thread
// that forked it ends, the parent killed included (a CTest timeout, a signal); exits at once
// where the parent already went.
inline void die_with_parent(pid_t parent) noexcept {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // it died before the line above
}

}  // namespace spindle::testing
