// See gateway.hpp.
#include "gateway.hpp"

#include <spindle/types/from_idl.hpp>

#include <unistd.h>
#include <cstdio>
#include <random>
#include <sstream>

namespace spindle::gateway {
namespace {

std::mutex g_out;  // one stdout line at a time

std::string new_id() {
  std::random_device rd;
  std::ostringstream os;
  os << std::hex << ((uint64_t{rd()} << 32) ^ rd()) << "-" << std::dec << ::getpid();
  return os.str();
}

}  // namespace

Gateway::Gateway(Config config) : config_(std::move(config)), id_(new_id()) {
  types::IdlOptions options;
  options.include_dirs = config_.include_dirs;
  for (const auto& f : config_.idl) {
    try {
      types::load_idl_file(library_, f, options);
    } catch (const types::IdlError& e) {
      throw ConfigError(std::string(e.what()) + "\n" + config_.path + ": idl: '" + f +
                        "' was refused");
    }
  }
  std::vector<const TopicConfig*> entries;
  for (const auto& t : config_.topics)
    entries.push_back(&t);
  for (const auto& t : config_.patterns)
    entries.push_back(&t);
  for (const TopicConfig* e : entries) {
    const TopicConfig& t = *e;
    const types::Type* type = library_.find(t.type);
    if (type == nullptr) {
      std::string known;
      for (const auto* n : library_.named()) {
        const auto& r = types::resolve(*n);
        if (r.kind == types::TypeKind::Struct || r.kind == types::TypeKind::Union)
          known += (known.empty() ? "" : ", ") + n->name;
      }
      throw ConfigError(t.where + ": type: no type '" + t.type + "' in the IDL files (" +
                        (known.empty() ? "none" : known) + ")");
    }
    const auto& r = types::resolve(*type);
    if (r.kind != types::TypeKind::Struct && r.kind != types::TypeKind::Union)
      throw ConfigError(t.where + ": type: '" + t.type + "' is a " + types::to_string(r.kind) +
                        ", not a struct or union");
  }
}

Gateway::~Gateway() {
  stop();
  routes_.clear();
  ends_.clear();
}

void Gateway::open() {
  for (const auto& e : config_.ends)
    ends_.push_back(e.kind == EndKind::Spindle ? make_spindle_end(e) : make_rtps_end(e));
  for (const auto& t : config_.topics)
    open_routes(t, library_.find(t.type));
}

void Gateway::open_routes(const TopicConfig& t, const types::Type* type) {
  std::vector<Route> added;
  for (size_t i = 0; i < 2; ++i) {
    End* from = ends_[i].get();
    End* to = ends_[1 - i].get();
    if (t.to && *t.to != to->config().name) continue;
    Route r;
    r.topic = &t;
    r.type = type;
    r.from = from;
    r.to = to;
    added.push_back(std::move(r));
  }
  for (auto& r : added) {
    const TopicPlan plan{r.topic, r.type};
    r.marker = std::string(kMarkerPrefix) + id_ + " from=" + r.from->domain_name();
    r.outlet = r.to->open_writer(plan, *r.stats, r.marker);
  }
  {
    std::lock_guard lock(routes_mu_);
    bridged_.insert(t.name);
    for (auto& r : added)
      routes_.push_back(std::move(r));
  }
  // Readers last: their samples go to outlets that exist.
  std::vector<Route*> fresh;
  {
    std::lock_guard lock(routes_mu_);
    for (size_t i = routes_.size() - added.size(); i < routes_.size(); ++i)
      fresh.push_back(&routes_[i]);
  }
  for (Route* r : fresh) {
    const TopicPlan plan{r->topic, r->type};
    Outlet* out = r->outlet.get();
    RouteStats* stats = r->stats.get();
    r->from->open_reader(
        plan,
        [out, stats, active = r->active](const Message& m) {
          if (active->load(std::memory_order_relaxed)) {
            out->deliver(m);
          } else {
            stats->standby.fetch_add(1, std::memory_order_relaxed);
          }
        },
        *r->stats);
  }
}

void Gateway::discover() {
  if (config_.patterns.empty()) return;
  for (auto& e : ends_) {
    std::vector<std::pair<std::string, std::string>> found;
    try {
      found = e->application_topics();
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "spindle-gateway: discovery: %s\n", ex.what());
      continue;
    }
    for (const auto& [name, type_name] : found) {
      {
        std::lock_guard lock(routes_mu_);
        if (bridged_.count(name) != 0) continue;
      }
      if (!allowed(config_, name)) continue;
      for (const auto& p : config_.patterns) {
        if (!glob_match(p.name, name)) continue;
        const types::Type* type = library_.find(p.type);
        std::string want = types::resolve(*type).name;
        if (want.rfind("::", 0) == 0) want.erase(0, 2);
        std::string have = type_name;
        if (have.rfind("::", 0) == 0) have.erase(0, 2);
        if (have != want) {
          if (mismatched_.insert(name + "/" + have).second)
            std::fprintf(stderr,
                         "spindle-gateway: topic %s in %s matches %s but is of type %s, not %s: "
                         "left alone\n",
                         name.c_str(), e->config().name.c_str(), p.name.c_str(), have.c_str(),
                         want.c_str());
          continue;
        }
        TopicConfig t = p;
        t.name = name;
        discovered_.push_back(std::move(t));
        try {
          open_routes(discovered_.back(), type);
          std::lock_guard out(g_out);
          std::printf("spindle-gateway %s: bridging %s (found in %s, matches %s)\n", id_.c_str(),
                      name.c_str(), e->config().name.c_str(), p.name.c_str());
          std::fflush(stdout);
        } catch (const std::exception& ex) {
          std::fprintf(stderr, "spindle-gateway: topic %s: %s\n", name.c_str(), ex.what());
        }
        break;
      }
    }
  }
}

void Gateway::start() {
  for (auto& e : ends_)
    e->start();
  std::lock_guard lock(mu_);
  if (!elector_.joinable()) {
    stopping_ = false;
    elector_ = std::thread([this] { elect(); });
  }
}

void Gateway::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (elector_.joinable()) elector_.join();
  for (auto& e : ends_)
    e->stop();
}

namespace {

// "spindle-gateway/1 <id> from=<domain>" -> {id, domain}; empty id when it is not one.
std::pair<std::string, std::string> parse_marker(const std::string& m) {
  const std::string prefix = kMarkerPrefix;
  if (m.compare(0, prefix.size(), prefix) != 0) return {};
  std::istringstream is(m.substr(prefix.size()));
  std::string id, from;
  is >> id >> from;
  if (from.compare(0, 5, "from=") != 0) return {};
  return {id, from.substr(5)};
}

}  // namespace

void Gateway::elect() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    lock.unlock();
    discover();
    for (auto& r : routes_) {
      std::string leader;
      try {
        for (const auto& m : r.to->gateway_writers(r.topic->name)) {
          const auto [id, from] = parse_marker(m);
          if (id.empty() || id == id_ || from != r.from->domain_name()) continue;
          if (id < id_ && (leader.empty() || id < leader)) leader = id;
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "spindle-gateway: election: %s\n", e.what());
        continue;
      }
      const bool active = leader.empty();
      if (r.active->exchange(active) != active) {
        const std::string what =
            active ? "active" : "standby (gateway " + leader + " passes it on)";
        std::lock_guard out(g_out);
        std::printf("spindle-gateway %s: %s %s->%s: %s\n", id_.c_str(), r.topic->name.c_str(),
                    r.from->config().name.c_str(), r.to->config().name.c_str(), what.c_str());
        std::fflush(stdout);
      }
    }
    lock.lock();
    wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stopping_; });
  }
}

std::string Gateway::stats() const {
  std::ostringstream os;
  std::lock_guard lock(routes_mu_);
  for (const auto& r : routes_) {
    os << r.topic->name << ' ' << r.from->config().name << "->" << r.to->config().name << " data "
       << r.stats->data << " disposed " << r.stats->disposed << " unregistered "
       << r.stats->unregistered << " from_gateways " << r.stats->from_gateways << " failed "
       << r.stats->failed << " standby " << r.stats->standby << '\n';
  }
  for (const auto& e : ends_)
    if (e->refused() > 0) os << e->config().name << " refused " << e->refused() << '\n';
  return os.str();
}

}  // namespace spindle::gateway
