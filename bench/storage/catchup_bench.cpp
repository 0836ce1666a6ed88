// Late-joiner catch-up (issue 22's benchmark): a writer retains N samples (`volatile`:
// TRANSIENT_LOCAL, KEEP_ALL bounded at N), then a participant joins the domain through its
// join port and creates a reader that asks for history. Measured: from the joiner's
// creation to its reader holding all N samples (the state transfer over TCP, the history
// rebuilt, the reader's replay at its first view boundary), and, for comparison, a late
// reader in the writer's own participant (no transfer). One line per figure in the format
// of /work/shared/peers (peer=spindle-volatile, metric=catchup_ms and late_reader_ms).
//
//   catchup_bench [--samples 10000,1000000] [--size 64] [--transport tcp|shm]
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <dds/dds.hpp>

#include "local_domain.hpp"
#include "perf.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Sample = SpindlePerf::KeyedSeq;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

template <class Pred>
bool wait_until(Pred pred, std::chrono::seconds limit) {
  const auto until = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

void line(const std::string& transport, std::size_t size, std::uint64_t n,
          const std::string& metric, double value) {
  std::cout << "peer=spindle-volatile transport=" << transport << " size=" << size
            << " subs=1 metric=" << metric << "_" << n << " value=" << value << std::endl;
}

// Takes everything the reader holds; the number of valid samples.
std::uint64_t drain(dds::sub::DataReader<Sample>& r) {
  std::uint64_t n = 0;
  for (const auto& s : r.take())
    if (s.info().valid()) ++n;
  return n;
}

// Waits for `r`'s history and takes until it held all `n` samples; false (said on stderr,
// naming `who`) when they did not all come.
bool take_history(dds::sub::DataReader<Sample>& r, std::uint64_t n, const std::string& who) {
  r.wait_for_historical_data(dds::core::Duration::from_secs(120));
  std::uint64_t got = drain(r);
  if (wait_until([&] { return (got += drain(r)) >= n; }, std::chrono::seconds(60))) return true;
  std::cerr << "catchup_bench: " << who << " got " << got << " of " << n << '\n';
  return false;
}

int run(std::uint64_t n, std::size_t size, const std::string& transport) {
  const auto limit = static_cast<std::int32_t>(n);
  dds::pub::qos::DataWriterQos wq;
  wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(30))
     << dds::core::policy::Durability::TransientLocal() << dds::core::policy::History::KeepAll()
     << dds::core::policy::ResourceLimits(limit, 1, limit);
  dds::sub::qos::DataReaderQos rq;
  rq << dds::core::policy::Reliability::Reliable()
     << dds::core::policy::Durability::TransientLocal() << dds::core::policy::History::KeepAll()
     << dds::core::policy::ResourceLimits(limit, 1, limit);

  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Sample> topic(dp, "Catchup");
  dds::pub::DataWriter<Sample> w(dds::pub::Publisher(dp), topic, wq);
  Sample s;
  s.keyval(1);
  s.baggage().assign(size > 12 ? size - 12 : 0, 0x5a);
  for (std::uint64_t i = 0; i < n; ++i) {
    s.seq(static_cast<std::uint32_t>(i));
    w.write(s);
  }
  w.wait_for_acknowledgments(dds::core::Duration::from_secs(60));

  // A late reader of the writer's own participant: its history is local.
  {
    const auto t0 = Clock::now();
    dds::sub::DataReader<Sample> r(dds::sub::Subscriber(dp), topic, rq);
    if (!take_history(r, n, "the local late reader")) return 1;
    line(transport, size, n, "late_reader_ms", ms_since(t0));
  }
  // A participant that joins the domain, with a reader that asks for history.
  const auto t0 = Clock::now();
  dds::domain::DomainParticipant joiner(dds::domain::default_id());
  dds::topic::Topic<Sample> topic2(joiner, "Catchup");
  dds::sub::DataReader<Sample> r(dds::sub::Subscriber(joiner), topic2, rq);
  if (!take_history(r, n, "the joiner's reader")) return 1;
  line(transport, size, n, "catchup_ms", ms_since(t0));
  joiner.close();
  dp.close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint64_t> samples{10'000, 1'000'000};
  std::size_t size = 64;
  std::string transport = "tcp";
  CLI::App app{"Late-joiner catch-up time of retained history (volatile)"};
  app.add_option("--samples", samples, "Retained samples per run")
      ->delimiter(',')
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{10'000'000}))
      ->capture_default_str();
  app.add_option("--size", size, "Sample size in bytes, as ddsperf counts them")
      ->check(CLI::Range(std::size_t{12}, std::size_t{65536}))
      ->capture_default_str();
  app.add_option("--transport", transport, "Transport of the domain")
      ->check(CLI::IsMember({"tcp", "shm"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  int failures = 0;
  for (auto n : samples) {
    // A domain of its own per run: its join port, on loopback.
    const auto port = spindle::tools::free_loopback_port();
    const std::string config =
        "{version: 1, transport: " + transport + ", join_port: " + std::to_string(port) +
        ", shm: {namespace: catchup-" + std::to_string(::getpid()) + "-" + std::to_string(n) + "}}";
    ::setenv("SPINDLE_CONFIG", config.c_str(), 1);
    try {
      failures += run(n, size, transport);
    } catch (const std::exception& e) {
      std::cerr << "catchup_bench: " << n << " samples: " << e.what() << '\n';
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
