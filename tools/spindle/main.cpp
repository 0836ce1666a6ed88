// spindle: the command line of a Spindle DDS domain (docs/tools.md).
//
//   spindle witness      a member with no endpoints that votes in view changes
//   spindle subscribe    any topic's samples, as JSON, with no compiled types
//   spindle publish      one sample given as JSON
//   spindle ls           the topics: types, writers, readers, partitions, consistency (QoS)
//   spindle ps           the participants: node id, role, host, pid, process
//   spindle why          why a topic's writers and readers match or not
//   spindle typeof       any topic's type, as IDL
//   spindle perf         the benchmark (spindle-perf), --plot FILE.png
//   spindle log          the durable logs (spindle-log)
//   spindle status       the view, subgroups, topic rates and reader lag, live (or --http)
//
// Each subcommand is one file of this directory (command.hpp says how they plug in).
// Exit status: the subcommand's; 1 when it failed with an error (said on stderr as
// "spindle <subcommand>: <what>"); CLI11's own for a command line it refuses.
#include <exception>
#include <iostream>
#include <string>

#include <spindle/version.hpp>

#include "command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"spindle: the command line of a Spindle DDS domain."};
  app.set_version_flag("--version", std::string("spindle ") + spindle::kVersion);
  app.require_subcommand(1);
  spindle_cli::Action action;
  spindle_cli::add_witness(app, action);
  spindle_cli::add_subscribe(app, action);
  spindle_cli::add_publish(app, action);
  spindle_cli::add_ls(app, action);
  spindle_cli::add_ps(app, action);
  spindle_cli::add_why(app, action);
  spindle_cli::add_typeof(app, action);
  spindle_cli::add_perf(app, action);
  spindle_cli::add_log(app, action);
  spindle_cli::add_status(app, action);
  CLI11_PARSE(app, argc, argv);
  const std::string name = app.get_subcommands().front()->get_name();
  try {
    return action();
  } catch (const std::exception& e) {
    std::cerr << "spindle " << name << ": " << e.what() << std::endl;
    return 1;
  }
}
