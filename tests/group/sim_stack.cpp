// SimStack (see sim_stack.hpp).
#include "sim_stack.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "dcps/entities.hpp"
#include "dcps/wire.hpp"
#include "group/engine.hpp"
#include "group/layout.hpp"
#include "group/sim_join.hpp"
#include "group/sim_runtime.hpp"
#include "sst/layout.hpp"
#include "sst/sst.hpp"

namespace spindle::testing {

namespace sim = transport::sim;

namespace {
// What a joiner must agree on with the domain (create_participant sends the domain file's).
std::vector<transport::AgreedSetting> agreed() {
  return {{"protocol", "1"}, {"transport", "sim"}};
}

// What a participant with node id `id` asks the join hub.
group::JoinRequest request_for(transport::NodeId id) {
  group::JoinRequest request;
  request.node = id;
  request.host = "sim";
  request.settings = agreed();
  return request;
}
}  // namespace

SimStack::SimStack(const sim::Config& config, std::uint32_t members, std::uint32_t window_size,
                   std::uint32_t slot_size)
    : net_(std::make_unique<sim::Network>(config)),
      hub_(std::make_unique<group::SimJoinHub>(*net_)) {
  std::vector<group::Member> list;
  for (std::uint32_t id = 1; id <= members; ++id) {
    net_->add_node(id);
    list.push_back(group::Member{id, "sim", 0});
  }
  auto& s = settings_;
  s.window_size = window_size;
  s.slot_size = slot_size;
  s.knobs.rdmc_block_size = 64;
  s.knobs.rdmc_buffer_size = 1024;
  s.header_size = static_cast<std::uint32_t>(sizeof(dcps::SampleHeader));
  s.knobs.heartbeat_interval = std::chrono::milliseconds(0);  // the simulator suspects
  // The protocol's own timeouts (a member behind in a view change or in its deliveries, a
  // joiner's connection) on the simulator's time scale: as long as its connect timeout,
  // far above its latencies and its suspicion timeout.
  s.knobs.suspicion_timeout = std::max<std::chrono::milliseconds>(
      std::chrono::milliseconds(20),
      std::chrono::ceil<std::chrono::milliseconds>(50 * config.suspicion_timeout));
  s.lag_bound = s.knobs.suspicion_timeout / 5;  // lagging members: well under it
  view_ = group::first_view(list, s);
  for (std::uint32_t id = 1; id <= members; ++id) {
    auto engine = std::make_unique<group::Engine>(view_, net_->node(id),
                                                  std::make_unique<group::SimRuntime>(*net_, id),
                                                  std::chrono::milliseconds(0), 0, s);
    engine->serve_joins(hub_->port(id), agreed());
    cores_.push_back(std::make_shared<dcps::Participant>(
        0, dds::domain::qos::DomainParticipantQos(), std::move(engine),
        std::span<const std::byte>{}, storage::LogSettings{logs_.path().string()}));
    participants_.emplace_back(cores_.back());
    alive_.push_back(true);
  }
}

namespace {

// A halted participant's way back in the simulator (group::Engine::rejoin_with): its request
// through the join hub, one step at a time — an attempt never waits on the network (it runs
// as a job of the node's control executor), it asks and looks again at the next attempt.
class SimRejoiner final : public group::Rejoiner {
 public:
  SimRejoiner(group::SimJoinHub& hub, group::JoinRequest request)
      : hub_(&hub), request_(std::move(request)) {}
  bool answer_due() const override { return ticket_ != nullptr; }
  std::optional<group::Rejoined> attempt() override {
    if (!ticket_) {
      ticket_ = hub_->ask(request_);
      return std::nullopt;
    }
    if (!hub_->settled(*ticket_)) return std::nullopt;
    auto ticket = std::move(ticket_);
    if (ticket->state != group::SimJoinHub::Ticket::State::welcomed) return std::nullopt;
    return group::Rejoined{std::move(ticket->welcome->view), std::move(ticket->welcome->state),
                           nullptr};
  }

 private:
  group::SimJoinHub* hub_;
  group::JoinRequest request_;
  std::shared_ptr<group::SimJoinHub::Ticket> ticket_;
};

}  // namespace

void SimStack::rejoin_on_halt() {
  rejoin_ = true;
  for (std::size_t i = 0; i < cores_.size(); ++i)
    if (cores_[i]) give_rejoiner(i);
}

void SimStack::give_rejoiner(std::size_t i) {
  cores_.at(i)->engine().rejoin_with(
      std::make_unique<SimRejoiner>(*hub_, request_for(static_cast<transport::NodeId>(i + 1))));
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
  isolated_.insert(i);
  for (std::size_t j = 0; j < participants_.size(); ++j)
    if (j != i)
      net_->cut(static_cast<transport::NodeId>(i + 1), static_cast<transport::NodeId>(j + 1));
}

void SimStack::stall(std::size_t i) {
  cores_.at(i)->engine().stall_view_changes();
}

void SimStack::stall_deliveries(std::size_t i, bool transfers) {
  cores_.at(i)->engine().stall_deliveries();
  if (transfers) cores_.at(i)->engine().stall_transfers();
}

void SimStack::resume_deliveries(std::size_t i, bool transfers) {
  cores_.at(i)->engine().resume_deliveries();
  if (transfers) cores_.at(i)->engine().resume_transfers();
}

void SimStack::evict(std::size_t i, std::size_t victim) {
  cores_.at(i)->engine().evict(static_cast<transport::NodeId>(victim + 1),
                               "its certificate is revoked (the simulator's revocation)");
}

std::size_t SimStack::forge_suspicion(std::size_t i, std::size_t owner, std::size_t victim) {
  const auto v = view(i);
  const auto forger = static_cast<transport::NodeId>(i + 1);
  const auto owner_rank = v.rank_of(static_cast<transport::NodeId>(owner + 1));
  const auto victim_rank = v.rank_of(static_cast<transport::NodeId>(victim + 1));
  if (!owner_rank || !victim_rank) return 0;
  const sst::SstLayout layout(v);
  const auto region = sst::Sst::region_id(v.epoch);
  // The word of the owner's suspected set that holds the victim's bit.
  const std::size_t at = layout.control(*owner_rank) + offsetof(sst::ControlRow, suspected) +
                         sizeof(std::uint64_t) * (*victim_rank / 64);
  const auto mine = net_->node(forger).local_region(region);
  if (!mine) return 0;
  std::uint64_t mask = 0;
  std::memcpy(&mask, mine->bytes.data() + at, sizeof mask);
  mask |= std::uint64_t{1} << (*victim_rank % 64);
  std::array<std::byte, sizeof mask> bytes{};
  std::memcpy(bytes.data(), &mask, sizeof mask);
  std::size_t posted = 0;
  for (const auto& m : v.members) {
    if (m.id == forger) continue;
    if (net_->forge_write(forger, m.id, region, at, bytes) == transport::Status::ok) ++posted;
  }
  return posted;
}

void SimStack::one_host() {
  host_ = 1;
  for (std::size_t i = 0; i < participants_.size(); ++i)
    net_->set_host(static_cast<transport::NodeId>(i + 1), host_);
}

std::size_t SimStack::join_and_vanish(std::size_t count, std::chrono::nanoseconds limit) {
  using State = group::SimJoinHub::Ticket::State;
  std::vector<group::JoinRequest> requests;
  for (std::size_t i = 0; i < count; ++i) {
    const auto id = static_cast<transport::NodeId>(participants_.size() + 1);
    net_->add_node(id);  // there, but never connecting
    alive_.push_back(false);
    cores_.push_back(nullptr);
    participants_.emplace_back(dds::core::null);
    requests.push_back(request_for(id));
  }
  // All asked at once, so that they go into one view together.
  const auto deadline = net_->now() + limit;
  std::vector<std::shared_ptr<group::SimJoinHub::Ticket>> tickets(count);
  std::size_t welcomed = 0;
  while (net_->now() < deadline && welcomed < count) {
    for (std::size_t i = 0; i < count; ++i)
      if (!tickets[i] || tickets[i]->state == State::refused || tickets[i]->state == State::closed)
        tickets[i] = hub_->ask(requests[i]);
    const auto ran = net_->events_run();
    (void)net_->run_until(
        [&] {
          return std::all_of(tickets.begin(), tickets.end(),
                             [&](const auto& t) { return !t || hub_->settled(*t); });
        },
        std::min(deadline, net_->now() + std::chrono::milliseconds(1)));
    if (net_->events_run() == ran && !net_->step()) break;  // nothing left to run
    welcomed =
        static_cast<std::size_t>(std::count_if(tickets.begin(), tickets.end(), [](const auto& t) {
          return t && t->state == State::welcomed;
        }));
  }
  return welcomed;
}

std::optional<std::size_t> SimStack::join(std::string& why, std::chrono::nanoseconds limit) {
  using State = group::SimJoinHub::Ticket::State;
  const auto id = static_cast<transport::NodeId>(participants_.size() + 1);
  net_->add_node(id);
  if (host_ != 0) net_->set_host(id, host_);
  for (auto i : isolated_)
    net_->cut(static_cast<transport::NodeId>(i + 1), id);
  const auto request = request_for(id);
  const auto deadline = net_->now() + limit;
  // Runs the network a little (a leader takes the port over, a view change ends); false
  // when nothing at all is left to run.
  auto breathe = [&] {
    const auto ran = net_->events_run();
    const auto until = std::min(deadline, net_->now() + std::chrono::milliseconds(1));
    (void)net_->run_until([] { return false; }, until);
    return net_->events_run() != ran || net_->step();
  };
  std::shared_ptr<group::SimJoinHub::Ticket> ticket;
  std::unique_ptr<group::Engine> engine;
  while (net_->now() < deadline) {
    ticket = hub_->ask(request);
    if (!ticket) {
      if (!breathe()) break;
      continue;
    }
    (void)net_->run_until([&] { return hub_->settled(*ticket); }, deadline);
    if (ticket->state == State::welcomed) {
      // The domain may have gone on to a later view before we connect (create_participant
      // asks again then, and so does this).
      try {
        engine = std::make_unique<group::Engine>(ticket->welcome->view, net_->node(id),
                                                 std::make_unique<group::SimRuntime>(*net_, id),
                                                 std::chrono::milliseconds(0), 0, settings_);
        break;
      } catch (const dds::core::Error& e) {
        ticket->state = State::refused;
        ticket->why = e.what();
      }
    } else if (ticket->state == State::refused) {
      // A restarted id still in the view, or a leader closing or halted: ask again.
      const bool again = ticket->why.find("is already a member") != std::string::npos ||
                         ticket->why.find(group::kLeaderLeaving) != std::string::npos;
      if (!again) break;
    }
    if (!breathe()) break;
  }
  if (!engine) {
    why = "node " + std::to_string(id) + " got no welcome: " +
          (!ticket                           ? std::string("nobody held the join port")
           : ticket->state == State::waiting ? std::string("the leader did not answer")
                                             : ticket->why);
    alive_.push_back(false);
    cores_.push_back(nullptr);
    participants_.emplace_back(dds::core::null);
    return std::nullopt;
  }
  engine->serve_joins(hub_->port(id), agreed());
  cores_.push_back(std::make_shared<dcps::Participant>(
      0, dds::domain::qos::DomainParticipantQos(), std::move(engine), ticket->welcome->state,
      storage::LogSettings{logs_.path().string()}));
  participants_.emplace_back(cores_.back());
  alive_.push_back(true);
  if (rejoin_) give_rejoiner(cores_.size() - 1);
  return participants_.size() - 1;
}

void SimStack::forge(std::size_t i, const dcps::SampleHeader& header,
                     std::span<const std::byte> payload) {
  auto& core = *cores_.at(i);
  core.router().publish(
      group::Channel{0, group::Ordering::atomic}, header, payload.size(),
      [&](std::span<std::byte> out) { std::copy(payload.begin(), payload.end(), out.begin()); },
      core.clock_now() + std::chrono::seconds(1));
}

std::uint64_t SimStack::malformed(std::size_t i) const {
  return cores_.at(i)->router().stats().malformed;
}

std::string SimStack::halted(std::size_t i) const {
  if (!cores_.at(i)) return "it never joined";
  return cores_.at(i)->engine().halted();
}

void SimStack::install(const group::View& next) {
  for (auto& core : cores_)
    if (core) core->engine().install(next, std::chrono::milliseconds(0));
}

group::View SimStack::view(std::size_t i) const {
  if (!cores_.at(i)) return {};
  return cores_.at(i)->engine().view();
}

group::EngineStats SimStack::engine_stats(std::size_t i) const {
  if (!cores_.at(i)) return {};
  return cores_.at(i)->engine().stats();
}

std::uint64_t SimStack::delivered(std::size_t i) const {
  if (!cores_.at(i)) return 0;
  return cores_.at(i)->router().stats().delivered;
}

}  // namespace spindle::testing

namespace spindle::testing {

std::vector<storage::Entry> SimStack::retained(std::size_t i, const std::string& topic) const {
  if (!cores_.at(i)) return {};
  return cores_.at(i)->retained(topic);
}

std::uint64_t SimStack::refreshes(std::size_t i) const {
  return cores_.at(i) ? cores_.at(i)->refreshes() : 0;
}

std::uint64_t SimStack::repairs(std::size_t i) const {
  return cores_.at(i) ? cores_.at(i)->repairs() : 0;
}

bool SimStack::history_whole(std::size_t i) const {
  return cores_.at(i) && cores_.at(i)->history_whole();
}

}  // namespace spindle::testing
