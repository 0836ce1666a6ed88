// dds::core::Reference<DELEGATE>: what makes the PSM's entities, conditions and WaitSets
// reference types (DDS-PSM-Cxx §7.3.2). A Reference shares one delegate with its copies;
// `==` compares identity; a default-constructed Reference, or one made from
// dds::core::null, refers to nothing, and using it throws NullReferenceError.
//
// Threading: a reference may be copied and used from any thread; what the delegate's
// operations allow is up to the delegate.
#pragma once

#include <memory>
#include <utility>

#include <dds/core/Exception.hpp>
#include <dds/core/types.hpp>

namespace dds::core {

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
  std::shared_ptr<DELEGATE> delegate_;
};

}  // namespace dds::core
