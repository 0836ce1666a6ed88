// dds::core::cond::WaitSet: blocks an application thread until one of its conditions is
// true (DDS-PSM-Cxx §7.4.4, DCPS §2.2.2.1.6). A reference type: copies share the same
// set. wait() returns the conditions that are true (at least one), or throws
// dds::core::TimeoutError when the timeout passes first; dispatch() waits the same way
// and then runs the handler of each condition that triggered.
//
// Wake-ups are notifications, not polling: a condition whose source changes (a guard
// set, a status raised, a sample inserted) wakes the WaitSets it is attached to, which
// re-evaluate the triggers (spindle/detail/condition_delegate.hpp has the mechanism and
// the lock order).
//
// Threading: attach/detach/conditions may be called from any thread, also while another
// thread waits; one thread at a time may wait (a second concurrent wait() throws
// PreconditionNotMetError, as DCPS says).
#pragma once

#include <memory>
#include <vector>

#include <dds/core/Duration.hpp>
#include <dds/core/Reference.hpp>
#include <dds/core/cond/Condition.hpp>
#include <dds/core/types.hpp>

namespace spindle::dcps {
class WaitSetDelegate;
}

namespace dds::core::cond {

class WaitSet : public dds::core::Reference<spindle::dcps::WaitSetDelegate> {
 public:
  using ConditionSeq = std::vector<Condition>;
  using delegate_type = spindle::dcps::WaitSetDelegate;

  // A new, empty WaitSet.
  WaitSet();
  WaitSet(const null_type& n) : Reference(n) {}  // NOLINT(google-explicit-constructor)

  // The attached conditions that are true; waits until there is one. Throws TimeoutError
  // when `timeout` passes first.
  // Not [[nodiscard]]: PSM code often waits only to be woken and then reads.
  ConditionSeq wait(const dds::core::Duration& timeout);
  ConditionSeq wait();
  // The same into `triggered` (cleared first), which is returned.
  ConditionSeq& wait(ConditionSeq& triggered, const dds::core::Duration& timeout);
  ConditionSeq& wait(ConditionSeq& triggered);

  // Waits, then runs the handler of each condition that is true (TimeoutError as wait()).
  void dispatch();
  void dispatch(const dds::core::Duration& timeout);

  WaitSet& attach_condition(const Condition& cond);
  // False when `cond` was not attached.
  bool detach_condition(const Condition& cond);
  WaitSet& operator+=(const Condition& cond) { return attach_condition(cond); }
  WaitSet& operator-=(const Condition& cond) {
    detach_condition(cond);
    return *this;
  }

  [[nodiscard]] ConditionSeq conditions() const;
  ConditionSeq& conditions(ConditionSeq& conds) const;
};

}  // namespace dds::core::cond
