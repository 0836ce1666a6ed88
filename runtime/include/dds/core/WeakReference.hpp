// dds::core::WeakReference<T>: a reference that does not keep its object alive
// (DDS-PSM-Cxx §7.3.2). T is any reference type (an entity such as DataReader<T> or
// DomainParticipant, a condition, a WaitSet). lock() gives a T that refers to the object
// while something else still holds it, else a null T; expired() says which of the two
// lock() would give now. A weak reference observes lifetime only: a closed entity that is
// still referenced somewhere is not expired (using it throws AlreadyClosedError).
//
// Threading: like std::weak_ptr — a WeakReference may be copied and locked from any
// thread; one WeakReference object is not assigned concurrently with other use.
#pragma once

#include <memory>
#include <utility>

#include <dds/core/Reference.hpp>
#include <dds/core/types.hpp>

namespace dds::core {

template <typename T>
class WeakReference {
 public:
  using DELEGATE_T = typename T::DELEGATE_T;

  // Observes nothing: expired(), and lock() gives a null T.
  WeakReference() = default;
  // Observes what `t` refers to (nothing when `t` is null).
  WeakReference(const T& t) : delegate_(t.delegate()) {}  // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool expired() const noexcept { return delegate_.expired(); }
  // A T that refers to the object, or a null T once the object is gone.
  [[nodiscard]] T lock() const {
    T out(dds::core::null);
    static_cast<Reference<DELEGATE_T>&>(out).delegate_ = delegate_.lock();
    return out;
  }

 private:
  std::weak_ptr<DELEGATE_T> delegate_;
};

}  // namespace dds::core
