// dds::pub::CoherentSet and dds::pub::SuspendedPublication: the scoped forms of a
// publisher's begin/end_coherent_changes and suspend/resume_publications (DDS-PSM-Cxx
// §7.5.3, DCPS §2.2.2.4.1.8-11).
//
// With the publisher's Presentation coherent_access, the samples its writers write between
// the CoherentSet's construction and end() (or its destruction) travel as one message per
// writer (TOPIC scope) or for the whole publisher (GROUP scope): every reader gets all of a
// set or none of it, at the same place in the order (docs/dcps.md, "Coherent sets").
// Without coherent_access a set has no effect (DCPS 2.2.2.4.1.10). Suspending publications
// is a hint the service may ignore (DCPS 2.2.2.4.1.8); Spindle DDS sends every sample at
// once — one SMC slot write — so there is nothing to gain by holding them.
//
// Threading: one object is used by one thread; several may exist at once (they nest).
#pragma once

#include <dds/core/Exception.hpp>
#include <dds/pub/Publisher.hpp>

namespace dds::pub {

class CoherentSet {
 public:
  explicit CoherentSet(const Publisher& pub) : pub_(pub) { pub_.core().begin_coherent_changes(); }
  CoherentSet(const CoherentSet&) = delete;
  CoherentSet& operator=(const CoherentSet&) = delete;
  // Ends the set if end() was not called; an error then is swallowed (a destructor must not
  // throw): call end() to see it.
  ~CoherentSet() {
    if (ended_) return;
    try {
      end();
    } catch (const dds::core::Exception&) {
    }
  }

  // Ends the set, publishing it; PreconditionNotMetError when it has ended already, and the
  // write errors of its writers (TimeoutError, PreconditionNotMetError past the largest
  // message, AlreadyClosedError).
  void end() {
    if (ended_) throw dds::core::PreconditionNotMetError("CoherentSet::end: already ended");
    ended_ = true;
    pub_.core().end_coherent_changes();
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
