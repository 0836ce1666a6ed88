// dds::topic::TopicDescription<T>: what a DataReader reads (DDS-PSM-Cxx §7.5.2.1) — a
// Topic<T>, or a ContentFilteredTopic<T> over one. Both convert to it; it gives the name,
// the type name and the participant.
//
// Threading: a reference; every operation may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include <dds/core/Entity.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <spindle/detail/dcps.hpp>

namespace dds::topic {

template <typename T>
class TopicDescription : public dds::core::Entity {
 public:
  using DataType = T;
  using Core = spindle::detail::TopicDescriptionCore;

  TopicDescription(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit TopicDescription(std::shared_ptr<Core> core) : Entity(std::move(core)) {}

  [[nodiscard]] const std::string& name() const { return core().name(); }
  [[nodiscard]] std::string type_name() const { return std::string(core().type().type_name); }
  [[nodiscard]] dds::domain::DomainParticipant domain_participant() const {
    return dds::domain::DomainParticipant(core().participant());
  }

  [[nodiscard]] Core& core() const { return static_cast<Core&>(checked()); }
};

}  // namespace dds::topic
