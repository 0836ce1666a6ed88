// One participant process of the multi-process membership tests (group_processes_test.cpp)
// and of the view-change benchmark: it joins the domain of --config as --node (it sets
// SPINDLE_CONFIG and SPINDLE_NODE_ID, as an operator would), reads topic "Stream" and, with
// --writer, writes --samples samples to it every --interval-us, logging each sample it takes
// ("<writer> <seq>", writer = the writing node's id) and each change of its writer's matched
// readers ("# matched <count> <steady ns>": a view change removed or added members).
//
// Protocol with the parent, one line each, every wait bounded by --timeout-ms:
//   child  -> "ready <ms>"         matched every member (and every writer), <ms> after the
//                                  participant's construction began (joining included)
//   child  -> "view <count> <ns>"  its writer's matched readers changed (a view change),
//                                  at steady-clock time <ns>
//   parent -> "go"                 start writing
//   parent -> "expect W1 W2 ..."   the writers whose samples must all arrive (the live ones;
//                                  none: a late joiner, done at once)
//   child  -> "done N"             wrote everything, took every expected sample (N taken)
//   parent -> "exit"               close the participant and exit 0
//   parent -> "leave"              the same, at once (a clean leave mid-stream)
// A write that fails prints "halted <why>" and exits 3; anything else wrong prints
// "FAIL <why>" and exits 1.
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>
#include <dds/dds.hpp>

#include "avionics.hpp"

using Clock = std::chrono::steady_clock;
using FlightState = Avionics::FlightState;

namespace {

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

// A line from stdin if one is complete within `wait`; "" otherwise; "EOF" at end of input.
std::string poll_line(std::string& buffer, std::chrono::milliseconds wait) {
  for (;;) {
    if (auto nl = buffer.find('\n'); nl != std::string::npos) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return line;
    }
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) <= 0) return "";
    char chunk[256];
    const auto n = ::read(0, chunk, sizeof chunk);
    if (n <= 0) return "EOF";
    buffer.append(chunk, static_cast<std::size_t>(n));
    wait = std::chrono::milliseconds(0);
  }
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"one member of the membership tests"};
  std::string log_path;
  bool writer_on = false;
  std::uint64_t samples = 1000;
  std::uint32_t members = 3, writers = 3, interval_us = 200;
  std::uint64_t timeout_ms = 60'000;
  std::string config;
  std::uint32_t self = 0;
  app.add_option("--config", config, "domain file")->required();
  app.add_option("--node", self, "this member's id (0: none; the runtime picks one)");
  std::uint32_t tag = 0;
  app.add_option("--tag", tag, "the writer id in the samples (default: --node)");
  app.add_option("--log", log_path, "delivery log file")->required();
  app.add_flag("--writer", writer_on, "write samples");
  app.add_option("--samples", samples, "samples to write")->check(CLI::Range(1, 10'000'000));
  app.add_option("--members", members, "members of the domain")->check(CLI::Range(1, 64));
  app.add_option("--writers", writers, "members that write")->check(CLI::Range(0, 64));
  app.add_option("--interval-us", interval_us, "pause between writes")
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--timeout-ms", timeout_ms, "bound on every wait")->check(CLI::Range(1, 600'000));
  CLI11_PARSE(app, argc, argv);
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  ::setenv("SPINDLE_CONFIG", config.c_str(), 1);
  if (self != 0) ::setenv("SPINDLE_NODE_ID", std::to_string(self).c_str(), 1);
  if (tag == 0) tag = self;

  std::ofstream log(log_path);
  std::map<std::uint32_t, std::uint64_t> taken_from;
  std::uint64_t taken = 0;
  int last_matched = -1;
  try {
    const auto constructed = Clock::now();
    dds::domain::DomainParticipant dp(dds::domain::default_id());
    dds::topic::Topic<FlightState> topic(dp, "Stream");
    dds::sub::qos::DataReaderQos rq;
    rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    dds::sub::DataReader<FlightState> reader(dds::sub::Subscriber(dp), topic, rq);
    dds::pub::DataWriter<FlightState> writer = dds::core::null;
    if (writer_on) {
      dds::pub::qos::DataWriterQos wq;
      wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
         << dds::core::policy::History::KeepAll();
      writer = dds::pub::DataWriter<FlightState>(dds::pub::Publisher(dp), topic, wq);
    }
    auto take = [&] {
      for (const auto& s : reader.take()) {
        if (!s.info().valid()) continue;
        const auto w = static_cast<std::uint32_t>(std::stoul(s.data().callsign()));
        log << w << ' ' << s.data().timestamp_ns() << '\n';
        ++taken_from[w];
        ++taken;
      }
      if (writer_on) {
        const int m = writer.publication_matched_status().current_count();
        if (m != last_matched) {
          if (last_matched >= 0) {
            const auto now = steady_ns();
            log << "# matched " << m << ' ' << now << '\n';
            std::cout << "view " << m << ' ' << now << std::endl;
          }
          last_matched = m;
        }
      }
    };
    // Ready: our writer reaches every member's reader, our reader every writer.
    while ((writer_on &&
            writer.publication_matched_status().current_count() < static_cast<int>(members)) ||
           reader.subscription_matched_status().current_count() < static_cast<int>(writers)) {
      if (Clock::now() > deadline) fail("not matched in time");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    take();
    const std::chrono::duration<double, std::milli> join_time = Clock::now() - constructed;
    std::cout << "ready " << join_time.count() << std::endl;
    std::string buffer;
    std::string line;
    while ((line = poll_line(buffer, std::chrono::milliseconds(200))) != "go") {
      if (line == "EOF" || Clock::now() > deadline) fail("no go");
    }
    std::uint64_t next = 0;
    std::set<std::uint32_t> expect;
    bool expecting = false, done = false;
    auto next_write = Clock::now();
    for (;;) {
      if (Clock::now() > deadline)
        fail("timed out: wrote " + std::to_string(next) + ", took " + std::to_string(taken));
      if (writer_on && next < samples && Clock::now() >= next_write) {
        FlightState s;
        s.aircraft_id(1);
        s.timestamp_ns(next++);
        s.callsign(std::to_string(tag));
        try {
          writer.write(s);
        } catch (const dds::core::Exception& e) {
          log.flush();
          std::cout << "halted " << e.what() << std::endl;
          return 3;
        }
        next_write = Clock::now() + std::chrono::microseconds(interval_us);
      }
      take();
      line = poll_line(buffer, std::chrono::milliseconds(next < samples && writer_on ? 0 : 2));
      if (line == "EOF") fail("parent went away");
      if (line == "leave") break;
      if (line == "exit") break;
      if (line.rfind("expect", 0) == 0) {
        std::istringstream in(line.substr(6));
        std::uint32_t w = 0;
        while (in >> w)
          expect.insert(w);
        expecting = true;
      }
      if (expecting && !done && (!writer_on || next == samples)) {
        bool all = true;
        for (auto w : expect)
          all = all && taken_from[w] == samples;
        if (all) {
          done = true;
          log.flush();
          std::cout << "done " << taken << std::endl;
        }
      }
    }
    log.flush();
    dp.close();
  } catch (const dds::core::Exception& e) {
    fail(e.what());
  }
  return 0;
}
