// What the runtime knows about a topic type at compile time. idlc specializes
// `spindle::topic_traits<T>` for every struct that can be a topic; DataWriter<T> uses it to
// size SMC slots and to serialize a sample straight into one.
//
// Threading: compile-time constants only.
#pragma once

#include <spindle/cdr/serialize.hpp>

#include <cstddef>
#include <string_view>

namespace spindle {

template <class T>
struct topic_traits;  // specialized by generated code; undefined for non-topic types

// Derived from by each generated specialization; everything here follows from Codec<T>.
template <class T>
struct topic_traits_base {
  using codec = cdr::Codec<T>;
  // Upper bound of the encapsulated size; cdr::kUnbounded when unbounded.
  static constexpr size_t max_serialized_size = cdr::max_serialized_size<T>();
  static constexpr bool is_bounded = max_serialized_size != cdr::kUnbounded;
  static constexpr size_t key_max_size = codec::key_max_size(0);
  // A key hash is the padded key itself when every key fits in 16 bytes, else an MD5.
  static constexpr bool key_hash_is_md5 = key_max_size > 16;
};

template <class T>
concept Topic = requires {
  { topic_traits<T>::type_name } -> std::convertible_to<std::string_view>;
  { topic_traits<T>::is_keyed } -> std::convertible_to<bool>;
};

}  // namespace spindle
