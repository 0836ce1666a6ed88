// One side of the waiting-reader count (wakeups_test.cpp), written only against the ISO C++
// PSM, as an application would:
//   wakeups reader N   a reliable KEEP_ALL reader of topic "Ping" that waits on a WaitSet
//                      with a ReadCondition and takes each sample as it comes; says "ready",
//                      then, after N samples, "threads T switches S samples M": the threads
//                      of this process while it waited, and their voluntary context switches
//                      (sleeps ended by a wake-up, all threads summed, from /proc) over the
//                      last M samples
//   wakeups writer N   once matched, writes N samples one every 2 ms, waits for every
//                      acknowledgment, says "wrote N"
// Every wait is bounded; "FAIL why" and exit 1 otherwise.
#include <dirent.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <thread>

#include <dds/dds.hpp>

#include "porting.hpp"

// Every allocation of the process is counted (all threads), and those of the application's
// own thread (the one that writes, or waits and takes) apart.
namespace {
std::atomic<std::uint64_t> g_allocations{0};
thread_local std::uint64_t t_allocations = 0;

void* counted(std::size_t size, std::size_t align) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  ++t_allocations;
  if (size == 0) size = 1;
  void* p = align <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(align, (size + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t size) {
  return counted(size, alignof(std::max_align_t));
}
void* operator new[](std::size_t size) {
  return counted(size, alignof(std::max_align_t));
}
void* operator new(std::size_t size, std::align_val_t align) {
  return counted(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return counted(size, static_cast<std::size_t>(align));
}
// The nothrow forms too: every form a library may call must pair with the deletes below
// (ASan checks that memory from its own operator new is not given to free()).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted(size, alignof(std::max_align_t));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted(size, alignof(std::max_align_t));
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return counted(size, static_cast<std::size_t>(align));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return counted(size, static_cast<std::size_t>(align));
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace {

using Porting::Ping;
using Clock = std::chrono::steady_clock;
constexpr std::uint64_t kWarmUp = 50;  // samples before the count starts
const auto kPatience = std::chrono::seconds(60);

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(EXIT_FAILURE);
}

// This process's threads and their voluntary context switches so far: each is a thread
// going to sleep to be woken again (preemptions, involuntary, are the machine's load).
struct Census {
  std::uint64_t threads = 0;
  std::uint64_t switches = 0;
};
Census census() {
  Census c;
  DIR* d = ::opendir("/proc/self/task");
  if (d == nullptr) fail("cannot read /proc/self/task");
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    ++c.threads;
    std::ifstream in(std::string("/proc/self/task/") + e->d_name + "/status");
    std::string key;
    std::uint64_t value = 0;
    while (in >> key) {
      if (key == "voluntary_ctxt_switches:") {
        in >> value;
        c.switches += value;
      } else {
        in.ignore(1 << 12, '\n');
      }
    }
  }
  ::closedir(d);
  return c;
}

int reader(dds::domain::DomainParticipant& participant, std::uint64_t n) {
  dds::topic::Topic<Ping> topic(participant, "Ping");
  dds::sub::Subscriber subscriber(participant);
  auto qos = subscriber.default_datareader_qos();
  qos << dds::core::policy::Reliability::Reliable() << dds::core::policy::History::KeepAll();
  dds::sub::DataReader<Ping> reader(subscriber, topic, qos);
  dds::sub::cond::ReadCondition has_data(reader, dds::sub::status::DataState::new_data());
  dds::core::cond::WaitSet waitset;
  waitset += has_data;
  std::cout << "ready" << std::endl;
  const auto give_up = Clock::now() + kPatience;
  std::uint64_t got = 0;
  Census start;
  std::uint64_t allocations = 0, own_allocations = 0;
  std::uint64_t threads = 0;
  dds::core::cond::WaitSet::ConditionSeq triggered;  // reused: a wait then allocates nothing
  while (got < n) {
    if (Clock::now() > give_up)
      fail("received " + std::to_string(got) + " of " + std::to_string(n));
    // While it waits, now and then (reading /proc is not free).
    // Its own allocations (reading /proc) are not the reader's: they are left out.
    if (got >= kWarmUp && got % 50 == 0) {
      const auto before = g_allocations.load();
      const auto own_before = t_allocations;
      threads = std::max(threads, census().threads);
      allocations += g_allocations.load() - before;
      own_allocations += t_allocations - own_before;
    }
    try {
      waitset.wait(triggered, dds::core::Duration::from_secs(5));
    } catch (const dds::core::TimeoutError&) {
      continue;
    }
    for (const auto& s : reader.take()) {
      if (!s.info().valid()) continue;
      if (s.data().seq() != got)
        fail("sample " + std::to_string(s.data().seq()) + " where " + std::to_string(got) +
             " was due");
      if (++got == kWarmUp) {
        start = census();
        allocations = g_allocations.load();
        own_allocations = t_allocations;
      }
    }
  }
  allocations = g_allocations.load() - allocations;
  own_allocations = t_allocations - own_allocations;
  const Census end = census();
  std::cout << "threads " << threads << " switches " << end.switches - start.switches << " samples "
            << n - kWarmUp << " allocations " << allocations << " own " << own_allocations
            << std::endl;
  return EXIT_SUCCESS;
}

int writer(dds::domain::DomainParticipant& participant, std::uint64_t n) {
  dds::topic::Topic<Ping> topic(participant, "Ping");
  dds::pub::Publisher publisher(participant);
  auto qos = publisher.default_datawriter_qos();
  qos << dds::core::policy::Reliability::Reliable(dds::core::Duration::from_secs(5))
      << dds::core::policy::History::KeepAll();
  dds::pub::DataWriter<Ping> writer(publisher, topic, qos);
  const auto give_up = Clock::now() + kPatience;
  while (writer.publication_matched_status().current_count() == 0) {
    if (Clock::now() > give_up) fail("no reader matched");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  auto next = Clock::now();
  std::uint64_t allocations = 0, own_allocations = 0;
  for (std::uint64_t seq = 0; seq < n; ++seq) {
    if (seq == kWarmUp) {
      allocations = g_allocations.load();
      own_allocations = t_allocations;
    }
    writer.write(Ping(1, seq, 0));
    next += std::chrono::milliseconds(2);
    std::this_thread::sleep_until(next);
  }
  allocations = g_allocations.load() - allocations;
  own_allocations = t_allocations - own_allocations;
  writer.wait_for_acknowledgments(dds::core::Duration::from_secs(30));
  std::cout << "wrote " << n << " samples " << n - kWarmUp << " allocations " << allocations
            << " own " << own_allocations << std::endl;
  return EXIT_SUCCESS;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string role = argc > 1 ? argv[1] : "";
  const std::uint64_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 0;
  if ((role != "reader" && role != "writer") || n <= kWarmUp)
    fail("usage: wakeups reader|writer N (N > " + std::to_string(kWarmUp) + ")");
  try {
    dds::domain::DomainParticipant participant(dds::domain::default_id());
    return role == "reader" ? reader(participant, n) : writer(participant, n);
  } catch (const dds::core::Exception& e) {
    fail(e.what());
  }
}
