// spindle perf ARGS...   runs spindle-perf ARGS... (the benchmark; docs/tools.md)
// spindle log ARGS...    runs spindle-log ARGS... (the durable logs; docs/log-format.md)
//
// The two tools stay programs of their own (spindle-perf starts copies of itself for the
// processes of a run); `spindle` runs the one installed beside it, as git runs git-<name>,
// or in a build tree the one the build made. Every argument goes to the tool unchanged,
// --help included, and its exit status is the command's.
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "command.hpp"

namespace spindle_cli {
namespace {

namespace fs = std::filesystem;

// Where `tool` is: beside this executable, else where this build tree put it.
fs::path locate(const std::string& tool, const char* built) {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / tool;
    if (fs::exists(beside, ec)) return beside;
  }
  return built;
}

int run_tool(const std::string& tool, const char* built, const std::vector<std::string>& args) {
  const auto path = locate(tool, built);
  std::vector<std::string> argv_storage{path.string()};
  argv_storage.insert(argv_storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_storage)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  ::execv(path.c_str(), argv.data());
  std::cerr << "spindle: cannot run " << tool << " (" << path.string()
            << "): " << std::strerror(errno) << "; it is installed beside spindle" << std::endl;
  return 127;
}

void add_forward(CLI::App& app, Action& action, const std::string& name, const std::string& tool,
                 const char* built, const std::string& description) {
  auto* cmd = app.add_subcommand(name, description);
  cmd->set_help_flag();   // --help goes to the tool
  cmd->prefix_command();  // every argument goes to the tool
  cmd->allow_extras();
  cmd->callback([&action, cmd, tool, built] {
    auto args = std::make_shared<std::vector<std::string>>(cmd->remaining());
    action = [args, tool, built] { return run_tool(tool, built, *args); };
  });
}

}  // namespace

void add_perf(CLI::App& app, Action& action) {
  add_forward(app, action, "perf", "spindle-perf", SPINDLE_PERF_BUILT,
              "Measure latency and throughput through the DCPS API, in the line format of the "
              "peer benchmarks; --plot FILE.png draws them (spindle perf --help)");
}

void add_log(CLI::App& app, Action& action) {
  add_forward(app, action, "log", "spindle-log", SPINDLE_LOG_BUILT,
              "List, verify and dump the durable logs of `logged` topics (spindle log --help)");
}

}  // namespace spindle_cli
