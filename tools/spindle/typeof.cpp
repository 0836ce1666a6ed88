// spindle typeof TOPIC [--wait SECONDS] [--domain ID]
//
// Prints the type of a topic of the domain as IDL: the type its Topics announce in discovery
// (XTypes type information, docs/types.md) and every type it depends on, keys and the other
// annotations included (<spindle/types/to_idl.hpp>), after a comment naming the topic and the
// type. No compiled types: what a member of the domain announced is what is printed, so the
// text loads into idlc or spindle::types::load_idl_text as that type.
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include <spindle/types/to_idl.hpp>

#include "command.hpp"

namespace spindle_cli {
namespace {

// Exit status 0; 3 when no member announced the topic with its type in `wait` seconds.
int type_of(std::int32_t domain, const std::string& topic, double wait) {
  const sigset_t stop = block_stop_signals();
  dds::domain::DomainParticipant participant = join(domain);
  spindle::types::TypeLibrary library;
  const auto* type = wait_for_type(participant, topic, wait, library, stop, "typeof");
  if (type == nullptr) return 3;
  const std::string idl = spindle::types::to_idl(*type);
  std::cout << "// topic " << topic << ": type " << type->name << "\n" << idl << std::flush;
  return 0;
}

struct TypeOfOptions {
  std::string topic;
  double wait = 10;
  std::int32_t domain = -1;
};

}  // namespace

void add_typeof(CLI::App& app, Action& action) {
  auto o = std::make_shared<TypeOfOptions>();
  auto* cmd = app.add_subcommand(
      "typeof",
      "Print the type of any topic of the domain as IDL, from the type its Topics announce "
      "(no compiled types; docs/tools.md)");
  cmd->add_option("topic", o->topic, "The topic's name")->required();
  cmd->add_option("--wait", o->wait, "Seconds to wait for the topic to be announced")
      ->check(CLI::Range(0.0, 86400.0));
  add_domain_option(cmd, o->domain);
  cmd->callback([&action, o] { action = [o] { return type_of(o->domain, o->topic, o->wait); }; });
}

}  // namespace spindle_cli
