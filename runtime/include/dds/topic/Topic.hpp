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
#include <type_traits>

#include <dds/core/Entity.hpp>
#include <dds/core/status/State.hpp>
#include <dds/core/status/Status.hpp>
#include <dds/domain/DomainParticipant.hpp>
#include <dds/topic/TopicDescription.hpp>
#include <dds/topic/TopicListener.hpp>
#include <dds/topic/qos/TopicQos.hpp>
#include <spindle/detail/dcps.hpp>
#include <spindle/detail/type_support.hpp>

namespace dds::topic {

// A Topic of any type; a TopicDescription (as in the specification, where a Topic is one).
class AnyTopic : public TopicDescription {
 public:
  using Core = spindle::detail::TopicCore;
  AnyTopic(const dds::core::null_type& n) : TopicDescription(n) {}  // NOLINT
  explicit AnyTopic(std::shared_ptr<Core> core) : TopicDescription(std::move(core)) {}
  // The topic `e` refers to; IllegalOperationError if it is another kind of entity. Implicit, as
  // the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  AnyTopic(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : TopicDescription(checked_downcast<Core>(e, "AnyTopic")) {}

  [[nodiscard]] qos::TopicQos qos() const { return core().qos(); }
  void qos(const qos::TopicQos& q) { core().qos(q); }
  [[nodiscard]] dds::core::status::InconsistentTopicStatus inconsistent_topic_status() const {
    return core().statuses().read<dds::core::status::InconsistentTopicStatus>();
  }

  AnyTopic& operator<<(const qos::TopicQos& q) {
    qos(q);
    return *this;
  }
  const AnyTopic& operator>>(qos::TopicQos& q) const {
    q = qos();
    return *this;
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
  // A topic whose type is registered under `type_name` rather than T's own name: Spindle
  // DDS matches topics by name and type name, so this must be T's IDL name
  // (topic_type_name<T>::value()); another name is refused with UnsupportedError.
  Topic(const dds::domain::DomainParticipant& dp, const std::string& name,
        const std::string& type_name)
      : Topic(dp, name, type_name, dp.default_topic_qos()) {}
  Topic(const dds::domain::DomainParticipant& dp, const std::string& name,
        const std::string& type_name, const qos::TopicQos& q, TopicListener<T>* listener = nullptr,
        const dds::core::status::StatusMask& mask = dds::core::status::StatusMask::all())
      : AnyTopic(create(dp, name, type_name, q)) {
    if (listener != nullptr) this->listener(listener, mask);
  }
  explicit Topic(std::shared_ptr<Core> core) : AnyTopic(std::move(core)) {}
  // The topic `t` or `e` refers to; IllegalOperationError if it is not a topic of T. Implicit, as
  // the specification's references convert (`Publisher p = entity;`, `p = entity;`).
  Topic(const AnyTopic& t)  // NOLINT(google-explicit-constructor)
      : Topic(static_cast<const dds::core::Entity&>(t)) {}
  Topic(const dds::core::Entity& e)  // NOLINT(google-explicit-constructor)
      : AnyTopic(checked_downcast<Core>(e, "Topic", spindle::detail::type_support<T>().type_name)) {
  }

  Topic& operator<<(const qos::TopicQos& q) {
    qos(q);
    return *this;
  }
  const Topic& operator>>(qos::TopicQos& q) const {
    q = qos();
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
  [[nodiscard]] TopicListener<T>* listener() const {
    auto* h = dynamic_cast<Hook*>(core().listener().get());
    return h == nullptr ? nullptr : h->target();
  }

 private:
  static std::shared_ptr<Core> create(const dds::domain::DomainParticipant& dp,
                                      const std::string& name, const std::string& type_name,
                                      const qos::TopicQos& q) {
    const auto& ts = spindle::detail::type_support<T>();
    if (type_name != ts.type_name) {
      // DCPS lets a type be registered under another name; Spindle matches topics by the
      // IDL name, so it does not.
      throw dds::core::UnsupportedError(
          "Topic '" + name + "': type name '" + type_name + "' is not the IDL name of its type, '" +
          std::string(ts.type_name) + "' (types are registered under their IDL name only)");
    }
    return dp.core().create_topic(name, ts, q);
  }
  class Hook final : public spindle::detail::TopicListenerHook {
   public:
    Hook(TopicListener<T>* l, const std::shared_ptr<Core>& c) : l_(l), core_(c) {}
    TopicListener<T>* target() const noexcept { return l_; }
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

// Whether T is a topic type (idlc generated its spindle::topic_traits), and its type name
// ("Undefined" for a type that is not one, as the specification's default).
template <typename T>
inline constexpr bool is_topic_type_v = spindle::Topic<T>;
template <typename T>
struct is_topic_type : std::bool_constant<spindle::Topic<T>> {};
template <typename T>
struct topic_type_name {
  static std::string value() {
    if constexpr (spindle::Topic<T>) {
      return std::string(spindle::topic_traits<T>::type_name);
    } else {
      return "Undefined";
    }
  }
};

}  // namespace dds::topic
