// The view engine (see engine.hpp).
#include "group/engine.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <utility>

#include <dds/core/Exception.hpp>

#include "smc/smc.hpp"
#include "sst/predicate_loop.hpp"
#include "sst/predicates.hpp"
#include "sst/sst.hpp"

namespace spindle::group {

// Everything one view runs on; destroyed when no loan of the view is left.
struct ViewState {
  View view;
  // The generation of the demand this view was laid out from (adopted by the first view).
  std::optional<std::uint64_t> demand_generation;
  std::unique_ptr<sst::Sst> sst;
  std::unique_ptr<sst::Predicates> predicates;
  std::unique_ptr<smc::Smc> smc;
  std::unique_ptr<Membership> membership;
  std::unique_ptr<sst::PredicateLoop> loop;
};

namespace {

// The view after `v`: without the members of `removed` (bit per rank), with `joined` after
// the others, laid out for `demand` (layout.hpp).
View next_view(const View& v, std::uint64_t removed, const std::vector<sst::JoinEntry>& joined,
               const std::vector<ChannelDemand>& demand, const LayoutSettings& settings) {
  View next;
  next.epoch = v.epoch + 1;
  next.knobs = v.knobs;
  for (std::size_t r = 0; r < v.members.size(); ++r)
    if (((removed >> r) & 1) == 0) next.members.push_back(v.members[r]);
  for (const auto& j : joined) {
    char host[INET_ADDRSTRLEN] = "127.0.0.1";
    if (j.ipv4 != 0) {
      in_addr a{};
      a.s_addr = j.ipv4;
      (void)::inet_ntop(AF_INET, &a, host, sizeof host);
    }
    next.members.push_back(Member{j.id, host, j.port});
  }
  next.subgroups = layout(next.members, demand, settings);
  return next;
}

// A private buffer for a loan on a channel with no subgroup, 64-byte aligned as a slot.
struct alignas(64) ScratchLine {
  std::byte bytes[64];
};

std::string member_list(const View& v, NodeId self) {
  std::string out;
  for (const auto& m : v.members) {
    if (m.id == self) continue;
    out += (out.empty() ? "" : ", ") + std::to_string(m.id) + " (" + m.host + ":" +
           std::to_string(m.port) + ")";
  }
  return out;
}

}  // namespace

Engine::Engine(View first, std::unique_ptr<transport::Transport> transport,
               std::unique_ptr<Runtime> runtime, std::chrono::milliseconds connect_timeout,
               std::uint32_t domain_id, LayoutSettings layout)
    : Engine(std::move(first), std::move(transport), nullptr, std::move(runtime), connect_timeout,
             domain_id, std::move(layout)) {}

Engine::Engine(View first, transport::Transport& transport, std::unique_ptr<Runtime> runtime,
               std::chrono::milliseconds connect_timeout, std::uint32_t domain_id,
               LayoutSettings layout)
    : Engine(std::move(first), nullptr, &transport, std::move(runtime), connect_timeout, domain_id,
             std::move(layout)) {}

Engine::Engine(View first, std::unique_ptr<transport::Transport> owned, transport::Transport* t,
               std::unique_ptr<Runtime> runtime, std::chrono::milliseconds connect_timeout,
               std::uint32_t domain_id, LayoutSettings layout)
    : owned_transport_(std::move(owned)),
      transport_(owned_transport_ ? owned_transport_.get() : t),
      runtime_(std::move(runtime)),
      domain_id_(domain_id),
      layout_(std::move(layout)),
      connect_timeout_(connect_timeout) {
  current_ = build(first, connect_timeout, true);
}

Engine::~Engine() {
  shutdown();
  current_.reset();
}

void Engine::shutdown() {
  stop();
  if (!disconnected_.exchange(true)) transport_->disconnect();
}

std::shared_ptr<ViewState> Engine::build(const View& v, std::chrono::milliseconds connect_timeout,
                                         bool first) {
  auto vs = std::make_shared<ViewState>();
  vs->view = v;
  Runtime* rt = runtime_.get();
  vs->sst =
      std::make_unique<sst::Sst>(*transport_, v, [rt] { return rt->now().time_since_epoch(); });
  vs->predicates = std::make_unique<sst::Predicates>();
  vs->smc = std::make_unique<smc::Smc>(
      *vs->sst, *vs->predicates,
      [this](std::uint32_t, std::span<const smc::Message> batch) { on_deliver(batch); });
  ViewState* raw = vs.get();
  vs->membership = std::make_unique<Membership>(
      *vs->sst, *vs->smc, *vs->predicates,
      Membership::Callbacks{[this, raw](const ViewDecision& d) { decided(raw->view, d); },
                            [this](const std::string& why) { halt(why); }});
  if (closing_.load()) vs->membership->closing();
  vs->sst->set_suspicion_handler(
      [raw](const sst::SuspicionReport& r) { raw->membership->note_suspicion(r.rank, r.detail); });
  // A member that cannot be reached when a later view is installed is suspected in it: the
  // suspicion events stay queued for the new view's loop, and a view change follows.
  if (vs->sst->connect(connect_timeout) != transport::Status::ok && first) {
    std::vector<transport::Event> events;
    transport_->poll(events);
    std::string missing;
    for (const auto& e : events) {
      if (const auto* s = std::get_if<transport::Suspicion>(&e)) {
        missing += (missing.empty() ? "" : "; ") + std::to_string(s->peer) + ": " + s->detail;
      }
    }
    transport_->disconnect();
    std::ostringstream msg;
    msg << "domain " << domain_id_ << ": node " << node() << " could not reach "
        << "every member over " << transport_->kind() << " within " << connect_timeout.count()
        << " ms (members: " << member_list(v, node()) << ")"
        << (missing.empty() ? "" : "; " + missing)
        << ". Start every member's participant, or check SPINDLE_CONFIG / SPINDLE_NODE_ID.";
    throw dds::core::Error(msg.str());
  }
  vs->loop = std::make_unique<sst::PredicateLoop>(*vs->sst, *vs->predicates);
  return vs;
}

void Engine::start(EngineClient& client) {
  if (client_ != nullptr) return;
  client_ = &client;
  check_layout(current());
  runtime_->start(*current()->loop);
}

void Engine::stop() {
  // A view change in progress finishes (and starts the next view's loop) before the loop
  // stops; one not begun yet never begins. Then the protocol thread: it posts to the
  // executor, never the other way round.
  stopping_.store(true);
  runtime_->control().stop();
  if (join_port_) join_port_->close();
  refuse_pending_joins();
  runtime_->stop();
  runtime_->executor().stop();
}

void Engine::install(View next, std::chrono::milliseconds connect_timeout) {
  auto old = current();
  if (!end_view(old)) return;
  transport_->disconnect();
  replace(std::move(old), next, {}, connect_timeout);
}

void Engine::demand_changed() {
  if (client_ == nullptr || layout_check_due_.exchange(true)) return;
  runtime_->control().schedule(runtime_->now() + kLayoutBatch, [this] {
    layout_check_due_.store(false);
    if (!stopping_.load()) check_layout(current());
  });
}

void Engine::check_layout(const std::shared_ptr<ViewState>& vs) {
  if (client_ == nullptr) return;
  const Demand demand = client_->layout_demand();
  const auto wanted = layout(vs->view.members, demand.channels, layout_);
  if (!vs->demand_generation) vs->demand_generation = demand.generation;
  std::vector<Channel> sends;
  for (const auto& sg : wanted)
    if (std::find(sg.senders.begin(), sg.senders.end(), node()) != sg.senders.end())
      for (auto p : sg.partitions)
        sends.push_back(Channel{sg.topic, sg.ordering, p});
  {
    std::lock_guard lock(view_mu_);
    wanted_sends_ = std::move(sends);
  }
  if (wanted == vs->view.subgroups && demand.generation == *vs->demand_generation) return;
  relayouts_.fetch_add(1, std::memory_order_relaxed);
  vs->membership->request_relayout();
  transport_->notify();  // a dozing protocol thread must see it
}

// Wedges `ending` if it is still the current view — new reservations wait for the next
// one, writers sleeping on its full rings wake — and stops its loop: no upcall of it after
// this. False if another view replaced it meanwhile.
bool Engine::end_view(const std::shared_ptr<ViewState>& ending) {
  {
    std::lock_guard lock(view_mu_);
    if (current_ != ending) return false;
    wedged_ = true;
  }
  ending->smc->wedge();
  runtime_->stop();
  return true;
}

// Control thread, protocol thread stopped, old view disconnected: build `next`, send
// `resend` in it first (before any application message can reserve a slot; each names its
// subgroup in `next`), tell the client, start.
void Engine::replace(std::shared_ptr<ViewState> old, const View& next,
                     const std::vector<Resend>& resend, std::chrono::milliseconds connect_timeout,
                     std::optional<std::uint64_t> demand_generation) {
  release_retired();  // disconnected: regions of views nothing holds any more can go
  auto fresh = build(next, connect_timeout, false);
  fresh->demand_generation = demand_generation;
  for (const auto& m : resend) {
    const auto r = fresh->smc->reserve(m.subgroup, static_cast<std::uint32_t>(m.bytes.size()));
    if (r.status != smc::ReserveStatus::ok) continue;  // not a sender there any more
    std::memcpy(r.data, m.bytes.data(), m.bytes.size());
    fresh->smc->commit(m.subgroup, r, static_cast<std::uint32_t>(m.bytes.size()));
    resent_.fetch_add(1, std::memory_order_relaxed);
  }
  if (client_ != nullptr) client_->on_view(fresh->view);
  {
    std::lock_guard lock(view_mu_);
    current_ = fresh;
    wedged_ = false;
    ++views_;
  }
  // Endpoints announced past the ragged edge, or a view installed from outside, may call
  // for another layout already.
  check_layout(fresh);
  // Joiners admitted too late for the view just decided go into the next one.
  {
    std::lock_guard lock(joins_mu_);
    for (const auto& [id, j] : pending_joins_)
      if (!fresh->view.rank_of(id)) fresh->membership->add_joiner(j.entry);
  }
  // Its region goes once nothing holds the old view (a loan may) and the transport is
  // disconnected again (release_retired(), at the next replace()).
  retired_.push_back(Retired{old, sst::Sst::region_id(old->view.epoch)});
  old.reset();
  view_cv_.notify_all();
  if (client_ != nullptr) runtime_->start(*fresh->loop);
  update_join_port();
}

void Engine::release_retired() {
  std::erase_if(retired_, [this](const Retired& r) {
    if (!r.view.expired()) return false;
    transport_->release_region(r.region);
    return true;
  });
}

void Engine::decided(const View& ending, const ViewDecision& d) {
  // Protocol thread: the install stops this very thread, so it runs on control().
  std::shared_ptr<ViewState> vs = current();
  if (vs->view.epoch != ending.epoch) return;
  // The view after this one goes on without us: nothing to install. Unless we are
  // leaving, the others removed us (they suspected us: a pause past the timeout, say), and
  // we stop as a member that lost its majority does, saying so.
  if (const auto me = ending.rank_of(node()); !me || ((d.removed >> *me) & 1) != 0) {
    if (me && ((d.leaving >> *me) & 1) == 0)
      halt("was removed from the group in view " + std::to_string(ending.epoch + 1) +
           " (the other members suspected it); a removed participant must be deleted, and a new "
           "one joins as a new member");
    return;
  }
  runtime_->control().post([this, vs, d] { change_view(vs, d); });
}

void Engine::change_view(std::shared_ptr<ViewState> ending, ViewDecision d) {
  if (stopping_.load() || !end_view(ending)) return;
  // The removed members' endpoints go first: the next layout is the demand without them.
  if (client_ != nullptr) {
    for (std::size_t r = 0; r < ending->view.members.size(); ++r) {
      if (((d.removed >> r) & 1) == 0) continue;
      const bool left = ((d.leaving >> r) & 1) != 0;
      client_->on_member_lost(
          ending->view.members[r].id, left,
          left ? "it left the domain"
               : "removed from the group in view " + std::to_string(ending->view.epoch + 1));
    }
  }
  const Demand demand = client_ != nullptr ? client_->layout_demand() : Demand{};
  const View next = next_view(ending->view, d.removed, d.joined, demand.channels, layout_);
  // What the new view must carry again, copied out of the old view's slots, into the
  // subgroup that carries the same channel there (none: nobody reads it any more).
  std::vector<Resend> resend;
  for (std::uint32_t s = 0; s < ending->view.subgroups.size(); ++s) {
    const std::int64_t trim = s < d.trims.size() ? d.trims[s] : -1;
    const auto& old = ending->view.subgroups[s];
    for (auto m : ending->smc->resend(s, trim)) {
      // A subgroup may carry several partition sets of its topic, which the next layout
      // may split: each message goes where its own channel goes.
      std::optional<Channel> channel = client_ != nullptr ? client_->channel_of(m) : std::nullopt;
      if (!channel)
        channel =
            Channel{old.topic, old.ordering, old.partitions.empty() ? 0 : old.partitions.front()};
      if (const auto to = subgroup_of(next, *channel)) {
        resend.push_back(Resend{*to, std::vector<std::byte>(m.begin(), m.end())});
      } else {
        unread_.fetch_add(1, std::memory_order_relaxed);
      }
    }
  }
  // Joiners we admitted get the new view and the state at the view boundary now, so that
  // they connect while we do.
  if (!d.joined.empty()) {
    const auto state = client_ != nullptr ? client_->state_for_joiner() : std::vector<std::byte>{};
    std::lock_guard lock(joins_mu_);
    for (const auto& j : d.joined) {
      auto it = pending_joins_.find(j.id);
      if (it == pending_joins_.end()) continue;
      (void)it->second.connection.welcome(next, state);
      pending_joins_.erase(it);
      admitting_ = true;
    }
  }
  transport_->disconnect();
  replace(std::move(ending), next, resend, connect_timeout_, demand.generation);
  std::lock_guard lock(joins_mu_);
  admitting_ = false;
}

void Engine::serve_joins(std::unique_ptr<JoinPort> port,
                         std::vector<transport::AgreedSetting> settings) {
  join_settings_ = std::move(settings);
  join_port_ = std::move(port);
  update_join_port();
}

void Engine::update_join_port() {
  if (!join_port_ || stopping_.load()) return;
  const auto vs = current();
  const bool leads =
      !vs->view.members.empty() && vs->view.members.front().id == node() && halted().empty();
  if (!leads) {
    join_port_->close();
    return;
  }
  if (join_port_->is_open()) return;
  if (!join_port_->open([this](PendingJoin j) { on_join(std::move(j)); })) {
    // The leader before us may still hold it for a moment: try again shortly.
    runtime_->control().schedule(runtime_->now() + std::chrono::milliseconds(20), [this] {
      if (!stopping_.load()) update_join_port();
    });
  }
}

void Engine::refuse_pending_joins() {
  std::lock_guard lock(joins_mu_);
  for (auto& [id, j] : pending_joins_)
    j.connection.refuse(std::string(kLeaderLeaving));
  pending_joins_.clear();
}

// The join listener's thread: admit or refuse, at once when the answer is no.
void Engine::on_join(PendingJoin join) {
  const auto& r = join.request();
  if (r.domain_id != domain_id_) {
    join.refuse("node " + std::to_string(r.node) + " is in domain " + std::to_string(r.domain_id) +
                ", this domain is " + std::to_string(domain_id_));
    return;
  }
  for (const auto& mine : join_settings_) {
    std::string theirs = "(none)";
    for (const auto& s : r.settings)
      if (s.name == mine.name) theirs = s.value;
    if (theirs != mine.value) {
      join.refuse(mine.name + ": node " + std::to_string(r.node) + " has " + theirs +
                  ", this domain " + mine.value);
      return;
    }
  }
  const auto vs = current();
  if (vs->view.rank_of(r.node)) {
    join.refuse("node id " + std::to_string(r.node) +
                " is already a member; give each participant its own (SPINDLE_NODE_ID)");
    return;
  }
  if (vs->view.members.size() >= kMaxMembers) {
    join.refuse("the domain has its " + std::to_string(kMaxMembers) + " members already");
    return;
  }
  sst::JoinEntry e{};
  e.id = r.node;
  in_addr a{};
  if (::inet_pton(AF_INET, r.host.c_str(), &a) == 1) e.ipv4 = a.s_addr;
  e.port = r.port;
  {
    // Checked under the lock leave() reads the pending joins with: a join either counts
    // there or is turned away. The joiner asks again and finds the next leader.
    std::lock_guard lock(joins_mu_);
    if (closing_.load() || !halted().empty()) {
      join.refuse(std::string(kLeaderLeaving));
      return;
    }
    pending_joins_.insert_or_assign(r.node, Joining{std::move(join), e});
    // The view current now, read under the lock replace() re-adds pending joiners with
    // after installing a view: a view change in between cannot lose this one.
    current()->membership->add_joiner(e);
  }
  transport_->notify();  // a dozing protocol thread must see it
}

void Engine::halt(const std::string& why) {
  std::shared_ptr<ViewState> vs;
  {
    std::lock_guard lock(view_mu_);
    if (!halted_.empty()) return;
    halted_ = "domain " + std::to_string(domain_id_) + ": node " + std::to_string(node()) +
              " stopped: it " + why;
    vs = current_;
  }
  vs->smc->freeze();
  view_cv_.notify_all();
  // A halted leader admits nobody: its joiners ask again and find the next leader, which
  // needs the port.
  runtime_->control().post([this] {
    update_join_port();
    refuse_pending_joins();
  });
  if (client_ != nullptr) client_->on_halt(halted());
}

std::string Engine::halted() const {
  std::lock_guard lock(view_mu_);
  return halted_;
}

void Engine::closing() {
  closing_.store(true);
  current()->membership->closing();
}

void Engine::leave() {
  // A joiner admitted before we began closing may be on its way into the view (it may hold
  // its welcome already): let that view change finish and leave the view it makes, or the
  // joiner would find its only peer gone without a word and stop.
  const auto deadline = runtime_->now() + std::chrono::seconds(1);
  for (;;) {
    const auto vs = current();
    if (!halted().empty()) return;
    if (vs->view.members.size() >= 2) {
      vs->membership->request_leave();
      (void)runtime_->wait_until(deadline, [&] {
        return vs->membership->leave_announced() || current() != vs || !halted().empty();
      });
      // A view change (a joiner, a failure) ended the view first: leave the next one.
      if (vs->membership->leave_announced() || current() == vs) return;
      continue;
    }
    const auto joining = [&] {
      std::lock_guard lock(joins_mu_);
      return !pending_joins_.empty() || admitting_;
    };
    if (!joining()) return;
    if (!runtime_->wait_until(deadline, [&] { return current() != vs || !joining(); })) return;
  }
}

View Engine::view() const {
  return current()->view;
}

std::shared_ptr<ViewState> Engine::current() const {
  std::lock_guard lock(view_mu_);
  return current_;
}

std::uint32_t Engine::max_message(Channel channel) const {
  const auto vs = current();
  const auto sg = subgroup_of(vs->view, channel);
  // No subgroup yet: what the domain's settings give a topic's slot.
  return sg ? vs->view.subgroups[*sg].max_payload
            : std::min<std::uint32_t>(kMaxPayload, layout_.slot_size + layout_.header_size);
}

std::uint64_t Engine::in_flight(Channel channel) const {
  const auto vs = current();
  const auto sg = subgroup_of(vs->view, channel);
  return sg ? vs->smc->in_flight(*sg) : 0;
}

Loan Engine::reserve(Channel channel, std::size_t size, Clock::time_point deadline) {
  const auto blocked_by_view_change = [] {
    return dds::core::TimeoutError(
        "write blocked longer than reliability.max_blocking_time: a view change was in "
        "progress");
  };
  for (;;) {
    std::shared_ptr<ViewState> vs;
    {
      std::unique_lock lock(view_mu_);
      // A view change in progress: the next view takes the message.
      if (!view_cv_.wait_until(lock, deadline, [&] { return !wedged_ || !halted_.empty(); }))
        throw blocked_by_view_change();
      if (!halted_.empty()) throw dds::core::PreconditionNotMetError(halted_);
      vs = current_;
    }
    const auto sg = subgroup_of(vs->view, channel);
    if (!sg || std::ranges::find(vs->view.subgroups[*sg].senders, node()) ==
                   vs->view.subgroups[*sg].senders.end()) {
      bool wanted = false;
      {
        std::lock_guard lock(view_mu_);
        wanted =
            std::find(wanted_sends_.begin(), wanted_sends_.end(), channel) != wanted_sends_.end();
      }
      if (!wanted) return scratch_loan(channel, size);
      // A relayout that makes us a sender is on its way: the next view takes the message.
      if (!wait_for_view_after(vs, deadline)) throw blocked_by_view_change();
      continue;
    }
    const auto& sub = vs->view.subgroups[*sg];
    if (size > sub.max_payload) {
      throw dds::core::PreconditionNotMetError("a message of " + std::to_string(size) +
                                               " bytes does not fit a slot of " +
                                               std::to_string(sub.max_payload) + " bytes");
    }
    const auto bytes = static_cast<std::uint32_t>(size);
    smc::Reservation r;
    if (runtime_->simulated()) {
      // Virtual time: waiting is what runs the other members.
      r = vs->smc->reserve(*sg, bytes);
      if (r.status == smc::ReserveStatus::full) {
        (void)runtime_->wait_until(deadline, [&] {
          r = vs->smc->reserve(*sg, bytes);
          return r.status != smc::ReserveStatus::full;
        });
      }
    } else {
      r = vs->smc->reserve_wait(*sg, bytes, deadline);
    }
    switch (r.status) {
      case smc::ReserveStatus::ok:
        return Loan{channel, r.data, r.capacity, *sg, r.index, std::move(vs), nullptr};
      case smc::ReserveStatus::wedged:
        // A view change began: the next view takes the message.
        if (!wait_for_view_after(vs, deadline)) throw blocked_by_view_change();
        continue;
      case smc::ReserveStatus::full:
        throw dds::core::TimeoutError(
            "write blocked longer than reliability.max_blocking_time: every slot of the ring (" +
            std::to_string(sub.window_size) + ") is still waiting for some member to deliver it");
      case smc::ReserveStatus::too_large:
      case smc::ReserveStatus::not_sender:
        break;
    }
    throw dds::core::PreconditionNotMetError("this node cannot send in subgroup '" + sub.name +
                                             "' of view " + std::to_string(vs->view.epoch));
  }
}

Loan Engine::scratch_loan(Channel channel, std::size_t size) {
  const std::size_t lines =
      std::max<std::size_t>(1, (size + sizeof(ScratchLine) - 1) / sizeof(ScratchLine));
  std::shared_ptr<ScratchLine[]> buffer(new ScratchLine[lines]);
  Loan loan;
  loan.channel = channel;
  loan.data = buffer[0].bytes;
  loan.capacity = static_cast<std::uint32_t>(lines * sizeof(ScratchLine));
  loan.scratch = std::move(buffer);
  return loan;
}

bool Engine::wait_for_view_after(const std::shared_ptr<ViewState>& vs, Clock::time_point deadline) {
  const auto moved = [&] { return current() != vs || !halted().empty(); };
  // The simulator runs the view change on this thread's scheduler: let it.
  if (runtime_->simulated()) return runtime_->wait_until(deadline, moved);
  std::unique_lock lock(view_mu_);
  return view_cv_.wait_until(lock, deadline, [&] { return current_ != vs || !halted_.empty(); });
}

void Engine::commit(Loan& loan, std::size_t size, Clock::time_point deadline) {
  if (loan.scratch) {
    // Nobody read the channel when it was reserved: publish it if someone does now.
    Loan fresh = reserve(loan.channel, size, deadline);
    if (fresh.scratch) {
      unread_.fetch_add(1, std::memory_order_relaxed);
    } else {
      std::memcpy(fresh.data, loan.data, size);
      commit(fresh, size, deadline);
    }
    loan.scratch.reset();
    loan.data = nullptr;
    return;
  }
  {
    std::lock_guard lock(view_mu_);
    if (loan.view == current_ && !wedged_) {
      smc::Reservation r{smc::ReserveStatus::ok, loan.data, loan.capacity, loan.index};
      loan.view->smc->commit(loan.subgroup, r, static_cast<std::uint32_t>(size));
      loan.view.reset();
      published_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  // Reserved in a view that has ended (or is ending): its ring is gone with it. The bytes
  // are still valid (the loan holds its view), so they go out in the current view.
  Loan fresh = reserve(loan.channel, size, deadline);
  std::memcpy(fresh.data, loan.data, size);
  loan.view.reset();
  republished_.fetch_add(1, std::memory_order_relaxed);
  commit(fresh, size, deadline);
}

EngineStats Engine::stats() const {
  EngineStats s;
  s.published = published_.load();
  s.republished = republished_.load();
  s.resent = resent_.load();
  s.unread = unread_.load();
  s.relayouts = relayouts_.load();
  std::lock_guard lock(view_mu_);
  s.views = views_;
  return s;
}

void Engine::on_deliver(std::span<const smc::Message> batch) {
  if (client_ != nullptr) client_->on_deliver(batch);
}

}  // namespace spindle::group
