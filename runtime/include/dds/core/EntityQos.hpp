// dds::core::TEntityQos: the common shape of the entity QoS classes (DataWriterQos, ...;
// DDS-PSM-Cxx §7.5.1): a fixed set of policies, set with `qos << policy` or
// `qos.policy(p)`, read with `qos >> policy` or `qos.policy<P>()`. Each entity QoS class
// derives from it with exactly the policies the DDS specification gives that entity, so
// putting a policy into the wrong entity's QoS fails to compile with a readable message.
//
//   dds::pub::qos::DataWriterQos q;
//   q << Reliability::Reliable() << History::KeepLast(8);   // chainable
//   History h; q >> h;                                      // h.depth() == 8
//   q.policy<History>().depth(16);                          // in place
//
// Threading: a value type.
#pragma once

#include <tuple>
#include <type_traits>

namespace dds::core {

template <class Derived, class... Policies>
class TEntityQos {
 public:
  // Spindle extension: the policies this QoS holds (used by the YAML profile schema).
  using policy_types = std::tuple<Policies...>;
  template <class P>
  static constexpr bool holds = (std::is_same_v<P, Policies> || ...);

  template <class P>
  Derived& policy(const P& p) {
    static_assert(holds<P>,
                  "this QoS policy does not apply to this entity (DDS 1.4 §2.2.3 lists the "
                  "policies of each entity)");
    std::get<P>(policies_) = p;
    return static_cast<Derived&>(*this);
  }
  template <class P>
  [[nodiscard]] const P& policy() const {
    static_assert(holds<P>,
                  "this QoS policy does not apply to this entity (DDS 1.4 §2.2.3 lists the "
                  "policies of each entity)");
    return std::get<P>(policies_);
  }
  template <class P>
  [[nodiscard]] P& policy() {
    static_assert(holds<P>,
                  "this QoS policy does not apply to this entity (DDS 1.4 §2.2.3 lists the "
                  "policies of each entity)");
    return std::get<P>(policies_);
  }

  template <class P>
  Derived& operator<<(const P& p) {
    return policy(p);
  }
  template <class P>
  const Derived& operator>>(P& p) const {
    p = policy<P>();
    return static_cast<const Derived&>(*this);
  }

  friend bool operator==(const TEntityQos&, const TEntityQos&) = default;

 protected:
  // Copies every policy `other` shares with this QoS and leaves the rest alone (the PSM's
  // conversion from TopicQos to DataWriterQos/DataReaderQos).
  template <class OtherDerived, class... Others>
  void copy_shared_policies(const TEntityQos<OtherDerived, Others...>& other) {
    (copy_if_held<Others>(other.template policy<Others>()), ...);
  }

 private:
  template <class P>
  void copy_if_held(const P& p) {
    if constexpr (holds<P>) std::get<P>(policies_) = p;
  }

  std::tuple<Policies...> policies_;
};

}  // namespace dds::core
