// host_exec: the two halves of a "host" of the multi-host tests (hosts.hpp), each a small
// program the test starts through its Process class.
//
//   host_exec --init
//       Run inside a host's network namespace (`ip netns exec hN host_exec --init`): makes
//       the host's pid and mount namespaces, with a /dev/shm and a /proc of its own, and
//       keeps its first process (pid 1 there) until killed. Prints "host <pid>" first: that
//       process's pid as the caller sees it. Killing it kills every process of the host,
//       as a host that loses power.
//
//   host_exec [--stderr] <pid> <program> [args...]
//       Runs `program` on the host whose first process is <pid>: in its network, pid and
//       mount namespaces, as a child that dies with this one (so killing this process kills
//       it), with SIGTERM, SIGINT, SIGHUP, SIGCONT and SIGUSR1/2 passed on and SIGTSTP turned
//       into SIGSTOP (a paused process). Exits as the child did (128 + signal when it was
//       killed). --stderr: the child's standard error goes to its standard output.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// After setns(CLONE_NEWPID) every task this process creates lands in the host's pid
// namespace, LeakSanitizer's exit-time tracer among them: from there it cannot see the
// process it must stop, and the exit spins forever (the host's program long gone). host_exec
// holds nothing worth a leak check, so there is none (the sanitize build links ASan in).
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}

namespace {

pid_t child = -1;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "host_exec: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(125);
}

void pass_on(int sig) {
  if (child > 0) ::kill(child, sig == SIGTSTP ? SIGSTOP : sig);
}

// Waits for the child and exits as it did.
[[noreturn]] void wait_and_exit() {
  for (const int sig : {SIGTERM, SIGINT, SIGHUP, SIGCONT, SIGUSR1, SIGUSR2, SIGTSTP}) {
    struct sigaction sa {};
    sa.sa_handler = pass_on;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(sig, &sa, nullptr);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0)
    if (errno != EINTR) die("waitpid");
  std::exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

int init() {
  if (::unshare(CLONE_NEWPID | CLONE_NEWNS) != 0) die("unshare(pid, mount namespaces)");
  child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {
    // pid 1 of the host: its own /dev/shm and /proc, seen by nobody outside. It dies with
    // its parent, the process the test holds.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) die("private mounts");
    if (::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=1g,mode=1777") != 0)
      die("a /dev/shm of its own");
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
      die("a /proc of its own");
    // Orphans of the host come here: reap them, as an init does (SIGCHLD ends the pause).
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(SIGCHLD, &sa, nullptr);
    for (;;) {
      if (::wait(nullptr) < 0 && errno == ECHILD) ::pause();
    }
  }
  std::printf("host %d\n", static_cast<int>(child));
  std::fflush(stdout);
  wait_and_exit();
}

int run(bool stderr_to_stdout, const char* pid, char** argv) {
  const std::string ns = std::string("/proc/") + pid + "/ns/";
  // Opened first: once in the host's mount namespace, /proc is the host's.
  const int net = ::open((ns + "net").c_str(), O_RDONLY | O_CLOEXEC);
  const int pidns = ::open((ns + "pid").c_str(), O_RDONLY | O_CLOEXEC);
  const int mnt = ::open((ns + "mnt").c_str(), O_RDONLY | O_CLOEXEC);
  if (net < 0 || pidns < 0 || mnt < 0)
    die("opening the namespaces of host process " + std::string(pid));
  if (::setns(net, CLONE_NEWNET) != 0) die("setns(net)");
  if (::setns(pidns, CLONE_NEWPID) != 0) die("setns(pid)");
  if (::setns(mnt, CLONE_NEWNS) != 0) die("setns(mount)");
  child = ::fork();
  if (child < 0) die("fork");
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (stderr_to_stdout) ::dup2(1, 2);
    ::execv(argv[0], argv);
    die(std::string("exec ") + argv[0]);
  }
  wait_and_exit();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--init") return init();
  int i = 1;
  const bool to_stdout = i < argc && std::string(argv[i]) == "--stderr";
  if (to_stdout) ++i;
  if (argc - i < 2) {
    std::fprintf(stderr,
                 "usage: host_exec --init | host_exec [--stderr] <pid> <program> [args...]\n");
    return 125;
  }
  return run(to_stdout, argv[i], argv + i + 1);
}
