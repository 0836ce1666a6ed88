// Types back to IDL text: the inverse of <spindle/types/from_idl.hpp>, for types known only at
// run time (`spindle typeof` prints a topic's type as discovery carries it, docs/tools.md).
//
// The text declares the types asked for and every named type they depend on, each once, in an
// order IDL accepts: a type after those it needs by value, a forward declaration (`struct X;`)
// where types refer to each other through sequences; each inside its modules
// (`module A { module B { ... }; };`, reopened as often as the order needs). It says everything
// the model holds: bases, extensibility where it was explicit, @nested, @data_representation,
// @key, @optional, @must_understand, @external, member ids (@id, @hashid, @autoid(HASH)) where
// they are not the implicit ones, @default, @min/@max, @value, @position, @bit_bound, union
// labels and default, bitfields with their padding and holder types, bounds and dimensions.
// Names are referred to by the shortest scoped name that finds them, and escaped with `_`
// where they are IDL keywords. Loading the text with load_idl_text gives an equal model (what
// the model does not hold, such as @topic, constants and comments, is not there to print).
//
// Threading: free functions that only read the types.
#pragma once

#include <spindle/types/dynamic_type.hpp>

#include <span>
#include <string>

namespace spindle::types {

// The IDL of a named type and every type it depends on. Throws std::invalid_argument for an
// anonymous type, and for what IDL cannot say: a name that is no identifier, an array of an
// anonymous array or a collection of one (IDL needs a typedef there), a union case with no
// label, a NaN or infinite @min/@max/@default, or types that hold each other by value.
[[nodiscard]] std::string to_idl(const Type& type);

// The same for several types in one text: each type is declared once, in the order given
// where dependencies allow.
[[nodiscard]] std::string to_idl(std::span<const Type* const> types);

}  // namespace spindle::types
