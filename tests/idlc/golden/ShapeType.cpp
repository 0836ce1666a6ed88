// Generated from ShapeType.idl by idlc 0.1.0 (Spindle DDS) — do not edit.
#include "ShapeType.hpp"

#include <spindle/print.hpp>

#include <ostream>

std::ostream& operator<<(std::ostream& os, const ::ShapeType& v) {
  os << "ShapeType{";
  spindle::print_member(os, "color", v.color(), true);
  spindle::print_member(os, "x", v.x());
  spindle::print_member(os, "y", v.y());
  spindle::print_member(os, "shapesize", v.shapesize());
  return os << '}';
}

