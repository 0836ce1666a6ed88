// A whole group on the in-memory deterministic transport: one TestNode per member, each
// driven by a simulator actor (application sends, then one predicate-loop step).
//
// Threading: single-threaded, like the simulator.
#pragma once

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "transport/sim.hpp"

#include "test_node.hpp"

namespace spindle::testing {

class SimCluster {
 public:
  SimCluster(const group::View& g, transport::sim::Config cfg) : group_(g), net_(cfg) {
    for (const auto& m : g.members)
      net_.add_node(m.id);
    for (const auto& m : g.members) {
      nodes_.push_back(std::make_unique<TestNode>(
          net_.node(m.id), g, [this] { return net_.now(); }, cfg.seed));
    }
    for (auto& n : nodes_) {
      if (n->sst().connect(std::chrono::milliseconds(10)) != transport::Status::ok)
        failure = "connect failed";
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      net_.set_actor(g.members[i].id, [this, i] { return step(i); });
    }
  }

  // One turn of member `rank`: its application sends, then one predicate-loop step. True
  // while it has more to do, a progress check due later (a lagging member's bound) included.
  bool step(std::size_t rank) {
    auto& n = *nodes_[rank];
    const bool sent = n.send_some();
    const bool worked = n.loop().run_once();
    return sent || worked || (n.progress_due && net_.now() <= *n.progress_due);
  }
  // Member `rank` stops in [from, until) of simulated time (a paused process: it is called,
  // time passes, it does nothing) and otherwise takes its turns.
  void stop_between(std::size_t rank, transport::sim::Duration from,
                    transport::sim::Duration until) {
    net_.set_actor(group_.members[rank].id, [this, rank, from, until] {
      const auto now = net_.now();
      if (now >= from && now < until) return true;
      return step(rank);
    });
  }

  TestNode& node(std::size_t rank) { return *nodes_[rank]; }
  // Every node runs SMC's progress check after each step (the engine's tick hook; no
  // heartbeats in the simulator): lagging members are left behind, half-dead ones suspected.
  void check_progress() {
    for (auto& n : nodes_) {
      auto* node = n.get();
      node->sst().set_tick_hook([node](std::chrono::nanoseconds now) {
        const auto check = node->smc().check_progress(now);
        node->progress_due = check.due;
        if (check.rejoin) ++node->rejoins;
        return check.suspected || check.demoted;
      });
    }
  }
  transport::sim::Network& net() { return net_; }
  [[nodiscard]] std::size_t size() const { return nodes_.size(); }

  // Every member delivered every planned message of every subgroup it belongs to.
  [[nodiscard]] bool all_delivered(const std::vector<std::vector<std::uint64_t>>& planned) const {
    for (std::size_t s = 0; s < group_.subgroups.size(); ++s) {
      std::uint64_t total = 0;
      for (auto c : planned[s])
        total += c;
      for (auto id : group_.subgroups[s].members) {
        const auto r = *group_.rank_of(id);
        const auto sub = static_cast<std::uint32_t>(s);
        // A listener, or a member left behind for a lag, is done once it took or skipped
        // every message (nobody waits for it); a member that holds skips nothing.
        const auto lost = nodes_[r]->smc().stats(sub).lost;
        if (nodes_[r]->delivered(sub) + lost != total) return false;
      }
    }
    return true;
  }

  [[nodiscard]] std::vector<NodeLog> logs() const {
    std::vector<NodeLog> out;
    for (const auto& n : nodes_)
      out.push_back(n->log);
    return out;
  }

  [[nodiscard]] std::uint64_t smc_writes() const {
    std::uint64_t w = 0;
    for (const auto& n : nodes_)
      w += n->sst().stats().data_writes + n->sst().stats().guard_writes;
    return w;
  }

  std::string failure;

 private:
  group::View group_;
  transport::sim::Network net_;
  std::vector<std::unique_ptr<TestNode>> nodes_;
};

}  // namespace spindle::testing
