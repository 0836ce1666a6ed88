// XTypes 1.3 type information for dynamic types: what discovery carries so that a peer learns
// a topic's type (DDS-XTypes 1.3, 7.3.4 TypeObject and TypeIdentifier, 7.6.3.2.2
// TypeInformation, TypeMapping). Both are XCDR2 little-endian, byte-identical to what
// Cyclone DDS 0.10.2's idlc generates into TYPE_INFO_CDR_<T> and TYPE_MAP_CDR_<T> for the
// same (explicitly annotated) IDL; interop/typeinfo/cyclone holds its bytes and
// docs/types.md, "Type information", lists where and why we differ.
//
//   TypeInformation (mutable)          TypeMapping (final)
//     0x1001 minimal:  root id+size      minimal pairs:   TypeIdentifier -> TypeObject
//                      dependencies      complete pairs:  TypeIdentifier -> TypeObject
//     0x1002 complete: root id+size      complete -> minimal identifier pairs
//                      dependencies
//
// Named types are identified by a hash of their TypeObject (EK_MINIMAL / EK_COMPLETE: the
// first 14 bytes of its MD5); strings, sequences, arrays and maps are spelled out in the
// identifier itself; types that refer to each other in a cycle share one
// strongly-connected-component identifier (type_object.cpp says how it is hashed).
//
// Threading: free functions; make_type_info only reads the type, load_type_info changes only
// the library given (and leaves it as it was when it throws).
#pragma once

#include <spindle/types/dynamic_type.hpp>

#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

namespace spindle::types {

struct TypeInfo {
  std::vector<std::byte> information;  // XTypes TypeInformation
  std::vector<std::byte> mapping;      // TypeMapping: every TypeObject the information names
};

// Type information of a named type and every type it depends on. Throws
// std::invalid_argument for an anonymous type (a string or collection has no TypeObject).
[[nodiscard]] TypeInfo make_type_info(const Type& type);

// Type information that cannot be used: what() names what is wrong and where (byte offset).
class TypeObjectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Adds the types described by `information` and `mapping` (untrusted bytes, from the
// network) to `library`, from their COMPLETE type objects, and returns the root type. A type
// whose name is already in the library is reused when it is equal and refused when it
// differs. Throws TypeObjectError; nothing is added then.
const Type* load_type_info(TypeLibrary& library, std::span<const std::byte> information,
                           std::span<const std::byte> mapping);

}  // namespace spindle::types
