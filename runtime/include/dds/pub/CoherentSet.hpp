// dds::pub::CoherentSet and dds::pub::SuspendedPublication: the scoped forms of a
// publisher's begin/end_coherent_changes and suspend/resume_publications (DDS-PSM-Cxx
// §7.5.3, DCPS §2.2.2.4.1.8-11).
//
// Spindle DDS refuses Presentation coherent_access (UnsupportedError when the publisher is
// made, docs/dcps.md "Conformance"), and without it DCPS gives a coherent set no effect:
// the changes are delivered as they are written. Suspending publications is a hint the
// service may ignore (DCPS 2.2.2.4.1.8); Spindle DDS sends every sample at once — one SMC
// slot write — so there is nothing to gain by holding them. Both still check their
// publisher and their own state as the specification says.
//
// Threading: one object is used by one thread; several may exist at once.
#pragma once

#include <dds/core/Exception.hpp>
#include <dds/pub/Publisher.hpp>

namespace dds::pub {

class CoherentSet {
 public:
  explicit CoherentSet(const Publisher& pub) : pub_(pub) { (void)pub_.core(); }
  CoherentSet(const CoherentSet&) = delete;
  CoherentSet& operator=(const CoherentSet&) = delete;
  ~CoherentSet() = default;

  // Ends the set; PreconditionNotMetError when it has ended already.
  void end() {
    if (ended_) throw dds::core::PreconditionNotMetError("CoherentSet::end: already ended");
    (void)pub_.core();  // AlreadyClosedError once the publisher is closed
    ended_ = true;
  }

 private:
  Publisher pub_;
  bool ended_ = false;
};

class SuspendedPublication {
 public:
  explicit SuspendedPublication(const Publisher& pub) : pub_(pub) { (void)pub_.core(); }
  SuspendedPublication(const SuspendedPublication&) = delete;
  SuspendedPublication& operator=(const SuspendedPublication&) = delete;
  ~SuspendedPublication() = default;

  void resume() {
    if (resumed_) {
      throw dds::core::PreconditionNotMetError("SuspendedPublication::resume: already resumed");
    }
    (void)pub_.core();
    resumed_ = true;
  }

 private:
  Publisher pub_;
  bool resumed_ = false;
};

}  // namespace dds::pub
