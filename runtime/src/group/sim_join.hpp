// The join channel of the deterministic simulator (join.hpp, DESIGN §7): the leader's
// JoinPort and the joiner's request meet in this hub instead of on a TCP port, so that
// participants join a running domain inside one seeded schedule. What the TCP channel does
// is kept: one holder at a time (the leader; its successor opens the port once it leads),
// a holder whose node crashed frees the port, a request asked of a leader that crashes
// before it answers is lost (the joiner asks again), and the view travels in its wire form.
//
// Threading: single-threaded, like the Network it belongs to.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "transport/sim.hpp"

#include "group/join.hpp"

namespace spindle::group {

class SimJoinHub {
 public:
  explicit SimJoinHub(transport::sim::Network& net) : net_(&net) {}
  SimJoinHub(const SimJoinHub&) = delete;
  SimJoinHub& operator=(const SimJoinHub&) = delete;

  // The port of `node`'s engine (Engine::serve_joins). It must not outlive the hub.
  [[nodiscard]] std::unique_ptr<JoinPort> port(NodeId node);

  // One request on its way to the leader.
  struct Ticket {
    enum class State { waiting, welcomed, refused, closed };
    State state = State::waiting;
    NodeId leader = 0;
    std::optional<Welcome> welcome;  // welcomed
    std::string why;                 // refused: the leader's words; closed: what happened
  };
  // Hands `request` to the port's holder now; nullptr when nobody holds it (or the holder
  // crashed: its port is free).
  [[nodiscard]] std::shared_ptr<Ticket> ask(const JoinRequest& request);
  // True once the ticket has its answer or can get none (its leader crashed: closed).
  [[nodiscard]] bool settled(Ticket& ticket) const;

 private:
  class Port;
  class Answer;
  struct Holder {
    NodeId node = 0;
    JoinPort::Handler handler;
  };
  [[nodiscard]] bool held_by_other(NodeId node) const;

  transport::sim::Network* net_;
  std::optional<Holder> holder_;
};

}  // namespace spindle::group
