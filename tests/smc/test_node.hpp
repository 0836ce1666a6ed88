// One participant for SMC tests and benchmarks: SST + predicates + SMC + predicate loop on
// a transport, an application sender per subgroup (count, pacing, silence) and a
// delivery log. Used by the simulator tests (run_once() from an actor) and by the
// multi-process node (start() on its own predicate thread).
//
// Threading: send_some() runs on the application thread (or the simulator actor); the
// upcall records into `log` on the predicate thread; read `log` after the loop stopped.
#pragma once

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "delivery_log.hpp"
#include "smc/smc.hpp"
#include "sst/predicate_loop.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::testing {

struct SendPlan {
  std::uint64_t count = 0;              // messages to send in this subgroup
  std::chrono::nanoseconds spacing{0};  // pause after each message (slowed sender)
  std::uint32_t max_batch = 0;          // at most this many per call (0 = no limit)
  std::uint32_t size = 0;               // every payload this long (0: random up to max)
};

class TestNode {
 public:
  TestNode(transport::Transport& t, const group::View& g, sst::Clock clock, std::uint64_t salt,
           bool record = true)
      : group_(g),
        salt_(salt),
        record_(record),
        clock_(clock),
        sst_(t, g, clock),
        smc_(sst_, predicates_,
             [this](std::uint32_t sg, std::span<const smc::Message> batch) {
               on_deliver(sg, batch);
             }),
        loop_(sst_, predicates_) {
    log.node = t.self();
    plans_.resize(g.subgroups.size());
    next_.assign(g.subgroups.size(), 0);
    next_time_.assign(g.subgroups.size(), std::chrono::nanoseconds{0});
    delivered_ = std::make_unique<std::atomic<std::uint64_t>[]>(g.subgroups.size());
    for (std::size_t s = 0; s < g.subgroups.size(); ++s)
      delivered_[s].store(0);
    // Barrier requests from other threads reach the SST on the predicate thread.
    predicates_.add(
        sst::PredicateKind::recurrent,
        [this] { return barrier_request_.load(std::memory_order_acquire) > barrier_set_; },
        [this] {
          barrier_set_ = barrier_request_.load(std::memory_order_acquire);
          sst_.set_barrier(barrier_set_);
        });
  }

  // Any thread: ask the predicate thread to publish our barrier column.
  void request_barrier(std::uint64_t v) { barrier_request_.store(v, std::memory_order_release); }
  // Any thread: every member's barrier column reached `v`.
  [[nodiscard]] bool barrier_reached(std::uint64_t v) const {
    for (std::size_t r = 0; r < sst_.rows(); ++r)
      if (sst_.barrier(r) < v) return false;
    return true;
  }

  void plan(std::uint32_t subgroup, SendPlan p) { plans_[subgroup] = p; }

  // Sends what the plans allow now; true if it sent anything or is still pacing.
  bool send_some() {
    bool active = false;
    const auto now = clock_();
    for (std::uint32_t s = 0; s < plans_.size(); ++s) {
      auto& p = plans_[s];
      std::uint32_t in_call = 0;
      while (next_[s] < p.count) {
        if (p.spacing.count() > 0 && now < next_time_[s]) {
          active = true;
          break;
        }
        if (p.max_batch != 0 && in_call >= p.max_batch) {
          active = true;
          break;
        }
        const auto max = group_.subgroups[s].max_payload;
        const auto size =
            p.size != 0 ? std::min(p.size, max) : payload_size(salt_, s, log.node, next_[s], max);
        auto r = smc_.reserve(s, size);
        if (r.status != smc::ReserveStatus::ok) break;  // full: wait for deliveries
        std::span<std::byte> out(r.data, size);
        fill_payload(out, s, log.node, next_[s]);
        if (record_) log.sent.push_back(Sent{s, log.node, next_[s], size, checksum(out)});
        smc_.commit(s, r, size);
        ++next_[s];
        ++in_call;
        active = true;
        if (p.spacing.count() > 0) next_time_[s] = now + p.spacing;
      }
    }
    return active;
  }

  [[nodiscard]] bool sending_done() const {
    for (std::size_t s = 0; s < plans_.size(); ++s)
      if (next_[s] < plans_[s].count) return false;
    return true;
  }
  [[nodiscard]] std::uint64_t delivered(std::uint32_t subgroup) const {
    return delivered_[subgroup].load(std::memory_order_acquire);
  }

  sst::Sst& sst() { return sst_; }
  smc::Smc& smc() { return smc_; }
  sst::Predicates& predicates() { return predicates_; }
  sst::PredicateLoop& loop() { return loop_; }

  NodeLog log;
  std::function<void(std::uint32_t, std::span<const smc::Message>)> on_batch;
  std::uint64_t rejoins = 0;  // check_progress() said this node caught up (SimCluster)
  std::optional<std::chrono::nanoseconds> progress_due;  // when to check again (SimCluster)

 private:
  void on_deliver(std::uint32_t sg, std::span<const smc::Message> batch) {
    delivered_[sg].fetch_add(batch.size(), std::memory_order_acq_rel);
    if (on_batch) on_batch(sg, batch);
    if (!record_) return;
    for (const auto& m : batch)
      log.delivered.push_back(Delivered{sg, m.sender, m.index, m.seq,
                                        static_cast<std::uint32_t>(m.payload.size()),
                                        checksum(m.payload)});
  }

  group::View group_;
  std::uint64_t salt_;
  bool record_;
  sst::Clock clock_;
  sst::Sst sst_;
  sst::Predicates predicates_;
  smc::Smc smc_;
  sst::PredicateLoop loop_;
  std::vector<SendPlan> plans_;
  std::vector<std::uint64_t> next_;
  std::vector<std::chrono::nanoseconds> next_time_;
  std::unique_ptr<std::atomic<std::uint64_t>[]> delivered_;
  std::atomic<std::uint64_t> barrier_request_{0};
  std::uint64_t barrier_set_ = 0;
};

inline std::vector<SubgroupSpec> specs_of(const group::View& g) {
  std::vector<SubgroupSpec> out;
  for (const auto& s : g.subgroups)
    out.push_back(SubgroupSpec{s.members, s.senders, s.ordering == group::Ordering::atomic});
  return out;
}

}  // namespace spindle::testing
