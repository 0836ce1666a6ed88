// spindle::detail::TypeSupport: what the untyped runtime needs of a topic type, as a table
// of functions that the typed templates (Topic<T>, DataWriter<T>, DataReader<T>) fill from
// idlc's generated code (spindle::topic_traits<T>, the CDR codec). One static table per
// type: type_support<T>().
//
// Not part of the DDS API. Threading: the table is immutable; every function is pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include <spindle/cdr/serialize.hpp>
#include <spindle/detail/recycle.hpp>
#include <spindle/reflect.hpp>
#include <spindle/topic_traits.hpp>

namespace spindle::detail {

struct TypeSupport {
  std::string_view type_name;
  bool keyed = false;
  // Upper bound of a sample's encapsulated size in the type's default encoding;
  // cdr::kUnbounded when unbounded.
  std::size_t max_size = 0;
  // The encodings the type allows (cdr::kXcdr1Bit | cdr::kXcdr2Bit: its
  // @data_representation) and the one its writers use unless their DataRepresentation
  // policy says otherwise.
  std::uint8_t representations = cdr::kXcdr1Bit | cdr::kXcdr2Bit;
  cdr::Encoding encoding = cdr::Encoding::Xcdr1;
  // Exact encapsulated size of *sample in encoding `e` (throws cdr::CodecError on a bound
  // violation).
  std::size_t (*size)(const void* sample, cdr::Encoding e) = nullptr;
  // Writes *sample (encapsulation header + body) in encoding `e` into `out`, which is
  // size(sample, e) long.
  cdr::Result (*serialize)(const void* sample, std::span<std::byte> out, cdr::Encoding e) = nullptr;
  cdr::KeyHash (*key_hash)(const void* sample) = nullptr;
  // Reads a sample from untrusted bytes; null (and `error` set) when they are malformed.
  // `self` is this table (a type known at run time finds itself through `context`).
  std::shared_ptr<const void> (*deserialize)(const TypeSupport& self, std::span<const std::byte> in,
                                             std::string& error) = nullptr;
  // A sample's own bytes (loaned samples of trivially copyable types are built in the SMC
  // slot and travel as they are): sizeof(T), or 0 when T cannot travel that way.
  std::size_t native_size = 0;
  // Copies a native sample out of untrusted bytes (size checked); null when it cannot.
  std::shared_ptr<const void> (*from_native)(std::span<const std::byte> in,
                                             std::string& error) = nullptr;
  // The type's member tables (content filters, queries); null when idlc made none.
  const reflect::StructInfo* (*reflect)() = nullptr;
  // What the functions above need beyond the sample: for a type known only at run time
  // (<spindle/types/dynamic_topic.hpp>), its spindle::types::Type. Null for generated types.
  const void* context = nullptr;
  // The type's XTypes TypeInformation and TypeMapping (<spindle/types/type_object.hpp>), as
  // idlc generated them: what a Topic announces in discovery. Empty when unknown.
  std::span<const std::uint8_t> type_information{};
  std::span<const std::uint8_t> type_mapping{};
  // Zero-copy receive: a native sample read where it lies (`in`, in a slot held by `hold`,
  // which the result keeps), with no copy; null when it cannot be (a size other than
  // native_size, or an address not aligned for the type) — copy it then (from_native).
  std::shared_ptr<const void> (*native_in_place)(std::span<const std::byte> in,
                                                 std::shared_ptr<const void> hold) = nullptr;

  [[nodiscard]] std::shared_ptr<const void> decode(std::span<const std::byte> in,
                                                   std::string& error) const {
    return deserialize(*this, in, error);
  }
};

// Types whose bytes are the whole sample: no pointers inside (strings, sequences, optional
// members and unions are not), so a loaned sample can be built in the slot itself.
template <class T>
inline constexpr bool is_self_contained = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>;

// The topic types this program has used (type_support<T>() ran for them: a Topic, writer
// or reader of T was made), by IDL name: what an untyped dds::topic::discover can make a
// Topic of. The first type registered under a name keeps it.
struct TypeRegistry {
  std::mutex mu;
  std::map<std::string, const TypeSupport*, std::less<>> types;
};
inline TypeRegistry& type_registry() {
  static TypeRegistry registry;
  return registry;
}
inline void register_type(const TypeSupport& t) {
  auto& r = type_registry();
  std::lock_guard lock(r.mu);
  r.types.emplace(std::string(t.type_name), &t);
}
// Null when no type of that name was used in this program.
[[nodiscard]] inline const TypeSupport* find_type(std::string_view type_name) {
  auto& r = type_registry();
  std::lock_guard lock(r.mu);
  const auto it = r.types.find(type_name);
  return it == r.types.end() ? nullptr : it->second;
}

// The type information idlc generated for T (code generated before it has none).
template <class T>
std::span<const std::uint8_t> type_info_of(bool information) {
  using traits = spindle::topic_traits<T>;
  if constexpr (requires {
                  traits::type_information;
                  traits::type_mapping;
                }) {
    return information ? std::span<const std::uint8_t>(traits::type_information)
                       : std::span<const std::uint8_t>(traits::type_mapping);
  } else {
    return {};
  }
}

template <class T>
const TypeSupport& type_support() {
  using traits = spindle::topic_traits<T>;
  static const TypeSupport table{
      traits::type_name,
      traits::is_keyed,
      traits::max_serialized_size,
      cdr::representations<T>(),
      cdr::default_encoding<T>(),
      [](const void* s, cdr::Encoding e) {
        return cdr::serialized_size(*static_cast<const T*>(s), e);
      },
      [](const void* s, std::span<std::byte> out, cdr::Encoding e) {
        return cdr::serialize(*static_cast<const T*>(s), out, cdr::kNativeEndianness, e);
      },
      [](const void* s) { return cdr::key_hash(*static_cast<const T*>(s)); },
      [](const TypeSupport&, std::span<const std::byte> in,
         std::string& error) -> std::shared_ptr<const void> {
        auto sample = std::allocate_shared<T>(PoolAllocator<T>{});
        const auto r = cdr::deserialize(in, *sample);
        if (!r.ok()) {
          error = r.detail.empty() ? "malformed CDR" : r.detail;
          return nullptr;
        }
        return std::shared_ptr<const T>(std::move(sample));
      },
      is_self_contained<T> ? sizeof(T) : 0,
      [](std::span<const std::byte> in, std::string& error) -> std::shared_ptr<const void> {
        if constexpr (is_self_contained<T>) {
          if (in.size() != sizeof(T)) {
            error = "native sample of " + std::to_string(in.size()) + " bytes, expected " +
                    std::to_string(sizeof(T));
            return nullptr;
          }
          auto sample = std::allocate_shared<T>(PoolAllocator<T>{});
          std::memcpy(static_cast<void*>(sample.get()), in.data(), sizeof(T));
          return std::shared_ptr<const T>(std::move(sample));
        } else {
          error = "this type does not travel in native layout";
          return nullptr;
        }
      },
      []() -> const reflect::StructInfo* {
        if constexpr (reflect::Reflected<T>) {
          return &reflect::Reflect<T>::info();
        } else {
          return nullptr;
        }
      },
      nullptr,
      type_info_of<T>(true),
      type_info_of<T>(false),
      [](std::span<const std::byte> in,
         std::shared_ptr<const void> hold) -> std::shared_ptr<const void> {
        if constexpr (is_self_contained<T>) {
          if (in.size() != sizeof(T) ||
              reinterpret_cast<std::uintptr_t>(in.data()) % alignof(T) != 0)
            return nullptr;
          // The writer built a T there (DataWriter::loan_sample); a trivially copyable
          // type's bytes are its value.
          const T* sample = std::launder(reinterpret_cast<const T*>(in.data()));
          return std::shared_ptr<const void>(std::move(hold), sample);
        } else {
          (void)in;
          (void)hold;
          return nullptr;
        }
      },
  };
  static const bool registered = (register_type(table), true);
  (void)registered;
  return table;
}

}  // namespace spindle::detail
