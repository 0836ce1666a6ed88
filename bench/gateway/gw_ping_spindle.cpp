// gw_ping_spindle: gw_ping.c's measurements in a Spindle domain (standard DCPS API,
// GatewayBench::Sample from Spindle's idlc), against gw_pong_spindle in the same domain: the
// Spindle leg of the gateway path on its own (docs/dev/interop-bench.md). Same commands on
// standard input and the same output lines as gw_ping:
//
//   gw_ping_spindle DOMAIN
//
//   lat SIZE N                 -> "lat size=S n=N p50_us=.. p90_us=.. p99_us=.. ..."
//   thr SIZE SECONDS WINDOW    -> "thr size=S samples=N seconds=T samples_per_s=.. MBps=.."
//   quit
//
// "ready" once a first echo came back, or "FAIL why" and exit 1; every wait is bounded.
// Reliable, KEEP_ALL both ways, the domain's default consistency.
//
// Threading: one application thread (a WaitSet); Spindle's own threads beside it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <dds/dds.hpp>

#include "GatewayBench.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using Sample = GatewayBench::Sample;

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

class Ping {
 public:
  explicit Ping(uint32_t domain)
      : dp_(domain),
        t_ping_(dp_, "GatewayBenchPing"),
        t_pong_(dp_, "GatewayBenchPong"),
        pub_(dp_),
        sub_(dp_),
        writer_(pub_, t_ping_, writer_qos()),
        reader_(sub_, t_pong_, reader_qos()),
        cond_(reader_, dds::sub::status::DataState::any()) {
    ws_ += cond_;
  }

  // Until a first echo came back (60 s at most).
  void warm_up() {
    Sample s;
    s.payload().assign(8, 0);
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (round_trip(s, std::chrono::milliseconds(200)) < 0)
      if (Clock::now() > deadline) fail("no echo within 60 s (is a pong there?)");
  }

  void latency(uint32_t size, uint32_t n) {
    Sample s;
    fill(s, size);
    for (uint32_t i = 0; i < n / 10; ++i)
      if (round_trip(s, std::chrono::seconds(5)) < 0)
        fail("lat: a warm-up echo did not come back in 5 s");
    std::vector<double> rtt;
    rtt.reserve(n);
    double sum = 0;
    for (uint32_t i = 0; i < n; ++i) {
      const double us = round_trip(s, std::chrono::seconds(5));
      if (us < 0) fail("lat: an echo did not come back in 5 s");
      rtt.push_back(us);
      sum += us;
    }
    std::sort(rtt.begin(), rtt.end());
    auto pct = [&](double q) { return rtt[static_cast<size_t>(q * static_cast<double>(n - 1))]; };
    std::printf(
        "lat size=%u n=%u p50_us=%.3f p90_us=%.3f p99_us=%.3f mean_us=%.3f min_us=%.3f "
        "max_us=%.3f\n",
        size, n, pct(0.5), pct(0.9), pct(0.99), sum / n, pct(0), pct(1));
    std::fflush(stdout);
  }

  void throughput(uint32_t size, double seconds, uint32_t window) {
    Sample s;
    fill(s, size);
    window = std::max<uint32_t>(window, 4);
    const uint32_t every = window / 4;
    if (round_trip(s, std::chrono::seconds(5)) < 0)
      fail("thr: the opening echo did not come back in 5 s");
    const uint64_t first = seq_ + 1;
    uint64_t acked = seq_;
    const auto t0 = Clock::now();
    const auto end =
        t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < end) {
      while (seq_ - acked >= window) {
        if (!wait_data(std::chrono::seconds(5))) fail("thr: no acknowledgement for 5 s");
        acked = std::max(acked, take_highest());
      }
      ++seq_;
      write(s, seq_, (seq_ - first + 1) % every == 0 ? 2 : 0);
      if ((seq_ & 15) == 0) acked = std::max(acked, take_highest());
    }
    ++seq_;
    write(s, seq_, 2);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (acked < seq_) {
      if (Clock::now() > deadline) fail("thr: the last acknowledgement did not come in 10 s");
      wait_data(std::chrono::milliseconds(100));
      acked = std::max(acked, take_highest());
    }
    const double t = std::chrono::duration<double>(Clock::now() - t0).count();
    const uint64_t n = seq_ - first + 1;
    std::printf("thr size=%u samples=%llu seconds=%.3f samples_per_s=%.1f MBps=%.3f\n", size,
                static_cast<unsigned long long>(n), t, static_cast<double>(n) / t,
                static_cast<double>(n) * size / t / 1e6);
    std::fflush(stdout);
  }

 private:
  dds::pub::qos::DataWriterQos writer_qos() {
    auto q = pub_.default_datawriter_qos();
    q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
      << dds::core::policy::History::KeepAll();
    return q;
  }
  dds::sub::qos::DataReaderQos reader_qos() {
    auto q = sub_.default_datareader_qos();
    q << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
    return q;
  }

  static void fill(Sample& s, uint32_t size) {
    s.payload().resize(size);
    for (uint32_t i = 0; i < size; ++i)
      s.payload()[i] = static_cast<uint8_t>(i);
  }

  void write(Sample& s, uint64_t seq, uint32_t reply) {
    s.seq(seq);
    s.reply(reply);
    writer_.write(s);
  }

  // Takes what is there; the highest seq among the pong's samples, or 0.
  uint64_t take_highest() {
    uint64_t high = 0;
    for (;;) {
      auto samples = reader_.select().max_samples(256).take();
      for (const auto& in : samples)
        if (in.info().valid()) high = std::max<uint64_t>(high, in.data().seq());
      if (samples.length() < 256) return high;
    }
  }

  bool wait_data(Clock::duration limit) {
    try {
      ws_.wait(dds::core::Duration::from_microsecs(static_cast<uint64_t>(std::max<int64_t>(
          1, std::chrono::duration_cast<std::chrono::microseconds>(limit).count()))));
      return true;
    } catch (const dds::core::TimeoutError&) {
      return false;
    }
  }

  // Writes the next seq for an echo; the round trip in microseconds, or -1 after `limit`.
  double round_trip(Sample& s, Clock::duration limit) {
    const uint64_t seq = ++seq_;
    const auto t0 = Clock::now();
    write(s, seq, 1);
    for (;;) {
      if (take_highest() >= seq)
        return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      const auto left = t0 + limit - Clock::now();
      if (left <= Clock::duration::zero()) return -1;
      wait_data(left);
    }
  }

  dds::domain::DomainParticipant dp_;
  dds::topic::Topic<Sample> t_ping_, t_pong_;
  dds::pub::Publisher pub_;
  dds::sub::Subscriber sub_;
  dds::pub::DataWriter<Sample> writer_;
  dds::sub::DataReader<Sample> reader_;
  dds::sub::cond::ReadCondition cond_;
  dds::core::cond::WaitSet ws_;
  uint64_t seq_ = 0;  // the last written: echoes of earlier ones are stale
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr,
                 "usage: gw_ping_spindle DOMAIN (commands on stdin: lat SIZE N, thr SIZE "
                 "SECONDS WINDOW, quit)\n");
    return 2;
  }
  try {
    Ping ping(static_cast<uint32_t>(std::atoi(argv[1])));
    ping.warm_up();
    std::cout << "ready" << std::endl;
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream is(line);
      std::string cmd;
      is >> cmd;
      uint32_t size = 0, n = 0, window = 0;
      double seconds = 0;
      if (cmd == "lat" && (is >> size >> n) && n > 0) {
        ping.latency(size, n);
      } else if (cmd == "thr" && (is >> size >> seconds >> window) && seconds > 0) {
        ping.throughput(size, seconds, window);
      } else if (cmd == "quit") {
        break;
      } else {
        fail("unknown command: " + line);
      }
    }
  } catch (const std::exception& e) {
    fail(std::string("gw_ping_spindle: ") + e.what());
  }
  return 0;
}
