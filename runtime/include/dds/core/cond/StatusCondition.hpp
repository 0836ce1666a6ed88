// dds::core::cond::StatusCondition: a condition that is true while its entity has a
// changed communication status among the enabled ones (DDS-PSM-Cxx §7.4.3, DCPS
// §2.2.2.1.9). Each entity has exactly one: `StatusCondition(entity)` returns it, so two
// StatusConditions made from the same entity compare equal. All statuses are enabled
// until enabled_statuses() narrows them. Reading a status (or, for DATA_AVAILABLE,
// reading/taking data) clears its change flag, and with it the trigger.
//
// Threading: references may be copied and used from any thread.
#pragma once

#include <memory>
#include <utility>

#include <dds/core/Entity.hpp>
#include <dds/core/Exception.hpp>
#include <dds/core/cond/Condition.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/types.hpp>
#include <spindle/detail/condition_delegate.hpp>

namespace dds::core::cond {

class StatusCondition : public Condition {
 public:
  using delegate_type = spindle::detail::StatusConditionDelegate;

  StatusCondition(const null_type& n) : Condition(n) {}  // NOLINT(google-explicit-constructor)
  // The entity's StatusCondition. Throws NullReferenceError for a null entity and
  // AlreadyClosedError for a closed one.
  explicit StatusCondition(const dds::core::Entity& entity)
      : Condition(entity_delegate(entity).status_condition()) {}
  // ...with `functor` as its handler (callable as f(), f(StatusCondition&) or
  // f(Condition&)).
  template <typename Functor>
  StatusCondition(const dds::core::Entity& entity, Functor functor) : StatusCondition(entity) {
    handler(std::move(functor));
  }
  explicit StatusCondition(std::shared_ptr<delegate_type> delegate)
      : Condition(std::move(delegate)) {}
  // The StatusCondition `c` refers to; throws IllegalOperationError if it is another kind.
  StatusCondition(
      const Condition& c)  // NOLINT(google-explicit-constructor): `StatusCondition x = cond;`
      : Condition(downcast<delegate_type>(c)) {}
  // Assignment from a Condition (or dds::core::null), checked the same way.
  StatusCondition& operator=(const Condition& c) { return *this = StatusCondition(c); }
  StatusCondition& operator=(const dds::core::null_type& n) { return *this = StatusCondition(n); }

  void enabled_statuses(const dds::core::status::StatusMask& mask) const {
    status().enabled_statuses(mask);
  }
  [[nodiscard]] dds::core::status::StatusMask enabled_statuses() const {
    return status().enabled_statuses();
  }
  // The entity this condition belongs to; throws AlreadyClosedError once it is gone.
  [[nodiscard]] dds::core::Entity entity() const {
    auto e = status().entity();
    if (!e) throw AlreadyClosedError("dds::core::cond::StatusCondition: the entity is gone");
    return dds::core::Entity(std::move(e));
  }

  template <typename Functor>
  void handler(Functor func) {
    checked().set_handler(adapt<StatusCondition>(std::move(func)));
  }

 private:
  static spindle::detail::EntityDelegate& entity_delegate(const dds::core::Entity& entity) {
    if (entity.is_nil()) throw NullReferenceError("dds::core::cond::StatusCondition: null entity");
    entity.delegate()->check_open();
    return *entity.delegate();
  }
  [[nodiscard]] delegate_type& status() const { return static_cast<delegate_type&>(checked()); }
};

}  // namespace dds::core::cond
