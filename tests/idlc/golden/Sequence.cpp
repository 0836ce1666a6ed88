// Generated from Sequence.idl by idlc 0.1.0 (Spindle DDS) — do not edit.
#include "Sequence.hpp"

#include <spindle/print.hpp>

#include <ostream>

namespace Bench {

std::ostream& operator<<(std::ostream& os, const ::Bench::Sequence& v) {
  os << "Bench::Sequence{";
  spindle::print_member(os, "writer_id", v.writer_id(), true);
  spindle::print_member(os, "seq", v.seq());
  spindle::print_member(os, "send_time_ns", v.send_time_ns());
  spindle::print_member(os, "payload", v.payload());
  return os << '}';
}

}  // namespace Bench

