// dds::core::Entity: the base of every DCPS entity (DDS-PSM-Cxx §7.3.7, DCPS §2.2.2.1).
// A reference type: copies refer to the same entity, `==` compares identity, and a
// default-constructed (or dds::core::null) Entity refers to nothing — using it throws
// NullReferenceError, and using a closed one throws AlreadyClosedError. Typed entities
// (DataReader<T>, Topic<T>, ...) derive from it and share the same delegate, so `dds::core::Entity
// e = reader;` and `StatusCondition(reader)` work for every entity.
//
// Threading: a reference may be copied and used from any thread; the operations are as
// thread-safe as the entity behind it (spindle/detail/entity_delegate.hpp).
#pragma once

#include <dds/core/InstanceHandle.hpp>
#include <dds/core/Reference.hpp>
#include <dds/core/status/State.hpp>
#include <spindle/detail/entity_delegate.hpp>

namespace dds::core {

class Entity : public Reference<spindle::detail::EntityDelegate> {
 public:
  using delegate_type = spindle::detail::EntityDelegate;
  using Reference::Reference;

  // Enables an entity created disabled (EntityFactory autoenable_created_entities=false).
  void enable() { checked().enable(); }
  // The statuses that changed since they were last read.
  [[nodiscard]] dds::core::status::StatusMask status_changes() const {
    return open().status_changes();
  }
  [[nodiscard]] InstanceHandle instance_handle() const { return open().instance_handle(); }
  // Releases the entity's resources now; every copy of this reference becomes unusable:
  // any operation on it, close() included, throws AlreadyClosedError.
  void close() { open().close(); }
  // Keeps the entity alive after the last reference is gone (until close()).
  void retain() { open().retain(); }

 protected:
  // The delegate of an entity that is not closed: NullReferenceError for a null
  // reference, AlreadyClosedError for a closed entity.
  [[nodiscard]] delegate_type& open() const {
    auto& d = checked();
    d.check_open();
    return d;
  }
};

}  // namespace dds::core
