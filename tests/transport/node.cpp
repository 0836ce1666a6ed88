// transport_node: one member of a multi-process conformance test. The test process spawns
// 2-4 of these (support.hpp Child) and talks to each over stdin/stdout:
//
//   node   -> test   READY <id> <host> <port>
//   test   -> node   MEMBERS <n> (<id> <host> <port>)...
//   node   -> test   STREAMING | SUSPECT <peer> <reason> <steady_ns> | OK <facts> | FAIL <why>
//
// usage: transport_node <tcp|shm|rdma> <scenario> <id> [key=value...]
// Scenarios: order, sizes, blocks, reconnect, idle (see each function). Every wait is
// bounded; a node that cannot finish prints FAIL and exits 1.
#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <spindle/transport/idle_waiter.hpp>

#include "support.hpp"

namespace st = spindle::transport;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

// Region map (every node registers the same ones):
//   1 table    per sender: kSlot data bytes then a guard (stride kStride)
//   2 big      kBig bytes, target of the sizes scenario
//   3 rx       block receive buffers, kRxSlots x kMaxBlock
//   4 tx       block send source, kMaxBlock
//   5 control  per sender 64 bytes: +0 done count, +8 barrier, +16 step, +24 ack
//   10+p       staging for the writer thread that writes to peer p
constexpr st::RegionId kTable = 1, kBigRegion = 2, kRx = 3, kTx = 4, kControl = 5, kStaging = 10;
constexpr std::size_t kSlot = 256, kStride = kSlot + 64, kBig = std::size_t{8} << 20;
constexpr std::uint32_t kMaxBlock = 256u << 10, kRxSlots = 4;
constexpr std::size_t kMaxNodes = 4;

[[noreturn]] void fail(const std::string& why) {
  std::cout << "FAIL " << why << std::endl;
  std::exit(1);
}

std::uint64_t load_acquire(const std::byte* p) {
  return std::atomic_ref<std::uint64_t>(
             *reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_acquire);
}
std::uint64_t load_relaxed(const std::byte* p) {
  return std::atomic_ref<std::uint64_t>(
             *reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(p)))
      .load(std::memory_order_relaxed);
}
void store(std::byte* p, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p))
      .store(v, std::memory_order_relaxed);
}

struct Node {
  std::string kind;
  std::map<std::string, std::string> args;
  std::unique_ptr<st::Transport> t;
  st::NodeId id = 0;
  std::vector<st::NodeAddress> members;
  std::vector<st::NodeId> peers;
  std::map<st::NodeId, st::Suspicion> suspected;
  std::int64_t suspicion_ms = 500;

  std::int64_t arg(const std::string& k, std::int64_t def) const {
    auto it = args.find(k);
    return it == args.end() ? def : std::strtoll(it->second.c_str(), nullptr, 10);
  }
  std::byte* mem(st::RegionId r) { return t->local_region(r)->bytes.data(); }

  std::vector<st::Event> inbox;  // polled, not yet taken

  // Polls events into the inbox; reports suspicions on stdout as they arrive.
  bool pump() {
    const std::size_t before = inbox.size();
    t->poll(inbox);
    for (std::size_t i = before; i < inbox.size(); ++i) {
      auto& e = inbox[i];
      if (auto* s = std::get_if<st::Suspicion>(&e)) {
        if (suspected.contains(s->peer)) continue;
        std::cout << "SUSPECT " << s->peer << " " << st::to_string(s->reason) << " "
                  << Clock::now().time_since_epoch().count() << " " << s->detail << std::endl;
        suspected.emplace(s->peer, *s);
      }
    }
    return inbox.size() > before;
  }
  std::vector<st::Event> take() {
    pump();
    return std::exchange(inbox, {});
  }

  // Waits (spin, then sleep on the transport) until pred() or the timeout.
  template <class Pred>
  bool wait_until(Pred pred, std::chrono::milliseconds timeout) {
    st::IdleWaiter waiter(*t, st::IdlePolicy{50us, 5ms});
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      bool ok = false;
      waiter.step([&] {
        pump();
        ok = pred();
        return ok;
      });
      if (ok) return true;
    }
    return pred();
  }

  // Posts a write, riding out back-pressure; anything but ok/peer_suspected is fatal.
  st::Status write(st::NodeId peer, st::RegionId local, std::uint64_t loff, st::RegionId remote,
                   std::uint64_t roff, std::size_t len) {
    const auto deadline = Clock::now() + 20s;
    while (true) {
      const auto ticket = t->activity();
      const auto s = t->write(peer, local, loff, remote, roff, len);
      if (s == st::Status::ok || s == st::Status::peer_suspected) return s;
      if (s != st::Status::retry) fail("write returned " + std::string(st::to_string(s)));
      if (Clock::now() > deadline) fail("write to " + std::to_string(peer) + " stuck on retry");
      // Back off for a moment: on two cores, writers woken by every incoming byte would
      // starve the I/O threads that drain their queues.
      (void)ticket;
      std::this_thread::sleep_for(200us);
    }
  }

  // Control word `field` of our control slot at every live peer := v; then wait for the
  // same from every live peer.
  void barrier(std::uint64_t v, std::size_t field = 8) {
    store(mem(kControl) + id * 64 + field, v);
    for (auto p : peers) {
      if (!suspected.contains(p))
        (void)write(p, kControl, id * 64 + field, kControl, id * 64 + field, 8);
    }
    const bool ok = wait_until(
        [&] {
          for (auto p : peers) {
            if (!suspected.contains(p) && load_acquire(mem(kControl) + p * 64 + field) < v) {
              return false;
            }
          }
          return true;
        },
        20s);
    if (!ok) fail("barrier " + std::to_string(v) + " timed out");
  }

  void connect(std::uint64_t epoch, const std::vector<st::NodeAddress>& view) {
    peers.clear();
    for (auto& m : view) {
      if (m.id != id) peers.push_back(m.id);
    }
    suspected.clear();
    const auto s = t->connect(view, epoch, 10s);
    if (s != st::Status::ok) {
      pump();
      fail("connect epoch " + std::to_string(epoch) + ": " + std::string(st::to_string(s)));
    }
  }

  std::int64_t teardown() {
    const auto start = Clock::now();
    t->disconnect();
    t.reset();
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  }
};

// order: every node streams versions k = 1, 2, ... of its slot to every peer, one writer
// thread per peer (concurrent writers to different peers): data words all = k, then the
// guard = k, as two writes. The main thread checks every guard it observes against the
// data under it. With victim=<id>, that node streams until SIGKILLed; survivors must
// suspect it and keep streaming to each other for another while.
void scenario_order(Node& n) {
  const auto duration = std::chrono::milliseconds(n.arg("ms", 1500));
  const std::int64_t victim = n.arg("victim", -1);
  std::atomic<bool> stop{false};
  std::vector<std::thread> writers;
  std::vector<std::atomic<std::uint64_t>> written(kMaxNodes);
  for (auto p : n.peers) {
    writers.emplace_back([&, p] {
      std::byte* src = n.mem(kStaging + p);
      std::uint64_t k = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        ++k;
        for (std::size_t w = 0; w < kSlot; w += 8)
          store(src + w, k);
        store(src + kSlot, k);
        if (n.write(p, kStaging + p, 0, kTable, n.id * kStride, kSlot) != st::Status::ok) break;
        if (n.write(p, kStaging + p, kSlot, kTable, n.id * kStride + kSlot, 8) != st::Status::ok) {
          break;
        }
        written[p].store(k, std::memory_order_relaxed);
      }
    });
  }
  if (static_cast<std::int64_t>(n.id) == victim) {
    std::cout << "STREAMING" << std::endl;
    for (auto& w : writers)
      w.join();  // until killed
    fail("victim outlived its writers");
  }
  std::vector<std::uint64_t> last(kMaxNodes, 0);
  std::uint64_t observed = 0, words = 0;
  auto check = [&] {
    for (auto s : n.peers) {
      const std::byte* slot = n.mem(kTable) + s * kStride;
      const std::uint64_t g = load_acquire(slot + kSlot);
      if (g < last[s]) fail("guard from " + std::to_string(s) + " went backwards");
      if (g == last[s]) continue;
      last[s] = g;
      ++observed;
      for (std::size_t w = 0; w < kSlot; w += 8) {
        const std::uint64_t v = load_relaxed(slot + w);
        ++words;
        if (v < g) {
          fail("guard " + std::to_string(g) + " from node " + std::to_string(s) +
               " observed over older data " + std::to_string(v) + " at word " +
               std::to_string(w / 8));
        }
      }
    }
  };
  const auto start = Clock::now();
  Clock::time_point suspected_at{};
  st::IdleWaiter waiter(*n.t, st::IdlePolicy{50us, 5ms});
  while (true) {
    waiter.step([&] {
      const auto before = observed;
      n.pump();
      check();
      return observed != before;
    });
    const auto now = Clock::now();
    if (victim >= 0 && n.suspected.contains(static_cast<st::NodeId>(victim)) &&
        suspected_at == Clock::time_point{}) {
      suspected_at = now;
    }
    for (auto p : n.peers) {
      if (n.suspected.contains(p) && static_cast<std::int64_t>(p) != victim) {
        fail("unexpected suspicion of " + std::to_string(p));
      }
    }
    const bool victim_done =
        victim < 0 || (suspected_at != Clock::time_point{} && now - suspected_at > 500ms);
    if (now - start > duration && victim_done) break;
    if (now - start > duration + 20s) fail("victim never suspected");
  }
  stop = true;
  for (auto& w : writers)
    w.join();
  // Tell every survivor how far we got, then wait for the same from them.
  for (auto p : n.peers) {
    if (n.suspected.contains(p)) continue;
    store(n.mem(kControl) + n.id * 64, written[p].load());
    (void)n.write(p, kControl, n.id * 64, kControl, n.id * 64, 8);
  }
  const bool all = n.wait_until(
      [&] {
        check();
        for (auto p : n.peers) {
          if (n.suspected.contains(p)) continue;
          const std::uint64_t done = load_acquire(n.mem(kControl) + p * 64);
          if (done == 0 || last[p] != done) return false;
        }
        return true;
      },
      20s);
  if (!all) fail("final guards never arrived");
  n.barrier(1);
  std::uint64_t sent = 0;
  for (auto p : n.peers)
    sent += written[p].load();
  const auto ms = n.teardown();
  std::cout << "OK sent=" << sent << " observed=" << observed << " words_checked=" << words
            << " teardown_ms=" << ms << std::endl;
}

std::byte pattern(std::uint64_t step, std::size_t i) {
  return static_cast<std::byte>((step * 131 + i * 7 + (i >> 9)) & 0xff);
}

// sizes: node 0 writes 1 B .. 8 MB into node 1's big region at offset 0 and flush against
// the region's end, each followed by a guard; node 1 verifies every byte and acks.
void scenario_sizes(Node& n) {
  const std::size_t sizes[] = {1,   7, 64, 4096, 65536, std::size_t{1} << 20, std::size_t{4} << 20,
                               kBig};
  constexpr std::size_t kStep = 16, kAck = 24;
  std::uint64_t step = 0;
  const st::NodeId other = n.peers.at(0);
  for (std::size_t s : sizes) {
    for (std::size_t off : {std::size_t{0}, kBig - s}) {
      ++step;
      if (n.id == 0) {
        std::byte* big = n.mem(kBigRegion);
        for (std::size_t i = 0; i < s; ++i)
          big[off + i] = pattern(step, i);
        if (n.write(other, kBigRegion, off, kBigRegion, off, s) != st::Status::ok) fail("write");
        store(n.mem(kControl) + kStep, step);
        if (n.write(other, kControl, kStep, kControl, kStep, 8) != st::Status::ok) fail("guard");
        if (!n.wait_until([&] { return load_acquire(n.mem(kControl) + 64 + kAck) >= step; }, 20s)) {
          fail("no ack for step " + std::to_string(step));
        }
      } else {
        if (!n.wait_until([&] { return load_acquire(n.mem(kControl) + kStep) >= step; }, 20s)) {
          fail("guard for step " + std::to_string(step) + " never came");
        }
        const std::byte* big = n.mem(kBigRegion);
        for (std::size_t i = 0; i < s; ++i) {
          if (big[off + i] != pattern(step, i)) {
            fail("size " + std::to_string(s) + " offset " + std::to_string(off) + ": byte " +
                 std::to_string(i) + " wrong");
          }
        }
        store(n.mem(kControl) + 64 + kAck, step);
        if (n.write(other, kControl, 64 + kAck, kControl, 64 + kAck, 8) != st::Status::ok) {
          fail("ack");
        }
      }
    }
  }
  if (n.id == 0) {
    // Local validation: past the edge, unknown regions, unknown peers.
    if (n.t->write(other, kBigRegion, 0, kBigRegion, kBig - 7, 8) != st::Status::invalid) {
      fail("write past the remote edge was accepted");
    }
    if (n.t->write(other, kBigRegion, kBig - 7, kBigRegion, 0, 8) != st::Status::invalid) {
      fail("write from past the local edge was accepted");
    }
    if (n.t->write(other, kBigRegion, 0, 99, 0, 8) != st::Status::invalid) {
      fail("write to an unknown region was accepted");
    }
    if (n.t->write(77, kBigRegion, 0, kBigRegion, 0, 8) != st::Status::peer_suspected) {
      fail("write to a stranger was accepted");
    }
    auto rd = n.t->remote_region(other, kBigRegion);
    if (!rd || rd->size != kBig) fail("remote descriptor of the big region is wrong");
  }
  n.barrier(1);
  const auto ms = n.teardown();
  std::cout << "OK steps=" << step << " teardown_ms=" << ms << std::endl;
}

// blocks: node 0 sends `count` blocks of varying size with immediate = index; node 1
// keeps at most two receives posted and pauses now and then, so the sender meets
// back-pressure. Order, immediates, lengths and bytes are checked.
void scenario_blocks(Node& n) {
  const auto count = static_cast<std::uint32_t>(n.arg("count", 300));
  auto size_of = [](std::uint32_t i) { return 1 + (i * 7919u + i * i * 13u) % kMaxBlock; };
  auto byte_of = [](std::uint32_t i, std::uint32_t k) {
    return static_cast<std::byte>((i * 31 + k * 17 + (k >> 8)) & 0xff);
  };
  const st::NodeId other = n.peers.at(0);
  std::uint64_t retries = 0;
  if (n.id == 0) {
    std::uint32_t completed = 0;
    for (std::uint32_t i = 0; i < count; ++i) {
      std::byte* src = n.mem(kTx);
      for (std::uint32_t k = 0; k < size_of(i); ++k)
        src[k] = byte_of(i, k);
      const auto deadline = Clock::now() + 20s;
      while (true) {
        const auto ticket = n.t->activity();
        const auto s = n.t->send_block(other, kTx, 0, size_of(i), i);
        if (s == st::Status::ok) break;
        if (s != st::Status::retry) fail("send_block: " + std::string(st::to_string(s)));
        ++retries;
        if (Clock::now() > deadline) fail("send_block stuck on retry");
        n.t->wait(ticket, 1ms);
      }
      // The source may be reused only after BlockSent.
      const bool sent = n.wait_until(
          [&] {
            for (auto& e : n.take()) {
              if (auto* b = std::get_if<st::BlockSent>(&e)) {
                if (b->immediate != completed) fail("BlockSent out of order");
                ++completed;
              }
            }
            return completed > i;
          },
          20s);
      if (!sent) fail("no BlockSent for block " + std::to_string(i));
      if (!n.suspected.empty()) fail("suspicion during blocks");
    }
  } else {
    std::uint32_t posted = 0, received = 0;
    const auto deadline = Clock::now() + 60s;
    while (received < count) {
      if (Clock::now() > deadline) fail("blocks stalled at " + std::to_string(received));
      while (posted < count && posted < received + 2) {
        if (n.t->post_receive(other, kRx, (posted % kRxSlots) * std::uint64_t{kMaxBlock},
                              kMaxBlock) != st::Status::ok) {
          fail("post_receive");
        }
        ++posted;
      }
      const bool got = n.wait_until(
          [&] {
            bool any = false;
            for (auto& e : n.take()) {
              auto* b = std::get_if<st::BlockReceived>(&e);
              if (b == nullptr) continue;
              any = true;
              if (b->immediate != received) {
                fail("block immediate " + std::to_string(b->immediate) + " where " +
                     std::to_string(received) + " was due");
              }
              if (b->length != size_of(received)) fail("block length wrong");
              const std::byte* dst = n.mem(kRx) + b->offset;
              for (std::uint32_t k = 0; k < b->length; ++k) {
                if (dst[k] != byte_of(received, k)) fail("block byte wrong");
              }
              ++received;
            }
            return any;
          },
          20s);
      if (!got) fail("no block for a while at " + std::to_string(received));
      if (!n.suspected.empty()) fail("suspicion during blocks");
      if (received % 16 == 0) std::this_thread::sleep_for(20ms);  // slow consumer
    }
  }
  n.barrier(1);
  const auto ms = n.teardown();
  std::cout << "OK blocks=" << count << " retries=" << retries << " teardown_ms=" << ms
            << std::endl;
}

// reconnect: view 1 of all members exchanges a value, tears down; the last member leaves;
// the others connect view 2, exchange again and tear down. Every teardown is timed.
void scenario_reconnect(Node& n, std::vector<st::NodeAddress> view) {
  std::int64_t worst = 0;
  for (std::uint64_t epoch = 1; epoch <= 2; ++epoch) {
    if (epoch == 2) {
      view.pop_back();
      if (n.id >= view.size()) break;
      n.connect(epoch, view);
    }
    const std::uint64_t value = epoch * 1000 + n.id;
    store(n.mem(kTable) + n.id * kStride, value);
    for (auto p : n.peers) {
      if (n.write(p, kTable, n.id * kStride, kTable, n.id * kStride, 8) != st::Status::ok) {
        fail("write in view " + std::to_string(epoch));
      }
    }
    const bool seen = n.wait_until(
        [&] {
          for (auto p : n.peers) {
            if (load_acquire(n.mem(kTable) + p * kStride) != epoch * 1000 + p) return false;
          }
          return true;
        },
        20s);
    if (!seen) fail("values of view " + std::to_string(epoch) + " never arrived");
    n.barrier(epoch);
    const auto start = Clock::now();
    n.t->disconnect();
    worst = std::max<std::int64_t>(
        worst, std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
  }
  const auto ms = n.teardown();
  std::cout << "OK disconnect_ms=" << worst << " teardown_ms=" << ms << std::endl;
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// idle: connected and idle for `ms`; the polling loop must sleep (spin 200 us, then block
// on the wake-up source). Reports this process's CPU use over the period.
void scenario_idle(Node& n) {
  const auto period = std::chrono::milliseconds(n.arg("ms", 1000));
  n.barrier(1);
  st::IdleWaiter waiter(*n.t, st::IdlePolicy{});
  const double cpu0 = cpu_seconds();
  const auto start = Clock::now();
  while (Clock::now() - start < period) {
    waiter.step([&] { return !n.take().empty(); });
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double pct = 100.0 * (cpu_seconds() - cpu0) / wall;
  if (!n.suspected.empty()) fail("suspicion while idle");
  n.barrier(2);
  const auto ms = n.teardown();
  std::cout << "OK cpu_pct=" << pct << " sleeps=" << waiter.sleeps() << " teardown_ms=" << ms
            << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: transport_node <tcp|shm|rdma> <scenario> <id> [key=value...]\n";
    return 2;
  }
  Node n;
  n.kind = argv[1];
  const std::string scenario = argv[2];
  n.id = static_cast<st::NodeId>(std::strtoul(argv[3], nullptr, 10));
  for (int i = 4; i < argc; ++i) {
    std::string kv = argv[i];
    auto eq = kv.find('=');
    if (eq != std::string::npos) n.args[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  st::test::NodeOptions opts;
  opts.suspicion_timeout = std::chrono::milliseconds(n.arg("suspicion_ms", 500));
  if (const char* ns = std::getenv("SPINDLE_SHM_NAMESPACE")) opts.shm_namespace = ns;
  st::NodeAddress self;
  try {
    auto made = st::test::make_transport(n.kind, n.id, opts);
    n.t = std::move(made.transport);
    self = made.address;
    (void)n.t->create_region(kTable, kStride * kMaxNodes);
    (void)n.t->create_region(kBigRegion, kBig);
    (void)n.t->create_region(kRx, std::size_t{kMaxBlock} * kRxSlots);
    (void)n.t->create_region(kTx, kMaxBlock);
    (void)n.t->create_region(kControl, 64 * kMaxNodes);
    for (st::NodeId p = 0; p < kMaxNodes; ++p)
      (void)n.t->create_region(kStaging + p, kStride);
  } catch (const std::exception& e) {
    fail(std::string("setup: ") + e.what());
  }
  std::cout << "READY " << n.id << " " << (self.host.empty() ? "-" : self.host) << " " << self.port
            << std::endl;
  std::string line;
  if (!std::getline(std::cin, line)) fail("no MEMBERS line");
  std::istringstream in(line);
  std::string word;
  std::size_t count = 0;
  in >> word >> count;
  std::vector<st::NodeAddress> view;
  for (std::size_t i = 0; i < count; ++i) {
    st::NodeAddress a;
    in >> a.id >> a.host >> a.port;
    if (a.host == "-") a.host.clear();
    view.push_back(a);
  }
  n.connect(1, view);
  if (scenario == "order") {
    scenario_order(n);
  } else if (scenario == "sizes") {
    scenario_sizes(n);
  } else if (scenario == "blocks") {
    scenario_blocks(n);
  } else if (scenario == "reconnect") {
    scenario_reconnect(n, view);
  } else if (scenario == "idle") {
    scenario_idle(n);
  } else {
    fail("unknown scenario " + scenario);
  }
  return 0;
}
