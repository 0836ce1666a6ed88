// Predicate engine (the SST paper §3.2/§4.3; DESIGN §4): (predicate, trigger) pairs of
// three kinds, evaluated in registration order by one thread.
//
//   one_time    fires the first time the predicate holds, then is removed
//   recurrent   fires every evaluation in which the predicate holds
//   transition  fires when the predicate goes false -> true (starts as false)
//
// Threading: owned by the predicate thread. add()/remove() may be called from triggers
// (an added pair is evaluated from the next step on; a removed one stops at once) or from
// the control thread while the predicate thread is stopped. Triggers queue SST pushes
// (Sst::push_*); the loop issues them after the step (PredicateLoop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace spindle::sst {

enum class PredicateKind : std::uint8_t { one_time, recurrent, transition };

class Predicates {
 public:
  using Predicate = std::function<bool()>;
  using Trigger = std::function<void()>;
  using Id = std::uint64_t;

  Id add(PredicateKind kind, Predicate predicate, Trigger trigger);
  // Removes a pair; unknown or already removed ids are ignored.
  void remove(Id id);
  // Evaluates every pair once, in order; returns the number of triggers run.
  std::size_t evaluate();
  [[nodiscard]] std::size_t size() const noexcept;

 private:
  struct Entry {
    Id id;
    PredicateKind kind;
    Predicate predicate;
    Trigger trigger;
    bool last = false;  // transition: value at the previous evaluation
    bool removed = false;
  };
  std::vector<Entry> entries_;
  std::vector<Entry> added_;  // added during evaluate(): joined after the step
  Id next_id_ = 1;
  bool evaluating_ = false;
  bool any_removed_ = false;
};

}  // namespace spindle::sst
