// Must not compile: OwnershipStrength is a writer policy; a reader QoS has no place for it.
// Built with -DSPINDLE_CONTROL it puts the policy where it belongs and must compile, so a
// failure is known to come from the misplaced policy (tests/qos/compile_fail.cmake).
#include <dds/pub/qos/DataWriterQos.hpp>
#include <dds/sub/qos/DataReaderQos.hpp>

int main() {
#ifdef SPINDLE_CONTROL
  dds::pub::qos::DataWriterQos q;
#else
  dds::sub::qos::DataReaderQos q;
#endif
  q << dds::core::policy::OwnershipStrength(3);
  return 0;
}
