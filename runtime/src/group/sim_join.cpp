// The simulator's join channel (see sim_join.hpp).
#include "group/sim_join.hpp"

#include <utility>

namespace spindle::group {

class SimJoinHub::Port final : public JoinPort {
 public:
  Port(SimJoinHub& hub, NodeId node) : hub_(&hub), node_(node) {}
  ~Port() override { close(); }
  Port(const Port&) = delete;
  Port& operator=(const Port&) = delete;

  bool open(Handler handler) override {
    if (is_open()) return true;
    if (hub_->held_by_other(node_)) return false;
    hub_->holder_ = Holder{node_, std::move(handler)};
    return true;
  }
  void close() override {
    if (is_open()) hub_->holder_.reset();
  }
  [[nodiscard]] bool is_open() const override {
    return hub_->holder_ && hub_->holder_->node == node_;
  }

 private:
  SimJoinHub* hub_;
  NodeId node_;
};

// The way back to one joiner: its ticket. Dropped unanswered (the leader stopped), the
// ticket closes, as a TCP connection would.
class SimJoinHub::Answer final : public JoinAnswer {
 public:
  explicit Answer(std::weak_ptr<Ticket> ticket) : ticket_(std::move(ticket)) {}
  ~Answer() override {
    if (auto t = ticket_.lock(); t && t->state == Ticket::State::waiting) {
      t->state = Ticket::State::closed;
      t->why = "the leader dropped the request";
    }
  }
  Answer(const Answer&) = delete;
  Answer& operator=(const Answer&) = delete;

  bool welcome(const View& view, std::span<const std::byte> state) override {
    auto t = std::exchange(ticket_, {}).lock();
    if (!t || t->state != Ticket::State::waiting) return false;
    // The view as it travels on the TCP channel: written and parsed back.
    t->welcome = Welcome{parse_group(to_yaml(view), "the leader's welcome"),
                         std::vector<std::byte>(state.begin(), state.end())};
    t->state = Ticket::State::welcomed;
    return true;
  }
  void refuse(const std::string& why) override {
    auto t = std::exchange(ticket_, {}).lock();
    if (!t || t->state != Ticket::State::waiting) return;
    t->why = why;
    t->state = Ticket::State::refused;
  }

 private:
  std::weak_ptr<Ticket> ticket_;
};

std::unique_ptr<JoinPort> SimJoinHub::port(NodeId node) {
  return std::make_unique<Port>(*this, node);
}

bool SimJoinHub::held_by_other(NodeId node) const {
  return holder_ && holder_->node != node && !net_->crashed(holder_->node);
}

std::shared_ptr<SimJoinHub::Ticket> SimJoinHub::ask(const JoinRequest& request) {
  if (!holder_ || net_->crashed(holder_->node)) return nullptr;
  auto ticket = std::make_shared<Ticket>();
  ticket->leader = holder_->node;
  // Copied: the handler may close the port (and so destroy itself) while it runs.
  const auto handler = holder_->handler;
  handler(PendingJoin(std::make_unique<Answer>(ticket), request));
  return ticket;
}

bool SimJoinHub::settled(Ticket& ticket) const {
  if (ticket.state == Ticket::State::waiting && net_->crashed(ticket.leader)) {
    ticket.state = Ticket::State::closed;
    ticket.why = "the leader crashed";
  }
  return ticket.state != Ticket::State::waiting;
}

}  // namespace spindle::group
