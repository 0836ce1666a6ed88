// dds::core::cond::GuardCondition: a condition whose trigger the application sets
// (DDS-PSM-Cxx §7.4.2, DCPS §2.2.2.1.8) — typically from another thread, to wake a WaitSet.
// A default-constructed GuardCondition is a new condition (trigger false).
//
// Threading: trigger_value(bool) may be called from any thread; every WaitSet the
// condition is attached to wakes when it becomes true.
#pragma once

#include <memory>
#include <utility>

#include <dds/core/cond/Condition.hpp>
#include <dds/core/types.hpp>
#include <spindle/detail/condition_delegate.hpp>

namespace dds::core::cond {

class GuardCondition : public Condition {
 public:
  using delegate_type = spindle::detail::GuardConditionDelegate;

  GuardCondition() : Condition(std::make_shared<delegate_type>()) {}
  // A new condition whose handler is `functor` (callable as f(), f(GuardCondition&) or
  // f(Condition&)).
  template <typename Functor>
  requires(!detail::is_condition_v<Functor>) explicit GuardCondition(Functor functor)
      : GuardCondition() {
    handler(std::move(functor));
  }
  GuardCondition(const null_type& n) : Condition(n) {}  // NOLINT(google-explicit-constructor)
  explicit GuardCondition(std::shared_ptr<delegate_type> delegate)
      : Condition(std::move(delegate)) {}
  // The GuardCondition `c` refers to; throws IllegalOperationError if it is another kind.
  GuardCondition(
      const Condition& c)  // NOLINT(google-explicit-constructor): `GuardCondition x = cond;`
      : Condition(downcast<delegate_type>(c)) {}
  // Assignment from a Condition (or dds::core::null), checked the same way.
  GuardCondition& operator=(const Condition& c) { return *this = GuardCondition(c); }
  GuardCondition& operator=(const dds::core::null_type& n) { return *this = GuardCondition(n); }

  using Condition::trigger_value;
  void trigger_value(bool value) { guard().set_trigger_value(value); }

  template <typename Functor>
  void handler(Functor func) {
    checked().set_handler(adapt<GuardCondition>(std::move(func)));
  }

 private:
  [[nodiscard]] delegate_type& guard() const { return static_cast<delegate_type&>(checked()); }
};

}  // namespace dds::core::cond
