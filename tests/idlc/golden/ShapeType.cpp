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

const spindle::reflect::StructInfo& spindle::reflect::Reflect<::ShapeType>::info() {
  static const Member members[] = {
      {"color", Kind::string, [](const void* p) { return value_of(static_cast<const ::ShapeType*>(p)->color()); }, nullptr, nullptr, {}},
      {"x", Kind::signed_int, [](const void* p) { return value_of(static_cast<const ::ShapeType*>(p)->x()); }, nullptr, nullptr, {}},
      {"y", Kind::signed_int, [](const void* p) { return value_of(static_cast<const ::ShapeType*>(p)->y()); }, nullptr, nullptr, {}},
      {"shapesize", Kind::signed_int, [](const void* p) { return value_of(static_cast<const ::ShapeType*>(p)->shapesize()); }, nullptr, nullptr, {}},
  };
  static const StructInfo info{"ShapeType", members};
  return info;
}

