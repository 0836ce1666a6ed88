// spindle::detail::TypeSupport: what the untyped runtime needs of a topic type, as a table
// of functions that the typed templates (Topic<T>, DataWriter<T>, DataReader<T>) fill from
// idlc's generated code (spindle::topic_traits<T>, the CDR codec). One static table per
// type: type_support<T>().
//
// Not part of the DDS API. Threading: the table is immutable; every function is pure.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <spindle/cdr/serialize.hpp>
#include <spindle/topic_traits.hpp>

namespace spindle::detail {

struct TypeSupport {
  std::string_view type_name;
  bool keyed = false;
  // Upper bound of a sample's encapsulated size; cdr::kUnbounded when unbounded.
  std::size_t max_size = 0;
  // Exact encapsulated size of *sample (throws cdr::CodecError on a bound violation).
  std::size_t (*size)(const void* sample) = nullptr;
  // Writes *sample (encapsulation header + body) into `out`, which is size(sample) long.
  cdr::Result (*serialize)(const void* sample, std::span<std::byte> out) = nullptr;
  cdr::KeyHash (*key_hash)(const void* sample) = nullptr;
  // Reads a sample from untrusted bytes; null (and `error` set) when they are malformed.
  std::shared_ptr<const void> (*deserialize)(std::span<const std::byte> in,
                                             std::string& error) = nullptr;
};

template <class T>
const TypeSupport& type_support() {
  using traits = spindle::topic_traits<T>;
  static const TypeSupport table{
      traits::type_name,
      traits::is_keyed,
      traits::max_serialized_size,
      [](const void* s) { return cdr::serialized_size(*static_cast<const T*>(s)); },
      [](const void* s, std::span<std::byte> out) {
        return cdr::serialize(*static_cast<const T*>(s), out);
      },
      [](const void* s) { return cdr::key_hash(*static_cast<const T*>(s)); },
      [](std::span<const std::byte> in, std::string& error) -> std::shared_ptr<const void> {
        auto sample = std::make_shared<T>();
        const auto r = cdr::deserialize(in, *sample);
        if (!r.ok()) {
          error = r.detail.empty() ? "malformed CDR" : r.detail;
          return nullptr;
        }
        return std::shared_ptr<const T>(std::move(sample));
      },
  };
  return table;
}

}  // namespace spindle::detail
