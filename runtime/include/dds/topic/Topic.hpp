// dds::topic::Topic<T>: a named topic of type T in a participant (DDS-PSM-Cxx §7.5.2), and
// AnyTopic, its untyped form (what an AnyTopicListener receives). The type name comes
// from idlc's generated spindle::topic_traits<T>; a participant refuses a second topic of
// the same name with another type, and another member using the name with another type
// raises INCONSISTENT_TOPIC.
//
// Threading: every operation may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include <dds/core/Entity.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/status/Status.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/topic/TopicListener.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

class AnyTopic : public dds::core::Entity {
 public:
  using Core = spindle::detail::TopicCore;
  AnyTopic(const dds::core::null_type& n) : Entity(n) {}  // NOLINT
  explicit AnyTopic(std::shared_ptr<Core> core) : Entity(std::move(core)) {}
  // The topic `e` refers to; InvalidDowncastError if it is another kind of entity.
  explicit AnyTopic(const dds::core::Entity& e) : Entity(checked_downcast<Core>(e, "AnyTopic")) {}

  [[nodiscard]] const std::string& name() const { return core().name(); }
  [[nodiscard]] std::string type_name() const { return std::string(core().type().type_name); }
  [[nodiscard]] dds::domain::DomainParticipant domain_participant() const {
    return dds::domain::DomainParticipant(core().participant());
  }
  [[nodiscard]] qos::TopicQos qos() const { return core().qos(); }
  void qos(const qos::TopicQos& q) { core().qos(q); }
  [[nodiscard]] dds::core::status::InconsistentTopicStatus inconsistent_topic_status() const {
    return core().statuses().read<dds::core::status::InconsistentTopicStatus>();
  }

  [[nodiscard]] Core& core() const { return static_cast<Core&>(open()); }
  [[nodiscard]] std::shared_ptr<Core> core_ptr() const {
    (void)open();
    return std::static_pointer_cast<Core>(delegate());
  }
};

template <typename T>
class Topic : public AnyTopic {
 public:
  using DataType = T;

  Topic(const dds::core::null_type& n) : AnyTopic(n) {}  // NOLINT
  Topic(const dds::domain::DomainParticipant& dp, const std::string& name)
      : Topic(dp, name, dp.default_topic_qos()) {}
  Topic(const dds::domain::DomainParticipant& dp, const std::string& name, const qos::TopicQos& q,
        TopicListener<T>* listener = nullptr,
        const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : AnyTopic(dp.core().create_topic(name, spindle::detail::type_support<T>(), q)) {
    if (listener != nullptr) this->listener(listener, mask);
  }
  explicit Topic(std::shared_ptr<Core> core) : AnyTopic(std::move(core)) {}
  // The topic `e` refers to; InvalidDowncastError if it is not a topic of T.
  explicit Topic(const dds::core::Entity& e)
      : AnyTopic(checked_downcast<Core>(e, "Topic", spindle::detail::type_support<T>().type_name)) {
  }

  Topic& operator<<(const qos::TopicQos& q) {
    qos(q);
    return *this;
  }
  using AnyTopic::qos;

  void listener(TopicListener<T>* l, const dds::core::status::StatusMask& mask) {
    if (l == nullptr) {
      core().listener(nullptr, mask);
      return;
    }
    core().listener(std::make_shared<Hook>(l, core_ptr()), mask);
  }

 private:
  class Hook final : public spindle::detail::TopicListenerHook {
   public:
    Hook(TopicListener<T>* l, const std::shared_ptr<Core>& c) : l_(l), core_(c) {}
    void on_inconsistent_topic(const dds::core::status::InconsistentTopicStatus& s) override {
      if (auto c = core_.lock()) {
        Topic<T> t(c);
        l_->on_inconsistent_topic(t, s);
      }
    }

   private:
    TopicListener<T>* l_;
    std::weak_ptr<Core> core_;
  };
};

}  // namespace dds::topic
