// sensor_subscriber: the subscribing half of the Spindle DDS example. It joins the default
// domain, reads sensor readings with a WaitSet woken by a ReadCondition, takes them, and
// exits once it has N of them — checking that no reading was lost or repeated and that
// each sensor's readings arrived in the order they were written. Only the standard DCPS
// API (<dds/dds.hpp>) and the code idlc generated from sensor.idl are used.
//
//   sensor_subscriber [--samples N] [--sensors K] [--timeout SECONDS]
//                     [--qos FILE] [--profile NAME] [--quiet]         (options.hpp)
//
// Exit status 0 when all N readings arrived intact, 1 otherwise (timeout, a gap, a
// duplicate, a DDS error). It needs no domain file, as the publisher; see README.md beside
// this file.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <dds/dds.hpp>

#include "options.hpp"
#include "sensor.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// Checks what arrives: every serial number once, and per sensor in increasing order.
class Tally {
 public:
  explicit Tally(std::uint64_t expected) : seen_(expected, false) {}

  // False (and why, in `problem`) for a reading that should not have arrived.
  bool add(const Sensors::Reading& r, std::string& problem) {
    const std::uint64_t seq = r.serial();
    if (seq >= seen_.size() || seen_[seq]) {
      problem = "unexpected or repeated reading #";
      problem += std::to_string(seq);
      return false;
    }
    auto [last, first] = last_of_sensor_.try_emplace(r.sensor_id(), seq);
    if (!first && seq < last->second) {
      problem = "sensor ";
      problem += std::to_string(r.sensor_id()) + ": reading #" + std::to_string(seq) + " after #" +
                 std::to_string(last->second);
      return false;
    }
    last->second = seq;
    seen_[seq] = true;
    ++count_;
    return true;
  }
  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  [[nodiscard]] bool complete() const noexcept { return count_ == seen_.size(); }
  [[nodiscard]] std::size_t sensors() const noexcept { return last_of_sensor_.size(); }

 private:
  std::vector<bool> seen_;
  std::map<std::uint32_t, std::uint64_t> last_of_sensor_;
  std::uint64_t count_ = 0;
};

int run(const example::Options& opt) {
  const auto deadline = Clock::now() + opt.timeout;

  dds::core::QosProvider qos(opt.qos_file, opt.profile);

  dds::domain::DomainParticipant participant(dds::domain::default_id(), qos.participant_qos());
  dds::topic::Topic<Sensors::Reading> topic(participant, "SensorReadings", qos.topic_qos());
  dds::sub::Subscriber subscriber(participant, qos.subscriber_qos());

  // The profile's reader QoS, told to keep every reading until it is taken: this program
  // checks that none is lost. (Finite limits keep the QoS consistent with every shipped
  // profile; the loop below takes far faster than they fill.)
  dds::sub::qos::DataReaderQos reader_qos = qos.datareader_qos();
  reader_qos << dds::core::policy::History::KeepAll()
             << dds::core::policy::ResourceLimits(1 << 20, 1024, 1 << 20);
  dds::sub::DataReader<Sensors::Reading> reader(subscriber, topic, reader_qos);

  // A WaitSet woken whenever the reader holds samples; take() empties it again.
  dds::sub::cond::ReadCondition has_data(reader, dds::sub::status::DataState::any());
  dds::core::cond::WaitSet waitset;
  waitset += has_data;

  std::cout << "[subscriber] waiting for " << opt.samples << " readings" << std::endl;
  Tally tally(opt.samples);
  while (!tally.complete()) {
    if (Clock::now() > deadline) {
      std::cerr << "[subscriber] timed out after " << opt.timeout.count() << " s with "
                << tally.count() << " of " << opt.samples << " readings" << std::endl;
      return EXIT_FAILURE;
    }
    try {
      waitset.wait(dds::core::Duration::from_millisecs(500));
    } catch (const dds::core::TimeoutError&) {
      continue;  // nothing yet; check the deadline and wait again
    }
    for (const auto& sample : reader.take()) {
      // A sample without valid data only reports an instance's new state (e.g. disposed).
      if (!sample.info().valid()) continue;
      const Sensors::Reading& r = sample.data();
      std::string problem;
      if (!tally.add(r, problem)) {
        std::cerr << "[subscriber] FAILED: " << problem << std::endl;
        return EXIT_FAILURE;
      }
      if (!opt.quiet) {
        std::cout << "[subscriber] sensor " << r.sensor_id() << " #" << r.serial() << ": "
                  << r.value() << " " << r.unit() << std::endl;
      }
    }
  }
  const std::uint64_t sensors = std::min<std::uint64_t>(opt.sensors, opt.samples);
  if (tally.sensors() != sensors) {
    std::cerr << "[subscriber] FAILED: readings of " << tally.sensors() << " sensors, expected "
              << sensors << std::endl;
    return EXIT_FAILURE;
  }
  std::cout << "[subscriber] received " << tally.count() << " of " << opt.samples
            << " readings from " << tally.sensors() << " sensors, in order" << std::endl;
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  example::Options opt;
  if (!example::parse_options(argc, argv, opt)) {
    std::cerr << "usage: sensor_subscriber " << example::kUsage << "\n";
    return 2;
  }
  return example::run_reporting("[subscriber]", [&] { return run(opt); });
}
