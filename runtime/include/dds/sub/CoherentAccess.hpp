// dds::sub::CoherentAccess: the scoped form of a subscriber's begin/end_access
// (DDS-PSM-Cxx §7.5.5, DCPS §2.2.2.5.2.8-9). Spindle DDS refuses Presentation
// coherent_access and GROUP ordered_access (UnsupportedError, docs/dcps.md
// "Conformance"); without them DCPS gives begin/end_access no effect, so the object only
// checks its subscriber and its own state.
//
// Threading: one object is used by one thread.
#pragma once

#include <dds/core/Exception.hpp>
#include <dds/sub/Subscriber.hpp>

namespace dds::sub {

class CoherentAccess {
 public:
  explicit CoherentAccess(const Subscriber& sub) : sub_(sub) { (void)sub_.core(); }
  CoherentAccess(const CoherentAccess&) = delete;
  CoherentAccess& operator=(const CoherentAccess&) = delete;
  ~CoherentAccess() = default;

  void end() {
    if (ended_) throw dds::core::PreconditionNotMetError("CoherentAccess::end: already ended");
    (void)sub_.core();
    ended_ = true;
  }

 private:
  Subscriber sub_;
  bool ended_ = false;
};

}  // namespace dds::sub
