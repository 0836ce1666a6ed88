// DCPS publish/subscribe across 3 participant processes on loopback, once per built
// transport (shm, tcp): a generated domain file lists the members on free ports; every
// process runs writers on an ATOMIC and an UNORDERED topic and reads both (dcps_node.cpp),
// with small samples, or ([large]) samples from 1 byte to 64 MiB mixed in one stream.
// The SMC delivery-log checker then proves, per topic: per-writer FIFO, no gap, no
// duplicate, intact payloads, every sample at every reader — and for the atomic topic the
// same order at every reader. Every wait is bounded.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "delivery_log.hpp"
#include "process.hpp"
#include "transports.hpp"

namespace tst = spindle::testing;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

struct Run {
  std::uint32_t processes = 3;
  std::uint32_t writers = 2;  // per process and topic
  std::uint64_t samples = 400;
  // Samples from 1 byte to max_payload (dcps_node --large), through RDMC buffer space of
  // rdmc_buffer bytes per writing member; one process (the last) stopped for `pause` once
  // the stream runs — a slow reader the writers wait for; and each process's peak resident
  // memory at most rss_bound_kib.
  bool large = false;
  std::uint64_t max_payload = 200;
  std::uint64_t rdmc_buffer = 0;
  std::chrono::milliseconds pause{0};
  std::uint64_t rss_bound_kib = 0;
  std::chrono::seconds limit{90};
};

// Reads the next line of `p` and checks it starts with `word`; the line, or "" on failure.
std::string expect_line(tst::Process& p, const std::string& word, tst::Deadline deadline,
                        std::vector<std::string>& errors, std::uint32_t node) {
  auto line = p.read_line(deadline);
  if (!line || line->rfind(word, 0) != 0) {
    errors.push_back("node " + std::to_string(node) + ": expected '" + word + "', got '" +
                     line.value_or("(nothing)") + "'");
    return "";
  }
  return *line;
}

std::vector<std::string> run(const Run& r, const std::string& kind) {
  const std::string name = "spindle-dcps-" + std::to_string(::getpid()) + "-" + kind;
  const auto dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto deadline = std::chrono::steady_clock::now() + r.limit;
  const auto file = dir / "domain.yaml";
  {
    std::ofstream out(file);
    out << "# Written by dcps_processes_test.\nversion: 1\ndomain_id: 0\ntransport: " << kind
        << "\nshm: {namespace: " << name << "}\nmembers:\n";
    for (std::uint32_t i = 0; i < r.processes; ++i)
      out << "  - {id: " << i << ", host: 127.0.0.1, port: " << tst::free_loopback_port() << "}\n";
    out << "engine: {window_size: 64, slot_size: 512, connect_timeout: 20s, "
           "suspicion_timeout: 5s";
    if (r.rdmc_buffer > 0) out << ", rdmc_buffer_size: " << r.rdmc_buffer;
    out << "}\n";
  }
  std::vector<std::unique_ptr<tst::Process>> procs;
  for (std::uint32_t i = 0; i < r.processes; ++i) {
    procs.push_back(std::make_unique<tst::Process>(std::vector<std::string>{
        tst::self_dir() + "/dcps_node", "--config", file.string(), "--node", std::to_string(i),
        "--processes", std::to_string(r.processes), "--writers", std::to_string(r.writers),
        "--samples", std::to_string(r.samples), "--log", tst::log_path(dir, i).string(),
        "--max-payload", std::to_string(r.max_payload), "--large", r.large ? "1" : "0",
        "--timeout-ms", std::to_string((r.limit - 10s).count() * 1000)}));
  }
  // Start writing only once everyone matched everyone; leave only once everyone took all.
  std::vector<std::string> errors;
  for (std::uint32_t i = 0; i < r.processes; ++i)
    expect_line(*procs[i], "ready", deadline, errors, i);
  if (errors.empty())
    for (auto& p : procs)
      p->send("go");
  if (errors.empty() && r.pause.count() > 0) {
    // A reader that stops taking part for a while (shorter than the suspicion timeout):
    // the writers wait for it, within their buffer space.
    std::this_thread::sleep_for(200ms);
    ::kill(procs.back()->pid(), SIGSTOP);
    std::this_thread::sleep_for(r.pause);
    ::kill(procs.back()->pid(), SIGCONT);
  }
  for (std::uint32_t i = 0; i < r.processes && errors.empty(); ++i) {
    const auto line = expect_line(*procs[i], "done", deadline, errors, i);
    std::istringstream f(line.empty() ? "" : line.substr(4));
    std::uint64_t taken = 0, rss = 0;
    f >> taken >> rss;
    UNSCOPED_INFO(kind << ": node " << i << " peak resident " << rss / 1024 << " MiB");
    if (r.rss_bound_kib > 0 && rss > r.rss_bound_kib)
      errors.push_back("node " + std::to_string(i) + ": peak resident memory " +
                       std::to_string(rss / 1024) + " MiB, more than the bound of " +
                       std::to_string(r.rss_bound_kib / 1024) + " MiB");
  }
  for (auto& p : procs)
    p->send("exit");
  for (auto& e : tst::wait_all(procs, deadline))
    errors.push_back(e);
  if (!errors.empty()) return errors;

  const auto logs = tst::read_logs(dir, r.processes);
  // Subgroup 0: the atomic topic; 1: the unordered one. Writer ids are node * 100 + k.
  std::vector<tst::SubgroupSpec> topics(2);
  for (std::uint32_t i = 0; i < r.processes; ++i) {
    for (auto& t : topics) {
      t.members.push_back(i);
      for (std::uint32_t k = 0; k < r.writers; ++k)
        t.senders.push_back(i * 100 + k);
    }
  }
  topics[1].atomic = false;
  errors = tst::check(topics, logs, true);
  std::size_t delivered = 0;
  for (const auto& l : logs)
    delivered += l.delivered.size();
  const auto expected = std::size_t{r.processes} * r.processes * r.writers * r.samples * 2;
  if (delivered != expected)
    errors.push_back(std::to_string(delivered) + " deliveries, expected " +
                     std::to_string(expected));
  UNSCOPED_INFO(kind << ": " << delivered << " deliveries checked");
  if (errors.empty()) fs::remove_all(dir);
  return errors;
}

// run() once per built transport, each checked on its own.
void run_on_every_transport(const Run& r) {
  const auto kinds = tst::available_transports();
  REQUIRE_FALSE(kinds.empty());
  for (const auto& kind : kinds) {
    INFO("transport " << kind);
    const auto errors = run(r, kind);
    for (const auto& e : errors)
      UNSCOPED_INFO(e);
    CHECK(errors.empty());
  }
}

}  // namespace

TEST_CASE(
    "samples of 1 B to 64 MiB in one stream, a reader stopped a while: all intact, in order, "
    "memory bounded",
    "[large]") {
  Run r;
  r.writers = 1;
  r.samples = 12;
  r.large = true;
  r.max_payload = std::uint64_t{64} << 20;
  r.rdmc_buffer = std::uint64_t{80} << 20;
  r.pause = 1500ms;
  r.limit = 240s;
  // Per process: 3 writers x 2 topics of RDMC buffer space that fills up (480 MiB at
  // most), the samples being read and the ones in the reader's history (a handful of
  // 64 MiB ones), the writing threads' own samples, and the program. Over shm a reader
  // reads the writers' buffers where they lie, resident in its process as its own copies
  // were before: 350-365 MiB of shared pages at the end (435-445 MiB with copies; they
  // only grow during the run). Yet the peak is higher, 1.30-1.40 GiB against 1.22-1.28
  // with copies (tcp 1.24-1.28): the difference is private memory at the peak (samples
  // deserialized and waiting in the histories, the writers' own), not the buffers.
  r.rss_bound_kib = std::uint64_t{1536} << 10;
  run_on_every_transport(r);
}

TEST_CASE("256 MiB samples with the default settings (nightly: 2 GiB a process)", "[huge]") {
  Run r;
  r.processes = 2;
  r.writers = 1;
  r.samples = 3;  // sample 1 of each writer is the largest
  r.large = true;
  r.max_payload = (std::uint64_t{256} << 20) - 64;
  r.limit = 300s;
  r.rss_bound_kib = std::uint64_t{3} << 20;
  run_on_every_transport(r);
}

TEST_CASE(
    "3 processes, 2 writers each on an atomic and an unordered topic: every reader "
    "takes every sample, atomic in one order everywhere, each writer in FIFO order",
    "[multiproc]") {
  run_on_every_transport(Run{});
}
