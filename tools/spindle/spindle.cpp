// spindle: the command line of a Spindle DDS domain.
//
//   spindle witness [--domain ID]
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
#include <signal.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <dds/dds.hpp>

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
  // The signals end the wait below; blocked before any thread starts, so that none of the
  // participant's threads takes them.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  dds::domain::DomainParticipant participant(domain < 0 ? dds::domain::default_id()
                                                        : static_cast<std::uint32_t>(domain));
  std::cout << "witness: a member of domain " << participant.domain_id()
            << " with no endpoints; it votes in view changes (stop with Ctrl-C)" << std::endl;
  std::vector<dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>> found;
  dds::sub::find<dds::sub::DataReader<dds::topic::ParticipantBuiltinTopicData>>(
      dds::sub::builtin_subscriber(participant), "DCPSParticipant", std::back_inserter(found));
  std::map<dds::core::InstanceHandle, std::int32_t> known;
  const timespec slice{0, 200'000'000};
  for (;;) {
    if (!found.empty()) report_members(found.front(), known);
    const int sig = sigtimedwait(&stop, nullptr, &slice);
    if (sig == SIGINT || sig == SIGTERM) break;
  }
  std::cout << "witness: leaving domain " << participant.domain_id() << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"spindle: the command line of a Spindle DDS domain."};
  app.require_subcommand(1);
  std::int32_t domain = -1;
  auto* witness_cmd = app.add_subcommand(
      "witness",
      "Join the domain as a member with no endpoints that votes in view changes, so that two "
      "members on different hosts survive the crash of either (docs/membership.md)");
  witness_cmd->add_option("--domain", domain, "The domain id (default: the domain file's, or 0)")
      ->check(CLI::Range(0, 0x7fffffff));
  CLI11_PARSE(app, argc, argv);
  try {
    if (witness_cmd->parsed()) return witness(domain);
  } catch (const dds::core::Exception& e) {
    std::cerr << "spindle witness: " << e.what() << std::endl;
    return 1;
  }
  return 2;
}
