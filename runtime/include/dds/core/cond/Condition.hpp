// dds::core::cond::Condition: the base of GuardCondition, StatusCondition and ReadCondition
// (DDS-PSM-Cxx §7.4.1, DCPS §2.2.2.1.6). A reference type: copies refer to the same
// condition and `==` compares identity, so a condition returned by WaitSet::wait() can be
// compared with the one the application attached.
//
// A handler (any callable taking nothing, the condition, or — for a ReadCondition — the
// reader) is run by dispatch() and by WaitSet::dispatch() when the condition triggered.
//
// Threading: references may be copied and used from any thread; handlers run on the
// thread that dispatches.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include <dds/core/Exception.hpp>
#include <dds/core/Reference.hpp>
#include <dds/core/types.hpp>
#include <spindle/detail/condition_delegate.hpp>

namespace dds::core::cond {

class Condition : public dds::core::Reference<spindle::detail::ConditionDelegate> {
 public:
  using delegate_type = spindle::detail::ConditionDelegate;
  using Reference::Reference;

  // Sets the functor dispatch() runs: callable as f(), or as f(Condition&).
  template <typename Functor>
  void handler(Functor func) {
    checked().set_handler(adapt<Condition>(std::move(func)));
  }
  void reset_handler() { checked().reset_handler(); }
  // Runs the handler, if any, on this thread.
  void dispatch() { checked().dispatch(); }
  [[nodiscard]] bool trigger_value() const { return checked().trigger_value(); }

 protected:
  // The delegate of `c` as a D, for the typed conditions' constructors from a Condition.
  template <class D>
  static std::shared_ptr<D> downcast(const Condition& c) {
    if (c.is_nil()) return nullptr;
    auto d = std::dynamic_pointer_cast<D>(c.delegate());
    if (!d) {
      // As the specification's reference conversions do (polymorphic_cast turns it into an
      // InvalidDowncastError).
      throw IllegalOperationError("dds::core::cond::Condition: not of the requested kind");
    }
    return d;
  }

  // Wraps an application functor as a delegate handler that hands it a `Self` (the typed
  // condition) when it takes one. Self::delegate_type names the matching delegate.
  template <class Self, class F>
  static spindle::detail::ConditionDelegate::Handler adapt(F func) {
    return [func = std::move(func)](spindle::detail::ConditionDelegate& d) mutable {
      if constexpr (std::is_invocable_v<F&, Self&>) {
        Self self(std::static_pointer_cast<typename Self::delegate_type>(d.shared_from_this()));
        func(self);
      } else if constexpr (std::is_invocable_v<F&, Condition&>) {
        Condition self(d.shared_from_this());
        func(self);
      } else {
        static_assert(std::is_invocable_v<F&>,
                      "a condition handler is callable as f(), f(Condition&) or f(TheCondition&)");
        func();
      }
    };
  }
};

namespace detail {
// True for the condition reference types themselves, so that functor-taking template
// constructors do not hijack copies.
template <class F>
inline constexpr bool is_condition_v = std::is_base_of_v<Condition, std::remove_cvref_t<F>> ||
                                       std::is_same_v<std::remove_cvref_t<F>, null_type>;
}  // namespace detail

}  // namespace dds::core::cond
