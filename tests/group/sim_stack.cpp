// SimStack (see sim_stack.hpp).
#include "sim_stack.hpp"

#include "dcps/entities.hpp"
#include "dcps/wire.hpp"
#include "group/engine.hpp"
#include "group/layout.hpp"
#include "group/sim_runtime.hpp"

namespace spindle::testing {

namespace sim = transport::sim;

SimStack::SimStack(const sim::Config& config, std::uint32_t members, std::uint32_t window_size)
    : net_(std::make_unique<sim::Network>(config)) {
  std::vector<group::Member> list;
  for (std::uint32_t id = 1; id <= members; ++id) {
    net_->add_node(id);
    list.push_back(group::Member{id, "sim", 0});
  }
  group::LayoutSettings s;
  s.window_size = window_size;
  s.header_size = static_cast<std::uint32_t>(sizeof(dcps::SampleHeader));
  s.knobs.heartbeat_interval = std::chrono::milliseconds(0);  // the simulator suspects
  view_ = group::first_view(list, s);
  for (std::uint32_t id = 1; id <= members; ++id) {
    auto engine = std::make_unique<group::Engine>(view_, net_->node(id),
                                                  std::make_unique<group::SimRuntime>(*net_, id),
                                                  std::chrono::milliseconds(0), 0, s);
    cores_.push_back(std::make_shared<dcps::Participant>(
        0, dds::domain::qos::DomainParticipantQos(), std::move(engine)));
    participants_.emplace_back(cores_.back());
    alive_.push_back(true);
  }
}

SimStack::~SimStack() {
  // Close every participant while the network still runs them (a goodbye is a message).
  for (std::size_t i = 0; i < participants_.size(); ++i)
    if (alive_[i]) participants_[i].close();
  participants_.clear();
  cores_.clear();
}

bool SimStack::run_until(const std::function<bool()>& done, std::chrono::nanoseconds limit) {
  return net_->run_until(done, net_->now() + limit);
}

void SimStack::crash(std::size_t i) {
  alive_.at(i) = false;
  net_->crash(static_cast<transport::NodeId>(i + 1));
}

void SimStack::leave(std::size_t i) {
  alive_.at(i) = false;
  participants_.at(i).close();
}

void SimStack::isolate(std::size_t i) {
  for (std::size_t j = 0; j < participants_.size(); ++j)
    if (j != i)
      net_->cut(static_cast<transport::NodeId>(i + 1), static_cast<transport::NodeId>(j + 1));
}

std::string SimStack::halted(std::size_t i) const {
  return cores_.at(i)->engine().halted();
}

void SimStack::install(const group::View& next) {
  for (auto& core : cores_)
    core->engine().install(next, std::chrono::milliseconds(0));
}

group::View SimStack::view(std::size_t i) const {
  return cores_.at(i)->engine().view();
}

group::EngineStats SimStack::engine_stats(std::size_t i) const {
  return cores_.at(i)->engine().stats();
}

std::uint64_t SimStack::delivered(std::size_t i) const {
  return cores_.at(i)->router().stats().delivered;
}

}  // namespace spindle::testing
