// spindle-perf: Spindle DDS measured through the DCPS API the way /work/shared/peers
// measures Cyclone DDS (ddsperf) and Fast DDS, printing the same lines:
//
//   peer=spindle transport=<tcp|shm|auto> size=<bytes> subs=<n> metric=<m> value=<x>
//
//   lat: two processes; `ping` writes a sample, `pong` writes it back, ping measures the
//        round trip (latency_us_p50, latency_us_p99). KEEP_LAST 1, reliable. Back to back,
//        or --rate round trips a second; the CPU each process used over the run (cpu_pct_ping,
//        cpu_pct_pong: 100 is one core), to weigh engine.idle_spin (--idle-spin) against.
//   thr: one publisher streams for --duration seconds to `subs` subscriber processes;
//        each counts what it received (throughput_msgs_s, throughput_MBps per subscriber,
//        averaged). KEEP_ALL, reliable.
//   churn: thr with one subscriber, measured twice in one run: --duration seconds steady
//        (throughput_msgs_s), then --duration seconds while another process joins the
//        domain with a reader of the topic and leaves again every second, each a view
//        change of the topic's subgroup (churn_throughput_ratio: churn / steady). The
//        joiner's create_participant, averaged over its joins (join_ms).
// Sizes are whole samples as ddsperf counts them: a 12-byte header and size-12 octets.
// The engine gets slots sized for the sample (domain file `engine.slot_size`, 1 KiB at least
// as by default, 1 MiB at most), or --slot-size for every run; samples larger than a slot go
// by RDMC, small ones share a slot when the writer outpaces the protocol.
//
//   spindle-perf [--transport tcp|shm|auto] [--sizes 64,1024,10240,102400,1048576]
//                [--subs 1,3] [--tests lat,thr,churn] [--duration S] [--warmup S]
//                [--consistency atomic|unordered]   (peer=spindle or peer=spindle-unordered)
//                [--slot-size N] [--rdmc-block-size N] [--idle-spin US] [--rate HZ]
//                [--clients]   (the readers are external clients of the first member)
//                [--loan]   (lat, thr: fixed-size samples loaned on both sides: peer=spindle-loan)
//                [--members N]   (lat: N members in the domain, ping, pong and N-2 idle)
//                [--security DIR]   (a secured domain: peer=spindle-secure; see below)
//                [--plot FILE.png [--peers FILE]]   (gnuplot: plot.hpp)
//   spindle-perf --role ping|pong|pub|sub|churn|idle ...   (internal: one process of a run)
//
// Every process of a run finds the run's domain file through SPINDLE_CONFIG and its id
// through SPINDLE_NODE_ID. Every wait is bounded.
//
// --security DIR secures every run (docs/security.md): DIR holds the domain's CA (ca.pem) and
// one certificate for every process of the run, member.pem with its key member.key, whose
// subject is CN=spindle-perf (bench/security/security_cost.sh makes them). The run's
// permissions grant that subject every topic.
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <dds/dds.hpp>

#include "local_domain.hpp"
#include "perf.hpp"
#include "plot.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using Sample = SpindlePerf::KeyedSeq;
constexpr std::size_t kHeader = 12;
constexpr std::size_t kMaxSize = std::size_t{64} << 20;  // largest sample --sizes accepts

struct Options {
  std::string transport = "tcp";
  std::string plot;   // --plot FILE.png
  std::string peers;  // --peers FILE
  std::vector<std::size_t> sizes{64, 1024, 10240, 102400, 1048576};
  std::vector<std::uint32_t> subs{1, 3};
  std::vector<std::string> tests{"lat", "thr"};
  double duration = 2.0;
  double warmup = 1.0;
  std::string consistency = "atomic";   // unordered, atomic, volatile, logged
  std::string fsync = "every";          // logged: every (sample), periodic (10 ms), never
  std::string log_dir = "/var/tmp";     // logged: where each run's logs go (and are removed)
  std::size_t slot_size = 0;            // engine.slot_size; 0: each run's sample (1 KiB to 1 MiB)
  std::size_t rdmc_block = 0;           // engine.rdmc_block_size; 0: the default
  std::int64_t lag_bound_ms = -1;       // engine.lag_bound in milliseconds; -1: the default
  std::int64_t idle_spin_us = -1;       // engine.idle_spin in microseconds; -1: the default
  double rate = 0;                      // lat: round trips a second; 0: back to back
  double pause = 0.8;                   // pause: seconds the sleeping reader is stopped
  std::string sleeper = "best_effort";  // pause: the sleeping reader's reliability
  std::string role;
  std::size_t size = 64;
  bool churn = false;         // pub/sub: a churn run (two measured phases)
  bool keep_last = false;     // thr: subscribers' readers KEEP_LAST (they may be left behind)
  bool loan = false;          // lat, thr: fixed-size samples, loaned on both sides
  bool clients = false;       // sub, pong, sleeper: external clients of the first member
  std::string join_config;    // churn: the domain file of a participant that joins later
  std::string security;       // --security DIR; empty: unsecured
  std::uint32_t members = 2;  // lat: members of the domain (ping, pong and the rest idle)
  std::string idle_until;     // idle: it exits once this file exists (the run is over)
  std::string trace;          // lat: a folder for every round trip's time (--trace)
};

// The subject of --security's certificate.
constexpr const char* kPerfSubject = "CN=spindle-perf";

const Options* g_options = nullptr;  // the process's options, for the QoS helpers

spindle::policy::Consistency consistency() {
  using C = spindle::policy::Consistency;
  const auto& c = g_options->consistency;
  if (c == "unordered") return C::Unordered();
  if (c == "volatile") return C::Volatile();
  if (c == "logged") {
    if (g_options->fsync == "periodic")
      return C::LoggedPeriodicFsync(dds::core::Duration::from_millisecs(10));
    return g_options->fsync == "never" ? C::LoggedNoFsync() : C::Logged();
  }
  return C::Atomic();
}

[[noreturn]] void die(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

template <class Pred>
bool wait_until(Pred pred, Clock::duration limit) {
  const auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

Sample make_sample(std::size_t size) {
  Sample s;
  s.keyval(0);
  s.baggage().assign(size > kHeader ? size - kHeader : 0, 0x5a);
  return s;
}

// ------------------------------------------------------------------------ run processes
dds::sub::qos::DataReaderQos reader_qos(const dds::sub::Subscriber& sub, bool keep_all) {
  auto q = sub.default_datareader_qos();
  q << dds::core::policy::Reliability::Reliable() << consistency();
  if (keep_all) {
    // Unbounded, but for a volatile reader (the QoS checks ask a bound of what a retaining
    // level keeps): large enough for what a run delivers between takes.
    const std::int32_t per_instance =
        g_options->consistency == "volatile" ? 1 << 24 : dds::core::LENGTH_UNLIMITED;
    q << dds::core::policy::History::KeepAll()
      << dds::core::policy::ResourceLimits(dds::core::LENGTH_UNLIMITED, dds::core::LENGTH_UNLIMITED,
                                           per_instance);
  } else {
    q << dds::core::policy::History::KeepLast(1);
  }
  return q;
}

dds::pub::qos::DataWriterQos writer_qos(const dds::pub::Publisher& pub, bool keep_all) {
  auto q = pub.default_datawriter_qos();
  q << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(10))
    << consistency();
  if (keep_all) {
    q << dds::core::policy::History::KeepAll();
    // A volatile writer's history is retained in memory: bounded, as the QoS checks ask.
    if (g_options->consistency == "volatile")
      q << dds::core::policy::ResourceLimits(dds::core::LENGTH_UNLIMITED,
                                             dds::core::LENGTH_UNLIMITED, 100);
  } else {
    q << dds::core::policy::History::KeepLast(1);
  }
  return q;
}

// CPU seconds this process used so far, all threads.
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// --loan: the samples of the measured topic are of a fixed size (SpindlePerf::Fixed<size>,
// the same 8-byte header and size - 8 octets), built in the writer's slot (loan_sample) and
// read where they lie by the reader (docs/dcps.md, "Loans"). Without it, KeyedSeq.
template <class S>
constexpr bool kLoaned = spindle::detail::is_self_contained<S>;

// Sends sample number `seq`: a loan filled in place, or `plain` with its number.
template <class S>
void send(dds::pub::DataWriter<S>& w, S* plain, std::uint32_t seq) {
  if constexpr (kLoaned<S>) {
    (void)plain;
    S& x = w.loan_sample();
    x.seq(seq);
    w.write(x);
  } else {
    plain->seq(seq);
    w.write(*plain);
  }
}

template <class S>
void echo(dds::pub::DataWriter<S>& w, const S& in) {
  if constexpr (kLoaned<S>) {
    S& x = w.loan_sample();
    x = in;
    w.write(x);
  } else {
    w.write(in);
  }
}

template <class S>
std::unique_ptr<S> plain_sample(std::size_t size) {
  if constexpr (kLoaned<S>) {
    (void)size;
    return nullptr;
  } else {
    return std::make_unique<S>(make_sample(size));
  }
}

// Calls f.template operator()<S>() with the run's sample type (--loan: by --size).
template <class F>
int with_sample_type(const Options& o, F&& f) {
  if (!o.loan) return f.template operator()<Sample>();
  switch (o.size) {
    case 64:
      return f.template operator()<SpindlePerf::Fixed64>();
    case 1024:
      return f.template operator()<SpindlePerf::Fixed1024>();
    case 10240:
      return f.template operator()<SpindlePerf::Fixed10240>();
    case 102400:
      return f.template operator()<SpindlePerf::Fixed102400>();
    case 1048576:
      return f.template operator()<SpindlePerf::Fixed1048576>();
    default:
      die("--loan: no fixed-size sample of " + std::to_string(o.size) + " bytes");
  }
}

// ping (node 0) / pong (node 1): round trips on topics "ping" and "pong".
template <class S>
int latency_role_of(const Options& o) {
  const bool ping = o.role == "ping";
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<S> t_ping(dp, "perf_ping"), t_pong(dp, "perf_pong");
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);
  dds::pub::DataWriter<S> w(pub, ping ? t_ping : t_pong, writer_qos(pub, false));
  dds::sub::DataReader<S> r(sub, ping ? t_pong : t_ping, reader_qos(sub, false));
  if (!wait_until([&] { return w.publication_matched_status().current_count() >= 1; }, 30s)) {
    die("no peer matched");
  }
  dds::core::cond::WaitSet ws;
  dds::sub::cond::ReadCondition rc(r, dds::sub::status::DataState::any());
  ws += rc;
  const auto s = plain_sample<S>(o.size);
  if (!ping) {
    // Echo until a sample with seq 0xffffffff says stop (or nothing comes for 30 s).
    auto last = Clock::now();
    const auto wall0 = Clock::now();
    const double cpu0 = cpu_seconds();
    for (;;) {
      try {
        ws.wait(dds::core::Duration::from_millisecs(200));
      } catch (const dds::core::TimeoutError&) {
        if (Clock::now() - last > 30s) die("pong: ping went silent");
        continue;
      }
      for (const auto& in : r.take()) {
        if (!in.info().valid()) continue;
        last = Clock::now();
        if (in.data().seq() == 0xffffffffu) {
          const double wall = std::chrono::duration<double>(Clock::now() - wall0).count();
          std::cout << "RESULT pong_cpu=" << 100.0 * (cpu_seconds() - cpu0) / wall << std::endl;
          std::this_thread::sleep_for(100ms);
          return 0;
        }
        echo(w, in.data());
      }
    }
  }
  std::vector<double> rtt;
  std::vector<Clock::time_point> starts;  // --trace
  const auto warm_end = Clock::now() + std::chrono::duration<double>(o.warmup);
  const auto end = warm_end + std::chrono::duration<double>(o.duration);
  std::uint32_t seq = 0;
  const auto wall0 = Clock::now();
  const double cpu0 = cpu_seconds();
  const auto period =
      o.rate > 0
          ? std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / o.rate))
          : Clock::duration::zero();
  auto next = wall0;
  while (Clock::now() < end) {
    if (o.rate > 0) {
      next += period;
      std::this_thread::sleep_until(next);
    }
    ++seq;
    const auto t0 = Clock::now();
    send(w, s.get(), seq);
    bool got = false;
    while (!got) {
      try {
        ws.wait(dds::core::Duration::from_secs(5));
      } catch (const dds::core::TimeoutError&) {
        die("ping: no echo of " + std::to_string(seq) + " within 5 s");
      }
      for (const auto& in : r.take())
        got = got || (in.info().valid() && in.data().seq() == seq);
    }
    if (t0 >= warm_end) {
      rtt.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      if (!o.trace.empty()) starts.push_back(t0);
    }
  }
  const double cpu =
      100.0 * (cpu_seconds() - cpu0) / std::chrono::duration<double>(Clock::now() - wall0).count();
  send(w, s.get(), 0xffffffffu);
  if (!o.trace.empty()) {
    // Every measured round trip in order: when it started (seconds since the first) and
    // how long it took, to see when the slow ones come (periodic work, a neighbour).
    std::ofstream out(std::filesystem::path(o.trace) /
                      ("rtt-" + o.transport + "-" + std::to_string(o.size) + ".txt"));
    out << "# start_s rtt_us\n";
    for (std::size_t i = 0; i < rtt.size(); ++i)
      out << std::chrono::duration<double>(starts[i] - starts.front()).count() << ' ' << rtt[i]
          << '\n';
  }
  std::sort(rtt.begin(), rtt.end());
  auto pct = [&](double q) {
    return rtt.empty() ? -1.0
                       : rtt[static_cast<std::size_t>(q * static_cast<double>(rtt.size() - 1))];
  };
  std::cout << "RESULT p50=" << pct(0.5) << " p99=" << pct(0.99) << " n=" << rtt.size()
            << " ping_cpu=" << cpu << std::endl;
  std::this_thread::sleep_for(200ms);
  return 0;
}

// pub (node 0) streams to sub (nodes 1..n).
// idle: a member of the domain with no endpoint, present while ping and pong measure how a
// domain's size weighs on a round trip (--members); it leaves once `idle_until` exists.
int idle_role(const Options& o) {
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  const auto give_up = Clock::now() + std::chrono::duration<double>(o.warmup + o.duration) + 120s;
  while (!std::filesystem::exists(o.idle_until)) {
    if (Clock::now() > give_up) die("idle: the run did not end");
    std::this_thread::sleep_for(50ms);
  }
  std::cout << "RESULT role=idle" << std::endl;
  return 0;
}

int latency_role(const Options& o) {
  return with_sample_type(o, [&]<class S>() { return latency_role_of<S>(o); });
}

template <class S>
int throughput_role_of(const Options& o, std::uint32_t subs) {
  const bool pub_role = o.role == "pub";
  const auto began = Clock::now();
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<S> topic(dp, "perf_thr");
  dds::topic::Topic<Sample> done_topic(dp, "perf_thr_done");
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);
  if (pub_role) {
    dds::pub::DataWriter<S> w(pub, topic, writer_qos(pub, true));
    dds::sub::DataReader<Sample> done(sub, done_topic, reader_qos(sub, true));
    if (!wait_until(
            [&] {
              return w.publication_matched_status().current_count() >=
                     static_cast<std::int32_t>(subs);
            },
            30s)) {
      die("pub: subscribers did not match");
    }
    // From this process's start to every subscriber matched: the domain formed (its listed
    // members started together) and the topic laid out.
    std::cout << "RESULT role=pub matched_ms="
              << std::chrono::duration<double, std::milli>(Clock::now() - began).count()
              << std::endl;
    const auto s = plain_sample<S>(o.size);
    const double measured = o.churn ? 2 * o.duration : o.duration;  // churn: two phases
    const auto end = Clock::now() + std::chrono::duration<double>(o.warmup + measured);
    std::uint32_t seq = 0;
    while (Clock::now() < end)
      send(w, s.get(), ++seq);
    send(w, s.get(), 0xffffffffu);
    // Stay until every subscriber says it is done.
    std::uint32_t finished = 0;
    if (!wait_until(
            [&] {
              finished += done.take().length();
              return finished >= subs;
            },
            60s)) {
      die("pub: subscribers did not finish");
    }
    std::this_thread::sleep_for(100ms);
    return 0;
  }
  auto rq = reader_qos(sub, !o.keep_last);
  if (o.keep_last) rq << dds::core::policy::History::KeepLast(1 << 20);  // deep: keeps what comes
  dds::sub::DataReader<S> r(sub, topic, rq);
  dds::pub::DataWriter<Sample> done(pub, done_topic, writer_qos(pub, true));
  // Churn: the steady phase ends after --duration; then the churner is told to begin.
  dds::topic::Topic<Sample> go_topic(dp, "perf_churn_go");
  dds::pub::DataWriter<Sample> go(pub, go_topic, writer_qos(pub, true));
  dds::core::cond::WaitSet ws;
  dds::sub::cond::ReadCondition rc(r, dds::sub::status::DataState::any());
  ws += rc;
  std::uint64_t count = 0, churn_count = 0;
  Clock::time_point start{}, churn_start{};
  bool measuring = false, churning = false, stop = false;
  const auto warm = std::chrono::duration<double>(o.warmup);
  const auto steady = std::chrono::duration<double>(o.duration);
  Clock::time_point first{};
  auto last = Clock::now();
  while (!stop) {
    try {
      ws.wait(dds::core::Duration::from_millisecs(200));
    } catch (const dds::core::TimeoutError&) {
      if (Clock::now() - last > 30s) die("sub: the publisher went silent");
      continue;
    }
    const auto now = Clock::now();
    last = now;
    for (const auto& in : r.take()) {
      if (!in.info().valid()) continue;
      if (in.data().seq() == 0xffffffffu) {
        stop = true;
        break;
      }
      if (first == Clock::time_point{}) first = now;
      if (!measuring && now - first >= warm) {
        measuring = true;
        start = now;
      }
      if (o.churn && measuring && !churning && now - start >= steady) {
        churning = true;
        churn_start = now;
        go.write(make_sample(kHeader));
      }
      if (churning) {
        ++churn_count;
      } else if (measuring) {
        ++count;
      }
    }
  }
  const double secs =
      measuring ? std::chrono::duration<double>((churning ? churn_start : last) - start).count()
                : 0;
  std::cout << "RESULT msgs_s=" << (secs > 0 ? static_cast<double>(count) / secs : 0.0)
            << " n=" << count;
  if (o.churn) {
    const double churn_secs =
        churning ? std::chrono::duration<double>(last - churn_start).count() : 0;
    std::cout << " churn_msgs_s="
              << (churn_secs > 0 ? static_cast<double>(churn_count) / churn_secs : 0.0);
  }
  std::cout << " sample_lost=" << r.sample_lost_status().total_count() << std::endl;
  done.write(make_sample(kHeader));
  std::this_thread::sleep_for(200ms);
  return 0;
}

int throughput_role(const Options& o, std::uint32_t subs) {
  return with_sample_type(o, [&]<class S>() { return throughput_role_of<S>(o, subs); });
}

// The churner: joins once to wait for the subscriber's go, then for --duration seconds
// joins with a reader of the streamed topic and leaves again, once a second.
int churn_role(const Options& o) {
  ::setenv("SPINDLE_CONFIG", o.join_config.c_str(), 1);
  ::unsetenv("SPINDLE_NODE_ID");  // each incarnation is a new member with an id of its own
  {
    dds::domain::DomainParticipant dp(dds::domain::default_id());
    dds::topic::Topic<Sample> go_topic(dp, "perf_churn_go");
    dds::sub::Subscriber sub(dp);
    dds::sub::DataReader<Sample> go(sub, go_topic, reader_qos(sub, true));
    if (!wait_until([&] { return go.take().length() > 0; }, 120s)) die("churn: no go");
  }
  const auto end = Clock::now() + std::chrono::duration<double>(o.duration);
  int cycles = 0;
  Clock::duration joining{};  // create_participant, each a join through the join port
  while (Clock::now() < end) {
    const auto cycle = Clock::now();
    {
      dds::domain::DomainParticipant dp(dds::domain::default_id());
      joining += Clock::now() - cycle;
      dds::topic::Topic<Sample> topic(dp, "perf_thr");
      dds::sub::Subscriber sub(dp);
      dds::sub::DataReader<Sample> r(sub, topic, reader_qos(sub, false));
      std::this_thread::sleep_until(cycle + 500ms);
      (void)r.take();
    }
    ++cycles;
    std::this_thread::sleep_until(cycle + 1s);
  }
  std::cout << "RESULT cycles=" << cycles << " join_ms="
            << (cycles > 0 ? std::chrono::duration<double, std::milli>(joining).count() / cycles
                           : 0.0)
            << std::endl;
  return 0;
}

// pause: a writer at 1,000 samples/s (RELIABLE, max_blocking_time 100 ms, KEEP_LAST 1), a
// RELIABLE KEEP_LAST 1 reader that takes each sample as it comes, and a KEEP_LAST 1 reader
// (BEST_EFFORT, or RELIABLE with --sleeper reliable) whose whole process is stopped
// (SIGSTOP, as a debugger or a frozen display would) for --pause seconds once --warmup has
// passed (issue 34). Each process runs for warmup + duration seconds from the first sample
// and reports what it saw.
constexpr auto kPacePeriod = 1ms;
constexpr auto kPaceBlocking = 100ms;

int pacer_role(const Options& o) {
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Sample> topic(dp, "perf_pause");
  dds::pub::Publisher pub(dp);
  auto q = pub.default_datawriter_qos();
  q << dds::core::policy::Reliability::Reliable(
           dds::core::Duration::from_millisecs(kPaceBlocking.count()))
    << dds::core::policy::History::KeepLast(1) << consistency();
  dds::pub::DataWriter<Sample> w(pub, topic, q);
  if (!wait_until([&] { return w.publication_matched_status().current_count() >= 2; }, 30s))
    die("pacer: the readers did not match");
  Sample s = make_sample(o.size);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(o.warmup + o.duration);
  std::uint32_t seq = 0;
  std::uint64_t timeouts = 0, written = 0;
  auto next = start;
  while (Clock::now() < end) {
    s.seq(++seq);
    try {
      w.write(s);
      ++written;
    } catch (const dds::core::TimeoutError&) {
      ++timeouts;
    }
    next += kPacePeriod;
    std::this_thread::sleep_until(next);
  }
  std::cout << "RESULT role=pacer written=" << written << " timeouts=" << timeouts << std::endl;
  std::this_thread::sleep_for(300ms);  // the readers' last samples
  return 0;
}

int pause_reader_role(const Options& o) {
  const bool sleeper = o.role == "sleeper";
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::topic::Topic<Sample> topic(dp, "perf_pause");
  dds::sub::Subscriber sub(dp);
  auto q = sub.default_datareader_qos();
  if (sleeper && o.sleeper == "best_effort") {
    q << dds::core::policy::Reliability::BestEffort();
  } else {
    q << dds::core::policy::Reliability::Reliable();
  }
  q << dds::core::policy::History::KeepLast(1) << consistency();
  dds::sub::DataReader<Sample> r(sub, topic, q);
  dds::core::cond::WaitSet ws;
  dds::sub::cond::ReadCondition rc(r, dds::sub::status::DataState::any());
  ws += rc;
  dds::core::cond::WaitSet::ConditionSeq triggered;
  const auto warm = std::chrono::duration<double>(o.warmup);
  const auto length = std::chrono::duration<double>(o.warmup + o.duration);
  Clock::time_point first{};
  Clock::time_point last{};
  Clock::duration longest{0};
  std::uint64_t taken = 0, lost = 0;
  std::uint32_t last_seq = 0;
  bool paused = false;
  const auto give_up = Clock::now() + 60s;
  for (;;) {
    const auto now = Clock::now();
    if (first != Clock::time_point{} && now - first >= length) break;
    if (now > give_up) die(o.role + ": no samples");
    if (sleeper && !paused && first != Clock::time_point{} && now - first >= warm) {
      paused = true;
      // A child wakes us after the pause; the whole process (every thread) stops meanwhile.
      const pid_t self = ::getpid();
      const auto pause_ns = static_cast<long>(o.pause * 1e9);
      const pid_t child = ::fork();
      if (child < 0) die("sleeper: fork failed");
      if (child == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // it dies with its parent, killed or not
        timespec ts{pause_ns / 1'000'000'000L, pause_ns % 1'000'000'000L};
        while (::nanosleep(&ts, &ts) != 0) {
        }
        ::kill(self, SIGCONT);
        ::_exit(0);
      }
      ::raise(SIGSTOP);
      ::waitpid(child, nullptr, 0);
      last = Clock::now();  // the pause is not a gap this reader measures
    }
    try {
      ws.wait(triggered, dds::core::Duration::from_millisecs(50));
    } catch (const dds::core::TimeoutError&) {
      continue;
    }
    const auto at = Clock::now();
    for (const auto& in : r.take()) {
      if (!in.info().valid()) continue;
      const auto seq = in.data().seq();
      if (first == Clock::time_point{}) first = at;
      if (at - first >= warm) {
        if (last != Clock::time_point{}) longest = std::max(longest, at - last);
        if (last_seq != 0 && seq > last_seq + 1) lost += seq - last_seq - 1;
        ++taken;
      }
      last = at;
      last_seq = seq;
    }
  }
  std::cout << "RESULT role=" << o.role << " taken=" << taken << " lost=" << lost
            << " longest_gap_ms=" << std::chrono::duration<double, std::milli>(longest).count()
            << " sample_lost=" << r.sample_lost_status().total_count() << std::endl;
  return 0;
}

// -------------------------------------------------------------------------- coordinator
double value_of(const std::string& line, const std::string& key) {
  const auto at = line.find(key + "=");
  return at == std::string::npos ? -1 : std::stod(line.substr(at + key.size() + 1));
}

// Starts `roles.size()` processes (node i plays roles[i]) and returns their RESULT lines.
// A "churn" role is no listed member: it joins through the join port.
// engine.slot_size when a domain file names none (config/domain_config.hpp).
constexpr std::size_t kDefaultSlot = 1024;

std::vector<std::string> run(const Options& o, const std::vector<std::string>& roles,
                             std::size_t size, std::uint32_t subs) {
  namespace fs = std::filesystem;
  static int serial = 0;
  const auto file = fs::temp_directory_path() / ("spindle-perf-" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(++serial) + ".yaml");
  // Slots for the largest sample, and never below the domain's default (1 KiB: small samples
  // share a slot there, as they do with default settings); fewer of them as samples grow
  // (memory: every member holds every member's ring). Samples larger than a slot go by RDMC.
  const std::size_t slot =
      o.slot_size > 0 ? o.slot_size
                      : std::clamp<std::size_t>(size + 64, kDefaultSlot, std::size_t{1} << 20);
  const std::size_t window = std::clamp<std::size_t>((std::size_t{32} << 20) / slot, 8, 256);
  const bool churn = std::find(roles.begin(), roles.end(), "churn") != roles.end();
  // Logged runs: the members' logs in a directory of this run's, on the disk --log-dir names.
  const auto logs = o.consistency == "logged"
                        ? fs::path(o.log_dir) / ("spindle-perf-logs-" + std::to_string(::getpid()) +
                                                 "-" + std::to_string(serial))
                        : fs::path();
  // With --clients, the readers (sub, pong, sleeper) are external clients of member 0.
  const auto is_client = [&](const std::string& r) {
    return o.clients && (r == "sub" || r == "pong" || r == "sleeper");
  };
  const auto listed =
      static_cast<std::size_t>(std::count_if(roles.begin(), roles.end(), [&](const std::string& r) {
        return r != "churn" && !is_client(r);
      }));
  const spindle::tools::LocalDomain domain{
      o.transport,
      listed,
      "spindle-perf-" + std::to_string(::getpid()) + "-" + std::to_string(serial),
      window,
      slot,
      "Written by spindle-perf for one run.",
      churn ? spindle::tools::free_loopback_port() : std::uint16_t{0},
      o.rdmc_block,
      logs.string(),
      o.idle_spin_us >= 0 ? std::to_string(o.idle_spin_us) + "us" : std::string(),
      o.lag_bound_ms >= 0 ? std::to_string(o.lag_bound_ms) + "ms" : std::string(),
      o.clients ? spindle::tools::free_loopback_port() : std::uint16_t{0}};
  // --security: every process with the one certificate; the permissions grant it all.
  auto perms_file = file;
  perms_file.replace_extension(".perms.yaml");
  spindle::tools::LocalDomain secured = domain;
  if (!o.security.empty()) {
    std::ofstream(perms_file) << "version: 1\ndefault: deny\ngrants:\n  - {subject: \""
                              << kPerfSubject << "\", publish: [\"*\"], subscribe: [\"*\"]}\n";
    const fs::path dir = fs::absolute(o.security);
    secured.security = "{ca: '" + (dir / "ca.pem").string() + "', certificate: '" +
                       (dir / "member.pem").string() + "', private_key: '" +
                       (dir / "member.key").string() + "', permissions: '" + perms_file.string() +
                       "'}";
    secured.subject = kPerfSubject;
  }
  spindle::tools::write_domain_file(file, secured);
  auto relay_file = file;
  relay_file.replace_extension(".relay.yaml");
  auto client_file = file;
  client_file.replace_extension(".client.yaml");
  if (o.clients) {
    spindle::tools::write_relay_file(file, relay_file, domain);
    spindle::tools::write_client_file(client_file, domain);
  }
  auto join_file = file;
  join_file.replace_extension(".joiner.yaml");
  if (churn) spindle::tools::write_joiner_file(join_file, secured);
  // Idle members (lat --members) leave once this file exists: after ping and pong ended.
  auto idle_until = file;
  idle_until.replace_extension(".over");
  std::vector<FILE*> procs;
  std::size_t member = 0;
  for (std::size_t i = 0; i < roles.size(); ++i) {
    std::ostringstream args;
    args << "--role " << roles[i] << " --size " << size << " --subs " << subs << " --duration "
         << o.duration << " --warmup " << o.warmup << " --consistency " << o.consistency
         << " --fsync " << o.fsync << " --rate " << o.rate << " --pause " << o.pause
         << " --sleeper " << o.sleeper;
    if (churn) args << " --churn --join-config '" << join_file.string() << "'";
    if (roles[i] == "idle") args << " --idle-until '" << idle_until.string() << "'";
    if (o.keep_last) args << " --keep-last";
    if (o.loan) args << " --loan";
    if (!o.trace.empty() && roles[i] == "ping")
      args << " --trace '" << o.trace << "' --transport " << o.transport;
    if (is_client(roles[i])) {
      procs.push_back(spindle::tools::start_member(client_file, 0, args.str()));
      continue;
    }
    const auto id = member++;
    procs.push_back(
        spindle::tools::start_member(o.clients && id == 0 ? relay_file : file, id, args.str()));
  }
  std::vector<std::string> results;
  for (std::size_t i = 0; i < procs.size(); ++i) {
    auto* f = procs[i];
    if (roles[i] == "idle") std::ofstream touch(idle_until);  // ping and pong are done
    if (f == nullptr) continue;
    char buf[512];
    while (std::fgets(buf, sizeof buf, f) != nullptr) {
      std::string l(buf);
      if (l.rfind("RESULT", 0) == 0) results.push_back(l);
      if (l.rfind("FAIL", 0) == 0) std::cerr << "spindle-perf: " << l;
    }
    ::pclose(f);
  }
  fs::remove(file);
  if (o.clients) {
    fs::remove(relay_file);
    fs::remove(client_file);
  }
  if (churn) fs::remove(join_file);
  fs::remove(idle_until);
  if (!o.security.empty()) fs::remove(perms_file);
  if (!logs.empty()) fs::remove_all(logs);
  return results;
}

// Every figure line() printed, for --plot.
std::vector<spindle_perf::Figure> g_figures;

void line(const Options& o, std::size_t size, std::uint32_t subs, const std::string& metric,
          double value) {
  // The peer name carries the consistency level when it is not the default.
  const std::string peer = "spindle" + std::string(o.loan ? "-loan" : "") +
                           (o.consistency == "atomic" ? "" : "-" + o.consistency) +
                           (o.consistency == "logged" && o.fsync != "every" ? "-" + o.fsync : "") +
                           (o.security.empty() ? "" : "-secure");
  g_figures.push_back({peer, o.transport, size, subs, metric, value});
  std::cout << "peer=" << peer << " transport=" << o.transport << " size=" << size
            << " subs=" << subs << " metric=" << metric << " value=" << value << std::endl;
}

int coordinator(const Options& o) {
  int failures = 0;
  for (const auto& test : o.tests) {
    for (auto size : o.sizes) {
      if (test == "lat") {
        std::vector<std::string> roles{"ping", "pong"};
        roles.resize(std::max<std::size_t>(o.members, 2), "idle");
        const auto r = run(o, roles, size, 1);
        if (r.empty()) {
          ++failures;
          continue;
        }
        std::string ping_line, pong_line;
        for (const auto& l : r) {
          if (l.find("role=idle") != std::string::npos) continue;
          (l.find("pong_cpu=") != std::string::npos ? pong_line : ping_line) = l;
        }
        if (ping_line.empty()) {
          ++failures;
          continue;
        }
        line(o, size, 1, "latency_us_p50", value_of(ping_line, "p50"));
        line(o, size, 1, "latency_us_p99", value_of(ping_line, "p99"));
        line(o, size, 1, "cpu_pct_ping", value_of(ping_line, "ping_cpu"));
        if (!pong_line.empty()) line(o, size, 1, "cpu_pct_pong", value_of(pong_line, "pong_cpu"));
        continue;
      }
      if (test == "pause") {
        const auto r = run(o, {"pacer", "healthy", "sleeper"}, size, 1);
        std::string pacer, healthy, sleeper;
        for (const auto& l : r) {
          if (l.find("role=pacer") != std::string::npos) pacer = l;
          if (l.find("role=healthy") != std::string::npos) healthy = l;
          if (l.find("role=sleeper") != std::string::npos) sleeper = l;
        }
        if (pacer.empty() || healthy.empty() || sleeper.empty()) {
          ++failures;
          continue;
        }
        line(o, size, 2, "pause_healthy_longest_gap_ms", value_of(healthy, "longest_gap_ms"));
        line(o, size, 2, "pause_healthy_taken", value_of(healthy, "taken"));
        line(o, size, 2, "pause_healthy_missed", value_of(healthy, "lost"));
        line(o, size, 2, "pause_writer_timeouts", value_of(pacer, "timeouts"));
        line(o, size, 2, "pause_sleeper_taken", value_of(sleeper, "taken"));
        line(o, size, 2, "pause_sleeper_sample_lost", value_of(sleeper, "sample_lost"));
        continue;
      }
      if (test == "churn") {
        const auto r = run(o, {"pub", "sub", "churn"}, size, 1);
        std::string sub_line, churn_line;
        for (const auto& l : r)
          (l.find("msgs_s=") != std::string::npos ? sub_line : churn_line) = l;
        if (sub_line.empty() || churn_line.empty()) {
          ++failures;
          continue;
        }
        const double steady = value_of(sub_line, "msgs_s");
        const double churned = value_of(sub_line, "churn_msgs_s");
        line(o, size, 1, "throughput_msgs_s", steady);
        line(o, size, 1, "churn_throughput_msgs_s", churned);
        line(o, size, 1, "churn_throughput_ratio", steady > 0 ? churned / steady : 0);
        line(o, size, 1, "churn_cycles", value_of(churn_line, "cycles"));
        line(o, size, 1, "join_ms", value_of(churn_line, "join_ms"));
        continue;
      }
      for (auto subs : o.subs) {
        std::vector<std::string> roles{"pub"};
        for (std::uint32_t i = 0; i < subs; ++i)
          roles.emplace_back("sub");
        auto r = run(o, roles, size, subs);
        std::string pub_line;
        std::erase_if(r, [&](const std::string& l) {
          if (l.find("role=pub") == std::string::npos) return false;
          pub_line = l;
          return true;
        });
        if (r.size() != subs || pub_line.empty()) {
          ++failures;
          continue;
        }
        double rate = 0;
        double slowest = 0;
        for (const auto& l : r) {
          const double each = value_of(l, "msgs_s");
          rate += each / subs;
          slowest = slowest == 0 ? each : std::min(slowest, each);
        }
        line(o, size, subs, "throughput_msgs_s", rate);
        line(o, size, subs, "throughput_MBps", rate * static_cast<double>(size) / 1e6);
        line(o, size, subs, "throughput_slowest_msgs_s", slowest);
        line(o, size, subs, "matched_all_ms", value_of(pub_line, "matched_ms"));
        if (o.keep_last) {
          double lost = 0;
          for (const auto& l : r)
            lost += value_of(l, "sample_lost");
          line(o, size, subs, "sample_lost_total", lost);
        }
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{
      "spindle-perf: Spindle DDS latency and throughput through the DCPS API, one\n"
      "line per figure in the format of /work/shared/peers."};
  app.add_option("--transport", o.transport, "Transport of the run")
      ->check(CLI::IsMember({"tcp", "shm", "auto"}))
      ->capture_default_str();
  app.add_option("--sizes", o.sizes, "Sample sizes in bytes, as ddsperf counts them")
      ->delimiter(',')
      ->check(CLI::Range(kHeader, kMaxSize))
      ->capture_default_str();
  app.add_option("--subs", o.subs, "Subscriber processes of each throughput run")
      ->delimiter(',')
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  app.add_option("--members", o.members,
                 "lat: members of the domain, ping and pong and the rest idle (no endpoint): "
                 "what the domain's size costs a round trip")
      ->check(CLI::Range(2u, 256u))
      ->capture_default_str();
  app.add_option("--tests", o.tests,
                 "Which measurements: lat (round trip), thr (streaming), churn (streaming "
                 "while a member joins and leaves every second, against steady), pause (a "
                 "writer at 1,000 samples/s, a reliable reader, and a --sleeper reader "
                 "whose process stops for --pause seconds: the reliable reader's longest "
                 "gap and losses, the writer's timeouts)")
      ->delimiter(',')
      ->check(CLI::IsMember({"lat", "thr", "churn", "pause"}))
      ->capture_default_str();
  app.add_option("--duration", o.duration, "Seconds measured per figure")
      ->check(CLI::Range(0.01, 3600.0))
      ->capture_default_str();
  app.add_option("--warmup", o.warmup, "Seconds run before measuring")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  app.add_option("--consistency", o.consistency,
                 "Consistency of the topic (peer=spindle, or spindle-<level>)")
      ->check(CLI::IsMember({"atomic", "unordered", "volatile", "logged"}))
      ->capture_default_str();
  app.add_option("--fsync", o.fsync,
                 "logged: fsync every sample's batch, every 10 ms (periodic), or never "
                 "(peer=spindle-logged, -logged-periodic, -logged-never); the logs go to a "
                 "temporary directory removed after each run")
      ->check(CLI::IsMember({"every", "periodic", "never"}))
      ->capture_default_str();
  app.add_option("--log-dir", o.log_dir,
                 "logged: the directory each run's logs go under (a disk, not tmpfs, for "
                 "fsync to mean anything)")
      ->capture_default_str();
  app.add_option("--slot-size", o.slot_size,
                 "engine.slot_size of every run (larger samples go by RDMC); 0: each run's "
                 "sample size, from the default 1 KiB up to 1 MiB")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--rdmc-block-size", o.rdmc_block,
                 "engine.rdmc_block_size of every run (a multiple of 64, 4096 to 64 MiB); 0: "
                 "the default")
      ->check(CLI::Validator(
          [](const std::string& v) -> std::string {
            std::uint64_t b = 0;
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), b);
            const bool number = ec == std::errc{} && end == v.data() + v.size();
            if (number && (b == 0 || (b % 64 == 0 && b >= 4096 && b <= (std::uint64_t{64} << 20))))
              return "";
            return v +
                   " is not 0 or a multiple of 64 from 4096 to 67108864 "
                   "(engine.rdmc_block_size)";
          },
          "0 or 4096..67108864, a multiple of 64"))
      ->capture_default_str();
  app.add_option("--idle-spin", o.idle_spin_us,
                 "engine.idle_spin of every run in microseconds: how long a protocol thread "
                 "busy-polls after its last work before it sleeps (the latency-versus-CPU knob); "
                 "-1: the default (1 ms)")
      ->check(CLI::Range(std::int64_t{-1}, std::int64_t{10'000'000}))
      ->capture_default_str();
  app.add_flag("--clients", o.clients,
               "The reading processes (thr: subscribers, lat: pong, pause: the sleeper) are "
               "external clients (role: client) of the first member, which relays for them, "
               "instead of members");
  app.add_flag(
      "--keep-last", o.keep_last,
      "thr: the subscribers' readers are RELIABLE KEEP_LAST (2^20 deep) instead of KEEP_ALL, so a "
      "lagging subscriber is left behind (engine.lag_bound) rather than waited for; "
      "prints sample_lost_total");
  app.add_flag("--loan", o.loan,
               "lat, thr: samples of a fixed size (sizes 64, 1024, 10240, 102400 or 1048576), "
               "built in the writer's slot (loan_sample) and read where they lie by the "
               "reader's take (peer=spindle-loan)");
  app.add_option("--trace", o.trace,
                 "lat: write every measured round trip (when it started, seconds from the first, "
                 "and its time in microseconds) to DIR/rtt-<transport>-<size>.txt, to see when "
                 "the slow ones come")
      ->check(CLI::ExistingDirectory);
  app.add_option("--lag-bound", o.lag_bound_ms,
                 "engine.lag_bound of every run in milliseconds: how long a reader's process "
                 "may stop taking samples before the others go on without it; 0: never; "
                 "-1: the default (100 ms)")
      ->check(CLI::Range(std::int64_t{-1}, std::int64_t{999}))
      ->capture_default_str();
  app.add_option("--rate", o.rate,
                 "lat: round trips a second (a steady low rate shows what parking costs); 0: "
                 "back to back")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--pause", o.pause,
                 "pause: seconds the sleeping reader's process is stopped (SIGSTOP)")
      ->check(CLI::Range(0.0, 60.0))
      ->capture_default_str();
  app.add_option("--sleeper", o.sleeper,
                 "pause: the sleeping reader's reliability (best_effort: it listens; reliable: "
                 "it holds until it lags for engine.lag_bound, then is left behind)")
      ->check(CLI::IsMember({"best_effort", "reliable"}))
      ->capture_default_str();
  app.add_option("--security", o.security,
                 "Secure every run (peer=spindle-secure): a folder with the domain's CA (ca.pem) "
                 "and one certificate for every process, member.pem and member.key, of subject "
                 "CN=spindle-perf (bench/security/security_cost.sh makes them)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--plot", o.plot,
                 "Draw the figures into this PNG (gnuplot): round-trip p50 and throughput per "
                 "subscriber against the sample size, with the --peers lines beside them");
  app.add_option("--peers", o.peers,
                 "A file of peer figures in the same line format (/work/shared/peers prints "
                 "them; other lines are skipped), drawn beside Spindle's with --plot")
      ->check(CLI::ExistingFile);
  // Internal: how the coordinator starts one process of a run.
  app.add_option("--role", o.role)
      ->check(CLI::IsMember(
          {"ping", "pong", "pub", "sub", "churn", "pacer", "healthy", "sleeper", "idle"}))
      ->group("");
  app.add_flag("--churn", o.churn)->group("");
  app.add_option("--join-config", o.join_config)->group("");
  app.add_option("--idle-until", o.idle_until)->group("");
  app.add_option("--size", o.size)->check(CLI::Range(kHeader, kMaxSize))->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  g_options = &o;
  if (o.loan) {
    for (const auto size : o.sizes) {
      if (size != 64 && size != 1024 && size != 10240 && size != 102400 && size != 1048576) {
        std::cerr << "spindle-perf: --loan: no fixed-size sample of " << size
                  << " bytes (64, 1024, 10240, 102400 or 1048576)\n";
        return 2;
      }
    }
    for (const auto& t : o.tests) {
      if (t != "lat" && t != "thr") {
        std::cerr << "spindle-perf: --loan measures lat and thr, not " << t << "\n";
        return 2;
      }
    }
  }
  if (!o.security.empty() && o.clients) {
    std::cerr << "spindle-perf: --clients with --security: a secured domain admits no external "
                 "clients yet (docs/security.md)\n";
    return 2;
  }
  try {
    if (o.role == "ping" || o.role == "pong") return latency_role(o);
    if (o.role == "pub" || o.role == "sub")
      return throughput_role(o, o.subs.empty() ? 1 : o.subs[0]);
    if (o.role == "churn") return churn_role(o);
    if (o.role == "idle") return idle_role(o);
    if (o.role == "pacer") return pacer_role(o);
    if (o.role == "healthy" || o.role == "sleeper") return pause_reader_role(o);
    // The peers' figures are read first: a bad file is refused before the run.
    std::vector<spindle_perf::Figure> peers;
    if (!o.peers.empty()) {
      std::ifstream in(o.peers);
      peers = spindle_perf::read_figures(in, o.peers);
    }
    const int status = coordinator(o);
    if (!o.plot.empty()) {
      peers.insert(peers.end(), g_figures.begin(), g_figures.end());
      spindle_perf::plot(peers, o.plot);
      std::cerr << "spindle-perf: drew " << g_figures.size() << " figures ("
                << peers.size() - g_figures.size() << " of peers) into " << o.plot << std::endl;
    }
    return status;
  } catch (const dds::core::Exception& e) {
    std::cout << "FAIL " << e.what() << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cout << "FAIL " << e.what() << std::endl;
    return 1;
  }
}
