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

#include <memory>
#include <string>
#include <string_view>

#include <dds/core/Exception.hpp>
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
  // The delegate of `e` as a D, for the typed entities' constructors from an Entity (and so
  // for polymorphic_cast): null for a null entity, IllegalOperationError naming `to` when
  // `e` is another kind of entity (as the specification's reference conversions throw;
  // polymorphic_cast turns it into an InvalidDowncastError).
  template <class D>
  static std::shared_ptr<D> checked_downcast(const Entity& e, const char* to) {
    if (e.is_nil()) return nullptr;
    auto d = std::dynamic_pointer_cast<D>(e.delegate());
    if (!d) throw IllegalOperationError(std::string(to) + ": the entity is not one");
    return d;
  }
  // The same, for a typed entity (Topic<T>, DataWriter<T>, DataReader<T>): also refuses a
  // delegate whose data type is not `type_name`.
  template <class D>
  static std::shared_ptr<D> checked_downcast(const Entity& e, const char* to,
                                             std::string_view type_name) {
    auto d = checked_downcast<D>(e, to);
    if (d && d->type().type_name != type_name) {
      throw IllegalOperationError(std::string(to) + ": the entity's type is '" +
                                  std::string(d->type().type_name) + "', not '" +
                                  std::string(type_name) + "'");
    }
    return d;
  }

  // The delegate of an entity that is not closed: NullReferenceError for a null
  // reference, AlreadyClosedError for a closed entity.
  [[nodiscard]] delegate_type& open() const {
    auto& d = checked();
    d.check_open();
    return d;
  }
};

}  // namespace dds::core
