// Generated from ShapeType.idl by idlc 0.1.0 (Spindle DDS) — do not edit.
#pragma once

#include <spindle/cdr/codec.hpp>
#include <spindle/reflect.hpp>
#include <spindle/topic_traits.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

class ShapeType {
 public:
  ShapeType() = default;
  ShapeType(std::string color, int32_t x, int32_t y, int32_t shapesize)
      : color_(std::move(color)),
        x_(std::move(x)),
        y_(std::move(y)),
        shapesize_(std::move(shapesize)) {}

  const std::string& color() const { return color_; }
  std::string& color() { return color_; }
  void color(const std::string& value) { color_ = value; }
  void color(std::string&& value) { color_ = std::move(value); }
  int32_t x() const { return x_; }
  int32_t& x() { return x_; }
  void x(int32_t value) { x_ = value; }
  int32_t y() const { return y_; }
  int32_t& y() { return y_; }
  void y(int32_t value) { y_ = value; }
  int32_t shapesize() const { return shapesize_; }
  int32_t& shapesize() { return shapesize_; }
  void shapesize(int32_t value) { shapesize_ = value; }

  bool operator==(const ShapeType&) const = default;

 private:
  std::string color_{};
  int32_t x_{};
  int32_t y_{};
  int32_t shapesize_{};
};
std::ostream& operator<<(std::ostream& os, const ShapeType& v);

namespace spindle::cdr {

template <>
struct Codec<::ShapeType> {
  static constexpr Extensibility kExtensibility = Extensibility::Appendable;
  static constexpr uint8_t kRepresentations = 3;
  static constexpr Encoding kEncoding = Encoding::Xcdr1;
  static constexpr size_t kMinSize = 16;
  template <class W>
  static void write(W& w, const ::ShapeType& v);
  template <class R>
  static void read(R& r, ::ShapeType& v);
  template <Encoding E = Encoding::Xcdr1>
  static constexpr size_t max_size(size_t off);
  template <class W>
  static void write_key(W& w, const ::ShapeType& v);
  static constexpr size_t key_max_size(size_t off);
};

template <class W>
void Codec<::ShapeType>::write(W& w, const ::ShapeType& v) {
  w.template put<Str<128>>(v.color(), "ShapeType.color");
  w.put(v.x());
  w.put(v.y());
  w.put(v.shapesize());
}

template <class R>
void Codec<::ShapeType>::read(R& r, ::ShapeType& v) {
  r.template get<Str<128>>(v.color());
  r.get(v.x());
  r.get(v.y());
  r.get(v.shapesize());
}

template <Encoding E>
constexpr size_t Codec<::ShapeType>::max_size(size_t off) {
  off = max_size_at<Str<128>, std::string, E>(off);
  off = max_size_at<Plain, int32_t, E>(off);
  off = max_size_at<Plain, int32_t, E>(off);
  off = max_size_at<Plain, int32_t, E>(off);
  return off;
}

template <class W>
void Codec<::ShapeType>::write_key(W& w, const ::ShapeType& v) {
  w.template put<Str<128>>(v.color(), "ShapeType.color");
}

constexpr size_t Codec<::ShapeType>::key_max_size(size_t off) {
  off = max_size_at<Str<128>, std::string>(off);
  return off;
}

}  // namespace spindle::cdr

namespace spindle {

template <>
struct topic_traits<::ShapeType> : topic_traits_base<::ShapeType> {
  static constexpr std::string_view type_name = "ShapeType";
  static constexpr bool is_keyed = true;
  static constexpr size_t key_count = 1;
};

}  // namespace spindle

namespace spindle::reflect {

template <>
struct Reflect<::ShapeType> {
  static const StructInfo& info();
};

}  // namespace spindle::reflect
