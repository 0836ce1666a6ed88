// See gateway.hpp.
#include "gateway.hpp"

#include <spindle/types/from_idl.hpp>

#include <unistd.h>
#include <random>
#include <sstream>

namespace spindle::gateway {
namespace {

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
  for (const auto& t : config_.topics) {
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
  const std::string marker = std::string(kMarkerPrefix) + id_;
  for (const auto& e : config_.ends) {
    ends_.push_back(e.kind == EndKind::Spindle ? make_spindle_end(e, marker)
                                               : make_rtps_end(e, marker));
  }
  for (const auto& t : config_.topics) {
    const types::Type* type = library_.find(t.type);
    for (size_t i = 0; i < 2; ++i) {
      End* from = ends_[i].get();
      End* to = ends_[1 - i].get();
      if (t.to && *t.to != to->config().name) continue;
      Route r;
      r.topic = &t;
      r.type = type;
      r.from = from;
      r.to = to;
      routes_.push_back(std::move(r));
    }
  }
  for (auto& r : routes_) {
    const TopicPlan plan{r.topic, r.type};
    r.outlet = r.to->open_writer(plan, *r.stats);
    Outlet* out = r.outlet.get();
    r.from->open_reader(
        plan, [out](const Message& m) { out->deliver(m); }, *r.stats);
  }
}

void Gateway::start() {
  for (auto& e : ends_)
    e->start();
}

void Gateway::stop() {
  for (auto& e : ends_)
    e->stop();
}

std::string Gateway::stats() const {
  std::ostringstream os;
  for (const auto& r : routes_) {
    os << r.topic->name << ' ' << r.from->config().name << "->" << r.to->config().name << " data "
       << r.stats->data << " disposed " << r.stats->disposed << " unregistered "
       << r.stats->unregistered << " from_gateways " << r.stats->from_gateways << " failed "
       << r.stats->failed << '\n';
  }
  for (const auto& e : ends_)
    if (e->refused() > 0) os << e->config().name << " refused " << e->refused() << '\n';
  return os.str();
}

}  // namespace spindle::gateway
