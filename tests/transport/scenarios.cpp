// The conformance scenarios as non-blocking step machines (see scenarios.hpp).
#include "scenarios.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <span>
#include <stdexcept>
#include <utility>

namespace spindle::transport::test {

using ns = std::chrono::nanoseconds;
using namespace std::chrono_literals;

void create_regions(Transport& t, std::size_t big_bytes) {
  (void)t.create_region(kTable, kStride * kMaxNodes);
  (void)t.create_region(kBigRegion, big_bytes);
  (void)t.create_region(kRx, std::size_t{kMaxBlock} * kRxSlots);
  (void)t.create_region(kTx, kMaxBlock);
  (void)t.create_region(kControl, 64 * kMaxNodes);
  for (NodeId p = 0; p < kMaxNodes; ++p)
    (void)t.create_region(kStaging + p, kSlot + 8);
}

std::int64_t Member::arg(const std::string& key, std::int64_t fallback) const {
  auto it = args.find(key);
  return it == args.end() ? fallback : std::stoll(it->second);
}

void Scenario::fail(std::string why) {
  if (done()) return;
  failure_ = std::move(why);
  done_.store(true, std::memory_order_release);
}

void Scenario::finish(std::string facts) {
  if (done()) return;
  result_ = std::move(facts);
  done_.store(true, std::memory_order_release);
}

double fact(const std::string& facts, const std::string& key) {
  const std::string k = key + "=";
  for (std::size_t at = facts.find(k); at != std::string::npos; at = facts.find(k, at + 1)) {
    if (at == 0 || facts[at - 1] == ' ') return std::strtod(facts.c_str() + at + k.size(), nullptr);
  }
  return -1;
}

namespace {

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

constexpr ns kWaitLimit = 20s;  // any single wait for a peer

// What every scenario needs: peers, suspicions, bounded waits, a barrier. Everything here
// belongs to part 0 unless said otherwise.
class Base : public Scenario {
 protected:
  explicit Base(Member& m) : m_(m) { set_view(m.view); }

  void set_view(const std::vector<NodeAddress>& view) {
    peers_.clear();
    for (const auto& a : view) {
      if (a.id != m_.id) peers_.push_back(a.id);
    }
    suspected_.clear();
    inbox_.clear();
  }

  std::byte* mem(RegionId r) const { return m_.t->local_region(r)->bytes.data(); }
  [[nodiscard]] ns now() const { return m_.now(); }
  [[nodiscard]] bool live(NodeId p) const { return !suspected_.contains(p); }

  // Polls events into the inbox; reports each new suspicion to the harness.
  bool pump() {
    const std::size_t before = inbox_.size();
    m_.t->poll(inbox_);
    for (std::size_t i = before; i < inbox_.size(); ++i) {
      if (auto* s = std::get_if<Suspicion>(&inbox_[i])) {
        if (suspected_.contains(s->peer)) continue;
        m_.say("SUSPECT " + std::to_string(s->peer) + " " + std::string(to_string(s->reason)) +
               " " + std::to_string(now().count()) + " " + s->detail);
        suspected_.emplace(s->peer, *s);
      }
    }
    return inbox_.size() > before;
  }
  std::vector<Event> take() {
    pump();
    return std::exchange(inbox_, {});
  }

  // A write that may meet back-pressure: true when done with (posted, or the peer is gone);
  // false means "call again". Any other status fails the scenario.
  bool post(NodeId peer, RegionId local, std::uint64_t loff, RegionId remote, std::uint64_t roff,
            std::size_t len) {
    const Status s = m_.t->write(peer, local, loff, remote, roff, len);
    if (s == Status::ok || s == Status::peer_suspected) return true;
    if (s != Status::retry) fail("write to " + std::to_string(peer) + ": " + to_string(s).data());
    return false;
  }

  // Starts a bounded wait; expired() fails the scenario once it runs out.
  void arm(ns limit = kWaitLimit) { deadline_ = now() + limit; }
  bool expired(const std::string& what) {
    if (now() <= deadline_) return false;
    fail(what + " timed out");
    return true;
  }

  // Control word `field` of our slot at every live peer := v, then wait for the same from
  // every live peer (a peer that left or died counts as arrived). Call until it returns
  // true; one barrier at a time.
  bool barrier(std::uint64_t v, std::size_t field = 8) {
    if (barrier_value_ != v) {
      barrier_value_ = v;
      barrier_posted_.assign(kMaxNodes, false);
      store(mem(kControl) + m_.id * 64 + field, v);
      arm();
    }
    bool all = true;
    for (auto p : peers_) {
      if (!live(p) || barrier_posted_[p]) continue;
      barrier_posted_[p] = post(p, kControl, m_.id * 64 + field, kControl, m_.id * 64 + field, 8);
      all = all && barrier_posted_[p];
    }
    if (!all) return false;
    for (auto p : peers_) {
      if (live(p) && load_acquire(mem(kControl) + p * 64 + field) < v) {
        (void)expired("barrier " + std::to_string(v));
        return false;
      }
    }
    return true;
  }

  Member& m_;
  std::vector<NodeId> peers_;
  std::map<NodeId, Suspicion> suspected_;
  std::vector<Event> inbox_;

 private:
  ns deadline_{};
  std::uint64_t barrier_value_ = 0;
  std::vector<bool> barrier_posted_;
};

// order: every member streams versions k = 1, 2, ... to every peer, one writer part per
// peer: data words all = k into slot k % kVersions of its table row, then the guard = k, as
// two writes. Part 0 checks every guard g it observes against the data of slot g %
// kVersions: every word must be exactly g unless the writer lapped the slot meanwhile (a
// re-read of the guard tells). A slot is never rewritten while it is read unlapped, so a
// torn word (bytes inside one write have no order; tcp lands a frame by recv()) cannot
// pass for a stale one. Runs for duration_us and until min_updates were posted; with
// victim=<id>, that member streams until the harness kills (or crashes) it, and the
// survivors must suspect it and keep streaming to each other for settle_us. With batch=1
// each data write and its guard are posted as one write_batch (what remains of it after
// back-pressure is posted again).
class Order : public Base {
 public:
  explicit Order(Member& m)
      : Base(m),
        duration_(std::chrono::microseconds(m.arg("duration_us", 1'500'000))),
        settle_(std::chrono::microseconds(m.arg("settle_us", 500'000))),
        victim_(m.arg("victim", -1)),
        min_updates_(static_cast<std::uint64_t>(m.arg("min_updates", 0))),
        batch_(m.arg("batch", 0) != 0),
        written_(kMaxNodes),
        last_(kMaxNodes, 0),
        done_posted_(kMaxNodes, false) {
    for (auto p : peers_)
      writers_.push_back(Writer{p});
    start_ = now();
  }

  [[nodiscard]] std::size_t parts() const override { return 1 + writers_.size(); }

  bool step(std::size_t part) override {
    if (done()) return false;
    return part == 0 ? step_main() : step_writer(writers_[part - 1]);
  }

 private:
  struct Writer {
    NodeId peer;
    std::uint64_t k = 0;
    int phase = 0;  // 0: next version, 1: data write, 2: guard write, 3: finished
  };

  bool step_writer(Writer& w) {
    if (w.phase == 3) return false;
    const RegionId staging = kStaging + w.peer;
    if (w.phase == 0) {
      if (stop_.load(std::memory_order_acquire)) {
        w.phase = 3;
        writers_done_.fetch_add(1, std::memory_order_acq_rel);
        return true;
      }
      ++w.k;
      std::byte* src = mem(staging);
      for (std::size_t i = 0; i <= kSlot; i += 8)
        store(src + i, w.k);
      w.phase = 1;
    }
    const std::uint64_t row = m_.id * kStride;
    if (batch_) {
      const std::array<WriteOp, 2> ops{
          WriteOp{staging, 0, kTable, row + (w.k % kVersions) * kSlot, kSlot},
          WriteOp{staging, kSlot, kTable, row + kVersions * kSlot, 8}};
      const auto first = static_cast<std::size_t>(w.phase - 1);
      const auto r = m_.t->write_batch(w.peer, std::span(ops).subspan(first));
      w.phase += static_cast<int>(r.posted);
      if (r.status == Status::retry) return false;
      if (r.status != Status::ok && r.status != Status::peer_suspected) {
        fail("write_batch to " + std::to_string(w.peer) + ": " + to_string(r.status).data());
        return false;
      }
      if (r.status == Status::ok && r.posted != ops.size() - first) {
        fail("write_batch posted " + std::to_string(r.posted) + " of " +
             std::to_string(ops.size() - first) + " ops and said ok");
        return false;
      }
    } else if (w.phase == 1) {
      if (!post(w.peer, staging, 0, kTable, row + (w.k % kVersions) * kSlot, kSlot)) return false;
      w.phase = 2;
    }
    if (!batch_ && !post(w.peer, staging, kSlot, kTable, row + kVersions * kSlot, 8)) return false;
    written_[w.peer].store(w.k, std::memory_order_release);
    total_.fetch_add(1, std::memory_order_relaxed);
    w.phase = 0;
    return true;
  }

  // Every guard newer than the last one seen must sit over exactly its own data.
  bool check() {
    bool any = false;
    std::uint64_t words[kSlot / 8];
    for (auto s : peers_) {
      const std::byte* row = mem(kTable) + s * kStride;
      const std::byte* guard = row + kVersions * kSlot;
      const std::uint64_t g = load_acquire(guard);
      if (g < last_[s]) fail("guard from " + std::to_string(s) + " went backwards");
      if (g <= last_[s]) continue;
      last_[s] = g;
      ++observed_;
      any = true;
      const std::byte* slot = row + (g % kVersions) * kSlot;
      for (std::size_t w = 0; w < kSlot / 8; ++w)
        words[w] = load_relaxed(slot + w * 8);
      std::atomic_thread_fence(std::memory_order_acquire);  // the reads above happen first
      // Data of version g + kVersions (the next to use this slot) lands after guard
      // g + kVersions - 1: below that, nothing overwrote the slot while we read it.
      if (load_relaxed(guard) >= g + kVersions - 1) {
        ++lapped_;
        continue;
      }
      for (std::size_t w = 0; w < kSlot / 8; ++w) {
        ++words_;
        if (words[w] != g) {
          fail("guard " + std::to_string(g) + " from node " + std::to_string(s) +
               " observed over data " + std::to_string(words[w]) + " at word " + std::to_string(w));
        }
      }
    }
    return any;
  }

  bool step_main() {
    if (static_cast<std::int64_t>(m_.id) == victim_) {
      if (!announced_) m_.say("STREAMING");
      announced_ = true;
      return false;  // streams until killed
    }
    bool worked = pump();
    worked = check() || worked;
    // Once in the barrier a peer may finish and leave; before it, every survivor streams.
    for (auto p : peers_) {
      if (phase_ != Phase::barrier && !live(p) && static_cast<std::int64_t>(p) != victim_) {
        fail("unexpected suspicion of " + std::to_string(p) + ": " + suspected_.at(p).detail);
      }
    }
    switch (phase_) {
      case Phase::streaming: {
        const ns t = now();
        if (victim_ >= 0 && !live(static_cast<NodeId>(victim_)) && suspected_at_ < ns::zero()) {
          suspected_at_ = t;
        }
        const bool victim_done =
            victim_ < 0 || (suspected_at_ >= ns::zero() && t - suspected_at_ > settle_);
        const bool enough = total_.load(std::memory_order_relaxed) >= min_updates_;
        if (t - start_ > duration_ && victim_done && enough) {
          stop_.store(true, std::memory_order_release);
          phase_ = Phase::stopping;
          return true;
        }
        if (t - start_ > duration_ + kWaitLimit) {
          fail(victim_done ? "too few updates in the time limit" : "victim never suspected");
        }
        return worked;
      }
      case Phase::stopping: {
        if (writers_done_.load(std::memory_order_acquire) < writers_.size()) return worked;
        // Tell every survivor how far we got (+1: zero means "not yet").
        bool all = true;
        for (auto p : peers_) {
          if (!live(p) || done_posted_[p]) continue;
          store(mem(kControl) + m_.id * 64, written_[p].load(std::memory_order_acquire) + 1);
          done_posted_[p] = post(p, kControl, m_.id * 64, kControl, m_.id * 64, 8);
          all = all && done_posted_[p];
        }
        if (!all) return worked;
        phase_ = Phase::final_guards;
        arm();
        return true;
      }
      case Phase::final_guards: {
        for (auto p : peers_) {
          if (!live(p)) continue;
          const std::uint64_t d = load_acquire(mem(kControl) + p * 64);
          if (d == 0 || last_[p] != d - 1) {
            (void)expired("final guards");
            return worked;
          }
        }
        phase_ = Phase::barrier;
        return true;
      }
      case Phase::barrier:
        if (!barrier(1)) return worked;
        finish("sent=" + std::to_string(total_.load()) + " observed=" + std::to_string(observed_) +
               " lapped=" + std::to_string(lapped_) + " words_checked=" + std::to_string(words_));
        return true;
    }
    return worked;
  }

  enum class Phase : std::uint8_t { streaming, stopping, final_guards, barrier };

  const ns duration_, settle_;
  const std::int64_t victim_;
  const std::uint64_t min_updates_;
  const bool batch_;
  std::vector<Writer> writers_;
  std::vector<std::atomic<std::uint64_t>> written_;  // per peer: last version fully posted
  std::atomic<std::uint64_t> total_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> writers_done_{0};
  // Part 0 only.
  Phase phase_ = Phase::streaming;
  ns start_{};
  ns suspected_at_{-1};
  std::vector<std::uint64_t> last_;
  std::vector<bool> done_posted_;
  std::uint64_t observed_ = 0, lapped_ = 0, words_ = 0;
  bool announced_ = false;
};

std::byte pattern(std::uint64_t step, std::size_t i) {
  return static_cast<std::byte>((step * 131 + i * 7 + (i >> 9)) & 0xff);
}

// sizes: member 0 writes 1 B .. the whole big region into member 1's copy at offset 0 and
// flush against the region's end, each followed by a guard; member 1 verifies every byte
// and acks. Then member 0 checks the local validation (edges, unknown region, stranger).
class Sizes : public Base {
 public:
  explicit Sizes(Member& m) : Base(m) {
    const std::size_t big = m.t->local_region(kBigRegion)->bytes.size();
    for (std::size_t s : {std::size_t{1}, std::size_t{7}, std::size_t{64}, std::size_t{4096},
                          std::size_t{65536}, std::size_t{1} << 20, std::size_t{4} << 20, big}) {
      if (s > big) continue;
      if (!cases_.empty() && cases_.back().first == s) continue;
      cases_.emplace_back(s, 0);
      cases_.emplace_back(s, big - s);
    }
    other_ = peers_.at(0);
    arm();
  }
  [[nodiscard]] std::size_t parts() const override { return 1; }

  bool step(std::size_t /*part*/) override {
    if (done()) return false;
    bool worked = pump();
    if (next_ == cases_.size()) {  // in the barrier a peer may finish and leave
      if (m_.id == 0 && !validated_) {
        validate();
        validated_ = true;
      }
      if (!barrier(1)) return worked;
      finish("steps=" + std::to_string(cases_.size()));
      return true;
    }
    if (!live(other_)) {
      fail("suspicion during sizes: " + suspected_.at(other_).detail);
      return true;
    }
    const auto [size, off] = cases_[next_];
    const std::uint64_t step = next_ + 1;
    constexpr std::size_t kStep = 16, kAck = 24;
    if (m_.id == 0) {
      if (phase_ == 0) {
        std::byte* big = mem(kBigRegion);
        for (std::size_t i = 0; i < size; ++i)
          big[off + i] = pattern(step, i);
        store(mem(kControl) + kStep, step);
        phase_ = 1;
        worked = true;
      }
      if (phase_ == 1) {
        if (!post(other_, kBigRegion, off, kBigRegion, off, size)) return worked;
        phase_ = 2;
      }
      if (phase_ == 2) {
        if (!post(other_, kControl, kStep, kControl, kStep, 8)) return worked;
        phase_ = 3;
        arm();
      }
      if (load_acquire(mem(kControl) + 64 + kAck) < step) {
        (void)expired("ack of step " + std::to_string(step));
        return worked;
      }
    } else {
      if (phase_ == 0) {
        if (load_acquire(mem(kControl) + kStep) < step) {
          (void)expired("guard of step " + std::to_string(step));
          return worked;
        }
        const std::byte* big = mem(kBigRegion);
        for (std::size_t i = 0; i < size; ++i) {
          if (big[off + i] != pattern(step, i)) {
            fail("size " + std::to_string(size) + " offset " + std::to_string(off) + ": byte " +
                 std::to_string(i) + " wrong");
            return true;
          }
        }
        store(mem(kControl) + 64 + kAck, step);
        phase_ = 1;
      }
      if (!post(other_, kControl, 64 + kAck, kControl, 64 + kAck, 8)) return true;
    }
    ++next_;
    phase_ = 0;
    arm();
    return true;
  }

 private:
  void validate() {
    const std::size_t big = m_.t->local_region(kBigRegion)->bytes.size();
    auto expect = [&](Status got, Status want, const char* what) {
      if (got != want) fail(std::string(what) + ": got " + to_string(got).data());
    };
    expect(m_.t->write(other_, kBigRegion, 0, kBigRegion, big - 7, 8), Status::invalid,
           "write past the remote edge");
    expect(m_.t->write(other_, kBigRegion, big - 7, kBigRegion, 0, 8), Status::invalid,
           "write from past the local edge");
    expect(m_.t->write(other_, kBigRegion, 0, 99, 0, 8), Status::invalid,
           "write to an unknown region");
    expect(m_.t->write(77, kBigRegion, 0, kBigRegion, 0, 8), Status::peer_suspected,
           "write to a stranger");
    expect(m_.t->write(77, kBigRegion, big - 7, kBigRegion, 0, 8), Status::invalid,
           "write from past the local edge to a stranger (our side is checked first)");
    // A batch stops at its first bad op: the ops before it are posted, none after it.
    auto expect_batch = [&](NodeId to, std::span<const WriteOp> ops, std::size_t posted,
                            Status want, const char* what) {
      const auto r = m_.t->write_batch(to, ops);
      if (r.posted != posted || r.status != want) {
        fail(std::string(what) + ": got " + std::to_string(r.posted) + " posted, " +
             to_string(r.status).data());
      }
    };
    const WriteOp good{kBigRegion, 0, kBigRegion, 0, 8};
    const WriteOp past_remote{kBigRegion, 0, kBigRegion, big - 7, 8};
    const WriteOp past_local{kBigRegion, big - 7, kBigRegion, 0, 8};
    expect_batch(other_, std::array{good, past_remote, good}, 1, Status::invalid,
                 "batch with a write past the remote edge second");
    expect_batch(other_, std::array{good, good, past_local}, 2, Status::invalid,
                 "batch with a write from past the local edge third");
    expect_batch(other_, std::array{past_local, good}, 0, Status::invalid,
                 "batch starting with a write from past the local edge");
    expect_batch(77, std::array{good}, 0, Status::peer_suspected, "batch to a stranger");
    expect_batch(77, std::array{past_local, good}, 0, Status::invalid,
                 "batch to a stranger starting with a write from past the local edge");
    expect_batch(other_, {}, 0, Status::ok, "empty batch");
    auto rd = m_.t->remote_region(other_, kBigRegion);
    if (!rd || rd->size != big) fail("remote descriptor of the big region is wrong");
  }

  std::vector<std::pair<std::size_t, std::size_t>> cases_;  // (size, offset)
  std::size_t next_ = 0;
  int phase_ = 0;
  NodeId other_ = 0;
  bool validated_ = false;
};

// blocks: member 0 sends `count` blocks of varying size with immediate = index, up to
// kMaxBlock / max_block (at most 8) in flight, reusing a source only after its BlockSent;
// member 1 keeps at most two receives posted and pauses for
// pause_ms every 16 blocks (the simulator slows it instead), so the sender meets
// back-pressure. Order, immediates, lengths and bytes are checked.
class Blocks : public Base {
 public:
  explicit Blocks(Member& m)
      : Base(m),
        count_(static_cast<std::uint32_t>(m.arg("count", 300))),
        max_(static_cast<std::uint32_t>(m.arg("max_block", kMaxBlock))),
        window_(std::clamp<std::uint32_t>(kMaxBlock / max_, 1, 8)),
        pause_(std::chrono::milliseconds(m.arg("pause_ms", 20))) {
    other_ = peers_.at(0);
    arm();
  }
  [[nodiscard]] std::size_t parts() const override { return 1; }

  bool step(std::size_t /*part*/) override {
    if (done()) return false;
    if (complete_) {
      if (!barrier(1)) return pump();
      finish("blocks=" + std::to_string(count_) + " retries=" + std::to_string(retries_));
      return true;
    }
    const auto events = take();
    if (!live(other_)) {
      fail("suspicion during blocks: " + suspected_.at(other_).detail);
      return true;
    }
    return m_.id == 0 ? send(events) : receive(events);
  }

 private:
  [[nodiscard]] std::uint32_t size_of(std::uint32_t i) const {
    return 1 + (i * 7919u + i * i * 13u) % max_;
  }
  static std::byte byte_of(std::uint32_t i, std::uint32_t k) {
    return static_cast<std::byte>((i * 31 + k * 17 + (k >> 8)) & 0xff);
  }

  bool send(const std::vector<Event>& events) {
    bool worked = !events.empty();
    for (const auto& e : events) {
      if (const auto* b = std::get_if<BlockSent>(&e)) {
        if (b->immediate != sent_done_) fail("BlockSent out of order");
        ++sent_done_;
        arm();
      }
    }
    complete_ = sent_done_ == count_;
    // A source is reused only after its BlockSent: at most `window_` blocks in flight.
    if (sent_ >= sent_done_ + window_ || sent_ == count_) {
      if (!worked) (void)expired("BlockSent of block " + std::to_string(sent_done_));
      return worked;
    }
    const std::uint64_t src_off = std::uint64_t{sent_ % window_} * max_;
    if (!filled_) {
      std::byte* src = mem(kTx) + src_off;
      for (std::uint32_t k = 0; k < size_of(sent_); ++k)
        src[k] = byte_of(sent_, k);
      filled_ = true;
    }
    const Status s = m_.t->send_block(other_, kTx, src_off, size_of(sent_), sent_);
    if (s == Status::retry) {
      ++retries_;
      (void)expired("send_block retries");
      return worked;
    }
    if (s != Status::ok) {
      fail("send_block: " + std::string(to_string(s)));
      return true;
    }
    ++sent_;
    filled_ = false;
    arm();
    return true;
  }

  bool receive(const std::vector<Event>& events) {
    bool worked = !events.empty();
    for (const auto& e : events) {
      const auto* b = std::get_if<BlockReceived>(&e);
      if (b == nullptr) continue;
      if (b->immediate != received_) {
        fail("block immediate " + std::to_string(b->immediate) + " where " +
             std::to_string(received_) + " was due");
        return true;
      }
      if (b->length != size_of(received_)) fail("block length wrong");
      const std::byte* dst = mem(kRx) + b->offset;
      for (std::uint32_t k = 0; k < b->length; ++k) {
        if (dst[k] != byte_of(received_, k)) {
          fail("block " + std::to_string(received_) + " byte " + std::to_string(k) + " wrong");
          return true;
        }
      }
      ++received_;
      arm();
      if (received_ % 16 == 0 && pause_ > ns::zero()) m_.pause(pause_);  // slow consumer
    }
    complete_ = received_ == count_;
    while (posted_ < count_ && posted_ < received_ + 2) {
      const Status s =
          m_.t->post_receive(other_, kRx, (posted_ % kRxSlots) * std::uint64_t{max_}, max_);
      if (s != Status::ok) {
        fail("post_receive: " + std::string(to_string(s)));
        return true;
      }
      ++posted_;
      worked = true;
    }
    if (!worked) (void)expired("block " + std::to_string(received_));
    return worked;
  }

  const std::uint32_t count_, max_, window_;
  const ns pause_;
  NodeId other_ = 0;
  std::uint32_t sent_ = 0, sent_done_ = 0, received_ = 0, posted_ = 0;
  std::uint64_t retries_ = 0;
  bool filled_ = false;
  bool complete_ = false;
};

// reconnect: view 1 of all members exchanges a value and tears down; the last member
// leaves; the others connect view 2, exchange again and tear down. Every disconnect is
// timed. A value is re-sent while waiting: a peer still tearing down the old view may drop
// what reached it early.
class Reconnect : public Base {
 public:
  explicit Reconnect(Member& m)
      : Base(m), view_(m.view), resend_(std::chrono::microseconds(m.arg("resend_us", 50'000))) {
    start_view();
  }
  [[nodiscard]] std::size_t parts() const override { return 1; }

  bool step(std::size_t /*part*/) override {
    if (done()) return false;
    bool worked = pump();
    if (!exchanged_) {
      if (now() >= resend_at_) {
        send_value();
        worked = true;
      }
      for (auto p : peers_) {
        if (!live(p)) {
          fail("peer " + std::to_string(p) + " suspected in view " + std::to_string(epoch_) +
               " before its value arrived: " + suspected_.at(p).detail);
          return true;
        }
        if (load_acquire(mem(kTable) + p * kStride) != epoch_ * 1000 + p) {
          (void)expired("values of view " + std::to_string(epoch_));
          return worked || m_.virtual_time;  // the re-send clock must keep running
        }
      }
      exchanged_ = true;
    }
    if (!barrier(epoch_)) return worked;
    const ns start = now();
    m_.t->disconnect();
    worst_ = std::max(worst_, now() - start);
    view_.pop_back();
    if (epoch_ == 2 || m_.id >= view_.size()) {
      finish("disconnect_ms=" + std::to_string(worst_.count() / 1'000'000));
      return true;
    }
    ++epoch_;
    const Status s = m_.t->connect(view_, epoch_, 10s);
    if (s != Status::ok) {
      pump();
      fail("connect view " + std::to_string(epoch_) + ": " + std::string(to_string(s)));
      return true;
    }
    set_view(view_);
    start_view();
    return true;
  }

 private:
  void start_view() {
    store(mem(kTable) + m_.id * kStride, epoch_ * 1000 + m_.id);
    exchanged_ = false;
    resend_at_ = now();
    arm();
  }
  void send_value() {
    for (auto p : peers_) {
      if (m_.t->write(p, kTable, m_.id * kStride, kTable, m_.id * kStride, 8) == Status::invalid) {
        fail("write in view " + std::to_string(epoch_) + " was invalid");
      }
    }
    resend_at_ = now() + resend_;
  }

  std::vector<NodeAddress> view_;
  const ns resend_;
  std::uint64_t epoch_ = 1;
  bool exchanged_ = false;
  ns resend_at_{};
  ns worst_{};
};

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

// idle: connected and idle for duration_us; the driver's polling loop must sleep on the
// transport's wake-up source. Reports this process's CPU use over the period (processes
// only: the simulator has no CPU to measure and never runs an idle actor).
class Idle : public Base {
 public:
  explicit Idle(Member& m)
      : Base(m), period_(std::chrono::microseconds(m.arg("duration_us", 1'000'000))) {}
  [[nodiscard]] std::size_t parts() const override { return 1; }

  bool step(std::size_t /*part*/) override {
    if (done()) return false;
    const bool worked = !take().empty();
    // In the final barrier a peer may finish and leave; before it nobody may be suspected.
    if (phase_ < 2 && !suspected_.empty()) fail("suspicion while idle");
    if (phase_ == 0) {
      if (!barrier(1)) return worked;
      phase_ = 1;
      cpu0_ = cpu_seconds();
      start_ = now();
      return true;
    }
    if (phase_ == 1) {
      if (now() - start_ < period_) return worked;
      const double wall = std::chrono::duration<double>(now() - start_).count();
      pct_ = 100.0 * (cpu_seconds() - cpu0_) / wall;
      phase_ = 2;
    }
    if (!barrier(2)) return worked;
    finish("cpu_pct=" + std::to_string(pct_));
    return true;
  }

 private:
  const ns period_;
  int phase_ = 0;
  double cpu0_ = 0, pct_ = 0;
  ns start_{};
};

}  // namespace

std::unique_ptr<Scenario> make_scenario(const std::string& name, Member& member) {
  if (name == "order") return std::make_unique<Order>(member);
  if (name == "sizes") return std::make_unique<Sizes>(member);
  if (name == "blocks") return std::make_unique<Blocks>(member);
  if (name == "reconnect") return std::make_unique<Reconnect>(member);
  if (name == "idle") return std::make_unique<Idle>(member);
  throw std::invalid_argument("unknown scenario '" + name + "'");
}

}  // namespace spindle::transport::test
