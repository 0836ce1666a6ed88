// dds::core::Entity: the base of every DCPS entity (DDS-PSM-Cxx §7.3.7, DCPS §2.2.2.1).
// A reference type: copies refer to the same entity, `==` compares identity, and a
// default-constructed (or dds::core::null) Entity refers to nothing — using it throws
// NullReferenceError. Typed entities (DataReader<T>, Topic<T>, ...) derive from it and
// share the same delegate, so `dds::core::Entity e = reader;` and
// `StatusCondition(reader)` work for every entity.
//
// Threading: a reference may be copied and used from any thread; the operations are as
// thread-safe as the entity behind it (spindle/detail/entity_delegate.hpp).
#pragma once

#include <memory>
#include <utility>

#include <dds/core/Exception.hpp>
#include <dds/core/InstanceHandle.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/types.hpp>
#include <spindle/detail/entity_delegate.hpp>

namespace dds::core {

class Entity {
 public:
  using delegate_type = spindle::detail::EntityDelegate;

  Entity() = default;
  Entity(const null_type&) {}  // NOLINT(google-explicit-constructor)
  explicit Entity(std::shared_ptr<delegate_type> delegate) : delegate_(std::move(delegate)) {}

  // Enables an entity created disabled (EntityFactory autoenable_created_entities=false).
  void enable() { checked().enable(); }
  // The statuses that changed since they were last read.
  [[nodiscard]] dds::core::status::StatusMask status_changes() const {
    return checked().status_changes();
  }
  [[nodiscard]] InstanceHandle instance_handle() const { return checked().instance_handle(); }
  // Releases the entity's resources now; every copy of this reference becomes unusable.
  void close() { checked().close(); }
  // Keeps the entity alive after the last reference is gone (until close()).
  void retain() { checked().retain(); }

  [[nodiscard]] bool is_nil() const noexcept { return delegate_ == nullptr; }
  [[nodiscard]] const std::shared_ptr<delegate_type>& delegate() const noexcept {
    return delegate_;
  }
  delegate_type* operator->() const { return &checked(); }

  friend bool operator==(const Entity& a, const Entity& b) noexcept {
    return a.delegate_ == b.delegate_;
  }
  friend bool operator==(const Entity& a, const null_type&) noexcept { return a.is_nil(); }

 protected:
  [[nodiscard]] delegate_type& checked() const {
    if (!delegate_) throw NullReferenceError("dds::core::Entity: null reference");
    return *delegate_;
  }

 private:
  std::shared_ptr<delegate_type> delegate_;
};

}  // namespace dds::core
