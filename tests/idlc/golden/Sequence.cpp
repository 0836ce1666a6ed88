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

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::Bench::Sequence>::info() {
  static const Member members[] = {
      {"writer_id", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Bench::Sequence*>(p)->writer_id()); }, nullptr, nullptr, {}},
      {"seq", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Bench::Sequence*>(p)->seq()); }, nullptr, nullptr, {}},
      {"send_time_ns", Kind::unsigned_int, [](const void* p) { return value_of(static_cast<const ::Bench::Sequence*>(p)->send_time_ns()); }, nullptr, nullptr, {}},
      {"payload", Kind::other, nullptr, nullptr, nullptr, {}},
  };
  static const StructInfo info{"Bench::Sequence", members};
  return info;
}

