// spindle: the command line of a Spindle DDS domain.
//
//   spindle witness [--domain ID]
//   spindle subscribe TOPIC [--json] [--count N] [--wait SECONDS] [--domain ID]
//   spindle publish TOPIC JSON [--wait SECONDS] [--domain ID]
//
// subscribe prints the samples of any topic of the domain, decoded from the type information
// its Topics announce in discovery (docs/types.md): no compiled types. One line per sample:
// the sample as JSON, or with --json a JSON object {"topic", "state", "valid",
// "source_timestamp" (ns), "value"} (a dispose or unregister: "valid": false and the key).
// publish writes one sample given as JSON (docs/types.md, "JSON") once the topic's type is
// known and a reader matches, and returns when the readers acknowledged it.
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
#include <spindle/types/dynamic_topic.hpp>

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

// SIGINT and SIGTERM, blocked before any thread starts (so that none of the participant's
// threads takes them): the commands wait for them with sigtimedwait.
sigset_t block_stop_signals() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  return stop;
}

// A participant of `domain` (negative: the domain file's, or 0).
dds::domain::DomainParticipant join(std::int32_t domain) {
  return dds::domain::DomainParticipant(domain < 0 ? dds::domain::default_id()
                                                   : static_cast<std::uint32_t>(domain));
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
  const timespec slice{0, 200'000'000};
  for (;;) {
    if (!found.empty()) report_members(found.front(), known);
    const int sig = sigtimedwait(&stop, nullptr, &slice);
    if (sig == SIGINT || sig == SIGTERM) break;
  }
  std::cout << "witness: leaving domain " << participant.domain_id() << std::endl;
  return 0;
}

const spindle::types::Type* wait_for_type(dds::domain::DomainParticipant& participant,
                                          const std::string& topic, double wait,
                                          spindle::types::TypeLibrary& library,
                                          const sigset_t& stop, const char* command);

const char* state_name(const dds::sub::status::InstanceState& s) {
  if (s == dds::sub::status::InstanceState::alive()) return "alive";
  if (s == dds::sub::status::InstanceState::not_alive_disposed()) return "disposed";
  return "no_writers";
}

// Waits (up to `wait` seconds) until some member has announced `topic` with its type
// information, then reads it until `count` samples with data have been printed (0: until
// SIGINT/SIGTERM). Exit status 0; 3 when the topic was not found in time.
int subscribe(std::int32_t domain, const std::string& topic, bool json, std::uint64_t count,
              double wait) {
  const sigset_t stop = block_stop_signals();

  dds::domain::DomainParticipant participant = join(domain);
  spindle::types::TypeLibrary library;
  const auto* type = wait_for_type(participant, topic, wait, library, stop, "subscribe");
  if (type == nullptr) return 3;
  const timespec slice{0, 50'000'000};
  // BEST_EFFORT matches every writer; what a reliable writer sends still arrives in order.
  auto t = spindle::types::create_topic(participant, topic, *type);
  dds::sub::qos::DataReaderQos q = t.qos();
  q << dds::core::policy::Reliability::BestEffort() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<spindle::types::DynamicSample> reader(dds::sub::Subscriber(participant), t,
                                                             q);
  if (!json) std::cerr << "spindle subscribe: " << topic << " (" << type->name << ")" << std::endl;
  std::uint64_t printed = 0;
  for (;;) {
    for (const auto& s : reader.take()) {
      const auto& info = s.info();
      const auto& value = s.data().value;
      const std::string text =
          value.dump(-1, ' ', false, spindle::types::Json::error_handler_t::replace);
      if (json) {
        spindle::types::Json line;
        line["topic"] = topic;
        line["state"] = state_name(info.state().instance_state());
        line["valid"] = info.valid();
        line["source_timestamp"] = info.timestamp().sec() * 1'000'000'000 +
                                   static_cast<std::int64_t>(info.timestamp().nanosec());
        line["value"] = value;
        std::cout << line.dump(-1, ' ', false, spindle::types::Json::error_handler_t::replace)
                  << std::endl;
      } else if (info.valid()) {
        std::cout << text << std::endl;
      } else {
        std::cout << state_name(info.state().instance_state()) << " " << text << std::endl;
      }
      if (info.valid() && count != 0 && ++printed >= count) return 0;
    }
    const int sig = sigtimedwait(&stop, nullptr, &slice);
    if (sig == SIGINT || sig == SIGTERM) return 0;
  }
}

// The type of `topic` as some member announced it, waiting up to `wait` seconds; null when
// none did in time (said on stderr) or a signal came.
const spindle::types::Type* wait_for_type(dds::domain::DomainParticipant& participant,
                                          const std::string& topic, double wait,
                                          spindle::types::TypeLibrary& library,
                                          const sigset_t& stop, const char* command) {
  const timespec slice{0, 50'000'000};
  for (double waited = 0;; waited += 0.05) {
    if (const auto* type = spindle::types::discovered_type(participant, topic, library))
      return type;
    if (waited >= wait) {
      std::cerr << "spindle " << command << ": no member of domain " << participant.domain_id()
                << " announced topic '" << topic << "' with its type in " << wait << " s"
                << std::endl;
      return nullptr;
    }
    const int sig = sigtimedwait(&stop, nullptr, &slice);
    if (sig == SIGINT || sig == SIGTERM) return nullptr;
  }
}

// Writes `text` (a JSON sample of the topic's type) once a reader matches, then waits for its
// acknowledgment. Exit status 0; 3: the topic was not announced, or no reader matched, in
// time; 2: the sample is not JSON or does not fit the type (the message says where and what).
int publish(std::int32_t domain, const std::string& topic, const std::string& text, double wait) {
  const sigset_t stop = block_stop_signals();
  spindle::types::Json value;
  try {
    value = spindle::types::Json::parse(text);
  } catch (const std::exception& e) {
    std::cerr << "spindle publish: the sample is not JSON: " << e.what() << std::endl;
    return 2;
  }
  dds::domain::DomainParticipant participant = join(domain);
  spindle::types::TypeLibrary library;
  const auto* type = wait_for_type(participant, topic, wait, library, stop, "publish");
  if (type == nullptr) return 3;
  try {
    (void)spindle::types::encode(*type, value);  // refused here, with where and what
  } catch (const spindle::types::DataError& e) {
    std::cerr << "spindle publish: " << e.what() << std::endl;
    return 2;
  }
  auto t = spindle::types::create_topic(participant, topic, *type);
  dds::pub::qos::DataWriterQos q = t.qos();
  q << dds::core::policy::Reliability::Reliable();
  dds::pub::DataWriter<spindle::types::DynamicSample> writer(dds::pub::Publisher(participant), t,
                                                             q);
  const timespec slice{0, 50'000'000};
  for (double waited = 0; writer.publication_matched_status().current_count() == 0;
       waited += 0.05) {
    if (waited >= wait) {
      std::cerr << "spindle publish: no reader of '" << topic << "' matched in " << wait << " s"
                << std::endl;
      return 3;
    }
    const int sig = sigtimedwait(&stop, nullptr, &slice);
    if (sig == SIGINT || sig == SIGTERM) return 0;
  }
  writer.write(spindle::types::DynamicSample{type, value});
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(10));
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
  auto* subscribe_cmd = app.add_subcommand(
      "subscribe",
      "Print the samples of any topic of the domain, decoded from the type its Topics announce "
      "(no compiled types; docs/tools.md)");
  std::string topic;
  bool json = false;
  std::uint64_t count = 0;
  double wait = 10;
  subscribe_cmd->add_option("topic", topic, "The topic's name")->required();
  subscribe_cmd->add_flag("--json", json,
                          "One JSON object per sample: topic, state, valid, source_timestamp "
                          "(ns), value");
  subscribe_cmd->add_option("--count", count, "Stop after this many samples with data (0: never)");
  subscribe_cmd->add_option("--wait", wait, "Seconds to wait for the topic to be announced")
      ->check(CLI::Range(0.0, 86400.0));
  subscribe_cmd->add_option("--domain", domain, "The domain id (default: the domain file's, or 0)")
      ->check(CLI::Range(0, 0x7fffffff));
  auto* publish_cmd = app.add_subcommand(
      "publish", "Write one sample given as JSON to any topic of the domain (docs/tools.md)");
  std::string sample;
  publish_cmd->add_option("topic", topic, "The topic's name")->required();
  publish_cmd->add_option("sample", sample, "The sample as JSON (docs/types.md, \"JSON\")")
      ->required();
  publish_cmd->add_option("--wait", wait, "Seconds to wait for the topic and for a reader")
      ->check(CLI::Range(0.0, 86400.0));
  publish_cmd->add_option("--domain", domain, "The domain id (default: the domain file's, or 0)")
      ->check(CLI::Range(0, 0x7fffffff));
  CLI11_PARSE(app, argc, argv);
  const char* name = witness_cmd->parsed()     ? "witness"
                     : subscribe_cmd->parsed() ? "subscribe"
                                               : "publish";
  try {
    if (witness_cmd->parsed()) return witness(domain);
    if (subscribe_cmd->parsed()) return subscribe(domain, topic, json, count, wait);
    if (publish_cmd->parsed()) return publish(domain, topic, sample, wait);
  } catch (const std::exception& e) {
    std::cerr << "spindle " << name << ": " << e.what() << std::endl;
    return 1;
  }
  return 2;
}
