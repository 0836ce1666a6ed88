// Samples of types known only at run time: JSON in, encapsulated XCDR1 or XCDR2 out, and
// back. The bytes are those generated code writes for the same type and value (the encoder
// follows <spindle/cdr/codec.hpp> and <spindle/cdr/xcdr2.hpp> rule for rule; tests check
// every shipped and test type byte for byte), so a tool or the gateway can read and write a
// topic it was never compiled for.
//
// The JSON form of a value (docs/types.md, "JSON"):
//   boolean true/false; integers and octets as numbers; float/double as numbers, or the
//   strings "NaN", "Infinity", "-Infinity"; long double as a number, or a decimal string when
//   a double cannot hold it; char and wchar as a one-character string; string and wstring as
//   strings (UTF-8); enum as the enumerator's name (a number is accepted); bitmask as an
//   array of flag names (positions without a name as numbers; a number is accepted); bitset
//   as an object of its named fields; struct as an object of its members, the base's first
//   (a member left out takes its @default or zero value, an @optional one is absent; null
//   is absent too); union as {"discriminator": d, "<member>": value} (either alone is
//   enough); sequence and array as arrays (nested for several dimensions); map as an object
//   whose keys are the key values written as text.
// Decoding gives every member, in declaration order, absent optionals as null. JSON carries
// every value but NaN payloads (any NaN is "NaN") and x87 bit patterns that are no number.
//
// Error model: bad bytes throw DataError with the cdr::Status of generated code's reader;
// a JSON value that does not fit the type throws DataError (Status::Ok is not used) whose
// message names the place ("Test::Strings.bounded: string of 9 characters over its bound
// of 8"). Decoding is safe on untrusted bytes: every length is checked before it is used,
// nesting is bounded.
//
// Threading: free functions over immutable types; no shared state.
#pragma once

#include <spindle/cdr/serialize.hpp>
#include <spindle/types/dynamic_type.hpp>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace spindle::types {

using Json = nlohmann::ordered_json;

class DataError : public std::runtime_error {
 public:
  DataError(cdr::Status status, const std::string& what)
      : std::runtime_error(what), status_(status) {}
  // Decoding: why the bytes were refused. Encoding: Status::OutOfRange, BoundExceeded,
  // BadString, BadEnumerator, BadBitmask, BadDiscriminator or DuplicateMapKey for a value
  // generated code would refuse too; Status::BadParameter for JSON of the wrong shape.
  [[nodiscard]] cdr::Status status() const { return status_; }

 private:
  cdr::Status status_;
};

// One sample, encapsulation header included (XCDR2: padded to 4, as generated code pads).
// Throws DataError; std::invalid_argument when the type is not a struct or union, or when
// the encoding is not among its @data_representation.
[[nodiscard]] std::vector<std::byte> encode(const Type& type, const Json& sample,
                                            cdr::Encoding encoding,
                                            cdr::Endianness order = cdr::kNativeEndianness);
// In the type's default encoding (default_encoding()).
[[nodiscard]] std::vector<std::byte> encode(const Type& type, const Json& sample);

// Reads one encapsulated sample in whichever encoding its header names (which must be one
// the type allows). Throws DataError.
[[nodiscard]] Json decode(const Type& type, std::span<const std::byte> encapsulated);

// Reads one encapsulated sample as decode() does — every length, bound, enumerator and
// boolean checked, the same DataError for bad bytes — but keeps only its key members: a
// sample holding those alone (null for a keyless type or a union). Members outside the key
// are checked and dropped, collections of primitives among them stepped over without being
// built; their @range/@min/@max are not checked. For a relay that passes the bytes on and
// needs the instance (the gateway): a 10 KiB octet sequence costs no JSON at all.
[[nodiscard]] Json decode_key_of(const Type& type, std::span<const std::byte> encapsulated);
// The value a member of this type holds when nothing sets it (as generated code's default
// constructor: zero, the first enumerator, a union's first case).
[[nodiscard]] Json default_value(const Type& type);

// The DDS key hash of a sample of a keyed struct (cdr::key_hash of generated code): the key
// members as big-endian XCDR1, zero-padded to 16 bytes when every key fits in 16, else their
// MD5. All zero for a keyless type.
[[nodiscard]] cdr::KeyHash key_hash(const Type& type, const Json& sample);

// A keyed struct's serialized key, as RTPS carries it in a dispose or unregister message
// (DDS-XTypes 1.3 §7.6.8, and what Cyclone DDS writes): the encapsulation header of a sample
// in `encoding`, then the key members alone, in key order (key_paths()), each encoded as in a
// sample of that encoding, with no headers around them; padded to 4 (the options give the
// count) in either encoding. Byte for byte Cyclone DDS's (interop/cdr/cyclone/*-key-*.hex).
// Throws as encode(); std::invalid_argument for a keyless type.
[[nodiscard]] std::vector<std::byte> encode_key(const Type& type, const Json& sample,
                                                cdr::Encoding encoding,
                                                cdr::Endianness order = cdr::kNativeEndianness);
// Reads a serialized key (as encode_key writes it, in either encoding) into a sample whose
// key members hold the key and every other member its default value. Throws DataError.
[[nodiscard]] Json decode_key(const Type& type, std::span<const std::byte> encapsulated);
}  // namespace spindle::types
