// spindle subscribe TOPIC [--json] [--count N] [--wait SECONDS] [--domain ID]
// spindle publish TOPIC JSON [--wait SECONDS] [--domain ID]
//
// subscribe prints the samples of any topic of the domain, decoded from the type information
// its Topics announce in discovery (docs/types.md): no compiled types. One line per sample:
// the sample as JSON, or with --json a JSON object {"topic", "state", "valid",
// "source_timestamp" (ns), "value"} (a dispose or unregister: "valid": false and the key).
// publish writes one sample given as JSON (docs/types.md, "JSON") once the topic's type is
// known and a reader matches, and returns when the readers acknowledged it.
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>

#include "command.hpp"

namespace spindle_cli {
namespace {

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
    if (stopped_within(stop, 0.05)) return 0;
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
  for (double waited = 0; writer.publication_matched_status().current_count() == 0;
       waited += 0.05) {
    if (waited >= wait) {
      std::cerr << "spindle publish: no reader of '" << topic << "' matched in " << wait << " s"
                << std::endl;
      return 3;
    }
    if (stopped_within(stop, 0.05)) return 0;
  }
  writer.write(spindle::types::DynamicSample{type, value});
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(10));
  return 0;
}

struct SampleOptions {
  std::string topic;
  std::string sample;
  bool json = false;
  std::uint64_t count = 0;
  double wait = 10;
  std::int32_t domain = -1;
};

}  // namespace

void add_subscribe(CLI::App& app, Action& action) {
  auto o = std::make_shared<SampleOptions>();
  auto* cmd = app.add_subcommand(
      "subscribe",
      "Print the samples of any topic of the domain, decoded from the type its Topics announce "
      "(no compiled types; docs/tools.md)");
  cmd->add_option("topic", o->topic, "The topic's name")->required();
  cmd->add_flag("--json", o->json,
                "One JSON object per sample: topic, state, valid, source_timestamp (ns), value");
  cmd->add_option("--count", o->count, "Stop after this many samples with data (0: never)");
  cmd->add_option("--wait", o->wait, "Seconds to wait for the topic to be announced")
      ->check(CLI::Range(0.0, 86400.0));
  add_domain_option(cmd, o->domain);
  cmd->callback([&action, o] {
    action = [o] { return subscribe(o->domain, o->topic, o->json, o->count, o->wait); };
  });
}

void add_publish(CLI::App& app, Action& action) {
  auto o = std::make_shared<SampleOptions>();
  auto* cmd = app.add_subcommand(
      "publish", "Write one sample given as JSON to any topic of the domain (docs/tools.md)");
  cmd->add_option("topic", o->topic, "The topic's name")->required();
  cmd->add_option("sample", o->sample, "The sample as JSON (docs/types.md, \"JSON\")")->required();
  cmd->add_option("--wait", o->wait, "Seconds to wait for the topic and for a reader")
      ->check(CLI::Range(0.0, 86400.0));
  add_domain_option(cmd, o->domain);
  cmd->callback(
      [&action, o] { action = [o] { return publish(o->domain, o->topic, o->sample, o->wait); }; });
}

}  // namespace spindle_cli
