// The process's participant table and default participant QoS (participant_registry.hpp).
#include "participant_registry.hpp"

#include <mutex>
#include <vector>

#include "qos/checks.hpp"

namespace spindle::detail {

namespace {

struct Entry {
  std::uint32_t requested_id;  // as given to the constructor (kDefaultDomain possible)
  std::uint32_t domain_id;     // the domain it joined
  std::weak_ptr<ParticipantCore> participant;
};

struct Registry {
  std::mutex mu;  // a leaf
  std::vector<Entry> entries;
  dds::domain::qos::DomainParticipantQos default_qos;
};

// Constructed on first use and never destroyed, so that a participant released during
// static destruction still finds it.
Registry& registry() {
  static auto* r = new Registry();
  return *r;
}

}  // namespace

void register_participant(std::uint32_t requested_id,
                          const std::shared_ptr<ParticipantCore>& participant) {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  std::erase_if(r.entries, [](const Entry& e) { return e.participant.expired(); });
  r.entries.push_back(Entry{requested_id, participant->domain_id(), participant});
}

std::shared_ptr<ParticipantCore> find_participant(std::uint32_t domain_id) {
  std::vector<std::weak_ptr<ParticipantCore>> candidates;
  {
    auto& r = registry();
    std::lock_guard lock(r.mu);
    for (const auto& e : r.entries)
      if (e.domain_id == domain_id || e.requested_id == domain_id)
        candidates.push_back(e.participant);
  }
  // Locked outside the table's mutex: a reference taken here may be the last one, and a
  // participant's destruction (leaving its domain) must not run under it.
  for (const auto& w : candidates)
    if (auto p = w.lock(); p && !p->is_closed()) return p;
  return nullptr;
}

dds::domain::qos::DomainParticipantQos default_participant_qos() {
  auto& r = registry();
  std::lock_guard lock(r.mu);
  return r.default_qos;
}

void default_participant_qos(const dds::domain::qos::DomainParticipantQos& q) {
  qos::check_consistent(q);
  auto& r = registry();
  std::lock_guard lock(r.mu);
  r.default_qos = q;
}

}  // namespace spindle::detail
