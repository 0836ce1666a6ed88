// dds::sub::CoherentAccess: the scoped form of a subscriber's begin/end_access
// (DDS-PSM-Cxx §7.5.5, DCPS §2.2.2.5.2.8-9). With GROUP ordered access, dds::sub::find(sub,
// state, out) lists the subscriber's readers in the order of their samples across the
// group's topics (a reader once per sample) while access is open; read one sample from each
// in that order (docs/dcps.md, "Presentation"). Without GROUP access it has no effect.
//
// Threading: one object is used by one thread.
#pragma once

#include <dds/core/Exception.hpp>
#include <dds/sub/Subscriber.hpp>

namespace dds::sub {

class CoherentAccess {
 public:
  explicit CoherentAccess(const Subscriber& sub) : sub_(sub) { sub_.core().begin_access(); }
  CoherentAccess(const CoherentAccess&) = delete;
  CoherentAccess& operator=(const CoherentAccess&) = delete;
  ~CoherentAccess() {
    if (ended_) return;
    try {
      end();
    } catch (const dds::core::Exception&) {
    }
  }

  void end() {
    if (ended_) throw dds::core::PreconditionNotMetError("CoherentAccess::end: already ended");
    ended_ = true;
    sub_.core().end_access();
  }

 private:
  Subscriber sub_;
  bool ended_ = false;
};

}  // namespace dds::sub
