// The exceptions of the DCPS API (ISO C++ PSM, DDS-PSM-Cxx §7.3.5). Every DCPS call that
// fails throws one of these; internal result codes never cross the API (STYLE 5).
// `dds::core::Exception` is the common interface; each concrete error also derives from
// the standard exception that matches its meaning, so `catch (const std::exception&)`
// works as well.
//
// Threading: value types; safe to copy and throw from any thread.
#pragma once

#include <stdexcept>
#include <string>

namespace dds::core {

class Exception {
 public:
  Exception() = default;
  Exception(const Exception&) = default;
  Exception& operator=(const Exception&) = default;
  virtual ~Exception() = default;
  [[nodiscard]] virtual const char* what() const noexcept = 0;
};

// Each error: Exception + the std exception it is a kind of.
#define SPINDLE_DDS_ERROR(name, base)                                                 \
  class name : public Exception, public base {                                        \
   public:                                                                            \
    explicit name(const std::string& msg) : base(msg) {}                              \
    [[nodiscard]] const char* what() const noexcept override { return base::what(); } \
  }

// Generic, unspecified error.
SPINDLE_DDS_ERROR(Error, std::logic_error);
// The entity was closed (close() or its owner went away) and cannot be used.
SPINDLE_DDS_ERROR(AlreadyClosedError, std::logic_error);
// The operation is not allowed in the entity's current state or context.
SPINDLE_DDS_ERROR(IllegalOperationError, std::logic_error);
// A policy that cannot change after enable() was changed.
SPINDLE_DDS_ERROR(ImmutablePolicyError, std::logic_error);
// Policies contradict each other (e.g. history depth above max_samples_per_instance).
SPINDLE_DDS_ERROR(InconsistentPolicyError, std::logic_error);
// A parameter is out of range or otherwise wrong.
SPINDLE_DDS_ERROR(InvalidArgumentError, std::invalid_argument);
// An entity was converted to a type it is not.
SPINDLE_DDS_ERROR(InvalidDowncastError, std::runtime_error);
// The entity is not enabled yet.
SPINDLE_DDS_ERROR(NotEnabledError, std::logic_error);
// A resource limit was reached (history, ring slots, memory).
SPINDLE_DDS_ERROR(OutOfResourcesError, std::runtime_error);
// A precondition of the call does not hold (e.g. deleting a participant with children).
SPINDLE_DDS_ERROR(PreconditionNotMetError, std::logic_error);
// A blocking call ran out of time (write under back-pressure, wait_for_acknowledgments).
SPINDLE_DDS_ERROR(TimeoutError, std::runtime_error);
// The operation is not supported by this implementation.
SPINDLE_DDS_ERROR(UnsupportedError, std::logic_error);
// A null reference (a default-constructed entity handle) was used.
SPINDLE_DDS_ERROR(NullReferenceError, std::runtime_error);
// Data that cannot be handled (e.g. a sample that does not serialize).
SPINDLE_DDS_ERROR(InvalidDataError, std::logic_error);
// The domain's permissions do not let this participant do it (a writer or reader of a topic
// it has no grant for: docs/security.md).
SPINDLE_DDS_ERROR(NotAllowedBySecurityError, std::logic_error);

#undef SPINDLE_DDS_ERROR

}  // namespace dds::core
