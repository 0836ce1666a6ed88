// dds::core::Reference<DELEGATE>: what makes the PSM's entities, conditions and WaitSets
// reference types (DDS-PSM-Cxx §7.3.2). A Reference shares one delegate with its copies;
// `==` compares identity; a default-constructed Reference, or one made from
// dds::core::null, refers to nothing, and using it throws NullReferenceError.
//
// polymorphic_cast<TO>(from) converts between reference types that share a delegate root
// (Entity -> DataWriter<T>, AnyDataReader -> DataReader<T>, Condition -> StatusCondition):
// the result refers to the same object, or InvalidDowncastError is thrown when the object
// is of another kind (another entity kind, another data type, another condition kind). A
// null reference casts to a null one. WeakReference (WeakReference.hpp) observes a
// reference without keeping its object alive.
//
// Threading: a reference may be copied and used from any thread; what the delegate's
// operations allow is up to the delegate.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include <dds/core/Exception.hpp>
#include <dds/core/types.hpp>

namespace dds::core {

template <typename T>
class WeakReference;

template <typename DELEGATE>
class Reference {
 public:
  using DELEGATE_T = DELEGATE;
  using DELEGATE_REF_T = std::shared_ptr<DELEGATE>;

  Reference() = default;
  Reference(const null_type&) {}  // NOLINT(google-explicit-constructor)
  explicit Reference(std::shared_ptr<DELEGATE> delegate) : delegate_(std::move(delegate)) {}

  [[nodiscard]] bool is_nil() const noexcept { return delegate_ == nullptr; }
  [[nodiscard]] const std::shared_ptr<DELEGATE>& delegate() const noexcept { return delegate_; }
  DELEGATE* operator->() const { return &checked(); }

  friend bool operator==(const Reference& a, const Reference& b) noexcept {
    return a.delegate_ == b.delegate_;
  }
  friend bool operator==(const Reference& a, const null_type&) noexcept { return a.is_nil(); }

 protected:
  [[nodiscard]] DELEGATE& checked() const {
    if (!delegate_) throw NullReferenceError("dds::core::Reference: null reference");
    return *delegate_;
  }

 private:
  // WeakReference<T>::lock() rebuilds a T around the delegate it observed (which came from
  // a T, so no check is needed).
  template <typename T>
  friend class WeakReference;

  std::shared_ptr<DELEGATE> delegate_;
};

// The checked downcast (and the plain upcast) between reference types of one delegate root.
// Each entity and condition reference type has an explicit constructor from its root
// (dds::core::Entity, dds::core::cond::Condition) that checks the delegate's kind; this
// is that constructor under the PSM's name.
template <typename TO, typename FROM>
TO polymorphic_cast(const FROM& from) {
  static_assert(std::is_same_v<typename TO::DELEGATE_T, typename FROM::DELEGATE_T>,
                "polymorphic_cast converts only between references of one delegate root "
                "(entities to entities, conditions to conditions)");
  static_assert(std::is_constructible_v<TO, const FROM&>,
                "polymorphic_cast needs TO to be constructible from FROM's root");
  try {
    return TO(from);
  } catch (const IllegalOperationError& e) {  // a conversion's refusal (Entity.hpp)
    throw InvalidDowncastError(e.what());
  }
}

}  // namespace dds::core
