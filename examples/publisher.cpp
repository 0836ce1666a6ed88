// sensor_publisher: the publishing half of the Spindle DDS example. It joins the default
// domain, waits until a subscriber's reader matches its writer, writes N readings spread
// over a few sensors (each sensor is one instance of the keyed topic), waits until every
// member has delivered them, and exits. Only the standard DCPS API (<dds/dds.hpp>) and the
// code idlc generated from sensor.idl are used.
//
//   sensor_publisher [--samples N] [--sensors K] [--timeout SECONDS]
//                    [--qos FILE] [--profile NAME] [--quiet]          (options.hpp)
//
// It needs no domain file: it joins the domain running on this host or network, or founds
// it. A file, where one is wanted, comes from SPINDLE_CONFIG (or ./spindle.yaml); see
// README.md beside this file.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include <dds/dds.hpp>

#include "options.hpp"
#include "sensor.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// What is left of the run's time budget, as the DDS duration blocking calls take.
dds::core::Duration remaining(Clock::time_point deadline) {
  const auto left = deadline - Clock::now();
  return left > Clock::duration::zero() ? dds::core::Duration(left) : dds::core::Duration::zero();
}

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

int run(const example::Options& opt) {
  const auto deadline = Clock::now() + opt.timeout;

  // Every entity's QoS from one profile of a YAML file (docs/qos.md).
  dds::core::QosProvider qos(opt.qos_file, opt.profile);

  dds::domain::DomainParticipant participant(dds::domain::default_id(), qos.participant_qos());
  dds::topic::Topic<Sensors::Reading> topic(participant, "SensorReadings", qos.topic_qos());
  dds::pub::Publisher publisher(participant, qos.publisher_qos());
  dds::pub::DataWriter<Sensors::Reading> writer(publisher, topic, qos.datawriter_qos());

  // Wait for a subscriber: a WaitSet woken by the writer's PUBLICATION_MATCHED status.
  if (!opt.quiet) std::cout << "[publisher] waiting for a subscriber" << std::endl;
  dds::core::cond::StatusCondition matched(writer);
  matched.enabled_statuses(dds::core::status::StatusMask::publication_matched());
  dds::core::cond::WaitSet waitset;
  waitset += matched;
  try {
    while (writer.publication_matched_status().current_count() == 0) {
      waitset.wait(remaining(deadline));  // throws dds::core::TimeoutError at the deadline
    }
  } catch (const dds::core::TimeoutError&) {
    std::cerr << "[publisher] no subscriber matched within " << opt.timeout.count() << " s"
              << std::endl;
    return EXIT_FAILURE;
  }

  if (!opt.quiet) {
    std::cout << "[publisher] writing " << opt.samples << " readings of " << opt.sensors
              << " sensors" << std::endl;
  }
  Sensors::Reading reading;
  reading.unit("degC");
  for (std::uint64_t i = 0; i < opt.samples; ++i) {
    reading.sensor_id(static_cast<std::uint32_t>(i % opt.sensors));
    reading.serial(i);
    reading.timestamp_ns(now_ns());
    reading.value(20.0 + 0.5 * static_cast<double>(reading.sensor_id()) +
                  0.01 * static_cast<double>(i));
    // A full ring blocks write() up to the profile's reliability.max_blocking_time, then
    // throws TimeoutError; nothing was written then, so try again until the deadline.
    for (;;) {
      try {
        writer.write(reading);
        break;
      } catch (const dds::core::TimeoutError&) {
        if (Clock::now() > deadline) throw;
      }
    }
  }

  // Readings still on their way when this process leaves may be delivered nowhere (its
  // leave ends the view they were sent in), so wait for the acknowledgments first.
  writer.wait_for_acknowledgments(remaining(deadline));
  std::cout << "[publisher] done: " << opt.samples << " readings written and delivered"
            << std::endl;
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  example::Options opt;
  if (!example::parse_options(argc, argv, opt)) {
    std::cerr << "usage: sensor_publisher " << example::kUsage << "\n";
    return 2;
  }
  return example::run_reporting("[publisher]", [&] { return run(opt); });
}
