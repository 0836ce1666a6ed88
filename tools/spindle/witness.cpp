// spindle witness [--domain ID]
//
// A witness is a participant with no endpoints: it carries no topic and receives no sample,
// but it is a member of the domain's group, so it counts in the majority rule of every view
// change (docs/membership.md, "Witness"). Two application processes on two hosts cannot
// survive the crash of either on their own — the survivor cannot tell a crash from a
// partition — but with a witness on a third host (or beside either) the side that keeps
// the witness holds two of three and goes on, and the other side halts: one primary, never
// two. The witness finds the domain as any participant does (the domain file of
// SPINDLE_CONFIG or the defaults), says which members it sees come and go, and runs until
// SIGINT or SIGTERM.
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <vector>

#include "command.hpp"

namespace spindle_cli {
namespace {

// Says which members the built-in DCPSParticipant reader shows coming and going (its key's
// first word is the member's node id; a gone member's sample carries only its instance).
void report_members(dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>& reader,
                    std::map<dds::core::InstanceHandle, std::int32_t>& known) {
  for (const auto& s : reader.take()) {
    const auto handle = s.info().instance_handle();
    const bool alive =
        s.info().state().instance_state() == dds::sub::status::InstanceState::alive();
    if (s.info().valid() && alive && !known.contains(handle)) {
      known[handle] = s.data().key().value()[0];
      std::cout << "member " << known[handle] << " present" << std::endl;
    } else if (!alive && known.contains(handle)) {
      std::cout << "member " << known[handle] << " gone" << std::endl;
      known.erase(handle);
    }
  }
}

int witness(std::int32_t domain) {
  const sigset_t stop = block_stop_signals();

  dds::domain::DomainParticipant participant = join(domain);
  std::cout << "witness: a member of domain " << participant.domain_id()
            << " with no endpoints; it votes in view changes (stop with Ctrl-C)" << std::endl;
  std::vector<dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>> found;
  dds::sub::find<dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>>(
      dds::sub::builtin_subscriber(participant), "DCPSParticipant", std::back_inserter(found));
  std::map<dds::core::InstanceHandle, std::int32_t> known;
  for (;;) {
    if (!found.empty()) report_members(found.front(), known);
    if (stopped_within(stop, 0.2)) break;
  }
  std::cout << "witness: leaving domain " << participant.domain_id() << std::endl;
  return 0;
}

}  // namespace

void add_witness(CLI::App& app, Action& action) {
  auto domain = std::make_shared<std::int32_t>(-1);
  auto* cmd = app.add_subcommand(
      "witness",
      "Join the domain as a member with no endpoints that votes in view changes, so that two "
      "members on different hosts survive the crash of either (docs/membership.md)");
  add_domain_option(cmd, *domain);
  cmd->callback([&action, domain] { action = [domain] { return witness(*domain); }; });
}

}  // namespace spindle_cli
