// One participant process of the multi-process DCPS test (dcps_processes_test.cpp). It joins
// the domain of --config as --node, writes with --writers writers on each of two topics —
// "Atomic" (consistency ATOMIC) and "Unordered" (UNORDERED) — and reads both, logging what
// it wrote and what it took in the SMC delivery-log format (tests/smc/delivery_log.hpp):
// subgroup = topic (0 atomic, 1 unordered), sender = writer id, index = the writer's
// sequence number, seq = -1 (a reader does not see SMC's global sequence).
//
// With --large, sample sizes run from 1 byte to --max-payload (64 MiB in the test): most
// are small, some medium, every writer's second sample and one in sixteen of the rest the
// largest — samples beyond a slot travel by RDMC in the same stream as the small ones.
//
// Every writer writes the same instance (key writer_id = 0; the writer's id travels in
// send_time_ns): a reader returns the samples of one instance in arrival order, while
// samples of several instances come grouped by instance, which would hide the order.
//
// Protocol with the parent, one line each, every wait bounded by --timeout-ms:
//   child  -> "ready"        every local endpoint matched every peer
//   parent -> "go"           once every child is ready: start writing
//   child  -> "done N K"     took all it expected (N samples) and wrote its log; its peak
//                            resident memory was K KiB
//   parent -> "exit"         once every child is done: leave (nobody leaves early)
// Exit 0 on success; a line "FAIL why" and a non-zero exit otherwise.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include <dds/dds.hpp>

#include "Sequence.hpp"
#include "delivery_log.hpp"

namespace tst = spindle::testing;
using Clock = std::chrono::steady_clock;
using Sample = Bench::Sequence;

namespace {

constexpr std::uint32_t kMaxPayload = 200;

struct Options {
  std::string config, log;
  std::uint32_t node = 0, processes = 0, writers = 1;
  std::uint64_t samples = 100;
  std::uint64_t max_payload = kMaxPayload;
  bool large = false;
  std::chrono::milliseconds timeout{60'000};
};

// --large: the size of sample `seq` of `writer` on `subgroup`, in [1, max].
std::size_t large_size(std::uint32_t subgroup, std::uint32_t writer, std::uint64_t seq,
                       std::uint64_t max) {
  std::uint64_t h = (std::uint64_t{subgroup} << 48) ^ (std::uint64_t{writer} << 32) ^ seq;
  h += 0x9e3779b97f4a7c15ULL;  // splitmix64
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  h ^= h >> 31;
  const auto pick = h % 16;
  h >>= 8;
  std::uint64_t size = 0;
  if (seq == 1 || pick == 0) {
    size = max;
  } else if (pick < 6) {
    size = 4096 + h % (std::uint64_t{4} << 20);  // medium: 4 KiB .. 4 MiB
  } else {
    size = 1 + h % 2048;  // small: 1 B .. 2 KiB
  }
  return static_cast<std::size_t>(std::min(size, max));
}

// Peak resident memory of this process, in KiB (VmHWM).
std::uint64_t peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6));
  return 0;
}

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

// The next line on stdin, or "" at EOF or when `deadline` passes.
std::string read_line(Clock::time_point deadline) {
  std::string line;
  char c = 0;
  while (Clock::now() < deadline) {
    pollfd p{0, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    if (::read(0, &c, 1) != 1) return "";
    if (c == '\n') return line;
    line += c;
  }
  return "";
}

// One topic: this process's writers and its reader.
struct Stream {
  std::uint32_t subgroup = 0;  // the delivery-log subgroup: 0 atomic, 1 unordered
  dds::topic::Topic<Sample> topic = dds::core::null;
  std::vector<dds::pub::DataWriter<Sample>> writers;
  dds::sub::DataReader<Sample> reader = dds::core::null;
  std::uint64_t taken = 0;
};

std::vector<std::uint8_t> payload_of(const Options& o, std::uint32_t subgroup, std::uint32_t writer,
                                     std::uint64_t seq) {
  const auto max = static_cast<std::uint32_t>(std::min<std::uint64_t>(o.max_payload, UINT32_MAX));
  std::vector<std::uint8_t> bytes(o.large ? large_size(subgroup, writer, seq, max)
                                          : tst::payload_size(7, subgroup, writer, seq, max));
  tst::fill_payload(std::as_writable_bytes(std::span(bytes)), subgroup, writer, seq);
  return bytes;
}

std::uint32_t checksum_of(const std::vector<std::uint8_t>& bytes) {
  return tst::checksum(std::as_bytes(std::span(bytes)));
}

int run(const Options& o) {
  const auto deadline = Clock::now() + o.timeout;
  ::setenv("SPINDLE_CONFIG", o.config.c_str(), 1);
  ::setenv("SPINDLE_NODE_ID", std::to_string(o.node).c_str(), 1);
  dds::domain::DomainParticipant dp(dds::domain::default_id());
  dds::pub::Publisher pub(dp);
  dds::sub::Subscriber sub(dp);

  std::vector<Stream> streams(2);
  for (std::uint32_t k = 0; k < streams.size(); ++k) {
    auto& s = streams[k];
    s.subgroup = k;
    const auto consistency =
        k == 0 ? spindle::policy::Consistency::Atomic() : spindle::policy::Consistency::Unordered();
    s.topic = dds::topic::Topic<Sample>(dp, k == 0 ? "Atomic" : "Unordered");
    dds::pub::qos::DataWriterQos wq;
    wq << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(20))
       << consistency;
    dds::sub::qos::DataReaderQos rq;
    rq << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll()
       << consistency;
    s.reader = dds::sub::DataReader<Sample>(sub, s.topic, rq);
    for (std::uint32_t w = 0; w < o.writers; ++w)
      s.writers.emplace_back(pub, s.topic, wq);
  }

  // Everyone matched with everyone before the first sample.
  const std::size_t all_writers = std::size_t{o.processes} * o.writers;
  for (;;) {
    bool matched = true;
    for (auto& s : streams) {
      matched = matched && s.reader.matched_publications().size() == all_writers;
      for (auto& w : s.writers)
        matched = matched && w.matched_subscriptions().size() == o.processes;
    }
    if (matched) break;
    if (Clock::now() > deadline) {
      std::string counts;
      for (auto& s : streams) {
        counts += " reader:";
        counts += std::to_string(s.reader.matched_publications().size());
        for (auto& w : s.writers) {
          counts += " writer:";
          counts += std::to_string(w.matched_subscriptions().size());
        }
      }
      fail("node " + std::to_string(o.node) + ": endpoints did not match in time (matched" +
           counts + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::cout << "ready" << std::endl;
  if (read_line(deadline) != "go") fail("no 'go' from the parent");

  tst::NodeLog log;
  log.node = o.node;
  // One writing thread per topic, interleaving its writers; the main thread takes.
  std::vector<std::vector<tst::Sent>> sent(streams.size());
  std::vector<std::string> write_errors(streams.size());
  std::atomic<bool> write_failed{false};
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < streams.size(); ++k) {
    threads.emplace_back([&, k] {
      auto& s = streams[k];
      try {
        for (std::uint64_t i = 0; i < o.samples; ++i) {
          for (std::uint32_t w = 0; w < s.writers.size(); ++w) {
            const std::uint32_t id = o.node * 100 + w;
            Sample x(0, i, id, payload_of(o, s.subgroup, id, i));
            s.writers[w].write(x);
            sent[k].push_back(tst::Sent{s.subgroup, id, i,
                                        static_cast<std::uint32_t>(x.payload().size()),
                                        checksum_of(x.payload())});
          }
        }
      } catch (const std::exception& e) {
        write_errors[k] = e.what();
        write_failed = true;
      }
    });
  }

  dds::core::cond::WaitSet ws;
  for (auto& s : streams)
    ws += dds::sub::cond::ReadCondition(s.reader, dds::sub::status::DataState::any());
  const std::uint64_t expected = all_writers * o.samples;
  auto done = [&] {
    for (auto& s : streams)
      if (s.taken < expected) return false;
    return true;
  };
  while (!done() && !write_failed && Clock::now() < deadline) {
    try {
      ws.wait(dds::core::Duration::from_millisecs(200));
    } catch (const dds::core::TimeoutError&) {
      continue;
    }
    for (auto& s : streams) {
      for (const auto& x : s.reader.take()) {
        if (!x.info().valid()) continue;
        const auto& d = x.data();
        const auto writer = static_cast<std::uint32_t>(d.send_time_ns());
        log.delivered.push_back(tst::Delivered{s.subgroup, writer, d.seq(), -1,
                                               static_cast<std::uint32_t>(d.payload().size()),
                                               checksum_of(d.payload())});
        ++s.taken;
      }
    }
  }
  for (auto& t : threads)
    t.join();
  for (auto& v : sent)
    log.sent.insert(log.sent.end(), v.begin(), v.end());
  tst::write_log(o.log, log);
  for (const auto& e : write_errors)
    if (!e.empty()) fail("node " + std::to_string(o.node) + ": a write failed: " + e);
  if (!done()) {
    fail("node " + std::to_string(o.node) + ": took " + std::to_string(streams[0].taken) + " + " +
         std::to_string(streams[1].taken) + " of " + std::to_string(expected) + " x 2");
  }
  std::cout << "done " << log.delivered.size() << ' ' << peak_rss_kib() << std::endl;
  if (read_line(deadline) != "exit") fail("no 'exit' from the parent");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--config") {
      o.config = v;
    } else if (k == "--node") {
      o.node = static_cast<std::uint32_t>(std::stoul(v));
    } else if (k == "--processes") {
      o.processes = static_cast<std::uint32_t>(std::stoul(v));
    } else if (k == "--writers") {
      o.writers = static_cast<std::uint32_t>(std::stoul(v));
    } else if (k == "--samples") {
      o.samples = std::stoull(v);
    } else if (k == "--max-payload") {
      o.max_payload = std::stoull(v);
    } else if (k == "--large") {
      o.large = v == "1";
    } else if (k == "--log") {
      o.log = v;
    } else if (k == "--timeout-ms") {
      o.timeout = std::chrono::milliseconds(std::stoll(v));
    }
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    fail(std::string("node ") + std::to_string(o.node) + ": " + e.what());
  }
}
