// dds::topic::TopicDescription: what a DataReader reads (DDS-PSM-Cxx §7.5.2.1) — a
// Topic<T> (through AnyTopic), or a ContentFilteredTopic<T> over one. Both are one; it gives
// the name, the type name and the participant. Not a template, as in the specification's
// headers: `dds::topic::TopicDescription td = reader.topic_description();`.
//
// Threading: a reference; every operation may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include <dds/core/Entity.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::topic {

class TopicDescription : public dds::core::Entity {
 public:
  using Core = spindle::detail::TopicDescriptionCore;

  TopicDescription(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit TopicDescription(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  // The topic description `e` refers to; IllegalOperationError if it is another kind of
  // entity. Implicit, as the specification's references convert.
  TopicDescription(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : Entity(checked_downcast<Core>(e, "TopicDescription")) {}

  [[nodiscard]] const std::string& name() const { return core().name(); }
  [[nodiscard]] std::string type_name() const { return std::string(core().type().type_name); }
  [[nodiscard]] dds::domain::DomainParticipant domain_participant() const {
    return dds::domain::DomainParticipant(core().participant());
  }

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
};

}  // namespace dds::topic
