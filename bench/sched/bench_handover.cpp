// The price of one hand-over of a core between two threads, against a yield that no other
// thread takes, measured in one run. On a machine with fewer cores than busy threads a
// Spindle member's application thread and predicate thread share a core and trade it with
// sched_yield (docs/dev/smc.md: once per ring-full episode, two switches each); this is what
// each switch costs here. Prints Google Benchmark's table, then
//
//   ratio handover/alone = <x>   (ns per switch / ns per yield nobody takes)
//
//   bench_handover [google benchmark flags]
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

// Runs the calling thread on the first CPU it may use for its lifetime, then restores.
class PinFirst {
 public:
  PinFirst() {
    ok_ = ::pthread_getaffinity_np(::pthread_self(), sizeof old_, &old_) == 0;
    if (!ok_) return;
    for (std::size_t cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &old_)) continue;
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ok_ = ::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) == 0;
      return;
    }
  }
  ~PinFirst() {
    if (ok_) (void)::pthread_setaffinity_np(::pthread_self(), sizeof old_, &old_);
  }
  PinFirst(const PinFirst&) = delete;
  PinFirst& operator=(const PinFirst&) = delete;
  [[nodiscard]] bool ok() const noexcept { return ok_; }

 private:
  cpu_set_t old_{};
  bool ok_ = false;
};

double g_alone_ns = 0;
double g_switch_ns = 0;

double ns_per(Clock::duration d, double count) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count()) /
         count;
}

// Reference: a yield with nothing else runnable on the CPU (a bare system call).
void BM_yield_alone(benchmark::State& state) {
  const PinFirst pin;
  if (!pin.ok()) state.SkipWithError("cannot pin to a CPU");
  const auto t0 = Clock::now();
  for (auto _ : state)
    ::sched_yield();
  g_alone_ns = ns_per(Clock::now() - t0, static_cast<double>(state.iterations()));
  state.counters["ns_per_yield"] = g_alone_ns;
}

// A second thread on the same CPU yields in a loop: each of our yields switches to it and
// its yield switches back, so one iteration is two switches.
void BM_yield_handover(benchmark::State& state) {
  const PinFirst pin;
  if (!pin.ok()) state.SkipWithError("cannot pin to a CPU");
  std::atomic<bool> stop{false};
  std::atomic<bool> ready{false};
  std::thread other([&] {
    const PinFirst other_pin;
    ready.store(true);
    while (!stop.load(std::memory_order_relaxed))
      ::sched_yield();
  });
  while (!ready.load())
    ::sched_yield();
  const auto t0 = Clock::now();
  for (auto _ : state)
    ::sched_yield();
  g_switch_ns = ns_per(Clock::now() - t0, 2.0 * static_cast<double>(state.iterations()));
  stop.store(true);
  other.join();
  state.counters["ns_per_switch"] = g_switch_ns;
}

BENCHMARK(BM_yield_alone)->UseRealTime();
BENCHMARK(BM_yield_handover)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (g_alone_ns > 0 && g_switch_ns > 0) {
    std::printf("ratio handover/alone = %.2f  (%.0f ns per switch, %.0f ns per yield alone)\n",
                g_switch_ns / g_alone_ns, g_switch_ns, g_alone_ns);
  }
  return 0;
}
