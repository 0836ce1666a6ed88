// Predicate engine (see predicates.hpp).
#include "sst/predicates.hpp"

#include <algorithm>

namespace spindle::sst {

Predicates::Id Predicates::add(PredicateKind kind, Predicate predicate, Trigger trigger) {
  const Id id = next_id_++;
  Entry e{id, kind, std::move(predicate), std::move(trigger)};
  (evaluating_ ? added_ : entries_).push_back(std::move(e));
  return id;
}

void Predicates::remove(Id id) {
  for (auto* list : {&entries_, &added_}) {
    for (auto& e : *list) {
      if (e.id == id && !e.removed) {
        e.removed = true;
        any_removed_ = true;
      }
    }
  }
}

std::size_t Predicates::size() const noexcept {
  std::size_t n = 0;
  for (const auto& e : entries_)
    n += e.removed ? 0 : 1;
  for (const auto& e : added_)
    n += e.removed ? 0 : 1;
  return n;
}

std::size_t Predicates::evaluate() {
  evaluating_ = true;
  std::size_t fired = 0;
  // Index loop: a trigger may add (to added_) or remove (mark) while we iterate.
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    auto& e = entries_[i];
    if (e.removed) continue;
    const bool holds = e.predicate();
    switch (e.kind) {
      case PredicateKind::recurrent:
        if (holds) {
          e.trigger();
          ++fired;
        }
        break;
      case PredicateKind::one_time:
        if (holds) {
          e.removed = true;
          any_removed_ = true;
          entries_[i].trigger();
          ++fired;
        }
        break;
      case PredicateKind::transition:
        if (holds && !e.last) {
          e.last = true;
          e.trigger();
          ++fired;
        } else {
          e.last = holds;
        }
        break;
    }
  }
  evaluating_ = false;
  if (any_removed_) {
    std::erase_if(entries_, [](const Entry& x) { return x.removed; });
    any_removed_ = false;
  }
  for (auto& e : added_)
    if (!e.removed) entries_.push_back(std::move(e));
  added_.clear();
  return fired;
}

}  // namespace spindle::sst
