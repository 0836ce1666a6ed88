// Hand-written spindle::reflect tables for the filter tests and the filter fuzzer, as idlc
// will generate them: every integer kind, float and double, bool, char, string, two enums,
// nested structs (two levels), @optional members (a primitive and a struct), and a sequence
// (Kind::other).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <spindle/reflect.hpp>

namespace filter_test {

using spindle::reflect::Enumerator;
using spindle::reflect::Kind;
using spindle::reflect::Member;
using spindle::reflect::StructInfo;
using spindle::reflect::Value;

enum class Color : std::int32_t { red = 0, green = 1, blue = 7 };
enum class Shape : std::int32_t { circle = 0, square = 1 };

struct Leaf {
  std::int32_t z = 0;
};

struct Inner {
  std::int32_t depth = 0;
  std::string label;
  Leaf leaf;
  std::optional<double> weight;
};

struct Sample {
  bool flag = false;
  char letter = 'a';
  std::int8_t i8 = 0;
  std::int16_t i16 = 0;
  std::int32_t i32 = 0;
  std::int64_t i64 = 0;
  std::uint8_t u8 = 0;
  std::uint16_t u16 = 0;
  std::uint32_t u32 = 0;
  std::uint64_t u64 = 0;
  float f32 = 0;
  double f64 = 0;
  std::string name;
  Color color = Color::red;
  Color color2 = Color::red;
  Shape shape = Shape::circle;
  Inner inner;
  std::optional<std::int32_t> maybe;
  std::optional<Inner> extra;
  std::vector<std::int32_t> seq;
};

template <class S, auto M>
Value get_signed(const void* p) {
  Value v;
  v.kind = Kind::signed_int;
  v.i = static_cast<const S*>(p)->*M;
  return v;
}

template <class S, auto M>
Value get_unsigned(const void* p) {
  Value v;
  v.kind = Kind::unsigned_int;
  v.u = static_cast<const S*>(p)->*M;
  return v;
}

template <class S, auto M>
Value get_floating(const void* p) {
  Value v;
  v.kind = Kind::floating;
  v.f = static_cast<double>(static_cast<const S*>(p)->*M);
  return v;
}

template <class S, auto M>
Value get_string(const void* p) {
  Value v;
  v.kind = Kind::string;
  v.s = static_cast<const S*>(p)->*M;
  return v;
}

template <class S, auto M>
Value get_enum(const void* p) {
  Value v;
  v.kind = Kind::enumeration;
  v.i = static_cast<std::int64_t>(static_cast<const S*>(p)->*M);
  return v;
}

inline Value get_flag(const void* p) {
  Value v;
  v.kind = Kind::boolean;
  v.i = static_cast<const Sample*>(p)->flag ? 1 : 0;
  return v;
}

inline Value get_letter(const void* p) {
  Value v;
  v.kind = Kind::character;
  v.u = static_cast<unsigned char>(static_cast<const Sample*>(p)->letter);
  return v;
}

inline Value get_maybe(const void* p) {
  Value v;
  const auto& m = static_cast<const Sample*>(p)->maybe;
  if (m) {
    v.kind = Kind::signed_int;
    v.i = *m;
  }
  return v;
}

inline Value get_weight(const void* p) {
  Value v;
  const auto& w = static_cast<const Inner*>(p)->weight;
  if (w) {
    v.kind = Kind::floating;
    v.f = *w;
  }
  return v;
}

inline constexpr std::array<Enumerator, 3> kColors{{{"red", 0}, {"green", 1}, {"blue", 7}}};
inline constexpr std::array<Enumerator, 2> kShapes{{{"circle", 0}, {"square", 1}}};

inline const StructInfo& leaf_info() {
  static const Member members[] = {
      {"z", Kind::signed_int, &get_signed<Leaf, &Leaf::z>, nullptr, nullptr, {}},
  };
  static const StructInfo info{"filter_test::Leaf", members};
  return info;
}

inline const StructInfo& inner_info() {
  static const Member members[] = {
      {"depth", Kind::signed_int, &get_signed<Inner, &Inner::depth>, nullptr, nullptr, {}},
      {"label", Kind::string, &get_string<Inner, &Inner::label>, nullptr, nullptr, {}},
      {"leaf",
       Kind::structure,
       nullptr,
       &leaf_info,
       [](const void* p) -> const void* { return &static_cast<const Inner*>(p)->leaf; },
       {}},
      {"weight", Kind::floating, &get_weight, nullptr, nullptr, {}},
  };
  static const StructInfo info{"filter_test::Inner", members};
  return info;
}

inline const StructInfo& sample_info() {
  static const Member members[] = {
      {"flag", Kind::boolean, &get_flag, nullptr, nullptr, {}},
      {"letter", Kind::character, &get_letter, nullptr, nullptr, {}},
      {"i8", Kind::signed_int, &get_signed<Sample, &Sample::i8>, nullptr, nullptr, {}},
      {"i16", Kind::signed_int, &get_signed<Sample, &Sample::i16>, nullptr, nullptr, {}},
      {"i32", Kind::signed_int, &get_signed<Sample, &Sample::i32>, nullptr, nullptr, {}},
      {"i64", Kind::signed_int, &get_signed<Sample, &Sample::i64>, nullptr, nullptr, {}},
      {"u8", Kind::unsigned_int, &get_unsigned<Sample, &Sample::u8>, nullptr, nullptr, {}},
      {"u16", Kind::unsigned_int, &get_unsigned<Sample, &Sample::u16>, nullptr, nullptr, {}},
      {"u32", Kind::unsigned_int, &get_unsigned<Sample, &Sample::u32>, nullptr, nullptr, {}},
      {"u64", Kind::unsigned_int, &get_unsigned<Sample, &Sample::u64>, nullptr, nullptr, {}},
      {"f32", Kind::floating, &get_floating<Sample, &Sample::f32>, nullptr, nullptr, {}},
      {"f64", Kind::floating, &get_floating<Sample, &Sample::f64>, nullptr, nullptr, {}},
      {"name", Kind::string, &get_string<Sample, &Sample::name>, nullptr, nullptr, {}},
      {"color", Kind::enumeration, &get_enum<Sample, &Sample::color>, nullptr, nullptr, kColors},
      {"color2", Kind::enumeration, &get_enum<Sample, &Sample::color2>, nullptr, nullptr, kColors},
      {"shape", Kind::enumeration, &get_enum<Sample, &Sample::shape>, nullptr, nullptr, kShapes},
      {"inner",
       Kind::structure,
       nullptr,
       &inner_info,
       [](const void* p) -> const void* { return &static_cast<const Sample*>(p)->inner; },
       {}},
      {"maybe", Kind::signed_int, &get_maybe, nullptr, nullptr, {}},
      {"extra",
       Kind::structure,
       nullptr,
       &inner_info,
       [](const void* p) -> const void* {
         const auto& e = static_cast<const Sample*>(p)->extra;
         return e ? &*e : nullptr;
       },
       {}},
      {"seq", Kind::other, nullptr, nullptr, nullptr, {}},
  };
  static const StructInfo info{"filter_test::Sample", members};
  return info;
}

}  // namespace filter_test
